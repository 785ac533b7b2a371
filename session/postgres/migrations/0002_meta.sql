-- A session's title and tags (session.Meta), kept beside its log: a
-- rename or a tag changes this column, never the events.
ALTER TABLE harness_sessions ADD COLUMN meta jsonb NOT NULL DEFAULT '{}'::jsonb;
CREATE INDEX harness_sessions_tags ON harness_sessions USING gin ((meta -> 'tags'));
