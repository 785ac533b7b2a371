package shellkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/secretenv"
	"github.com/go-harness/harness/tools"
)

// forcedEnv keeps the programs a command runs from waiting on a terminal
// that is not there: no pagers, no editors, no prompts, no colours.
var forcedEnv = []string{
	"PAGER=cat",
	"GIT_PAGER=cat",
	"MANPAGER=cat",
	"SYSTEMD_PAGER=cat",
	"TERM=dumb",
	"NO_COLOR=1",
	"GIT_EDITOR=false",
	"EDITOR=false",
	"VISUAL=false",
	"GIT_TERMINAL_PROMPT=0",
	"GCM_INTERACTIVE=never",
	"DEBIAN_FRONTEND=noninteractive",
	"PIP_NO_INPUT=1",
	"PYTHONUNBUFFERED=1",
}

// droppedEnv are inherited variables that would make bash or cd behave
// unlike a fresh non-interactive shell.
var droppedEnv = []string{"BASH_ENV", "ENV", "CDPATH", "PROMPT_COMMAND", "BASH_XTRACEFD", "SHELLOPTS", "BASHOPTS"}

// sandboxEnv are the variables a sandboxed command gets from the host
// environment, beside those the host passes by name (Config.PassEnv):
// what programs need to find their tools and speak the user's language,
// and nothing that can hold a credential. A name ending in * is a prefix.
var sandboxEnv = []string{"PATH", "LANG", "LANGUAGE", "LC_*", "TZ", "USER", "LOGNAME", "HOSTNAME", "SHELL", "TERM"}

// WildMatch matches name against a pattern whose * match any run of
// characters, ignoring case.
func WildMatch(pattern, name string) bool { return secretenv.Match(pattern, name) }

func matchesAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if WildMatch(p, name) {
			return true
		}
	}
	return false
}

// inherits reports whether a variable of the base environment reaches
// commands: under a sandbox only the allow-list and what the host passes;
// without one everything but what looks like a credential, unless the host
// passes it.
func (c *Config) inherits(name string) bool {
	if slices.Contains(droppedEnv, name) {
		return false
	}
	if matchesAny(c.PassEnv, name) {
		return true
	}
	if c.Sandbox != nil {
		return matchesAny(sandboxEnv, name)
	}
	return !secretenv.Secret(name)
}

