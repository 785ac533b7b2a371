package agent

import (
	"context"
	"fmt"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
)

// Lifecycle holds calls at the points of a session's life where a host
// may change what happens next ([WithLifecycle]); package hooks runs
// the command hooks of Claude Code's settings on them. Every field may
// be nil. Each call gets a context that ends with the turn (or, for
// SessionEnd, after Limits.CloseWait), through which it may log what it
// did ([LogHookRun]); it must return promptly, and a panic in it is
// logged and ignored. A sub-agent's session (Depth above 0) calls them
// too, its loop being a copy of its parent's.
type Lifecycle struct {
	// SessionStart is called before the first turn a Session value runs
	// (a new session, or one resumed: Resumed says which). Its Context
	// reaches the model before the user's message.
	SessionStart func(ctx context.Context, info SessionInfo) Verdict
	// Prompt is called with the user's message before anything of the
	// turn is logged. Block refuses the message: nothing of the turn is
	// logged or sent, a paused turn stays paused, and the turn's
	// TurnEnd has reason "blocked" and an error matching
	// harness.Code("prompt_blocked") whose text holds Reason. Context
	// reaches the model after the message.
	Prompt func(ctx context.Context, info PromptInfo) Verdict
	// Stop is called when the model answers without calling a tool,
	// before the turn ends. Block keeps the turn going: Reason reaches
	// the model as a reminder after its answer, and it is called again.
	// StopInfo.Active says that an earlier Stop of this turn kept it
	// going; the turn's step limit bounds the loop in any case.
	Stop func(ctx context.Context, info StopInfo) Verdict
	// Compact is called before the loop compacts the history. It
	// cannot prevent it.
	Compact func(ctx context.Context, info CompactInfo)
	// SessionEnd is called when the session closes.
	SessionEnd func(ctx context.Context, info SessionInfo)
}

// Verdict is what a Lifecycle call decides.
type Verdict struct {
	// Block refuses the prompt (Prompt) or the end of the turn (Stop).
	Block bool
	// Reason says why: to the host for a refused prompt, to the model
	// for a turn kept going.
	Reason string
	// Context is text for the model (SessionStart, Prompt), logged as a
	// reminder.
	Context string
}

// SessionInfo describes the session a Lifecycle call is about.
type SessionInfo struct {
	SessionID string
	Cwd       string
	// Parent and ParentCall are the parent session's id and the task
	// call that started a sub-agent's session; Depth is 0 for a top
	// session, 1 for a child.
	Parent     string
	ParentCall string
	Depth      int
	// Resumed reports a session whose log already held turns.
	Resumed bool
	// Model is the name of the model the session calls.
	Model string
}

// PromptInfo describes a user's message (Lifecycle.Prompt).
type PromptInfo struct {
	SessionInfo
	// Turn is the number of the turn the message would start.
	Turn int
	// Prompt is the text of the message.
	Prompt string
}

// StopInfo describes the end of a turn (Lifecycle.Stop).
type StopInfo struct {
	SessionInfo
	Turn, Step int
	// Active reports that a Stop call of this turn already kept it
	// going.
	Active bool
	// Answer is the text of the model's last answer.
	Answer string
}

// CompactInfo describes a compaction about to happen.
type CompactInfo struct {
	SessionInfo
	Turn, Step int
	// Trigger is "auto": the loop compacts when its context policy says
	// so.
	Trigger string
}

// WithLifecycle sets the calls of h (see Lifecycle), after those an
// earlier WithLifecycle set: each point calls them in order, and for
// Prompt and Stop the first that blocks decides.
func WithLifecycle(h Lifecycle) Option {
	return func(c *config) { c.lifecycle = append(c.lifecycle, h) }
}

// ReasonBlocked ends a turn whose prompt a Lifecycle.Prompt refused.
const ReasonBlocked = "blocked"

// codePromptBlocked (prompt_blocked): a Lifecycle.Prompt call (a
// UserPromptSubmit hook) refused the user's message.
const codePromptBlocked harness.Code = "prompt_blocked"

// lifeState is what the Lifecycle calls keep per Session.
type lifeState struct {
	started    bool // SessionStart was called
	stopActive bool // a Stop call kept the running turn going
}

// sessionKey carries the session to a Lifecycle call.
type sessionKey struct{}

func (s *Session) info() SessionInfo {
	h := s.Header()
	s.logMu.Lock()
	resumed := s.hist.Turns() > 0
	s.logMu.Unlock()
	return SessionInfo{SessionID: h.ID, Cwd: h.Cwd, Parent: h.Parent, ParentCall: h.ParentCall, Depth: s.loop.cfg.depth, Resumed: resumed, Model: s.Model().Info().Name}
}

