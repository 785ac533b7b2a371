package agent

import (
	"encoding/json"
	"fmt"
	"github.com/go-harness/harness/internal/assemble"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/compact"
	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/session"
)

// ContextPolicy says when a turn makes room in the model's context window,
// and how many images one request carries.
// Before each model call the loop estimates the request's size in tokens
// (a byte count scaled by the ratio the provider's last reported usage
// showed). Above PruneAt of the window it first prunes, without a model
// call: earlier file reads that a later read of the same lines at the same
// version covers, or that a later change made stale, are replaced by
// one-line placeholders. If the estimate is still above CompactAt, the
// older part of the history is summarized by the model and the most recent
// KeepRecent of the window is kept verbatim. Both are logged; the log keeps
// the originals. A provider's context-window-exceeded error triggers both,
// regardless of the thresholds, and one more attempt.
type ContextPolicy struct {
	// PruneAt is the share of the context window above which superseded
	// reads are pruned. Zero means the default, 0.5.
	PruneAt float64
	// CompactAt is the share above which the history is compacted after
	// pruning. Zero means the default, 0.8.
	CompactAt float64
	// KeepRecent is the share of the context window that compaction keeps
	// verbatim. Zero means the default, 0.25.
	KeepRecent float64
	// Disabled turns pruning and compaction off, also on overflow.
	Disabled bool

	// MaxImages and MaxImageBytes bound the images one request carries:
	// at most MaxImages images of at most MaxImageBytes bytes in all
	// (stored sizes, before any transport encoding). Older images beyond
	// the budget reach the model as short placeholders naming the
	// attachment, the newest kept first; the log keeps every image
	// reference. Zero means the default, 20 images and 20 MiB, which stays
	// well inside common request-body limits once base64-encoded.
	// Disabled does not lift this bound.
	MaxImages     int
	MaxImageBytes int64
}

// WithContextPolicy sets the context policy. Models that report no
// context window are never pruned or compacted ahead of time, only after
// the provider reports an overflow. A negative or NaN share, or a
// negative image budget, is an error of New.
func WithContextPolicy(p ContextPolicy) Option { return func(c *config) { c.context = p } }

func (p ContextPolicy) validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"PruneAt", p.PruneAt}, {"CompactAt", p.CompactAt}, {"KeepRecent", p.KeepRecent}} {
		if !(f.v >= 0) { // also refuses NaN
			return optionError("WithContextPolicy: ContextPolicy.%s is %v; a share must not be negative (zero means the default)", f.name, f.v)
		}
	}
	if p.MaxImages < 0 || p.MaxImageBytes < 0 {
		return optionError("WithContextPolicy: ContextPolicy.MaxImages is %d and MaxImageBytes %d; the image budget must not be negative (zero means the default)", p.MaxImages, p.MaxImageBytes)
	}
	return nil
}

func (p ContextPolicy) withDefaults() ContextPolicy {
	if p.PruneAt <= 0 {
		p.PruneAt = 0.5
	}
	if p.CompactAt <= 0 {
		p.CompactAt = 0.8
	}
	if p.KeepRecent <= 0 {
		p.KeepRecent = 0.25
	}
	return p
}

// ContextPruned says earlier tool results were replaced by placeholders.
type ContextPruned struct {
	Step            int      `json:"step"`
	Calls           []string `json:"calls"`
	EstimatedTokens int64    `json:"estimated_tokens"`
}

// ContextCompacted says older history was replaced by a summary.
type ContextCompacted struct {
	Step          int   `json:"step"`
	Messages      int   `json:"messages"`
	SourceTokens  int64 `json:"source_tokens"`
	SummaryTokens int64 `json:"summary_tokens"`
}

func (*ContextPruned) kind() string    { return "context_pruned" }
func (*ContextCompacted) kind() string { return "context_compacted" }

// estimator turns request bytes into tokens, calibrated on the provider's
// reported usage.
type estimator struct {
	perByte float64
}

