package fslocal

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTokenRoundTrip(t *testing.T) {
	for _, tok := range []token{
		{meta: 1, proven: true},
		{meta: 0xdeadbeef, proven: false, sum: 42, hasSum: true},
		{meta: ^uint64(0), proven: true, sum: ^uint64(0), hasSum: true},
	} {
		got, ok := parseToken(tok.String())
		require.True(t, ok, tok.String())
		assert.Equal(t, tok, got)
	}
	for _, bad := range []string{"", "x", "00000000000000zzp", "0000000000000001q", "0000000000000001p000000000000000g"} {
		_, ok := parseToken(bad)
		assert.False(t, ok, bad)
	}
}

// TestMatchesWhenMetadataCannotTell covers what a coarse-timestamp file
// system produces: a change within one tick that leaves size, mtime and
// ctime (and so the metadata digest) exactly as they were.
func TestMatchesWhenMetadataCannotTell(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	m := meta{dev: 1, ino: 2, size: 5, mtime: now.UnixNano(), ctime: now.UnixNano(), hasCtime: true}
	require.False(t, m.provenAt(now.Add(time.Second)), "a file changed a second ago is racy")
	require.True(t, m.provenAt(now.Add(3*time.Second)))

	seen := token{meta: m.digest(), proven: false, sum: sumBytes([]byte("aaaa\n")), hasSum: true}.String()
	ok, err := matches(seen, m, func() (uint64, error) { return sumBytes([]byte("bbbb\n")), nil })
	require.NoError(t, err)
	assert.False(t, ok, "same metadata, different content: stale")
	ok, _ = matches(seen, m, func() (uint64, error) { return sumBytes([]byte("aaaa\n")), nil })
	assert.True(t, ok, "same metadata, same content: fresh")

	// Proven metadata decides without reading.
	proven := token{meta: m.digest(), proven: true, sum: 7, hasSum: true}.String()
	ok, err = matches(proven, m, func() (uint64, error) { t.Fatal("content read"); return 0, nil })
	require.NoError(t, err)
	assert.True(t, ok)

	// Changed metadata: the content decides (an identical rewrite matches).
	moved := m
	moved.ino = 3
	ok, _ = matches(seen, moved, func() (uint64, error) { return sumBytes([]byte("aaaa\n")), nil })
	assert.True(t, ok)
	// ... unless the version has no content sum.
	bare := token{meta: m.digest(), proven: true}.String()
	ok, _ = matches(bare, moved, func() (uint64, error) { t.Fatal("content read"); return 0, nil })
	assert.False(t, ok)

	// A failing read is reported.
	_, err = matches(seen, moved, func() (uint64, error) { return 0, errors.New("io") })
	assert.Error(t, err)
	// Without change times (some platforms) nothing is ever proven.
	assert.False(t, meta{mtime: 1}.provenAt(now))
}
