package session_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/search"
)

func TestBelow(t *testing.T) {
	cases := []struct {
		dir, workspace string
		below          bool
	}{
		{"/w/a", "/w/a", true},
		{"/w/a/b", "/w/a", true},
		{"/w/a/b/", "/w/a/", true},
		{"/w/ab", "/w/a", false},
		{"/w/b", "/w/a", false},
		{"/w", "/w/a", false},
		{"/anything", "/", true},
		{"/", "/", true},
		{"/w/a/../b", "/w/a", false},
		{"/w/b", "/w/a/..", true}, // a real "..": the workspace is /w
		// A backslash is a name character on a slash-separated path: the
		// workspace "/w/a\.." is the directory named `a\..` in /w, which
		// holds nothing of /w/b.
		{"/w/b", `/w/a\..`, false},
		{"/w/b", `/w/a\..\b`, false},
		{`/w/a\..\b`, "/w", true},
		{`/w/a\..\b`, `/w/a\..\b`, true},
		{`/w/a\..\b`, "/w/b", false},
		{`/w/a\b`, "/w/a", false},
		{"", "/w", false},
		{"/w", "", false},
		{"", "", false},
	}
	for _, c := range cases {
		assert.Equal(t, c.below, session.Below(c.dir, c.workspace), "Below(%q, %q)", c.dir, c.workspace)
	}
}

// A workspace named with a backslash and ".." reaches no other
// workspace's sessions, in either store, by listing or by search.
func TestBackslashWorkspaceIsNoEscape(t *testing.T) {
	ctx := context.Background()
	for name, s := range map[string]session.Store{"jsonl": session.NewJSONL(t.TempDir(), session.StoreConfig{}), "memory": session.NewMemory(session.StoreConfig{})} {
		t.Run(name, func(t *testing.T) {
			for id, cwd := range map[string]string{"victim": "/w/b", "own": `/w/a\..`} {
				log, err := s.Create(ctx, session.Header{ID: id, Cwd: cwd})
				require.NoError(t, err)
				_, err = log.Append(ctx, user("the secret of "+id))
				require.NoError(t, err)
				require.NoError(t, log.Close())
			}
			infos, err := s.List(ctx, session.ListOptions{Workspace: `/w/a\..`})
			require.NoError(t, err)
			assert.Equal(t, []string{"own"}, infoIDs(infos))
			ms, err := search.Search(ctx, s, search.Options{Query: "secret", Workspace: `/w/a\..`})
			require.NoError(t, err)
			require.Len(t, ms, 1)
			assert.Equal(t, "own", ms[0].Session.Header.ID)
			ms, err = search.Search(ctx, s, search.Options{Query: "secret", Workspace: "/w/b"})
			require.NoError(t, err)
			require.Len(t, ms, 1)
			assert.Equal(t, "victim", ms[0].Session.Header.ID)
		})
	}
}

func infoIDs(infos []session.Info) []string {
	out := []string{}
	for _, in := range infos {
		out = append(out, in.Header.ID)
	}
	return out
}
