package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/go-harness/harness/examples/coder/internal/ui"
)

// options are the parsed command line.
type options struct {
	dir       string
	prompt    string
	hasPrompt bool
	resume    string
	cont      bool
	sessions  string
	json      bool
	maxSteps  int
	explore   bool
	model     string
	image     bool
	window    int
	context   string
	reasoning bool
	verbose   bool
	perm      permFlags
	hist      histFlags
	mcp       mcpFlags
	prov      providerFlags
	web       webFlags
	proj      projectFlags
	sup       superviseFlags
	// given are the flags as the command line gave them, in order, for
	// the commands a paused turn prints.
	given []givenFlag
}

// givenFlag is one flag of the command line: its name and value.
type givenFlag struct {
	name, value string
	bool        bool
}

// recorded wraps a flag's value to note each time it is set.
type recorded struct {
	flag.Value
	name  string
	given *[]givenFlag
}

func (r *recorded) Set(s string) error {
	if err := r.Value.Set(s); err != nil {
		return err
	}
	_, isBool := r.Value.(interface{ IsBoolFlag() bool })
	*r.given = append(*r.given, givenFlag{name: r.name, value: s, bool: isBool})
	return nil
}

// recordedBool is recorded for a boolean flag, which takes no value.
type recordedBool struct{ *recorded }

func (r recordedBool) IsBoolFlag() bool { return true }

const usageText = `usage: coder [flags] [prompt]

A coding agent in the workspace directory. With a prompt it runs one turn
and exits; without one it reads prompts from stdin, one per line.

The model: DEEPSEEK_API_KEY for DeepSeek, or HARNESS_BASE_URL,
HARNESS_API_KEY and HARNESS_MODEL for any OpenAI-compatible endpoint.
DEEPSEEK_BASE_URL points DeepSeek at another host; HARNESS_DIALECT
(deepseek, openai or generic) overrides the dialect guessed from the URL.
` + providerUsage + `
flags:
`

// usageError is a command-line mistake: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// parseFlags parses args. The flag package prints its own complaints and
// the usage to stderr; a nil options with a nil error means -h.
func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fset := flag.NewFlagSet("coder", flag.ContinueOnError)
	// The flag package would print the whole usage after every mistake;
	// run prints one line instead, and -h prints the usage.
	fset.SetOutput(io.Discard)
	fset.StringVar(&o.dir, "C", "", "workspace `dir`ectory the agent works in (default the current directory)")
	fset.StringVar(&o.prompt, "p", "", "run one turn on `prompt` and exit (or give the prompt after the flags)")
	fset.StringVar(&o.resume, "resume", "", "resume the session with this `id`")
	fset.BoolVar(&o.cont, "continue", false, "resume the latest session of the workspace")
	fset.StringVar(&o.sessions, "sessions", "", "`dir`ectory of session logs (default $XDG_DATA_HOME/harness/sessions or the OS equivalent)")
	fset.BoolVar(&o.json, "json", false, "write every event as one JSON line on stdout")
	fset.BoolVar(&o.explore, "explore", true, "give the model a read-only explore sub-agent (the task tool)")
	fset.IntVar(&o.maxSteps, "max-steps", 0, "stop a turn after `n` model calls (default 200, the loop's)")
	fset.StringVar(&o.model, "model", "", "model `id` (overrides HARNESS_MODEL)")
	fset.BoolVar(&o.image, "image", false, "the model accepts image input (for models the catalog does not know)")
	fset.IntVar(&o.window, "context-window", 0, "the model's context window in `tokens` (for models the catalog does not know; pruning and compaction need it)")
	fset.StringVar(&o.context, "context", "cost", contextFlagUsage)
	fset.BoolVar(&o.reasoning, "reasoning", true, "show the model's reasoning (dimmed; without colour each line starts with "+ui.ReasoningMark+")")
	fset.BoolVar(&o.verbose, "v", false, "log diagnostics to stderr")
	o.perm.register(fset)
	o.hist.register(fset)
	o.mcp.register(fset)
	o.prov.register(fset)
	o.web.register(fset)
	o.proj.register(fset)
	o.sup.register(fset)
	fset.VisitAll(func(f *flag.Flag) {
		rec := &recorded{Value: f.Value, name: f.Name, given: &o.given}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			f.Value = recordedBool{rec}
			return
		}
		f.Value = rec
	})
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fset.SetOutput(stderr)
			fmt.Fprint(stderr, usageText)
			fset.PrintDefaults()
			return nil, nil
		}
		return nil, &usageError{msg: err.Error()}
	}
	set := map[string]bool{}
	fset.Visit(func(f *flag.Flag) {
		set[f.Name] = true
		if f.Name == "p" {
			o.hasPrompt = true
		}
	})
	if rest := fset.Args(); len(rest) > 0 {
		if o.hasPrompt {
			return nil, usagef("give the prompt either with -p or after the flags, not both (flags go before the prompt)")
		}
		o.prompt, o.hasPrompt = strings.Join(rest, " "), true
	}
	if o.hasPrompt && strings.TrimSpace(o.prompt) == "" {
		return nil, usagef("the prompt is empty")
	}
	if o.resume != "" && o.cont {
		return nil, usagef("-resume and -continue both pick a session: give one of them")
	}
	if o.maxSteps < 0 {
		return nil, usagef("-max-steps must be positive, not %d", o.maxSteps)
	}
	if o.window < 0 {
		return nil, usagef("-context-window must be positive, not %d", o.window)
	}
	if _, err := contextPolicy(o.context); err != nil {
		return nil, err
	}
	if err := o.perm.check(o, set); err != nil {
		return nil, err
	}
	if err := o.hist.check(o, set); err != nil {
		return nil, err
	}
	if err := o.sup.check(o); err != nil {
		return nil, err
	}
	return o, nil
}
