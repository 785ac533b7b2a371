package mcp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNames(t *testing.T) {
	long := strings.Repeat("x", 80)
	cases := []struct {
		server, tool string
		want         string
	}{
		{"github", "create_issue", "mcp__github__create_issue"},
		{"everything", "get-sum", "mcp__everything__get-sum"},
		{"My Server", "Get.Thing", "mcp__My_Server__Get_Thing"},
		{"ünï", "tööl", "mcp___n___t__l"},
		{"s", long, "mcp__s__" + strings.Repeat("x", 55-8) + "_" + nameHash("s", long, 0)},
	}
	n := newNamer(listResourcesName, readResourceName)
	for _, c := range cases {
		got := n.name(c.server, c.tool)
		assert.Equal(t, c.want, got, "%s/%s", c.server, c.tool)
		assert.True(t, validName(got), got)
		assert.LessOrEqual(t, len(got), maxNameLen)
		assert.Equal(t, got, n.name(c.server, c.tool), "a tool keeps its name")
	}
}

func TestNameCollisionsGetHashes(t *testing.T) {
	n := newNamer()
	first := n.name("a", "b__c")
	second := n.name("a__b", "c")
	third := n.name("a", "b.c")
	fourth := n.name("a", "b_c")
	assert.Equal(t, "mcp__a__b__c", first, "the first keeps the plain name")
	assert.Equal(t, "mcp__a__b__c_"+nameHash("a__b", "c", 0), second)
	assert.Equal(t, "mcp__a__b_c", third)
	assert.Equal(t, "mcp__a__b_c_"+nameHash("a", "b_c", 0), fourth, "the later tool gets the hash, whichever is lossy")
	// Long names that share their first 55 characters differ by hash.
	p := strings.Repeat("p", 70)
	x, y := n.name("s", p+"1"), n.name("s", p+"2")
	assert.NotEqual(t, x, y)
	assert.Len(t, x, maxNameLen)
}

func FuzzNames(f *testing.F) {
	f.Add("github", "create_issue", "github", "create-issue")
	f.Add("a", "b__c", "a__b", "c")
	f.Add(strings.Repeat("s", 64), "t", strings.Repeat("s", 64), "u")
	f.Add("ü", "x", "_", "x")
	f.Fuzz(func(t *testing.T, s1, t1, s2, t2 string) {
		n := newNamer(listResourcesName, readResourceName)
		a, b := n.name(s1, t1), n.name(s2, t2)
		for _, x := range []string{a, b} {
			require.True(t, validName(x), "%q is not a valid name", x)
			require.True(t, strings.HasPrefix(x, namePrefix))
			require.True(t, mcpName(x), x)
		}
		if s1 != s2 || t1 != t2 {
			require.NotEqual(t, a, b, "two tools never share a name")
		} else {
			require.Equal(t, a, b)
		}
		require.Equal(t, a, n.name(s1, t1))
	})
}

// mcpName is the registry's rule for MCP tool names.
func mcpName(s string) bool {
	return strings.HasPrefix(s, "mcp__") && len(s) > 5 && len(s) <= 64 && sanitize(s) == s
}
