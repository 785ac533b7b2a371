package main

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// firstRequestCeiling is the most the coder's first request (default
// tools, system prompt, a short prompt) may weigh. Tool descriptions are
// sent on every request; a new tool or a longer text that passes it must
// earn its bytes or be deferred.
//
// Issue 38's goal is 15,000 bytes. The tool set of that measurement
// (14,974 bytes) has since gained web_fetch (866 bytes) and skill (541
// bytes), which the goal's answer, deferred loading of rarely used tools,
// has not yet moved out of the first request: until it does, the ceiling
// was 16,670 bytes with a little room (16,800), so that nothing grows
// unnoticed.
//
// Issue 34 gave the coder the job tools (job_output 1,073 B, job_list
// 441 B, job_stop 430 B), ask_user (917 B) and todo (778 B): 3,644
// bytes with their separators, a first request of 20,314 bytes. The
// ceiling is raised by exactly that until deferred loading moves the
// rarely used ones out.
const firstRequestCeiling = 16_800 + 3_644

// The first request with the default tool set stays under the ceiling;
// the test logs what each tool weighs. Bytes are deterministic, so this
// is a plain ceiling, not a timing.
func TestFirstRequestSize(t *testing.T) {
	p := newProvider(t, say("ok"))
	r := runCLI(t, p.env(), "", "-C", workspace(t, nil), "-sessions", t.TempDir(), "hi")
	require.Equal(t, exitOK, r.code, "stderr:\n%s", r.stderr)
	reqs := p.Requests()
	require.Len(t, reqs, 1)
	body := reqs[0].Body

	var req struct {
		Tools    []json.RawMessage `json:"tools"`
		Messages []json.RawMessage `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(body, &req))
	type sized struct {
		name string
		n    int
	}
	var all []sized
	total := 0
	for _, raw := range req.Tools {
		var tl struct {
			Function struct{ Name string } `json:"function"`
		}
		require.NoError(t, json.Unmarshal(raw, &tl))
		all = append(all, sized{tl.Function.Name, len(raw)})
		total += len(raw)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n })
	for _, s := range all {
		t.Logf("%-16s %5d B", s.name, s.n)
	}
	t.Logf("tools %d B in %d schemas; system %d B; request %d B", total, len(all), len(req.Messages[0]), len(body))
	require.NotEmpty(t, all, "the request offers tools")
	require.LessOrEqual(t, len(body), firstRequestCeiling, "the first request grew past its ceiling")
}
