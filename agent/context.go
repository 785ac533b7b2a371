package agent

import (
	"fmt"
	"math"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/compact"
	"github.com/go-harness/harness/pricing"
	"github.com/go-harness/harness/session"
)

// ContextPolicy says when a turn makes room in the model's context
// window, and how many images one request carries.
//
// Before each model call the loop estimates the request's size in tokens
// (a byte count scaled by the ratio the provider's last reported usage
// showed). Room is made in two ways. Pruning, without a model call,
// replaces earlier file reads that a later read of the same lines at the
// same version covers, or that a later change made stale, by one-line
// placeholders. Compaction has the model summarize the older part of the
// history and keeps the most recent part verbatim. Both are logged; the
// log keeps the originals. A provider's context-window-exceeded error
// triggers both, whatever the strategy but ContextOff, and one more
// attempt.
//
// Either way the early bytes of the history change, and a provider's
// prefix cache misses from the change on: the next request pays the
// uncached price for everything after the cut (on DeepSeek, fifty times
// the cached price). Strategy says how the loop weighs that; the default,
// [ContextCost], decides in money with the model's prices. See
// [ContextStrategy].
//
// The summarizing request is the older part of the conversation, as the
// model saw it, followed by the instruction to summarize it: a prefix of
// requests already sent, so its prompt is read from the provider's
// cache. When even that does not fit the window, the older part is sent
// as a transcript under a summarizer's system prompt instead.
type ContextPolicy struct {
	// Strategy is how the loop decides to make room; the zero value is
	// ContextCost.
	Strategy ContextStrategy
	// Price is what ContextCost decides with: the model's prices per
	// million tokens (cache misses, cache hits, output). Nil means the
	// price the loop's table (WithPrices) has for the model; without
	// either, ContextCost decides as ContextThresholds.
	Price *pricing.Price

	// PruneAt is the share of the context window above which superseded
	// reads are pruned. Under ContextThresholds zero means the default,
	// 0.5. Under ContextCost zero means no such threshold: pruning is
	// done when it pays; a share set here prunes every superseded read
	// above it as well.
	PruneAt float64
	// CompactAt is the share above which the history is compacted after
	// pruning. Under ContextThresholds zero means the default, 0.8. Under
	// ContextCost it is where a cut is forced, zero meaning 0.95; the
	// cost rule may compact earlier.
	CompactAt float64
	// KeepRecent is the share of the context window that compaction keeps
	// verbatim. Zero means the default: 0.25 under ContextThresholds; under
	// ContextCost 0.1 of the window, and at most 16,000 tokens.
	KeepRecent float64
	// Disabled turns pruning and compaction off, also on overflow, as
	// Strategy ContextOff does.
	Disabled bool

	// MaxImages and MaxImageBytes bound the images one request carries:
	// at most MaxImages images of at most MaxImageBytes bytes in all
	// (stored sizes, before any transport encoding). Older images beyond
	// the budget reach the model as short placeholders naming the
	// attachment, the newest kept first; the log keeps every image
	// reference. Past MaxImages the oldest leave in steps of a quarter of
	// it, so that a new image changes the early history, which a prefix
	// cache then misses, once every few images rather than every time.
	// Zero means the default, 20 images and 20 MiB, which stays well
	// inside common request-body limits once base64-encoded. Disabled
	// does not lift this bound.
	MaxImages     int
	MaxImageBytes int64
}

// ContextStrategy is how a ContextPolicy decides to prune and compact.
type ContextStrategy int

