package lsp

import (
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"time"

	"github.com/go-harness/harness"
)

// Server describes a language server and the files it covers.
type Server struct {
	// Name names the server in results and logs ("gopls").
	Name string
	// Command is the program and its arguments. A program without a
	// slash is looked up in PATH; one inside the workspace is never run.
	Command []string
	// Languages maps the file name extensions the server covers (".go")
	// to the LSP language identifier of their documents ("go").
	Languages map[string]string
	// InitializationOptions are sent with the initialize request.
	InitializationOptions any
	// Settings answer the server's workspace/configuration requests, by
	// section ("gopls"); a section not listed is answered with null.
	Settings map[string]any
	// RunsWorkspaceCode marks a server that loads or runs programs from
	// the workspace as it works (a TypeScript server from node_modules,
	// the project's Python interpreter), outside any sandbox the shell
	// tools run commands in. A host that sandboxes commands should leave
	// such servers out, or trust the workspace.
	RunsWorkspaceCode bool
}

// DefaultServers are the servers used when Config.Servers is nil: gopls
// for Go, pyright for Python, typescript-language-server for TypeScript
// and JavaScript, rust-analyzer for Rust. Each runs only when found on
// PATH.
//
// gopls runs no program of the workspace's (the go command it calls
// reads the module; cgo runs with the compiler flags it allows).
// rust-analyzer is started with build scripts, procedural macros and
// check-on-save turned off, all of which would compile and run the
// workspace's code. typescript-language-server loads the TypeScript it
// finds in the workspace's node_modules, and pyright may run the
// workspace's Python interpreter to find its search paths: both are
// marked RunsWorkspaceCode (and automatic type acquisition, which runs
// npm, is turned off).
//
// gopls is asked for diagnostics without delay (its diagnosticsDelay is
// set to 0s, so that one pass reports type errors and analyses alike),
// for pull diagnostics (textDocument/diagnostic), which let a change to
// a file be checked on request, and to report its work on each change
// as progress (verboseWorkDoneProgress), which tells when the
// diagnostics it publishes for other packages are all out.
func DefaultServers() []Server {
	return []Server{
		{
			Name:      "gopls",
			Command:   []string{"gopls"},
			Languages: map[string]string{".go": "go"},
			InitializationOptions: map[string]any{
				"diagnosticsDelay":        "0s",
				"pullDiagnostics":         true,
				"verboseWorkDoneProgress": true,
			},
		},
		{
			Name:              "pyright",
			Command:           []string{"pyright-langserver", "--stdio"},
			Languages:         map[string]string{".py": "python", ".pyi": "python"},
			RunsWorkspaceCode: true,
		},
		{
			Name:    "typescript-language-server",
			Command: []string{"typescript-language-server", "--stdio"},
			Languages: map[string]string{".ts": "typescript", ".tsx": "typescriptreact", ".mts": "typescript", ".cts": "typescript",
				".js": "javascript", ".jsx": "javascriptreact", ".mjs": "javascript", ".cjs": "javascript"},
			InitializationOptions: map[string]any{"disableAutomaticTypingAcquisition": true},
			RunsWorkspaceCode:     true,
		},
		{
			Name:      "rust-analyzer",
			Command:   []string{"rust-analyzer"},
			Languages: map[string]string{".rs": "rust"},
			InitializationOptions: map[string]any{
				"cargo":       map[string]any{"buildScripts": map[string]any{"enable": false}},
				"procMacro":   map[string]any{"enable": false},
				"checkOnSave": false,
			},
		},
	}
}

// Config configures a [Manager]. The zero value is the default.
type Config struct {
	// Servers are the language servers to use; nil means
	// DefaultServers(). When two cover an extension, the first wins.
	Servers []Server
	// Wait bounds the time diagnostics add to one write or edit: the
	// check before the change and the one after it together. Zero means
	// 5 seconds.
	Wait time.Duration
	// StartWait bounds, in addition, the first check after a server
	// starts: its workspace load. Zero means 20 seconds.
	StartWait time.Duration
	// Quiet is how long a server must publish nothing, with no work in
	// progress, for its diagnostics to count as settled. Zero means
	// 150 milliseconds.
	Quiet time.Duration
	// MaxDiagnostics is the most new diagnostics one result lists (the
	// rest are counted). Zero means 10.
	MaxDiagnostics int
	// MaxMessage is the most bytes of one diagnostic's message shown.
	// Zero means 400.
	MaxMessage int
	// MinSeverity is the least severe diagnostic reported. Zero means
	// SeverityWarning: errors and warnings, no information or hints.
	MinSeverity Severity
	// Tools are the names of the tools whose results get diagnostics.
	// Nil means write and edit.
	Tools []string
	// Env are variables ("NAME=value") added to a server's environment.
	// A server gets this process's environment without the variables
	// whose names look like credentials (*_API_KEY, *TOKEN*, AWS_*, ...),
	// unless PassEnv names them.
	Env []string
	// PassEnv are names (with * wildcards) of variables passed to
	// servers although they look like credentials.
	PassEnv []string
	// MaxRestarts is how often a server that crashed or hung is started
	// again before it is given up for its workspace. Zero means 3.
	MaxRestarts int
	// Logger receives diagnostics about the servers; nil discards.
	Logger *slog.Logger
}

