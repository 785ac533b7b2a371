package secretenv

import (
	"strings"
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

// splitMatch is Match as it was first written, with strings.Split: the
// reference the faster one must agree with.
func splitMatch(pattern, name string) bool {
	pattern, name = strings.ToUpper(pattern), strings.ToUpper(name)
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(name, p)
		if i < 0 {
			return false
		}
		name = name[i+len(p):]
	}
	return strings.HasSuffix(name, parts[len(parts)-1])
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"PATH", "path", true}, {"PATH", "PATHS", false}, {"*", "", true}, {"**", "X", true},
		{"*_KEY", "A_KEY", true}, {"*_KEY", "_KEY", true}, {"*_KEY", "A_KEYS", false},
		{"PG*PASS*", "PGPASSWORD", true}, {"PG*PASS*", "PGPAS", false}, {"A*B*C", "ABC", true},
		{"A*B*C", "AXBXC", true}, {"A*B*C", "ACB", false}, {"A*A", "A", false}, {"*ab*", "xABy", true},
	} {
		assert.Equal(t, c.want, Match(c.pattern, c.name), "%q %q", c.pattern, c.name)
		assert.Equal(t, c.want, splitMatch(c.pattern, c.name), "reference: %q %q", c.pattern, c.name)
	}
}

func TestSecretAllocatesNothing(t *testing.T) {
	// Every command's environment is checked against every pattern.
	allocs := testing.AllocsPerRun(100, func() {
		for _, n := range []string{"PATH", "HOME", "OPENAI_API_KEY", "GOFLAGS", "XDG_CONFIG_HOME"} {
			Secret(n)
		}
	})
	assert.Zero(t, allocs, "allocations checking five upper-case names")
}

func FuzzMatch(f *testing.F) {
	f.Add("PG*PASS*", "pgpassword")
	f.Add("A*B*C", "AXBXC")
	f.Add("**", "")
	f.Add("*_KEY", "a_keys")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if got, want := Match(pattern, name), splitMatch(pattern, name); got != want {
			t.Fatalf("Match(%q, %q) = %v, the reference says %v", pattern, name, got, want)
		}
	})
}
