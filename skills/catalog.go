package skills

import (
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/fsimpl"
	"github.com/go-harness/harness/session"
)

// DefaultMaxBytes is the default cap of a SKILL.md, and of each file
// read through a skill:// locator.
const DefaultMaxBytes = 256 << 10

// Kind is the ContextFile.Kind of the list of skills.
const Kind = "skills"

// Config configures a Catalog. The zero value finds the skills of the
// workspace only.
type Config struct {
	// Dirs are the folders skills are looked for in, relative to the
	// workspace root and to the working directory; nil means
	// .harness/skills, .claude/skills and .agents/skills.
	Dirs []string
	// Root is the workspace root, a path of the session's file system;
	// empty means the file system's root.
	Root string
	// NoWorkspace leaves out the workspace's skills (a host that does
	// not trust the repositories it works in).
	NoWorkspace bool
	// Home is the user's home directory, an OS path: when set, the
	// skills of Home/.config/harness/skills, Home/.claude/skills and
	// Home/.agents/skills are found too. Empty means none: the home
	// directory is never looked up on its own.
	Home string
	// UserDirs, when not nil, replaces the user's folders Home gives
	// (OS paths).
	UserDirs []string
	// Embedded are skills a host ships: each fs.FS holds skill folders
	// at its top (fs.Sub an embed.FS to its skills directory). They are
	// checked by New.
	Embedded []iofs.FS
	// MaxBytes caps a SKILL.md and each file read through skill://;
	// DefaultMaxBytes when zero.
	MaxBytes int
}

// Catalog finds skills and gives the model what it needs of them: the
// list of names and descriptions in the prompt (it is an
// agent.ContextSource), the skill tool that loads one (Tool), and the
// reading of the files of user and embedded skills through the read
// tool (Middleware). It is safe for concurrent use.
type Catalog struct {
	cfg      Config
	embedded []*Skill
}

