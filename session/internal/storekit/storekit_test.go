package storekit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTitle(t *testing.T) {
	long := strings.Repeat("é", 100)
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"  fix the build  ", "fix the build"},
		{"\n\n  first line\nsecond", "first line"},
		{long, strings.Repeat("é", 79) + "…"},
		{strings.Repeat("a", 80), strings.Repeat("a", 80)},
	} {
		assert.Equal(t, tc.want, Title(tc.in), "%q", tc.in)
	}
}

func TestNewID(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.FixedZone("x", 3600))
	a, b := NewID(at), NewID(at)
	assert.Regexp(t, `^20260304-040607-[0-9a-f]{12}$`, a)
	assert.NotEqual(t, a, b)
}

func TestLogFiles(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i, name := range []string{"a.jsonl", "b.jsonl", "c.jsonl", "bad id.jsonl", "d.txt"} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o600))
		require.NoError(t, os.Chtimes(p, base, base.Add(time.Duration(i%2)*time.Minute)))
	}
	require.NoError(t, os.Mkdir(filepath.Join(dir, "e.jsonl"), 0o700))
	valid := func(id string) bool { return !strings.Contains(id, " ") }
	files, err := LogFiles(dir, map[string]bool{"c": true}, valid)
	require.NoError(t, err)
	var ids []string
	for _, f := range files {
		ids = append(ids, f.ID)
	}
	assert.Equal(t, []string{"b", "a"}, ids, "newest first; skipped, invalid, non-log and directory entries left out")
	assert.Equal(t, int64(1), files[0].Size)

	none, err := LogFiles(filepath.Join(dir, "missing"), nil, valid)
	require.NoError(t, err)
	assert.Empty(t, none, "a missing directory holds no logs")
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"20261129-192228-3f9a1c2b7d4e": true,
		"a":                            true,
		"a.b_c-d":                      true,
		strings.Repeat("a", 128):       true,
		strings.Repeat("a", 129):       false,
		"":                             false,
		".hidden":                      false,
		"-flag":                        false,
		"a..b":                         false,
		"../etc/passwd":                false,
		"a/b":                          false,
		`a\b`:                          false,
		"a b":                          false,
	} {
		if got := ValidID(id); got != want {
			t.Errorf("ValidID(%q) = %v, want %v", id, got, want)
		}
	}
}
