package postgres

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/internal/storekit"
)

// store is the session.Store New returns.
type store struct {
	pool    *pgxpool.Pool
	maxLine int
	now     func() time.Time
}

// Config configures the store New returns. The zero value is the
// default.
type Config struct {
	// MaxLineSize is the longest event line, in bytes, the store accepts;
	// 0 means 16 MiB. Append refuses a longer event as the JSONL store
	// does. A negative size is an error of New
	// (harness.CodeInvalidOption).
	MaxLineSize int
}

// New returns a session.Store keeping its sessions in the database pool
// connects to, after bringing the schema up to date (the migrations are
// embedded and versioned; processes starting together migrate once). It
// is safe for concurrent use by any number of goroutines, processes and
// machines sharing the database, and it is a search.Searcher (package
// session/search uses it for search.Search). The pool stays the caller's:
// close it after the store's last use. Each log open for appending holds
// one connection of its own, taken out of the pool, and closes it on
// Close.
func New(ctx context.Context, pool *pgxpool.Pool, cfg Config) (session.Store, error) {
	s := &store{pool: pool, maxLine: storekit.DefaultMaxLineSize, now: time.Now}
	switch {
	case cfg.MaxLineSize < 0:
		return nil, &harness.Error{Code: harness.CodeInvalidOption, Message: fmt.Sprintf("postgres: Config.MaxLineSize is %d: the maximum line size must be positive (0 means the default)", cfg.MaxLineSize)}
	case cfg.MaxLineSize > 0:
		s.maxLine = cfg.MaxLineSize
	}
	if pool == nil {
		return nil, &harness.Error{Code: harness.CodeInvalidOption, Message: "postgres: New needs a connection pool (pgxpool.New)"}
	}
	if _, err := migrate(ctx, pool); err != nil {
		return nil, err
	}
	return s, nil
}

// MaxLineSize returns the longest event line the store accepts
// (sessiontest checks the bound a store reports this way).
func (s *store) MaxLineSize() int { return s.maxLine }

// storeErr returns the error the module's stores report for code.
func storeErr(code harness.Code, format string, args ...any) error {
	return &harness.Error{Code: code, Message: "session " + fmt.Sprintf(format, args...)}
}

// dbErr wraps a database failure: a context's error stays matchable, a
// lost connection or a refusal of the server is harness.CodeIO.
func dbErr(what string, err error) error {
	var he *harness.Error
	switch {
	case errors.As(err, &he):
		return err
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("postgres: %s: %w", what, err)
	}
	return &harness.Error{Code: harness.CodeIO, Err: err, Message: "postgres: " + what + ": " + err.Error()}
}

func checkID(id string) error {
	if !storekit.ValidID(id) {
		return storeErr(harness.CodeInvalidID, "%q: invalid session id (letters, digits, '_', '-' and '.', at most 128 bytes)", id)
	}
	return nil
}

// lockKey is the SQL expression of a session's advisory lock key.
const lockKey = `hashtextextended('harness.session:' || current_schema() || ':' || $1, 0)`

// cleanCwd is the cwd column of a header: path.Clean of its cwd, or empty.
func cleanCwd(cwd string) string {
	if cwd == "" {
		return ""
	}
	return path.Clean(cwd)
}

