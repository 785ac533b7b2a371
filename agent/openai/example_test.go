package openai_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/session"
)

// A model on an OpenAI-compatible endpoint, driven by the agent loop. The
// endpoint here is a local stand-in that streams a short answer.
func ExampleNew() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, c := range []string{
			`{"choices":[{"index":0,"delta":{"role":"assistant","content":"","reasoning_content":""}}]}`,
			`{"choices":[{"index":0,"delta":{"reasoning_content":"A greeting is due."}}]}`,
			`{"choices":[{"index":0,"delta":{"content":"Hello"}}]}`,
			`{"choices":[{"index":0,"delta":{"content":", world."},"finish_reason":"stop"}]}`,
			`{"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":9,"total_tokens":21,` +
				`"prompt_cache_hit_tokens":8,"prompt_cache_miss_tokens":4,"completion_tokens_details":{"reasoning_tokens":5}}}`,
		} {
			fmt.Fprintf(w, "data: %s\n\n", c)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	defer srv.Close()

	model, err := openai.New(openai.Config{BaseURL: srv.URL, APIKey: "sk-example", Model: "deepseek-flash"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Close the model's idle connections when done, as an http.Client's.
	defer model.(interface{ CloseIdleConnections() }).CloseIdleConnections()
	loop, err := agent.New(agent.WithModel(model))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer loop.Close()
	ctx := context.Background()
	sess, err := loop.NewSession(ctx, session.Header{})
	if err != nil {
		fmt.Println(err)
		return
	}
	for ev := range sess.Run(ctx, "Say hello.") {
		switch e := ev.(type) {
		case *agent.ReasoningDelta:
			fmt.Printf("(thinking: %s)\n", e.Text)
		case *agent.TextDelta:
			fmt.Print(e.Text)
		case *agent.ModelUsage:
			u := e.Usage
			fmt.Printf("\n%d input tokens (%d cached), %d output tokens (%d reasoning)\n",
				u.InputTokens, u.CacheHitTokens, u.OutputTokens, u.ReasoningTokens)
		case *agent.TurnEnd:
			fmt.Println("turn", e.Reason)
		}
	}
	// Output:
	// (thinking: A greeting is due.)
	// Hello, world.
	// 12 input tokens (8 cached), 9 output tokens (5 reasoning)
	// turn completed
}

// DeepSeek with the caller's key; thinking stays on by default.
func ExampleNew_deepSeek() {
	model, err := openai.New(openai.Config{BaseURL: "https://api.deepseek.com", APIKey: "sk-...", Model: "deepseek-v4-pro", ReasoningEffort: "high"})
	if err != nil {
		fmt.Println(err)
		return
	}
	info := model.Info()
	fmt.Println(info.Name, info.ContextWindow, info.Input)

	// DeepSeek's API refuses every request without a key: New says so.
	_, err = openai.New(openai.Config{BaseURL: "https://api.deepseek.com", APIKey: os.Getenv("NO_SUCH_VARIABLE"), Model: "deepseek-flash"})
	fmt.Println(errors.Is(err, harness.CodeAuth))
	// Output:
	// deepseek-v4-pro 1000000 [text]
	// true
}

// Picking a model from the environment, falling back when none is
// configured.
func ExampleFromEnv() {
	getenv := func(string) string { return "" } // os.Getenv in a program
	cfg, err := openai.FromEnv(getenv)
	if errors.Is(err, harness.CodeAuth) {
		fmt.Println("no model configured; running the scripted demo instead")
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg.MaxOutputTokens = 8192 // the host's own settings go on top
	model, err := openai.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("using", model.Info().Name, "at", cfg.BaseURL)
	// Output: no model configured; running the scripted demo instead
}

// A Kimi thinking model behind a gateway wants its reasoning back as
// DeepSeek does: the deepseek dialect sends it, on every assistant
// message that made tool calls. The host alone would imply the generic
// dialect, which sends none.
func ExampleConfig_dialect() {
	m, err := openai.New(openai.Config{
		BaseURL:     "http://127.0.0.1:8080/v1",
		Model:       "kimi-k2-thinking",
		Dialect:     openai.DialectDeepSeek,
		Temperature: new(1.0),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(m.Info().Name, "in the deepseek dialect")

	_, err = openai.New(openai.Config{BaseURL: "http://127.0.0.1:8080/v1", Model: "kimi-k2-thinking", Temperature: new(5.0)})
	fmt.Println(err)
	// Output:
	// kimi-k2-thinking in the deepseek dialect
	// openai: temperature 5 is outside 0 to 2
}
