package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
	"github.com/go-harness/harness/tools/toolstest"
)

func TestWebTools(t *testing.T) {
	noKey := func(string) string { return "" }
	withKey := func(k string) string {
		if k == braveKeyEnv {
			return "key"
		}
		return ""
	}
	pol, err := permission.New(permission.Rules{Home: t.TempDir()})
	require.NoError(t, err)
	ts, search, err := webTools(noKey, pol)
	require.NoError(t, err)
	assert.False(t, search)
	assert.Equal(t, []string{"web_fetch"}, names(ts))
	ts, search, err = webTools(withKey, pol)
	require.NoError(t, err)
	assert.True(t, search)
	assert.Equal(t, []string{"web_fetch", "web_search"}, names(ts))
	assert.Contains(t, webPrompt(true), "web_search")
	assert.NotContains(t, webPrompt(false), "web_search")
}

// TestWebFetchLoopbackNeedsARule: a loopback server is refused unless
// -allow 'WebFetch(domain:127.0.0.1)' is given.
func TestWebFetchLoopbackNeedsARule(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "local page")
	}))
	defer srv.Close()
	run := func(allow ...string) *harness.ToolResult {
		pol, err := permission.New(permission.Rules{Allow: allow, Home: t.TempDir()})
		require.NoError(t, err)
		ts, _, err := webTools(func(string) string { return "" }, pol)
		require.NoError(t, err)
		env := toolstest.NewEnv()
		defer env.Close()
		res, err := env.Call(context.Background(), ts[0], map[string]any{"url": srv.URL})
		require.NoError(t, err)
		return res
	}
	res := run()
	assert.Equal(t, harness.CodeDenied, res.Code)
	res = run("WebFetch(domain:127.0.0.1)")
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "local page")
}

func names(ts []tools.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Spec().Name)
	}
	return out
}
