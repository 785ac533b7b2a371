package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/pricing"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// Loop runs agent sessions: it calls the model, dispatches the tools it
// asks for, and logs everything the model sees. Build one with New; it is
// safe for concurrent use by several sessions.
type Loop struct {
	cfg     config
	handler tools.Handler

	toolsMu sync.Mutex
	tools   *toolset

	mu       sync.Mutex
	sessions map[*Session]struct{}
	closed   bool
}

// New returns a Loop configured by opts, or the configuration's errors:
// no model, an option value out of range, or tools the registry refuses
// (two tools with one name, a schema that could not be checked safely or
// is not of an object, a tool whose Validate fails; see
// tools.NewRegistry, which compiles a plain schema at its tool's first
// call), or tools that work in a file system
// (tools.Spec.NeedsFS: the file tools, glob, grep, read_image) when
// the loop has none (Stores.Files), or tools that run programs in a
// directory on disk (tools.Spec.NeedsOSDir: bash, shell_open) over a
// file system that is not on disk (not an fs.LocalPather). Each is a *harness.Error with
// harness.CodeInvalidOption whose message names the option and the
// value; several are joined.
func New(opts ...Option) (*Loop, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	errs := cfg.errs
	if cfg.model == nil {
		errs = append(errs, &harness.Error{Code: harness.CodeInvalidOption, Message: "agent: no model configured; pass agent.WithModel"})
	}
	if err := cfg.limits.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := cfg.limits.Budget.validate(cfg.prices != nil); err != nil {
		errs = append(errs, err)
	}
	if err := cfg.context.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := cfg.validateCheckpoints(); err != nil {
		errs = append(errs, err)
	}
	lim := cfg.limits.withDefaults()
	cfg.maxSteps, cfg.retry = lim.MaxSteps, *lim.Retry
	l := &Loop{cfg: cfg, sessions: map[*Session]struct{}{}}
	ts, err := l.buildTools()
	if err != nil {
		errs = append(errs, &harness.Error{Code: harness.CodeInvalidOption, Message: "agent: the tools of WithTools and WithToolSource: " + err.Error(), Err: err})
	} else if err := cfg.deferred.check(ts); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	l.tools = ts
	l.handler = toolexec.Chain(toolexec.Executor(), cfg.middleware...)
	return l, nil
}

// Tools returns the specs of the loop's tools in the order the model sees
// them. Deferred tools (WithDeferredTools) are included, in their places,
// and load_tools last; a request sends the deferred ones only once they
// are loaded, after the others.
func (l *Loop) Tools() []tools.Spec { return l.currentTools().reg.Specs() }

// toolset is the loop's tools at one point: the registry, the tools as
// the model is told about them (converted once), and the generation of
// each tool source they were taken at. The deferred tools
// (WithDeferredTools) are in the registry, and in deferred instead of
// model: a session sends them once it has loaded them
// (Session.requestTools).
type toolset struct {
	reg      *tools.Registry
	model    []model.Tool
	deferred map[string]model.Tool
	gens     []uint64
}

// buildTools builds the toolset of the WithTools tools and the sources'
// current tools. On error it returns the generations it saw.
func (l *Loop) buildTools() (*toolset, error) {
	all := append([]tools.Tool(nil), l.cfg.tools...)
	gens := make([]uint64, len(l.cfg.sources))
	for i, src := range l.cfg.sources {
		if src == nil {
			continue
		}
		gens[i] = src.Generation()
		all = append(all, src.Tools()...)
	}
	if l.cfg.askUser {
		all = append(all, l.askUserTool())
	}
	if l.cfg.todo {
		all = append(all, todoTool())
	}
	if l.cfg.sub != nil {
		task, err := l.taskTool()
		if err != nil {
			return &toolset{gens: gens}, err
		}
		all = append(all, task)
	}
	all, deferred := l.addLoader(all)
	reg, err := tools.NewRegistry(all...)
	if err != nil {
		return &toolset{gens: gens}, err
	}
	if err := l.checkNeeds(reg.Specs()); err != nil {
		return &toolset{gens: gens}, err
	}
	ts := &toolset{reg: reg, gens: gens}
	for _, spec := range reg.Specs() {
		mt := model.Tool{Name: spec.Name, Description: spec.Description, Parameters: spec.InputSchema}
		if deferred[spec.Name] {
			if ts.deferred == nil {
				ts.deferred = map[string]model.Tool{}
			}
			ts.deferred[spec.Name] = mt
			continue
		}
		ts.model = append(ts.model, mt)
	}
	return ts, nil
}

