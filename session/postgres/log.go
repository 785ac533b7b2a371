package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/internal/storekit"
)

// log appends to one session over a connection of its own, which holds
// the session's advisory lock.
type log struct {
	s      *store
	mu     sync.Mutex
	conn   *pgx.Conn
	header session.Header
	next   int64
	// last is the time of the newest event: times never go back, even
	// when a log moves to a machine whose clock is behind.
	last   time.Time
	err    error // sticky: the connection, and with it the lock, is gone
	closed bool
}

func (l *log) Header() session.Header { return l.header }

// appendSQL inserts a batch of events and moves the session on, in one
// statement: the events go in only when the session's next sequence
// number is still the one this writer expects (a fence, beside the
// advisory lock).
const appendSQL = `WITH upd AS (
	UPDATE harness_sessions
	SET next_seq = $2 + cardinality($3::bigint[]),
		updated_ns = $7,
		size = size + $8,
		title = CASE WHEN title = ''::bytea THEN coalesce($9::bytea, ''::bytea) ELSE title END
	WHERE id = $1 AND next_seq = $2
	RETURNING id
)
INSERT INTO harness_events (session_id, seq, type, line, body)
SELECT upd.id, e.seq, e.type, e.line, e.body
FROM upd, unnest($3::bigint[], $4::text[], $5::bytea[], $6::text[]) AS e(seq, type, line, body)`

// Append implements session.Log. It returns once the events are
// committed: an acknowledged event is durable as the server's commits
// are (synchronous_commit). A cancelled context stops an append before
// it is sent; one under way runs to its end, so the log is never left in
// doubt.
func (l *log) Append(ctx context.Context, payloads ...session.Payload) ([]session.Event, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil, &harness.Error{Code: harness.CodeClosed, Message: "session: log is closed"}
	}
	if l.err != nil {
		return nil, l.err
	}
	if len(payloads) == 0 {
		return []session.Event{}, nil
	}
	now := l.s.now().UTC()
	if now.Before(l.last) {
		now = l.last
	}
	n := len(payloads)
	events := make([]session.Event, n)
	seqs := make([]int64, n)
	types := make([]string, n)
	lines := make([][]byte, n)
	bodies := make([]string, n)
	var size int64
	title := ""
	for i, p := range payloads {
		if p == nil {
			return nil, fmt.Errorf("session %s: appending a nil payload", l.header.ID)
		}
		events[i] = session.Event{Seq: l.next + int64(i), Time: now, Data: p}
		line, err := events[i].MarshalJSON()
		if err != nil {
			return nil, err
		}
		if len(line) > l.s.maxLine {
			return nil, &harness.Error{Code: harness.CodeTooLarge, Err: &session.EventTooLargeError{Session: l.header.ID, Seq: events[i].Seq, Type: events[i].Type(), Size: len(line), Max: l.s.maxLine}}
		}
		seqs[i], types[i], lines[i], bodies[i] = events[i].Seq, events[i].Type(), line, searchText(line)
		size += int64(len(line) + 1)
		if u, ok := p.(*session.UserMessage); ok && title == "" {
			title = titleOf(u)
		}
	}
	// An append under way is not cut short: a cancel would close the
	// connection and, with it, the lock.
	tag, err := l.conn.Exec(context.WithoutCancel(ctx), appendSQL,
		l.header.ID, l.next, seqs, types, lines, bodies, now.UnixNano(), size, []byte(title))
	if err != nil {
		if isConnErr(l.conn, err) {
			l.err = &harness.Error{Code: harness.CodeClosed, Err: err, Message: fmt.Sprintf(
				"session %s: the connection holding the log's lock failed (%v); whether the last append was written is unknown: open the session again", l.header.ID, err)}
			return nil, l.err
		}
		return nil, dbErr("appending to session "+l.header.ID, err)
	}
	if tag.RowsAffected() != int64(n) {
		l.err = &harness.Error{Code: harness.CodeLocked, Message: fmt.Sprintf(
			"session %s: written elsewhere (or deleted) since this log was opened, so nothing was appended; open the session again", l.header.ID)}
		return nil, l.err
	}
	l.next += int64(n)
	l.last = now
	return events, nil
}

// Sync implements session.Log: every acknowledged append is already
// committed.
func (l *log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return &harness.Error{Code: harness.CodeClosed, Message: "session: log is closed"}
	}
	return nil
}

// Close implements session.Log: it releases the lock by closing the
// log's connection.
func (l *log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The lock goes with the connection, but only once the server has
	// noticed it closed: release it first, so that an Open right after
	// Close finds the session free.
	var unlockErr error
	if l.err == nil {
		_, unlockErr = l.conn.Exec(ctx, `SELECT pg_advisory_unlock(`+lockKey+`)`, l.header.ID)
	}
	if err := errors.Join(unlockErr, l.conn.Close(ctx)); err != nil && l.err == nil {
		return dbErr("closing session "+l.header.ID, err)
	}
	return nil
}

// titleOf is the title a listing shows for a session whose first user
// message is u, as the stores of package session name it.
func titleOf(u *session.UserMessage) string {
	for _, c := range u.Content {
		if c.Text != "" {
			return storekit.Title(c.Text)
		}
	}
	return ""
}
