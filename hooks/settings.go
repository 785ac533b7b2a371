package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/configfile"
)

// Event names a point where hooks run, as Claude Code's settings name
// it.
type Event string

// The events.
const (
	PreToolUse         Event = "PreToolUse"
	PostToolUse        Event = "PostToolUse"
	PostToolUseFailure Event = "PostToolUseFailure"
	UserPromptSubmit   Event = "UserPromptSubmit"
	Stop               Event = "Stop"
	SubagentStart      Event = "SubagentStart"
	SubagentStop       Event = "SubagentStop"
	SessionStart       Event = "SessionStart"
	SessionEnd         Event = "SessionEnd"
	PreCompact         Event = "PreCompact"
	Notification       Event = "Notification"
	PermissionRequest  Event = "PermissionRequest"
)

// Events returns every event this package runs hooks for, in the order
// Claude Code documents them; the slice is the caller's.
func Events() []Event {
	return []Event{PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop, SubagentStart, SubagentStop,
		SessionStart, SessionEnd, PreCompact, Notification, PermissionRequest}
}

// DefaultTimeout is how long a hook runs when its settings give no
// timeout: 60 seconds, as in Claude Code.
const DefaultTimeout = 60 * time.Second

// Settings are the hooks of one or more settings files.
type Settings struct {
	// Hooks maps an event to its matcher groups, in file order.
	Hooks map[Event][]Group
	// Disabled is set when a file says "disableAllHooks": true.
	Disabled bool
	// Warnings say what was skipped: events this package does not run,
	// hook types other than command, matchers that are not valid
	// regular expressions (then matched as plain names).
	Warnings []string
}

// Group is a matcher and the hooks that run when it matches.
type Group struct {
	// Matcher selects what the group runs for: a tool name (Bash,
	// Edit|Write, mcp__github__.*) for the tool events, the source,
	// trigger, notification type or agent type for the others; empty or
	// "*" matches everything. It is a regular expression matched against
	// the whole name.
	Matcher string
	Hooks   []Command

	re *regexp.Regexp
}

// Command is one command hook.
type Command struct {
	// Command is the command line, run with bash -c.
	Command string
	// Timeout is how long it may run; zero means the runner's default.
	Timeout time.Duration
	// Source names the settings file it came from.
	Source string
}

// match reports whether the group runs for name (any of names, for a
// tool known by two names).
func (g *Group) match(names ...string) bool {
	if g.Matcher == "" || g.Matcher == "*" {
		return true
	}
	for _, n := range names {
		if n == "" {
			continue
		}
		if g.re != nil && g.re.MatchString(n) || g.re == nil && g.Matcher == n {
			return true
		}
	}
	return false
}

// ParseSettings reads the hooks of a settings file in Claude Code's
// format: {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks":
// [{"type": "command", "command": "...", "timeout": 30}]}]}}. Other keys
// of the file are ignored. source names the file in errors and in each
// Command. Malformed JSON, or hooks that do not have this shape, are
// an error matching harness.CodeInvalidOption that says where.
func ParseSettings(data []byte, source string) (Settings, error) {
	var doc struct {
		Hooks           json.RawMessage `json:"hooks"`
		DisableAllHooks bool            `json:"disableAllHooks"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return Settings{}, invalid(source, "%v", configfile.DescribeJSON(data, err))
	}
	s := Settings{Hooks: map[Event][]Group{}, Disabled: doc.DisableAllHooks}
	if len(bytes.TrimSpace(doc.Hooks)) == 0 || string(bytes.TrimSpace(doc.Hooks)) == "null" {
		return s, nil
	}
	var events map[string]json.RawMessage
	if err := json.Unmarshal(doc.Hooks, &events); err != nil {
		return Settings{}, invalid(source, "\"hooks\" must be an object of events: %v", err)
	}
	names := make([]string, 0, len(events))
	for name := range events {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		ev := Event(name)
		known := false
		for _, e := range Events() {
			known = known || e == ev
		}
		var groups []struct {
			Matcher *string `json:"matcher"`
			Hooks   []struct {
				Type    string   `json:"type"`
				Command string   `json:"command"`
				Timeout *float64 `json:"timeout"`
			} `json:"hooks"`
		}
		if err := json.Unmarshal(events[name], &groups); err != nil {
			return Settings{}, invalid(source, "hooks.%s must be a list of {\"matcher\": ..., \"hooks\": [...]}: %v", name, err)
		}
		if !known {
			s.Warnings = append(s.Warnings, fmt.Sprintf("%s: hooks.%s is not an event this harness runs hooks for; skipped", source, name))
			continue
		}
		for i, g := range groups {
			grp := Group{}
			if g.Matcher != nil {
				grp.Matcher = strings.TrimSpace(*g.Matcher)
			}
			if grp.Matcher != "" && grp.Matcher != "*" {
				re, err := regexp.Compile(`^(?:` + grp.Matcher + `)$`)
				if err != nil {
					s.Warnings = append(s.Warnings, fmt.Sprintf("%s: hooks.%s[%d]: the matcher %q is not a valid regular expression (%v); it matches that name only", source, name, i, grp.Matcher, err))
				} else {
					grp.re = re
				}
			}
			for j, h := range g.Hooks {
				switch {
				case h.Type != "command" && h.Type != "":
					s.Warnings = append(s.Warnings, fmt.Sprintf("%s: hooks.%s[%d].hooks[%d] is of type %q; only command hooks run here, so it is skipped", source, name, i, j, h.Type))
					continue
				case strings.TrimSpace(h.Command) == "":
					return Settings{}, invalid(source, "hooks.%s[%d].hooks[%d] has no command", name, i, j)
				}
				c := Command{Command: h.Command, Source: source}
				if h.Timeout != nil {
					if *h.Timeout <= 0 || math.IsNaN(*h.Timeout) || math.IsInf(*h.Timeout, 0) {
						return Settings{}, invalid(source, "hooks.%s[%d].hooks[%d] has a timeout of %v; it must be a positive number of seconds", name, i, j, *h.Timeout)
					}
					c.Timeout = time.Duration(min(*h.Timeout, 24*3600) * float64(time.Second))
				}
				grp.Hooks = append(grp.Hooks, c)
			}
			if len(grp.Hooks) > 0 {
				s.Hooks[ev] = append(s.Hooks[ev], grp)
			}
		}
	}
	return s, nil
}

// Merge returns the hooks of s then those of more, as if in one file.
func (s Settings) Merge(more Settings) Settings {
	out := Settings{Hooks: map[Event][]Group{}, Disabled: s.Disabled || more.Disabled, Warnings: append(append([]string(nil), s.Warnings...), more.Warnings...)}
	for _, src := range []Settings{s, more} {
		for ev, gs := range src.Hooks {
			out.Hooks[ev] = append(out.Hooks[ev], gs...)
		}
	}
	return out
}

// ReadSettings reads the hooks of the settings files at paths (OS
// paths), in order, merged; a file that does not exist is skipped.
// Files are read as configuration is (regular files of at most 1 MiB).
func ReadSettings(paths ...string) (Settings, error) {
	out := Settings{Hooks: map[Event][]Group{}}
	for _, p := range paths {
		data, err := configfile.Read(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return Settings{}, err
		}
		s, err := ParseSettings(data, p)
		if err != nil {
			return Settings{}, err
		}
		out = out.Merge(s)
	}
	return out, nil
}

func invalid(source, format string, args ...any) error {
	return &harness.Error{Code: harness.CodeInvalidOption, Message: "hooks: " + source + ": " + fmt.Sprintf(format, args...)}
}
