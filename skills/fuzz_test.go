package skills_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/go-harness/harness/skills"
)

// FuzzParse feeds arbitrary files to the SKILL.md reader: it never
// panics, every error is a CodeInvalidSkill error naming the file, and
// a skill it accepts has a valid name equal to its folder, a
// description, and as its body the end of the file.
func FuzzParse(f *testing.F) {
	for _, p := range []string{
		"testdata/imbue-ai-mng/wait-for-agent/SKILL.md",
		"testdata/anthropics-skills/brand-guidelines/SKILL.md",
		"testdata/anthropics-skills/webapp-testing/SKILL.md",
	} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"---\nname: x\ndescription: y\n---\n",
		"---\nname: x\ndescription: [a] b\nallowed-tools: Bash(a b), Read\n---\nbody",
		"---\r\nname: x\r\ndescription: 'q'\r\nmetadata:\r\n  k: v\r\n---",
		"---\nname: x\ndescription: y\nallowed-tools: [Read, 'Bash(x:*)']\n---\n",
		"---\n---\n",
		"",
	} {
		f.Add([]byte(s))
	}
	name := regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := skills.Parse(data, "x", "the/SKILL.md")
		if err != nil {
			if !strings.Contains(err.Error(), "the/SKILL.md") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		if s.Name != "x" || !name.MatchString(s.Name) || strings.TrimSpace(s.Description) == "" {
			t.Fatalf("accepted %q as %+v", data, s)
		}
		if !strings.Contains(string(data), "\r") && !strings.HasSuffix(string(data), s.Body) {
			t.Fatalf("the body %q is not the end of %q", s.Body, data)
		}
		for _, r := range s.AllowedTools {
			if strings.TrimSpace(r) == "" || r != strings.TrimSpace(r) {
				t.Fatalf("an allowed-tools entry %q", r)
			}
		}
	})
}
