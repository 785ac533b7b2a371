package permission

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/webhost"
)

// Rules are what a policy is made of, as plain data: three lists of
// rules, the mode for what no rule decides, and the directory ~/ rules
// are anchored at. Deny beats ask, and ask beats allow. Each entry is a
// rule in Claude Code's syntax:
//
//	Read                      every file read
//	Read(.env)                reading any .env below the workspace
//	Edit(src/**)              writing or editing below <workspace>/src
//	Write(//etc/**)           the same list as Edit; // starts an absolute path
//	Edit(~/.ssh/**)           below the home directory
//	Bash                      every command
//	Bash(npm run test:*)      commands starting with the words "npm run test"
//	Bash(git status)          exactly that command
//	Bash(git * --help)        * matches anything
//	session_search            a tool by name
//	mcp__github__*            tools by name, with wildcards
//	mcp__github               every tool of an MCP server
//	Skill(pdf)                loading the skill pdf with the skill tool
//	Grep, Glob, Task          Claude Code's names of grep, glob and task
//	WebFetch                  every web_fetch call
//	WebFetch(domain:example.com)    fetching from example.com
//	WebFetch(domain:*.example.com)  fetching from any host below example.com
//	WebSearch                 the web_search tool (a name rule for web_search)
//
// A WebFetch allow rule that names a host exactly (no wildcard) also
// lets the web_fetch tool reach that host when it is, or resolves to, a
// loopback or private address: WebFetch(domain:127.0.0.1) or
// WebFetch(domain:intranet.example.com). See [Policy.WebHost].
type Rules struct {
	Allow []string `json:"allow,omitempty"`
	Ask   []string `json:"ask,omitempty"`
	Deny  []string `json:"deny,omitempty"`
	// Mode decides what no rule does; empty means ModeDefault. Claude
	// Code's names (acceptEdits, bypassPermissions) are accepted. In a
	// settings file it is "defaultMode".
	Mode Mode `json:"defaultMode,omitempty"`
	// Home is the directory ~/ rules are anchored at; it must be
	// absolute. Empty means the user's home directory. Settings files do
	// not set it.
	Home string `json:"-"`
}

