package session

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-harness/harness"
)

// memory is the Store NewMemory returns.
type memory struct {
	mu       sync.Mutex
	sessions map[string]*memSession
	now      func() time.Time
	cfg      storeConfig
}

type memSession struct {
	header  Header
	lines   [][]byte
	updated time.Time
	size    int64
	open    bool
	title   string
	meta    Meta
}

// NewMemory returns a Store that keeps logs in memory, encoded exactly
// as the JSONL store encodes them, so a test that passes on it exercises
// the same serialization. It is the default store of a Loop that is given
// none. Searching it loads each session.
func NewMemory(cfg StoreConfig) Store {
	return &memory{sessions: map[string]*memSession{}, now: time.Now, cfg: newStoreConfig(cfg)}
}

// MaxLineSize returns the longest log line the store writes or reads.
func (m *memory) MaxLineSize() int { return m.cfg.maxLine }

// Create implements Store.
func (m *memory) Create(ctx context.Context, h Header) (Log, error) {
	if err := m.cfg.err; err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	h, err := prepareHeader(h, m.now())
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.sessions[h.ID]; ok {
		return nil, fmt.Errorf("%w: %s", storeErr(harness.CodeExists), h.ID)
	}
	line, err := marshalHeader(h)
	if err != nil {
		return nil, err
	}
	if err := headerTooLarge(h, line, m.cfg.maxLine); err != nil {
		return nil, err
	}
	m.sessions[h.ID] = &memSession{header: h, updated: m.now().UTC(), size: int64(len(line) + 1), open: true}
	return &memLog{logState: logState{header: h, next: 1, maxLine: m.cfg.maxLine}, m: m}, nil
}

// Open implements Store. The session is marked open in the same
// critical section that copies its lines, so that a second Open waits
// for nothing and sees no transcript older than the first writer's
// appends: it fails with harness.CodeLocked while the first is open,
// and after the first closes it loads what the first appended.
func (m *memory) Open(ctx context.Context, id string) (Log, *Transcript, error) {
	ld, err := m.loadWith(ctx, id, true)
	if err != nil {
		return nil, nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return nil, nil, fmt.Errorf("%w: %s (deleted while opening)", storeErr(harness.CodeNotFound), id)
	}
	return &memLog{logState: logState{header: s.header, next: ld.next, maxLine: m.cfg.maxLine}, m: m}, ld.t, nil
}

// Load implements Store.
func (m *memory) Load(ctx context.Context, id string) (*Transcript, error) {
	ld, err := m.load(ctx, id)
	if err != nil {
		return nil, err
	}
	return ld.t, nil
}

// load reads a session's lines as JSONL reads its file.
func (m *memory) load(ctx context.Context, id string) (loaded, error) {
	return m.loadWith(ctx, id, false)
}

// loadWith is load; open also marks the session open for appending, in
// the critical section that copies its lines (an open session is
// refused with harness.CodeLocked). A load that then fails leaves the
// session closed.
func (m *memory) loadWith(ctx context.Context, id string, open bool) (ld loaded, err error) {
	if err := m.cfg.err; err != nil {
		return loaded{}, err
	}
	if err := ctx.Err(); err != nil {
		return loaded{}, err
	}
	if !validID(id) {
		return loaded{}, fmt.Errorf("%w: %q", storeErr(harness.CodeInvalidID), id)
	}
	m.mu.Lock()
	s, ok := m.sessions[id]
	if ok && open {
		if s.open {
			m.mu.Unlock()
			return loaded{}, fmt.Errorf("session %s: %w", id, storeErr(harness.CodeLocked))
		}
		s.open = true
		defer func() {
			if err != nil {
				m.mu.Lock()
				s.open = false
				m.mu.Unlock()
			}
		}()
	}
	var buf bytes.Buffer
	if ok {
		line, _ := marshalHeader(s.header)
		buf.Write(line)
		buf.WriteByte('\n')
		for _, l := range s.lines {
			buf.Write(l)
			buf.WriteByte('\n')
		}
	}
	m.mu.Unlock()
	if !ok {
		return loaded{}, fmt.Errorf("%w: %s", storeErr(harness.CodeNotFound), id)
	}
	return readTranscript(ctx, &buf, id, m.cfg.maxLine)
}

// List implements Store.
func (m *memory) List(ctx context.Context, opts ListOptions) ([]Info, error) {
	if err := m.cfg.err; err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	var out []Info
	for _, s := range m.sessions {
		if opts.Workspace != "" && !Below(s.header.Cwd, opts.Workspace) || !s.meta.HasTags(opts.Tags) {
			continue
		}
		info := Info{Header: s.header, Title: s.title, Updated: s.updated, Size: s.size}
		s.meta.Describe(&info)
		out = append(out, info)
	}
	m.mu.Unlock()
	sortInfos(out)
	if opts.Limit > 0 && len(out) > opts.Limit {
		out = out[:opts.Limit]
	}
	return out, nil
}

// Delete implements Store.
func (m *memory) Delete(ctx context.Context, id string) error {
	if err := m.cfg.err; err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if !validID(id) {
		return fmt.Errorf("%w: %q", storeErr(harness.CodeInvalidID), id)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return fmt.Errorf("%w: %s", storeErr(harness.CodeNotFound), id)
	}
	if s.open {
		return fmt.Errorf("session %s: %w", id, storeErr(harness.CodeLocked))
	}
	delete(m.sessions, id)
	return nil
}

type memLog struct {
	logState
	m *memory
}

func (l *memLog) Append(ctx context.Context, payloads ...Payload) ([]Event, error) {
	if err := l.lockOpen(ctx); err != nil {
		return nil, err
	}
	defer l.mu.Unlock()
	now := l.m.now().UTC()
	events, lines, err := encodeBatch(l.header.ID, l.next, now, l.maxLine, payloads)
	if err != nil {
		return nil, err
	}
	l.m.mu.Lock()
	defer l.m.mu.Unlock()
	s, ok := l.m.sessions[l.header.ID]
	if !ok {
		return nil, fmt.Errorf("%w: %s (deleted while open)", storeErr(harness.CodeNotFound), l.header.ID)
	}
	for i, line := range lines {
		s.lines = append(s.lines, line)
		s.size += int64(len(line) + 1)
		if u, ok := payloads[i].(*UserMessage); ok && s.title == "" {
			s.title = titleOf(u)
		}
	}
	s.updated = now
	l.next += int64(len(payloads))
	return events, nil
}

func (l *memLog) Sync() error { return l.ifOpen(func() error { return nil }) }

func (l *memLog) Close() error {
	return l.closeOnce(func() error {
		l.m.mu.Lock()
		defer l.m.mu.Unlock()
		if s, ok := l.m.sessions[l.header.ID]; ok {
			s.open = false
		}
		return nil
	})
}
