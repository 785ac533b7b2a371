package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/checkpoint"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/attachments"
)

// countingStore counts the objects stored in an attachment store (Puts
// and Stages).
type countingStore struct {
	*attachments.Store
	mu    sync.Mutex
	puts  int
	bytes int64
}

func (c *countingStore) Put(ctx context.Context, data []byte) (string, error) {
	c.mu.Lock()
	c.puts++
	c.bytes += int64(len(data))
	c.mu.Unlock()
	return c.Store.Put(ctx, data)
}

func (c *countingStore) Stage(ctx context.Context, data []byte) (string, error) {
	c.mu.Lock()
	c.puts++
	c.bytes += int64(len(data))
	c.mu.Unlock()
	return c.Store.Stage(ctx, data)
}

func (c *countingStore) reset() (int, int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, b := c.puts, c.bytes
	c.puts, c.bytes = 0, 0
	return p, b
}

func ctx() context.Context { return context.Background() }

// writeTree writes files (path → content; a content ending in "/" makes
// a directory) below dir, aged so the stat cache trusts them.
func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if strings.HasSuffix(p, "/") {
			require.NoError(t, os.MkdirAll(full, 0o755))
			continue
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(content), 0o644))
		require.NoError(t, os.Chtimes(full, old, old))
	}
}

// contents returns every recorded path of a tree with its content: a
// file's text, "dir", or "-> target".
func contents(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".":
		case fi.Name() == ".git":
			return filepath.SkipDir
		case fi.IsDir():
			out[rel] = "dir"
		case fi.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[rel] = "-> " + target
		default:
			data, err := os.ReadFile(p)
			require.NoError(t, err)
			out[rel] = fi.Mode().Perm().String() + " " + string(data)
		}
		return nil
	}))
	return out
}

func open(t *testing.T, dir string, cfg checkpoint.Config) (*checkpoint.Workspace, *countingStore) {
	t.Helper()
	cs := &countingStore{Store: attachments.NewMemory()}
	if cfg.Store == nil {
		cfg.Store = cs
	}
	w, err := checkpoint.Open(dir, cfg)
	require.NoError(t, err)
	return w, cs
}

func paths(t *checkpoint.Tree) []string {
	var out []string
	for _, e := range t.Entries() {
		out = append(out, e.Path)
	}
	return out
}

func TestTakeRecordsTheTree(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"main.go":         "package main\n",
		"a/b/c.txt":       "deep\n",
		"a.txt":           "beside a\n",
		"empty/":          "",
		".git/HEAD":       "ref: refs/heads/main\n",
		"sub/.git":        "gitdir: ../.git/modules/sub\n",
		"build/out.bin":   "ignored\n",
		"x.log":           "ignored\n",
		"keep.log":        "negated\n",
		"docs/.gitignore": "*.tmp\n",
		"docs/a.tmp":      "ignored below\n",
		"docs/a.md":       "kept\n",
		".gitignore":      "/build/\n*.log\n!keep.log\n",
		"secret.env":      "ignored by the config\n",
	})
	require.NoError(t, os.Symlink("../outside", filepath.Join(dir, "link")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o600))
	w, cs := open(t, dir, checkpoint.Config{Ignore: []string{"*.env"}})
	snap, err := w.Take(ctx())
	require.NoError(t, err)
	assert.Equal(t, []string{".gitignore", "a", "a/b", "a/b/c.txt", "a.txt", "docs", "docs/.gitignore", "docs/a.md", "empty", "keep.log", "link", "main.go", "sub"},
		paths(snap.Tree), "tree order, .git, ignored paths and the pipe left out")
	link := snap.Tree.Lookup("link")
	require.NotNil(t, link)
	assert.Equal(t, checkpoint.KindSymlink, link.Kind)
	assert.Equal(t, "../outside", link.Target, "a link is recorded, not followed")
	f := snap.Tree.Lookup("a/b/c.txt")
	require.NotNil(t, f)
	assert.Equal(t, int64(5), f.Size)
	assert.True(t, f.Kept)
	assert.NotEmpty(t, f.Pack, "a small file's content is packed")
	data, err := w.Content(ctx(), f)
	require.NoError(t, err)
	assert.Equal(t, "deep\n", string(data), "the content is in the store")
	_, err = cs.Get(ctx(), f.Pack)
	require.NoError(t, err, "the pack is an attachment")
	files, bytes, omitted := snap.Tree.Totals()
	assert.Equal(t, 7, files)
	assert.Equal(t, int64(70), bytes)
	assert.Zero(t, omitted)
	assert.Equal(t, 13, snap.Changes.Added)

	loaded, err := w.Load(ctx(), snap.Manifest)
	require.NoError(t, err)
	assert.Equal(t, snap.Tree.Entries(), loaded.Entries(), "the stored manifest reads back the same tree")
}

