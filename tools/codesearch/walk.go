package codesearch

import (
	"context"
	"io"
	iofs "io/fs"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
	"github.com/go-harness/harness/internal/pathmatch"
)

// walker lists the files of a tree the way ripgrep does by default:
// hidden entries, .git, symbolic links, special files and what ignore
// rules exclude are left out.
type walker struct {
	fsys     fs.FileSystem
	hidden   bool
	noIgnore bool
	// prune, when set, reports whether a directory (relative to the
	// walk's top) can hold wanted files.
	prune func(rel string) bool
	// workers is the number of directories listed at once.
	workers int
	// types lists directories without a status call per entry where the
	// file system can (fsimpl.TypeLister): the entries then carry no
	// size or time, which whoever opens them learns from the open, except
	// the files describe picks (by their path relative to the top); nil
	// picks none.
	types    bool
	describe func(rel string) bool
	// skippedDirs counts directories that could not be listed.
	skippedDirs atomic.Int32
}

// entry is a file the walk found. Whoever receives one calls done once
// it has read the file.
type entry struct {
	info fs.FileInfo
	rel  string        // relative to the walk's top
	fsys fs.FileSystem // the file system to open it through
	ref  *dirRef
}

func (e entry) done() { e.ref.release() }

// dirRef counts the users of a directory view (fs.DirOpener), which is
// closed when the last one is done.
type dirRef struct {
	fsys fs.FileSystem
	refs atomic.Int32
}

func (r *dirRef) hold() *dirRef {
	if r != nil {
		r.refs.Add(1)
	}
	return r
}

func (r *dirRef) release() {
	if r != nil && r.refs.Add(-1) == 0 {
		if c, ok := r.fsys.(io.Closer); ok {
			c.Close()
		}
	}
}

// dirItem is a unit of the walk's work: a directory to list, or (files
// set) a batch of files a listing found, to visit.
type dirItem struct {
	path, rel string
	rules     *pathmatch.Stack
	parent    *dirRef       // the view the directory is opened from; nil for the file system itself
	fsys      fs.FileSystem // parent's file system, or w.fsys
	files     []entry
}

// release lets go of what an item holds that will not be visited.
func (d dirItem) release() {
	if d.files != nil {
		for _, e := range d.files {
			e.done()
		}
		return
	}
	d.parent.release()
}

// fileBatch is how many files of a directory its lister visits itself;
// the rest go back to the queue in batches of this size, so that the
// other workers share a large directory.
const fileBatch = 64

// ancestors returns the ignore rules that the directories above top (up
// to the file system's root) apply to it.
func (w *walker) ancestors(ctx context.Context, top string) *pathmatch.Stack {
	if w.noIgnore {
		return nil
	}
	root := fsimpl.RootOf(w.fsys)
	if top == root {
		return nil
	}
	rel, ok := strings.CutPrefix(top, strings.TrimSuffix(root, "/")+"/")
	if !ok {
		return nil
	}
	var s *pathmatch.Stack
	dir := root
	parts := strings.Split(rel, "/")
	for _, part := range parts {
		s = w.push(ctx, s, dir, nil)
		dir = path.Join(dir, part)
	}
	return s
}

// push adds the rules of directory dir to s. names, when not nil, is the
// set of dir's entries, so absent files are not tried.
func (w *walker) push(ctx context.Context, s *pathmatch.Stack, dir string, names map[string]fs.FileInfo) *pathmatch.Stack {
	has := func(n string, wantDir bool) bool {
		if names == nil {
			return true
		}
		fi, ok := names[n]
		return ok && fi.Mode.IsDir() == wantDir
	}
	read := func(p string) *pathmatch.Rules {
		data, _, err := w.fsys.ReadBytes(ctx, p, maxRuleFile)
		if err != nil {
			return nil
		}
		return pathmatch.ParseRules(data)
	}
	if has(".git", true) {
		s = s.Push(dir, read(path.Join(dir, ".git/info/exclude")))
	}
	var ignore, gitignore *pathmatch.Rules
	if has(".ignore", false) {
		ignore = read(path.Join(dir, ".ignore"))
	}
	if has(".gitignore", false) {
		gitignore = read(path.Join(dir, ".gitignore"))
	}
	return s.Push(dir, ignore, gitignore)
}

// open returns the file system to read directory d through and its
// reference: a view of d when the file system offers them.
func (w *walker) open(ctx context.Context, d dirItem) (fs.FileSystem, *dirRef) {
	defer d.parent.release()
	if o, ok := d.fsys.(fs.DirOpener); ok {
		if v, err := o.OpenDir(ctx, d.path); err == nil {
			r := &dirRef{fsys: v}
			r.refs.Store(1)
			return v, r
		}
	}
	return d.fsys, nil
}

