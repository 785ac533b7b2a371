package instructions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/configfile"
	"github.com/go-harness/harness/internal/fsimpl"
	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/session"
)

// Kind is the ContextFile.Kind of instruction files.
const Kind = "instructions"

// Defaults.
const (
	// DefaultMaxBytes is the default cap of the instruction text of the
	// prefix, all files together, and of each nested announcement.
	DefaultMaxBytes = 64 << 10
	// DefaultMaxFileBytes is the default cap of one file as read.
	DefaultMaxFileBytes = 256 << 10
	// DefaultMaxImportDepth is how deep imports nest by default: five
	// hops, as Claude Code allows.
	DefaultMaxImportDepth = 5
)

// Config configures a Loader. The zero value finds AGENTS.md and
// CLAUDE.md in every directory from the workspace root down to the
// working directory, and below it as the agent gets there, with no
// user-level files.
type Config struct {
	// Names are the file names looked for in each directory, in the order
	// they are read; nil means AGENTS.md, then CLAUDE.md.
	Names []string
	// Root is the workspace root, the first directory searched, as a path
	// of the session's file system. Empty means the file system's root
	// (its Root, for a file system confined to a directory such as
	// fslocal's); a working directory outside Root is searched alone.
	Root string
	// Home is the user's home directory, an OS path. When set, the
	// user-level files Home/.config/harness/AGENTS.md and
	// Home/.claude/CLAUDE.md are read first, and imports may reach files
	// below Home/.config/harness and Home/.claude. Empty means no
	// user-level files: the home directory is never looked up on its
	// own.
	Home string
	// UserFiles, when not nil, replaces the user-level files Home gives:
	// these OS paths, read in order, whose directories imports may reach.
	UserFiles []string
	// Files, when not nil, replaces the search in the workspace: these
	// files of the session's file system (absolute, or relative to the
	// working directory), in order, each required to exist; nothing is
	// found below the working directory. User-level files still come
	// first.
	Files []string
	// MaxBytes caps the instruction text the prefix carries, all files
	// together, and the text of each announcement of nested files;
	// DefaultMaxBytes when zero. A file past the cap is cut, with a
	// notice saying so and how to read the rest.
	MaxBytes int
	// MaxFileBytes caps one file as read, DefaultMaxFileBytes when zero:
	// a larger file is left out with a notice.
	MaxFileBytes int
	// MaxImportDepth is how deep @imports nest, DefaultMaxImportDepth
	// when zero; a negative value turns imports off.
	MaxImportDepth int
	// NoNested turns off the files found below the working directory.
	NoNested bool
}

// Loader finds a session's instruction files. It implements
// agent.NestedContext: give it to agent.WithContext. It holds no state
// of its own and is safe for concurrent use.
type Loader struct {
	cfg Config
}

