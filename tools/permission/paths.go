package permission

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
)

// Paths is the path policy a [Policy]'s Read and Edit rules make for one
// workspace: an fs.PathPolicy for fs.Restrict, which puts it below every
// tool that touches files, and an fs.DenyLister for a sandbox, which
// masks what it denies from the commands it runs (package tools/shell).
//
// # What it decides
//
// A deny rule decides wherever it matches. Read denies make a path
// invisible (fs.Restrict answers "not found"); Edit (Write) denies refuse
// changes, and so do Read denies, since a change shows the content it
// replaces. An ask rule cannot ask below the dispatcher: a path named in a
// call was already asked about there (the policy's Decide sees a path as
// written and with its links resolved), so an ask rule denies only where
// nobody was asked: entries of a listing or a tree walk (glob and grep
// never enter an ask area), other names of a hard-linked file, and what a
// sandbox must decide on before a command starts. A rule without a path
// (Read, Edit) covers every path.
//
// Hard links: a file with more than one link is denied when any of its
// names is. The names are found by walking only the trees the rules can
// match (the literal part of each pattern: ./secrets/** walks
// <workspace>/secrets, a pattern without a slash such as .env walks the
// whole workspace), without following symbolic links; files with one link
// cost nothing.
//
// # The walk cache
//
// Walks (for hard links, and ListDenied for a sandbox) keep each
// directory's listing, and what the walk decided about its entries, for
// the next walk. A directory is lstat'ed on every walk and its cached
// listing used only while its device, inode, modification time and status
// change time are those it had when listed, and only if that change time
// was already in the past when the listing began: a change made in the
// same tick of the file system's clock as the listing could keep the same
// time (the rule git applies to its index). The status change time cannot
// be set by a program, so a directory touched back to an old modification
// time is listed again. The past is taken on the clock the kernel stamps
// files with (Linux's coarse real-time clock), and only file systems known
// to stamp in nanoseconds are trusted so: on ext4, XFS, Btrfs, tmpfs,
// overlayfs, F2FS, ZFS and bcachefs a change time with a fraction of a
// second; one without (a file system that stamps whole seconds) must be
// two seconds old. Directories on any other file system (NFS, FUSE, SMB,
// 9p, ...), whose times may come from another machine's clock or from a
// cache, are listed on every walk, and so is everything when the real-time
// clock was set back, or where these times are not known. Any error lists
// afresh. Rules never change within a Paths; a new policy makes a new one
// with an empty cache.
//
// Paths are namespace paths treated as OS paths when a walk or a link
// lookup needs the disk, as with an fslocal file system, whose namespace
// is the OS's.
type Paths struct {
	ws, home string
	// rules by list and kind; each list keeps the rules' order.
	readDeny, readAsk, editDeny, editAsk []*rule

	mu   sync.Mutex
	dirs map[string]*dirState // the walk cache, by OS directory
	// clockBase and clockSkew detect the real-time clock set back,
	// which empties the cache (set by the first walk).
	clockBase time.Time
	clockSkew int64
	// links holds, per list of rules, the identities of the files they
	// deny, and when they were found.
	links map[string]*linkSet
}

type linkSet struct {
	at  int64 // Unix nanoseconds, taken before the walk
	ids map[[2]uint64]*rule
}

// Paths returns the path policy of p's Read and Edit rules for the
// workspace (the session's working directory, a clean absolute namespace
// path), which ./ and unanchored patterns are relative to, as in Decide.
// It holds a cache; keep one per session, not one per call.
func (p *Policy) Paths(workspace string) *Paths {
	ws := path.Clean("/" + strings.TrimPrefix(filepath.ToSlash(workspace), "/"))
	pp := &Paths{ws: ws, home: p.home, dirs: map[string]*dirState{}, links: map[string]*linkSet{}}
	for _, l := range []struct {
		rules      []*rule
		read, edit *[]*rule
	}{{p.deny, &pp.readDeny, &pp.editDeny}, {p.ask, &pp.readAsk, &pp.editAsk}} {
		for _, r := range l.rules {
			switch {
			case r.name != "":
			case r.kind == kindRead:
				*l.read = append(*l.read, r)
			case r.kind == kindEdit:
				*l.edit = append(*l.edit, r)
			}
		}
	}
	return pp
}

