package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools/toolstest"
	"github.com/go-harness/harness/tools/web"
	"github.com/go-harness/harness/tools/web/webtest"
)

// braveServer answers as the Brave Search API documents its web search:
// GET with q and count, the key in X-Subscription-Token, results in
// web.results[] with title, url, description (with <strong> marks) and
// age; errors as {"error": {...}} with the HTTP status.
func braveServer(t *testing.T, key string) (*httptest.Server, *[]string) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.RawQuery)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path != "/res/v1/web/search" || r.Method != http.MethodGet {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		if r.Header.Get("X-Subscription-Token") != key {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"type":"ErrorResponse","error":{"id":"x","status":401,"code":"SUBSCRIPTION_TOKEN_INVALID","detail":"The provided subscription token is invalid."},"time":1}`))
			return
		}
		if r.URL.Query().Get("q") == "rate" {
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"type":"ErrorResponse","error":{"status":429,"code":"RATE_LIMITED","detail":"Request rate limit exceeded for plan."}}`))
			return
		}
		type result struct {
			Title       string `json:"title"`
			URL         string `json:"url"`
			Description string `json:"description"`
			Age         string `json:"age,omitempty"`
			Language    string `json:"language"`
		}
		all := []result{
			{Title: "The Go <strong>Programming</strong> Language", URL: "https://go.dev/", Description: "Go is an open source <strong>programming</strong> language &amp; more.", Age: "2 days ago", Language: "en"},
			{Title: "Effective Go", URL: "https://go.dev/doc/effective_go", Description: "Tips for writing clear,\n idiomatic Go code.", Language: "en"},
			{Title: "Bad scheme", URL: "javascript:alert(1)", Description: "dropped"},
			{Title: "Go spec", URL: "https://go.dev/ref/spec", Description: "The Go Programming Language Specification."},
		}
		n := 20
		if c := r.URL.Query().Get("count"); c != "" {
			_ = json.Unmarshal([]byte(c), &n)
		}
		if n < len(all) {
			all = all[:n]
		}
		body := map[string]any{
			"type":  "search",
			"query": map[string]any{"original": r.URL.Query().Get("q")},
			"web":   map[string]any{"type": "search", "results": all, "family_friendly": true},
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

func TestBraveSearchTool(t *testing.T) {
	srv, got := braveServer(t, "k3y")
	brave, err := web.Brave(web.BraveConfig{Key: "k3y", Endpoint: srv.URL + "/res/v1/web/search"})
	require.NoError(t, err)
	tool, err := web.Search(web.SearchConfig{Searcher: brave, Name: "Brave Search", MaxResults: 5})
	require.NoError(t, err)
	env := toolstest.NewEnv()
	defer env.Close()
	res, err := env.Call(context.Background(), tool, map[string]any{"query": "  golang\n language ", "count": 4})
	require.NoError(t, err)
	require.False(t, res.IsError, res.Text())
	assert.Equal(t, `3 results from Brave Search for "golang language":

1. The Go Programming Language
   https://go.dev/
   (2 days ago)
   Go is an open source programming language & more.

2. Effective Go
   https://go.dev/doc/effective_go
   Tips for writing clear, idiomatic Go code.

3. Go spec
   https://go.dev/ref/spec
   The Go Programming Language Specification.`, res.Text())
	assert.Equal(t, []string{"count=4&q=golang+language"}, *got)
	require.NotNil(t, res.Render)
	assert.Equal(t, harness.RenderGeneric, res.Render.Kind)
	assert.Equal(t, `Search "golang language"`, res.Render.Title)
	assert.Equal(t, res.Text(), res.Render.Text)

	// Errors keep the API's status as a code and its detail as text.
	bad, err := web.Brave(web.BraveConfig{Key: "wrong", Endpoint: srv.URL + "/res/v1/web/search"})
	require.NoError(t, err)
	_, err = bad.Search(context.Background(), web.Query{Text: "x", Count: 1})
	assert.ErrorIs(t, err, harness.CodeAuth)
	assert.Contains(t, err.Error(), "The provided subscription token is invalid.")
	_, err = brave.Search(context.Background(), web.Query{Text: "rate", Count: 1})
	assert.ErrorIs(t, err, harness.CodeRateLimit)

	webtest.TestSearcher(t, brave, "go")
}

func TestSearchWithFake(t *testing.T) {
	fake := &webtest.Searcher{Results: map[string][]web.Result{
		"hostile": {
			{Title: "<script>x</script>Title\x1b[31m red", URL: " https://example.com/a ", Snippet: strings.Repeat("long ", 500)},
			{Title: "file", URL: "file:///etc/passwd"},
			{Title: "relative", URL: "/x"},
		},
	}}
	webtest.TestSearcher(t, &webtest.Searcher{Results: map[string][]web.Result{"q": {{Title: "a", URL: "https://a.example/"}, {Title: "b", URL: "https://b.example/"}, {Title: "c", URL: "http://c.example/"}, {Title: "d", URL: "http://d.example/"}}}}, "q")
	tool, err := web.Search(web.SearchConfig{Searcher: fake})
	require.NoError(t, err)
	env := toolstest.NewEnv()
	defer env.Close()
	res, err := env.Call(context.Background(), tool, map[string]any{"query": "hostile"})
	require.NoError(t, err)
	text := res.Text()
	assert.Contains(t, text, "1 results from the search provider")
	assert.Contains(t, text, "https://example.com/a")
	assert.NotContains(t, text, "etc/passwd")
	assert.NotContains(t, text, "\x1b")
	assert.Contains(t, text, " x Title [31m red")
	assert.Less(t, len(text), 800, "snippets are cut")
	assert.Equal(t, []web.Query{{Text: "hostile", Count: 10}}, fake.Queries())

	res, err = env.Call(context.Background(), tool, map[string]any{"query": "nothing"})
	require.NoError(t, err)
	assert.Equal(t, `No results from the search provider for "nothing".`, res.Text())
	res, err = env.Call(context.Background(), tool, map[string]any{"query": "  "})
	require.NoError(t, err)
	assert.Equal(t, harness.CodeInvalidArguments, res.Code)
	res, err = env.Call(context.Background(), tool, map[string]any{"query": strings.Repeat("w ", 300)})
	require.NoError(t, err)
	assert.Equal(t, harness.CodeInvalidArguments, res.Code)

	fake.Err = &harness.Error{Code: harness.CodeRateLimit, Message: "slow down"}
	res, err = env.Call(context.Background(), tool, map[string]any{"query": "hostile"})
	require.NoError(t, err)
	assert.Equal(t, harness.CodeRateLimit, res.Code)
}

func TestSearchConfigErrors(t *testing.T) {
	_, err := web.Search(web.SearchConfig{})
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	_, err = web.Search(web.SearchConfig{Searcher: &webtest.Searcher{}, Timeout: -1})
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	_, err = web.Brave(web.BraveConfig{})
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	_, err = web.Brave(web.BraveConfig{Key: "k", Endpoint: "ftp://x"})
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
}
