package checkpoint_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/checkpoint"
	"github.com/go-harness/harness/internal/longtest"
)

// mutate makes one random change below dir: a file written, appended to,
// removed, renamed or made executable, a directory made or removed, a
// link made.
func mutate(t *testing.T, r *rand.Rand, dir string) {
	t.Helper()
	var all []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && p != dir {
			all = append(all, p)
		}
		return nil
	})
	sort.Strings(all)
	pick := func() string {
		if len(all) == 0 {
			return ""
		}
		return all[r.IntN(len(all))]
	}
	name := func() string {
		d := dir
		if p := pick(); p != "" {
			if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
				d = p
			}
		}
		return filepath.Join(d, fmt.Sprintf("n%d", r.IntN(50)))
	}
	switch r.IntN(8) {
	case 0, 1:
		p := name()
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			return
		}
		os.Remove(p)
		require.NoError(t, os.WriteFile(p, []byte(fmt.Sprintf("line %d\n", r.IntN(1000))), 0o644))
	case 2:
		if p := pick(); p != "" {
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
				f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
				require.NoError(t, err)
				fmt.Fprintf(f, "more %d\n", r.IntN(1000))
				f.Close()
			}
		}
	case 3:
		if p := pick(); p != "" {
			require.NoError(t, os.RemoveAll(p))
		}
	case 4:
		if p := pick(); p != "" {
			os.Rename(p, name())
		}
	case 5:
		if p := pick(); p != "" {
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
				require.NoError(t, os.Chmod(p, fi.Mode()^0o111))
			}
		}
	case 6:
		p := name()
		if _, err := os.Lstat(p); err != nil {
			require.NoError(t, os.Mkdir(p, 0o755))
		}
	case 7:
		p := name()
		if _, err := os.Lstat(p); err != nil {
			require.NoError(t, os.Symlink(fmt.Sprintf("target%d", r.IntN(5)), p))
		}
	}
}

// TestRandomRewinds makes random changes between checkpoints and rewinds
// to a random earlier one: the tree is then exactly as recorded, and the
// dry run said what the rewind did.
func TestRandomRewinds(t *testing.T) {
	trials := longtest.Pick(15, 300)
	for trial := range trials {
		r := rand.New(rand.NewPCG(uint64(trial), 33))
		dir := t.TempDir()
		w, _ := open(t, dir, checkpoint.Config{})
		var snaps []*checkpoint.Snapshot
		var trees []map[string]string
		for range 2 + r.IntN(4) {
			for range 1 + r.IntN(6) {
				mutate(t, r, dir)
			}
			s, err := w.Take(ctx())
			require.NoError(t, err)
			snaps = append(snaps, s)
			trees = append(trees, contents(t, dir))
		}
		for range 1 + r.IntN(6) {
			mutate(t, r, dir)
		}
		i := r.IntN(len(snaps))
		done := rewind(t, w, snaps[i], checkpoint.PlanOptions{})
		for _, c := range done.Changes {
			require.Empty(t, c.Skip, "trial %d: %s", trial, c.Path)
		}
		assert.Equal(t, trees[i], contents(t, dir), "trial %d: back to checkpoint %d", trial, i)
	}
}
