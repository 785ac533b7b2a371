package fslocal_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	hfs "github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/fslocal"
)

// escapeFixture is a root with an "outside" directory beside it that
// holds sentinel files, and links in the root that try to reach it.
type escapeFixture struct {
	base, root, outside string
	fsys                fslocal.FS
	before              map[string]string
}

const secret = "SENTINEL: must never be read or changed\n"

func newEscapeFixture(t *testing.T) *escapeFixture {
	t.Helper()
	base := t.TempDir()
	x := &escapeFixture{base: base, root: filepath.Join(base, "root"), outside: filepath.Join(base, "outside")}
	must := func(err error) { t.Helper(); require.NoError(t, err) }
	must(os.MkdirAll(filepath.Join(x.outside, "dir"), 0o755))
	must(os.WriteFile(filepath.Join(x.outside, "secret.txt"), []byte(secret), 0o644))
	must(os.WriteFile(filepath.Join(x.outside, "dir", "inner.txt"), []byte(secret), 0o644))
	must(os.MkdirAll(filepath.Join(base, "rootx"), 0o755))
	must(os.WriteFile(filepath.Join(base, "rootx", "sibling.txt"), []byte(secret), 0o644))
	must(os.MkdirAll(filepath.Join(x.root, "sub"), 0o755))
	must(os.WriteFile(filepath.Join(x.root, "ok.txt"), []byte("inside\n"), 0o644))
	links := map[string]string{
		"link_file":       "../outside/secret.txt",
		"link_abs":        filepath.Join(x.outside, "secret.txt"),
		"link_dir":        "../outside",
		"link_dir_abs":    x.outside,
		"sub/link_parent": "../../outside",
		"link_proc":       "/proc/self/root",
		"link_proc_rel":   strings.Repeat("../", 40) + "proc/self/root",
		"link_up":         "..",
		"link_chain":      "link_dir",
		"loop_a":          "loop_b",
		"loop_b":          "loop_a",
		"dangling":        "../outside/created.txt",
		"dangling_abs":    filepath.Join(x.outside, "created_abs.txt"),
		"dangling_dir":    "../outside/newdir",
		"link_etc":        "/etc",
		"sub/link_sneaky": "../sub/../../outside/secret.txt",
	}
	for name, target := range links {
		must(os.Symlink(target, filepath.Join(x.root, name)))
	}
	x.before = snapshot(t, base, x.root)
	f, err := fslocal.New(x.root)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	x.fsys = f
	return x
}

// snapshot maps every path under dir, except those under skip, to its
// content (or its link target, or "dir").
func snapshot(t *testing.T, dir, skip string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == skip {
			return filepath.SkipDir
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[p] = "link:" + target
		case d.IsDir():
			out[p] = "dir"
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[p] = string(b)
		}
		return nil
	}))
	return out
}

