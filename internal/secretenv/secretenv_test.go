package secretenv

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestSecret(t *testing.T) {
	for _, n := range []string{"OPENAI_API_KEY", "GITHUB_TOKEN", "aws_secret_access_key", "AWS_REGION", "DATABASE_URL", "MY_DB_DSN", "PGPASSWORD", "SSH_AUTH_SOCK", "BRAVE_SEARCH_API_KEY", "NPM_TOKEN", "GH_PAT"} {
		assert.True(t, Secret(n), n)
	}
	for _, n := range []string{"PATH", "HOME", "GOPATH", "GOFLAGS", "LANG", "TERM", "KEYBOARD", "XDG_CONFIG_HOME"} {
		assert.False(t, Secret(n), n)
	}
	assert.Equal(t, []string{"PATH=/bin", "GITHUB_TOKEN=x"}, Filter([]string{"PATH=/bin", "OPENAI_API_KEY=k", "GITHUB_TOKEN=x"}, []string{"github_*"}))
}