// Workspace returns the workspace the policy is anchored at.
func (pp *Paths) Workspace() string { return pp.ws }

// Empty reports that no rule of the policy touches paths, so it allows
// everything.
func (pp *Paths) Empty() bool {
	return len(pp.readDeny)+len(pp.readAsk)+len(pp.editDeny)+len(pp.editAsk) == 0
}

// rulesFor returns the rules that can deny access a: the deny lists, and
// the ask lists when nobody can be asked (fs.AccessListed) or asks is set.
func (pp *Paths) rulesFor(a fs.Access, asks bool) (read, edit []*rule) {
	asks = asks || a&fs.AccessListed != 0
	if a&fs.AccessRead != 0 {
		read = pp.readDeny
		if asks {
			read = append(slices.Clip(read), pp.readAsk...)
		}
	}
	if a&fs.AccessWrite != 0 {
		edit = pp.editDeny
		if asks {
			edit = append(slices.Clip(edit), pp.editAsk...)
		}
	}
	return read, edit
}

// CheckPath implements fs.PathPolicy.
func (pp *Paths) CheckPath(ctx context.Context, p string, a fs.Access, id fs.FileID) error {
	if pp.Empty() {
		return nil
	}
	p = path.Clean("/" + strings.TrimPrefix(p, "/"))
	read, edit := pp.rulesFor(a, false)
	if len(read)+len(edit) > 0 {
		f := pp.form(p, read, edit)
		if r := firstMatch(read, f); r != nil {
			return pathDenied(r, "reading")
		}
		if r := firstMatch(edit, f); r != nil {
			return pathDenied(r, "changing")
		}
	}
	if id.Links > 1 && id != (fs.FileID{}) {
		// Another name of the file was never asked about: asks deny.
		read, edit = pp.rulesFor(a, true)
		if r := pp.linked(ctx, id, read); r != nil {
			return linkDenied(r, "reading")
		}
		if r := pp.linked(ctx, id, edit); r != nil {
			return linkDenied(r, "changing")
		}
	}
	return nil
}

// form splits p for the bases the rules use only, sparing the
// allocations of the others on the hot path (one check per directory
// entry of a walk).
func (pp *Paths) form(p string, lists ...[]*rule) pathForm {
	f := pathForm{abs: p}
	bases := [3]string{baseWorkspace: pp.ws, baseRoot: "/", baseHome: pp.home}
	var need [3]bool
	for _, l := range lists {
		for _, r := range l {
			if !r.anySpec {
				need[r.path.base] = true
			}
		}
	}
	for b, base := range bases {
		if !need[b] || base == "" {
			continue
		}
		if rel, ok := relUnder(p, base); ok {
			f.under[b] = true
			if rel != "" {
				f.parts[b] = strings.Split(rel, "/")
			}
		}
	}
	return f
}

func firstMatch(rules []*rule, f pathForm) *rule {
	for _, r := range rules {
		if r.anySpec || r.path.matchForm(f) {
			return r
		}
	}
	return nil
}

func pathDenied(r *rule, what string) error {
	return &harness.Error{Code: harness.CodeDenied, Message: fmt.Sprintf("the rule %s denies %s it", r.raw, what)}
}

func linkDenied(r *rule, what string) error {
	return &harness.Error{Code: harness.CodeDenied, Message: fmt.Sprintf("it is a hard link to a file the rule %s denies %s", r.raw, what)}
}