// promptHooks runs SessionStart and Prompt for a turn's first payloads
// (its user message last) and returns them with the context they add,
// or nil when the prompt was refused and the turn has ended.
func (t *turn) promptHooks(first []session.Payload, content []harness.Block) []session.Payload {
	if len(t.l.cfg.lifecycle) == 0 {
		return first
	}
	ctx := context.WithValue(t.ctx, sessionKey{}, t.s)
	info := t.s.info()
	t.s.life.stopActive = false
	if !t.s.life.started {
		for _, h := range t.l.cfg.lifecycle {
			if h.SessionStart == nil {
				continue
			}
			v := t.s.callVerdict("SessionStart", func() Verdict { return h.SessionStart(ctx, info) })
			if v.Context != "" {
				rem := &session.Reminded{Reminder: harness.Reminder{Source: "session_start", Text: v.Context}}
				first = append(first[:len(first)-1:len(first)-1], rem, first[len(first)-1])
			}
		}
	}
	pi := PromptInfo{SessionInfo: info, Turn: t.s.turns() + 1, Prompt: (harness.Message{Content: content}).Text()}
	for _, h := range t.l.cfg.lifecycle {
		if h.Prompt == nil {
			continue
		}
		v := t.s.callVerdict("Prompt", func() Verdict { return h.Prompt(ctx, pi) })
		if v.Block {
			err := &harness.Error{Code: codePromptBlocked, Message: "agent: the prompt was refused by a hook and not sent: " + v.Reason}
			t.s.logger.Info("a prompt hook refused the user's message", "reason", v.Reason)
			// Nothing of the turn is logged (a turn end would close the
			// calls of a pause): the hook's own records say what
			// happened.
			t.end(&TurnEnd{Reason: ReasonBlocked, Err: err})
			return nil
		}
		if v.Context != "" {
			first = append(first, &session.Reminded{Reminder: harness.Reminder{Source: "prompt_hook", Text: v.Context}})
		}
	}
	t.s.life.started = true
	return first
}

// stopHooks runs Stop when the model answered without calling a tool.
// It reports whether a call kept the turn going; the reason is logged
// as a reminder for the model.
func (t *turn) stopHooks(step int, answer harness.Message) bool {
	if len(t.l.cfg.lifecycle) == 0 {
		return false
	}
	ctx := context.WithValue(t.ctx, sessionKey{}, t.s)
	info := StopInfo{SessionInfo: t.s.info(), Turn: t.s.turns(), Step: step, Active: t.s.life.stopActive, Answer: answer.Text()}
	for _, h := range t.l.cfg.lifecycle {
		if h.Stop == nil {
			continue
		}
		v := t.s.callVerdict("Stop", func() Verdict { return h.Stop(ctx, info) })
		if !v.Block {
			continue
		}
		reason := v.Reason
		if reason == "" {
			reason = "A stop hook asked you to continue."
		}
		r := harness.Reminder{Source: "stop_hook", Text: reason}
		if err := t.s.append(t.ctx, &session.Reminded{Reminder: r}); err != nil {
			t.s.logger.Error("logging a stop hook's reason failed; the turn ends", "error", err)
			return false
		}
		t.s.life.stopActive = true
		t.emit(&ReminderAdded{Step: step, Reminder: r})
		return true
	}
	return false
}

// compactHooks runs Compact before a compaction.
func (t *turn) compactHooks(step int) {
	if len(t.l.cfg.lifecycle) == 0 {
		return
	}
	ctx := context.WithValue(t.ctx, sessionKey{}, t.s)
	info := CompactInfo{SessionInfo: t.s.info(), Turn: t.s.turns(), Step: step, Trigger: "auto"}
	for _, h := range t.l.cfg.lifecycle {
		if h.Compact != nil {
			t.s.callVerdict("Compact", func() Verdict { h.Compact(ctx, info); return Verdict{} })
		}
	}
}

// endHooks runs SessionEnd as the session closes, within the close
// wait.
func (s *Session) endHooks() {
	if len(s.loop.cfg.lifecycle) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithValue(context.Background(), sessionKey{}, s), s.loop.cfg.limits.withDefaults().CloseWait)
	defer cancel()
	info := s.info()
	for _, h := range s.loop.cfg.lifecycle {
		if h.SessionEnd != nil {
			s.callVerdict("SessionEnd", func() Verdict { h.SessionEnd(ctx, info); return Verdict{} })
		}
	}
}

// callVerdict calls f, logging and ignoring a panic.
func (s *Session) callVerdict(point string, f func() Verdict) (v Verdict) {
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("a lifecycle call panicked; it is ignored", "point", point, "panic", fmt.Sprint(p))
			v = Verdict{}
		}
	}()
	return f()
}

// sessionOf returns the session a context belongs to: the turn's (tool
// middleware) or the one a Lifecycle call was given.
func sessionOf(ctx context.Context) *Session {
	// The session is set on every turn's context, and a sub-agent's turn
	// sets its own over its parent's.
	if s, ok := ctx.Value(sessionKey{}).(*Session); ok && s != nil {
		return s
	}
	if t, ok := ctx.Value(turnKey{}).(*turn); ok && t != nil {
		return t.s
	}
	return nil
}

// LogHookRun appends the record of a hook's run to the log of the
// session ctx belongs to: ctx must be one the loop gave a tool
// middleware, a Lifecycle call, a TurnObserver or an approver. Outside those it fails with an error
// matching harness.CodeInvalidArguments and logs nothing.
func LogHookRun(ctx context.Context, run *session.HookRun) error {
	s := sessionOf(ctx)
	if s == nil || run == nil {
		return &harness.Error{Code: harness.CodeInvalidArguments, Message: "agent: LogHookRun needs the context of a tool call or a lifecycle call of the loop"}
	}
	return s.append(context.WithoutCancel(ctx), run)
}