// defaultTokensPerByte fits English prose and code for common tokenizers
// (about 3.5 bytes per token).
const defaultTokensPerByte = 0.28

func (e *estimator) tokens(bytes int64) int64 {
	r := e.perByte
	if r == 0 {
		r = defaultTokensPerByte
	}
	return int64(float64(bytes)*r + 0.5)
}

// calibrate learns the ratio from a request of reqBytes that the provider
// counted as inputTokens.
func (e *estimator) calibrate(inputTokens, reqBytes int64) {
	if inputTokens <= 0 || reqBytes < 1024 {
		return
	}
	r := float64(inputTokens) / float64(reqBytes)
	if r < 0.05 || r > 2 { // implausible: keep the previous ratio
		return
	}
	e.perByte = r
}

// requestBytes is the size of req as the estimator counts it.
func (t *turn) requestBytes(req *model.Request) int64 {
	c := &t.s.chain
	c.fingerprint(req)
	return int64(len(req.System)) + c.toolBytes + c.historyBytes()
}

func (t *turn) estimate(req *model.Request) int64 { return t.s.est.tokens(t.requestBytes(req)) }

// relieve prunes and compacts the history when the request is too large
// for the context window (or always, when force is set), and returns the
// request to send.
func (t *turn) relieve(step int, req *model.Request, force bool) *model.Request {
	p := t.l.cfg.context.withDefaults()
	if p.Disabled {
		return req
	}
	window := int64(t.model.Info().ContextWindow)
	if window <= 0 && !force {
		return req
	}
	est := t.estimate(req)
	t.s.logger.Debug("context estimate", "step", step, "tokens", est, "window", window, "messages", len(req.Messages))
	if force || float64(est) > p.PruneAt*float64(window) {
		if calls := t.s.superseded(); len(calls) > 0 {
			if err := t.s.append(t.ctx, &session.Pruned{Calls: calls, EstimatedTokens: est}); err != nil {
				t.s.logger.Error("logging a pruning failed", "error", err)
				return req
			}
			ids := make([]string, len(calls))
			for i, c := range calls {
				ids[i] = c.CallID
			}
			t.s.logger.Info("pruned superseded tool results", "step", step, "calls", len(calls), "estimated_tokens", est)
			req = t.request()
			t.emit(&ContextPruned{Step: step, Calls: ids, EstimatedTokens: est})
			est = t.estimate(req)
		}
	}
	if force || float64(est) > p.CompactAt*float64(window) {
		keep := int64(p.KeepRecent * float64(window))
		if window <= 0 {
			keep = est / 4
		}
		if t.compact(step, req, keep) {
			req = t.request()
		}
	}
	return req
}

// superseded returns the tool results pruning may replace.
func (s *Session) superseded() []session.PrunedCall {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.hist.Superseded()
}

// compact summarizes the older part of req's history, keeping about keep
// tokens of recent history verbatim. It reports whether it logged a
// compaction.
func (t *turn) compact(step int, req *model.Request, keep int64) bool {
	msgs := req.Messages
	size := func(m harness.Message) int64 {
		b, _ := json.Marshal(m)
		return t.s.est.tokens(int64(len(b)))
	}
	split := compact.Split(msgs, keep, size)
	if split == 0 {
		return false
	}
	var source int64
	for _, m := range msgs[:split] {
		source += size(m)
	}
	summary, usage, err := t.summarize(step, msgs[:split])
	if err != nil {
		t.s.logger.Warn("compaction failed; the history is kept as it is", "step", step, "error", err)
		return false
	}
	sumTokens := t.s.est.tokens(int64(len(compact.SummaryText(summary))))
	if summary == "" || sumTokens >= source {
		t.s.logger.Warn("compaction refused: the summary is not smaller than what it replaces",
			"step", step, "source_tokens", source, "summary_tokens", sumTokens)
		return false
	}
	c := &session.Compacted{Messages: split, Summary: summary, Model: t.model.Info().Name, SourceTokens: source, SummaryTokens: sumTokens, Usage: usage}
	if err := t.s.append(t.ctx, c); err != nil {
		t.s.logger.Error("logging a compaction failed", "error", err)
		return false
	}
	t.emit(&ContextCompacted{Step: step, Messages: split, SourceTokens: source, SummaryTokens: sumTokens})
	return true
}

