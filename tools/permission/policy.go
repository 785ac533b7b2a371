package permission

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/webhost"
	"github.com/go-harness/harness/tools"
)

// Mode is how a policy treats calls that no rule decides.
type Mode string

// Modes.
const (
	// ModeDefault asks for every call with side effects that no rule
	// allows; calls without side effects run.
	ModeDefault Mode = "default"
	// ModeAcceptEdits also allows writes and edits of files inside the
	// workspace.
	ModeAcceptEdits Mode = "accept-edits"
	// ModePlan is read-only: no call with side effects runs, whatever
	// the allow rules say, and the model is told it is planning.
	ModePlan Mode = "plan"
	// ModeBypass asks nothing: everything runs but what a deny rule
	// denies.
	ModeBypass Mode = "bypass"
)

// parseMode reads a mode name: default, accept-edits, plan or bypass
// (Claude Code's acceptEdits and bypassPermissions too), and "" for the
// default. Anything else is an error matching harness.CodeInvalidOption.
func parseMode(s string) (Mode, error) {
	switch s {
	case "default", "":
		return ModeDefault, nil
	case "accept-edits", "acceptEdits":
		return ModeAcceptEdits, nil
	case "plan":
		return ModePlan, nil
	case "bypass", "bypassPermissions":
		return ModeBypass, nil
	}
	return "", invalid("unknown mode %q: use default, accept-edits, plan or bypass", s)
}

// Outcome is what a decision says about a call.
type Outcome string

// Outcomes.
const (
	Allow Outcome = "allow"
	Deny  Outcome = "deny"
	Ask   Outcome = "ask"
)

// Decision is a policy's answer for one call.
type Decision struct {
	Outcome Outcome `json:"outcome"`
	// Rule is the rule that decided, as written; empty when the mode did.
	Rule string `json:"rule,omitempty"`
	// List is the list the rule is on: allow, ask or deny.
	List string `json:"list,omitempty"`
	// Mode is the policy's mode.
	Mode Mode `json:"mode"`
	// Reason says why, in a sentence a user or a model can read.
	Reason string `json:"reason"`
	// Suggest is a rule that would allow calls like this one, for an
	// approver's "always" answer; empty when none fits.
	Suggest string `json:"suggest,omitempty"`
	// Preview is the call in one line: the command, the path, or the
	// tool and its arguments, cut to a card's width.
	Preview string `json:"preview,omitempty"`
}

// Policy decides tool calls by rules and a mode. It is immutable and
// safe for concurrent use.
type Policy struct {
	mode             Mode
	allow, ask, deny []*rule
	home             string
	// hasReadRules and hasEditRules report Read and Edit rules with a
	// path on the deny or ask lists: a command's words are checked
	// against them.
	hasReadRules, hasEditRules bool
	// pathIx indexes the path rules by list and kind (Read, Edit).
	pathIx [3][2]*pathIndex
	// checking: the policy is a suggestion's trial (suggestFor), which
	// suggests nothing itself.
	checking bool
}

// New compiles rules into a policy. A rule that does not parse, an
// unknown Mode and a Home that is not absolute are errors matching
// harness.CodeInvalidOption that name what is wrong. The zero Mode is
// ModeDefault; the zero Home is the user's home directory.
func New(rules Rules) (*Policy, error) {
	m, err := parseMode(string(rules.Mode))
	if err != nil {
		return nil, err
	}
	p := &Policy{mode: m}
	switch {
	case rules.Home != "":
		if !path.IsAbs(filepath.ToSlash(rules.Home)) {
			return nil, invalid("home %q: the directory ~/ rules are anchored at must be absolute", rules.Home)
		}
		p.home = path.Clean(filepath.ToSlash(rules.Home))
	default:
		if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) {
			p.home = path.Clean(filepath.ToSlash(h))
		}
	}
	for _, l := range []struct {
		in  []string
		out *[]*rule
	}{{rules.Allow, &p.allow}, {rules.Ask, &p.ask}, {rules.Deny, &p.deny}} {
		for _, s := range l.in {
			r, err := parseRule(s)
			if err != nil {
				return nil, err
			}
			*l.out = append(*l.out, r)
		}
	}
	p.index()
	p.buildIndexes()
	return p, nil
}

