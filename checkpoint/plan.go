package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/diff"
	"github.com/go-harness/harness/internal/pathmatch"
)

// Op says how a path changed since the checkpoint a rewind goes back to,
// and so what the rewind does to it.
type Op string

// Ops.
const (
	// OpModified: the path holds other content, permissions, link target
	// or kind than at the checkpoint; the rewind restores it.
	OpModified Op = "modified"
	// OpCreated: the path did not exist at the checkpoint; the rewind
	// deletes it.
	OpCreated Op = "created"
	// OpDeleted: the path existed at the checkpoint and is gone; the
	// rewind recreates it.
	OpDeleted Op = "deleted"
)

// Change is one path a rewind changes, or would change and leaves alone
// (Skip says why).
type Change struct {
	Path string `json:"path"`
	Op   Op     `json:"op"`
	// Kind is the kind of the path at the checkpoint, or now for a
	// created path.
	Kind Kind `json:"kind"`
	// Added and Removed count the lines added and removed since the
	// checkpoint: the rewind removes the added lines and puts the
	// removed ones back.
	Added   int `json:"added"`
	Removed int `json:"removed"`
	// Binary reports a file whose lines are not counted: binary content,
	// more than 1 MiB, or content that is not available.
	Binary bool `json:"binary,omitempty"`
	// Conflict reports a path the rewind would restore that was changed
	// outside the agent since the checkpoint (see Attribute): a rewind
	// that is not forced refuses to run while the plan has one.
	Conflict bool `json:"conflict,omitempty"`
	// Skip, when not empty, says why the rewind leaves the path as it
	// is.
	Skip string `json:"skip,omitempty"`

	from, to *Entry // the entry now and at the checkpoint
}

// Plan is what a rewind does, path by path, in tree order.
type Plan struct {
	Changes []Change `json:"changes"`
}

// Check returns the error Apply refuses the plan with: an error
// matching harness.CodeConflict when it has conflicts and force is not
// set, nil otherwise.
func (p *Plan) Check(force bool) error {
	if cs := p.Conflicts(); len(cs) > 0 && !force {
		return conflictErr(len(cs), cs[0].Path)
	}
	return nil
}

// Conflicts returns the changes that conflict.
func (p *Plan) Conflicts() []Change {
	var out []Change
	for _, c := range p.Changes {
		if c.Conflict {
			out = append(out, c)
		}
	}
	return out
}

// Restored returns the paths the plan changes (those without a Skip).
func (p *Plan) Restored() []string {
	var out []string
	for _, c := range p.Changes {
		if c.Skip == "" {
			out = append(out, c.Path)
		}
	}
	return out
}

// PlanOptions configure Plan.
type PlanOptions struct {
	// Changes, when set, says who changed what since the checkpoint
	// (Attribute). A path changed by the agent is restored; one changed
	// outside the agent only is left alone (unless Everything is set);
	// one changed by both is a conflict. Without it every path that
	// differs is restored, and none conflicts.
	Changes *Attribution
	// Everything restores the paths changed outside the agent only too;
	// each is then a conflict.
	Everything bool
	// Force plans to overwrite conflicting paths too, when their current
	// content is kept by the current snapshot (so nothing is lost: a
	// rewind to that snapshot brings it back); a conflicting file whose
	// content is not kept is left alone even then.
	Force bool
}

// maxLineCount bounds the size of a text whose lines a plan counts.
const maxLineCount = 1 << 20

// Reasons a plan leaves a path alone.
const (
	skipNotKept     = "the checkpoint recorded this file by digest and size only (it was larger than the size limit), so its content cannot be restored"
	skipMissing     = "the store no longer holds this file's content"
	skipUnreadable  = "the file could not be read, so its content is unknown"
	skipWasUnread   = "the file could not be read when the checkpoint was taken, so its content is unknown"
	skipIgnoredNow  = "the path exists but checkpoints ignore it now (.gitignore); it is left as it is"
	skipIgnoredThen = "checkpoints ignored this path when the checkpoint was taken (.gitignore), so it is not known to be new; it is left as it is"
	skipHoldsOthers = "the directory holds files that checkpoints ignore, so it is left in place"
	skipNoCopy      = "changed outside the agent, and its current content is too large to keep a copy of; it is left as it is"
	skipRaced       = "changed while the rewind ran; it is left as it is"
	skipOutside     = "changed outside the agent only (not by its turns); it is left as it is"
)

