package checkpoint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/attdigest"
	"github.com/go-harness/harness/internal/pathmatch"
)

// racyMargin is how close to a scan a file's modification time may be
// for the stat cache to trust it: a file changed again within the same
// timestamp tick as the scan that hashed it keeps its size and times, so
// such entries are hashed again by the next scan (git's racy-git rule).
// Two seconds covers file systems with coarse timestamps (FAT's two
// seconds, one second elsewhere) and the coarse kernel clock files are
// stamped with.
const racyMargin = 2 * time.Second

// maxRuleFile bounds an ignore file read.
const maxRuleFile = 1 << 20

// sniffLen is how much of a file decides whether it is binary (a NUL
// byte), as git and the read tool decide.
const sniffLen = 8000

// scanner is one walk of a workspace.
type scanner struct {
	ctx   context.Context
	cfg   *Config
	abs   string // the workspace directory, absolute and clean
	store bool   // store kept content (a checkpoint), or only hash (a dry run)
	objs  *objects
	extra *pathmatch.Rules

	prev      []Entry   // the previous scan's entries, in tree order
	cur       int       // the next entry of prev not yet passed
	racyLimit int64     // entries of prev modified at or after this are hashed again
	started   time.Time // when this scan started

	out      []Entry
	changed  bool  // the tree differs from prev in anything, stat data included
	newBytes int64 // content stored by this scan
	buf      []byte

	// Small files are stored in packs: pack is the one being filled,
	// packed the indexes in out of the entries it holds.
	pack   []byte
	packed []int
	// first maps a content digest stored by this scan to the entry that
	// holds it; followers are entries whose content another holds.
	first     map[string]int
	followers [][2]int // {entry, the entry holding its content}
	// known maps the digests of the previous scan's kept contents to an
	// entry that holds them; built on first need.
	known map[string]*Entry
}

// Packing.
const (
	// maxPackedFile is the largest file stored in a pack rather than
	// alone.
	maxPackedFile = 64 << 10
	// packTarget is how much a pack holds before it is stored.
	packTarget = 8 << 20
)

// prevFor returns the previous scan's entry at p (which the walk visits
// in tree order), or nil.
func (s *scanner) prevFor(p string) *Entry {
	for s.cur < len(s.prev) {
		c := ComparePaths(s.prev[s.cur].Path, p)
		if c > 0 {
			break
		}
		e := &s.prev[s.cur]
		s.cur++
		if c == 0 {
			return e
		}
		s.changed = true // gone since
	}
	s.changed = true // new since
	return nil
}

// errTooMany is the error of a workspace with more entries than allowed.
func (s *scanner) errTooMany() error {
	return &harness.Error{Code: harness.CodeTooLarge, Message: fmt.Sprintf(
		"checkpoint: %s holds more than %d files and directories (not counting ignored ones); checkpoint a smaller directory, ignore more (Config.Ignore, .gitignore), or raise Config.MaxEntries", s.abs, s.cfg.MaxEntries)}
}

// dirHandle is an open directory of the workspace: the walk reaches
// everything through such handles, relative to the one above, never
// following a symbolic link, so it cannot leave the workspace.
type dirHandle interface {
	// names returns the directory's entry names, unsorted.
	names() ([]string, error)
	// lstat describes the entry name without following a link; kind is 0
	// for a pipe, socket or device.
	lstat(name string) (info, error)
	// sub opens the subdirectory name.
	sub(name string) (dirHandle, error)
	// open opens the regular file name for reading, without following a
	// link or blocking on a pipe.
	open(name string) (*os.File, error)
	readlink(name string) (string, error)
	close() error
}

// info is what lstat reports.
type info struct {
	kind Kind
	mode iofs.FileMode // permission bits
	size int64
	stat Stat
}

