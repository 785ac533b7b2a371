package checkpoint

import (
	iofs "io/fs"
	"strings"
)

// Kind is what a tree entry is.
type Kind uint8

// Entry kinds. Other kinds of files (pipes, sockets, devices) are not
// recorded, so a rewind never touches them.
const (
	KindFile    Kind = 'f'
	KindDir     Kind = 'd'
	KindSymlink Kind = 'l'
)

func (k Kind) String() string {
	switch k {
	case KindFile:
		return "file"
	case KindDir:
		return "dir"
	case KindSymlink:
		return "symlink"
	}
	return "unknown"
}

// Entry is one file, directory or symbolic link of a checkpoint.
type Entry struct {
	// Path is slash-separated and relative to the workspace directory:
	// clean, never empty, never starting with "/" or "..".
	Path string
	Kind Kind
	// Mode holds the permission bits (iofs.ModePerm).
	Mode iofs.FileMode
	// Size is a file's length in bytes; zero for directories, the
	// target's length for links.
	Size int64
	// Digest is a file's content digest ("sha256:<hex>"); empty for
	// directories, links, and files that could not be read.
	Digest string
	// Target is a link's target, as the link holds it.
	Target string
	// Kept reports that the file's content is in the store, so a rewind
	// can bring it back. Files past the size limits are recorded by
	// digest and size only.
	Kept bool
	// Pack, for kept content stored with other small files, is the
	// digest of the pack that holds it, at Offset; empty when the
	// content is stored alone, under Digest.
	Pack   string
	Offset int64
	// Stat is what the stat cache compares to skip hashing an unchanged
	// file.
	Stat Stat

	// omit says the size policy left the content out (not recorded in
	// manifests: a resumed workspace reads such a file once more).
	omit bool
}

// Stat is the file metadata the stat cache compares, as git's index
// does. Zero fields are unknown (on systems that do not report them).
type Stat struct {
	MtimeNS int64
	CtimeNS int64
	Ino     uint64
	Dev     uint64
}

// Unreadable reports a file the scan could not read: its content is
// unknown, so a rewind leaves it alone.
func (e *Entry) Unreadable() bool { return e.Kind == KindFile && e.Digest == "" }

// sameContent reports whether a and b hold the same thing: kind,
// permissions, content or link target (not the metadata of the stat
// cache). Unreadable files are never the same as anything.
func sameContent(a, b *Entry) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Kind != b.Kind || a.Mode != b.Mode {
		return false
	}
	switch a.Kind {
	case KindFile:
		return a.Digest != "" && a.Digest == b.Digest && a.Size == b.Size
	case KindSymlink:
		return a.Target == b.Target
	}
	return true
}

// Tree is the entries of one checkpoint in tree order: a directory
// comes right before what it holds, and the names of one directory are
// in byte order (the order of a depth-first walk). A Tree is immutable
// once made.
type Tree struct {
	entries []Entry
	index   map[string]int
}

// NewTree returns a tree of entries, which must be in tree order (see
// ComparePaths) without duplicates; it keeps the slice.
func newTree(entries []Entry) *Tree { return &Tree{entries: entries} }

// Entries returns the tree's entries in tree order. The caller must not
// modify them.
func (t *Tree) Entries() []Entry {
	if t == nil {
		return nil
	}
	return t.entries
}

// Len returns the number of entries.
func (t *Tree) Len() int {
	if t == nil {
		return 0
	}
	return len(t.entries)
}

// Lookup returns the entry at path, or nil.
func (t *Tree) Lookup(path string) *Entry {
	if t == nil {
		return nil
	}
	if t.index == nil {
		idx := make(map[string]int, len(t.entries))
		for i := range t.entries {
			idx[t.entries[i].Path] = i
		}
		t.index = idx
	}
	i, ok := t.index[path]
	if !ok {
		return nil
	}
	return &t.entries[i]
}

// Totals returns the number of files and their total size, and how many
// files are recorded without their content.
func (t *Tree) Totals() (files int, bytes int64, omitted int) {
	for i := range t.Entries() {
		e := &t.entries[i]
		if e.Kind != KindFile {
			continue
		}
		files++
		bytes += e.Size
		if !e.Kept {
			omitted++
		}
	}
	return files, bytes, omitted
}

// ComparePaths orders paths as a tree is ordered: component by
// component, each compared by bytes, so "a/b" comes right after "a" and
// before "a.txt".
func ComparePaths(a, b string) int {
	for {
		ai := strings.IndexByte(a, '/')
		bi := strings.IndexByte(b, '/')
		as, bs := a, b
		if ai >= 0 {
			as = a[:ai]
		}
		if bi >= 0 {
			bs = b[:bi]
		}
		if c := strings.Compare(as, bs); c != 0 {
			return c
		}
		switch {
		case ai < 0 && bi < 0:
			return 0
		case ai < 0:
			return -1
		case bi < 0:
			return 1
		}
		a, b = a[ai+1:], b[bi+1:]
	}
}

// pair is one path of a merge of two trees: the entry of each, or nil.
type pair struct {
	path string
	a, b *Entry
}

// merge calls fn for every path of a or b, in tree order.
func merge(a, b *Tree, fn func(p pair) bool) {
	ae, be := a.Entries(), b.Entries()
	i, j := 0, 0
	for i < len(ae) || j < len(be) {
		var p pair
		switch {
		case j >= len(be):
			p = pair{path: ae[i].Path, a: &ae[i]}
			i++
		case i >= len(ae):
			p = pair{path: be[j].Path, b: &be[j]}
			j++
		default:
			switch c := ComparePaths(ae[i].Path, be[j].Path); {
			case c < 0:
				p = pair{path: ae[i].Path, a: &ae[i]}
				i++
			case c > 0:
				p = pair{path: be[j].Path, b: &be[j]}
				j++
			default:
				p = pair{path: ae[i].Path, a: &ae[i], b: &be[j]}
				i++
				j++
			}
		}
		if !fn(p) {
			return
		}
	}
}

// Changed returns the paths whose content differs between a and b (see
// Diff for what counts), in tree order.
func Changed(a, b *Tree) []string {
	var out []string
	merge(a, b, func(p pair) bool {
		if !sameContent(p.a, p.b) {
			out = append(out, p.path)
		}
		return true
	})
	return out
}

// Summary counts what changed from one tree to the next.
type Summary struct {
	Added, Modified, Deleted int
	// Paths are the first changed paths, in tree order (at most
	// maxSummaryPaths).
	Paths []string
}

// maxSummaryPaths bounds Summary.Paths, which goes into the log.
const maxSummaryPaths = 32

// Diff summarizes the changes from a to b: entries added, removed, and
// changed in kind, permissions, content or link target. Directories
// count like files.
func Diff(a, b *Tree) Summary {
	var s Summary
	merge(a, b, func(p pair) bool {
		switch {
		case p.a == nil:
			s.Added++
		case p.b == nil:
			s.Deleted++
		case !sameContent(p.a, p.b):
			s.Modified++
		default:
			return true
		}
		if len(s.Paths) < maxSummaryPaths {
			s.Paths = append(s.Paths, p.path)
		}
		return true
	})
	return s
}
