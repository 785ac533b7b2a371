// Package postgres keeps session logs in PostgreSQL, for programs that
// run sessions on many machines: a session started on one worker resumes
// on any other that reaches the database.
//
// [New] returns a session.Store that passes the same conformance suite
// as the JSONL store (session/sessiontest). Each event is one row holding
// its line exactly as session.Event.MarshalJSON wrote it, so a session
// reads back the same from either store. A row that does not decode is
// skipped with a warning, as the JSONL store skips such a line.
//
// # One writer
//
// There is one writer per session, across processes and machines. A log
// open for appending holds a PostgreSQL advisory lock on a connection of
// its own, and a second Open anywhere fails with harness.CodeLocked. A
// writer that dies releases the lock with its connection.
//
// Each append is one statement that also checks and moves the session's
// next sequence number. Even a writer that lost its lock cannot write
// over another, and sequence numbers stay contiguous. Append returns
// after the commit: an acknowledged event is never lost.
//
// # Search and resume
//
// The store is a search.Searcher, so search.Search (session/search) runs
// in SQL. It finds the workspace's sessions that hold a candidate event,
// newest first, with a trigram index (pg_trgm) on the events' decoded
// text. The index is searched for a literal query itself, and for a
// regular expression for the literals every match contains, when it has
// some. search.Lines then matches the candidates exactly as the JSONL
// store matches its files, so both answer the same search the same way.
//
// A fork (Store.Fork) copies the parent's event rows in one transaction
// that sees one snapshot of it. A session's title and tags
// (session.Meta) are a jsonb column of its row, changed under the row's
// lock with session.Meta.Apply; List filters by tags in SQL.
//
// Resuming a session reads its events in one query and decodes each row
// as the JSONL store decodes a line, with the session package's fast
// decoder (through session.Event.UnmarshalJSON).
//
// # Schema
//
// [New] creates and migrates the schema from versioned migrations
// embedded in the package. Processes starting together migrate once. A
// database migrated by a newer build is refused rather than written with
// an older schema.
//
// The database needs the pg_trgm extension, which ships with PostgreSQL;
// a database owner can create it.
//
// It imports harness, session, session/search, the module's internal
// helpers and the pgx driver (github.com/jackc/pgx/v5), nothing of
// tools, spill or agent.
package postgres