// walk visits the files below top until visit returns false or ctx
// ends. Up to w.workers goroutines list directories and visit the files
// they find, each calling visit with its own number (0 to w.workers-1),
// so visit must be safe for concurrent use; visit owns the entry and
// calls its done.
func (w *walker) walk(ctx context.Context, top string, visit func(worker int, e entry) bool) error {
	q := &dirQueue{stack: []dirItem{{path: top, rules: w.ancestors(ctx, top), fsys: w.fsys}}}
	q.cond = sync.NewCond(&q.mu)
	n := max(1, w.workers)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := func(e entry) bool { return visit(i, e) }
			for {
				d, ok := q.pop()
				if !ok {
					return
				}
				var more []dirItem
				next := true
				if d.files != nil {
					next = visitAll(ctx, d.files, v)
				} else {
					more, next = w.list(ctx, d, v)
				}
				q.done(more, next && ctx.Err() == nil)
			}
		}()
	}
	wg.Wait()
	for _, d := range q.stack {
		d.release()
	}
	return ctx.Err()
}

// visitAll visits files in order until visit returns false or ctx ends,
// and lets go of those left.
func visitAll(ctx context.Context, files []entry, visit func(entry) bool) bool {
	for i, e := range files {
		if ctx.Err() != nil {
			for _, rest := range files[i:] {
				rest.done()
			}
			return false
		}
		if !visit(e) {
			for _, rest := range files[i+1:] {
				rest.done()
			}
			return false
		}
	}
	return true
}

// dirQueue holds the directories still to list.
type dirQueue struct {
	mu      sync.Mutex
	cond    *sync.Cond
	stack   []dirItem
	busy    int  // directories being listed
	stopped bool // visit said stop, or ctx ended
}

func (q *dirQueue) pop() (dirItem, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.stack) == 0 && q.busy > 0 && !q.stopped {
		q.cond.Wait()
	}
	if q.stopped || len(q.stack) == 0 {
		return dirItem{}, false
	}
	d := q.stack[len(q.stack)-1]
	q.stack = q.stack[:len(q.stack)-1]
	q.busy++
	return d, true
}

func (q *dirQueue) done(subdirs []dirItem, more bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.busy--
	if !more {
		q.stopped = true
	}
	for i := len(subdirs) - 1; i >= 0; i-- {
		q.stack = append(q.stack, subdirs[i])
	}
	q.cond.Broadcast()
}

// list lists one directory, visits its files (the first fileBatch of
// them) and returns its subdirectories and the batches of files left;
// more is false when visit asked to stop.
func (w *walker) list(ctx context.Context, d dirItem, visit func(entry) bool) (subdirs []dirItem, more bool) {
	if ctx.Err() != nil {
		d.parent.release()
		return nil, false
	}
	dfs, ref := w.open(ctx, d)
	defer ref.release()
	var list []fs.FileInfo
	var err error
	if tl, ok := dfs.(fsimpl.TypeLister); ok && w.types {
		var describe func(string, iofs.FileMode) bool
		if w.describe != nil {
			describe = func(name string, typ iofs.FileMode) bool {
				if !typ.IsRegular() {
					return false
				}
				if d.rel == "" {
					return w.describe(name)
				}
				return w.describe(d.rel + "/" + name)
			}
		}
		list, err = tl.ReadDirTypes(ctx, d.path, describe)
	} else {
		list, err = dfs.ReadDir(ctx, d.path)
	}
	if err != nil {
		if ctx.Err() == nil {
			w.skippedDirs.Add(1)
		}
		return nil, true
	}
	rules := d.rules
	if !w.noIgnore {
		names := make(map[string]fs.FileInfo, 4)
		for _, fi := range list {
			switch n := path.Base(fi.Path); n {
			case ".git", ".gitignore", ".ignore":
				names[n] = fi
			}
		}
		if len(names) > 0 {
			rules = w.push(ctx, rules, d.path, names)
		}
	}
	var files []entry
	for _, fi := range list {
		name := path.Base(fi.Path)
		if name == ".git" || (!w.hidden && strings.HasPrefix(name, ".")) {
			continue
		}
		isDir := fi.Mode.IsDir()
		if !isDir && !fi.Mode.IsRegular() {
			continue // symbolic links are not followed; devices, pipes and sockets are not read
		}
		if rules != nil && rules.Ignored(fi.Path, isDir) {
			continue
		}
		rel := name
		if d.rel != "" {
			rel = d.rel + "/" + name
		}
		if isDir {
			if w.prune == nil || w.prune(rel) {
				subdirs = append(subdirs, dirItem{path: fi.Path, rel: rel, rules: rules, fsys: dfs, parent: ref.hold()})
			}
			continue
		}
		files = append(files, entry{info: fi, rel: rel, fsys: dfs, ref: ref.hold()})
	}
	// Batches after the first go to the queue before the
	// subdirectories, so they are taken first.
	mine := files[:min(len(files), fileBatch)]
	var batches []dirItem
	for rest := files[len(mine):]; len(rest) > 0; {
		k := min(len(rest), fileBatch)
		batches = append(batches, dirItem{files: rest[:k:k]})
		rest = rest[k:]
	}
	if batches != nil {
		subdirs = append(batches, subdirs...)
	}
	if !visitAll(ctx, mine, visit) {
		for _, sd := range subdirs {
			sd.release()
		}
		return nil, false
	}
	return subdirs, true
}
