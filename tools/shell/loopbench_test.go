package shell

import (
	"context"
	"fmt"
	osexec "os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/agent/replay"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools/permission"
	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

// BenchmarkBashInLoop measures `bash true` as a host of the agent loop
// sees it (the coder's log among them): from the loop's ToolCallStart
// event to its ToolCallEnd, through the permission-free dispatch, the
// tool and a JSONL session log, unsandboxed and under Bubblewrap when
// bwrap works here, without and with a path policy (sandboxed-policy: the
// rules and workspace of BenchmarkSandboxStart). Each call is followed, in
// the same loop, by a fresh `bash -c true` under os/exec, so the ratio of
// medians comes from the same conditions; under the sandbox, by the
// sandbox's own bwrap command line for `bash -c true` run directly too.
// Each call's result is followed by a short pause (think), as a model's
// answer would follow it, before the baselines run. It reports the
// medians, the ratios of the medians and the slowest ratio of a call to
// the fresh bash
// after it.
func BenchmarkBashInLoop(b *testing.B) {
	bash := shelltest.BashPath(b)
	env := shelltest.Env(b)
	boxes := []struct {
		name string
		cfg  func(b *testing.B) Config
	}{
		{"unsandboxed", func(*testing.B) Config { return Config{} }},
		{"sandboxed", func(b *testing.B) Config {
			if _, err := osexec.LookPath("bwrap"); err != nil {
				b.Skip("bwrap is not installed")
			}
			sb, err := Bubblewrap(BubblewrapConfig{Workspace: env.Cwd})
			if err != nil {
				b.Skipf("no bubblewrap sandbox here: %v", err)
			}
			return Config{Sandbox: sb}
		}},
		// Under the path policy of BenchmarkSandboxStart, over a
		// workspace of a few hundred files: the mounts are planned from
		// what the rules deny.
		{"sandboxed-policy", func(b *testing.B) Config {
			if _, err := osexec.LookPath("bwrap"); err != nil {
				b.Skip("bwrap is not installed")
			}
			writeTree(b, env.Cwd)
			pol, err := permission.New(permission.Rules{Deny: []string{"Read(./secrets/**)", "Edit(./.git/**)", "Read(.env)"}})
			if err != nil {
				b.Fatal(err)
			}
			sb, err := Bubblewrap(BubblewrapConfig{Workspace: env.Cwd, Paths: pol.Paths(env.Cwd)})
			if err != nil {
				b.Skipf("no bubblewrap sandbox here: %v", err)
			}
			return Config{Sandbox: sb}
		}},
	}
	for _, box := range boxes {
		b.Run(box.name, func(b *testing.B) {
			cfg := box.cfg(b)
			var direct []string
			if cfg.Sandbox != nil {
				var err error
				if direct, err = cfg.Sandbox.Wrap([]string{bash, "--noprofile", "--norc", "-c", "true"}, env.Cwd); err != nil {
					b.Fatal(err)
				}
			}
			// One turn of b.N calls (and one call first, which pays for
			// the probes), so that the loop's start is not timed.
			steps := []replay.Response{}
			for i := range b.N + 1 {
				steps = append(steps, replay.Call(replay.ToolCall(fmt.Sprintf("c%d", i), "bash", map[string]any{"command": "true"})))
			}
			steps = append(steps, replay.Response{Text: "done"})
			store := session.NewJSONL(filepath.Join(b.TempDir(), "sessions"), session.StoreConfig{})
			loop, err := agent.New(agent.WithModel(replay.NewScripted(steps...)), agent.WithTools(Tools(cfg)...), agent.WithStores(agent.Stores{Sessions: store}))
			if err != nil {
				b.Fatal(err)
			}
			defer loop.Close()
			sess, err := loop.NewSession(context.Background(), session.Header{Cwd: env.Cwd})
			if err != nil {
				b.Fatal(err)
			}
			var inLoop, fresh, bwrap []time.Duration
			var started time.Time
			calls := 0
			b.ResetTimer()
			for ev, err := range sess.Run(context.Background(), "run true") {
				if err != nil {
					b.Fatal(err)
				}
				switch ev := ev.(type) {
				case *agent.ToolCallStart:
					started = time.Now()
				case *agent.ToolCallEnd:
					d := time.Since(started)
					if ev.Result.IsError {
						b.Fatalf("bash failed: %s", ev.Result.Text())
					}
					calls++
					// A model takes at least this long to answer, during
					// which the tools make the next command's start in
					// advance (a spare, under the sandbox); the scripted
					// one answers at once. The pause keeps that work out
					// of the baselines timed next.
					time.Sleep(think)
					if calls == 1 {
						continue // the probes' call
					}
					t0 := time.Now()
					if err := osexec.Command(bash, "--noprofile", "--norc", "-c", "true").Run(); err != nil {
						b.Fatal(err)
					}
					fresh = append(fresh, time.Since(t0))
					inLoop = append(inLoop, d)
					if direct != nil {
						t0 := time.Now()
						if err := osexec.Command(direct[0], direct[1:]...).Run(); err != nil {
							b.Fatal(err)
						}
						bwrap = append(bwrap, time.Since(t0))
					}
				}
			}
			b.StopTimer()
			if len(inLoop) != b.N {
				b.Fatalf("%d calls ran, want %d", len(inLoop), b.N)
			}
			worst := 0.0
			for i := range inLoop {
				worst = max(worst, float64(inLoop[i])/float64(fresh[i]))
			}
			mi, mf := median(inLoop), median(fresh)
			b.ReportMetric(float64(mi.Nanoseconds()), "loop-median-ns")
			b.ReportMetric(float64(mf.Nanoseconds()), "fresh-bash-median-ns")
			b.ReportMetric(float64(mi)/float64(mf), "loop/fresh")
			b.ReportMetric(worst, "worst-loop/fresh")
			if direct != nil {
				mb := median(bwrap)
				b.ReportMetric(float64(mb.Nanoseconds()), "bwrap-direct-median-ns")
				b.ReportMetric(float64(mb)/float64(mf), "bwrap-direct/fresh")
				b.ReportMetric(float64(mi)/float64(mb), "loop/bwrap-direct")
			}
		})
	}
}

// think is the pause after each call in BenchmarkBashInLoop: far less
// than a model's answer takes.
const think = 20 * time.Millisecond

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