func TestUnchangedTreeStoresNothing(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 300 {
		files[filepath.ToSlash(filepath.Join("d"+string(rune('a'+i%7)), "f"+strings.Repeat("x", i%5)+string(rune('0'+i%10))+".txt"))] = strings.Repeat("line\n", i)
	}
	writeTree(t, dir, files)
	w, cs := open(t, dir, checkpoint.Config{})
	first, err := w.Take(ctx())
	require.NoError(t, err)
	puts, _ := cs.reset()
	assert.LessOrEqual(t, puts, 5, "300 small files go in one pack, beside the manifest's chunks and root")

	again, err := w.Take(ctx())
	require.NoError(t, err)
	puts, _ = cs.reset()
	assert.Zero(t, puts, "an unchanged tree stores nothing")
	assert.Equal(t, first.Manifest, again.Manifest)
	assert.Equal(t, checkpoint.Summary{}, again.Changes)

	// One changed file stores its content and one chunk, which is the
	// whole manifest of these 307 entries (no root).
	p := filepath.Join(dir, "da", "f0.txt")
	require.NoError(t, os.WriteFile(p, []byte("changed\n"), 0o644))
	third, err := w.Take(ctx())
	require.NoError(t, err)
	puts, _ = cs.reset()
	assert.Equal(t, 2, puts, "the file and its chunk")
	assert.NotEqual(t, first.Manifest, third.Manifest)
	assert.Equal(t, checkpoint.Summary{Modified: 1, Paths: []string{"da/f0.txt"}}, third.Changes)
}

func TestStatCacheSeesSameSizeChanges(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "aaaa\n"})
	w, _ := open(t, dir, checkpoint.Config{})
	first, err := w.Take(ctx())
	require.NoError(t, err)
	// Same size, and the modification time put back: the change time
	// and the rehash of racy entries still catch it.
	p := filepath.Join(dir, "a.txt")
	fi, err := os.Stat(p)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p, []byte("bbbb\n"), 0o644))
	require.NoError(t, os.Chtimes(p, fi.ModTime(), fi.ModTime()))
	second, err := w.Take(ctx())
	require.NoError(t, err)
	assert.NotEqual(t, first.Tree.Lookup("a.txt").Digest, second.Tree.Lookup("a.txt").Digest)
}

func TestPrimeResumesTheCache(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "a\n", "b/c.txt": "c\n"})
	store := &countingStore{Store: attachments.NewMemory()}
	w1, _ := open(t, dir, checkpoint.Config{Store: store})
	snap, err := w1.Take(ctx())
	require.NoError(t, err)
	store.reset()

	// Another process: a new workspace primed from the log.
	w2, _ := open(t, dir, checkpoint.Config{Store: store})
	require.NoError(t, w2.Prime(ctx(), snap.Manifest, snap.Scanned))
	again, err := w2.Take(ctx())
	require.NoError(t, err)
	puts, _ := store.reset()
	assert.Zero(t, puts, "a primed workspace rehashes and stores nothing for an unchanged tree")
	assert.Equal(t, snap.Manifest, again.Manifest)
}

func TestMaxEntries(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a": "1", "b": "2", "c/d": "3"})
	w, _ := open(t, dir, checkpoint.Config{MaxEntries: 3})
	_, err := w.Take(ctx())
	require.Error(t, err)
	assert.ErrorIs(t, err, harness.CodeTooLarge)
	assert.Contains(t, err.Error(), "MaxEntries")
}