// New returns a Catalog. An embedded skill that does not parse, or two
// embedded skills with one name, is an error matching CodeInvalidSkill:
// what a host ships must be right.
func New(cfg Config) (*Catalog, error) {
	if cfg.Dirs == nil {
		cfg.Dirs = []string{".harness/skills", ".claude/skills", ".agents/skills"}
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.UserDirs == nil && cfg.Home != "" {
		cfg.UserDirs = []string{
			filepath.Join(cfg.Home, ".config", "harness", "skills"),
			filepath.Join(cfg.Home, ".claude", "skills"),
			filepath.Join(cfg.Home, ".agents", "skills"),
		}
	}
	c := &Catalog{cfg: cfg}
	var errs []error
	seen := map[string]bool{}
	for i, efs := range cfg.Embedded {
		where := fmt.Sprintf("embedded skills #%d", i+1)
		found, problems := c.scan(context.Background(), embeddedOpener(efs), ".", "embedded", where)
		errs = append(errs, problems...)
		for _, s := range found {
			if seen[s.Name] {
				errs = append(errs, invalid(where, "a second embedded skill is named %q", s.Name))
				continue
			}
			seen[s.Name] = true
			c.embedded = append(c.embedded, s)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// Found is what a search for skills found.
type Found struct {
	// Skills are the skills, in the order the model is told of them:
	// the user's, the workspace's (root, then working directory), the
	// embedded ones. Of two skills with one name the first is kept.
	Skills []*Skill
	// Problems are the SKILL.md files that were not loaded, each an
	// error matching CodeInvalidSkill (or the file's read error) that
	// names the file, and the skills left out because an earlier one had
	// their name.
	Problems []error
}

// Lookup returns the skill named name, or nil.
func (f Found) Lookup(name string) *Skill {
	for _, s := range f.Skills {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Find returns the skills of a session working in cwd of fsys (nil for
// none: user and embedded skills only).
func (c *Catalog) Find(ctx context.Context, fsys fs.FileSystem, cwd string) Found {
	var all []*Skill
	var problems []error
	for _, dir := range c.cfg.UserDirs {
		found, probs := c.scan(ctx, osOpener(dir), ".", "user", dir)
		all, problems = append(all, found...), append(problems, probs...)
	}
	if fsys != nil && !c.cfg.NoWorkspace {
		root := c.cfg.Root
		if root == "" {
			root = fsimpl.RootOf(fsys)
		}
		bases := []string{path.Clean(root)}
		if cwd != "" && path.Clean(cwd) != bases[0] {
			bases = append(bases, path.Clean(cwd))
		}
		for _, base := range bases {
			for _, d := range c.cfg.Dirs {
				dir := path.Join(base, d)
				found, probs := c.scan(ctx, workspaceOpener(ctx, fsys, dir), ".", "workspace", dir)
				all, problems = append(all, found...), append(problems, probs...)
			}
		}
	}
	all = append(all, c.embedded...)
	var out Found
	out.Problems = problems
	byName := map[string]*Skill{}
	for _, s := range all {
		if first, ok := byName[s.Name]; ok {
			if first.Dir != s.Dir || first.Source != s.Source {
				out.Problems = append(out.Problems, invalid(s.Dir, "the %s skill %q is not used: the %s skill of the same name in %s comes first", s.Source, s.Name, first.Source, first.Dir))
			}
			continue
		}
		byName[s.Name] = s
		out.Skills = append(out.Skills, s)
	}
	return out
}

// scan loads the skills of the folders at the top of dir in the file
// system open gives: each folder holding a SKILL.md is a skill.
func (c *Catalog) scan(ctx context.Context, open opener, dir, source, where string) ([]*Skill, []error) {
	var out []*Skill
	var problems []error
	_ = open(func(fsys iofs.FS) error {
		entries, err := iofs.ReadDir(fsys, dir)
		if err != nil {
			if !errors.Is(err, iofs.ErrNotExist) && !errors.Is(err, harness.CodeNotFound) {
				problems = append(problems, fmt.Errorf("skills: listing %s: %w", where, err))
			}
			return nil
		}
		for _, e := range entries {
			if ctx.Err() != nil {
				return nil
			}
			name := e.Name()
			if strings.HasPrefix(name, ".") || (!e.IsDir() && e.Type()&iofs.ModeSymlink == 0) {
				continue
			}
			sub := path.Join(dir, name)
			file := path.Join(sub, "SKILL.md")
			display := joinWhere(where, source, name)
			data, err := readCapped(fsys, file, int64(c.cfg.MaxBytes))
			if errors.Is(err, iofs.ErrNotExist) || errors.Is(err, harness.CodeNotFound) || errors.Is(err, errIsDir) {
				continue // not a skill folder
			}
			if err != nil {
				problems = append(problems, invalid(display+"/SKILL.md", "%v", err))
				continue
			}
			s, err := Parse(data, name, display+"/SKILL.md")
			if err != nil {
				problems = append(problems, err)
				continue
			}
			s.Source, s.Dir = source, display
			if source != "workspace" {
				s.files = &folder{open: open, dir: sub, max: int64(c.cfg.MaxBytes)}
			}
			out = append(out, s)
		}
		return nil
	})
	return out, problems
}

// joinWhere names a skill's folder for the model and for errors: an OS
// path, a path of the session's file system, or a path in an embedded
// file system.
func joinWhere(where, source, name string) string {
	switch source {
	case "user":
		return filepath.Join(where, name)
	case "workspace":
		return path.Join(where, name)
	}
	return where + ":" + name
}

// Context returns the list of skills for the prompt: one part, named
// "skills", with each skill's name and description; none when no skill
// is found.
func (c *Catalog) Context(ctx context.Context, q agent.ContextQuery) ([]session.ContextFile, error) {
	found := c.Find(ctx, q.FS, q.Cwd)
	if len(found.Skills) == 0 {
		return nil, ctx.Err()
	}
	text := Listing(found.Skills)
	return []session.ContextFile{{Path: "skills", Kind: Kind, Bytes: int64(len(text)), Text: text, Digest: session.DigestText(text)}}, ctx.Err()
}

// Listing is the text that tells the model of skills: their names and
// descriptions, never their bodies.
func Listing(skills []*Skill) string {
	var b strings.Builder
	b.WriteString("Skills are available: folders of instructions, scripts and references for particular tasks. " +
		"When a task matches a skill's description, call the skill tool with the skill's name before you start, and follow what it says; " +
		"read the files it names with read, from the folder it gives.\n")
	for _, s := range skills {
		fmt.Fprintf(&b, "\n- %s: %s", s.Name, oneLine(s.Description))
	}
	return b.String()
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
