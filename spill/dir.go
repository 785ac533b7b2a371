package spill

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-harness/harness/internal/spillname"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
)

// Permissions of what a directory store creates: only the owner of the process can
// list, read or write spilled output.
const (
	dirPerm  os.FileMode = 0o700
	filePerm os.FileMode = 0o600
)

// copyBuffer is the size of the chunks Save writes: large enough that a
// gigabyte costs few system calls, small enough not to matter.
const copyBuffer = 256 << 10

// dirStore is the Store of [NewDir].
type dirStore struct {
	root   string
	rand   io.Reader
	budget *budget
}

// NewDir returns a Store that keeps each output in its own file under the
// root directory dir, one subdirectory per session (mode 0700), files mode
// 0600 created exclusively, so an existing file is never overwritten or
// followed. File and directory names are derived from the owner's ids,
// reduced to ASCII letters, digits, '_' and '-', plus a random part: no id
// can make a name leave the root. Locators have the form
// "spill://<session-dir>/<file>"; Open accepts only names of that shape,
// resolves them inside the root with os.Root, and opens only regular
// files. The directory is created (mode 0700) when the first output is
// saved.
//
// Outputs are streamed to disk as they are read and not synced: a spill
// file is a copy kept for retrieval, and losing it in an operating system
// crash costs nothing the session log does not have.
//
// The store keeps at most a budget of bytes per session (4 GiB unless
// StoreConfig.SessionBudget says otherwise); a Save past it fails with
// harness.CodeSpillBudget. The first Save of a session in a process counts the
// files the session already has, so the budget holds across restarts; removals
// by other processes sharing the root are seen when the session is deleted. Use
// one store per root in a process.
//
// An empty dir or an invalid Config is an error
// (harness.CodeInvalidOption).
func NewDir(dir string, cfg StoreConfig) (Store, error) {
	limit, err := cfg.sessionBudget()
	if dir == "" {
		err = errors.Join(err, toolexec.OptionError("spill: NewDir: the directory is empty"))
	}
	if err != nil {
		return nil, err
	}
	return &dirStore{root: dir, rand: rand.Reader, budget: newBudget(limit)}, nil
}

var _ Store = (*dirStore)(nil)

// Save implements tools.OutputStore. It streams r to a new file and
// returns its locator and size; on failure the partial file is removed.
//
// An output that would take its session past the store's budget fails
// with harness.CodeSpillBudget (its cause a *BudgetError) and keeps nothing.
func (d *dirStore) Save(ctx context.Context, owner tools.Owner, r io.Reader) (tools.Stored, error) {
	if err := ctx.Err(); err != nil {
		return tools.Stored{}, err
	}
	if err := os.MkdirAll(d.root, dirPerm); err != nil {
		return tools.Stored{}, fmt.Errorf("spill: creating the spill directory: %w", err)
	}
	root, err := os.OpenRoot(d.root)
	if err != nil {
		return tools.Stored{}, fmt.Errorf("spill: opening the spill directory: %w", err)
	}
	defer root.Close()
	sdir := spillname.SessionDir(owner.Session)
	f, name, err := d.create(root, sdir, owner)
	if err != nil {
		return tools.Stored{}, err
	}
	bw := &budgetWriter{w: f, b: d.budget, sdir: sdir, session: owner.Session,
		count: func() (int64, error) { return sessionBytes(root, sdir, name) }}
	n, err := copyContext(ctx, bw, r)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("spill: closing %s: %w", name, cerr)
	}
	if err != nil {
		_ = root.Remove(path.Join(sdir, name))
		bw.refund()
		return tools.Stored{}, err
	}
	return tools.Stored{Locator: tools.OutputScheme + sdir + "/" + name, Size: n}, nil
}