// options are a Config with its defaults filled in.
type options struct {
	servers     []Server
	wait        time.Duration
	startWait   time.Duration
	quiet       time.Duration
	maxDiags    int
	maxMessage  int
	minSeverity Severity
	tools       map[string]bool
	env         []string
	passEnv     []string
	maxRestarts int
	logger      *slog.Logger
	// maxFrame bounds one message of a server.
	maxFrame int
}

func optionsOf(cfg Config) (options, error) {
	o := options{servers: cfg.Servers, wait: 5 * time.Second, startWait: 20 * time.Second, quiet: 150 * time.Millisecond,
		maxDiags: 10, maxMessage: 400, minSeverity: SeverityWarning, tools: map[string]bool{"write": true, "edit": true},
		env: cfg.Env, passEnv: cfg.PassEnv, maxRestarts: 3, logger: cfg.Logger, maxFrame: 64 << 20}
	if o.servers == nil {
		o.servers = DefaultServers()
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	var errs []error
	dur := func(name string, v time.Duration, dst *time.Duration) {
		switch {
		case v < 0:
			errs = append(errs, optionError("Config.%s is %v: it must not be negative (zero keeps the default, %v)", name, v, *dst))
		case v > 0:
			*dst = v
		}
	}
	dur("Wait", cfg.Wait, &o.wait)
	dur("StartWait", cfg.StartWait, &o.startWait)
	dur("Quiet", cfg.Quiet, &o.quiet)
	num := func(name string, v int, dst *int) {
		switch {
		case v < 0:
			errs = append(errs, optionError("Config.%s is %d: it must not be negative (zero keeps the default, %d)", name, v, *dst))
		case v > 0:
			*dst = v
		}
	}
	num("MaxDiagnostics", cfg.MaxDiagnostics, &o.maxDiags)
	num("MaxMessage", cfg.MaxMessage, &o.maxMessage)
	num("MaxRestarts", cfg.MaxRestarts, &o.maxRestarts)
	switch {
	case cfg.MinSeverity < 0 || cfg.MinSeverity > SeverityHint:
		errs = append(errs, optionError("Config.MinSeverity is %d: use SeverityError to SeverityHint", cfg.MinSeverity))
	case cfg.MinSeverity > 0:
		o.minSeverity = cfg.MinSeverity
	}
	if cfg.Tools != nil {
		o.tools = map[string]bool{}
		for _, t := range cfg.Tools {
			o.tools[t] = true
		}
	}
	for _, kv := range cfg.Env {
		if name, _, ok := strings.Cut(kv, "="); !ok || name == "" {
			errs = append(errs, optionError("Config.Env: %q is not NAME=value", kv))
		}
	}
	seen := map[string]bool{}
	for i, s := range o.servers {
		switch {
		case s.Name == "":
			errs = append(errs, optionError("Config.Servers[%d] has no name", i))
		case len(s.Command) == 0 || s.Command[0] == "":
			errs = append(errs, optionError("Config.Servers[%d] (%s) has no command", i, s.Name))
		case seen[s.Name]:
			errs = append(errs, optionError("Config.Servers[%d]: two servers are named %s", i, s.Name))
		case len(s.Languages) == 0:
			errs = append(errs, optionError("Config.Servers[%d] (%s) covers no file extensions", i, s.Name))
		}
		seen[s.Name] = true
		for ext := range s.Languages {
			if !strings.HasPrefix(ext, ".") || strings.ContainsAny(ext, "/\\") {
				errs = append(errs, optionError("Config.Servers[%d] (%s): %q is not a file name extension such as .go", i, s.Name, ext))
			}
		}
	}
	return o, errors.Join(errs...)
}

// serverFor returns the server that covers a file, by its extension.
func (o *options) serverFor(p string) (*Server, string) {
	ext := path.Ext(p)
	for i := range o.servers {
		if lang, ok := o.servers[i].Languages[ext]; ok {
			return &o.servers[i], lang
		}
	}
	return nil, ""
}

func optionError(format string, args ...any) error {
	return &harness.Error{Code: harness.CodeInvalidOption, Message: "lsp: " + fmt.Sprintf(format, args...)}
}
