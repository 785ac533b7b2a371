package shell

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-harness/harness/fs"
)

// mountPlan is what a command's sandbox masks, protects and pins, decided
// when the command starts.
type mountPlan struct {
	// pins are directories between a writable root and a masked or
	// protected path, bound onto themselves: a mount point cannot be
	// renamed, so the masked path keeps its name. A path the policy denies
	// by its name alone (.env, *.pem) stays denied wherever a rename
	// carries it in the workspace, and gets none.
	pins []string
	// readOnly are paths bound read-only onto themselves.
	readOnly []string
	// maskDirs and maskFiles get the empty directory or file over them.
	maskDirs, maskFiles []string
}

// eachDenyLister is a deny lister that lists for several kinds of access
// from one look at the file system (tools/permission.Paths does).
type eachDenyLister interface {
	ListDeniedEach(ctx context.Context, as ...fs.Access) ([][]string, error)
}

// nameDenier is a deny lister that tells when a listed path is denied by
// its name alone, wherever it is moved in the workspace
// (tools/permission.Paths does).
type nameDenier interface {
	DeniedByName(p string, a fs.Access) bool
}

// listDenied lists what dl denies for reading and for changing.
func listDenied(ctx context.Context, dl fs.DenyLister) (read, edit []string, err error) {
	if e, ok := dl.(eachDenyLister); ok {
		l, err := e.ListDeniedEach(ctx, fs.AccessRead, fs.AccessWrite)
		if err != nil {
			return nil, nil, err
		}
		if len(l) != 2 {
			return nil, nil, fmt.Errorf("the deny lister (%T) gave %d lists for 2 kinds of access", dl, len(l))
		}
		return l[0], l[1], nil
	}
	if read, err = dl.ListDenied(ctx, fs.AccessRead); err != nil {
		return nil, nil, err
	}
	if edit, err = dl.ListDenied(ctx, fs.AccessWrite); err != nil {
		return nil, nil, err
	}
	return read, edit, nil
}

// warm lists what the path policy denies and drops the lists: the
// policy's walk cache keeps the listings, which the next plan then only
// checks. Only a lister that looks once for both kinds of access
// (tools/permission.Paths, which keeps that cache and is safe for
// concurrent use) is asked; another would do the work for nothing.
func (b *bubblewrap) warm(ctx context.Context) {
	if _, ok := b.deny.(eachDenyLister); ok && ctx != nil {
		_, _, _ = listDenied(ctx, b.deny)
	}
}

// plan decides the mounts of a command: the path policy's denials as
// they exist now, and the host's listening unix sockets.
func (b *bubblewrap) plan(ctx context.Context) (*mountPlan, error) {
	p := &mountPlan{}
	seen := map[string]bool{}
	// byName holds the paths denied by their name alone (not through a
	// link), for each use they are planned for: renaming the directories
	// above them carries no denied content to an allowed name, so they
	// need no pins.
	byName := map[string]bool{}
	if b.deny != nil {
		read, edit, err := listDenied(ctx, b.deny)
		if err != nil {
			return nil, fmt.Errorf("listing what the path rules deny: %w", err)
		}
		nd, _ := b.deny.(nameDenier)
		for _, q := range edit {
			for _, t := range linkForms(q) {
				if _, err := os.Lstat(t); err == nil && !seen["ro:"+t] && b.writable(t) && !b.hiddenPath(t) {
					seen["ro:"+t] = true
					p.readOnly = append(p.readOnly, t)
					if t == q && nd != nil && nd.DeniedByName(q, fs.AccessWrite) {
						byName["ro:"+t] = true
					}
				}
			}
		}
		for _, q := range read {
			for _, t := range linkForms(q) {
				if b.addMask(p, seen, t) && t == q && nd != nil && nd.DeniedByName(q, fs.AccessRead) {
					byName["mask:"+t] = true
				}
			}
		}
	}
	for _, s := range listeningSockets() {
		if slices.Contains(b.cfg.Readable, s) || slices.Contains(b.cfg.Writable, s) {
			continue
		}
		if st, err := os.Lstat(s); err == nil && st.Mode()&os.ModeSocket != 0 {
			b.addMask(p, seen, s)
		}
	}
	// Pin the directories above what is masked or protected, up to the
	// writable root they are in.
	pinned := map[string]bool{}
	for i, list := range [][]string{p.readOnly, p.maskDirs, p.maskFiles} {
		use := "mask:"
		if i == 0 {
			use = "ro:"
		}
		for _, t := range list {
			root := b.writableRoot(t)
			if root == "" || byName[use+t] {
				continue
			}
			for d := filepath.Dir(t); d != root && strings.HasPrefix(d, root+string(filepath.Separator)); d = filepath.Dir(d) {
				pinned[d] = true
			}
		}
	}
	for d := range pinned {
		p.pins = append(p.pins, d)
	}
	// Outer directories first, so that a pin is never bound over another.
	slices.SortFunc(p.pins, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })
	return p, nil
}

// addMask masks t when it exists and commands can see it. The root and
// the directories above a bound one (the workspace, say) are never masked:
// a denied link planted to point there would hide everything.
// It reports whether t was added now.
func (b *bubblewrap) addMask(p *mountPlan, seen map[string]bool, t string) bool {
	if seen["mask:"+t] || b.hiddenPath(t) || b.aboveBound(t) {
		return false
	}
	st, err := os.Lstat(t)
	if err != nil || st.Mode()&os.ModeSymlink != 0 {
		return false
	}
	seen["mask:"+t] = true
	if st.IsDir() {
		p.maskDirs = append(p.maskDirs, t)
	} else {
		p.maskFiles = append(p.maskFiles, t)
	}
	return true
}