// checkNeeds refuses tools the loop cannot give what they need: a file
// system for the tools that work in one (tools.Spec.NeedsFS), a
// directory of the OS for those that run programs (tools.Spec.NeedsOSDir).
func (l *Loop) checkNeeds(specs []tools.Spec) error {
	var needFS, needDir []string
	for _, sp := range specs {
		if sp.NeedsFS {
			needFS = append(needFS, sp.Name)
		}
		if sp.NeedsOSDir {
			needDir = append(needDir, sp.Name)
		}
	}
	_, local := l.cfg.fsys.(fs.LocalPather)
	switch {
	case l.cfg.fsys != nil && !local && len(needDir) > 0:
		return fmt.Errorf("%s run programs in a directory on disk, and the loop's file system (%T) is not on disk, so every call would fail: "+
			"give the loop an OS-backed file system (agent.Stores{Files: fsys} with fsys from fslocal.New(workspace)), or leave these tools out; "+
			"an in-memory file system suits the file tools only", strings.Join(needDir, ", "), l.cfg.fsys)
	case l.cfg.fsys != nil || len(needFS) == 0:
		return nil
	}
	names := needFS
	return fmt.Errorf("%s work in a file system and the loop has none, so every call would fail: "+
		"pass agent.WithStores(agent.Stores{Files: fsys}) with fsys from fslocal.New(workspace) (the workspace on disk, confined to it) "+
		"or fstest.NewMemFS (in memory, for tests), or leave these tools out", strings.Join(names, ", "))
}

// currentTools returns the toolset for the next step: the same one while
// no tool source has changed, a rebuilt one when one has.
func (l *Loop) currentTools() *toolset {
	l.toolsMu.Lock()
	defer l.toolsMu.Unlock()
	cur := l.tools
	if len(l.cfg.sources) == 0 {
		return cur
	}
	changed := false
	for i, src := range l.cfg.sources {
		if src != nil && src.Generation() != cur.gens[i] {
			changed = true
		}
	}
	if !changed {
		return cur
	}
	ts, err := l.buildTools()
	if err != nil {
		l.cfg.logger.Error("agent: the changed tools of a tool source do not pass the registry's checks; the previous tools stay", "error", err)
		l.tools = &toolset{reg: cur.reg, model: cur.model, deferred: cur.deferred, gens: ts.gens}
		return l.tools
	}
	l.cfg.logger.Info("agent: the tools changed", "tools", len(ts.model))
	l.tools = ts
	return ts
}

// NewSession starts a new session and logs h as its header, filled in as
// Store.Create fills it (an empty ID gets a new one, a zero Created the
// current time). Cwd must be absolute (a relative one is an error with
// harness.CodeInvalidPath); an empty Cwd means the file system's root
// (fs.Rooter), or "/". Parent and ParentCall name the
// session this one continues and, for a sub-agent's session, the
// parent's tool call that started it. A panic in the session store is
// returned as an *harness.Error.
func (l *Loop) NewSession(ctx context.Context, h session.Header) (s *Session, err error) {
	defer l.recoverSession("new_session", &s, &err)
	if err := l.check(); err != nil {
		return nil, err
	}
	if h.Cwd != "" && !path.IsAbs(h.Cwd) && !filepath.IsAbs(h.Cwd) {
		return nil, &harness.Error{Code: harness.CodeInvalidPath,
			Message: fmt.Sprintf("agent: NewSession: the working directory %q (session.Header.Cwd) is relative; give an absolute path, or leave it empty for the file system's root", h.Cwd)}
	}
	if h.Cwd == "" && l.cfg.fsys != nil {
		h.Cwd = fsimpl.RootOf(l.cfg.fsys)
	}
	if h.Cwd == "" {
		h.Cwd = "/"
	}
	log, err := l.cfg.store.Create(ctx, h)
	if err != nil {
		return nil, fmt.Errorf("agent: starting session: %w", err)
	}
	s, err = l.adopt(log, &session.History{}, nil)
	if err != nil {
		return nil, err
	}
	s.idle()
	return s, nil
}

// ResumeSession reopens a logged session so that the next turn continues
// its history. A session that stopped mid-turn is repaired: calls left
// without a result get results saying they were not run or that their
// outcome is unknown, and the open turn is logged as interrupted with the
// steps and usage its events hold. Warnings from loading (a torn line, an
// unknown event type) and one for each repair (the turn, each call) are
// kept in Session.Warnings. A panic while loading (in the store, or on a log no
// check caught) is returned as an *harness.Error, and the log is closed.
func (l *Loop) ResumeSession(ctx context.Context, id string) (s *Session, err error) {
	defer l.recoverSession("resume_session", &s, &err)
	if err := l.check(); err != nil {
		return nil, err
	}
	log, tr, err := l.cfg.store.Open(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("agent: resuming session: %w", err)
	}
	if tr == nil {
		log.Close()
		return nil, fmt.Errorf("agent: resuming session %s: the store returned no transcript", id)
	}
	hist, err := l.buildHistory(tr.Events)
	if err != nil {
		log.Close()
		return nil, err
	}
	s, err = l.adopt(log, hist, tr.Warnings)
	if err != nil {
		return nil, err
	}
	s.usage, s.cost = logSpend(l.cfg.prices, tr.Events)
	s.context.track.steps = countSteps(tr.Events)
	cutOff := s.restorePermissions(tr.Events)
	s.restoreTodo(tr.Events)
	s.restoreNarrowing(tr.Events)
	s.restoreJobs(ctx, tr.Events)
	s.restoreLoaded(tr.Events)
	s.restoreLedger(tr.Events)
	for _, w := range tr.Warnings {
		l.cfg.logger.Warn("session log repaired on load", "session", id, "warning", w.String())
	}
	end, repaired := hist.Repair()
	if end == nil && cutOff {
		end = &session.TurnEnded{Reason: session.ReasonInterrupted}
	}
	if end != nil {
		if err := s.append(ctx, end); err != nil {
			s.Close()
			return nil, fmt.Errorf("agent: resuming session: %w", err)
		}
		for _, w := range repaired {
			l.cfg.logger.Warn("interrupted turn repaired", "session", id, "warning", w.String())
		}
		s.warnings = append(s.warnings, repaired...)
	}
	if end != nil {
		tr.Events = append(tr.Events, session.Event{Data: end})
	}
	if err := s.restoreInterrupted(ctx, tr.Events); err != nil {
		s.Close()
		return nil, fmt.Errorf("agent: resuming session: %w", err)
	}
	s.idle()
	return s, nil
}