func TestConfigErrors(t *testing.T) {
	_, err := checkpoint.Open(t.TempDir(), checkpoint.Config{})
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	_, err = checkpoint.Open(t.TempDir(), checkpoint.Config{Store: attachments.NewMemory(), MaxFileBytes: -1})
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	f := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(f, nil, 0o644))
	_, err = checkpoint.Open(f, checkpoint.Config{Store: attachments.NewMemory()})
	assert.ErrorIs(t, err, harness.CodeNotDir)
}

// rewind plans and applies a rewind of w to target with no outside
// changes, and checks that what it did is what the plan said.
func rewind(t *testing.T, w *checkpoint.Workspace, target *checkpoint.Snapshot, opts checkpoint.PlanOptions) *checkpoint.Plan {
	t.Helper()
	dry, err := w.Scan(ctx())
	require.NoError(t, err)
	want, err := w.Plan(ctx(), target.Tree, dry, opts)
	require.NoError(t, err)
	now, err := w.Take(ctx())
	require.NoError(t, err)
	plan, err := w.Plan(ctx(), target.Tree, now, opts)
	require.NoError(t, err)
	done, err := w.Apply(ctx(), plan, opts.Force)
	require.NoError(t, err)
	assert.Equal(t, public(want), public(done), "the dry run says what the rewind does")
	return done
}

func TestRewindRestoresEveryKindOfChange(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"edit.go":       "package a\n\nfunc A() {}\n",
		"gone.txt":      "one\ntwo\nthree\n",
		"gonedir/x.txt": "x\n",
		"mode.sh":       "#!/bin/sh\n",
		"kind":          "a file that becomes a directory\n",
	})
	require.NoError(t, os.Symlink("edit.go", filepath.Join(dir, "link")))
	w, _ := open(t, dir, checkpoint.Config{})
	before := contents(t, dir)
	target, err := w.Take(ctx())
	require.NoError(t, err)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "edit.go"), []byte("package a\n\nfunc A() { b() }\n\nfunc b() {}\n"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, "gone.txt")))
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "gonedir")))
	require.NoError(t, os.Chmod(filepath.Join(dir, "mode.sh"), 0o755))
	require.NoError(t, os.Remove(filepath.Join(dir, "kind")))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "kind", "inner"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "kind", "inner", "f"), []byte("f\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "newdir", "deeper"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "newdir", "deeper", "n.txt"), []byte("new\nfile\n"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, "link")))
	require.NoError(t, os.Symlink("gone.txt", filepath.Join(dir, "link")))

	done := rewind(t, w, target, checkpoint.PlanOptions{})
	byPath := map[string]checkpoint.Change{}
	for _, c := range done.Changes {
		assert.Empty(t, c.Skip, "%s", c.Path)
		byPath[c.Path] = c
	}
	assert.Equal(t, checkpoint.OpModified, byPath["edit.go"].Op)
	assert.Equal(t, 3, byPath["edit.go"].Added)
	assert.Equal(t, 1, byPath["edit.go"].Removed)
	assert.Equal(t, checkpoint.OpDeleted, byPath["gone.txt"].Op)
	assert.Equal(t, 3, byPath["gone.txt"].Removed)
	assert.Equal(t, checkpoint.OpDeleted, byPath["gonedir"].Op)
	assert.Equal(t, checkpoint.OpCreated, byPath["newdir/deeper/n.txt"].Op)
	assert.Equal(t, 2, byPath["newdir/deeper/n.txt"].Added)
	assert.Equal(t, checkpoint.OpModified, byPath["mode.sh"].Op)
	assert.Equal(t, checkpoint.OpModified, byPath["kind"].Op)
	assert.Equal(t, checkpoint.KindFile, byPath["kind"].Kind)
	assert.Equal(t, checkpoint.OpModified, byPath["link"].Op)
	assert.Equal(t, before, contents(t, dir), "the tree is as it was")
	fi, err := os.Stat(filepath.Join(dir, "mode.sh"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o644), fi.Mode().Perm())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), ".rewind-"), "no temporary file left: %s", e.Name())
	}
}