// WithheldEnv returns the names of the base environment's variables that
// commands do not get, sorted, for the session log (names only).
func (c *Config) WithheldEnv() []string {
	var out []string
	for _, kv := range c.base() {
		if name, _, _ := strings.Cut(kv, "="); name != "" && !c.inherits(name) && !slices.Contains(droppedEnv, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// EnvText describes the environment policy for the tool text and the log.
func (c *Config) EnvText() string {
	if c.Sandbox != nil {
		s := "environment from an allow-list (" + strings.Join(sandboxEnv, ", ")
		if len(c.PassEnv) > 0 {
			s += ", and " + strings.Join(c.PassEnv, ", ") + " passed by the host"
		}
		return s + "), never the host's credentials"
	}
	s := "the host's environment without variables that look like credentials"
	if w := c.WithheldEnv(); len(w) > 0 {
		s += " (withheld: " + strings.Join(w, ", ") + ")"
	}
	return s
}

func (c *Config) base() []string {
	if c.BaseEnv != nil {
		return c.BaseEnv
	}
	return os.Environ()
}

// Environ builds the environment of a started process: the base
// environment, filtered (see inherits), then forcedEnv, then the
// configured extras. Later settings win.
func (c *Config) Environ() []string {
	base := c.base()
	idx := map[string]int{}
	var out []string
	set := func(kv string) {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return
		}
		if i, seen := idx[name]; seen {
			out[i] = kv
			return
		}
		idx[name] = len(out)
		out = append(out, kv)
	}
	for _, kv := range base {
		if name, _, _ := strings.Cut(kv, "="); c.inherits(name) {
			set(kv)
		}
	}
	for _, kv := range forcedEnv {
		set(kv)
	}
	for _, kv := range c.Env {
		set(kv)
	}
	return out
}

// Settings lists the variables the tools set themselves (forced and
// configured), for the session log. Inherited variables are left out:
// they may hold secrets.
func (c *Config) Settings() []string {
	idx := map[string]int{}
	var out []string
	for _, kv := range append(slices.Clone(forcedEnv), c.Env...) {
		name, _, _ := strings.Cut(kv, "=")
		if i, ok := idx[name]; ok {
			out[i] = kv
			continue
		}
		idx[name] = len(out)
		out = append(out, kv)
	}
	return out
}

// resolveBash finds the bash executable.
func (c *Config) resolveBash() (string, error) {
	p, err := exec.LookPath(c.Shell)
	if err != nil {
		return "", &harness.Error{Code: CodeNoShell, Err: err,
			Message: fmt.Sprintf("The shell %q could not be found on this machine (%v); shell commands cannot run here.", c.Shell, err)}
	}
	return p, nil
}

// argv returns the command line that runs bash with args, wrapped by the
// sandbox if there is one.
func (c *Config) argv(bash, dir string, args ...string) ([]string, error) {
	argv := append([]string{bash, "--noprofile", "--norc"}, args...)
	if c.Sandbox == nil {
		return argv, nil
	}
	var w []string
	var err error
	if ps, ok := c.Sandbox.(PolicySandbox); ok {
		w, err = ps.WrapContained(argv, dir, c.Containment())
	} else {
		w, err = c.Sandbox.Wrap(argv, dir)
	}
	if err != nil {
		return nil, SandboxRefused(err)
	}
	if len(w) == 0 {
		return nil, &harness.Error{Code: CodeSandboxDenied, Message: "The sandbox returned an empty command line; the command was not run."}
	}
	return w, nil
}

// BashCommand is Command without the sandbox: the directory's namespace
// and OS paths and the command line that runs bash with args, for a
// sandbox that wraps it itself.
func (c *Config) BashCommand(env *tools.Env, dir string, args ...string) (ns, osDir string, argv []string, err error) {
	ns, osDir, err = workdir(env, dir)
	if err != nil {
		return "", "", nil, err
	}
	bash, err := c.resolveBash()
	if err != nil {
		return "", "", nil, err
	}
	return ns, osDir, append([]string{bash, "--noprofile", "--norc"}, args...), nil
}

// SandboxRefused is the error of a sandbox that refused to wrap a
// command.
func SandboxRefused(err error) error {
	return &harness.Error{Code: CodeSandboxDenied, Err: err,
		Message: fmt.Sprintf("The sandbox refused to start the command: %v.", err)}
}

// Command resolves the directory a call asks to run in (see workdir) and
// the bash executable, and returns the command line that runs bash with
// args there (see argv), with the directory's namespace and OS paths.
func (c *Config) Command(env *tools.Env, dir string, args ...string) (ns, osDir string, argv []string, err error) {
	ns, osDir, err = workdir(env, dir)
	if err != nil {
		return "", "", nil, err
	}
	bash, err := c.resolveBash()
	if err != nil {
		return "", "", nil, err
	}
	argv, err = c.argv(bash, osDir, args...)
	if err != nil {
		return "", "", nil, err
	}
	return ns, osDir, argv, nil
}

// workdir resolves the directory a command runs in. dir is a path in
// the file system's namespace, relative to env.Cwd unless absolute; empty
// means env.Cwd. It returns the namespace path and the OS path. When the
// file system maps paths to the OS (fs.LocalPather), the mapping refuses
// paths outside its root.
//
// Without a file system and without a working directory the host named
// (a session directory other than "/", the agent's default when it has
// neither), commands are refused rather than run in "/": the error
// names what to configure.
func workdir(env *tools.Env, dir string) (ns, osPath string, err error) {
	if env.FS == nil && (env.Cwd == "" || env.Cwd == "/") {
		return "", "", &harness.Error{Code: CodeBadWorkdir,
			Message: "Commands cannot run: the host configured neither a file system nor a working directory, so there is no directory to run them in (they are not run in /). " +
				"The host must configure one: agent.Stores.Files (an fslocal.New(workspace)), or a session working directory (session.Header.Cwd in agent.Loop.NewSession) for commands without file tools."}
	}
	cwd := env.Cwd
	if cwd == "" {
		cwd = "/"
	}
	ns = cwd
	switch {
	case dir == "":
	case path.IsAbs(filepath.ToSlash(dir)):
		ns = path.Clean(filepath.ToSlash(dir))
	default:
		ns = path.Join(cwd, filepath.ToSlash(dir))
	}
	osPath = filepath.FromSlash(ns)
	if lp, ok := env.FS.(fs.LocalPather); ok {
		osPath, err = lp.LocalPath(ns)
		if err != nil {
			return "", "", &harness.Error{Code: CodeBadWorkdir, Err: err,
				Message: fmt.Sprintf("The directory %s cannot be used: %v. Use a directory inside the workspace (the session's directory is %s).", ns, err, cwd)}
		}
	}
	st, err := os.Stat(osPath)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", "", &harness.Error{Code: CodeBadWorkdir, Err: err,
			Message: fmt.Sprintf("The directory %s does not exist. Create it first or use an existing directory (the session's directory is %s).", ns, cwd)}
	case err != nil:
		return "", "", &harness.Error{Code: CodeBadWorkdir, Err: err,
			Message: fmt.Sprintf("The directory %s cannot be used: %v.", ns, err)}
	case !st.IsDir():
		return "", "", &harness.Error{Code: CodeBadWorkdir,
			Message: fmt.Sprintf("%s is not a directory. Pass a directory as the working directory.", ns)}
	}
	return ns, osPath, nil
}
