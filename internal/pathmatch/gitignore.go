package pathmatch

import (
	"bytes"
	"strings"
)

// Decision is what a rule set says about a path.
type Decision int8

// Decisions.
const (
	// None: no rule matches the path.
	None Decision = iota
	// Ignored: the last matching rule excludes the path.
	Ignored
	// Included: the last matching rule is a negation ("!pattern").
	Included
)

type rule struct {
	pat     pattern
	seg     segment // for a rule without '/': matched against the name
	base    bool
	negate  bool
	dirOnly bool
}

// Rules are the patterns of one gitignore-style file, matched against
// paths relative to the directory the file applies to. The zero value
// has no rules. Rules are immutable and safe for concurrent use.
type Rules struct {
	rules []rule
}

// ParseRules parses the content of a .gitignore (or .ignore, or
// .git/info/exclude) file with git's rules: blank lines and lines starting
// with '#' are skipped; trailing spaces are dropped unless escaped with a
// backslash; a leading '!' negates; "\#" and "\!" start a literal; a
// trailing '/' matches only directories; a '/' at the start or in the
// middle anchors the pattern to the file's directory, otherwise it
// matches a name at any depth; "**/", "/**/" and "/**" span directories.
// A line whose pattern is malformed (an unclosed class, a trailing lone
// backslash) matches nothing, as in git. A trailing carriage return is
// dropped.
func ParseRules(data []byte) *Rules {
	rs := &Rules{}
	for len(data) > 0 {
		var line []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			line, data = data, nil
		}
		if r, ok := parseRule(string(line)); ok {
			rs.rules = append(rs.rules, r)
		}
	}
	return rs
}

// Len returns the number of rules.
func (rs *Rules) Len() int {
	if rs == nil {
		return 0
	}
	return len(rs.rules)
}

func parseRule(line string) (rule, bool) {
	line = strings.TrimSuffix(line, "\r")
	line = trimTrailingSpaces(line)
	if line == "" || line[0] == '#' {
		return rule{}, false
	}
	var r rule
	if line[0] == '!' {
		r.negate = true
		line = line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") && !strings.HasSuffix(line, `\/`) {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" || checkSyntax(line) != nil {
		return rule{}, false
	}
	if !strings.Contains(line, "/") {
		r.base = true
		r.seg = compileSegment(line, false)
		return r, true
	}
	r.pat = compilePattern(strings.TrimPrefix(line, "/"))
	return r, true
}

// trimTrailingSpaces drops trailing spaces that are not escaped by a
// backslash (an escaped one is kept with its backslash, which the
// matcher reads as a literal space).
func trimTrailingSpaces(s string) string {
	end := len(s)
	for end > 0 && s[end-1] == ' ' {
		// Count the backslashes before this space.
		k := end - 1
		n := 0
		for k > 0 && s[k-1] == '\\' {
			k--
			n++
		}
		if n%2 == 1 {
			break
		}
		end--
	}
	return s[:end]
}

// Match returns the decision of the last rule matching rel, a clean
// slash-separated path relative to the rules' directory; isDir says
// whether it names a directory.
func (rs *Rules) Match(rel string, isDir bool) Decision {
	if rs == nil || len(rs.rules) == 0 || rel == "" {
		return None
	}
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	var names []string
	for i := len(rs.rules) - 1; i >= 0; i-- {
		r := &rs.rules[i]
		if r.dirOnly && !isDir {
			continue
		}
		var ok bool
		if r.base {
			ok = r.seg.match(name)
		} else {
			if names == nil {
				names = strings.Split(rel, "/")
			}
			ok = r.pat.match(names)
		}
		if ok {
			if r.negate {
				return Included
			}
			return Ignored
		}
	}
	return None
}

// Stack is the ignore rules in force in one directory of a walk: its
// own files' rules, then its parent's stack. A Stack is immutable, so
// the directories of a parallel walk share their parents' safely. The
// nil Stack has no rules.
type Stack struct {
	parent *Stack
	dir    string // the directory the rules apply to, clean and absolute
	files  []*Rules
}

// Push returns the stack of directory dir (an absolute, clean path below
// or at every directory already on s) with the rule files found there,
// highest precedence first (for ripgrep's order: .ignore, then
// .gitignore). Files without rules are dropped; with none left, s itself
// is returned.
func (s *Stack) Push(dir string, files ...*Rules) *Stack {
	var keep []*Rules
	for _, f := range files {
		if f.Len() > 0 {
			keep = append(keep, f)
		}
	}
	if len(keep) == 0 {
		return s
	}
	return &Stack{parent: s, dir: dir, files: keep}
}

// Ignored reports whether the path p (absolute and clean, below every
// directory on the stack) is excluded: the closest directory with a
// matching rule decides, and within a directory the first file with a
// matching rule, by its last matching rule. It does not look at p's
// parent directories: a walk never enters an ignored directory.
func (s *Stack) Ignored(p string, isDir bool) bool {
	for st := s; st != nil; st = st.parent {
		rel, ok := relTo(st.dir, p)
		if !ok {
			continue
		}
		for _, f := range st.files {
			switch f.Match(rel, isDir) {
			case Ignored:
				return true
			case Included:
				return false
			}
		}
	}
	return false
}

// relTo returns p relative to dir when p is strictly below dir.
func relTo(dir, p string) (string, bool) {
	if dir == "/" {
		return strings.TrimPrefix(p, "/"), len(p) > 1
	}
	if len(p) > len(dir) && strings.HasPrefix(p, dir) && p[len(dir)] == '/' {
		return p[len(dir)+1:], true
	}
	return "", false
}