// dir scans the directory h, at rel in the workspace (abs on disk).
func (s *scanner) dir(h dirHandle, rel, abs string, rules *pathmatch.Stack) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	names, err := h.names()
	if err != nil {
		return err
	}
	slices.Sort(names)
	rules = s.pushRules(h, abs, names, rules)
	for _, name := range names {
		if name == ".git" {
			continue
		}
		p := name
		if rel != "" {
			p = rel + "/" + name
		}
		fi, err := h.lstat(name)
		if err != nil {
			if errors.Is(err, iofs.ErrNotExist) {
				continue // removed since the listing
			}
			return err
		}
		if fi.kind == 0 {
			continue // a pipe, socket or device: never recorded
		}
		childAbs := abs + "/" + name
		if abs == "/" {
			childAbs = "/" + name
		}
		if s.ignored(p, childAbs, fi.kind == KindDir, rules) {
			continue
		}
		if len(s.out) >= s.cfg.MaxEntries {
			return s.errTooMany()
		}
		prev := s.prevFor(p)
		e := Entry{Path: p, Kind: fi.kind, Mode: fi.mode}
		switch fi.kind {
		case KindDir:
			if prev == nil || prev.Kind != KindDir || prev.Mode != e.Mode {
				s.changed = true
			}
			s.out = append(s.out, e)
			sub, err := h.sub(name)
			if err != nil {
				if errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.ELOOP) {
					s.out = s.out[:len(s.out)-1]
					continue // replaced since the listing
				}
				return err
			}
			err = s.dir(sub, p, childAbs, rules)
			sub.close()
			if err != nil {
				return err
			}
		case KindSymlink:
			e.Stat, e.Size = fi.stat, fi.size
			if prev != nil && s.fresh(prev, &e) {
				e.Target = prev.Target
			} else {
				s.changed = true
				target, err := h.readlink(name)
				if err != nil {
					if errors.Is(err, iofs.ErrNotExist) || errors.Is(err, syscall.EINVAL) {
						continue
					}
					return err
				}
				e.Target = target
			}
			s.out = append(s.out, e)
		case KindFile:
			e.Stat, e.Size = fi.stat, fi.size
			if prev != nil && s.fresh(prev, &e) && (prev.Kept || !s.store || prev.omit || !s.keepable(prev.Size, false)) {
				e.Digest, e.Kept, e.omit, e.Pack, e.Offset = prev.Digest, prev.Kept, prev.omit, prev.Pack, prev.Offset
			} else {
				s.changed = true
				if err := s.hash(h, name, &e); err != nil {
					if errors.Is(err, iofs.ErrNotExist) {
						continue
					}
					if !isUnreadable(err) {
						return err
					}
					e.Digest, e.Kept = "", false
				}
			}
			s.out = append(s.out, e)
		}
	}
	return nil
}

// fresh reports whether the previous entry prev can stand for e: same
// kind, permissions, size and metadata, and not modified so close to
// the scan that hashed it that a later change could hide (racy).
func (s *scanner) fresh(prev, e *Entry) bool {
	return prev.Kind == e.Kind && prev.Mode == e.Mode && prev.Size == e.Size &&
		prev.Stat == e.Stat && e.Stat.MtimeNS != 0 && prev.Stat.MtimeNS < s.racyLimit &&
		(e.Kind != KindFile || prev.Digest != "")
}

// keepable reports whether the size policy lets a file of size bytes be
// kept; binary says the file is known to be binary.
func (s *scanner) keepable(size int64, binary bool) bool {
	if binary {
		return size <= s.cfg.MaxBinaryBytes
	}
	return size <= s.cfg.MaxFileBytes
}