// Plan compares the workspace now (current, a Take or a Scan) with a
// checkpoint's tree (target) and returns what a rewind to target does.
// It reads the contents it needs to count lines from the store and the
// disk; it changes nothing.
func (w *Workspace) Plan(ctx context.Context, target *Tree, current *Snapshot, opts PlanOptions) (*Plan, error) {
	p := &Plan{}
	var err error
	ig := &thenIgnored{w: w, ctx: ctx, target: target, current: current.Tree}
	merge(target, current.Tree, func(pr pair) bool {
		if err = ctx.Err(); err != nil {
			return false
		}
		if sameContent(pr.b, pr.a) {
			return true
		}
		c := Change{Path: pr.path, from: pr.b, to: pr.a}
		switch {
		case pr.b == nil:
			c.Op, c.Kind = OpDeleted, pr.a.Kind
		case pr.a == nil:
			c.Op, c.Kind = OpCreated, pr.b.Kind
		default:
			c.Op, c.Kind = OpModified, pr.a.Kind
		}
		outsideOnly := false
		if a := opts.Changes; a != nil {
			agent, outside := a.Agent[c.Path], a.Outside[c.Path] || !a.Agent[c.Path]
			outsideOnly = !agent && !opts.Everything
			c.Conflict = outside && !outsideOnly
		}
		w.judge(ctx, &c, ig, opts)
		if outsideOnly {
			c.Skip = skipOutside
		}
		p.Changes = append(p.Changes, c)
		return true
	})
	if err != nil {
		return nil, err
	}
	// A directory left in place keeps the directories above it.
	keepAbove(p)
	return p, nil
}

// judge fills in a change's line counts and whether it is skipped.
func (w *Workspace) judge(ctx context.Context, c *Change, ig *thenIgnored, opts PlanOptions) {
	from, to := c.from, c.to
	switch {
	case from == nil && w.exists(c.Path):
		c.Skip = skipIgnoredNow
	case from != nil && from.Unreadable():
		c.Skip = skipUnreadable
	case to != nil && to.Unreadable():
		c.Skip = skipWasUnread
	case to != nil && to.Kind == KindFile && !to.Kept:
		c.Skip = skipNotKept
	case to == nil && ig.ignored(c.Path, from.Kind == KindDir):
		c.Skip = skipIgnoredThen
	case from != nil && from.Kind == KindDir && (to == nil || to.Kind != KindDir) && w.holdsOthers(c.Path, ig.current):
		c.Skip = skipHoldsOthers
	case c.Conflict && opts.Force && from != nil && from.Kind == KindFile && !from.Kept:
		c.Skip = skipNoCopy
	}
	// Line counts.
	var old, cur []byte
	oldOK, curOK := true, true
	if to != nil && to.Kind == KindFile {
		old, oldOK = w.blob(ctx, to)
		if !oldOK && to.Kept && c.Skip == "" {
			c.Skip = skipMissing
		}
	}
	if from != nil && from.Kind == KindFile {
		cur, curOK = w.current(c.Path, from)
	}
	if (to == nil || to.Kind != KindFile) && (from == nil || from.Kind != KindFile) {
		return
	}
	if !oldOK || !curOK || isBinary(old) || isBinary(cur) {
		c.Binary = true
		return
	}
	c.Added, c.Removed = countLines(old, cur)
}

// blob returns the content of a file entry from the store, when it is
// kept and small enough to count.
func (w *Workspace) blob(ctx context.Context, e *Entry) ([]byte, bool) {
	if !e.Kept || e.Size > maxLineCount {
		return nil, e.Kept && w.available(ctx, e)
	}
	data, err := w.objs.content(ctx, e)
	if err != nil {
		return nil, false
	}
	return data, true
}

// available reports whether the store still holds a large kept
// content (too large to read just to count its lines).
func (w *Workspace) available(ctx context.Context, e *Entry) bool {
	_, err := w.objs.content(ctx, e)
	return err == nil
}

// current reads the file at p as it is now, when it is small enough to
// count.
func (w *Workspace) current(p string, e *Entry) ([]byte, bool) {
	if e.Size > maxLineCount {
		return nil, false
	}
	r, err := os.OpenRoot(w.dir)
	if err != nil {
		return nil, false
	}
	defer r.Close()
	f, err := r.Open(filepath.FromSlash(p))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxLineCount+1))
	if err != nil || len(data) > maxLineCount {
		return nil, false
	}
	return data, true
}

// exists reports whether p exists on disk (as anything).
func (w *Workspace) exists(p string) bool {
	r, err := os.OpenRoot(w.dir)
	if err != nil {
		return true // unknown: assume it does, and touch nothing
	}
	defer r.Close()
	_, err = r.Lstat(filepath.FromSlash(p))
	return !errors.Is(err, iofs.ErrNotExist)
}

