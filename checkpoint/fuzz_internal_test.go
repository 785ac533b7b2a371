package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	iofs "io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/attdigest"
	"github.com/go-harness/harness/session/attachments"
)

func sampleEntries() []Entry {
	d := attdigest.Of([]byte("x"))
	return []Entry{
		{Path: "a", Kind: KindDir, Mode: 0o755},
		{Path: "a/b c.txt", Kind: KindFile, Mode: 0o644, Size: 1, Digest: d, Kept: true, Stat: Stat{MtimeNS: 1700000000123456789, CtimeNS: 1700000000123456790, Ino: 42, Dev: 2049}},
		{Path: "a/link", Kind: KindSymlink, Mode: 0o777, Size: 9, Target: "../ü\n\"x\"", Stat: Stat{MtimeNS: 5}},
		{Path: "a\xff\"quote\"", Kind: KindFile, Mode: 0o600, Size: 1 << 40, Digest: d},
		{Path: "y", Kind: KindFile, Mode: 0o644, Size: 1, Digest: d, Kept: true, Pack: attdigest.Of([]byte("pack")), Offset: 12345},
		{Path: "z", Kind: KindFile, Mode: 0o644},
	}
}

func TestChunkRoundTrip(t *testing.T) {
	es := sampleEntries()
	data := encodeChunk(es)
	got, err := parseChunk(data, "")
	require.NoError(t, err)
	assert.Equal(t, es, got)
	assert.Equal(t, data, encodeChunk(got), "the encoding is canonical")
	_, err = parseChunk(data, "b")
	assert.Error(t, err, "entries must come after the previous chunk's")
}

func TestManifestRefusesDamage(t *testing.T) {
	for name, data := range map[string]string{
		"no magic":        "f 644 1 - - 0 0 0 0 \"a\"\n",
		"unterminated":    chunkMagic + "f 644 1 - - 0 0 0 0 \"a\"",
		"dot dot":         chunkMagic + "f 644 1 - - 0 0 0 0 \"../a\"\n",
		"absolute":        chunkMagic + "f 644 1 - - 0 0 0 0 \"/etc/passwd\"\n",
		"git":             chunkMagic + "f 644 1 - - 0 0 0 0 \".git/config\"\n",
		"out of order":    chunkMagic + "f 644 1 - - 0 0 0 0 \"b\"\nf 644 1 - - 0 0 0 0 \"a\"\n",
		"duplicate":       chunkMagic + "f 644 1 - - 0 0 0 0 \"a\"\nf 644 1 - - 0 0 0 0 \"a\"\n",
		"kept no digest":  chunkMagic + "f 644 1 - k 0 0 0 0 \"a\"\n",
		"bad mode":        chunkMagic + "f 1777 1 - - 0 0 0 0 \"a\"\n",
		"negative size":   chunkMagic + "f 644 -1 - - 0 0 0 0 \"a\"\n",
		"padded number":   chunkMagic + "f 644 01 - - 0 0 0 0 \"a\"\n",
		"link no target":  chunkMagic + "l 777 1 - - 0 0 0 0 \"a\"\n",
		"nul in path":     chunkMagic + "f 644 1 - - 0 0 0 0 \"a\\x00b\"\n",
		"dir with digest": chunkMagic + "d 755 0 " + strings.Repeat("a", 64) + " - 0 0 0 0 \"a\"\n",
		"trailing":        chunkMagic + "f 644 1 - - 0 0 0 0 \"a\" x\n",
		"empty":           chunkMagic,
		"pack no digest":  chunkMagic + "f 644 1 - p:" + strings.Repeat("a", 64) + ":0 0 0 0 0 \"a\"\n",
		"pack bad offset": chunkMagic + "f 644 1 " + strings.Repeat("a", 64) + " p:" + strings.Repeat("a", 64) + ":-1 0 0 0 0 \"a\"\n",
		"pack bad digest": chunkMagic + "f 644 1 " + strings.Repeat("a", 64) + " p:abc:0 0 0 0 0 \"a\"\n",
	} {
		_, err := parseChunk([]byte(data), "")
		assert.Error(t, err, name)
	}
	_, err := parseRoot([]byte(rootMagic + "sha256:00 1\n"))
	assert.Error(t, err)
	assert.Error(t, checkParents([]Entry{{Path: "a/b", Kind: KindFile}}), "a file without its directory")
	assert.NoError(t, checkParents([]Entry{{Path: "a", Kind: KindDir}, {Path: "a/b", Kind: KindFile}, {Path: "c", Kind: KindFile}}))
}

