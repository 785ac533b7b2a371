package codesearch

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/internal/pathmatch"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/internal/units"
	"github.com/go-harness/harness/tools"
)

type globArgs struct {
	Pattern string `json:"pattern" jsonschema:"Glob matched against paths relative to path: * and ? stay within one directory, ** spans any, [abc] and {a,b} as usual; *.md matches the top level only."`
	Path    string `json:"path,omitempty" jsonschema:"Directory to search. Default: the working directory."`
	Limit   int    `json:"limit,omitempty" jsonschema:"Most paths to list (default 100, at most 1000)."`
}

// Glob returns the glob tool: the files under a directory whose paths
// match a `**`-style pattern, most recently modified first, capped with
// the total count. It respects .gitignore, .ignore and .git/info/exclude
// (nested ones too), skips hidden entries unless the pattern names them,
// never follows symbolic links, and honours ctx between directories. The
// results render as locations.
func Glob(cfg Config) tools.Tool {
	c := cfg.resolve()
	spec := tools.Spec{
		Name: "glob",
		Description: "Find files by path with a glob pattern; prefer it to find or ls in bash. Newest first, capped by limit, with the total. " +
			"Files excluded by .gitignore or .ignore and hidden files are left out unless the pattern names a hidden directory (.github/**); symbolic links are not followed.",
		ConcurrencySafe: true,
		Family:          tools.FamilyLocal,
		NeedsFS:         true,
		Render:          harness.RenderLocations,
	}
	return toolexec.Checked(tools.Define(spec, c.glob), c.err)
}

// splitPattern separates the directories a pattern starts with (no
// wildcard in them) from the rest.
func splitPattern(p string) (dir, rest string) {
	parts := strings.Split(p, "/")
	i := 0
	for i < len(parts)-1 && !strings.ContainsAny(parts[i], `*?[{\`) {
		i++
	}
	dir = strings.Join(parts[:i], "/")
	if dir == "" && strings.HasPrefix(p, "/") {
		dir = "/"
	}
	return dir, strings.Join(parts[i:], "/")
}

func (c config) glob(ctx context.Context, call *tools.Call, in globArgs) (*harness.ToolResult, error) {
	pattern := strings.TrimSpace(in.Pattern)
	switch {
	case pattern == "":
		return nil, invalid("pattern is empty. Give a glob such as **/*.go.")
	case in.Limit < 0:
		return nil, invalid("limit must be positive, got %d.", in.Limit)
	}
	limit := in.Limit
	if limit == 0 {
		limit = defaultLimit
	}
	limit = min(limit, maxLimit)
	top, err := start(ctx, call, "glob", in.Path)
	if err != nil {
		return nil, err
	}
	if !top.Mode.IsDir() {
		return nil, invalid("path %s is a file; glob searches a directory. Give the directory that holds it, or read the file.", display(call.Env, top.Path))
	}
	dir, rest := splitPattern(strings.TrimPrefix(pattern, "./"))
	base := top.Path
	if dir != "" {
		if strings.HasPrefix(dir, "/") {
			base = path.Clean(dir)
		} else {
			base = path.Join(top.Path, dir)
		}
	}
	g, err := pathmatch.CompileGlob(rest, pathmatch.GlobOptions{})
	if err != nil {
		return nil, invalid("The pattern %q is not a valid glob: %s.", in.Pattern, strings.TrimPrefix(err.Error(), pathmatch.ErrPattern.Error()+"\n"))
	}
	fsys := call.Env.FS
	if base != top.Path {
		fi, err := fsys.Stat(ctx, base)
		switch {
		case err != nil && harness.CodeOf(err) == harness.CodeNotFound:
			return globResult(call.Env, in, base, nil, 0, limit, nil), nil
		case err != nil:
			return nil, explain(ctx, call.Env, "glob", base, err)
		case !fi.Mode.IsDir():
			return globResult(call.Env, in, base, nil, 0, limit, nil), nil
		}
	}
	hidden := c.hidden || strings.HasPrefix(rest, ".") || strings.Contains(rest, "/.")
	// Only the files that match need their time, for the order.
	w := &walker{fsys: fsys, hidden: hidden, noIgnore: c.noIgnore, prune: g.MayMatchUnder, workers: c.workers,
		types: true, describe: g.Match}
	var mu sync.Mutex
	var kept []fs.FileInfo
	total := 0
	newest := func(a, b fs.FileInfo) int {
		if c := b.ModTime.Compare(a.ModTime); c != 0 {
			return c
		}
		return cmp.Compare(a.Path, b.Path)
	}
	err = w.walk(ctx, base, func(_ int, e entry) bool {
		e.done()
		if !g.Match(e.rel) {
			return true
		}
		mu.Lock()
		defer mu.Unlock()
		total++
		kept = append(kept, e.info)
		if len(kept) >= 2*limit+64 {
			slices.SortFunc(kept, newest)
			kept = kept[:limit]
		}
		return true
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, explain(ctx, call.Env, "glob", base, err)
	}
	slices.SortFunc(kept, newest)
	kept = kept[:min(len(kept), limit)]
	var hint *int
	if total == 0 && !strings.Contains(rest, "/") && !strings.HasPrefix(rest, "**") {
		// "*.go" matches only at the top: would "**/*.go" find some?
		deep, _ := pathmatch.CompileGlob("**/"+rest, pathmatch.GlobOptions{})
		var n atomic.Int32
		w.prune, w.describe = nil, nil
		_ = w.walk(ctx, base, func(_ int, e entry) bool {
			e.done()
			if deep.Match(e.rel) {
				return n.Add(1) < 1000
			}
			return true
		})
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		found := int(n.Load())
		hint = &found
	}
	return globResult(call.Env, in, base, kept, total, limit, hint), nil
}

func globResult(env *tools.Env, in globArgs, base string, kept []fs.FileInfo, total, limit int, deeper *int) *harness.ToolResult {
	var b strings.Builder
	where := where(env, base)
	var locs []harness.Location
	if total == 0 {
		fmt.Fprintf(&b, "No files match %q in %s.", in.Pattern, where)
		if deeper != nil && *deeper > 0 {
			more := units.Plural(*deeper, "file matches", "files match")
			if *deeper >= 1000 {
				more = "1000 or more files match"
			}
			fmt.Fprintf(&b, " The pattern matches only directly in that directory; %s **/%s at any depth.", more, strings.TrimPrefix(in.Pattern, "./"))
		}
		b.WriteString(" Files excluded by .gitignore or .ignore and hidden files are not listed.")
	} else {
		fmt.Fprintf(&b, "%s in %s match %q", units.Plural(total, "file", "files"), where, in.Pattern)
		if len(kept) < total {
			fmt.Fprintf(&b, "; the %d most recently modified:\n", len(kept))
		} else {
			b.WriteString(", most recently modified first:\n")
		}
		for _, fi := range kept {
			b.WriteString(display(env, fi.Path))
			b.WriteByte('\n')
			locs = append(locs, harness.Location{Path: fi.Path})
		}
		if len(kept) < total {
			fmt.Fprintf(&b, "\n(%d more not shown: narrow the pattern or the path, or raise limit (at most %d).)", total-len(kept), maxLimit)
		}
	}
	text := strings.TrimRight(b.String(), "\n")
	return &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(text)},
		Render:  &harness.Render{Kind: harness.RenderLocations, Title: fmt.Sprintf("glob %q in %s: %s", in.Pattern, where, units.Plural(total, "file", "files")), Locations: locs},
	}
}