// logSpend is the token usage and the cost of every model call in a
// loaded log: the session's own, its compactions' summarizing calls and
// its sub-agents' (recorded in the parent's log as they end). The cost is
// 0 without a price table.
func logSpend(prices *pricing.Table, events []session.Event) (harness.Usage, float64) {
	var (
		usage harness.Usage
		cost  float64
	)
	count := func(modelName string, u harness.Usage, at time.Time) {
		usage.Add(u)
		if prices != nil {
			c, _ := prices.Cost(modelName, u, at)
			cost += c
		}
	}
	for _, ev := range events {
		switch p := ev.Data.(type) {
		case *session.AssistantMessage:
			if p.Usage != nil {
				count(p.Model, *p.Usage, ev.Time)
			}
		case *session.ToolRecord:
			if u, c, ok := externalSpend(p); ok { // an external call's spend: external.go
				usage.Add(u)
				cost += c
				continue
			}
			// A sub-agent's model calls, priced when they were made.
			if p.Tool != taskToolName || p.Name != subAgentUsageRecord {
				continue
			}
			var rec subAgentUsage
			if json.Unmarshal(p.Data, &rec) != nil {
				continue
			}
			for _, c := range rec.Calls {
				count(c.Model, c.Usage, c.Time)
			}
		case *session.Compacted:
			// The summarizing call is a model call too.
			if p.Usage != nil {
				count(p.Model, *p.Usage, ev.Time)
			}
		}
	}
	return usage, cost
}

// countSteps counts the model answers of a loaded log, for a resumed
// session's horizon.
func countSteps(events []session.Event) int {
	n := 0
	for _, e := range events {
		if _, ok := e.Data.(*session.AssistantMessage); ok {
			n++
		}
	}
	return n
}

// buildHistory derives a history, recovering a panic on events no check
// caught.
func (l *Loop) buildHistory(events []session.Event) (h *session.History, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = internalError(l.cfg.logger, "resume_session", p)
		}
	}()
	return new(session.History).Add(events...), nil
}

// recoverSession turns a panic in NewSession or ResumeSession into an
// *harness.Error, closing the session it may have left half made.
func (l *Loop) recoverSession(op string, s **Session, err *error) {
	p := recover()
	if p == nil {
		return
	}
	ie := internalError(l.cfg.logger, op, p)
	if *s != nil {
		func() {
			defer func() { _ = recover() }()
			(*s).Close()
		}()
	}
	*s, *err = nil, ie
}

func (l *Loop) check() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return errClosed()
	}
	return nil
}

func (l *Loop) adopt(log session.Log, hist *session.History, warnings []session.Warning) (*Session, error) {
	s := &Session{
		loop:     l,
		log:      log,
		hist:     hist,
		state:    &tools.State{},
		model:    l.cfg.model,
		warnings: warnings,
	}
	s.logger = l.cfg.logger.With("session", log.Header().ID)
	s.jobs() // the registry, made with the loop's configuration before any tool makes it
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		log.Close()
		return nil, errClosed()
	}
	l.sessions[s] = struct{}{}
	return s, nil
}

func (l *Loop) forget(s *Session) {
	l.mu.Lock()
	delete(l.sessions, s)
	l.mu.Unlock()
}

// Close closes every open session, all at once: running turns are
// cancelled and waited for, tool state (shell sessions, background jobs)
// is released, and logs are synced. Like Session.Close it returns within
// about the close wait (Limits.CloseWait) whatever the tools do, and
// its error names the tool calls it abandoned. Starting a session
// afterwards fails with an error matching harness.CodeClosed. A host
// ties a loop to its lifetime with context.AfterFunc(ctx, func()
// { loop.Close() }); turns still take their own context.
func (l *Loop) Close() error {
	l.mu.Lock()
	l.closed = true
	open := make([]*Session, 0, len(l.sessions))
	for s := range l.sessions {
		open = append(open, s)
	}
	l.mu.Unlock()
	errs := make([]error, len(open))
	var wg sync.WaitGroup
	for i, s := range open {
		wg.Go(func() { errs[i] = s.Close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}