// index notes which kinds of path rules the policy has.
func (p *Policy) index() {
	for _, rules := range [][]*rule{p.deny, p.ask} {
		for _, r := range rules {
			if r.name != "" || r.anySpec {
				continue
			}
			switch r.kind {
			case kindRead:
				p.hasReadRules = true
			case kindEdit:
				p.hasEditRules = true
			}
		}
	}
}

// Mode returns the policy's mode.
func (p *Policy) Mode() Mode { return p.mode }

// WithAllow returns a copy of p with more allow rules, such as the rules
// a user chose to remember for a session.
func (p *Policy) WithAllow(rules ...string) (*Policy, error) {
	q := *p
	q.allow = append([]*rule(nil), p.allow...)
	for _, s := range rules {
		r, err := parseRule(s)
		if err != nil {
			return nil, err
		}
		q.allow = append(q.allow, r)
	}
	q.buildIndexes()
	return &q, nil
}

// toolInfo is what the rules know about a tool: its family and the
// argument holding its path or command.
type toolInfo struct {
	kind  kind
	field string
	// dir is the argument naming the command's working directory.
	dir string
	// unknownCwd: the command runs where an earlier command left the
	// shell (shell_send).
	unknownCwd bool
}

var builtinTools = map[string]toolInfo{
	"read":        {kind: kindRead, field: "file_path"},
	"read_image":  {kind: kindRead, field: "file_path"},
	"glob":        {kind: kindRead, field: "path"},
	"grep":        {kind: kindRead, field: "path"},
	"write":       {kind: kindEdit, field: "file_path"},
	"edit":        {kind: kindEdit, field: "file_path"},
	"bash":        {kind: kindBash, field: "command", dir: "workdir"},
	"shell_send":  {kind: kindBash, field: "command", unknownCwd: true},
	"shell_open":  {kind: kindShellControl},
	"shell_read":  {kind: kindShellControl},
	"shell_close": {kind: kindShellControl},
	"bash_output": {kind: kindShellControl},
	"bash_kill":   {kind: kindShellControl},
	"skill":       {kind: kindSkill, field: "name"},
	"web_fetch":   {kind: kindWeb, field: "url"},
}

// verdict is the lists' answer for one part of a call.
type verdict struct {
	list string // "deny", "ask", "allow", or "" when no rule matched
	rule *rule
	// why says, for a compound command, which part decided.
	why string
	// readOnly: the call is a bash line of read-only commands
	// (readOnlyLine), which has no side effects that need approval.
	readOnly bool
}

func (v verdict) rank() int {
	switch v.list {
	case "deny":
		return 3
	case "ask":
		return 2
	case "":
		return 1
	}
	return 0
}

// worse returns the verdict that wins when both apply to one call.
func worse(a, b verdict) verdict {
	if b.rank() > a.rank() {
		return b
	}
	return a
}

// subject is what a call touches, as the rules see it.
type subject struct {
	info toolInfo
	// paths are the clean absolute forms of the call's path: as written,
	// and with symbolic links resolved when that differs; forms are the
	// same, split for matching.
	paths []string
	forms []pathForm
	// inside reports that every form of the path is in the workspace.
	inside bool
	// command is the bash command line.
	command string
	// skill is the name of the skill a skill call loads.
	skill string
	// dir is the directory the call starts in (a bash command's workdir);
	// ws is the workspace the rules are anchored at (the session's
	// working directory).
	dir string
	ws  string
	// host is the canonical host of a web fetch's URL; "" when the URL
	// names none that can be read, which no allow rule matches and every
	// deny or ask rule may.
	host string
}

// Decide returns the decision for a checked call (its Spec and Env set).
func (p *Policy) Decide(call *tools.Call) Decision {
	info, known := builtinTools[call.Name]
	if !known {
		info = toolInfo{kind: kindOther}
	}
	sub := p.subject(call, info)
	var v verdict
	var view *bashView
	switch info.kind {
	case kindBash:
		v, view = p.bashVerdict(call, sub)
	default:
		v = p.callVerdict(call.Name, sub)
	}
	d := p.apply(call, sub, v)
	d.Preview = preview(call, sub)
	if d.Outcome == Ask && !p.checking {
		d.Suggest = p.suggestFor(call, info, sub, view)
	}
	return d
}