// ParseSettings reads the permissions of a settings file such as
// .harness/settings.json: {"permissions": {"allow": [], "ask": [],
// "deny": [], "defaultMode": "default"}}. Other keys are ignored. Claude
// Code's mode names (acceptEdits, bypassPermissions) are accepted. A
// malformed file or rule is an error matching harness.CodeInvalidOption
// that says where.
func ParseSettings(data []byte) (Rules, error) {
	var doc struct {
		Permissions *struct {
			Allow []string `json:"allow"`
			Ask   []string `json:"ask"`
			Deny  []string `json:"deny"`
			Mode  string   `json:"defaultMode"`
		} `json:"permissions"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return Rules{}, invalid("the settings are not valid JSON: %v", err)
	}
	if doc.Permissions == nil {
		return Rules{}, nil
	}
	r := Rules{Allow: doc.Permissions.Allow, Ask: doc.Permissions.Ask, Deny: doc.Permissions.Deny}
	if doc.Permissions.Mode != "" {
		m, err := parseMode(doc.Permissions.Mode)
		if err != nil {
			return Rules{}, err
		}
		r.Mode = m
	}
	for _, list := range [][]string{r.Allow, r.Ask, r.Deny} {
		for _, s := range list {
			if _, err := parseRule(s); err != nil {
				return Rules{}, err
			}
		}
	}
	return r, nil
}

func invalid(format string, args ...any) error {
	return &harness.Error{Code: harness.CodeInvalidOption, Message: "permission: " + fmt.Sprintf(format, args...)}
}

// kind is the family of a tool for the rules.
type kind int

const (
	kindOther kind = iota
	kindRead
	kindEdit
	kindBash
	// kindShellControl is a shell tool that runs no new command
	// (shell_open, shell_read, shell_close, bash_output, bash_kill).
	kindShellControl
	// kindSkill is the skill tool: Skill(name) rules match the skill it
	// loads.
	kindSkill
	// kindWeb is a web fetch (web_fetch), matched by the host of its URL.
	kindWeb
)

// rule is one compiled rule.
type rule struct {
	raw string
	// kind is set for Read, Edit (Write) and Bash rules; name for the
	// others (a tool name, maybe with wildcards).
	kind kind
	name string
	// nameParts is name split at its wildcards (nil without any).
	nameParts []string
	// server is set for mcp__server, which names every tool of a server.
	server string
	// aliases are the names of this module's tools a Claude Code tool
	// name stands for (Grep is grep), beside the name itself.
	aliases []string
	// skill is the specifier of a Skill rule split at its wildcards.
	skill []string
	// anySpec: no specifier, or one that matches everything.
	anySpec bool
	path    pathPattern
	bash    bashPattern
	// web is the host pattern of a WebFetch(domain:...) rule.
	web webhost.Pattern
}

// bashPattern is the specifier of a Bash rule.
type bashPattern struct {
	// words is the command prefix (prefix) or the whole command.
	words  []string
	prefix bool
	// glob is set when the specifier has * elsewhere: matched against
	// the command's words joined by spaces; globParts is it split at
	// the wildcards.
	glob      string
	globParts []string
	// could are the patterns a command's words, joined by spaces with a
	// space before each, may match for the rule to match (see
	// couldMatch): the rule's words, then more words for a prefix, and
	// the same after a directory (/bin/rm is rm).
	could []pattern
}

func parseRule(s string) (*rule, error) {
	raw := s
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, invalid("an empty rule: write a tool name such as Read, or Bash(npm test:*)")
	}
	name, spec, hasSpec := s, "", false
	if i := strings.IndexByte(s, '('); i >= 0 {
		if !strings.HasSuffix(s, ")") {
			return nil, invalid("the rule %q opens a parenthesis it does not close", raw)
		}
		name, spec, hasSpec = s[:i], s[i+1:len(s)-1], true
	}
	r := &rule{raw: s}
	switch name {
	case "Read":
		r.kind = kindRead
	case "Edit", "Write", "MultiEdit":
		r.kind = kindEdit
	case "Bash":
		r.kind = kindBash
	case "Skill":
		r.kind = kindSkill
		if hasSpec && spec != "" && spec != "*" {
			if strings.ContainsAny(spec, " \t()") {
				return nil, invalid("the rule %q: a Skill rule names a skill, such as Skill(pdf) or Skill(pdf-*)", raw)
			}
			r.skill = strings.Split(spec, "*")
			return r, nil
		}
		r.anySpec = true
		return r, nil
	case "WebFetch":
		r.kind = kindWeb
	case "WebSearch":
		// Claude Code's name for the search tool: a name rule.
		if hasSpec {
			return nil, invalid("the rule %q: WebSearch takes no specifier", raw)
		}
		name = "web_search"
		fallthrough
	default:
		if hasSpec {
			return nil, invalid("the rule %q: only Read, Edit, Write, Bash, WebFetch and Skill take a specifier in parentheses", raw)
		}
		if name == "" || strings.ContainsAny(name, " \t()") {
			return nil, invalid("the rule %q is not a tool name", raw)
		}
		r.name = name
		r.aliases = claudeTools[name]
		if strings.Contains(name, "*") {
			r.nameParts = strings.Split(name, "*")
		}
		if strings.HasPrefix(name, "mcp__") && strings.Count(name, "__") == 1 {
			r.server = name + "__"
		}
		r.anySpec = true
		return r, nil
	}
	if !hasSpec || spec == "*" || spec == "" || spec == "**" || (r.kind == kindBash && spec == ":*") {
		r.anySpec = true
		return r, nil
	}
	if r.kind == kindBash {
		r.bash = compileBash(spec)
		return r, nil
	}
	if r.kind == kindWeb {
		host, ok := strings.CutPrefix(strings.TrimSpace(spec), "domain:")
		if !ok {
			return nil, invalid("the rule %q: WebFetch takes domain:host, as in WebFetch(domain:example.com) or WebFetch(domain:*.example.com)", raw)
		}
		pat, err := webhost.ParsePattern(host)
		if err != nil {
			return nil, invalid("the rule %q: %v", raw, err)
		}
		if pat.Any {
			r.anySpec = true
		}
		r.web = pat
		return r, nil
	}
	pp, err := compilePath(spec)
	if err != nil {
		return nil, invalid("the rule %q: %v", raw, err)
	}
	r.path = pp
	return r, nil
}

func compileBash(spec string) bashPattern {
	var bp bashPattern
	switch {
	case strings.HasSuffix(spec, ":*"):
		bp.prefix, spec = true, strings.TrimSuffix(spec, ":*")
	case strings.HasSuffix(spec, " *") && !strings.Contains(strings.TrimSuffix(spec, " *"), "*"):
		bp.prefix, spec = true, strings.TrimSuffix(spec, " *")
	case strings.Contains(spec, "*"):
		bp.glob = strings.Join(strings.Fields(spec), " ")
		bp.globParts = strings.Split(bp.glob, "*")
		var g pattern
		for i, part := range bp.globParts {
			if i > 0 {
				g = g.any()
			}
			g = g.lit(strings.ReplaceAll(part, " ", breakStr))
		}
		bp.could = []pattern{
			pattern(nil).lit(breakStr).append(g),
			append(pattern(nil).lit(breakStr), ptok{kind: tokWord}).lit("/").append(g),
		}
		return bp
	}
	bp.words = strings.Fields(spec)
	if len(bp.words) == 0 {
		bp.words = []string{""}
	}
	body := strings.Join(bp.words, breakStr)
	exact := pattern(nil).lit(breakStr + body)
	base := append(pattern(nil).lit(breakStr), ptok{kind: tokWord}).lit("/" + body)
	bp.could = []pattern{exact, base}
	if bp.prefix {
		bp.could = append(bp.could, pattern(nil).append(exact).lit(breakStr).any(), pattern(nil).append(base).lit(breakStr).any())
	}
	return bp
}

// breakStr is wordBreak as a string.
const breakStr = "\x00"

// matchName matches a tool name against a name rule: * is a wildcard,
// and mcp__server alone names every tool of that server.
func (r *rule) matchName(name string) bool {
	if r.name == name || (r.nameParts != nil && wildcard(r.nameParts, name)) {
		return true
	}
	for _, a := range r.aliases {
		if a == name {
			return true
		}
	}
	return r.server != "" && strings.HasPrefix(name, r.server)
}

// wildcard matches s against a pattern split at its * wildcards, each
// of which matches any run of bytes.
func wildcard(parts []string, s string) bool {
	if len(parts) == 1 {
		return parts[0] == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return strings.HasSuffix(s, last) && len(s) >= len(last)
}