// ListDenied implements fs.DenyLister: the existing paths (links not
// followed) that the rules deny for access a when nobody can be asked
// (ask rules count as deny), outermost only (a denied directory stands
// for everything in it), sorted. A rule without a path lists the
// workspace.
func (pp *Paths) ListDenied(ctx context.Context, a fs.Access) ([]string, error) {
	return pp.listDenied(ctx, a, nil)
}

// ListDeniedEach is ListDenied for each access in as, from one look at
// the file system: a directory is listed once for all of them. A
// sandbox planning its masks for reads and its read-only mounts for
// changes makes one walk's work instead of two.
func (pp *Paths) ListDeniedEach(ctx context.Context, as ...fs.Access) ([][]string, error) {
	lk := &look{}
	out := make([][]string, len(as))
	for i, a := range as {
		l, err := pp.listDenied(ctx, a, lk)
		if err != nil {
			return nil, err
		}
		out[i] = l
	}
	return out, nil
}

// listDenied is ListDenied; lk, when not nil, is a look at the file
// system shared with other walks.
func (pp *Paths) listDenied(ctx context.Context, a fs.Access, lk *look) ([]string, error) {
	read, edit := pp.rulesFor(a|fs.AccessListed, true)
	rules := append(slices.Clip(read), edit...)
	if len(rules) == 0 {
		return nil, nil
	}
	seen := map[string]bool{}
	var out []string
	for _, r := range rules {
		if r.anySpec {
			if !seen[pp.ws] {
				seen[pp.ws] = true
				out = append(out, pp.ws)
			}
			continue
		}
	}
	err := pp.walkLook(ctx, rules, false, lk, func(p string, _ *entryState) {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	// Outermost only.
	kept := out[:0]
	for _, p := range out {
		if len(kept) > 0 {
			if _, below := relUnder(p, kept[len(kept)-1]); below {
				continue
			}
		}
		kept = append(kept, p)
	}
	return kept, nil
}

// DeniedByName reports whether p, a path below the workspace that
// ListDenied lists for access a, is denied by a rule that matches its
// name alone at any depth (a pattern without a slash, such as .env or
// *.pem, or a rule without a path): renaming the directories above it
// within the workspace leaves it denied. A sandbox need not keep those
// directories from being renamed.
func (pp *Paths) DeniedByName(p string, a fs.Access) bool {
	p = path.Clean("/" + strings.TrimPrefix(filepath.ToSlash(p), "/"))
	if rel, under := relUnder(p, pp.ws); !under || rel == "" {
		return false
	}
	read, edit := pp.rulesFor(a|fs.AccessListed, true)
	name := path.Base(p)
	for _, list := range [][]*rule{read, edit} {
		for _, r := range list {
			if r.anySpec {
				return true
			}
			if pt := r.path; pt.base == baseWorkspace && !pt.anchored && len(pt.segs) == 1 && matchSeg(pt.segs[0], pt.lit[0], name) {
				return true
			}
		}
	}
	return false
}

// linked returns the rule that denies another name of the file id, or
// nil. The names the rules deny are found by a walk, which is reused for
// a file whose status has not changed since (a new link or a rename of
// the file changes it).
func (pp *Paths) linked(ctx context.Context, id fs.FileID, rules []*rule) *rule {
	if len(rules) == 0 {
		return nil
	}
	for _, r := range rules {
		if r.anySpec {
			return r
		}
	}
	var key strings.Builder
	for _, r := range rules {
		key.WriteString(r.raw)
		key.WriteByte(0)
	}
	k := [2]uint64{id.Dev, id.Ino}
	pp.mu.Lock()
	set := pp.links[key.String()]
	pp.mu.Unlock()
	if set != nil && id.Changed != 0 && id.Changed < set.at-int64(racy) {
		return set.ids[k]
	}
	set = &linkSet{at: time.Now().UnixNano(), ids: map[[2]uint64]*rule{}}
	err := pp.walk(ctx, rules, true, func(p string, e *entryState) {
		if e != nil && e.idOK {
			if _, seen := set.ids[[2]uint64{e.dev, e.ino}]; !seen {
				set.ids[[2]uint64{e.dev, e.ino}] = firstMatch(rules, newForm(p, pp.ws, pp.home))
			}
		}
	})
	if err != nil {
		// Fail closed: a walk that did not finish proves nothing.
		return rules[0]
	}
	pp.mu.Lock()
	pp.links[key.String()] = set
	pp.mu.Unlock()
	return set.ids[k]
}

// A walk root: the directory a pattern's literal part names.
func (pp *Paths) root(r *rule) string {
	pt := r.path
	base := pp.ws
	switch pt.base {
	case baseRoot:
		base = "/"
	case baseHome:
		if pp.home == "" {
			return ""
		}
		base = pp.home
	}
	if !pt.anchored {
		return base
	}
	dir := base
	for i, s := range pt.segs {
		if !pt.lit[i] || i == len(pt.segs)-1 {
			break
		}
		dir = path.Join(dir, s)
	}
	return dir
}

// walk visits the existing paths the rules match, below their roots,
// without following links. With all, it visits every regular file at or
// below a match (with its identity); otherwise only the outermost
// matches (files, directories, links and the rest), with a nil entry.
func (pp *Paths) walk(ctx context.Context, rules []*rule, all bool, visit func(p string, e *entryState)) error {
	return pp.walkLook(ctx, rules, all, nil, visit)
}

// look is one look at the file system, which several walks may share: a
// directory is listed at most once in it.
type look struct {
	started bool
	// now is the file system clock's time when the look began.
	now int64
	// listed holds the listings made or found so far.
	listed map[string]listing
	// trust says, per device, whether its file system stamps times the
	// cache can rely on.
	trust map[uint64]bool
}

// listing is a directory's entries, and its cache entry when it may be
// kept (nil otherwise).
type listing struct {
	entries []entryState
	cached  *dirState
}

// begin starts the look, once. The caller holds pp.mu.
func (lk *look) begin(pp *Paths) {
	if lk.started {
		return
	}
	lk.started = true
	lk.listed = map[string]listing{}
	lk.trust = map[uint64]bool{}
	pp.checkClock()
	lk.now = fsNow()
}

// checkClock empties the cache when the real-time clock was set back
// since the last walk: times stamped after that may repeat those of
// cached listings. (A clock slewed slower by NTP, at most 0.05%, is not
// set back.) The caller holds pp.mu.
func (pp *Paths) checkClock() {
	now := time.Now()
	if pp.clockBase.IsZero() {
		pp.clockBase = now
		return
	}
	// How far the wall clock moved from the monotonic one since the base.
	mono := now.Sub(pp.clockBase)
	skew := now.UnixNano() - pp.clockBase.UnixNano() - int64(mono)
	if skew < pp.clockSkew-int64(time.Millisecond)-int64(mono)/2000 {
		clear(pp.dirs)
		clear(pp.links)
	}
	pp.clockSkew = skew
}

// walkLook is walk; lk, when not nil, is a look at the file system shared
// with other walks, whose listings this one reuses and adds to.
func (pp *Paths) walkLook(ctx context.Context, rules []*rule, all bool, lk *look, visit func(p string, e *entryState)) error {
	roots := map[string]bool{}
	var order []string
	var key strings.Builder
	for _, r := range rules {
		key.WriteString(r.raw)
		key.WriteByte(0)
		if r.anySpec {
			continue
		}
		if root := pp.root(r); root != "" && !roots[root] {
			roots[root] = true
			order = append(order, root)
		}
	}
	slices.Sort(order)
	if lk == nil {
		lk = &look{}
	}
	w := &treeWalk{pp: pp, rules: rules, all: all, lk: lk, visit: visit, key: key.String(), touched: map[string]bool{}}
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.dirs == nil {
		pp.dirs = map[string]*dirState{}
	}
	if pp.links == nil {
		pp.links = map[string]*linkSet{}
	}
	lk.begin(pp)
	for _, root := range order {
		if err := ctx.Err(); err != nil {
			return err
		}
		// The root itself may match (./secrets/** matches secrets).
		st, err := os.Lstat(filepath.FromSlash(root))
		if err != nil {
			continue
		}
		matched := firstMatch(rules, newForm(root, pp.ws, pp.home)) != nil
		if matched && !all {
			visit(root, nil)
			continue
		}
		if matched && st.Mode().IsRegular() {
			visit(root, entryOf(path.Base(root), st))
			continue
		}
		if !st.IsDir() {
			continue
		}
		if err := w.dir(ctx, root, matched); err != nil {
			return err
		}
	}
	return nil
}

// treeWalk is one walk.
type treeWalk struct {
	pp    *Paths
	rules []*rule
	all   bool
	lk    *look
	visit func(string, *entryState)
	// key names the rules and all, for the decisions kept in the cache.
	key     string
	touched map[string]bool
}

// step is what a walk does with one entry of a directory: visit it, or
// walk the directory it is.
type step struct {
	i       int  // the entry's index
	visit   bool // visit it; otherwise walk it
	matched bool // it, or a directory above it, matches
}

func (w *treeWalk) dir(ctx context.Context, dir string, inMatch bool) error {
	if w.touched[dir] {
		return nil
	}
	w.touched[dir] = true
	if err := ctx.Err(); err != nil {
		return err
	}
	l := w.pp.list(dir, w.lk)
	// What to do with the entries depends only on their names and types,
	// the rules and inMatch: a cached listing keeps it.
	var steps []step
	var sk stepKey
	if l.cached != nil {
		sk = stepKey{rules: w.key, all: w.all, inMatch: inMatch}
		steps = l.cached.steps[sk]
	}
	if steps == nil {
		steps = w.plan(dir, l.entries, inMatch)
		if l.cached != nil {
			if l.cached.steps == nil {
				l.cached.steps = map[stepKey][]step{}
			}
			l.cached.steps[sk] = steps
		}
	}
	for _, s := range steps {
		e := &l.entries[s.i]
		p := joinPath(dir, e.name)
		switch {
		case !s.visit:
			if err := w.dir(ctx, p, s.matched); err != nil {
				return err
			}
		case !w.all:
			w.visit(p, nil)
		default:
			if !e.idOK {
				if st, err := os.Lstat(filepath.FromSlash(p)); err == nil {
					*e = *entryOf(e.name, st)
				}
			}
			w.visit(p, e)
		}
	}
	return nil
}

// plan decides what the walk does with a directory's entries. It never
// returns nil.
func (w *treeWalk) plan(dir string, ents []entryState, inMatch bool) []step {
	pp := w.pp
	steps := []step{}
	for i := range ents {
		e := &ents[i]
		p := joinPath(dir, e.name)
		matched := inMatch
		if !matched && firstMatch(w.rules, newForm(p, pp.ws, pp.home)) != nil {
			matched = true
			if !w.all {
				steps = append(steps, step{i: i, visit: true, matched: true})
				continue
			}
		}
		switch {
		case e.mode.IsRegular():
			if matched {
				steps = append(steps, step{i: i, visit: true, matched: true})
			}
		case e.mode.IsDir():
			if matched || mayMatchBelow(w.rules, p, pp.ws, pp.home) {
				steps = append(steps, step{i: i, matched: matched})
			}
		}
	}
	return steps
}

// dirState is a cached listing.
type dirState struct {
	stamp   dirStamp
	entries []entryState
	// steps are the walks' decisions about the entries, by rules.
	steps map[stepKey][]step
}

type stepKey struct {
	rules        string
	all, inMatch bool
}

// dirStamp is what shows that a directory changed: a different device
// or inode (another directory at the path), or modification or status
// change time (an entry was added, removed or renamed, or its times or
// mode were set).
type dirStamp struct {
	dev, ino     uint64
	mtime, ctime int64 // Unix nanoseconds
}

type entryState struct {
	name string
	mode os.FileMode // the type bits
	// dev and ino identify a regular file, once idOK; they are filled
	// when first needed.
	dev, ino uint64
	idOK     bool
}

func entryOf(name string, st os.FileInfo) *entryState {
	e := &entryState{name: name, mode: st.Mode().Type()}
	e.dev, e.ino, e.idOK = statID(st)
	return e
}

// racy is how old a status change time must be before a listing is
// trusted, on a file system that stamps whole seconds (or where the
// file system clock cannot be read): a change within the same second
// would not show. It bounds the link cache's trust too.
const racy = 2 * time.Second

// list returns dir's entries, from the cache when its stamp proves them
// current (see Paths), or read afresh, and then kept when they may be.
// Within a look a directory is listed once. The caller holds pp.mu.
func (pp *Paths) list(dir string, lk *look) listing {
	if l, ok := lk.listed[dir]; ok {
		return l
	}
	l := pp.listNow(dir, lk)
	lk.listed[dir] = l
	return l
}

func (pp *Paths) listNow(dir string, lk *look) listing {
	st, err := os.Lstat(filepath.FromSlash(dir))
	if err != nil || !st.IsDir() {
		delete(pp.dirs, dir)
		return listing{}
	}
	stamp, stamped := stampOf(st)
	if c := pp.dirs[dir]; c != nil && stamped && c.stamp == stamp {
		return listing{entries: c.entries, cached: c}
	}
	delete(pp.dirs, dir)
	f, err := os.Open(filepath.FromSlash(dir))
	if err != nil {
		return listing{}
	}
	des, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return listing{}
	}
	ents := make([]entryState, 0, len(des))
	for _, de := range des {
		ents = append(ents, entryState{name: de.Name(), mode: de.Type()})
	}
	if !stamped || !lk.trusted(dir, stamp) {
		return listing{entries: ents}
	}
	c := &dirState{stamp: stamp, entries: ents}
	pp.dirs[dir] = c
	return listing{entries: ents, cached: c}
}

// trusted reports whether a listing of dir, whose stamp was taken after
// the look began, may be kept: its file system is one whose times the
// cache relies on, and its last change is older than the look by more
// than the file system's tick.
func (lk *look) trusted(dir string, s dirStamp) bool {
	if lk.now == 0 {
		return false
	}
	ok, seen := lk.trust[s.dev]
	if !seen {
		ok = trustedFS(dir)
		lk.trust[s.dev] = ok
	}
	if !ok {
		return false
	}
	margin := int64(0)
	if s.ctime%int64(time.Second) == 0 {
		margin = int64(racy) // whole seconds, or a rare exact second
	}
	return s.ctime < lk.now-margin
}

func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// mayMatchBelow reports whether any rule's pattern can match a path
// below the directory p.
func mayMatchBelow(rules []*rule, p, ws, home string) bool {
	f := newForm(p, ws, home)
	for _, r := range rules {
		if r.anySpec {
			return true
		}
		pt := r.path
		if !f.under[pt.base] {
			continue
		}
		if !pt.anchored {
			return true
		}
		if prefixFeasible(pt.segs, pt.lit, f.parts[pt.base]) {
			return true
		}
	}
	return false
}

// prefixFeasible reports whether the pattern elements can match a path
// that starts with parts and goes on below them.
func prefixFeasible(segs []string, lit []bool, parts []string) bool {
	for i, part := range parts {
		if i >= len(segs) {
			return false
		}
		if segs[i] == "**" {
			return true
		}
		if !matchSeg(segs[i], lit[i], part) {
			return false
		}
	}
	return len(segs) > len(parts)
}

var (
	_ fs.PathPolicy = (*Paths)(nil)
	_ fs.DenyLister = (*Paths)(nil)
)