const compactionSystem = `You compress the history of a coding agent's session so the agent can continue from your summary alone. Write only the summary, in these sections:
## Goal — what the user asked for, with their constraints.
## Done — what has been done and verified, with file paths.
## State — files changed and how; commands that matter and their outcomes; errors still open.
## Decisions — choices made and why.
## Next — the next concrete steps.
Keep exact names, paths, identifiers and error messages. Be brief: a few hundred words at most.`

// summarize asks the model for a summary of msgs. It returns the call's
// usage too, when the model reported one, for the log.
func (t *turn) summarize(step int, msgs []harness.Message) (string, *harness.Usage, error) {
	req := &model.Request{
		System:   compactionSystem,
		Messages: []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock(renderTranscript(msgs))}}},
	}
	asm := &assemble.Assembler{}
	for c, err := range t.model.Stream(t.ctx, req) {
		if err != nil {
			return "", nil, err
		}
		asm.Add(c)
	}
	if err := t.ctx.Err(); err != nil {
		return "", nil, err
	}
	var usage *harness.Usage
	if u, ok := asm.Usage(); ok {
		t.usage.Add(u)
		usage = &u
		name := t.model.Info().Name
		t.emit(&ModelUsage{Step: step, Model: name, Usage: u, Cost: t.price(name, u)})
	}
	return strings.TrimSpace(asm.Message().Text()), usage, nil
}

// renderTranscript writes messages as plain text for summarization, with
// long tool results cut to their head and tail. A block without its
// payload (a damaged or hand-edited log) is named, never dereferenced.
func renderTranscript(msgs []harness.Message) string {
	const resultHead, resultTail = 3000, 1000
	var b strings.Builder
	b.WriteString("Summarize this conversation between a user and a coding agent:\n\n")
	for _, m := range msgs {
		role := strings.ToUpper(string(m.Role))
		for _, blk := range m.Content {
			switch blk.Type {
			case harness.BlockText:
				fmt.Fprintf(&b, "%s: %s\n\n", role, blk.Text)
			case harness.BlockToolCall:
				if blk.ToolCall == nil {
					fmt.Fprintf(&b, "%s called a tool (the call is missing from the log)\n\n", role)
					continue
				}
				fmt.Fprintf(&b, "ASSISTANT called %s %s\n\n", blk.ToolCall.Name, textcut.Prefix(blk.ToolCall.Arguments, 2000))
			case harness.BlockToolResult:
				r := blk.ToolResult
				if r == nil {
					b.WriteString("RESULT of a tool call (the result is missing from the log)\n\n")
					continue
				}
				var text strings.Builder
				for _, c := range r.Content {
					if c.Type == harness.BlockImage {
						text.WriteString(imageName(c.Image))
						continue
					}
					text.WriteString(c.Text)
				}
				s := text.String()
				if len(s) > resultHead+resultTail {
					s = textcut.HeadLines(s, resultHead) + fmt.Sprintf("\n[... %d bytes omitted ...]\n", len(s)-resultHead-resultTail) + textcut.TailLines(s, resultTail)
				}
				status := ""
				if r.IsError {
					status = " (error " + string(r.Code) + ")"
				}
				fmt.Fprintf(&b, "RESULT of %s%s:\n%s\n\n", r.Name, status, s)
			case harness.BlockImage:
				fmt.Fprintf(&b, "%s: %s\n\n", role, imageName(blk.Image))
			}
		}
	}
	return b.String()
}

// imageName names an image in a transcript; nil is an image whose
// reference is missing from the log.
func imageName(img *harness.Image) string {
	if img == nil {
		return "[image missing from the log]"
	}
	return "[image " + img.Name + "]"
}
