package codesearch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/pathmatch"
	"github.com/go-harness/harness/internal/textmatch"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/internal/units"
	"github.com/go-harness/harness/tools"
)

type grepArgs struct {
	Pattern         string `json:"pattern" jsonschema:"RE2 regular expression; escape ( [ . * with a backslash, or set literal."`
	Path            string `json:"path,omitempty" jsonschema:"File or directory to search. Default: the working directory."`
	Glob            string `json:"glob,omitempty" jsonschema:"Only files matching this glob, as rg --glob: *.go or *.{ts,tsx} match names at any depth, a pattern with a slash matches the path below path, a leading ! excludes."`
	Type            string `json:"type,omitempty" jsonschema:"Only files of this type, as rg --type: go, py, js, ts, rust, java, ..."`
	OutputMode      string `json:"output_mode,omitempty" jsonschema:"files_with_matches (default), content or count."`
	CaseInsensitive bool   `json:"case_insensitive,omitempty" jsonschema:"Match letters in either case."`
	Literal         bool   `json:"literal,omitempty" jsonschema:"Treat pattern as plain text."`
	Context         int    `json:"context,omitempty" jsonschema:"Lines before and after each match (content mode), as rg -C."`
	BeforeContext   int    `json:"before_context,omitempty" jsonschema:"Lines before each match, as rg -B; overrides context."`
	AfterContext    int    `json:"after_context,omitempty" jsonschema:"Lines after each match, as rg -A; overrides context."`
	Multiline       bool   `json:"multiline,omitempty" jsonschema:"Let matches span lines; . matches a line break too (rg -U --multiline-dotall)."`
	HeadLimit       int    `json:"head_limit,omitempty" jsonschema:"Most files, or lines in content mode, to show (default 100, at most 1000)."`
}

// Grep returns the grep tool: a regular-expression search of the
// contents of the files under a directory, with ripgrep's conventions
// (output_mode files_with_matches, content or count; context lines;
// file types; a glob filter). It respects ignore files and skips hidden
// entries, binary files and symbolic links as the walk of Glob does. The
// results render as locations.
func Grep(cfg Config) tools.Tool {
	c := cfg.resolve()
	spec := tools.Spec{
		Name: "grep",
		Description: "Search file contents for a regular expression, like ripgrep; prefer it to grep or rg in bash. " +
			"output_mode files_with_matches lists matching files, newest first; content shows matching lines as `N:text` under each path (context lines as `N-text`); count gives matching lines per file. " +
			"Skipped: files excluded by .gitignore or .ignore, hidden files and directories, binary files, symbolic links; " +
			"name a file or hidden directory in path to search it. Totals are always reported.",
		ConcurrencySafe: true,
		Family:          tools.FamilyLocal,
		NeedsFS:         true,
		Render:          harness.RenderLocations,
	}
	return toolexec.Checked(tools.Define(spec, c.grep), c.err)
}

func invalid(format string, args ...any) error {
	return &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf(format, args...)}
}

// grepPlan is a validated grep call.
type grepPlan struct {
	in            grepArgs
	mode          outputMode
	limit         int
	before, after int
	m             *textmatch.Matcher
	glob          *pathmatch.Glob
	typ           *pathmatch.Glob
}

func plan(in grepArgs) (*grepPlan, error) {
	p := &grepPlan{in: in, mode: outputMode(strings.TrimSpace(in.OutputMode)), limit: in.HeadLimit}
	switch p.mode {
	case "":
		p.mode = modeFiles
	case modeFiles, modeContent, modeCount:
	default:
		return nil, invalid("output_mode %q is not one of files_with_matches, content or count.", in.OutputMode)
	}
	switch {
	case in.HeadLimit < 0:
		return nil, invalid("head_limit must be positive, got %d.", in.HeadLimit)
	case in.HeadLimit == 0:
		p.limit = defaultLimit
	case in.HeadLimit > maxLimit:
		p.limit = maxLimit
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"context", in.Context}, {"before_context", in.BeforeContext}, {"after_context", in.AfterContext}} {
		if n.v < 0 || n.v > maxContext {
			return nil, invalid("%s must be between 0 and %d, got %d.", n.name, maxContext, n.v)
		}
	}
	p.before, p.after = in.Context, in.Context
	if in.BeforeContext > 0 {
		p.before = in.BeforeContext
	}
	if in.AfterContext > 0 {
		p.after = in.AfterContext
	}
	m, err := textmatch.Compile(in.Pattern, textmatch.Options{Literal: in.Literal, IgnoreCase: in.CaseInsensitive, Multiline: in.Multiline})
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), textmatch.ErrPattern.Error()+": ")
		if in.Pattern == "" {
			return nil, invalid("pattern is empty. Give the text or regular expression to search for.")
		}
		return nil, invalid("The pattern %q is not a valid regular expression: %s. Escape special characters with a backslash, or set literal to true to search for the text as it is.", in.Pattern, msg)
	}
	p.m = m
	if g := strings.TrimSpace(in.Glob); g != "" {
		p.glob, err = pathmatch.CompileGlob(g, pathmatch.GlobOptions{Basename: true, Negatable: true})
		if err != nil {
			return nil, invalid("The glob %q is not valid: %s.", in.Glob, strings.TrimPrefix(err.Error(), pathmatch.ErrPattern.Error()+"\n"))
		}
	}
	if t := strings.TrimSpace(in.Type); t != "" {
		g, ok := typeGlob(t)
		if !ok {
			return nil, invalid("Unknown file type %q. Known types: %s. Or use glob instead.", in.Type, typeNames())
		}
		p.typ = g
	}
	return p, nil
}

