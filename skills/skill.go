package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/go-harness/harness"
)

// CodeInvalidSkill (invalid_skill) is the code of a SKILL.md that does
// not make a skill: no front matter, YAML that does not parse, a
// missing or malformed name or description, a name that is not its
// folder's, a file over the size cap.
const CodeInvalidSkill harness.Code = "invalid_skill"

// Limits of the format, from the Agent Skills specification.
const (
	maxName          = 64
	maxDescription   = 1024
	maxCompatibility = 500
)

// Skill is one skill: the fields of its SKILL.md's front matter, its
// body, and where it was found.
type Skill struct {
	// Name is the skill's name: lowercase letters, digits and hyphens,
	// at most 64, the name of its folder.
	Name string
	// Description says what the skill does and when to use it; the
	// model reads it (and the name) in every request.
	Description string
	// License and Compatibility are the optional fields of the same
	// names.
	License       string
	Compatibility string
	// AllowedTools are the tools the skill limits a turn to once loaded,
	// as rules (Read, Grep, Bash(git status:*)); empty for none.
	AllowedTools []string
	// Metadata is the optional map of the same name.
	Metadata map[string]string
	// Body is the Markdown after the front matter: the instructions the
	// skill tool returns.
	Body string

	// Source says where it was found: "user", "workspace" or
	// "embedded"; Dir is its folder there (an OS path for user skills, a
	// path of the session's file system for workspace skills, a path in
	// the fs.FS for embedded ones).
	Source string
	Dir    string

	// files reads the skill's folder (user and embedded skills), nil for
	// workspace skills, whose files the read tool reads in place.
	files *folder
}

// Base returns where the files a skill's body names are: its folder in
// the session's file system for a workspace skill, skill://<name> for
// the others, which the read tool reads through the catalog's
// Middleware.
func (s *Skill) Base() string {
	if s.files == nil {
		return s.Dir
	}
	return Scheme + s.Name
}

// Scheme starts the locators of the files of user and embedded skills:
// skill://<name>/<path in its folder>.
const Scheme = "skill://"

// nameRE matches a skill name; compiled at the first use, not at load.
var nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })

// invalid returns a CodeInvalidSkill error about the SKILL.md at where.
func invalid(where, format string, args ...any) error {
	return &harness.Error{Code: CodeInvalidSkill, Message: "skills: " + where + ": " + fmt.Sprintf(format, args...)}
}

// Parse reads a SKILL.md: YAML front matter between --- lines, then the
// Markdown body. folder is the name of the folder holding it, which the
// skill's name must equal ("" skips that check); where names the file
// in errors. Fields other than name, description, license,
// compatibility, metadata and allowed-tools (Claude Code's
// argument-hint, model, ...) are ignored. A top-level value YAML cannot
// take as written (one starting with [ or { that is not a whole
// sequence or mapping, or holding ": ") is read as plain text, so that
// front matter written for lenient readers loads.
//
// Errors match CodeInvalidSkill and say what is wrong and where.
func Parse(data []byte, folder, where string) (*Skill, error) {
	if where == "" {
		where = "SKILL.md"
	}
	if !utf8.Valid(data) {
		return nil, invalid(where, "the file is not UTF-8 text")
	}
	front, body, err := split(data)
	if err != nil {
		return nil, invalid(where, "%v", err)
	}
	doc, err := decodeFront(front)
	if err != nil {
		return nil, invalid(where, "the front matter is not valid YAML (%v)", err)
	}
	s := &Skill{Body: body}
	str := func(key string, required bool) (string, error) {
		v, ok := doc[key]
		if !ok || v == nil {
			if required {
				return "", invalid(where, "the front matter has no %s: add `%s: ...`", key, key)
			}
			return "", nil
		}
		switch x := v.(type) {
		case string:
			return strings.TrimSpace(x), nil
		case bool, int, float64, uint64, int64:
			return fmt.Sprint(x), nil
		}
		return "", invalid(where, "the front matter's %s is a %s; it must be a string", key, kindOf(v))
	}
	if s.Name, err = str("name", true); err != nil {
		return nil, err
	}
	if s.Description, err = str("description", true); err != nil {
		return nil, err
	}
	if s.License, err = str("license", false); err != nil {
		return nil, err
	}
	if s.Compatibility, err = str("compatibility", false); err != nil {
		return nil, err
	}
	switch {
	case s.Name == "":
		return nil, invalid(where, "the name is empty")
	case len(s.Name) > maxName:
		return nil, invalid(where, "the name %q has %d characters; at most %d are allowed", s.Name, len(s.Name), maxName)
	case !nameRE().MatchString(s.Name):
		return nil, invalid(where, "the name %q may hold only lowercase letters, digits and single hyphens, and must not start or end with a hyphen", s.Name)
	case folder != "" && s.Name != folder:
		return nil, invalid(where, "the name %q is not the name of its folder %q: rename one to match the other", s.Name, folder)
	case s.Description == "":
		return nil, invalid(where, "the description is empty: say what the skill does and when to use it")
	case utf8.RuneCountInString(s.Description) > maxDescription:
		return nil, invalid(where, "the description has %d characters; at most %d are allowed", utf8.RuneCountInString(s.Description), maxDescription)
	case utf8.RuneCountInString(s.Compatibility) > maxCompatibility:
		return nil, invalid(where, "the compatibility has %d characters; at most %d are allowed", utf8.RuneCountInString(s.Compatibility), maxCompatibility)
	}
	if m, ok := doc["metadata"]; ok && m != nil {
		mm, ok := m.(map[string]any)
		if !ok {
			return nil, invalid(where, "the metadata is a %s; it must be a mapping of names to strings", kindOf(m))
		}
		s.Metadata = map[string]string{}
		for k, v := range mm {
			switch x := v.(type) {
			case map[string]any, []any:
				return nil, invalid(where, "the metadata's %s is a %s; its values must be strings", k, kindOf(x))
			case nil:
				s.Metadata[k] = ""
			default:
				s.Metadata[k] = fmt.Sprint(x)
			}
		}
	}
	if s.AllowedTools, err = allowedTools(doc["allowed-tools"], where); err != nil {
		return nil, err
	}
	return s, nil
}