func TestRewindLeavesIgnoredFilesAlone(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{".gitignore": "*.o\n", "src/a.c": "int a;\n"})
	w, _ := open(t, dir, checkpoint.Config{})
	target, err := w.Take(ctx())
	require.NoError(t, err)
	// A build creates objects (ignored) in a new directory, beside a new
	// source file; the rewind deletes the source but keeps the
	// directory that holds the ignored object.
	writeTree(t, dir, map[string]string{"obj/a.o": "binary", "obj/gen.c": "int g;\n", "src/a.o": "binary"})
	done := rewind(t, w, target, checkpoint.PlanOptions{})
	skips := map[string]string{}
	for _, c := range done.Changes {
		skips[c.Path] = c.Skip
	}
	assert.Equal(t, "", skips["obj/gen.c"], "the new source is deleted")
	assert.Contains(t, skips["obj"], "ignore", "the directory with an ignored file stays")
	assert.FileExists(t, filepath.Join(dir, "obj", "a.o"))
	assert.FileExists(t, filepath.Join(dir, "src", "a.o"))
	assert.NoFileExists(t, filepath.Join(dir, "obj", "gen.c"))
}

func TestRewindDoesNotDeleteWhatTheCheckpointIgnored(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{".gitignore": "notes.txt\n", "notes.txt": "the user's notes\n", "a.go": "a\n"})
	w, _ := open(t, dir, checkpoint.Config{})
	target, err := w.Take(ctx())
	require.NoError(t, err)
	// The .gitignore is emptied: notes.txt shows up as new, but the
	// checkpoint ignored it, so it is not known to be new.
	writeTree(t, dir, map[string]string{".gitignore": "\n"})
	done := rewind(t, w, target, checkpoint.PlanOptions{})
	var notes *checkpoint.Change
	for i, c := range done.Changes {
		if c.Path == "notes.txt" {
			notes = &done.Changes[i]
		}
	}
	require.NotNil(t, notes)
	assert.Contains(t, notes.Skip, "ignored this path when the checkpoint was taken")
	assert.FileExists(t, filepath.Join(dir, "notes.txt"))
	data, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
	assert.Equal(t, "notes.txt\n", string(data), "the .gitignore is restored")
}

func TestRewindDoesNotOverwriteNowIgnoredFiles(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"data.csv": "old\n"})
	w, _ := open(t, dir, checkpoint.Config{})
	target, err := w.Take(ctx())
	require.NoError(t, err)
	// data.csv becomes ignored and changes: the scan no longer sees it,
	// and the rewind must not take it for deleted and write over it.
	writeTree(t, dir, map[string]string{".gitignore": "*.csv\n", "data.csv": "the user's new data\n"})
	done := rewind(t, w, target, checkpoint.PlanOptions{})
	for _, c := range done.Changes {
		if c.Path == "data.csv" {
			assert.Contains(t, c.Skip, "ignore")
		}
	}
	data, _ := os.ReadFile(filepath.Join(dir, "data.csv"))
	assert.Equal(t, "the user's new data\n", string(data))
	assert.NoFileExists(t, filepath.Join(dir, ".gitignore"), "the new .gitignore is deleted")
}

func TestSizePolicy(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("0123456789abcdef", 256) // 4 KiB of text
	bin := "\x00" + strings.Repeat("b", 1500)
	writeTree(t, dir, map[string]string{"big.txt": big, "bin.dat": bin, "small.txt": "s\n"})
	w, cs := open(t, dir, checkpoint.Config{MaxFileBytes: 2048, MaxBinaryBytes: 1024})
	target, err := w.Take(ctx())
	require.NoError(t, err)
	_, stored := cs.reset()
	assert.Less(t, stored, int64(2048), "neither the big file nor the binary was stored")
	for p, kept := range map[string]bool{"big.txt": false, "bin.dat": false, "small.txt": true} {
		e := target.Tree.Lookup(p)
		require.NotNil(t, e)
		assert.Equal(t, kept, e.Kept, p)
		assert.NotEmpty(t, e.Digest, "%s is recorded by digest", p)
	}
	_, _, omitted := target.Tree.Totals()
	assert.Equal(t, 2, omitted)

	// Modified and deleted, neither can come back: reported, left alone.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.txt"), []byte("small now\n"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(dir, "bin.dat")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "small.txt"), []byte("changed\n"), 0o644))
	done := rewind(t, w, target, checkpoint.PlanOptions{})
	skips := map[string]string{}
	for _, c := range done.Changes {
		skips[c.Path] = c.Skip
	}
	assert.Contains(t, skips["big.txt"], "digest and size only")
	assert.Contains(t, skips["bin.dat"], "digest and size only")
	assert.Equal(t, "", skips["small.txt"])
	assert.Equal(t, []string{"small.txt"}, done.Restored())
	data, _ := os.ReadFile(filepath.Join(dir, "small.txt"))
	assert.Equal(t, "s\n", string(data))
	data, _ = os.ReadFile(filepath.Join(dir, "big.txt"))
	assert.Equal(t, "small now\n", string(data), "left alone")
}