// callVerdict checks a call that is not a bash command.
func (p *Policy) callVerdict(name string, sub subject) verdict {
	for _, l := range []struct {
		name  string
		rules []*rule
	}{{"deny", p.deny}, {"ask", p.ask}, {"allow", p.allow}} {
		for _, r := range l.rules {
			if p.matches(r, name, sub, l.name == "allow") {
				return verdict{list: l.name, rule: r}
			}
		}
	}
	return verdict{}
}

// matches reports whether r applies to a non-bash call. An allow rule
// with a path pattern must match every form of the path; a deny or ask
// rule any form.
func (p *Policy) matches(r *rule, name string, sub subject, all bool) bool {
	if r.name != "" {
		return r.matchName(name)
	}
	if r.kind == kindSkill || sub.info.kind == kindSkill {
		return r.kind == sub.info.kind && (r.anySpec || wildcard(r.skill, sub.skill))
	}
	if r.kind == kindShellControl || r.kind != sub.info.kind {
		// Edit rules also cover reading what they allow to change.
		if !(r.kind == kindEdit && sub.info.kind == kindRead && all) {
			return false
		}
	}
	if r.anySpec {
		return true
	}
	if r.kind == kindWeb {
		if sub.host == "" {
			return !all
		}
		return r.web.Match(sub.host)
	}
	if len(sub.paths) == 0 || r.kind == kindBash {
		return false
	}
	return p.matchPaths(r.path, sub, all)
}

func (p *Policy) matchPaths(pp pathPattern, sub subject, all bool) bool {
	n := 0
	for _, f := range sub.forms {
		if pp.matchForm(f) {
			n++
		}
	}
	if all {
		return n == len(sub.forms)
	}
	return n > 0
}

// setPaths fills the path forms of a subject.
func (p *Policy) setPaths(sub *subject, abs string, fsys fs.FileSystem) {
	sub.paths = p.forms(abs, sub.ws, fsys)
	sub.forms = sub.forms[:0]
	for _, a := range sub.paths {
		sub.forms = append(sub.forms, newForm(a, sub.ws, p.home))
	}
	sub.inside = p.insideAll(sub.paths, sub.ws)
}

// apply turns the lists' verdict into a decision under the mode.
func (p *Policy) apply(call *tools.Call, sub subject, v verdict) Decision {
	d := Decision{Mode: p.mode}
	if v.rule != nil {
		d.Rule, d.List = v.rule.raw, v.list
	}
	effects := (call.Spec.SideEffects || sub.info.kind == kindEdit || sub.info.kind == kindBash) && !v.readOnly
	what := describe(call.Name, sub)
	switch {
	case v.list == "deny":
		d.Outcome = Deny
		d.Reason = fmt.Sprintf("%s is denied by the rule %s", what, v.rule.raw)
		if v.why != "" {
			d.Reason += " (" + v.why + ")"
		}
		return d
	case p.mode == ModeBypass:
		d.Outcome, d.Reason = Allow, fmt.Sprintf("%s runs: bypass mode asks nothing", what)
		return d
	case p.mode == ModePlan && effects:
		d.Outcome, d.Rule, d.List = Deny, "", ""
		d.Reason = fmt.Sprintf("%s has side effects, and plan mode is read-only: nothing that changes files or runs commands is allowed while planning", what)
		return d
	case v.list == "ask":
		d.Outcome = Ask
		d.Reason = fmt.Sprintf("%s needs approval by the rule %s", what, v.rule.raw)
		if v.why != "" {
			d.Reason += " (" + v.why + ")"
		}
		return d
	case v.list == "allow":
		d.Outcome = Allow
		switch {
		case v.rule != nil:
			d.Reason = fmt.Sprintf("%s is allowed by the rule %s", what, v.rule.raw)
		case v.readOnly:
			d.Reason = fmt.Sprintf("%s only reads: read-only commands run without asking", what)
		default:
			d.Reason = fmt.Sprintf("%s is allowed", what)
		}
		return d
	}
	d.Rule, d.List = "", ""
	switch {
	case p.mode == ModeAcceptEdits && sub.info.kind == kindEdit && sub.inside:
		d.Outcome, d.Reason = Allow, fmt.Sprintf("%s is inside the workspace, and accept-edits mode allows file changes there", what)
	case sub.info.kind == kindWeb:
		d.Outcome = Ask
		d.Reason = fmt.Sprintf("no rule allows %s: fetching from a host needs approval", what)
	case v.readOnly:
		// Read-only, but a part of it could not be settled (a place
		// known only when it runs): it asks, and says why.
		d.Outcome = Ask
		d.Reason = fmt.Sprintf("%s reads only, but needs approval", what)
		if v.why != "" {
			d.Reason += ": " + v.why
		}
	case sub.info.kind == kindShellControl || !effects:
		d.Outcome, d.Reason = Allow, fmt.Sprintf("%s has no side effects that need approval", what)
	default:
		d.Outcome = Ask
		d.Reason = fmt.Sprintf("no rule allows %s, and it has side effects", what)
		if v.why != "" {
			d.Reason += " (" + v.why + ")"
		}
	}
	return d
}

