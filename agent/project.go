package agent

import (
	"context"
	"fmt"
	"slices"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/session"
)

// A ContextSource gives a session's turns their project context: text
// such as AGENTS.md files or the list of skills, which the model reads
// right after the system prompt, in the stable prefix of every request
// (package instructions and package skills implement it). Add sources
// with [WithContext].
//
// The loop asks each source at the start of every turn (never within
// one) and puts what they return together, in source order. When the
// set differs from the one the session's log holds (a file was edited,
// added or removed), the new set is logged whole (session.ContextLoaded,
// each part with its digest) and a [ContextLoaded] event says so;
// otherwise nothing is logged. Requests are built from the logged set,
// never from the disk, so a resumed session and a continued pause send
// the bytes they logged, and a strict replay given [LoggedContext]
// sends the recording's. The context is never pruned, compacted away or
// reordered: it changes only when a source's answer changes.
//
// A source that fails (or panics) leaves the previous set in place; the
// failure is logged as a warning. Context calls the source with a
// context that ends with the turn; it should return promptly.
type ContextSource interface {
	Context(ctx context.Context, q ContextQuery) ([]session.ContextFile, error)
}

// NestedContext is a ContextSource that also finds context for the
// places a turn reaches: after each step, the loop hands it the paths
// the step's calls read or wrote (harness.FileAccess), and it returns
// the files that apply below the working directory (an AGENTS.md in a
// directory the agent went into). Files already in the prefix or
// already announced (same path, same digest) are dropped; the rest are
// logged (session.ContextLoaded with Nested) and reach the model once,
// as a message after the step's results, and are not sent again.
type NestedContext interface {
	ContextSource
	Nested(ctx context.Context, q ContextQuery, paths []string) ([]session.ContextFile, error)
}

// ContextQuery is what a ContextSource is told about the turn.
type ContextQuery struct {
	// SessionID, Cwd and Turn describe the session: its id, its working
	// directory, and the turn about to run (1 for the first).
	SessionID string
	Cwd       string
	Turn      int
	// Step is the step whose calls reached the paths given to Nested;
	// 0 for Context.
	Step int
	// FS is the session's file system as its tools see it (restricted by
	// the permission policy's paths), or nil when the loop has none.
	FS fs.FileSystem
	// Loaded is the context the session holds now: the prefix, then the
	// nested files announced so far.
	Loaded []session.ContextFile
}

// ContextLoaded says the project context changed: at the start of a
// turn, the whole set of the prefix (Nested false); after a step, nested
// files announced to the model (Nested true).
type ContextLoaded struct {
	Step   int                   `json:"step,omitempty"`
	Nested bool                  `json:"nested,omitempty"`
	Files  []session.ContextFile `json:"files"`
}

func (*ContextLoaded) kind() string { return "context_loaded" }

// WithContext adds sources of project context (see ContextSource). The
// parts of all sources follow the system prompt in the order of the
// sources.
func WithContext(srcs ...ContextSource) Option {
	return func(c *config) {
		for _, s := range srcs {
			if s != nil {
				c.contextSources = append(c.contextSources, s)
			}
		}
	}
}

// Context returns the session's project context: the files of the
// prefix, then the nested files announced and still in the history.
func (s *Session) Context() []session.ContextFile {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return slices.Concat(s.hist.Context(), s.hist.Announced())
}

// systemPrompt is the system prompt of the next request: the host's,
// then the logged project context.
func (t *turn) systemPrompt() string {
	t.s.logMu.Lock()
	files := t.s.hist.Context()
	t.s.logMu.Unlock()
	sys := t.l.cfg.system
	if len(files) == 0 {
		return sys
	}
	if sys == "" {
		return session.RenderContext(files)
	}
	return sys + "\n\n" + session.RenderContext(files)
}

// query describes the turn to a context source.
func (t *turn) query(turn, step int) ContextQuery {
	return ContextQuery{SessionID: t.s.Header().ID, Cwd: t.s.Header().Cwd, Turn: turn, Step: step, FS: t.s.files(), Loaded: t.s.Context()}
}

// projectContext asks the context sources for the turn's context and
// returns the payload that logs it when it differs from the logged set.
func (t *turn) projectContext() []session.Payload {
	srcs := t.l.cfg.contextSources
	if len(srcs) == 0 {
		return nil
	}
	q := t.query(t.s.turns()+1, 0)
	var files []session.ContextFile
	for _, src := range srcs {
		got, err := askSource(t.ctx, func(ctx context.Context) ([]session.ContextFile, error) { return src.Context(ctx, q) })
		if err != nil {
			t.s.logger.Warn("a context source failed; the session keeps its logged context", "source", fmt.Sprintf("%T", src), "error", err)
			return nil
		}
		files = append(files, got...)
	}
	t.s.logMu.Lock()
	same := sameContext(files, t.s.hist.Context())
	t.s.logMu.Unlock()
	if same {
		return nil
	}
	t.emit(&ContextLoaded{Files: files})
	return []session.Payload{&session.ContextLoaded{Files: files}}
}