// wants reports whether a file found by the walk is searched.
func (p *grepPlan) wants(rel string) bool {
	if p.typ != nil && !p.typ.Match(rel) {
		return false
	}
	if p.glob != nil && p.glob.Match(rel) == p.glob.Negated() {
		return false
	}
	return true
}

// tally gathers the results of the workers.
type tally struct {
	mu         sync.Mutex
	plan       *grepPlan
	searched   int
	files      int // files with matches
	count      int // matching lines (or matches)
	binary     int
	tooLarge   int
	unreadable int
	kept       []*fileResult
	keptLines  int
}

// note counts a searched file: what scan returned for it.
func (t *tally) note(r *fileResult, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.searched++
	switch {
	case errors.Is(err, errBinary):
	case errors.Is(err, errBinaryMatch):
		t.binary++
	case errors.Is(err, errTooLarge):
		t.tooLarge++
	case err != nil:
		t.unreadable++
	case r.count > 0:
		t.add(r)
	}
}

// add keeps a file with matches; t.mu is held.
func (t *tally) add(r *fileResult) {
	t.files++
	t.count += r.count
	t.kept = append(t.kept, r)
	t.keptLines += r.matches
	// Keep what the output can show: the newest files, or the first
	// files (and lines) by path. Trim when twice the need is held.
	if len(t.kept) < 2*t.plan.limit+16 {
		return
	}
	t.trim()
}

func (t *tally) order() {
	if t.plan.mode == modeFiles {
		slices.SortFunc(t.kept, func(a, b *fileResult) int {
			if c := b.info.ModTime.Compare(a.info.ModTime); c != 0 {
				return c
			}
			return cmp.Compare(a.info.Path, b.info.Path)
		})
		return
	}
	slices.SortFunc(t.kept, func(a, b *fileResult) int { return cmp.Compare(a.info.Path, b.info.Path) })
}

// trim sorts the kept results and drops those the output cannot show.
func (t *tally) trim() {
	t.order()
	if t.plan.mode != modeContent {
		t.kept = t.kept[:min(len(t.kept), t.plan.limit)]
		return
	}
	lines := 0
	for i, r := range t.kept {
		if lines >= t.plan.limit {
			t.kept = t.kept[:i]
			break
		}
		lines += r.matches
	}
}

