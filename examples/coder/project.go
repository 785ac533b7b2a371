package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/examples/coder/internal/ui"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/hooks"
	"github.com/go-harness/harness/instructions"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/skills"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// projectFlags turn off the project's context and hooks, all on by
// default.
type projectFlags struct {
	noInstructions bool
	noSkills       bool
	noHooks        bool
}

func (p *projectFlags) register(fset *flag.FlagSet) {
	fset.BoolVar(&p.noInstructions, "no-instructions", false, "do not read AGENTS.md and CLAUDE.md (the workspace's, and ~/.config/harness/AGENTS.md, ~/.claude/CLAUDE.md)")
	fset.BoolVar(&p.noSkills, "no-skills", false, "offer no Agent Skills (SKILL.md folders in .harness/skills, .claude/skills, .agents/skills and their user-level twins)")
	fset.BoolVar(&p.noHooks, "no-hooks", false, "run no command hooks of .harness/settings.json, .claude/settings.json, .claude/settings.local.json and ~/.claude/settings.json")
}

// project is the project's context and hooks: the instruction files, the
// skills and the settings' command hooks, each nil when turned off.
type project struct {
	ins    *instructions.Loader
	cat    *skills.Catalog
	runner *hooks.Runner
}

// project loads the instruction files, skills and hooks the flags leave
// on. Hooks run under the commands' sandbox, with the same environment
// rules as bash.
func (a *app) project(logger *slog.Logger, pol *permission.Policy) (*project, error) {
	p := &project{}
	home, root := a.env("HOME"), filepath.ToSlash(a.root)
	if !a.o.proj.noInstructions {
		p.ins = instructions.New(instructions.Config{Root: root, Home: home})
	}
	if !a.o.proj.noSkills {
		cat, err := skills.New(skills.Config{Root: root, Home: home})
		if err != nil {
			return nil, err
		}
		p.cat = cat
	}
	if !a.o.proj.noHooks {
		cfg := hooks.Config{ProjectDir: a.root, Home: home, Claude: true, PassEnv: goPassEnv, Env: goCacheEnv(a.env),
			TranscriptPath: func(id string) string { return filepath.Join(a.sessionsDir, id+".jsonl") },
			PermissionMode: string(pol.Mode()), Logger: logger}
		if a.sandboxed != nil {
			cfg.Sandbox = a.sandboxed
		}
		runner, err := hooks.Load(cfg)
		if err != nil {
			return nil, usagef("hooks: %v", strings.TrimPrefix(err.Error(), "hooks: "))
		}
		p.runner = runner
	}
	a.proj = p
	return p, nil
}

// options are the loop options of the project: the context sources, the
// skill tool, and the hooks' middleware (outermost, before the coder's
// own) and approver. The skills' middleware goes first in guards.
func (p *project) options(approver permission.Approver, guards *agent.Hooks) []agent.Option {
	var opts []agent.Option
	if p.ins != nil {
		opts = append(opts, agent.WithContext(p.ins))
	}
	if p.cat != nil {
		opts = append(opts, agent.WithTools(p.cat.Tool()), agent.WithContext(p.cat))
		guards.Tools = append([]tools.Middleware{p.cat.Middleware()}, guards.Tools...)
	}
	if p.runner != nil {
		opts = append(opts, p.runner.Options()...)
		approver = p.runner.Approver(approver)
	}
	return append(opts, agent.WithApprover(approver))
}

// summary is the banner's line about the project: the instruction files
// found for a session in cwd, the number of skills and of hooks; and the
// problems met on the way, as warnings.
func (p *project) summary(ctx context.Context, fsys fs.FileSystem, cwd string, rel func(string) string) (line string, warnings []string) {
	var parts []string
	if p.ins != nil {
		files, err := p.ins.Load(ctx, fsys, cwd)
		if err != nil {
			warnings = append(warnings, "instruction files: "+err.Error())
		}
		var names []string
		for _, f := range files {
			names = append(names, rel(f.Path))
		}
		if len(names) == 0 {
			names = []string{"no AGENTS.md"}
		}
		parts = append(parts, strings.Join(names, ", "))
	}
	if p.cat != nil {
		found := p.cat.Find(ctx, fsys, cwd)
		for _, e := range found.Problems {
			warnings = append(warnings, "skill left out: "+e.Error())
		}
		parts = append(parts, ui.Plural(len(found.Skills), "skill", "skills"))
	}
	if p.runner != nil {
		parts = append(parts, ui.Plural(p.runner.Count(), "hook", "hooks"))
		warnings = append(warnings, p.runner.Settings().Warnings...)
	}
	if len(parts) == 0 {
		return "", warnings
	}
	return "context: " + strings.Join(parts, " · "), warnings
}

