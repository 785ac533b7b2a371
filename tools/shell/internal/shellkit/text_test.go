package shellkit_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/tools/shell/internal/shellkit"
)

func TestDurText(t *testing.T) {
	for d, want := range map[time.Duration]string{
		450 * time.Millisecond:  "450 ms",
		2500 * time.Millisecond: "2.5 s",
		3 * time.Second:         "3 s",
		125 * time.Second:       "2 min 5 s",
		30 * time.Minute:        "30 min",
	} {
		assert.Equal(t, want, shellkit.Dur(d))
	}
}

func TestWildMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"*_API_KEY", "DEEPSEEK_API_KEY", true},
		{"*_API_KEY", "deepseek_api_key", true},
		{"*_API_KEY", "API_KEY", false},
		{"*TOKEN*", "GITHUB_TOKEN", true},
		{"*TOKEN*", "TOKENIZERS_PARALLELISM", true},
		{"AWS_*", "AWS_SECRET_ACCESS_KEY", true},
		{"AWS_*", "XAWS_", false},
		{"LC_*", "LC_ALL", true},
		{"PATH", "PATH", true},
		{"PATH", "PATHX", false},
		{"PG*PASS*", "PGPASSWORD", true},
		{"*", "", true},
		{"a*b*c", "abc", true},
		{"a*b*c", "acb", false},
	} {
		assert.Equal(t, c.want, shellkit.WildMatch(c.pattern, c.name), "%s %s", c.pattern, c.name)
	}
}

// FuzzWildMatch compares the environment patterns' matcher with a
// regular expression of the same pattern.
func FuzzWildMatch(f *testing.F) {
	f.Add("*_API_KEY", "DEEPSEEK_API_KEY")
	f.Add("a*b*c", "acb")
	f.Add("*", "")
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if !strings.ContainsRune(pattern, 0) {
			parts := strings.Split(strings.ToUpper(pattern), "*")
			for i, p := range parts {
				parts[i] = regexp.QuoteMeta(p)
			}
			re := regexp.MustCompile("(?s)^" + strings.Join(parts, ".*") + "$")
			require.Equal(t, re.MatchString(strings.ToUpper(name)), shellkit.WildMatch(pattern, name), "%q %q", pattern, name)
		}
	})
}
