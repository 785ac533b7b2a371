package shell

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

// liveSink collects a call's progress reports.
type liveSink struct {
	mu  sync.Mutex
	out strings.Builder
	n   int
}

func (s *liveSink) report(p tools.Progress) {
	s.mu.Lock()
	s.out.WriteString(p.Output)
	s.n++
	s.mu.Unlock()
}

func (s *liveSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.out.String()
}

// bash and shell_send report a command's stdout and stderr as they
// arrive; the result is what it always was.
func TestLiveOutputReported(t *testing.T) {
	leakcheck.Check(t)
	env := shelltest.Env(t)
	runLive := func(tool tools.Tool, args map[string]any) (string, string) {
		raw, err := json.Marshal(args)
		require.NoError(t, err)
		sink := &liveSink{}
		call := &tools.Call{ID: "live", Name: tool.Spec().Name, Arguments: string(raw), Spec: tool.Spec(), Env: env, OnProgress: sink.report}
		res, err := tool.Execute(context.Background(), call)
		return sink.String(), toolexec.Normalize(call, res, err).Text()
	}
	live, text := runLive(Bash(Config{}), map[string]any{"command": "echo one; echo two >&2; echo three"})
	// Two pipes: the order between stdout and stderr is the reader's.
	assert.ElementsMatch(t, []string{"one", "two", "three", ""}, strings.Split(live, "\n"), "stdout and stderr both")
	assert.Less(t, strings.Index(live, "one"), strings.Index(live, "three"), "each stream in its order")
	assert.Contains(t, text, "three")

	k := shelltest.NewShells(t, env, Tools(Config{}))
	id, _ := k.OpenShell(nil)
	live, text = runLive(k.Send, map[string]any{"session_id": id, "command": "for i in 1 2 3; do echo s$i; done"})
	assert.Equal(t, "s1\ns2\ns3\n", live, "a persistent shell's command reports its output, not the harness's records")
	assert.Contains(t, text, "s3")
	shelltest.Run(t, context.Background(), k.Close, env, map[string]any{"session_id": id})
}
