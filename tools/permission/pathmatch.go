package permission

import (
	"fmt"
	"path"
	"strings"
)

// pathPattern is a gitignore-style path pattern, anchored at a base:
//
//	//abs/**        absolute (base "/")
//	~/x/**          the home directory
//	/src/** ./src   the workspace root, anchored
//	src/*.go        a pattern with a slash inside: anchored at the workspace
//	*.env  secrets  no slash: a name at any depth below the workspace
//
// "*" and "?" and "[...]" match within one path element, "**" matches
// any number of elements, and a pattern that matches a directory
// matches everything below it.
type pathPattern struct {
	base     baseKind
	anchored bool
	segs     []string
	// lit marks the elements without wildcards, compared as strings.
	lit []bool
}

type baseKind int

const (
	baseWorkspace baseKind = iota
	baseRoot
	baseHome
)

func compilePath(p string) (pathPattern, error) {
	var pp pathPattern
	switch {
	case p == "":
		return pp, fmt.Errorf("the path pattern is empty")
	case strings.HasPrefix(p, "//"):
		pp.base, pp.anchored, p = baseRoot, true, p[2:]
	case p == "~" || strings.HasPrefix(p, "~/"):
		pp.base, pp.anchored, p = baseHome, true, strings.TrimPrefix(strings.TrimPrefix(p, "~"), "/")
	case strings.HasPrefix(p, "/"):
		pp.anchored, p = true, p[1:]
	case strings.HasPrefix(p, "./"):
		pp.anchored, p = true, p[2:]
	}
	p = strings.TrimSuffix(p, "/")
	if strings.Contains(p, "/") {
		pp.anchored = true
	}
	if p == "" || p == "." {
		pp.segs, pp.lit = []string{"**"}, []bool{false}
		pp.anchored = true
		return pp, nil
	}
	for _, s := range strings.Split(p, "/") {
		switch s {
		case "":
			continue
		case ".":
			continue
		case "..":
			return pp, fmt.Errorf("the path pattern %q has a \"..\" element: write the path it means", p)
		}
		if _, err := path.Match(s, ""); err != nil {
			return pp, fmt.Errorf("the path pattern element %q is malformed: %v", s, err)
		}
		pp.segs = append(pp.segs, s)
		pp.lit = append(pp.lit, !strings.ContainsAny(s, "*?[\\"))
	}
	if len(pp.segs) == 0 {
		// Only "." and "/" elements ("./.", "//."): the base itself.
		pp.segs, pp.lit, pp.anchored = []string{"**"}, []bool{false}, true
	}
	return pp, nil
}

// pathForm is one form of a path (as written, or with links resolved),
// split once relative to each base a pattern may have.
type pathForm struct {
	abs   string
	parts [3][]string
	under [3]bool
}

func newForm(abs, workspace, home string) pathForm {
	f := pathForm{abs: abs}
	for b, base := range [3]string{baseWorkspace: workspace, baseRoot: "/", baseHome: home} {
		if base == "" {
			continue
		}
		if rel, ok := relUnder(abs, base); ok {
			f.under[b] = true
			if rel != "" {
				f.parts[b] = strings.Split(rel, "/")
			}
		}
	}
	return f
}

// match reports whether the clean absolute path abs matches, for a
// workspace and a home directory (both clean and absolute; home may be
// empty when unknown).
func (pp pathPattern) match(abs, workspace, home string) bool {
	return pp.matchForm(newForm(abs, workspace, home))
}

func (pp pathPattern) matchForm(f pathForm) bool {
	if !f.under[pp.base] {
		return false
	}
	parts := f.parts[pp.base]
	if pp.anchored {
		if len(parts) > 0 && pp.lit[0] && parts[0] != pp.segs[0] {
			return false
		}
		// The pattern or any directory above the path.
		for n := len(parts); n >= 1; n-- {
			if matchSegs(pp.segs, pp.lit, parts[:n]) {
				return true
			}
		}
		return len(parts) == 0 && len(pp.segs) == 1 && pp.segs[0] == "**"
	}
	// No slash: one element matching any element of the path.
	for _, part := range parts {
		if matchSeg(pp.segs[0], pp.lit[0], part) {
			return true
		}
	}
	return false
}

func matchSeg(pat string, lit bool, part string) bool {
	if lit {
		return pat == part
	}
	ok, _ := path.Match(pat, part)
	return ok
}

// matchSegs matches pattern elements against path elements; "**"
// matches any number of elements.
func matchSegs(pat []string, lit []bool, parts []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest, restLit := pat[1:], lit[1:]
			for i := 0; i <= len(parts); i++ {
				if matchSegs(rest, restLit, parts[i:]) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 {
			return false
		}
		if !matchSeg(pat[0], lit[0], parts[0]) {
			return false
		}
		pat, lit, parts = pat[1:], lit[1:], parts[1:]
	}
	return len(parts) == 0
}

// relUnder returns abs relative to base ("" for base itself) when abs is
// base or below it.
func relUnder(abs, base string) (string, bool) {
	if base == "/" {
		return strings.TrimPrefix(abs, "/"), strings.HasPrefix(abs, "/")
	}
	if abs == base {
		return "", true
	}
	if strings.HasPrefix(abs, base) && abs[len(base)] == '/' {
		return abs[len(base)+1:], true
	}
	return "", false
}
