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
		pp.segs = []string{"**"}
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
	}
	return pp, nil
}

// match reports whether the clean absolute path abs matches, for a
// workspace and a home directory (both clean and absolute; home may be
// empty when unknown).
func (pp pathPattern) match(abs, workspace, home string) bool {
	var base string
	switch pp.base {
	case baseRoot:
		base = "/"
	case baseHome:
		if home == "" {
			return false
		}
		base = home
	default:
		base = workspace
	}
	rel, ok := relUnder(abs, base)
	if !ok {
		return false
	}
	var parts []string
	if rel != "" {
		parts = strings.Split(rel, "/")
	}
	if pp.anchored {
		// The pattern or any directory above the path.
		for n := len(parts); n >= 1; n-- {
			if matchSegs(pp.segs, parts[:n]) {
				return true
			}
		}
		return len(parts) == 0 && len(pp.segs) == 1 && pp.segs[0] == "**"
	}
	// No slash: one element matching any element of the path.
	for _, part := range parts {
		if ok, _ := path.Match(pp.segs[0], part); ok {
			return true
		}
	}
	return false
}

// matchSegs matches pattern elements against path elements; "**"
// matches any number of elements.
func matchSegs(pat, parts []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			for i := 0; i <= len(parts); i++ {
				if matchSegs(rest, parts[i:]) {
					return true
				}
			}
			return false
		}
		if len(parts) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], parts[0]); !ok {
			return false
		}
		pat, parts = pat[1:], parts[1:]
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