// subject reads what a call touches from its arguments.
func (p *Policy) subject(call *tools.Call, info toolInfo) subject {
	sub := subject{info: info}
	var env *tools.Env = call.Env
	if env != nil {
		sub.dir = path.Clean("/" + strings.TrimPrefix(env.Cwd, "/"))
	}
	if env == nil || env.Cwd == "" {
		sub.dir = "/"
	}
	sub.ws = sub.dir
	if info.field == "" {
		return sub
	}
	args := call.Args() // decoded once, by the registry that checked the call
	if args == nil {
		return sub
	}
	val, _ := args[info.field].(string)
	switch info.kind {
	case kindSkill:
		sub.skill = val
	case kindBash:
		sub.command = val
		if d, _ := args[info.dir].(string); d != "" && info.dir != "" {
			sub.dir = resolve(env, sub.dir, d)
		}
	case kindWeb:
		if h, err := webhost.FromURL(val); err == nil {
			sub.host = h.Name
		}
	case kindRead, kindEdit:
		if val == "" && info.field == "path" {
			val = "."
		}
		if val == "" || strings.HasPrefix(val, tools.OutputScheme) {
			return sub
		}
		abs := resolve(env, sub.dir, val)
		var fsys fs.FileSystem
		if env != nil {
			fsys = env.FS
		}
		p.setPaths(&sub, abs, fsys)
	}
	return sub
}

func resolve(env *tools.Env, dir, p string) string {
	if strings.HasPrefix(p, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			return path.Clean(filepath.ToSlash(h) + p[1:])
		}
	}
	if env != nil && env.Cwd != "" {
		return env.Resolve(p)
	}
	return path.Join(dir, p)
}

// forms returns abs and, on a file system backed by the OS (or none),
// the path with symbolic links resolved as far as it exists. Below the
// workspace only links below it count (links above it are the
// workspace's own), which keeps the common case to a few lstat calls.
func (p *Policy) forms(abs, ws string, fsys fs.FileSystem) []string {
	out := []string{abs}
	if fsys != nil {
		if _, ok := fsys.(fs.LocalPather); !ok {
			return out
		}
	}
	if real := realBelow(abs, ws); real != "" && real != abs {
		out = append(out, real)
	}
	return out
}

// realBelow resolves the links of abs, or returns "" when none below
// the workspace is in the way.
func realBelow(abs, ws string) string {
	rel, inside := relUnder(abs, ws)
	if !inside || ws == "/" {
		return realPath(abs)
	}
	cur := ws
	for rel != "" {
		part, rest, _ := strings.Cut(rel, "/")
		rel = rest
		cur += "/" + part
		fi, err := os.Lstat(filepath.FromSlash(cur))
		if err != nil {
			return "" // what does not exist links nowhere
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return realPath(abs)
		}
	}
	return ""
}