func TestCheckpointBudget(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": strings.Repeat("a", 600), "b.txt": strings.Repeat("b", 600)})
	w, _ := open(t, dir, checkpoint.Config{MaxCheckpointBytes: 1000})
	first, err := w.Take(ctx())
	require.NoError(t, err)
	assert.True(t, first.Tree.Lookup("a.txt").Kept)
	assert.False(t, first.Tree.Lookup("b.txt").Kept, "past the checkpoint's budget")
	second, err := w.Take(ctx())
	require.NoError(t, err)
	assert.True(t, second.Tree.Lookup("b.txt").Kept, "the next checkpoint keeps it")
}

// history is a session's checkpoints for OutsideChanges.
func point(seq int64, kind string, w *checkpoint.Workspace, s *checkpoint.Snapshot) checkpoint.Point {
	return checkpoint.Point{Seq: seq, Checkpoint: &session.Checkpoint{Kind: kind, Dir: w.Dir(), Manifest: s.Manifest, Scanned: s.Scanned}}
}

func TestAttributionAndConflicts(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"agent.go": "a\n", "user.go": "u\n", "later.go": "l\n", "both.go": "b\n"})
	w, _ := open(t, dir, checkpoint.Config{})
	start, err := w.Take(ctx()) // turn 1 starts
	require.NoError(t, err)
	writeTree(t, dir, map[string]string{"agent.go": "agent's edit\n", "both.go": "agent\n"})
	end, err := w.Take(ctx()) // turn 1 ends
	require.NoError(t, err)
	writeTree(t, dir, map[string]string{"user.go": "the user's edit between turns\n", "both.go": "the user's edit of the agent's file\n"})
	start2, err := w.Take(ctx()) // turn 2 starts
	require.NoError(t, err)
	writeTree(t, dir, map[string]string{"both.go": "agent again\n"})
	end2, err := w.Take(ctx()) // turn 2 ends
	require.NoError(t, err)
	writeTree(t, dir, map[string]string{"later.go": "the user's edit after the last turn\n"})
	points := []checkpoint.Point{
		point(1, session.CheckpointTurnStart, w, start),
		point(5, session.CheckpointTurnEnd, w, end),
		point(6, session.CheckpointTurnStart, w, start2),
		point(9, session.CheckpointTurnEnd, w, end2),
	}
	now, err := w.Scan(ctx())
	require.NoError(t, err)
	who, err := w.Attribute(ctx(), points, now.Tree)
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"agent.go": true, "both.go": true}, who.Agent)
	assert.Equal(t, map[string]bool{"user.go": true, "both.go": true, "later.go": true}, who.Outside)

	// Back to before turn 1: the agent's agent.go is restored, the
	// user's own files are left alone, and both.go, which both changed,
	// conflicts.
	plan, err := w.Plan(ctx(), start.Tree, now, checkpoint.PlanOptions{Changes: who})
	require.NoError(t, err)
	got := map[string]string{}
	for _, c := range plan.Changes {
		got[c.Path] = c.Skip
		if c.Conflict {
			got[c.Path] = "conflict"
		}
	}
	assert.Equal(t, map[string]string{"agent.go": "", "both.go": "conflict",
		"user.go":  "changed outside the agent only (not by its turns); it is left as it is",
		"later.go": "changed outside the agent only (not by its turns); it is left as it is"}, got)
	_, err = w.Apply(ctx(), plan, false)
	require.Error(t, err)
	assert.ErrorIs(t, err, harness.CodeConflict)
	assert.Contains(t, err.Error(), "both.go")
	data, _ := os.ReadFile(filepath.Join(dir, "agent.go"))
	assert.Equal(t, "agent's edit\n", string(data), "a refused rewind changes nothing")

	// Everything: the user's files conflict too.
	all, err := w.Plan(ctx(), start.Tree, now, checkpoint.PlanOptions{Changes: who, Everything: true})
	require.NoError(t, err)
	var conflicts []string
	for _, c := range all.Conflicts() {
		conflicts = append(conflicts, c.Path)
	}
	assert.Equal(t, []string{"both.go", "later.go", "user.go"}, conflicts)

	// Back to before turn 2: only the agent's change of both.go goes,
	// back to the user's version; later.go is the user's.
	who2, err := w.Attribute(ctx(), points[2:], now.Tree)
	require.NoError(t, err)
	assert.Equal(t, map[string]bool{"both.go": true}, who2.Agent)
	assert.Equal(t, map[string]bool{"later.go": true}, who2.Outside)

	// Forced, once the current state is kept: both.go goes back too.
	kept, err := w.Take(ctx())
	require.NoError(t, err)
	plan, err = w.Plan(ctx(), start.Tree, kept, checkpoint.PlanOptions{Changes: who, Force: true})
	require.NoError(t, err)
	done, err := w.Apply(ctx(), plan, true)
	require.NoError(t, err)
	assert.Equal(t, []string{"agent.go", "both.go"}, done.Restored())
	data, _ = os.ReadFile(filepath.Join(dir, "both.go"))
	assert.Equal(t, "b\n", string(data))
	data, _ = os.ReadFile(filepath.Join(dir, "user.go"))
	assert.Equal(t, "the user's edit between turns\n", string(data), "left alone")
	// What was overwritten is in the store, by the checkpoint taken
	// first: a rewind to it brings it back.
	back, err := w.Plan(ctx(), kept.Tree, mustScan(t, w), checkpoint.PlanOptions{})
	require.NoError(t, err)
	_, err = w.Apply(ctx(), back, false)
	require.NoError(t, err)
	data, _ = os.ReadFile(filepath.Join(dir, "both.go"))
	assert.Equal(t, "agent again\n", string(data))
	data, _ = os.ReadFile(filepath.Join(dir, "agent.go"))
	assert.Equal(t, "agent's edit\n", string(data))
}

