package sessiontools

import (
	"context"
	"encoding/json"
	"path"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/search"
	"github.com/go-harness/harness/tools"
)

// The path policy (fs.PolicyOf the session's file system) reaches into
// earlier sessions too: their logs hold what files showed then. Under a
// policy, a session whose working directory it hides is not there for
// either tool, and an event that shows a file it hides is withheld: a
// tool result whose file accesses or locations name such a path, the call
// that asked for it, and a call whose path argument names one (a write's
// content, say). What a shell command printed is not tied to a path and
// is not withheld: the sandbox (package tools/shell) keeps such files
// from commands in the first place.

// policyOf returns the path policy the call's file system obeys, or nil.
func policyOf(call *tools.Call) fs.PathPolicy {
	if call.Env == nil || call.Env.FS == nil {
		return nil
	}
	return fs.PolicyOf(call.Env.FS)
}

// hides reports whether pol hides p from a search, where nobody can be
// asked.
func hides(ctx context.Context, pol fs.PathPolicy, p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	return pol.CheckPath(ctx, path.Clean(p), fs.AccessRead|fs.AccessListed, fs.FileID{}) != nil
}

// hiddenSession reports whether pol hides a whole session: its working
// directory.
func hiddenSession(ctx context.Context, pol fs.PathPolicy, h session.Header) bool {
	return pol != nil && hides(ctx, pol, h.Cwd)
}

// pathArgs are the arguments of the built-in tools that name a path.
var pathArgs = []string{"file_path", "path"}

// withheldEvents returns the sequence numbers of the events of tr that
// show a path pol hides.
func withheldEvents(ctx context.Context, pol fs.PathPolicy, tr *session.Transcript) map[int64]bool {
	out := map[int64]bool{}
	if pol == nil {
		return out
	}
	cwd := tr.Header.Cwd
	calls := map[string]bool{} // call ids whose path is hidden
	callSeq := map[string]int64{}
	for _, e := range tr.Events {
		switch p := e.Data.(type) {
		case *session.AssistantMessage:
			for _, b := range p.Content {
				if b.Type != harness.BlockToolCall || b.ToolCall == nil {
					continue
				}
				callSeq[b.ToolCall.ID] = e.Seq
				if argHides(ctx, pol, cwd, b.ToolCall.Arguments) {
					calls[b.ToolCall.ID] = true
					out[e.Seq] = true
				}
			}
		case *session.ToolFinished:
			if calls[p.CallID] || resultHides(ctx, pol, &p.Result) {
				out[e.Seq] = true
				if s, ok := callSeq[p.CallID]; ok {
					out[s] = true
				}
			}
		}
	}
	return out
}

func argHides(ctx context.Context, pol fs.PathPolicy, cwd, raw string) bool {
	var args map[string]any
	if json.Unmarshal([]byte(raw), &args) != nil {
		return false
	}
	for _, k := range pathArgs {
		v, _ := args[k].(string)
		if v == "" || strings.HasPrefix(v, tools.OutputScheme) {
			continue
		}
		if !strings.HasPrefix(v, "/") {
			if cwd == "" {
				continue
			}
			v = path.Join(cwd, v)
		}
		if hides(ctx, pol, v) {
			return true
		}
	}
	return false
}

func resultHides(ctx context.Context, pol fs.PathPolicy, r *harness.ToolResult) bool {
	for _, f := range r.Files {
		if hides(ctx, pol, f.Path) {
			return true
		}
	}
	if r.Render != nil {
		for _, l := range r.Render.Locations {
			if hides(ctx, pol, l.Path) {
				return true
			}
		}
		if r.Render.Diff != nil && hides(ctx, pol, r.Render.Diff.Path) {
			return true
		}
	}
	return false
}

// withheldText stands for an event's content in session_read.
const withheldText = "[withheld: it shows a file the path rules hide]"

// filterMatches leaves out the matches pol hides: every match of a
// session whose working directory it hides, and matches in withheld
// events. A session that cannot be loaded to check keeps no match.
func filterMatches(ctx context.Context, store session.Store, pol fs.PathPolicy, ms []search.Match) []search.Match {
	type verdict struct {
		hidden   bool
		withheld map[int64]bool
	}
	seen := map[string]*verdict{}
	out := ms[:0]
	for _, m := range ms {
		id := m.Session.Header.ID
		v := seen[id]
		if v == nil {
			v = &verdict{hidden: true}
			if tr, err := store.Load(ctx, id); err == nil && !hiddenSession(ctx, pol, tr.Header) {
				v = &verdict{withheld: withheldEvents(ctx, pol, tr)}
			}
			seen[id] = v
		}
		if !v.hidden && !v.withheld[m.Seq] {
			out = append(out, m)
		}
	}
	return out
}