const (
	// ContextCost, the default, decides in money. With per-token prices
	// m for a cache miss, h for a hit and o for output, pruning X tokens
	// at position p of a request whose first L tokens the provider's
	// cache holds (the previous request's) costs (m − h)(L − p − X) once,
	// as those cached tokens after the cut miss the cache on the next
	// request, and saves hX on each request to come. It is done when hX·N
	// is larger, N being the requests still to come, counted no further
	// than the next compaction, which would remove those tokens anyway. A
	// read the last step superseded is so pruned at once, for free: only
	// new tokens follow it. Compaction is weighed the same way, its cost
	// being the kept part and the summary sent uncached, and the
	// summarizing call. Done early, it is done only once the history has
	// also grown to the size at which compacting again and again costs
	// least per step: √(2Cd/h) tokens above what a compaction leaves, for
	// a compaction costing C and a history growing by d tokens a step (the
	// square-root rule of restocking). So it neither breaks the cache for
	// a small saving nor compacts again and again for a little each time.
	//
	// N is estimated from the steps the session has made so far, s. A
	// session seen at step s runs, at the median, s more (the Lindy rule:
	// more than r with probability s/(s+r)); the policy counts on s/2,
	// which comes two times in three, at least 4 and at most 64 requests,
	// and for a sub-agent, whose session ends with its one turn, no more
	// than the steps its limit leaves. d is the session's average growth
	// per step.
	//
	// Otherwise it waits until the window forces a cut: when the request
	// is above CompactAt (0.95 of the window by default), it compacts,
	// keeping KeepRecent verbatim and pruning what is superseded in that
	// kept part at the same time (which costs nothing more: the kept part
	// is sent uncached anyway), unless pruning alone makes more room for
	// its price. A compaction leaves the window mostly empty, so the next
	// forced cut is far away.
	//
	// At DeepSeek's prices and a few thousand tokens of growth a step,
	// the restocking size is near 100,000 tokens whatever the window: on
	// a 1M window the default compacts long before the window fills. A
	// host that would rather keep more history verbatim sets
	// ContextThresholds.
	//
	// Without a price for the model, or where a cache hit costs at least
	// half a miss, it decides as ContextThresholds. PruneAt, CompactAt
	// and KeepRecent, when set, mean what they say (see their fields);
	// the cost rule may still cut below them.
	ContextCost ContextStrategy = iota
	// ContextThresholds prunes whenever the request is above PruneAt of
	// the window and something is superseded, and compacts above
	// CompactAt, whatever the cache it breaks costs.
	ContextThresholds
	// ContextOff never prunes or compacts, also on overflow (as
	// Disabled).
	ContextOff
)

// String returns the strategy's name: cost, thresholds or off.
func (s ContextStrategy) String() string {
	switch s {
	case ContextCost:
		return "cost"
	case ContextThresholds:
		return "thresholds"
	case ContextOff:
		return "off"
	}
	return fmt.Sprintf("ContextStrategy(%d)", int(s))
}

// WithContextPolicy sets the context policy. Models that report no
// context window are never pruned or compacted ahead of time, only after
// the provider reports an overflow. A negative or NaN share, an unknown
// strategy, a negative or non-finite price, or a negative image budget,
// is an error of New.
func WithContextPolicy(p ContextPolicy) Option { return func(c *config) { c.context = p } }

func (p ContextPolicy) validate() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"PruneAt", p.PruneAt}, {"CompactAt", p.CompactAt}, {"KeepRecent", p.KeepRecent}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) { // also refuses NaN
			return optionError("WithContextPolicy: ContextPolicy.%s is %v; a share must be a finite number, not negative (zero means the default)", f.name, f.v)
		}
	}
	if p.Strategy < ContextCost || p.Strategy > ContextOff {
		return optionError("WithContextPolicy: ContextPolicy.Strategy is %d; use ContextCost, ContextThresholds or ContextOff", int(p.Strategy))
	}
	if p.Price != nil {
		if _, err := pricing.NewTable("USD", map[string]pricing.Price{"model": *p.Price}); err != nil {
			return optionError("WithContextPolicy: ContextPolicy.Price: %v", err)
		}
	}
	if p.MaxImages < 0 || p.MaxImageBytes < 0 {
		return optionError("WithContextPolicy: ContextPolicy.MaxImages is %d and MaxImageBytes %d; the image budget must not be negative (zero means the default)", p.MaxImages, p.MaxImageBytes)
	}
	return nil
}

// off reports whether the policy never prunes or compacts.
func (p ContextPolicy) off() bool { return p.Disabled || p.Strategy == ContextOff }

// withDefaults fills in ContextThresholds' defaults.
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

// relieve prunes and compacts the history when the policy says so (or
// always, when force is set after an overflow), and returns the request
// to send.
func (t *turn) relieve(step int, req *model.Request, force bool) *model.Request {
	p := t.l.cfg.context
	if p.off() {
		return req
	}
	window := int64(t.model.Info().ContextWindow)
	if window <= 0 && !force {
		return req
	}
	prices, costAware := priceCuts(p, t.l.cfg.prices, t.model.Info().Name)
	if force || !costAware {
		req = t.relieveByThresholds(step, req, force, p.withDefaults(), window)
	} else {
		req = t.relieveByCost(step, req, p, prices, window)
	}
	t.s.context.track.last = t.s.context.estimate(req)
	return req
}

