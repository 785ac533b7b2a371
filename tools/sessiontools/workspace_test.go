package sessiontools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/sessiontools"
)

// A session whose working directory is named "/w/a\.." (a backslash is a
// name character in a slash-separated path) reaches nothing of /w/b.
func TestBackslashWorkspaceReachesNoOtherWorkspace(t *testing.T) {
	for name, store := range stores(t) {
		t.Run(name, func(t *testing.T) {
			log, err := store.Create(context.Background(), session.Header{ID: "victim", Cwd: "/w/b"})
			require.NoError(t, err)
			_, err = log.Append(context.Background(), user("the password is hunter2"))
			require.NoError(t, err)
			require.NoError(t, log.Close())
			env := &tools.Env{SessionID: "attacker", Cwd: `/w/a\..`}

			out, err := run(t, sessiontools.Search(store, sessiontools.Config{}), env, map[string]any{"query": "hunter2"})
			require.NoError(t, err)
			assert.NotContains(t, out, "victim")
			assert.Contains(t, out, "No matches")

			raw, err := json.Marshal(map[string]any{"session_id": "victim", "seq": 1})
			require.NoError(t, err)
			_, err = sessiontools.Read(store, sessiontools.Config{}).Execute(context.Background(), &tools.Call{ID: "x", Name: "session_read", Arguments: string(raw), Env: env})
			var te *harness.Error
			require.ErrorAs(t, err, &te)
			assert.Equal(t, sessiontools.CodeOutsideWorkspace, te.Code)
		})
	}
}