// New returns a Loader configured by cfg.
func New(cfg Config) *Loader {
	if cfg.Names == nil {
		cfg.Names = []string{"AGENTS.md", "CLAUDE.md"}
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxFileBytes <= 0 {
		cfg.MaxFileBytes = DefaultMaxFileBytes
	}
	if cfg.MaxImportDepth == 0 {
		cfg.MaxImportDepth = DefaultMaxImportDepth
	}
	if cfg.UserFiles == nil && cfg.Home != "" {
		cfg.UserFiles = []string{
			filepath.Join(cfg.Home, ".config", "harness", "AGENTS.md"),
			filepath.Join(cfg.Home, ".claude", "CLAUDE.md"),
		}
	}
	return &Loader{cfg: cfg}
}

// Context returns the instruction files of a turn's prefix (see Load).
func (l *Loader) Context(ctx context.Context, q agent.ContextQuery) ([]session.ContextFile, error) {
	return l.Load(ctx, q.FS, q.Cwd)
}

// Load returns the instruction files for a session working in cwd of
// fsys (which may be nil: user-level files only), in the order the
// model reads them: the user-level files, then the workspace's from the
// root down to cwd, in each directory in the order of Config.Names.
// Each file carries its @imports. A file the file system denies, or
// that is not a regular file, is left out with a notice in its place;
// a file that does not exist is skipped.
func (l *Loader) Load(ctx context.Context, fsys fs.FileSystem, cwd string) ([]session.ContextFile, error) {
	x := l.expander(fsys, cwd)
	var places []place
	for _, u := range l.cfg.UserFiles {
		places = append(places, place{user: true, path: filepath.Clean(u)})
	}
	if fsys != nil {
		if l.cfg.Files != nil {
			for _, f := range l.cfg.Files {
				p := f
				if !path.IsAbs(p) {
					p = path.Join(cwd, p)
				}
				places = append(places, place{path: path.Clean(p)})
			}
		} else {
			for _, dir := range l.dirs(fsys, cwd) {
				for _, name := range l.cfg.Names {
					places = append(places, place{path: path.Join(dir, name)})
				}
			}
		}
	}
	var out []session.ContextFile
	budget := l.cfg.MaxBytes
	for _, p := range places {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		f, ok, err := l.file(ctx, x, p, cwd, false)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		out = append(out, cut(f, &budget, l.cfg.MaxBytes))
	}
	return out, nil
}

// Nested returns the instruction files of the directories below cwd
// that hold the given paths, nearest to cwd first, each with its
// imports and cut to MaxBytes. The loop drops those it announced
// already.
func (l *Loader) Nested(ctx context.Context, q agent.ContextQuery, paths []string) ([]session.ContextFile, error) {
	if l.cfg.NoNested || l.cfg.Files != nil || q.FS == nil {
		return nil, nil
	}
	cwd := path.Clean(q.Cwd)
	var dirs []string
	seen := map[string]bool{}
	for _, p := range paths {
		rel, ok := below(path.Dir(path.Clean(p)), cwd)
		if !ok || rel == "" {
			continue
		}
		d := cwd
		for part := range strings.SplitSeq(rel, "/") {
			d = path.Join(d, part)
			if !seen[d] {
				seen[d] = true
				dirs = append(dirs, d)
			}
		}
	}
	x := l.expander(q.FS, cwd)
	for _, f := range q.Loaded {
		if f.Kind == Kind {
			x.seen[place{path: f.Path}] = true
			x.seen[place{user: true, path: f.Path}] = true
		}
	}
	var out []session.ContextFile
	for _, d := range dirs {
		for _, name := range l.cfg.Names {
			p := place{path: path.Join(d, name)}
			f, ok, err := l.file(ctx, x, p, cwd, true)
			if err != nil || !ok {
				continue
			}
			budget := l.cfg.MaxBytes
			out = append(out, cut(f, &budget, l.cfg.MaxBytes))
		}
	}
	return out, nil
}

// dirs returns the directories searched for cwd: from the root down to
// cwd, or cwd alone when it is outside the root.
func (l *Loader) dirs(fsys fs.FileSystem, cwd string) []string {
	root := l.cfg.Root
	if root == "" {
		root = fsimpl.RootOf(fsys)
	}
	root, cwd = path.Clean(root), path.Clean(cwd)
	rel, ok := below(cwd, root)
	if !ok {
		return []string{cwd}
	}
	out := []string{root}
	d := root
	if rel != "" {
		for part := range strings.SplitSeq(rel, "/") {
			d = path.Join(d, part)
			out = append(out, d)
		}
	}
	return out
}

// below returns p relative to dir when p is dir or below it.
func below(p, dir string) (string, bool) {
	if p == dir {
		return "", true
	}
	prefix := strings.TrimSuffix(dir, "/") + "/"
	if strings.HasPrefix(p, prefix) {
		return p[len(prefix):], true
	}
	return "", false
}

// file reads and expands one file. ok is false when it does not exist
// or was included already (as another's import).
func (l *Loader) file(ctx context.Context, x *expander, p place, cwd string, nested bool) (session.ContextFile, bool, error) {
	if x.seen[p] {
		return session.ContextFile{}, false, nil
	}
	data, err := x.src.read(ctx, p)
	switch {
	case errors.Is(err, harness.CodeNotFound):
		if l.cfg.Files != nil && !p.user {
			return session.ContextFile{}, false, err
		}
		return session.ContextFile{}, false, nil
	case err != nil && !lasting(err):
		// A failure that may pass (I/O, a closed file system): the
		// load fails, and the loop keeps the context it logged.
		return session.ContextFile{}, false, fmt.Errorf("instructions: reading %s: %w", p.path, err)
	case err != nil:
		text := header(p, cwd, nested) + notice("This file was not read: %v.", err)
		return session.ContextFile{Path: p.path, Kind: Kind, Text: text, Digest: session.DigestText(text)}, true, nil
	}
	x.seen[p] = true
	before := x.bytes
	x.bytes += int64(len(data))
	body := validText(data)
	if l.cfg.MaxImportDepth > 0 {
		body = x.expand(ctx, p, body, []place{p})
	}
	text := header(p, cwd, nested) + strings.TrimRight(body, "\n")
	return session.ContextFile{Path: p.path, Kind: Kind, Bytes: x.bytes - before, Text: text}, true, nil
}

// lasting reports an error that reading again will not cure: the file
// is not a regular file, is too large, is not text, or is denied. Such a
// file is named with a notice; any other failure fails the load.
func lasting(err error) bool {
	var r *refusal
	if errors.As(err, &r) {
		return true
	}
	for _, c := range []harness.Code{harness.CodeNotRegular, harness.CodeTooLarge, harness.CodeNotText, harness.CodeDenied,
		harness.CodePermission, harness.CodeOutsideRoot, harness.CodeInvalidPath, harness.CodeNotDir} {
		if errors.Is(err, c) {
			return true
		}
	}
	return false
}

// header is the line that introduces a file to the model.
func header(p place, cwd string, nested bool) string {
	switch {
	case p.user:
		return fmt.Sprintf("Instructions from %s (the user's own, for every project):\n\n", p.path)
	case nested:
		return fmt.Sprintf("Instructions from %s, for work in %s and below (they refine the instructions given before for that part of the project):\n\n", p.path, path.Dir(p.path))
	}
	return fmt.Sprintf("Instructions from %s, for work in %s and below:\n\n", p.path, path.Dir(p.path))
}

// cut cuts f's text to what is left of budget (of limit), saying so.
func cut(f session.ContextFile, budget *int, limit int) session.ContextFile {
	if len(f.Text) <= *budget {
		*budget -= len(f.Text)
		f.Digest = session.DigestText(f.Text)
		return f
	}
	f.Cut = true
	if *budget <= 0 {
		head, _, _ := strings.Cut(f.Text, "\n")
		f.Text = head + "\n\n" + notice("Left out: instruction files may take at most %d bytes of the prompt together, and the files before this one took them all. Read %s for its %d bytes.", limit, f.Path, f.Bytes)
		f.Digest = session.DigestText(f.Text)
		return f
	}
	keep := textcut.Prefix(f.Text, *budget)
	if i := strings.LastIndexByte(keep, '\n'); i > len(keep)/2 {
		keep = keep[:i+1]
	}
	*budget = 0
	f.Text = strings.TrimRight(keep, "\n") + "\n\n" + notice("The instructions were cut here: %s holds %d bytes with its imports, and only the first %d are shown, because instruction files may take at most %d bytes of the prompt together. Read the file for the rest.",
		f.Path, f.Bytes, len(keep), limit)
	f.Digest = session.DigestText(f.Text)
	return f
}

// expander returns an expander reading the workspace through fsys and
// user-level files from the OS.
func (l *Loader) expander(fsys fs.FileSystem, cwd string) *expander {
	root := l.cfg.Root
	if root == "" && fsys != nil {
		root = fsimpl.RootOf(fsys)
	}
	if root == "" {
		root = cwd
	}
	var userDirs []string
	if l.cfg.Home != "" {
		userDirs = append(userDirs, filepath.Join(l.cfg.Home, ".config", "harness"), filepath.Join(l.cfg.Home, ".claude"))
	}
	for _, u := range l.cfg.UserFiles {
		userDirs = append(userDirs, filepath.Dir(filepath.Clean(u)))
	}
	src := &files{fsys: fsys, root: path.Clean(root), home: l.cfg.Home, userDirs: userDirs, max: int64(l.cfg.MaxFileBytes)}
	return &expander{src: src, maxDepth: max(l.cfg.MaxImportDepth, 0), seen: map[place]bool{}}
}

// files reads the workspace through the session's file system and the
// user-level files from the OS, each confined to where it may be.
type files struct {
	fsys     fs.FileSystem
	root     string
	home     string
	userDirs []string
	max      int64
}

func (s *files) read(ctx context.Context, p place) ([]byte, error) {
	if !p.user {
		if s.fsys == nil {
			return nil, &harness.Error{Code: harness.CodeNotFound, Message: "no file system"}
		}
		data, _, err := s.fsys.ReadBytes(ctx, p.path, s.max)
		if errors.Is(err, harness.CodeTooLarge) {
			return nil, &harness.Error{Code: harness.CodeTooLarge, Message: fmt.Sprintf("it is larger than the %d bytes an instruction file may have", s.max)}
		}
		return data, err
	}
	if !s.inUserDirs(p.path) {
		return nil, refused("%s is outside the user's configuration directories", p.path)
	}
	if real, err := filepath.EvalSymlinks(p.path); err == nil && !s.inUserDirs(real) {
		return nil, refused("%s is a link to %s, outside the user's configuration directories", p.path, real)
	}
	data, err := configfile.ReadLimit(p.path, s.max)
	if errors.Is(err, os.ErrNotExist) {
		return nil, &harness.Error{Code: harness.CodeNotFound, Message: p.path + " does not exist"}
	}
	return data, err
}

func (s *files) inUserDirs(p string) bool {
	for _, d := range s.userDirs {
		if rel, err := filepath.Rel(d, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

// resolve places an import: ~/ below the home directory (only into the
// user's configuration directories), an absolute path as written, a
// relative one next to the importing file. A workspace file may import
// only from the workspace or the user's configuration directories; a
// user-level file only from those directories.
func (s *files) resolve(from place, target string) (place, error) {
	switch {
	case strings.HasPrefix(target, "~/"):
		if s.home == "" {
			return place{}, refused("~/ names the home directory, which is not configured")
		}
		p := filepath.Join(s.home, filepath.FromSlash(target[2:]))
		if !s.inUserDirs(p) {
			return place{}, refused("%s is outside the user's configuration directories", p)
		}
		return place{user: true, path: p}, nil
	case from.user:
		p := filepath.FromSlash(target)
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(from.path), p)
		}
		p = filepath.Clean(p)
		if !s.inUserDirs(p) {
			return place{}, refused("%s is outside the user's configuration directories", p)
		}
		return place{user: true, path: p}, nil
	}
	p := target
	if !path.IsAbs(p) {
		p = path.Join(path.Dir(from.path), p)
	}
	p = path.Clean(p)
	if _, ok := below(p, s.root); !ok {
		return place{}, refused("%s is outside the workspace (%s)", p, s.root)
	}
	return place{path: p}, nil
}