func TestManifestChunksAreStable(t *testing.T) {
	var es []Entry
	for i := range 5000 {
		es = append(es, Entry{Path: fmt.Sprintf("f%05d", i), Kind: KindFile, Mode: 0o644})
	}
	before := chunks(es)
	assert.Greater(t, len(before), 5, "a large tree is split")
	// Inserting an entry changes one chunk.
	ins := append(append(append([]Entry(nil), es[:2500]...), Entry{Path: "f02500a", Kind: KindFile, Mode: 0o644}), es[2500:]...)
	after := chunks(ins)
	same := map[string]bool{}
	for _, c := range before {
		same[string(encodeChunk(c))] = true
	}
	changed := 0
	for _, c := range after {
		if !same[string(encodeChunk(c))] {
			changed++
		}
	}
	assert.Equal(t, 1, changed)
}

// TestRacyEntriesAreHashedAgain: an entry whose stat data matches but
// that was modified close to the scan that recorded it is hashed again.
func TestRacyEntriesAreHashedAgain(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(p, []byte("new content"), 0o644))
	h, err := openRootDir(dir)
	require.NoError(t, err)
	defer h.close()
	fi, err := h.lstat("f")
	require.NoError(t, err)
	stale := Entry{Path: "f", Kind: KindFile, Mode: fi.mode, Size: fi.size, Stat: fi.stat, Digest: attdigest.Of([]byte("old content")), Kept: true}
	for _, tc := range []struct {
		name    string
		scanned time.Time
		want    string
	}{
		{"recent: hashed again", time.Unix(0, fi.stat.MtimeNS).Add(time.Second), attdigest.Of([]byte("new content"))},
		{"old: trusted", time.Unix(0, fi.stat.MtimeNS).Add(time.Minute), stale.Digest},
	} {
		w, err := Open(dir, Config{Store: attachments.NewMemory()})
		require.NoError(t, err)
		w.prev, w.prevScanned, w.prevDigest = newTree([]Entry{stale}), tc.scanned, "sha256:x"
		snap, err := w.Take(context.Background())
		require.NoError(t, err)
		assert.Equal(t, tc.want, snap.Tree.Lookup("f").Digest, tc.name)
	}
}

// FuzzParseChunk: no input panics the parser, and what it accepts
// encodes to a chunk that parses to the same entries.
func FuzzParseChunk(f *testing.F) {
	f.Add(encodeChunk(sampleEntries()))
	f.Add([]byte(chunkMagic + "l 777 3 - - 1 2 3 4 \"a\" \"\\u00fc\"\n"))
	f.Add([]byte(chunkMagic + "d 700 0 - - 0 0 0 0 `raw`\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := parseChunk(data, "")
		if err != nil {
			return
		}
		again, err := parseChunk(encodeChunk(es), "")
		if err != nil {
			t.Fatalf("the encoding of accepted entries does not parse: %v", err)
		}
		if !reflect.DeepEqual(es, again) {
			t.Fatalf("round trip: %#v != %#v", es, again)
		}
		for _, e := range es {
			if !validPath(e.Path) || e.Mode&^iofs.ModePerm != 0 {
				t.Fatalf("accepted %#v", e)
			}
		}
	})
}

// FuzzParseRoot: no input panics the root parser, and what it accepts
// encodes back byte for byte.
func FuzzParseRoot(f *testing.F) {
	f.Add(encodeRoot([]chunkRef{{digest: attdigest.Of([]byte("a")), n: 3}, {digest: attdigest.Of([]byte("b")), n: 4096}}))
	f.Add([]byte(rootMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		refs, err := parseRoot(data)
		if err != nil {
			return
		}
		if !bytes.Equal(encodeRoot(refs), data) {
			t.Fatalf("not canonical: %q", data)
		}
	})
}

// FuzzParseManifest: no input panics the manifest parser, which reads a
// root or a small tree's one chunk, and what it accepts encodes back
// byte for byte as one or the other.
func FuzzParseManifest(f *testing.F) {
	f.Add(encodeRoot([]chunkRef{{digest: attdigest.Of([]byte("a")), n: 3}}))
	f.Add([]byte(chunkMagic + "d 755 0 - - 1 2 3 4 \"a\"\nf 644 2 " + strings.Repeat("b", 64) + " k 1 2 3 4 \"a/b\"\n"))
	f.Add([]byte(chunkMagic))
	f.Fuzz(func(t *testing.T, data []byte) {
		refs, single, err := parseManifest(data)
		if err != nil {
			return
		}
		if single != nil {
			if refs != nil || len(single) == 0 || !bytes.Equal(encodeChunk(single), data) {
				t.Fatalf("not canonical as a chunk: %q", data)
			}
			return
		}
		if !bytes.Equal(encodeRoot(refs), data) {
			t.Fatalf("not canonical as a root: %q", data)
		}
	})
}