// relieveByThresholds prunes above PruneAt of the window and compacts
// above CompactAt (both, when forced).
func (t *turn) relieveByThresholds(step int, req *model.Request, force bool, p ContextPolicy, window int64) *model.Request {
	est := t.s.context.estimate(req)
	t.s.context.track.observe(est)
	t.s.logger.Debug("context estimate", "step", step, "tokens", est, "window", window, "messages", len(req.Messages))
	if force || float64(est) > p.PruneAt*float64(window) {
		if calls := t.s.superseded(); len(calls) > 0 {
			if r, ok := t.prune(step, calls, est); ok {
				req = r
				est = t.s.context.estimate(req)
			}
		}
	}
	if force || float64(est) > p.CompactAt*float64(window) {
		keep := int64(p.KeepRecent * float64(window))
		if window <= 0 {
			keep = est / 4
		}
		if r, ok := t.compactAndPrune(step, req, keep, window); ok {
			req = r
		}
	}
	return req
}

// relieveByCost is the cost-aware policy's decision before a request.
func (t *turn) relieveByCost(step int, req *model.Request, p ContextPolicy, prices cutPrices, window int64) *model.Request {
	est := t.s.context.estimate(req)
	track := &t.s.context.track
	track.observe(est)
	t.s.logger.Debug("context estimate", "step", step, "tokens", est, "window", window, "messages", len(req.Messages))
	if p.PruneAt > 0 && float64(est) > p.PruneAt*float64(window) {
		// The host's own threshold.
		if r, ok := t.prune(step, t.s.superseded(), est); ok {
			req, est = r, t.s.context.estimate(r)
		}
	}
	forceAt := costForceAt
	if p.CompactAt > 0 {
		forceAt = p.CompactAt
	}
	keep := min(int64(costKeepShare*float64(window)), costKeepMax)
	if p.KeepRecent > 0 {
		keep = int64(p.KeepRecent * float64(window))
	}
	cached := est
	if track.last > 0 {
		cached = min(track.last, est)
	}
	s := cutState{
		est:     est,
		cached:  cached,
		forceAt: int64(forceAt * float64(window)),
		horizon: horizon(track.steps + 1),
		growth:  track.growth(),
	}
	if t.l.cfg.depth > 0 {
		// A sub-agent's session is one turn: it ends at its step limit.
		s.horizon = min(s.horizon, float64(max(t.l.cfg.maxSteps-step+1, 1)))
	}
	sizes, prefix := t.s.context.messageTokens(req)
	s.prunes = pruneOptions(req, sizes, prefix, t.s.superseded(), &t.s.context.est)
	s.compaction = newCompactOption(req, sizes, prefix, cached, s.prunes, keep, prices, track)
	plan := planCut(s, prices)
	switch {
	case plan.compact:
		t.s.logger.Info("compacting", "step", step, "estimated_tokens", est, "forced", plan.forced, "horizon", s.horizon, "growth", s.growth)
		if r, ok := t.compactAndPrune(step, req, keep, window); ok {
			return r
		}
		if plan.forced && len(s.prunes) > 0 {
			// The compaction failed: pruning is what is left.
			if r, ok := t.prune(step, calls(s.prunes), est); ok {
				return r
			}
		}
	case plan.prune < len(s.prunes):
		t.s.logger.Info("pruning", "step", step, "estimated_tokens", est, "forced", plan.forced, "calls", len(s.prunes)-plan.prune, "horizon", s.horizon)
		if r, ok := t.prune(step, calls(s.prunes[plan.prune:]), est); ok {
			return r
		}
	}
	return req
}

// prune logs a pruning of calls and returns the request rebuilt from the
// pruned history.
func (t *turn) prune(step int, calls []session.PrunedCall, est int64) (*model.Request, bool) {
	if len(calls) == 0 {
		return nil, false
	}
	if err := t.s.append(t.ctx, &session.Pruned{Calls: calls, EstimatedTokens: est}); err != nil {
		t.s.logger.Error("logging a pruning failed", "error", err)
		return nil, false
	}
	ids := make([]string, len(calls))
	for i, c := range calls {
		ids[i] = c.CallID
	}
	t.s.logger.Info("pruned superseded tool results", "step", step, "calls", len(calls), "estimated_tokens", est)
	req := t.request()
	t.emit(&ContextPruned{Step: step, Calls: ids, EstimatedTokens: est})
	return req, true
}

// compactAndPrune compacts req's history keeping about keep tokens
// verbatim, then prunes what is superseded in the kept part: that part
// is sent uncached after a compaction anyway, so pruning it costs
// nothing more. It returns the request rebuilt from the history and
// whether anything was cut. window is the model's context window (0
// unknown).
func (t *turn) compactAndPrune(step int, req *model.Request, keep, window int64) (*model.Request, bool) {
	if !t.compact(step, req, keep, window) {
		return req, false
	}
	if calls := t.s.superseded(); len(calls) > 0 {
		if r, ok := t.prune(step, calls, t.s.context.estimate(t.request())); ok {
			return r, true
		}
	}
	return t.request(), true
}