// holdsOthers reports whether the directory p holds entries the tree
// does not record (ignored files, .git, pipes): removing it would
// remove them.
func (w *Workspace) holdsOthers(p string, t *Tree) bool {
	r, err := os.OpenRoot(w.dir)
	if err != nil {
		return true
	}
	defer r.Close()
	f, err := r.Open(filepath.FromSlash(p))
	if err != nil {
		return !errors.Is(err, iofs.ErrNotExist)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return true
	}
	for _, n := range names {
		if t.Lookup(p+"/"+n) == nil {
			return true
		}
	}
	return false
}

func isBinary(b []byte) bool { return bytes.IndexByte(b[:min(len(b), sniffLen)], 0) >= 0 }

// countLines returns the lines added and removed from old to cur.
func countLines(old, cur []byte) (added, removed int) {
	for _, e := range diff.Lines(diff.SplitLines(old), diff.SplitLines(cur)) {
		switch e.Op {
		case diff.Insert:
			added++
		case diff.Delete:
			removed++
		}
	}
	return added, removed
}

// thenIgnored answers whether a path now in the workspace was ignored
// when the target checkpoint was taken: by the .gitignore files the
// target recorded (the ones outside the workspace, .git/info/exclude and
// Config.Ignore are taken as they are now). A path the target's rules
// ignored is not known to be new, so a rewind does not delete it.
type thenIgnored struct {
	w       *Workspace
	ctx     context.Context
	target  *Tree
	current *Tree
	same    *bool                       // the .gitignore files are the same now as then
	rules   map[string]*pathmatch.Rules // by directory, from the target
	failed  bool                        // a rule file of the target is not available
}

// ignored reports whether p (isDir: a directory) or a directory above it
// was ignored at the target, or whether that cannot be known.
func (t *thenIgnored) ignored(p string, isDir bool) bool {
	if t.same == nil {
		same := t.sameRules()
		t.same = &same
	}
	if *t.same {
		return false // the scan that found p applied the same rules
	}
	names := strings.Split(p, "/")
	base := ancestorRules(t.w.dir)
	abs := filepath.ToSlash(t.w.dir)
	stack := base
	dir := ""
	for i, n := range names {
		stack = stack.Push(absJoin(abs, dir), t.rulesOf(dir))
		if t.failed {
			return true
		}
		rel := n
		if dir != "" {
			rel = dir + "/" + n
		}
		last := i == len(names)-1
		childDir := !last || isDir
		if t.w.cfg.Exclude != nil && t.w.cfg.Exclude(rel, childDir) {
			return true
		}
		switch t.w.extra.Match(rel, childDir) {
		case pathmatch.Ignored:
			return true
		case pathmatch.Included:
			dir = rel
			continue
		}
		if stack.Ignored(absJoin(abs, rel), childDir) {
			return true
		}
		dir = rel
	}
	return false
}

// rulesOf returns the rules of the .gitignore file the target recorded in
// directory dir ("" for the workspace).
func (t *thenIgnored) rulesOf(dir string) *pathmatch.Rules {
	if r, ok := t.rules[dir]; ok {
		return r
	}
	p := ".gitignore"
	if dir != "" {
		p = dir + "/.gitignore"
	}
	var r *pathmatch.Rules
	if e := t.target.Lookup(p); e != nil && e.Kind == KindFile {
		data, err := t.w.objs.content(t.ctx, e)
		if err != nil {
			t.failed = true
		} else {
			r = pathmatch.ParseRules(data)
		}
	}
	if t.rules == nil {
		t.rules = map[string]*pathmatch.Rules{}
	}
	t.rules[dir] = r
	return r
}

// sameRules reports whether the target and the workspace now have the
// same .gitignore files with the same content.
func (t *thenIgnored) sameRules() bool {
	same := true
	merge(t.target, t.current, func(p pair) bool {
		if path.Base(p.path) != ".gitignore" {
			return true
		}
		if !sameContent(p.a, p.b) {
			same = false
			return false
		}
		return true
	})
	return same
}

func absJoin(abs, rel string) string {
	switch {
	case rel == "":
		return abs
	case abs == "/":
		return "/" + rel
	}
	return abs + "/" + rel
}

// conflictErr is the error of a rewind refused for its conflicts.
func conflictErr(n int, first string) error {
	more := ""
	if n > 1 {
		more = " and " + plural(n-1, "other path")
	}
	return &harness.Error{Code: harness.CodeConflict, Message: "checkpoint: " + first + more +
		" changed outside the agent since the checkpoint; the rewind would overwrite that work, so nothing was changed. Look at the dry run, then rewind with Force to overwrite (the current content is kept by a checkpoint first)"}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