// split separates the front matter from the body.
func split(data []byte) (front, body string, err error) {
	text := strings.TrimPrefix(string(data), "\uFEFF")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if text == "---" {
		return "", "", errors.New("the front matter is not closed: add a line --- after its fields")
	}
	if !strings.HasPrefix(text, "---\n") {
		return "", "", errors.New("it does not start with front matter: the first line must be --- and the YAML fields follow, up to another ---")
	}
	rest := text[4:]
	for off := 0; off <= len(rest); {
		end := strings.IndexByte(rest[off:], '\n')
		line := rest[off:]
		if end >= 0 {
			line = rest[off : off+end]
		}
		if strings.TrimRight(line, " \t") == "---" {
			front = rest[:off]
			if end >= 0 {
				body = rest[off+end+1:]
			}
			return front, strings.TrimLeft(body, "\n"), nil
		}
		if end < 0 {
			break
		}
		off += end + 1
	}
	return "", "", errors.New("the front matter is not closed: add a line --- after its fields")
}

// decodeFront decodes the front matter as a YAML mapping, retrying with
// the top-level values YAML refuses quoted as plain strings.
func decodeFront(front string) (map[string]any, error) {
	doc, err := decodeYAML(front)
	if err == nil {
		return doc, nil
	}
	fixed, changed := quoteValues(front)
	if !changed {
		return nil, err
	}
	if doc, err2 := decodeYAML(fixed); err2 == nil {
		return doc, nil
	}
	return nil, err
}

func decodeYAML(text string) (map[string]any, error) {
	var doc map[string]any
	dec := yaml.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return map[string]any{}, nil
		}
		return nil, err
	}
	if doc == nil {
		doc = map[string]any{}
	}
	return doc, nil
}

// topLevel matches a top-level "key: value" line of front matter.
var topLevel = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z0-9_][A-Za-z0-9_.-]*):[ \t]+(\S.*)$`)
})

// quoteValues double-quotes the top-level scalar values that YAML may
// refuse: those starting with a flow or reserved indicator, or holding
// ": " or " #". Block values and already quoted ones are left alone.
func quoteValues(front string) (string, bool) {
	lines := strings.Split(front, "\n")
	changed := false
	for i, line := range lines {
		m := topLevel().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		v := strings.TrimRight(m[2], " \t")
		switch v[0] {
		case '"', '\'', '|', '>':
			continue
		}
		if !strings.ContainsAny(v[:1], "[{*&!%@`") && !strings.Contains(v, ": ") && !strings.Contains(v, " #") {
			continue
		}
		lines[i] = m[1] + ": " + strconv.Quote(v)
		changed = true
	}
	return strings.Join(lines, "\n"), changed
}

// allowedTools reads allowed-tools: a string of rules separated by
// commas or spaces (a space inside parentheses belongs to the rule), or
// a list of rules.
func allowedTools(v any, where string) ([]string, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		return splitRules(x), nil
	case []any:
		var out []string
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, invalid(where, "allowed-tools holds a %s; each entry must be a tool rule such as Read or Bash(git status:*)", kindOf(e))
			}
			out = append(out, splitRules(s)...)
		}
		return out, nil
	}
	return nil, invalid(where, "allowed-tools is a %s; it must be a string of tool rules or a list of them", kindOf(v))
}

// splitRules splits a string of rules at commas and spaces outside
// parentheses.
func splitRules(s string) []string {
	var out []string
	var cur bytes.Buffer
	depth := 0
	flush := func() {
		if r := strings.TrimSpace(cur.String()); r != "" && !slices.Contains(out, r) {
			out = append(out, r)
		}
		cur.Reset()
	}
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case (r == ',' || r == ' ' || r == '\t' || r == '\n') && depth == 0:
			flush()
			continue
		}
		cur.WriteRune(r)
	}
	flush()
	return out
}

func kindOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "mapping"
	case []any:
		return "list"
	case bool:
		return "boolean"
	case int, int64, uint64, float64:
		return "number"
	case nil:
		return "null"
	}
	return "string"
}