// compact summarizes the older part of req's history, keeping about keep
// tokens of recent history verbatim. The summary is asked for right
// after the older part itself, under the same system prompt and tools,
// so the provider's cache holds the request's prompt; when that does
// not fit the window (or fails), the older part is sent as a transcript.
// It reports whether it logged a compaction.
func (t *turn) compact(step int, req *model.Request, keep, window int64) bool {
	msgs := req.Messages
	sizes, prefix := t.s.context.messageTokens(req)
	split := compact.Split(msgs, keep, func(i int) int64 { return sizes[i] })
	if split == 0 {
		return false
	}
	t.compactHooks(step)
	var source int64
	for _, n := range sizes[:split] {
		source += n
	}
	var (
		summary string
		usage   *harness.Usage
		err     error
	)
	// ask makes one summarizing call, counted and priced with the turn's.
	ask := func(r *model.Request) (string, *harness.Usage, error) {
		text, u, err := summarize(t.ctx, t.model, r)
		if u != nil {
			t.usage.Add(*u)
			name := t.model.Info().Name
			t.emit(&ModelUsage{Step: step, Model: name, Usage: *u, Cost: t.price(name, *u)})
		}
		return text, u, err
	}
	inPlace := window > 0 && prefix+source+min(summaryReserve, window/8) <= window
	if inPlace {
		summary, usage, err = ask(summaryRequest(req, split))
		if err != nil || summary == "" {
			t.s.logger.Info("summarizing at the end of the conversation failed; summarizing a transcript instead", "step", step, "error", err)
		}
	}
	if !inPlace || err != nil || summary == "" {
		var u2 *harness.Usage
		summary, u2, err = ask(transcriptRequest(msgs[:split]))
		usage = addUsage(usage, u2)
	}
	if err != nil {
		t.s.logger.Warn("compaction failed; the history is kept as it is", "step", step, "error", err)
		return false
	}
	sumTokens := t.s.context.est.tokens(int64(len(compact.SummaryText(summary))))
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
	t.s.context.track.summary = sumTokens
	if usage != nil {
		t.s.context.track.summaryOut = usage.OutputTokens
	}
	t.emit(&ContextCompacted{Step: step, Messages: split, SourceTokens: source, SummaryTokens: sumTokens})
	t.reshowPlan(step)
	return true
}

// contextState is what the context policy keeps of a session between
// requests: the fingerprints of the last request's messages (and their
// sizes), the ratio of tokens to bytes, and what the cost rule tracks.
// The running turn alone uses it.
type contextState struct {
	chain chainCache
	est   estimator
	track contextTrack
}

// requestBytes is the size of req as the estimator counts it.
func (c *contextState) requestBytes(req *model.Request) int64 {
	c.chain.fingerprint(req)
	return int64(len(req.System)) + c.chain.toolBytes + c.chain.historyBytes()
}

// estimate is the size of req in tokens.
func (c *contextState) estimate(req *model.Request) int64 { return c.est.tokens(c.requestBytes(req)) }

// messageTokens returns the estimated size of each message of req and
// of the prefix before them (system prompt and tools), in tokens, as
// estimate counts them.
func (c *contextState) messageTokens(req *model.Request) ([]int64, int64) {
	c.chain.fingerprint(req)
	sizes := make([]int64, len(c.chain.links))
	var prev int64
	for i, l := range c.chain.links {
		sizes[i] = c.est.tokens(l.bytes - prev)
		prev = l.bytes
	}
	return sizes, c.est.tokens(int64(len(req.System)) + c.chain.toolBytes)
}

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

// contextTrack is what the cost-aware policy remembers of a session
// between steps. It is used by the running turn only.
type contextTrack struct {
	// steps counts the session's model answers, earlier turns' included
	// (a resumed session counts its log's).
	steps int
	// last is the estimate of the request the previous step sent, 0
	// before the first; grown and samples sum the growth seen between
	// steps that made no cut.
	last    int64
	grown   int64
	samples int
	// summary and summaryOut are the last compaction's summary size and
	// output tokens, once one was made: the next compaction's expected
	// cost.
	summary, summaryOut int64
}

// observe counts the growth from the previous step's request to est.
func (c *contextTrack) observe(est int64) {
	if c.last > 0 && est >= c.last {
		c.grown += est - c.last
		c.samples++
	}
}

// growth is the average growth per step, 0 before two samples.
func (c *contextTrack) growth() float64 {
	if c.samples < 2 {
		return 0
	}
	return float64(c.grown) / float64(c.samples)
}