func (x *escapeFixture) checkOutsideUntouched(t *testing.T) {
	t.Helper()
	after := snapshot(t, x.base, x.root)
	var keys []string
	for k := range after {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	assert.Equal(t, x.before, after, "nothing outside the root changed")
}

type attempt struct {
	name string
	run  func(ctx context.Context) (any, error)
	want error
}

func TestEscapeAttempts(t *testing.T) {
	x := newEscapeFixture(t)
	f := x.fsys
	r := x.root
	read := func(p string) func(context.Context) (any, error) {
		return func(ctx context.Context) (any, error) { return f.ReadText(ctx, p, hfs.Window{}) }
	}
	readBytes := func(p string) func(context.Context) (any, error) {
		return func(ctx context.Context) (any, error) { b, _, err := f.ReadBytes(ctx, p, 1<<20); return b, err }
	}
	write := func(p string) func(context.Context) (any, error) {
		return func(ctx context.Context) (any, error) {
			return f.Write(ctx, p, []byte("PWNED\n"), hfs.WriteOptions{})
		}
	}
	create := func(p string) func(context.Context) (any, error) {
		return func(ctx context.Context) (any, error) {
			return f.Write(ctx, p, []byte("PWNED\n"), hfs.WriteOptions{Pre: hfs.Precondition{Absent: true}})
		}
	}
	edit := func(p string) func(context.Context) (any, error) {
		return func(ctx context.Context) (any, error) {
			return f.Edit(ctx, p, hfs.Edit{Old: "SENTINEL", New: "PWNED"}, hfs.Precondition{})
		}
	}
	stat := func(p string) func(context.Context) (any, error) {
		return func(ctx context.Context) (any, error) { return f.Stat(ctx, p) }
	}
	readDir := func(p string) func(context.Context) (any, error) {
		return func(ctx context.Context) (any, error) { return f.ReadDir(ctx, p) }
	}
	local := func(p string) func(context.Context) (any, error) {
		return func(ctx context.Context) (any, error) { return f.LocalPath(p) }
	}
	out := harness.CodeOutsideRoot
	bad := harness.CodeInvalidPath
	attempts := []attempt{
		{"dotdot read", read(r + "/../outside/secret.txt"), out},
		{"dotdot deep read", read(r + "/sub/../../outside/secret.txt"), out},
		{"dotdot past slash", read(r + "/../../../../../../etc/passwd"), out},
		{"absolute outside", read(x.outside + "/secret.txt"), out},
		{"absolute system file", read("/etc/passwd"), out},
		{"filesystem root", readDir("/"), out},
		{"parent of root", stat(filepath.Dir(r)), out},
		{"sibling with root as prefix", read(r + "x/sibling.txt"), out},
		{"proc self root absolute", read("/proc/self/root/etc/passwd"), out},
		{"link to outside file", read(r + "/link_file"), out},
		{"absolute link to outside file", readBytes(r + "/link_abs"), out},
		{"link to outside dir", read(r + "/link_dir/secret.txt"), out},
		{"absolute link to outside dir", read(r + "/link_dir_abs/dir/inner.txt"), out},
		{"link in a parent", read(r + "/sub/link_parent/secret.txt"), out},
		{"link to proc self root", read(r + "/link_proc/etc/passwd"), out},
		{"relative link to proc self root", read(r + "/link_proc_rel/etc/passwd"), out},
		{"link to dot dot", read(r + "/link_up/outside/secret.txt"), out},
		{"chain of links", read(r + "/link_chain/secret.txt"), out},
		{"link through a subdir and back out", read(r + "/sub/link_sneaky"), out},
		{"link to /etc", read(r + "/link_etc/passwd"), out},
		{"write through link to outside file", write(r + "/link_file"), out},
		{"write through absolute link", write(r + "/link_abs"), out},
		{"create in linked outside dir", create(r + "/link_dir/new.txt"), out},
		{"create in absolute linked dir", create(r + "/link_dir_abs/new.txt"), out},
		{"create through link in parent", create(r + "/sub/link_parent/new.txt"), out},
		{"create through dangling link", create(r + "/dangling"), out},
		{"write through dangling absolute link", write(r + "/dangling_abs"), out},
		{"mkdir through dangling dir link", create(r + "/dangling_dir/deep/new.txt"), out},
		{"write dotdot", write(r + "/../outside/new.txt"), out},
		{"edit through link", edit(r + "/link_file"), out},
		{"edit absolute outside", edit(x.outside + "/secret.txt"), out},
		{"list linked dir", readDir(r + "/link_dir"), out},
		{"list proc link", readDir(r + "/link_proc"), out},
		{"stat through absolute link", stat(r + "/link_dir_abs"), out},
		{"local path of linked dir", local(r + "/link_dir"), out},
		{"local path of parent", local(r + "/.."), out},
		{"NUL in name", read(r + "/ok.txt\x00/../../outside/secret.txt"), bad},
		{"NUL in written name", create(r + "/new\x00.txt"), bad},
		{"element too long", create(r + "/" + strings.Repeat("x", 256)), bad},
		{"path too long", read(r + strings.Repeat("/sub/..", 700)), bad},
		{"relative path", read("../outside/secret.txt"), bad},
		{"empty path", read(""), bad},
		{"link loop", read(r + "/loop_a"), bad},
	}
	require.GreaterOrEqual(t, len(attempts), 30)
	for _, a := range attempts {
		t.Run(a.name, func(t *testing.T) {
			got, err := a.run(context.Background())
			require.Error(t, err, "refused (got %v)", got)
			assert.ErrorIs(t, err, a.want)
			assert.NotContains(t, err.Error(), "SENTINEL")
		})
	}
	x.checkOutsideUntouched(t)
}

// swapDir moves dir away and puts a link to target in its place.
func swapDir(t *testing.T, dir, target string) {
	t.Helper()
	require.NoError(t, os.Rename(dir, dir+".moved"))
	require.NoError(t, os.Symlink(target, dir))
}

func TestSwapDuringWrite(t *testing.T) {
	cases := []struct {
		name  string
		stage string
		op    func(f fslocal.FS, p string) error
		link  func(x *escapeFixture) string
	}{
		{"rename into swapped dir, relative link", "commit", func(f fslocal.FS, p string) error {
			_, err := f.Write(context.Background(), p, []byte("PWNED"), hfs.WriteOptions{})
			return err
		}, func(x *escapeFixture) string { return "../outside" }},
		{"rename into swapped dir, absolute link", "commit", func(f fslocal.FS, p string) error {
			_, err := f.Write(context.Background(), p, []byte("PWNED"), hfs.WriteOptions{})
			return err
		}, func(x *escapeFixture) string { return x.outside }},
		{"create-only link into swapped dir", "commit", func(f fslocal.FS, p string) error {
			_, err := f.Write(context.Background(), p+".new", []byte("PWNED"), hfs.WriteOptions{Pre: hfs.Precondition{Absent: true}})
			return err
		}, func(x *escapeFixture) string { return "../outside" }},
		{"edit after lock, dir swapped", "edit:locked", func(f fslocal.FS, p string) error {
			_, err := f.Edit(context.Background(), p, hfs.Edit{Old: "inside", New: "PWNED"}, hfs.Precondition{})
			return err
		}, func(x *escapeFixture) string { return x.outside }},
		{"write after lock, dir swapped", "write:locked", func(f fslocal.FS, p string) error {
			_, err := f.Write(context.Background(), p, []byte("PWNED"), hfs.WriteOptions{})
			return err
		}, func(x *escapeFixture) string { return "../outside" }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x := newEscapeFixture(t)
			dir := filepath.Join(x.root, "job")
			require.NoError(t, os.Mkdir(dir, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("inside\n"), 0o644))
			fslocal.SetHook(x.fsys, func(stage, _ string) {
				if stage == c.stage {
					swapDir(t, dir, c.link(x))
				}
			})
			err := c.op(x.fsys, x.root+"/job/secret.txt")
			require.Error(t, err)
			assert.ErrorIs(t, err, harness.CodeOutsideRoot)
			x.checkOutsideUntouched(t)
		})
	}
}