func mustScan(t *testing.T, w *checkpoint.Workspace) *checkpoint.Snapshot {
	t.Helper()
	s, err := w.Scan(ctx())
	require.NoError(t, err)
	return s
}

func TestForcedConflictWithoutACopyIsLeftAlone(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"data.bin": "small\n"})
	w, _ := open(t, dir, checkpoint.Config{MaxFileBytes: 100})
	start, err := w.Take(ctx())
	require.NoError(t, err)
	writeTree(t, dir, map[string]string{"data.bin": strings.Repeat("too large to keep\n", 20)})
	now, err := w.Take(ctx())
	require.NoError(t, err)
	plan, err := w.Plan(ctx(), start.Tree, now, checkpoint.PlanOptions{Changes: &checkpoint.Attribution{
		Agent: map[string]bool{"data.bin": true}, Outside: map[string]bool{"data.bin": true}}, Force: true})
	require.NoError(t, err)
	require.Len(t, plan.Changes, 1)
	assert.True(t, plan.Changes[0].Conflict)
	assert.Contains(t, plan.Changes[0].Skip, "too large to keep a copy")
	_, err = w.Apply(ctx(), plan, true)
	require.NoError(t, err)
	data, _ := os.ReadFile(filepath.Join(dir, "data.bin"))
	assert.Equal(t, strings.Repeat("too large to keep\n", 20), string(data), "never overwritten without a copy")
}

func TestApplyLeavesWhatChangedSinceThePlan(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	w, _ := open(t, dir, checkpoint.Config{})
	target, err := w.Take(ctx())
	require.NoError(t, err)
	writeTree(t, dir, map[string]string{"a.txt": "agent\n", "b.txt": "agent\n"})
	now, err := w.Take(ctx())
	require.NoError(t, err)
	plan, err := w.Plan(ctx(), target.Tree, now, checkpoint.PlanOptions{})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "b.txt"), []byte("typed meanwhile\n"), 0o644))
	done, err := w.Apply(ctx(), plan, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"a.txt"}, done.Restored())
	data, _ := os.ReadFile(filepath.Join(dir, "b.txt"))
	assert.Equal(t, "typed meanwhile\n", string(data))
}