// realPath resolves the symbolic links of the longest existing prefix
// of abs, or returns "".
func realPath(abs string) string {
	dir, rest := abs, ""
	for i := 0; i < 256; i++ {
		if r, err := filepath.EvalSymlinks(filepath.FromSlash(dir)); err == nil {
			return path.Join(filepath.ToSlash(r), rest)
		}
		if dir == "/" || dir == "." {
			return ""
		}
		rest = path.Join(path.Base(dir), rest)
		dir = path.Dir(dir)
	}
	return ""
}

func (p *Policy) insideAll(paths []string, ws string) bool {
	if len(paths) == 0 {
		return false
	}
	wsForms := []string{ws}
	if len(paths) > 1 {
		if r := realPath(ws); r != "" && r != ws {
			wsForms = append(wsForms, r)
		}
	}
	for _, abs := range paths {
		ok := false
		for _, w := range wsForms {
			if _, in := relUnder(abs, w); in {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// describe names a call in a sentence.
func describe(name string, sub subject) string {
	switch sub.info.kind {
	case kindBash:
		cmd := sub.command
		if i := strings.IndexByte(cmd, '\n'); i >= 0 {
			cmd = cmd[:i] + " …"
		}
		if len(cmd) > 120 {
			cmd = cmd[:117] + "…"
		}
		return fmt.Sprintf("the %s command `%s`", name, cmd)
	case kindRead, kindEdit:
		if len(sub.paths) > 0 {
			return fmt.Sprintf("the %s call on %s", name, sub.paths[0])
		}
	case kindSkill:
		if sub.skill != "" {
			return fmt.Sprintf("the %s call loading the skill %s", name, sub.skill)
		}
	case kindWeb:
		if sub.host != "" {
			return fmt.Sprintf("the %s call to %s", name, sub.host)
		}
		return fmt.Sprintf("the %s call (its URL names no host that can be read)", name)
	}
	return fmt.Sprintf("the %s call", name)
}

// preview is a call in one line.
func preview(call *tools.Call, sub subject) string {
	var s string
	switch {
	case sub.info.kind == kindBash:
		s = sub.command
	case len(sub.paths) > 0:
		s = sub.paths[0]
	case sub.info.kind == kindWeb:
		s, _ = call.Args()["url"].(string)
		if s == "" {
			s = call.Name + " " + call.Arguments
		}
	default:
		s = call.Name + " " + call.Arguments
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 160 {
		s = string(r[:159]) + "…"
	}
	return s
}

// HostVerdict is the rules' answer for fetching from one host, for the
// web_fetch tool, which asks it again for every host a redirect leads to
// (the decision before the call covers the URL the model gave).
type HostVerdict struct {
	// List is the list of the rule that decides: "deny", "ask" or
	// "allow"; "" when no WebFetch rule names the host (the mode then
	// decides the call, and a redirect to it is not followed).
	List string `json:"list,omitempty"`
	// Rule is that rule as written.
	Rule string `json:"rule,omitempty"`
	// Exact reports that an allow rule names the host itself, with no
	// wildcard (WebFetch(domain:127.0.0.1)), and no deny or ask rule
	// matches it: such a rule is what lets a fetch reach a host that is,
	// or resolves to, a loopback, private or link-local address.
	// Wildcards, WebFetch alone and bypass mode never do.
	Exact bool `json:"exact,omitempty"`
}

// WebHost returns the verdict of the WebFetch rules (and of name rules
// for web_fetch) on fetching from host, as a URL writes it; deny beats
// ask, and ask beats allow. A host that cannot be read gets the verdict
// of the rules that match any host, and never an allow by a domain rule.
func (p *Policy) WebHost(host string) HostVerdict {
	sub := subject{info: toolInfo{kind: kindWeb}}
	if h, err := webhost.Parse(host); err == nil {
		sub.host = h.Name
	}
	v := p.callVerdict("web_fetch", sub)
	out := HostVerdict{List: v.list}
	if v.rule != nil {
		out.Rule = v.rule.raw
	}
	if v.list == "allow" && sub.host != "" {
		for _, r := range p.allow {
			if r.kind == kindWeb && !r.anySpec && !r.web.Wildcard && r.web.Match(sub.host) {
				out.Exact, out.Rule = true, r.raw
				break
			}
		}
	}
	return out
}
