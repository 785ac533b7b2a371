package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/internal/storekit"
)

// Fork implements session.Store: in one transaction that sees one
// snapshot of the parent, it inserts the new session's row and copies
// the parent's event rows up to the fork point, lines and search text
// as they are.
func (s *store) Fork(ctx context.Context, id string, opts session.ForkOptions) (session.Header, error) {
	if err := ctx.Err(); err != nil {
		return session.Header{}, err
	}
	if err := checkID(id); err != nil {
		return session.Header{}, err
	}
	if opts.ID != "" {
		if err := checkID(opts.ID); err != nil {
			return session.Header{}, err
		}
	}
	if opts.At < 0 {
		return session.Header{}, storeErr(harness.CodeNotFound, "%s: no event %d to fork at", id, opts.At)
	}
	var h session.Header
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		parent, _, err := s.headerNext(ctx, tx, id)
		if err != nil {
			return err
		}
		at := opts.At
		if at == 0 {
			if err := tx.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM harness_events WHERE session_id = $1`, id).Scan(&at); err != nil {
				return err
			}
		} else {
			var ok bool
			if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM harness_events WHERE session_id = $1 AND seq = $2)`, id, at).Scan(&ok); err != nil {
				return err
			}
			if !ok {
				return storeErr(harness.CodeNotFound, "%s: no event %d to fork at", id, at)
			}
		}
		now := s.now()
		h = session.Header{ID: opts.ID, Cwd: parent.Cwd, Parent: parent.ID, ForkSeq: at, Created: now.UTC(), Format: storekit.FormatVersion}
		if h.ID == "" {
			h.ID = storekit.NewID(h.Created)
		}
		hj, err := json.Marshal(h)
		if err != nil {
			return err
		}
		// The parent's title is the fork's when its first user message
		// was copied.
		tag, err := tx.Exec(ctx, `INSERT INTO harness_sessions (id, header, cwd, created_ns, updated_ns, size, title, next_seq)
			SELECT $1, $2, $3, $4, $4, $5 + coalesce((SELECT sum(length(line) + 1) FROM harness_events WHERE session_id = $6 AND seq <= $7), 0),
				CASE WHEN (SELECT min(seq) FROM harness_events WHERE session_id = $6 AND type = 'user') <= $7 THEN p.title ELSE ''::bytea END,
				$7 + 1
			FROM harness_sessions p WHERE p.id = $6
			ON CONFLICT (id) DO NOTHING`,
			h.ID, string(hj), []byte(cleanCwd(h.Cwd)), now.UnixNano(), int64(len(hj)+1), id, at)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return storeErr(harness.CodeExists, "%s: already exists", h.ID)
		}
		_, err = tx.Exec(ctx, `INSERT INTO harness_events (session_id, seq, type, line, body)
			SELECT $1, seq, type, line, body FROM harness_events WHERE session_id = $2 AND seq <= $3`, h.ID, id, at)
		return err
	})
	if err != nil {
		return session.Header{}, dbErr("forking session "+id, err)
	}
	return h, nil
}

// changeMeta applies c to session id's meta column, under the row's
// lock, with session.Meta.Apply.
func (s *store) changeMeta(ctx context.Context, id string, c session.MetaChange) (session.Meta, error) {
	if err := ctx.Err(); err != nil {
		return session.Meta{}, err
	}
	if err := checkID(id); err != nil {
		return session.Meta{}, err
	}
	var out session.Meta
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var mj string
		err := tx.QueryRow(ctx, `SELECT meta FROM harness_sessions WHERE id = $1 FOR UPDATE`, id).Scan(&mj)
		if errors.Is(err, pgx.ErrNoRows) {
			return storeErr(harness.CodeNotFound, "%s: not found", id)
		}
		if err != nil {
			return err
		}
		var cur session.Meta
		if err := json.Unmarshal([]byte(mj), &cur); err != nil {
			return fmt.Errorf("session %s: the stored title and tags do not decode: %w", id, err)
		}
		if out, err = cur.Apply(c); err != nil {
			return err
		}
		next, err := json.Marshal(out)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE harness_sessions SET meta = $2::jsonb WHERE id = $1`, id, string(next))
		return err
	})
	if err != nil {
		return session.Meta{}, dbErr("changing session "+id, err)
	}
	return out, nil
}

// Rename implements session.Store.
func (s *store) Rename(ctx context.Context, id, title string) error {
	_, err := s.changeMeta(ctx, id, session.MetaChange{Title: &title})
	return err
}

// Tag implements session.Store.
func (s *store) Tag(ctx context.Context, id string, add, remove []string) ([]string, error) {
	meta, err := s.changeMeta(ctx, id, session.MetaChange{Add: add, Remove: remove})
	return meta.Tags, err
}
