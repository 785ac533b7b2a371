package session

import (
	"fmt"
	"slices"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/compact"
)

// Pruned replaces earlier tool results in the derived history with
// one-line placeholders. The log keeps the originals; only the history
// sent to the model shrinks.
type Pruned struct {
	Calls []PrunedCall `json:"calls"`
	// EstimatedTokens is the request estimate that triggered the pruning.
	EstimatedTokens int64 `json:"estimated_tokens,omitempty"`
}

// PrunedCall is one pruned result.
type PrunedCall struct {
	CallID string `json:"call_id"`
	// Seq is the sequence number of the pruned tool_result event, which
	// names the result even where a call id was used twice. It is 0 in
	// logs written before it was recorded; such a pruning applies to the
	// result with CallID that a later result supersedes.
	Seq int64 `json:"seq,omitempty"`
	// Placeholder is the text the model sees instead of the result.
	Placeholder string `json:"placeholder"`
}

// Compacted replaces the first Messages messages of the derived history
// with a summary written by the model.
type Compacted struct {
	Messages int    `json:"messages"`
	Summary  string `json:"summary"`
	Model    string `json:"model,omitempty"`
	// SourceTokens and SummaryTokens are the estimates of what was
	// replaced and of its replacement.
	SourceTokens  int64 `json:"source_tokens,omitempty"`
	SummaryTokens int64 `json:"summary_tokens,omitempty"`
	// Usage is what the summarizing model call spent, when the model
	// reported it; it counts in the session's usage and cost. Logs
	// written before it was recorded have none.
	Usage *harness.Usage `json:"usage,omitempty"`
}

func (*Pruned) eventType() string    { return typePrune }
func (*Compacted) eventType() string { return typeCompaction }

// resultFiles is a tool result that read or wrote files.
type resultFiles struct {
	index int   // of the result message in History.msgs
	seq   int64 // of the tool_result event
	// callID and tool name the call; the id alone may be shared with a
	// call of another step in logs of providers that reuse ids.
	callID string
	tool   string
	files  []harness.FileAccess
	pruned bool
}

// Superseded returns the tool results of the history that a later result
// provably supersedes, with the placeholder for each, oldest first. An
// earlier read of a file is superseded when a later read of the same path
// at the same version covers its whole window, or when a later call
// changed the file. A result is pruned only when every file it read is
// superseded and it changed none; results already pruned are skipped, so
// the decision is idempotent. No tool name is special: only the file
// access records results carry count.
func (h *History) Superseded() []PrunedCall {
	var out []PrunedCall
	for i, r := range h.files {
		if r.pruned {
			continue
		}
		if reasons, ok := h.supersession(i); ok {
			out = append(out, PrunedCall{CallID: r.callID, Seq: r.seq, Placeholder: placeholder(r, reasons)})
		}
	}
	return out
}

// supersession says why later results make result i redundant, and
// whether they do: every file it read is superseded and it changed none.
func (h *History) supersession(i int) ([]string, bool) {
	r := h.files[i]
	if len(r.files) == 0 {
		return nil, false
	}
	var reasons []string
	for _, f := range r.files {
		if f.Op != harness.FileRead {
			return nil, false
		}
		reason := h.supersededBy(i, f)
		if reason == "" {
			return nil, false
		}
		reasons = append(reasons, reason)
	}
	return reasons, true
}

// supersededBy says why a later result makes read f of result i
// redundant, or "" when none does.
func (h *History) supersededBy(i int, f harness.FileAccess) string {
	r := h.files[i]
	for _, later := range h.files[i+1:] {
		call := "call " + later.callID
		if later.callID == r.callID {
			call = "a later call also named " + later.callID
		}
		for _, g := range later.files {
			if g.Path != f.Path {
				continue
			}
			if g.Op == harness.FileWrite {
				return fmt.Sprintf("made stale when %s changed the file (%s)", later.tool, call)
			}
			if g.Op == harness.FileRead && f.Version != "" && g.Version == f.Version && covers(g, f) {
				return fmt.Sprintf("superseded by a later %s of the same lines (%s)", later.tool, call)
			}
		}
	}
	return ""
}

// covers reports whether read g shows at least every line read f showed.
func covers(g, f harness.FileAccess) bool {
	if g.Complete {
		return true
	}
	if f.Complete || f.StartLine <= 0 || g.StartLine <= 0 {
		return false
	}
	return g.StartLine <= f.StartLine && g.EndLine >= f.EndLine
}

func placeholder(r resultFiles, reasons []string) string {
	var what []string
	for _, f := range r.files {
		w := f.Path
		if f.StartLine > 0 && !f.Complete {
			w += fmt.Sprintf(" lines %d-%d", f.StartLine, f.EndLine)
		}
		what = append(what, w)
	}
	return fmt.Sprintf("[pruned: the %s result for %s was %s; the session log keeps the original]",
		r.tool, strings.Join(what, ", "), strings.Join(uniq(reasons), "; "))
}

func uniq(ss []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// applyPruned replaces the results a pruning names by their
// placeholders. A call named by its result's seq is exact. A call named
// by its id alone (logs written before seqs were recorded) is ambiguous
// when a provider used the id in more than one step: then only those of
// its results are pruned that a later result supersedes, never the
// newest.
func (h *History) applyPruned(p *Pruned) {
	for _, c := range p.Calls {
		var candidates []int
		for i, r := range h.files {
			if r.pruned || r.callID != c.CallID || (c.Seq != 0 && r.seq != c.Seq) {
				continue
			}
			candidates = append(candidates, i)
		}
		if c.Seq == 0 && len(candidates) > 1 {
			candidates = slices.DeleteFunc(candidates, func(i int) bool {
				_, ok := h.supersession(i)
				return !ok
			})
		}
		for _, i := range candidates {
			h.prune(i, c.Placeholder)
		}
	}
}

// prune replaces result i by a placeholder.
func (h *History) prune(i int, placeholder string) {
	r := &h.files[i]
	r.pruned = true
	if r.index >= len(h.msgs) {
		return
	}
	h.own()
	old := h.msgs[r.index].Content[0].ToolResult
	h.msgs[r.index].Content = []harness.Block{{Type: harness.BlockToolResult, ToolResult: &harness.ToolResult{
		CallID: old.CallID, Name: old.Name, Content: []harness.Block{harness.TextBlock(placeholder)},
	}}}
}

func (h *History) applyCompacted(c *Compacted) {
	if c.Usage != nil {
		h.usage.Add(*c.Usage)
		h.turnUsage.Add(*c.Usage)
	}
	n := c.Messages
	if n <= 0 || n > len(h.msgs) {
		return
	}
	msgs := make([]harness.Message, 0, len(h.msgs)-n+1)
	msgs = append(msgs, harness.Message{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock(compact.SummaryText(c.Summary))}})
	msgs = append(msgs, h.msgs[n:]...)
	h.msgs = msgs
	shift := n - 1
	files := h.files[:0]
	for _, r := range h.files {
		if r.index >= n {
			r.index -= shift
			files = append(files, r)
		}
	}
	h.files = files
	h.compactContext(n)
	for _, s := range h.order {
		s.index -= shift
	}
}
