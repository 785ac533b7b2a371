package skills_test

import (
	"context"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/go-harness/harness"
	memfs "github.com/go-harness/harness/fs/fstest"
	"github.com/go-harness/harness/skills"
)

// realSkills are the public skills kept as test data, with what their
// SKILL.md says.
var realSkills = []struct {
	dir, name, description, license string
	allowed                         []string
	bodyStart                       string
}{
	{"anthropics-skills", "brand-guidelines", "Applies Anthropic's official brand colors and typography", "Complete terms in LICENSE.txt", nil, "# Anthropic Brand Styling"},
	{"anthropics-skills", "mcp-builder", "Guide for creating high-quality MCP (Model Context Protocol) servers", "Complete terms in LICENSE.txt", nil, "# MCP Server Development Guide"},
	{"anthropics-skills", "skill-creator", "Create new skills, modify and improve existing skills", "", nil, "# Skill Creator"},
	{"anthropics-skills", "webapp-testing", "Toolkit for interacting with and testing local web applications using Playwright", "Complete terms in LICENSE.txt", nil, "# Web Application Testing"},
	{"imbue-ai-mng", "wait-for-agent", "Wait for another agent to enter WAITING state, then execute follow-up instructions", "",
		[]string{"Bash(uv run mngr list *)", "Bash(while true; do*)"}, "The user's message contains an agent name"},
	{"imbue-ai-mng", "writing-specs", "Write high quality specifications or design docs for a program.", "", nil, ""},
}

func TestRealSkillsConform(t *testing.T) {
	for _, rs := range realSkills {
		t.Run(rs.name, func(t *testing.T) {
			file := filepath.Join("testdata", rs.dir, rs.name, "SKILL.md")
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			s, err := skills.Parse(data, rs.name, file)
			require.NoError(t, err)
			assert.Equal(t, rs.name, s.Name)
			assert.True(t, strings.HasPrefix(s.Description, rs.description), s.Description)
			assert.Equal(t, rs.license, s.License)
			assert.Equal(t, rs.allowed, s.AllowedTools)
			assert.True(t, strings.HasPrefix(s.Body, rs.bodyStart), "the body follows the front matter: %.80q", s.Body)
			assert.NotContains(t, s.Body[:min(len(s.Body), 200)], "description:")
			assert.True(t, strings.HasSuffix(string(data), s.Body), "the body is the rest of the file, unchanged")
		})
	}

	// The catalog finds all of them as a host's embedded skills.
	c, err := skills.New(skills.Config{Embedded: []iofs.FS{os.DirFS("testdata/anthropics-skills"), os.DirFS("testdata/imbue-ai-mng")}})
	require.NoError(t, err)
	found := c.Find(context.Background(), nil, "")
	assert.Empty(t, found.Problems)
	var names []string
	for _, s := range found.Skills {
		names = append(names, s.Name)
		assert.Equal(t, "embedded", s.Source)
		assert.Equal(t, "skill://"+s.Name, s.Base())
	}
	assert.Equal(t, []string{"brand-guidelines", "mcp-builder", "skill-creator", "webapp-testing", "wait-for-agent", "writing-specs"}, names)
	listing := skills.Listing(found.Skills)
	for _, s := range found.Skills {
		assert.Contains(t, listing, "\n- "+s.Name+": "+strings.Join(strings.Fields(s.Description), " "))
		assert.NotContains(t, listing, strings.TrimSpace(s.Body)[:40], "bodies stay out of the listing")
	}
}

// wait-for-agent's front matter is not YAML as written: its
// argument-hint starts a flow sequence it does not finish.
func TestLenientFrontMatterIsNeeded(t *testing.T) {
	data, err := os.ReadFile("testdata/imbue-ai-mng/wait-for-agent/SKILL.md")
	require.NoError(t, err)
	front := strings.SplitN(string(data), "---\n", 3)[1]
	var doc map[string]any
	require.Error(t, yaml.Unmarshal([]byte(front), &doc), "a strict YAML reader refuses it")
}