// announce asks the nested context sources about the paths the step's
// results read or wrote, and logs the files not yet in the context.
func (t *turn) announce(step int, results []*harness.ToolResult) {
	var nested []NestedContext
	for _, src := range t.l.cfg.contextSources {
		if n, ok := src.(NestedContext); ok {
			nested = append(nested, n)
		}
	}
	if len(nested) == 0 {
		return
	}
	var paths []string
	for _, r := range results {
		if r == nil {
			continue
		}
		for _, f := range r.Files {
			if f.Path != "" && !slices.Contains(paths, f.Path) {
				paths = append(paths, f.Path)
			}
		}
	}
	if len(paths) == 0 {
		return
	}
	q := t.query(t.s.turns(), step)
	known := map[string]bool{}
	for _, f := range q.Loaded {
		known[f.Path+"\x00"+f.Digest] = true
	}
	var fresh []session.ContextFile
	for _, src := range nested {
		got, err := askSource(t.ctx, func(ctx context.Context) ([]session.ContextFile, error) { return src.Nested(ctx, q, paths) })
		if err != nil {
			t.s.logger.Warn("a nested context source failed", "source", fmt.Sprintf("%T", src), "error", err)
			continue
		}
		for _, f := range normalized(got) {
			if key := f.Path + "\x00" + f.Digest; !known[key] {
				known[key] = true
				fresh = append(fresh, f)
			}
		}
	}
	if len(fresh) == 0 {
		return
	}
	if err := t.s.append(t.ctx, &session.ContextLoaded{Files: fresh, Nested: true, Step: step}); err != nil {
		t.s.logger.Error("logging nested context failed", "error", err)
		return
	}
	t.emit(&ContextLoaded{Step: step, Nested: true, Files: fresh})
}

// askSource calls a source, turning a panic into an error.
func askSource(ctx context.Context, f func(context.Context) ([]session.ContextFile, error)) (files []session.ContextFile, err error) {
	defer func() {
		if p := recover(); p != nil {
			files, err = nil, fmt.Errorf("the context source panicked: %v", p)
		}
	}()
	files, err = f(ctx)
	return normalized(files), err
}

// normalized sets each file's digest from its text: the log's digest is
// always the loop's own.
func normalized(files []session.ContextFile) []session.ContextFile {
	out := make([]session.ContextFile, 0, len(files))
	for _, f := range files {
		f.Digest = session.DigestText(f.Text)
		out = append(out, f)
	}
	return out
}

// sameContext reports whether two sets hold the same parts in the same
// order.
func sameContext(a, b []session.ContextFile) bool {
	return slices.EqualFunc(a, b, func(x, y session.ContextFile) bool {
		return x.Path == y.Path && x.Kind == y.Kind && x.Digest == y.Digest && x.Bytes == y.Bytes && x.Cut == y.Cut
	})
}

// LoggedContext returns a ContextSource that answers with the context a
// recorded session logged, turn by turn and step by step, for a strict
// replay (package agent/replay) of a session whose requests carried
// project context: the replayed requests then hold the recorded bytes
// whatever the files say now.
func LoggedContext(events []session.Event) ContextSource {
	lc := &loggedContext{nested: map[[2]int][]session.ContextFile{}}
	turn := 0
	var cur []session.ContextFile
	for _, e := range events {
		switch p := e.Data.(type) {
		case *session.ContextLoaded:
			if p.Nested {
				k := [2]int{turn, p.Step}
				lc.nested[k] = append(lc.nested[k], p.Files...)
			} else {
				cur = p.Files
			}
		case *session.UserMessage:
			turn++
			lc.turns = append(lc.turns, cur)
		}
	}
	return lc
}

type loggedContext struct {
	turns  [][]session.ContextFile // the prefix of each turn, from 1
	nested map[[2]int][]session.ContextFile
}

func (lc *loggedContext) Context(_ context.Context, q ContextQuery) ([]session.ContextFile, error) {
	if q.Turn < 1 || q.Turn > len(lc.turns) {
		return nil, nil
	}
	return lc.turns[q.Turn-1], nil
}

func (lc *loggedContext) Nested(_ context.Context, q ContextQuery, _ []string) ([]session.ContextFile, error) {
	return lc.nested[[2]int{q.Turn, q.Step}], nil
}