// Create implements session.Store.
func (s *store) Create(ctx context.Context, h session.Header) (session.Log, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	now := s.now()
	if h.Created.IsZero() {
		h.Created = now
	}
	h.Created = h.Created.UTC()
	if h.ID == "" {
		h.ID = storekit.NewID(h.Created)
	}
	if err := checkID(h.ID); err != nil {
		return nil, err
	}
	h.Format = storekit.FormatVersion
	hj, err := json.Marshal(h)
	if err != nil {
		return nil, fmt.Errorf("session %s: encoding header: %w", h.ID, err)
	}
	conn, err := s.writer(ctx)
	if err != nil {
		return nil, err
	}
	locked, err := tryLock(ctx, conn, h.ID)
	if err != nil {
		conn.Close(context.Background())
		return nil, dbErr("creating session "+h.ID, err)
	}
	if !locked {
		conn.Close(context.Background())
		return nil, storeErr(harness.CodeExists, "%s: already exists (and is open for appending)", h.ID)
	}
	tag, err := conn.Exec(ctx, `INSERT INTO harness_sessions (id, header, cwd, created_ns, updated_ns, size)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING`,
		h.ID, string(hj), []byte(cleanCwd(h.Cwd)), h.Created.UnixNano(), now.UnixNano(), int64(len(hj)+1))
	if err == nil && tag.RowsAffected() == 0 {
		err = storeErr(harness.CodeExists, "%s: already exists", h.ID)
	}
	if err != nil {
		unlockClose(conn, h.ID)
		return nil, dbErr("creating session "+h.ID, err)
	}
	return &log{s: s, conn: conn, header: h, next: 1}, nil
}

// writer returns a connection of its own for a log: one taken out of the
// pool, so that the pool's connection hooks have run on it.
func (s *store) writer(ctx context.Context) (*pgx.Conn, error) {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, dbErr("connecting", err)
	}
	return c.Hijack(), nil
}

// unlockClose closes a connection that holds the session's lock,
// releasing the lock first: the server drops a closed connection's locks
// only once it notices, and until then a Create or Open of the session
// right after (on a loaded machine, even a while after) would find it
// taken, and a session that does not exist would look like one that
// does.
func unlockClose(conn *pgx.Conn, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _ = conn.Exec(ctx, `SELECT pg_advisory_unlock(`+lockKey+`)`, id)
	_ = conn.Close(ctx)
}

