package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/examples/coder/internal/ui"
	"github.com/go-harness/harness/tools/permission"
	"github.com/go-harness/harness/tools/shell"
)

// exitPaused is the exit status of a headless turn that waits for
// approval: resolve it with -continue -approve or -reject.
const exitPaused = 3

// settingsFile is the workspace's settings, relative to its root.
const settingsFile = ".harness/settings.json"

// The values of -sandbox.
const (
	sandboxReadOnly       = "read-only"       // bubblewrap, the workspace read-only too
	sandboxWorkspaceWrite = "workspace-write" // bubblewrap, the workspace writable
	sandboxFullAccess     = "full-access"     // no sandbox
)

// permFlags are the permission and sandbox flags.
type permFlags struct {
	mode     string
	modeSet  bool
	sandbox  string
	allow    []string
	deny     []string
	approve  string
	reject   string
	feedback string
}

func (p *permFlags) register(fset *flag.FlagSet) {
	fset.StringVar(&p.mode, "permission-mode", "default", "`mode` for tool calls: default (ask before anything with side effects), accept-edits (file changes in the workspace allowed), plan (read-only) or bypass (ask nothing; deny rules still apply)")
	fset.StringVar(&p.sandbox, "sandbox", "", "`mode` for commands: read-only, workspace-write or full-access (default workspace-write where bubblewrap works)")
	fset.Func("allow", "allow calls matching `rule`, such as 'Bash(go test:*)' or 'Edit(src/**)' (repeatable)", func(s string) error {
		p.allow = append(p.allow, s)
		return nil
	})
	fset.Func("deny", "deny calls matching `rule` (repeatable)", func(s string) error {
		p.deny = append(p.deny, s)
		return nil
	})
	fset.StringVar(&p.approve, "approve", "", "with -continue or -resume: approve the waiting calls `all`, or ID,ID,...")
	fset.StringVar(&p.reject, "reject", "", "with -continue or -resume: reject the waiting calls `all`, or ID,ID,...")
	fset.StringVar(&p.feedback, "feedback", "", "with -reject: `text` the model reads with the rejection")
}

// check validates the flags once they are parsed.
func (p *permFlags) check(o *options, set map[string]bool) error {
	p.modeSet = set["permission-mode"]
	if _, err := permission.New(permission.Rules{Mode: permission.Mode(p.mode)}); err != nil {
		return usagef("-permission-mode %q: use default, accept-edits, plan or bypass", p.mode)
	}
	switch p.sandbox {
	case "", sandboxReadOnly, sandboxWorkspaceWrite, sandboxFullAccess:
	default:
		return usagef("-sandbox %q: use read-only, workspace-write or full-access", p.sandbox)
	}
	if (p.approve != "" || p.reject != "") && o.resume == "" && !o.cont {
		return usagef("-approve and -reject answer a paused turn: give -continue (or -resume ID) too")
	}
	if p.approve == "all" && p.reject == "all" {
		return usagef("-approve all and -reject all contradict each other")
	}
	if p.feedback != "" && p.reject == "" {
		return usagef("-feedback goes with -reject")
	}
	for _, list := range [][]string{p.allow, p.deny} {
		if _, err := permission.New(permission.Rules{Allow: list}); err != nil {
			return usagef("%v", strings.TrimPrefix(err.Error(), "permission: "))
		}
	}
	return nil
}

// policy builds the permission policy from the settings file and the
// flags: the flags' rules add to the file's, and -permission-mode, when
// given, wins over the file's defaultMode.
func (a *app) policy() (*permission.Policy, error) {
	rules, err := permission.ReadSettings(filepath.Join(a.root, filepath.FromSlash(settingsFile)))
	switch {
	case errors.Is(err, os.ErrNotExist):
		rules = permission.Rules{}
	case errors.Is(err, harness.CodeInvalidOption):
		return nil, usagef("%s", strings.TrimPrefix(err.Error(), "permission: "))
	case err != nil:
		return nil, err
	}
	p := &a.o.perm
	rules.Allow = append(rules.Allow, p.allow...)
	rules.Deny = append(rules.Deny, p.deny...)
	if p.modeSet || rules.Mode == "" {
		rules.Mode = permission.Mode(p.mode)
	}
	return permission.New(rules)
}