func TestComparePaths(t *testing.T) {
	ps := []string{"a.txt", "a/b", "a", "a/b/c", "ab", "a-b", "b", "a/c"}
	sort.Slice(ps, func(i, j int) bool { return checkpoint.ComparePaths(ps[i], ps[j]) < 0 })
	assert.Equal(t, []string{"a", "a/b", "a/b/c", "a/c", "a-b", "a.txt", "ab", "b"}, ps)
}

func TestReferenced(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "a\n", "big.txt": strings.Repeat("x", 300)})
	w, cs := open(t, dir, checkpoint.Config{MaxFileBytes: 100})
	snap, err := w.Take(ctx())
	require.NoError(t, err)
	got, err := checkpoint.Referenced(cs)(ctx(), []string{snap.Manifest, "sha256:" + strings.Repeat("0", 64)})
	require.NoError(t, err)
	a := snap.Tree.Lookup("a.txt").Digest
	assert.Contains(t, got, a, "kept content")
	assert.NotContains(t, got, snap.Tree.Lookup("big.txt").Digest, "content not kept is not referenced")
	assert.Len(t, got, 1, "the one kept file: the manifest of a small tree is its one chunk, which names no other")
}

// public returns a plan's changes as a caller sees them (their exported
// fields).
func public(p *checkpoint.Plan) []checkpoint.Change {
	out := make([]checkpoint.Change, len(p.Changes))
	for i, c := range p.Changes {
		out[i] = checkpoint.Change{Path: c.Path, Op: c.Op, Kind: c.Kind, Added: c.Added, Removed: c.Removed, Binary: c.Binary, Conflict: c.Conflict, Skip: c.Skip}
	}
	return out
}

func TestPacks(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{"same1.txt": "identical\n", "same2.txt": "identical\n", "empty1": "", "empty2": ""}
	// More small files than one pack holds.
	for i := range 140 {
		files[fmt.Sprintf("big/%03d.txt", i)] = strings.Repeat(string(rune('a'+i%26)), 60<<10) + fmt.Sprint(i)
	}
	writeTree(t, dir, files)
	w, cs := open(t, dir, checkpoint.Config{})
	first, err := w.Take(ctx())
	require.NoError(t, err)
	puts, stored := cs.reset()
	assert.Less(t, stored, int64(140*61<<10+64<<10), "each content stored once")
	packs := map[string]bool{}
	for _, e := range first.Tree.Entries() {
		if e.Kind == checkpoint.KindFile {
			require.True(t, e.Kept, e.Path)
			require.NotEmpty(t, e.Pack, e.Path)
			packs[e.Pack] = true
			data, err := w.Content(ctx(), &e)
			require.NoError(t, err)
			assert.Equal(t, files[e.Path], string(data), e.Path)
		}
	}
	assert.Len(t, packs, 2, "8 MiB of small files fill one pack and start another")
	assert.Less(t, puts, 10)
	a, b := first.Tree.Lookup("same1.txt"), first.Tree.Lookup("same2.txt")
	assert.Equal(t, a.Pack, b.Pack)
	assert.Equal(t, a.Offset, b.Offset, "identical contents are stored once")

	// A move stores no content: the manifest knows it.
	require.NoError(t, os.Rename(filepath.Join(dir, "big"), filepath.Join(dir, "moved")))
	moved, err := w.Take(ctx())
	require.NoError(t, err)
	_, stored = cs.reset()
	assert.Less(t, stored, int64(200<<10), "only the manifest is stored after a move (%d bytes)", stored)
	e := moved.Tree.Lookup("moved/007.txt")
	require.NotNil(t, e)
	data, err := w.Content(ctx(), e)
	require.NoError(t, err)
	assert.Equal(t, files["big/007.txt"], string(data))
}