func TestSwapFileForLinkDuringEdit(t *testing.T) {
	x := newEscapeFixture(t)
	p := filepath.Join(x.root, "target.txt")
	require.NoError(t, os.WriteFile(p, []byte("SENTINEL inside\n"), 0o644))
	fslocal.SetHook(x.fsys, func(stage, _ string) {
		if stage == "edit:locked" {
			require.NoError(t, os.Remove(p))
			require.NoError(t, os.Symlink(filepath.Join(x.outside, "secret.txt"), p))
		}
	})
	_, err := x.fsys.Edit(context.Background(), x.root+"/target.txt", hfs.Edit{Old: "SENTINEL", New: "PWNED"}, hfs.Precondition{})
	require.ErrorIs(t, err, harness.CodeOutsideRoot)
	x.checkOutsideUntouched(t)
}

// TestSwapRace flips a directory between a real one and a link to the
// outside while writes and reads run: whatever interleaving happens,
// nothing outside is written or read.
func TestSwapRace(t *testing.T) {
	x := newEscapeFixture(t)
	dir := filepath.Join(x.root, "flip")
	real := filepath.Join(x.root, "flip.real")
	require.NoError(t, os.Mkdir(real, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(real, "secret.txt"), []byte("inside\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(x.outside, "flip-target"), []byte(secret), 0o644))
	x.before = snapshot(t, x.base, x.root)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; !stop.Load(); i++ {
			os.Remove(dir)
			if i%2 == 0 {
				os.Symlink("flip.real", dir)
			} else {
				os.Symlink("../outside", dir)
			}
		}
	})
	var leaked atomic.Int64
	for range 300 {
		ctx := context.Background()
		// Any refusal is fine here (outside_root, or not_found,
		// already_exists, invalid_path when the link vanishes or loops
		// mid-walk); what matters is that nothing outside is touched.
		_, err := x.fsys.Write(ctx, x.root+"/flip/secret.txt", []byte("inside\n"), hfs.WriteOptions{})
		var fe *hfs.PathError
		if err != nil && !errors.As(err, &fe) {
			t.Errorf("write: an error without a code: %v", err)
		}
		text, err := x.fsys.ReadText(ctx, x.root+"/flip/secret.txt", hfs.Window{})
		if err == nil && strings.Contains(text.Lines[0].Text, "SENTINEL") {
			leaked.Add(1)
		}
	}
	stop.Store(true)
	wg.Wait()
	assert.Zero(t, leaked.Load(), "no read reached outside")
	x.checkOutsideUntouched(t)
}