// sandbox picks the sandbox for bash and shells. Asked for explicitly,
// a sandbox that cannot run is an error; by default the coder falls back
// to running commands unconfined, and says so once. The sandbox masks
// what the permission rules deny, as the file tools hide it (the loop
// restricts their file system by the same rules), and lets commands read
// Go's module cache and write its build cache, which live under the home
// directory it otherwise hides.
func (a *app) sandbox(pol *permission.Policy) (shell.Sandbox, error) {
	mode := a.o.perm.sandbox
	explicit := mode != ""
	switch mode {
	case sandboxFullAccess:
		return nil, nil // no sandbox: the tools record that commands run unconfined
	case "":
		mode = sandboxWorkspaceWrite
	}
	cfg := shell.BubblewrapConfig{ReadOnly: mode == sandboxReadOnly, Workspace: a.root}
	if paths := pol.Paths(a.root); !paths.Empty() {
		cfg.Paths = paths
	}
	cfg.Readable, cfg.Writable = goCaches(a.env)
	sb, err := shell.Bubblewrap(cfg)
	if err == nil {
		return sb, nil
	}
	if explicit || !errors.Is(err, harness.CodeSandboxUnavailable) {
		return nil, usagef("-sandbox %s: %v", mode, err)
	}
	fmt.Fprintf(a.stderr, "coder: warning: commands run unconfined: %v\n", err)
	return nil, nil
}

// approver asks the user at the terminal about each call that needs an
// answer; nil when the coder cannot ask (no terminal, -json), so that
// such calls pause the turn instead.
func (a *app) approver() permission.Approver {
	if !ui.IsTerminal(a.stdin) || a.o.json {
		return nil
	}
	return func(ctx context.Context, req permission.Request) (permission.Answer, error) {
		d := req.Decision
		q := fmt.Sprintf("? %s  %s\n  %s", req.Call.Name, d.Preview, d.Reason)
		// What is approved, within the terminal's height: the question,
		// its reason and the answer line stay on the screen.
		for _, l := range cutTo(approvalDetail(req.Call, ui.Height(a.stdout)-6), a.console.Width()-5) {
			q += "\n    " + l
		}
		choices := "[y]es  [n]o"
		if d.Suggest != "" {
			choices += "  [a]lways " + d.Suggest
		}
		line, ok, err := a.console.AskAfter(ctx, func() { a.view.Notice(ui.NoticeWarn, q) }, choices+"  or type feedback › ")
		switch {
		case err != nil:
			return permission.Answer{}, err
		case !ok:
			return permission.Answer{Feedback: "no answer (end of input)"}, nil
		}
		return parseAnswer(strings.TrimSpace(line), d.Suggest), nil
	}
}

// parseAnswer reads the user's answer to a question.
func parseAnswer(s, suggest string) permission.Answer {
	switch strings.ToLower(s) {
	case "y", "yes":
		return permission.Answer{Allow: true}
	case "n", "no", "":
		return permission.Answer{}
	case "a", "always":
		if suggest == "" {
			return permission.Answer{Allow: true}
		}
		return permission.Answer{Allow: true, Remember: suggest}
	}
	if rule, ok := strings.CutPrefix(s, "a "); ok {
		return permission.Answer{Allow: true, Remember: strings.TrimSpace(rule)}
	}
	return permission.Answer{Feedback: s}
}

