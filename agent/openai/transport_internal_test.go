package openai

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The chat completions resource sits under the base URL as under a
// directory, whether or not the base ends in a slash.
func TestEndpointURL(t *testing.T) {
	none := func(string) (string, bool) { return "", false }
	for base, want := range map[string]string{
		"https://api.deepseek.com":        "https://api.deepseek.com/chat/completions",
		"https://api.deepseek.com/":       "https://api.deepseek.com/chat/completions",
		"https://api.deepseek.com/beta":   "https://api.deepseek.com/beta/chat/completions",
		"http://127.0.0.1:8080/v1":        "http://127.0.0.1:8080/v1/chat/completions",
		"https://gw.example/openai/v1/":   "https://gw.example/openai/v1/chat/completions",
		"https://gw.example/a%2Fb/v1":     "https://gw.example/a%2Fb/v1/chat/completions",
		"https://gw.example/v1?team=core": "https://gw.example/v1/chat/completions",
	} {
		got, _, err := endpoint(base, "k", nil, false, none)
		require.NoError(t, err, base)
		assert.Equal(t, want, got, base)
	}
}

// Another host gets the key, the caller's headers and nothing from the
// environment: no OpenAI-Organization or OpenAI-Project, even when the
// caller names them.
func TestEndpointHeadersOtherHost(t *testing.T) {
	env := func(k string) (string, bool) { return "from-env-" + k, true }
	_, h, err := endpoint("https://api.deepseek.com", "sk-key", http.Header{
		"X-Title":             {"a", "b"},
		"Openai-Organization": {"org-caller"},
		"User-Agent":          {"host-app/1.0"},
	}, false, env)
	require.NoError(t, err)
	assert.Equal(t, "Bearer sk-key", h.Get("Authorization"))
	assert.Equal(t, []string{"a", "b"}, h.Values("X-Title"))
	assert.Equal(t, "host-app/1.0", h.Get("User-Agent"), "the caller's header replaces the default")
	assert.Equal(t, "application/json", h.Get("Content-Type"))
	assert.Empty(t, h.Get("OpenAI-Organization"))
	assert.Empty(t, h.Get("OpenAI-Project"))
	for k, vs := range h {
		for _, v := range vs {
			assert.NotContains(t, v, "from-env", k)
		}
	}
	_, h, err = endpoint("http://127.0.0.1:1", "", nil, false, env)
	require.NoError(t, err)
	assert.Empty(t, h.Get("Authorization"), "no key, no Authorization header")
}