// hash reads the file name of r, fills e's digest and size, and stores
// its content when the policy keeps it.
func (s *scanner) hash(h dirHandle, name string, e *Entry) error {
	f, err := h.open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() || statOf(fi).Ino != e.Stat.Ino {
		return iofs.ErrNotExist // replaced since it was listed
	}
	if e.Size > s.cfg.MaxFileBytes {
		h := sha256.New()
		n, err := io.Copy(h, f)
		if err != nil {
			return err
		}
		e.Size, e.Digest, e.Kept, e.omit = n, attdigest.Prefix+hex.EncodeToString(h.Sum(nil)), false, true
		return nil
	}
	// Read one byte past the size seen, to notice a file that grew.
	want := int(e.Size) + 1
	if cap(s.buf) < want {
		s.buf = make([]byte, 0, want)
	}
	buf := s.buf[:want]
	n, err := io.ReadFull(f, buf)
	switch {
	case err == nil:
		// It grew while being read: hash it all, streaming.
		h := sha256.New()
		h.Write(buf)
		m, err := io.Copy(h, f)
		if err != nil {
			return err
		}
		e.Size, e.Digest, e.Kept = int64(n)+m, attdigest.Prefix+hex.EncodeToString(h.Sum(nil)), false
		return nil
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
	default:
		return err
	}
	data := buf[:n]
	e.Size = int64(n)
	e.Digest = attdigest.Of(data)
	binary := bytes.IndexByte(data[:min(len(data), sniffLen)], 0) >= 0
	if !s.keepable(e.Size, binary) {
		e.Kept, e.omit = false, true
		return nil
	}
	if !s.store {
		e.Kept = true // would be kept
		return nil
	}
	return s.keep(e, data)
}

// keep stores the content of e, data, unless it is stored already: in
// the pack being filled for a small file, alone otherwise.
func (s *scanner) keep(e *Entry, data []byte) error {
	if s.known == nil {
		s.known = map[string]*Entry{}
		for i := range s.prev {
			if p := &s.prev[i]; p.Kept && p.Kind == KindFile {
				s.known[p.Digest] = p
			}
		}
	}
	if k, ok := s.known[e.Digest]; ok {
		e.Kept, e.Pack, e.Offset = true, k.Pack, k.Offset
		return nil
	}
	if i, ok := s.first[e.Digest]; ok {
		e.Kept = true
		s.followers = append(s.followers, [2]int{len(s.out), i})
		return nil
	}
	if s.newBytes+e.Size > s.cfg.MaxCheckpointBytes {
		e.Kept = false
		return nil
	}
	if s.first == nil {
		s.first = map[string]int{}
	}
	s.first[e.Digest] = len(s.out) // the index e gets
	if e.Size <= maxPackedFile {
		if len(s.pack)+len(data) > packTarget {
			if err := s.flushPack(); err != nil {
				return err
			}
		}
		e.Offset = int64(len(s.pack))
		s.pack = append(s.pack, data...)
		s.packed = append(s.packed, len(s.out))
		s.newBytes += e.Size
		e.Kept = true
		return nil
	}
	got, err := s.objs.put(s.ctx, data)
	if err != nil {
		return fmt.Errorf("checkpoint: storing %s: %w", e.Path, err)
	}
	if got != e.Digest {
		return fmt.Errorf("checkpoint: the store returned digest %s for %s, whose digest is %s", got, e.Path, e.Digest)
	}
	s.newBytes += e.Size
	e.Kept = true
	return nil
}

// flushPack stores the pack being filled and names it in its entries.
func (s *scanner) flushPack() error {
	if len(s.packed) == 0 {
		return nil
	}
	d, err := s.objs.put(s.ctx, s.pack)
	if err != nil {
		return fmt.Errorf("checkpoint: storing the contents of %d small files: %w", len(s.packed), err)
	}
	for _, i := range s.packed {
		s.out[i].Pack = d
	}
	s.pack, s.packed = s.pack[:0], s.packed[:0]
	return nil
}

// finish stores what is left to store and points the entries whose
// content another entry holds at it.
func (s *scanner) finish() error {
	if err := s.flushPack(); err != nil {
		return err
	}
	for _, f := range s.followers {
		s.out[f[0]].Pack, s.out[f[0]].Offset = s.out[f[1]].Pack, s.out[f[1]].Offset
	}
	return nil
}