// answers turns -approve and -reject into answers for the waiting
// calls.
func (a *app) answers() (map[string]permission.Answer, error) {
	p := &a.o.perm
	pending := a.sess.Pending()
	if len(pending) == 0 {
		return nil, usagef("session %s has no call waiting for approval", a.sess.Header().ID)
	}
	waiting := map[string]bool{}
	var ids []string
	for _, r := range pending {
		waiting[r.Call.ID] = true
		ids = append(ids, r.Call.ID)
	}
	out := map[string]permission.Answer{}
	sels := []struct {
		list string
		ans  permission.Answer
	}{{p.approve, permission.Answer{Allow: true}}, {p.reject, permission.Answer{Feedback: p.feedback}}}
	// Named ids first; "all" on the other side takes the rest.
	for _, all := range []bool{false, true} {
		for _, s := range sels {
			if s.list == "" || (s.list == "all") != all {
				continue
			}
			if all {
				for _, id := range ids {
					if _, ok := out[id]; !ok {
						out[id] = s.ans
					}
				}
				continue
			}
			for _, id := range strings.Split(s.list, ",") {
				id = strings.TrimSpace(id)
				if !waiting[id] {
					return nil, usagef("no call %q waits for approval; the waiting calls are %s", id, strings.Join(ids, ", "))
				}
				if _, dup := out[id]; dup {
					return nil, usagef("the call %s is both approved and rejected", id)
				}
				out[id] = s.ans
			}
		}
	}
	var missing []string
	for _, id := range ids {
		if _, ok := out[id]; !ok {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, usagef("the call %s still waits: approve or reject every waiting call (-approve all, -reject all, or ids)", strings.Join(missing, ", "))
	}
	return out, nil
}

// resolve answers the paused turn and runs it to its end.
func (a *app) resolve(ctx context.Context) (int, error) {
	ans, err := a.answers()
	if err != nil {
		return 0, err
	}
	code, _ := a.runTurn(ctx, "", false, func(c context.Context) iter.Seq2[agent.Event, error] { return a.sess.Resolve(c, ans) })
	return code, nil
}

// showPending prints the calls a paused turn waits for, and how to
// answer them.
func (a *app) showPending() {
	pending := a.sess.Pending()
	var b strings.Builder
	fmt.Fprintf(&b, "The turn is paused: %d call(s) wait for approval.\n", len(pending))
	for _, r := range pending {
		fmt.Fprintf(&b, "  %s  %s  %s\n", r.Call.ID, r.Call.Name, r.Decision.Preview)
	}
	again := "coder -C " + shellQuote(a.root)
	if a.o.sessions != "" {
		again += " -sessions " + shellQuote(a.sessionsDir)
	}
	fmt.Fprintf(&b, "Approve with: %s -continue -approve all (or -approve ID,ID)\nReject with:  %s -continue -reject all [-feedback \"why\"]", again, again)
	if a.o.json {
		fmt.Fprintln(a.stderr, b.String())
		return
	}
	a.view.Notice(ui.NoticeWarn, b.String())
}

// goCaches returns Go's module cache (read-only in the sandbox) and build
// cache (writable), where they exist: GOMODCACHE and GOCACHE when the
// environment names them, else their defaults below the home directory.
func goCaches(env func(string) string) (readable, writable []string) {
	home, _ := os.UserHomeDir()
	mod, build := env("GOMODCACHE"), env("GOCACHE")
	if mod == "" && home != "" {
		gopath := env("GOPATH")
		if gopath == "" {
			gopath = filepath.Join(home, "go")
		}
		mod = filepath.Join(strings.Split(gopath, string(filepath.ListSeparator))[0], "pkg", "mod")
	}
	if build == "" {
		if d, err := os.UserCacheDir(); err == nil {
			build = filepath.Join(d, "go-build")
		}
	}
	for _, d := range []struct {
		path string
		list *[]string
	}{{mod, &readable}, {build, &writable}} {
		if st, err := os.Stat(d.path); err == nil && st.IsDir() && filepath.IsAbs(d.path) {
			*d.list = append(*d.list, d.path)
		}
	}
	return readable, writable
}

// goPassEnv are the Go settings commands keep under the sandbox's
// allow-listed environment.
var goPassEnv = []string{"GOPATH", "GOROOT", "GOFLAGS", "GOPROXY", "GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GOSUMDB", "GOTOOLCHAIN", "CGO_ENABLED"}

// goCacheEnv names Go's caches for commands, so that go finds them under
// a sandbox's private HOME too.
func goCacheEnv(env func(string) string) []string {
	readable, writable := goCaches(env)
	var out []string
	if len(readable) > 0 {
		out = append(out, "GOMODCACHE="+readable[0])
	}
	if len(writable) > 0 {
		out = append(out, "GOCACHE="+writable[0])
	}
	return out
}

// shellQuote quotes s for a POSIX shell when it needs it, so a printed
// command can be pasted back.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+=:,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