// create makes the session directory if needed and creates a new file in
// it exclusively. It retries when the random name exists already, and when
// Expire removed the (empty) session directory in between.
func (d *dirStore) create(root *os.Root, sdir string, owner tools.Owner) (*os.File, string, error) {
	var lastErr error
	for range 4 {
		if err := root.Mkdir(sdir, dirPerm); err != nil && !errors.Is(err, iofs.ErrExist) {
			return nil, "", fmt.Errorf("spill: creating the session directory: %w", err)
		}
		if fi, err := root.Lstat(sdir); err != nil {
			lastErr = err
			continue
		} else if !fi.IsDir() {
			return nil, "", fmt.Errorf("spill: %s in the spill directory is not a directory", sdir)
		}
		var rnd [8]byte
		if _, err := io.ReadFull(d.rand, rnd[:]); err != nil {
			return nil, "", fmt.Errorf("spill: generating a file name: %w", err)
		}
		name := spillname.Sanitize(owner.Tool, 48) + "-" + spillname.Sanitize(owner.Call, 48) + "-" + hex.EncodeToString(rnd[:]) + ".txt"
		f, err := root.OpenFile(path.Join(sdir, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, filePerm)
		if err == nil {
			return f, name, nil
		}
		lastErr = err
		if !errors.Is(err, iofs.ErrExist) && !errors.Is(err, iofs.ErrNotExist) {
			break
		}
	}
	return nil, "", fmt.Errorf("spill: creating a spill file: %w", lastErr)
}

// sessionBytes is the size of the spill files a session directory holds,
// the one being written (name) aside.
func sessionBytes(root *os.Root, sdir, name string) (int64, error) {
	entries, err := readDir(root, sdir)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range entries {
		if e.Name() == name || !e.Type().IsRegular() || !validFileName(e.Name()) {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		total += fi.Size()
	}
	return total, nil
}

// copyContext copies r to w in large chunks, checking ctx between chunks.
func copyContext(ctx context.Context, w io.Writer, r io.Reader) (int64, error) {
	buf := make([]byte, copyBuffer)
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		n, rerr := io.ReadFull(r, buf)
		if n > 0 {
			if _, err := w.Write(buf[:n]); err != nil {
				if errors.Is(err, harness.CodeSpillBudget) {
					return total, err
				}
				return total, fmt.Errorf("spill: writing: %w", err)
			}
			total += int64(n)
		}
		switch {
		case rerr == nil:
		case errors.Is(rerr, io.EOF), errors.Is(rerr, io.ErrUnexpectedEOF):
			return total, nil
		default:
			return total, fmt.Errorf("spill: reading the output: %w", rerr)
		}
	}
}

// Open implements tools.OutputStore.
func (d *dirStore) Open(ctx context.Context, locator string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sdir, name, ok := parseLocator(locator)
	if !ok {
		return nil, locatorError(locator, errNotFound())
	}
	root, err := os.OpenRoot(d.root)
	if err != nil {
		if errors.Is(err, iofs.ErrNotExist) {
			return nil, locatorError(locator, errNotFound())
		}
		return nil, locatorError(locator, err)
	}
	defer root.Close()
	if fi, err := root.Lstat(sdir); err != nil || !fi.IsDir() {
		return nil, d.openErr(locator, err)
	}
	p := path.Join(sdir, name)
	before, err := root.Lstat(p)
	if err != nil || !before.Mode().IsRegular() {
		return nil, d.openErr(locator, err)
	}
	f, err := root.Open(p)
	if err != nil {
		return nil, d.openErr(locator, err)
	}
	after, err := f.Stat()
	if err != nil || !os.SameFile(before, after) {
		f.Close()
		return nil, d.openErr(locator, err)
	}
	return f, nil
}

// LocalPath returns the OS path of the file that holds a saved output, so
// that the read tool can hold spilled output to the session's path policy
// (fs.PolicyOf) like any other file: a spill directory a rule denies is
// not read back.
func (d *dirStore) LocalPath(locator string) (string, error) {
	sdir, name, ok := parseLocator(locator)
	if !ok {
		return "", locatorError(locator, errNotFound())
	}
	root, err := filepath.Abs(d.root)
	if err != nil {
		return "", locatorError(locator, err)
	}
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	return filepath.Join(root, sdir, name), nil
}

func (d *dirStore) openErr(locator string, err error) error {
	if err == nil || errors.Is(err, iofs.ErrNotExist) {
		return locatorError(locator, errNotFound())
	}
	return locatorError(locator, err)
}

// DeleteSession implements Store.
func (d *dirStore) DeleteSession(ctx context.Context, session string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	root, err := os.OpenRoot(d.root)
	if err != nil {
		if errors.Is(err, iofs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("spill: opening the spill directory: %w", err)
	}
	defer root.Close()
	sdir := spillname.SessionDir(session)
	defer d.budget.forget(sdir) // the next Save counts again what is left
	if err := root.RemoveAll(sdir); err != nil {
		return fmt.Errorf("spill: deleting the outputs of session %s: %w", quote(session), err)
	}
	return nil
}

// Expire implements Store. A file's age is its modification time, which
// is when its saving finished. Session directories left empty and older
// than cutoff are removed too. Files that do not look like spill files
// are left alone.
func (d *dirStore) Expire(ctx context.Context, cutoff time.Time) (int, error) {
	root, err := os.OpenRoot(d.root)
	if err != nil {
		if errors.Is(err, iofs.ErrNotExist) {
			return 0, nil
		}
		return 0, fmt.Errorf("spill: opening the spill directory: %w", err)
	}
	defer root.Close()
	dirs, err := readDir(root, ".")
	if err != nil {
		return 0, fmt.Errorf("spill: listing the spill directory: %w", err)
	}
	removed := 0
	var errs []error
	for _, de := range dirs {
		if !de.IsDir() || !validSessionDir(de.Name()) {
			continue
		}
		// The directory's own age, before removing files changes it.
		dirInfo, err := de.Info()
		if err != nil {
			continue
		}
		files, err := readDir(root, de.Name())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		left := 0
		for _, fe := range files {
			if err := ctx.Err(); err != nil {
				return removed, err
			}
			if !fe.Type().IsRegular() || !validFileName(fe.Name()) {
				left++
				continue
			}
			fi, err := fe.Info()
			if err != nil {
				if !errors.Is(err, iofs.ErrNotExist) {
					errs = append(errs, err)
					left++
				}
				continue
			}
			if !fi.ModTime().Before(cutoff) {
				left++
				continue
			}
			err = root.Remove(path.Join(de.Name(), fe.Name()))
			if err != nil && !errors.Is(err, iofs.ErrNotExist) {
				errs = append(errs, err)
				left++
				continue
			}
			if err == nil {
				d.budget.release(de.Name(), fi.Size())
			}
			removed++
		}
		if left == 0 && dirInfo.ModTime().Before(cutoff) {
			// A Save may be creating a file right now: Remove refuses a
			// directory that is no longer empty, and Save retries when its
			// directory vanished.
			_ = root.Remove(de.Name())
		}
	}
	if len(errs) > 0 {
		return removed, fmt.Errorf("spill: expiring outputs: %w", errors.Join(errs...))
	}
	return removed, nil
}

func readDir(root *os.Root, name string) ([]iofs.DirEntry, error) {
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// parseLocator splits "spill://<session-dir>/<file>" and accepts only
// names the directory store could have made.
func parseLocator(loc string) (sdir, name string, ok bool) {
	rest, ok := strings.CutPrefix(loc, tools.OutputScheme)
	if !ok {
		return "", "", false
	}
	sdir, name, ok = strings.Cut(rest, "/")
	if !ok || !validSessionDir(sdir) || !validFileName(name) {
		return "", "", false
	}
	return sdir, name, true
}

func nameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

func allNameChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if !nameChar(s[i]) {
			return false
		}
	}
	return true
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// validSessionDir accepts "<1-64 name chars>-<8 hex>".
func validSessionDir(s string) bool {
	const suffix = 1 + 8
	if len(s) < 1+suffix || len(s) > 64+suffix || s[len(s)-suffix] != '-' {
		return false
	}
	return allNameChars(s[:len(s)-suffix]) && isLowerHex(s[len(s)-8:])
}

// validFileName accepts "<name chars>-<16 hex>.txt" of at most 130 bytes.
func validFileName(s string) bool {
	base, ok := strings.CutSuffix(s, ".txt")
	const suffix = 1 + 16
	if !ok || len(base) < 3+suffix || len(base) > 48+1+48+suffix || base[len(base)-suffix] != '-' {
		return false
	}
	return allNameChars(base[:len(base)-suffix]) && isLowerHex(base[len(base)-16:])
}