// linkForms returns p and, when p is a symbolic link, where it leads:
// binding over a link would follow it anyway, so the target is what is
// masked or protected.
func linkForms(p string) []string {
	st, err := os.Lstat(p)
	if err != nil {
		return nil
	}
	if st.Mode()&os.ModeSymlink == 0 {
		return []string{p}
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil
	}
	return []string{real}
}

// writableRoot returns the writable directory (the workspace unless
// read-only, or one of Writable) that t lies below, or "".
func (b *bubblewrap) writableRoot(t string) string {
	var roots []string
	if !b.cfg.ReadOnly {
		roots = append(roots, filepath.Clean(b.cfg.Workspace))
	}
	for _, w := range b.cfg.Writable {
		roots = append(roots, filepath.Clean(w))
	}
	best := ""
	for _, r := range roots {
		if (t == r || strings.HasPrefix(t, r+string(filepath.Separator))) && len(r) > len(best) {
			best = r
		}
	}
	return best
}

func (b *bubblewrap) writable(t string) bool { return b.writableRoot(t) != "" }

// aboveBound reports whether t is the root or a directory above (or
// equal to) one the configuration binds in.
func (b *bubblewrap) aboveBound(t string) bool {
	if t == "/" {
		return true
	}
	for _, v := range append(append([]string{b.cfg.Workspace}, b.cfg.Writable...), b.cfg.Readable...) {
		v = filepath.Clean(v)
		if v == t || strings.HasPrefix(v, t+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// hiddenPath reports whether commands cannot see t anyway: it lies below
// a hidden directory (or the host's /tmp) and outside every directory
// bound back in.
func (b *bubblewrap) hiddenPath(t string) bool {
	below := func(d string) bool { return t == d || strings.HasPrefix(t, d+string(filepath.Separator)) }
	for _, v := range append(append([]string{b.cfg.Workspace}, b.cfg.Writable...), b.cfg.Readable...) {
		if below(filepath.Clean(v)) {
			return false
		}
	}
	for _, h := range append([]string{"/tmp", "/dev", "/proc"}, b.hidden...) {
		if below(h) {
			return true
		}
	}
	return false
}

// hiddenDirs returns the host directories the sandbox hides by default:
// those that exist and are directories, not links (a link to one is
// hidden with it).
func hiddenDirs() []string {
	cands := []string{"/home", "/root", "/run", "/var/run", "/var/tmp", "/var/lib/docker", "/media", "/mnt"}
	if h, err := os.UserHomeDir(); err == nil && filepath.IsAbs(h) {
		cands = append(cands, filepath.Clean(h))
	}
	var out []string
	for _, c := range cands {
		st, err := os.Lstat(c)
		if err != nil || !st.IsDir() || slices.Contains(out, c) {
			continue
		}
		covered := false
		for _, o := range out {
			if strings.HasPrefix(c, o+"/") {
				covered = true
			}
		}
		if !covered && c != "/" && c != "/tmp" {
			out = append(out, c)
		}
	}
	return out
}

// listeningSockets returns the paths of the unix sockets bound in the
// host's network namespace (/proc/net/unix). Sockets of other network
// namespaces are not listed; the hidden directories cover where they
// usually live.
func listeningSockets() []string {
	f, err := os.Open("/proc/net/unix")
	if err != nil {
		return nil
	}
	defer f.Close()
	return parseUnixSockets(io.LimitReader(f, 64<<20))
}

// parseUnixSockets reads the table of /proc/net/unix (a header line, then
// "Num RefCount Protocol Flags Type St Inode Path" per socket) and
// returns the distinct absolute paths, cleaned. Abstract sockets (@name)
// and unnamed ones have none.
func parseUnixSockets(r io.Reader) []string {
	var out []string
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20) // grows from 4 KiB as lines need
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 {
			continue
		}
		p := strings.Join(fields[7:], " ")
		if !strings.HasPrefix(p, "/") {
			continue
		}
		if p = filepath.Clean(p); !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// maskSources returns an empty read-only file and an empty read-only
// directory to bind over masked paths: in a directory of this user's
// below the temporary directory, checked (owner, mode, no links) before
// each use, or made anew when it is not right.
func maskSources() (file, dir string, err error) {
	base := filepath.Join(os.TempDir(), fmt.Sprintf("harness-sandbox-%d", os.Geteuid()))
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", "", err
	}
	if !ownDir(base) {
		if base, err = os.MkdirTemp("", "harness-sandbox-"); err != nil {
			return "", "", err
		}
	}
	file, dir = filepath.Join(base, "empty"), filepath.Join(base, "empty.d")
	if st, err := os.Lstat(file); err != nil || !st.Mode().IsRegular() || st.Size() != 0 {
		os.Remove(file)
		f, err := os.OpenFile(file, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o444)
		if err != nil {
			return "", "", err
		}
		f.Close()
	}
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() {
		os.Remove(dir)
		if err := os.Mkdir(dir, 0o555); err != nil {
			return "", "", err
		}
	} else if entries, err := os.ReadDir(dir); err != nil || len(entries) > 0 {
		return "", "", fmt.Errorf("%s is not empty", dir)
	}
	os.Chmod(file, 0o444)
	os.Chmod(dir, 0o555)
	return file, dir, nil
}
