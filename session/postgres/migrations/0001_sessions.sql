-- Sessions and their events. One row per session holds its header and
-- what a listing shows; one row per event holds the event's line exactly
-- as session.Event.MarshalJSON wrote it.
CREATE TABLE harness_sessions (
	id         text COLLATE "C" PRIMARY KEY,
	-- The header, as JSON.
	header     text   NOT NULL,
	-- path.Clean of the header's cwd (empty when it has none): listing
	-- and search scope sessions by it. Bytes, as a cwd may hold any.
	cwd        bytea  NOT NULL,
	created_ns bigint NOT NULL,
	updated_ns bigint NOT NULL,
	size       bigint NOT NULL,
	-- What a listing shows as the title, in bytes (it may hold a NUL).
	title      bytea  NOT NULL DEFAULT '',
	-- The sequence number the next event gets. Each append checks and
	-- moves it in the statement that inserts the events: a writer that
	-- lost its lock cannot write over another.
	next_seq   bigint NOT NULL DEFAULT 1
);
CREATE INDEX harness_sessions_cwd ON harness_sessions (cwd);
CREATE INDEX harness_sessions_newest ON harness_sessions (updated_ns DESC, created_ns DESC, id DESC);

CREATE TABLE harness_events (
	session_id text COLLATE "C" NOT NULL REFERENCES harness_sessions (id) ON DELETE CASCADE,
	seq        bigint NOT NULL,
	type       text   NOT NULL,
	-- The event's line, byte for byte.
	line       bytea  NOT NULL,
	-- Every string of the event, decoded: what a search may match, for the
	-- trigram index.
	body       text   NOT NULL,
	PRIMARY KEY (session_id, seq)
);

CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX harness_events_body ON harness_events USING gin (body gin_trgm_ops);