func TestParseErrors(t *testing.T) {
	long := strings.Repeat("a", 65)
	for _, tc := range []struct {
		name, text, folder, want string
	}{
		{"no front matter", "# Just markdown\n", "x", "does not start with front matter"},
		{"unclosed", "---\nname: x\ndescription: y\n", "x", "the front matter is not closed"},
		{"bad yaml", "---\nname: x\ndescription: y\n  - z\n: :\n---\n", "x", "the front matter is not valid YAML"},
		{"not a mapping", "---\n- a\n- b\n---\n", "x", "the front matter is not valid YAML"},
		{"no name", "---\ndescription: y\n---\n", "x", "the front matter has no name"},
		{"no description", "---\nname: x\n---\n", "x", "the front matter has no description"},
		{"empty description", "---\nname: x\ndescription: \"  \"\n---\n", "x", "the description is empty"},
		{"name mismatch", "---\nname: pdf\ndescription: y\n---\n", "pdf-tools", `the name "pdf" is not the name of its folder "pdf-tools"`},
		{"upper case", "---\nname: PDF\ndescription: y\n---\n", "PDF", "may hold only lowercase letters"},
		{"double hyphen", "---\nname: a--b\ndescription: y\n---\n", "a--b", "single hyphens"},
		{"leading hyphen", "---\nname: -ab\ndescription: y\n---\n", "-ab", "must not start or end with a hyphen"},
		{"too long", "---\nname: " + long + "\ndescription: y\n---\n", long, "at most 64"},
		{"description too long", "---\nname: x\ndescription: " + strings.Repeat("d", 1025) + "\n---\n", "x", "at most 1024"},
		{"name is a list", "---\nname: [a, b]\ndescription: y\n---\n", "x", "the front matter's name is a list"},
		{"metadata not a map", "---\nname: x\ndescription: y\nmetadata: [1]\n---\n", "x", "the metadata is a list"},
		{"metadata nested", "---\nname: x\ndescription: y\nmetadata:\n  a: {b: c}\n---\n", "x", "its values must be strings"},
		{"allowed-tools number", "---\nname: x\ndescription: y\nallowed-tools: 3\n---\n", "x", "allowed-tools is a number"},
		{"not utf-8", "---\nname: x\ndescription: \xff\n---\n", "x", "not UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := skills.Parse([]byte(tc.text), tc.folder, "/w/.claude/skills/"+tc.folder+"/SKILL.md")
			require.Error(t, err)
			assert.ErrorIs(t, err, skills.CodeInvalidSkill)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "/w/.claude/skills/"+tc.folder+"/SKILL.md", "the error names the file")
		})
	}

	s, err := skills.Parse([]byte("\uFEFF---\r\nname: x\r\ndescription: >\r\n  Folded\r\n  text\r\nmetadata:\r\n  version: 1.0\r\n  author: me\r\nallowed-tools:\r\n  - Read\r\n  - Bash(git log:*) Grep\r\ncompatibility: needs git\r\n---\r\nBody\r\n"), "x", "")
	require.NoError(t, err)
	assert.Equal(t, "Folded text", s.Description)
	assert.Equal(t, map[string]string{"version": "1", "author": "me"}, s.Metadata)
	assert.Equal(t, []string{"Read", "Bash(git log:*)", "Grep"}, s.AllowedTools)
	assert.Equal(t, "needs git", s.Compatibility)
	assert.Equal(t, "Body\n", s.Body)
}

func TestDiscovery(t *testing.T) {
	skill := func(name, desc string) string {
		return "---\nname: " + name + "\ndescription: " + desc + "\n---\nThe " + name + " instructions.\n"
	}
	ws := memfs.NewMemFS("/ws")
	for p, text := range map[string]string{
		"/ws/.claude/skills/alpha/SKILL.md":     skill("alpha", "workspace alpha"),
		"/ws/.agents/skills/beta/SKILL.md":      skill("beta", "workspace beta"),
		"/ws/.harness/skills/gamma/SKILL.md":    skill("gamma", "workspace gamma"),
		"/ws/.harness/skills/broken/SKILL.md":   "no front matter",
		"/ws/.harness/skills/notaskill/x.md":    "a folder without SKILL.md",
		"/ws/.harness/skills/README.md":         "a file beside the folders",
		"/ws/sub/.claude/skills/delta/SKILL.md": skill("delta", "sub delta"),
		"/ws/.claude/skills/big/SKILL.md":       skill("big", strings.Repeat("b", 900)) + strings.Repeat("x", 2000),
	} {
		require.NoError(t, ws.SetFile(p, []byte(text), 0o644))
	}
	home := t.TempDir()
	for p, text := range map[string]string{
		".claude/skills/alpha/SKILL.md":         skill("alpha", "the user's alpha"),
		".config/harness/skills/omega/SKILL.md": skill("omega", "the user's omega"),
	} {
		full := filepath.Join(home, p)
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, []byte(text), 0o644))
	}
	embedded := fstest.MapFS{"zeta/SKILL.md": {Data: []byte(skill("zeta", "shipped zeta"))}}
	c, err := skills.New(skills.Config{Home: home, Embedded: []iofs.FS{embedded}, MaxBytes: 2048})
	require.NoError(t, err)
	found := c.Find(context.Background(), ws, "/ws/sub")
	var got []string
	for _, s := range found.Skills {
		got = append(got, s.Source+":"+s.Name)
	}
	assert.Equal(t, []string{"user:omega", "user:alpha", "workspace:gamma", "workspace:beta", "workspace:delta", "embedded:zeta"}, got)
	assert.Equal(t, filepath.Join(home, ".claude", "skills", "alpha"), found.Lookup("alpha").Dir)
	assert.Equal(t, "/ws/.agents/skills/beta", found.Lookup("beta").Dir)
	assert.Equal(t, "/ws/.agents/skills/beta", found.Lookup("beta").Base(), "a workspace skill's files are read in place")
	assert.Equal(t, "skill://omega", found.Lookup("omega").Base())
	var problems []string
	for _, p := range found.Problems {
		problems = append(problems, p.Error())
	}
	assert.Len(t, problems, 3, "%q", problems)
	joined := strings.Join(problems, "\n")
	assert.Contains(t, joined, "/ws/.harness/skills/broken/SKILL.md: it does not start with front matter")
	assert.Contains(t, joined, "/ws/.claude/skills/big/SKILL.md: ")
	assert.Contains(t, joined, "a skill's files may have at most 2048")
	assert.Contains(t, joined, `the workspace skill "alpha" is not used: the user skill of the same name`)

	// A host that does not trust the workspace.
	c, err = skills.New(skills.Config{NoWorkspace: true})
	require.NoError(t, err)
	assert.Empty(t, c.Find(context.Background(), ws, "/ws").Skills)

	// A host's own skills must be right.
	_, err = skills.New(skills.Config{Embedded: []iofs.FS{fstest.MapFS{"bad/SKILL.md": {Data: []byte(skill("other", "x"))}}}})
	require.Error(t, err)
	assert.ErrorIs(t, err, skills.CodeInvalidSkill)
	assert.Contains(t, err.Error(), `the name "other" is not the name of its folder "bad"`)
	assert.ErrorIs(t, err, harness.Code("invalid_skill"))
}