func (c config) grep(ctx context.Context, call *tools.Call, in grepArgs) (*harness.ToolResult, error) {
	p, err := plan(in)
	if err != nil {
		return nil, err
	}
	top, err := start(ctx, call, "grep", in.Path)
	if err != nil {
		return nil, err
	}
	fsys := call.Env.FS
	t := &tally{plan: p}
	w := &walker{fsys: fsys, hidden: c.hidden, noIgnore: c.noIgnore, workers: c.workers, types: true}
	// Each worker of the walk searches the files it finds, with a scanner
	// (and buffer) of its own.
	scanners := make([]*scanner, max(1, c.workers))
	for i := range scanners {
		scanners[i] = &scanner{m: p.m, mode: p.mode, before: p.before, after: p.after, keep: p.limit}
	}
	search := func(worker int, e entry) bool {
		r, err := scanners[worker].scan(ctx, fsys, e)
		e.done()
		if ctx.Err() != nil {
			return false
		}
		t.note(r, err)
		return true
	}
	if top.Mode.IsDir() {
		err = w.walk(ctx, top.Path, func(worker int, e entry) bool {
			if !p.wants(e.rel) {
				e.done()
				return true
			}
			return search(worker, e)
		})
	} else {
		search(0, entry{info: top, rel: path.Base(top.Path)})
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	t.trim()
	t.unreadable += int(w.skippedDirs.Load())
	return t.render(call.Env, top), nil
}

func (t *tally) render(env *tools.Env, top fs.FileInfo) *harness.ToolResult {
	p := t.plan
	var b strings.Builder
	where := where(env, top.Path)
	kind := "pattern"
	if p.in.Literal {
		kind = "text"
	}
	var locs []harness.Location
	if t.files == 0 {
		fmt.Fprintf(&b, "No matches for the %s %q in %s (%s searched).", kind, p.in.Pattern, where, units.Plural(t.searched, "file", "files"))
	} else {
		switch p.mode {
		case modeFiles:
			fmt.Fprintf(&b, "%s in %s match the %s %q", units.Plural(t.files, "file", "files"), where, kind, p.in.Pattern)
			if len(t.kept) < t.files {
				fmt.Fprintf(&b, "; the %d most recently modified:\n", len(t.kept))
			} else {
				b.WriteString(", most recently modified first:\n")
			}
			for _, r := range t.kept {
				b.WriteString(display(env, r.info.Path))
				b.WriteByte('\n')
				locs = append(locs, harness.Location{Path: r.info.Path})
			}
		case modeCount:
			fmt.Fprintf(&b, "%s in %s match the %s %q", units.Plural(t.count, "line", "lines"), units.Plural(t.files, "file", "files"), kind, p.in.Pattern)
			if p.in.Multiline {
				b.Reset()
				fmt.Fprintf(&b, "%s in %s for the %s %q", units.Plural(t.count, "match", "matches"), units.Plural(t.files, "file", "files"), kind, p.in.Pattern)
			}
			fmt.Fprintf(&b, " under %s (path:count):\n", where)
			for _, r := range t.kept {
				fmt.Fprintf(&b, "%s:%d\n", display(env, r.info.Path), r.count)
				locs = append(locs, harness.Location{Path: r.info.Path})
			}
		case modeContent:
			what := units.Plural(t.count, "matching line", "matching lines")
			if p.in.Multiline {
				what = units.Plural(t.count, "match", "matches")
			}
			fmt.Fprintf(&b, "%s in %s for the %s %q under %s", what, units.Plural(t.files, "file", "files"), kind, p.in.Pattern, where)
			shown := 0
			for _, r := range t.kept {
				for _, l := range r.lines {
					if l.match && shown < p.limit {
						shown++
					}
				}
			}
			if shown < t.count {
				fmt.Fprintf(&b, "; the first %d shown", shown)
			}
			b.WriteString(":\n")
			shown = 0
			for _, r := range t.kept {
				if shown >= p.limit {
					break
				}
				fmt.Fprintf(&b, "\n%s\n", display(env, r.info.Path))
				prev := 0
				var loc *harness.Location
				for _, l := range r.lines {
					if l.match {
						if shown >= p.limit {
							break
						}
						shown++
					}
					if prev > 0 && l.n > prev+1 {
						b.WriteString("--\n")
					}
					sep := '-'
					if l.match {
						sep = ':'
					}
					fmt.Fprintf(&b, "%d%c%s\n", l.n, sep, l.text)
					if loc == nil || l.n > prev+1 {
						locs = append(locs, harness.Location{Path: r.info.Path, StartLine: l.n, EndLine: l.n})
						loc = &locs[len(locs)-1]
					}
					loc.EndLine = l.n
					prev = l.n
				}
			}
		}
	}
	text := strings.TrimRight(b.String(), "\n") + t.footer(env)
	title := fmt.Sprintf("grep %q in %s: %s", p.in.Pattern, where, units.Plural(t.files, "file", "files"))
	return &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(text)},
		Render:  &harness.Render{Kind: harness.RenderLocations, Title: title, Locations: locs},
	}
}

// footer says what was left out and what to do next.
func (t *tally) footer(env *tools.Env) string {
	p := t.plan
	var notes []string
	more := 0
	switch p.mode {
	case modeContent:
		shown := 0
		for _, r := range t.kept {
			shown += r.matches
		}
		more = t.count - min(shown, p.limit)
	default:
		more = t.files - len(t.kept)
	}
	if more > 0 {
		unit := units.Plural(more, "more file", "more files")
		if p.mode == modeContent {
			unit = units.Plural(more, "more matching line", "more matching lines")
		}
		notes = append(notes, fmt.Sprintf("%s not shown: narrow the search with path, glob or type, or raise head_limit (at most %d).", unit, maxLimit))
	}
	if t.files > 0 && p.mode == modeFiles {
		notes = append(notes, "To see the matching lines, call grep again with output_mode content (and context for surrounding lines), or read a file.")
	}
	if t.binary > 0 {
		notes = append(notes, fmt.Sprintf("%s matched but %s skipped as binary (a NUL byte).", units.Plural(t.binary, "file", "files"), map[bool]string{true: "was", false: "were"}[t.binary == 1]))
	}
	if t.tooLarge > 0 {
		notes = append(notes, fmt.Sprintf("%s larger than %s skipped: multiline search reads whole files.", units.Plural(t.tooLarge, "file", "files"), units.Bytes(maxMultiline)))
	}
	if t.unreadable > 0 {
		notes = append(notes, fmt.Sprintf("%s could not be read.", units.Plural(t.unreadable, "file or directory", "files or directories")))
	}
	if t.files == 0 {
		notes = append(notes, "Files excluded by .gitignore or .ignore, hidden files and binary files are not searched; name one in path to search it. Check the pattern's escaping, or try case_insensitive.")
	}
	if len(notes) == 0 {
		return ""
	}
	return "\n\n(" + strings.Join(notes, " ") + ")"
}
