package storekit

import (
	"regexp"
	"strings"
	"testing"
)

// idRule is the rule ValidID implements, as the regular expression it
// replaced: letters, digits, '_', '-' and '.', not starting with a
// punctuation mark, at most 128 bytes, and no "..".
var idRule = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

func byRule(id string) bool { return idRule.MatchString(id) && !strings.Contains(id, "..") }

func TestValidIDMatchesTheRule(t *testing.T) {
	for _, id := range []string{"", "a", "A0", "20261205-160622-493227c52fb7", "a.b", "a..b", ".a", "-a", "_a", "a/b", "a b", "é",
		strings.Repeat("a", 128), strings.Repeat("a", 129), "a\n", "a-", "a_", "a."} {
		if got, want := ValidID(id), byRule(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}

// FuzzValidID checks ValidID against the regular expression it replaced.
func FuzzValidID(f *testing.F) {
	f.Add("20261205-160622-493227c52fb7")
	f.Add("a..b")
	f.Add(strings.Repeat("z", 128))
	f.Fuzz(func(t *testing.T, id string) {
		if got, want := ValidID(id), byRule(id); got != want {
			t.Fatalf("ValidID(%q) = %v, the rule says %v", id, got, want)
		}
	})
}