// isUnreadable reports an error that makes a file's content unknown
// without stopping the scan.
func isUnreadable(err error) bool {
	return errors.Is(err, iofs.ErrPermission) || errors.Is(err, syscall.EIO) || errors.Is(err, syscall.ELOOP) ||
		errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.EAGAIN)
}

// kindOf is the kind of an entry of mode m; 0 for one never recorded.
func kindOf(m iofs.FileMode) Kind {
	switch {
	case m.IsRegular():
		return KindFile
	case m.IsDir():
		return KindDir
	case m&iofs.ModeSymlink != 0:
		return KindSymlink
	}
	return 0
}

// ignored reports whether the walk leaves p out: Config.Exclude first,
// then Config.Ignore when one of its patterns matches, the ignore files
// otherwise.
func (s *scanner) ignored(p, abs string, isDir bool, rules *pathmatch.Stack) bool {
	if s.cfg.Exclude != nil && s.cfg.Exclude(p, isDir) {
		return true
	}
	switch s.extra.Match(p, isDir) {
	case pathmatch.Ignored:
		return true
	case pathmatch.Included:
		return false
	}
	return rules.Ignored(abs, isDir)
}

// pushRules adds the ignore files of directory h (abs on disk; names
// are its entries, sorted) to rules.
func (s *scanner) pushRules(h dirHandle, abs string, names []string, rules *pathmatch.Stack) *pathmatch.Stack {
	has := func(n string) bool {
		_, ok := slices.BinarySearch(names, n)
		return ok
	}
	if has(".git") {
		if git, err := h.sub(".git"); err == nil {
			if info, err := git.sub("info"); err == nil {
				if data, err := readBounded(info, "exclude"); err == nil {
					rules = rules.Push(abs, pathmatch.ParseRules(data))
				}
				info.close()
			}
			git.close()
		}
	}
	if has(".gitignore") {
		if data, err := readBounded(h, ".gitignore"); err == nil {
			rules = rules.Push(abs, pathmatch.ParseRules(data))
		}
	}
	return rules
}

// readBounded reads a small regular file of h.
func readBounded(h dirHandle, name string) ([]byte, error) {
	f, err := h.open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, iofs.ErrInvalid
	}
	return io.ReadAll(io.LimitReader(f, maxRuleFile))
}

// ancestorRules returns the ignore rules the directories above dir apply
// to it, as git applies them: those of the enclosing repository's
// directories from its top down to dir's parent, and the repository's
// .git/info/exclude. Outside a repository there are none.
func ancestorRules(dir string) *pathmatch.Stack {
	var chain []string
	top := ""
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		chain = append(chain, d)
		if fi, err := os.Lstat(filepath.Join(d, ".git")); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
			top = d
			break
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	if fi, err := os.Lstat(filepath.Join(dir, ".git")); err == nil && (fi.IsDir() || fi.Mode().IsRegular()) {
		return nil // dir is the top of its own repository
	}
	if top == "" {
		return nil
	}
	var rules *pathmatch.Stack
	read := func(p string) *pathmatch.Rules {
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer f.Close()
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		data, err := io.ReadAll(io.LimitReader(f, maxRuleFile))
		if err != nil {
			return nil
		}
		return pathmatch.ParseRules(data)
	}
	rules = rules.Push(filepath.ToSlash(top), read(filepath.Join(top, ".git", "info", "exclude")))
	for i := len(chain) - 1; i >= 0; i-- {
		rules = rules.Push(filepath.ToSlash(chain[i]), read(filepath.Join(chain[i], ".gitignore")))
	}
	return rules
}

// extraRules parses Config.Ignore.
func extraRules(patterns []string) *pathmatch.Rules {
	if len(patterns) == 0 {
		return nil
	}
	return pathmatch.ParseRules([]byte(strings.Join(patterns, "\n")))
}