func TestDamagedContentIsRefused(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"a.txt": "a\n"})
	store := attachments.NewMemory()
	w, _ := open(t, dir, checkpoint.Config{Store: store})
	snap, err := w.Take(ctx())
	require.NoError(t, err)
	e := *snap.Tree.Lookup("a.txt")
	e.Offset = 1 // the wrong bytes of the pack
	_, err = w.Content(ctx(), &e)
	assert.ErrorIs(t, err, harness.CodeCorruptAttachment)
	e.Offset = 1 << 20
	_, err = w.Content(ctx(), &e)
	assert.ErrorIs(t, err, harness.CodeCorruptAttachment)
}

// A tree of one chunk is stored as that chunk: a changed file stores its
// content and one manifest object, and the manifest reads back, is
// primed from, rewinds and lists its references like a rooted one.
func TestSmallTreeIsOneObject(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{"main.go": "package main\n", "sub/b.txt": "b\n"})
	w, cs := open(t, dir, checkpoint.Config{})
	first, err := w.Take(ctx())
	require.NoError(t, err)
	puts, _ := cs.reset()
	assert.Equal(t, 2, puts, "the pack of the two files and the manifest")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main // changed\n"), 0o644))
	second, err := w.Take(ctx())
	require.NoError(t, err)
	puts, _ = cs.reset()
	assert.Equal(t, 2, puts, "the changed file's pack and the manifest")

	data, err := cs.Get(ctx(), second.Manifest)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), "harness-checkpoint-chunk 1\n"), "the manifest is the chunk itself:\n%s", data)

	// A fresh workspace on the same store reads it back and is primed by it.
	w2, err := checkpoint.Open(dir, checkpoint.Config{Store: cs})
	require.NoError(t, err)
	loaded, err := w2.Load(ctx(), second.Manifest)
	require.NoError(t, err)
	assert.Equal(t, second.Tree.Entries(), loaded.Entries())
	require.NoError(t, w2.Prime(ctx(), second.Manifest, second.Scanned.Add(-time.Hour)))
	again, err := w2.Take(ctx())
	require.NoError(t, err)
	assert.Equal(t, second.Manifest, again.Manifest)

	// The rewind to the first checkpoint, read back from the store,
	// brings main.go back.
	target, err := w2.Load(ctx(), first.Manifest)
	require.NoError(t, err)
	rewind(t, w2, &checkpoint.Snapshot{Manifest: first.Manifest, Tree: target}, checkpoint.PlanOptions{})
	got, err := os.ReadFile(filepath.Join(dir, "main.go"))
	require.NoError(t, err)
	assert.Equal(t, "package main\n", string(got))

	refs, err := checkpoint.Referenced(cs)(ctx(), []string{first.Manifest, second.Manifest})
	require.NoError(t, err)
	for _, e := range second.Tree.Entries() {
		if e.Kept {
			assert.Contains(t, refs, e.Pack, "the pack of %s", e.Path)
		}
	}
	assert.NotContains(t, refs, second.Manifest, "a manifest of one chunk refers to no chunk of its own")
}

// A tree of several chunks keeps its root: one changed file stores its
// content, its chunk and a new root, and the manifest reads back.
func TestLargeTreeKeepsItsRoot(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 2000 {
		files[fmt.Sprintf("d%02d/f%04d.txt", i%20, i)] = fmt.Sprint(i, "\n")
	}
	writeTree(t, dir, files)
	w, cs := open(t, dir, checkpoint.Config{})
	_, err := w.Take(ctx())
	require.NoError(t, err)
	cs.reset()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d07", "f0007.txt"), []byte("changed\n"), 0o644))
	snap, err := w.Take(ctx())
	require.NoError(t, err)
	puts, _ := cs.reset()
	assert.Equal(t, 3, puts, "the file, its chunk, the root")
	data, err := cs.Get(ctx(), snap.Manifest)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), "harness-checkpoint 1\n"), "a root names the chunks")
	loaded, err := w.Load(ctx(), snap.Manifest)
	require.NoError(t, err)
	assert.Equal(t, snap.Tree.Entries(), loaded.Entries())
	refs, err := checkpoint.Referenced(cs)(ctx(), []string{snap.Manifest})
	require.NoError(t, err)
	assert.Greater(t, len(refs), 2, "the chunks and the packs")
}