func tryLock(ctx context.Context, conn *pgx.Conn, id string) (bool, error) {
	var ok bool
	err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(`+lockKey+`)`, id).Scan(&ok)
	return ok, err
}

// Open implements session.Store. The session's advisory lock is taken on
// a connection of the log's own, which it holds until Close: a second
// writer, in this process or any other, gets harness.CodeLocked, and a
// writer that dies releases the lock with its connection.
func (s *store) Open(ctx context.Context, id string) (session.Log, *session.Transcript, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	if err := checkID(id); err != nil {
		return nil, nil, err
	}
	conn, err := s.writer(ctx)
	if err != nil {
		return nil, nil, err
	}
	fail := func(err error) (session.Log, *session.Transcript, error) {
		conn.Close(context.Background())
		return nil, nil, err
	}
	locked, err := tryLock(ctx, conn, id)
	if err != nil {
		return fail(dbErr("opening session "+id, err))
	}
	if !locked {
		if _, err := s.header(ctx, conn, id); err != nil {
			return fail(err)
		}
		return fail(storeErr(harness.CodeLocked, "%s: open for appending elsewhere; close it there first", id))
	}
	// Nobody appends while the lock is held: the header, the events and
	// the next sequence number read below agree.
	h, next, err := s.headerNext(ctx, conn, id)
	if err != nil {
		unlockClose(conn, id)
		return nil, nil, err
	}
	tr, err := s.load(ctx, conn, h, next)
	if err != nil {
		unlockClose(conn, id)
		return nil, nil, err
	}
	l := &log{s: s, conn: conn, header: h, next: next}
	if n := len(tr.Events); n > 0 {
		l.last = tr.Events[n-1].Time
	}
	return l, tr, nil
}

// querier is what Load needs of a pool or a connection.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func (s *store) header(ctx context.Context, q querier, id string) (session.Header, error) {
	h, _, err := s.headerNext(ctx, q, id)
	return h, err
}

func (s *store) headerNext(ctx context.Context, q querier, id string) (session.Header, int64, error) {
	var hj string
	var next int64
	err := q.QueryRow(ctx, `SELECT header, next_seq FROM harness_sessions WHERE id = $1`, id).Scan(&hj, &next)
	if errors.Is(err, pgx.ErrNoRows) {
		return session.Header{}, 0, storeErr(harness.CodeNotFound, "%s: not found", id)
	}
	if err != nil {
		return session.Header{}, 0, dbErr("reading session "+id, err)
	}
	var h session.Header
	if err := json.Unmarshal([]byte(hj), &h); err != nil {
		return session.Header{}, 0, fmt.Errorf("session %s: the stored header does not decode: %w", id, err)
	}
	if h.Format > storekit.FormatVersion {
		return session.Header{}, 0, &harness.Error{Code: harness.CodeUnsupportedFormat,
			Message: fmt.Sprintf("session %s: written by a newer harness (log format %d, this build reads up to %d); upgrade the harness to open it", id, h.Format, storekit.FormatVersion)}
	}
	return h, next, nil
}

// Load implements session.Store.
func (s *store) Load(ctx context.Context, id string) (*session.Transcript, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkID(id); err != nil {
		return nil, err
	}
	var tr *session.Transcript
	// One snapshot for the header and the events, while a writer may be
	// appending elsewhere.
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		h, next, err := s.headerNext(ctx, tx, id)
		if err != nil {
			return err
		}
		tr, err = s.load(ctx, tx, h, next)
		return err
	})
	if err != nil {
		return nil, dbErr("loading session "+id, err)
	}
	return tr, nil
}

// load reads a session's events in order. Each row holds one event line
// as Append encoded it; a row that does not decode (written by another
// build, or changed by hand) or is longer than the store's maximum line
// size is skipped with a warning, as the JSONL store skips such a line,
// and an event of a type this build does not know is kept with one.
// Lines are numbered as in a JSONL log: the header is line 1.
// next, the session's next sequence number, sizes the events.
func (s *store) load(ctx context.Context, q querier, h session.Header, next int64) (*session.Transcript, error) {
	// The rows are read as the server sends them (seq in binary, the line
	// as its bytes), one at a time, without scanning into Go values: each
	// line is decoded straight from the row's buffer.
	rows, err := q.Query(ctx, `SELECT seq, line FROM harness_events WHERE session_id = $1 ORDER BY seq`, h.ID)
	if err != nil {
		return nil, dbErr("loading session "+h.ID, err)
	}
	defer rows.Close()
	tr := &session.Transcript{Header: h}
	warn := func(line int, format string, args ...any) {
		tr.Warnings = append(tr.Warnings, session.Warning{Line: line, Message: fmt.Sprintf(format, args...)})
	}
	for lineNo := 2; rows.Next(); lineNo++ {
		if lineNo%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		raw := rows.RawValues()
		if len(raw) != 2 {
			return nil, dbErr("loading session "+h.ID, fmt.Errorf("a row of %d columns, not 2", len(raw)))
		}
		line := raw[1]
		if len(line) > s.maxLine {
			warn(lineNo, "event %d of %d bytes, more than the maximum line size of %d bytes, skipped unread", rowSeq(rows, raw[0]), len(line), s.maxLine)
			continue
		}
		var e session.Event
		// UnmarshalJSON decodes the line once; json.Unmarshal would
		// first scan it whole to check it.
		if err := e.UnmarshalJSON(line); err != nil {
			warn(lineNo, "unreadable event %d skipped (%d bytes): %v", rowSeq(rows, raw[0]), len(line), err)
			continue
		}
		if u, ok := e.Data.(*session.Unknown); ok {
			warn(lineNo, "event %d has type %q, unknown to this build; skipped", e.Seq, u.Type)
		}
		if tr.Events == nil {
			tr.Events = make([]session.Event, 0, min(max(next-1, 1), 1<<20))
		}
		tr.Events = append(tr.Events, e)
	}
	if err := rows.Err(); err != nil {
		return nil, dbErr("loading session "+h.ID, err)
	}
	return tr, nil
}

// rowSeq is the seq column of the current row, raw as the server sent it:
// eight bytes, big-endian, in the binary format pgx asks for; otherwise
// it is scanned.
func rowSeq(rows pgx.Rows, raw []byte) int64 {
	if fd := rows.FieldDescriptions(); len(fd) > 0 && fd[0].Format == pgx.BinaryFormatCode && len(raw) == 8 {
		return int64(binary.BigEndian.Uint64(raw))
	}
	var seq int64
	if rows.Scan(&seq, nil) != nil {
		return 0
	}
	return seq
}

// List implements session.Store.
func (s *store) List(ctx context.Context, opts session.ListOptions) ([]session.Info, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	where, args := workspaceFilter(opts.Workspace, nil)
	if len(opts.Tags) > 0 {
		tags, err := json.Marshal(opts.Tags)
		if err != nil {
			return nil, err
		}
		args = append(args, string(tags))
		if where == "" {
			where = " WHERE"
		} else {
			where += " AND"
		}
		where += fmt.Sprintf(` meta -> 'tags' @> $%d::jsonb`, len(args))
	}
	sql := `SELECT header, title, updated_ns, size, meta FROM harness_sessions` + where + orderNewest
	if opts.Limit > 0 {
		args = append(args, opts.Limit)
		sql += fmt.Sprintf(" LIMIT $%d", len(args))
	}
	rows, err := s.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, dbErr("listing sessions", err)
	}
	infos, err := scanInfos(rows)
	if err != nil {
		return nil, dbErr("listing sessions", err)
	}
	return infos, nil
}

// orderNewest orders sessions as session.Store.List does.
const orderNewest = ` ORDER BY updated_ns DESC, created_ns DESC, id DESC`

// workspaceFilter returns a WHERE clause (or "") keeping sessions whose
// cwd is workspace or below it, as session.Below decides, and args with
// its parameters appended.
func workspaceFilter(workspace string, args []any) (string, []any) {
	if workspace == "" {
		return "", args
	}
	ws := path.Clean(workspace)
	prefix := ws + "/"
	if ws == "/" {
		prefix = "/"
	}
	args = append(args, []byte(ws), []byte(likeEscape(prefix)+"%"))
	n := len(args)
	return fmt.Sprintf(` WHERE cwd <> ''::bytea AND (cwd = $%d OR cwd LIKE $%d)`, n-1, n), args
}

// likeEscape quotes the wildcards of a LIKE pattern (the escape
// character is the backslash, LIKE's default).
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func scanInfos(rows pgx.Rows) ([]session.Info, error) {
	defer rows.Close()
	var out []session.Info
	for rows.Next() {
		var hj, mj string
		var title []byte
		var updated, size int64
		if err := rows.Scan(&hj, &title, &updated, &size, &mj); err != nil {
			return nil, err
		}
		var in session.Info
		if err := json.Unmarshal([]byte(hj), &in.Header); err != nil {
			continue // not a header this build reads: not listed
		}
		in.Title = string(title)
		in.Updated = time.Unix(0, updated).UTC()
		in.Size = size
		var meta session.Meta
		if json.Unmarshal([]byte(mj), &meta) == nil {
			meta.Describe(&in)
		}
		out = append(out, in)
	}
	return out, rows.Err()
}

// Delete implements session.Store. A session open for appending anywhere
// is not deleted (harness.CodeLocked).
func (s *store) Delete(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkID(id); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var free bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock(`+lockKey+`)`, id).Scan(&free); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `DELETE FROM harness_sessions WHERE id = $1`, id)
		switch {
		case err != nil:
			return err
		case tag.RowsAffected() == 0:
			return storeErr(harness.CodeNotFound, "%s: not found", id)
		case !free:
			return storeErr(harness.CodeLocked, "%s: open for appending elsewhere; close it there first", id)
		}
		return nil
	})
	if err != nil {
		return dbErr("deleting session "+id, err)
	}
	return nil
}

// isConnErr reports a failure that leaves a connection unusable.
func isConnErr(conn *pgx.Conn, err error) bool {
	var pe *pgconn.PgError
	return conn.IsClosed() || !errors.As(err, &pe)
}