// showContext is /context: the session's context files, the skills and
// the hooks by event.
func (a *app) showContext(ctx context.Context) {
	var b strings.Builder
	files := a.sess.Context()
	fmt.Fprintf(&b, "context files: %d", len(files))
	for _, f := range files {
		cut := ""
		if f.Cut {
			cut = ", cut"
		}
		fmt.Fprintf(&b, "\n  %s  (%s, %s%s)", a.relPath(f.Path), kindOf(f), ui.ByteSize(f.Bytes), cut)
	}
	p := a.proj
	if p.cat != nil {
		found := p.cat.Find(ctx, a.fsys, a.sess.Header().Cwd)
		var names []string
		for _, s := range found.Skills {
			names = append(names, s.Name)
		}
		fmt.Fprintf(&b, "\nskills: %d", len(names))
		if len(names) > 0 {
			b.WriteString("  " + strings.Join(names, ", "))
		}
	} else {
		b.WriteString("\nskills: off (-no-skills)")
	}
	if p.runner != nil {
		s := p.runner.Settings()
		fmt.Fprintf(&b, "\nhooks: %d", p.runner.Count())
		for _, ev := range hooks.Events() {
			for _, g := range s.Hooks[ev] {
				for _, c := range g.Hooks {
					m := g.Matcher
					if m == "" {
						m = "*"
					}
					fmt.Fprintf(&b, "\n  %s [%s]  %s", ev, m, c.Command)
				}
			}
		}
	} else {
		b.WriteString("\nhooks: off (-no-hooks)")
	}
	a.view.Notice(ui.NoticeInfo, b.String())
}

func kindOf(f session.ContextFile) string {
	if f.Kind == "" {
		return "context"
	}
	return f.Kind
}

// relPath shows a path of the workspace relative to it, and one of the
// home directory with ~.
func (a *app) relPath(p string) string {
	osPath := filepath.FromSlash(p)
	if r, err := filepath.Rel(a.root, osPath); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	if home := a.env("HOME"); home != "" {
		if r, err := filepath.Rel(home, osPath); err == nil && !strings.HasPrefix(r, "..") {
			return "~/" + filepath.ToSlash(r)
		}
	}
	return p
}

// showContextLoaded tells a person what project context a turn loaded:
// one line when the set changes, one line per nested file.
func (a *app) showContextLoaded(e *agent.ContextLoaded) {
	if a.o.json {
		return
	}
	if e.Nested {
		for _, f := range e.Files {
			a.view.Notice(ui.NoticeInfo, "⌁ context: read "+a.relPath(f.Path)+" ("+ui.ByteSize(f.Bytes)+")")
		}
		return
	}
	var names []string
	for _, f := range e.Files {
		if f.Kind == skills.Kind {
			continue
		}
		names = append(names, a.relPath(f.Path))
	}
	line := "⌁ context loaded: " + strings.Join(names, ", ")
	if len(names) == 0 {
		line = "⌁ context loaded: no instruction files"
	}
	a.view.Notice(ui.NoticeInfo, line)
}

// showProject shows the banner's line about the project's context and
// hooks, and the problems met loading them.
func (a *app) showProject(ctx context.Context) {
	line, warnings := a.proj.summary(ctx, a.fsys, a.sess.Header().Cwd, a.relPath)
	if line != "" {
		a.view.Notice(ui.NoticeInfo, line)
	}
	for _, w := range warnings {
		a.view.Notice(ui.NoticeWarn, "! "+w)
	}
}
