package checkpoint

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/go-harness/harness/internal/attdigest"
)

// Apply carries out a plan made by Plan against the snapshot it was
// given: it deletes what was created since the checkpoint, recreates
// what was deleted, and restores what was modified, through the
// workspace directory only (never following a link out of it). Files
// are replaced atomically (a temporary file renamed over the old one);
// like git checkout, they are not synced.
//
// A plan with conflicts is refused with an error matching
// harness.CodeConflict, and nothing is changed, unless force is set. A
// path that no longer looks as the plan saw it (changed in between) is
// left alone with a Skip saying so. It returns the plan as carried out:
// the same changes, with Skip set on those it left alone.
func (w *Workspace) Apply(ctx context.Context, plan *Plan, force bool) (*Plan, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := plan.Check(force); err != nil {
		return nil, err
	}
	done := &Plan{Changes: slices.Clone(plan.Changes)}
	r, err := os.OpenRoot(w.dir)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: opening the workspace: %w", err)
	}
	defer r.Close()
	a := &applier{w: w, r: r, ctx: ctx}
	// Check every path first: one that changed since the plan is left
	// alone, and so are the directories above it.
	for i := range done.Changes {
		c := &done.Changes[i]
		if c.Skip == "" && !a.unchanged(c) {
			c.Skip = skipRaced
		}
	}
	keepAbove(done)
	// Removals, deepest first.
	for i := len(done.Changes) - 1; i >= 0; i-- {
		c := &done.Changes[i]
		if c.Skip != "" || c.from == nil || (c.to != nil && c.to.Kind == c.from.Kind && c.from.Kind != KindSymlink) {
			continue
		}
		if err := ctx.Err(); err != nil {
			return done, err
		}
		if err := r.Remove(filepath.FromSlash(c.Path)); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			if c.from.Kind == KindDir {
				c.Skip = skipHoldsOthers
				continue
			}
			return done, fmt.Errorf("checkpoint: removing %s: %w", c.Path, err)
		}
	}
	// Creations and restores, parents first.
	for i := range done.Changes {
		c := &done.Changes[i]
		if c.Skip != "" || c.to == nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return done, err
		}
		if err := a.restore(c); err != nil {
			return done, fmt.Errorf("checkpoint: restoring %s: %w", c.Path, err)
		}
	}
	return done, nil
}

// keepAbove marks skipped the removal of directories that hold a path
// left alone.
func keepAbove(p *Plan) {
	keep := map[string]bool{}
	for i := len(p.Changes) - 1; i >= 0; i-- {
		c := &p.Changes[i]
		if keep[c.Path] && c.Skip == "" && c.from != nil && c.from.Kind == KindDir && (c.to == nil || c.to.Kind != KindDir) {
			c.Skip = skipHoldsOthers
		}
		if c.Skip != "" || keep[c.Path] {
			for d := path.Dir(c.Path); d != "."; d = path.Dir(d) {
				keep[d] = true
			}
		}
	}
}

type applier struct {
	w   *Workspace
	r   *os.Root
	ctx context.Context
}

// unchanged reports whether the path still holds what the plan saw.
func (a *applier) unchanged(c *Change) bool {
	name := filepath.FromSlash(c.Path)
	fi, err := a.r.Lstat(name)
	if c.from == nil {
		return errors.Is(err, iofs.ErrNotExist)
	}
	if err != nil || kindOf(fi.Mode()) != c.from.Kind || fi.Mode().Perm() != c.from.Mode {
		return false
	}
	switch c.from.Kind {
	case KindSymlink:
		t, err := a.r.Readlink(name)
		return err == nil && t == c.from.Target
	case KindFile:
		if fi.Size() != c.from.Size {
			return false
		}
		if st := statOf(fi); st == c.from.Stat && st.MtimeNS != 0 {
			return true
		}
		f, err := a.r.Open(name)
		if err != nil {
			return false
		}
		defer f.Close()
		return digestOf(f) == c.from.Digest
	}
	return true
}

// restore makes the path what the checkpoint recorded.
func (a *applier) restore(c *Change) error {
	name := filepath.FromSlash(c.Path)
	to := c.to
	switch to.Kind {
	case KindDir:
		if err := a.r.Mkdir(name, to.Mode); err != nil && !errors.Is(err, iofs.ErrExist) {
			return err
		}
		return a.r.Chmod(name, to.Mode)
	case KindSymlink:
		if err := a.r.Remove(name); err != nil && !errors.Is(err, iofs.ErrNotExist) {
			return err
		}
		return a.r.Symlink(to.Target, name)
	case KindFile:
		data, err := a.w.objs.content(a.ctx, to)
		if err != nil {
			return err
		}
		return a.write(name, data, to.Mode)
	}
	return nil
}

// write replaces the file name with data, atomically: a temporary file
// in the same directory, renamed over it.
func (a *applier) write(name string, data []byte, mode iofs.FileMode) error {
	var rnd [8]byte
	rand.Read(rnd[:])
	tmp := filepath.Join(filepath.Dir(name), ".rewind-"+hex.EncodeToString(rnd[:]))
	f, err := a.r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = a.r.Chmod(tmp, mode)
	}
	if err == nil {
		err = a.r.Rename(tmp, name)
	}
	if err != nil {
		a.r.Remove(tmp)
	}
	return err
}

// digestOf hashes what r reads; "" when reading fails.
func digestOf(r io.Reader) string {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return ""
	}
	return attdigest.Prefix + hex.EncodeToString(h.Sum(nil))
}
