package shell

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/tools/permission"
	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

// BenchmarkBwrapFlags prices bwrap's options: it runs `bash -c true`
// under the sandbox's own bwrap command line (as a spare runs it: the
// limits set outside), under that line with one group of options taken
// out or added, and bare, all interleaved in one loop (the order reversed
// every other round), and reports each variant's median as a ratio to
// bare bash ("<variant>/bare") and its difference from the full line in
// nanoseconds ("<variant>-delta-ns").
func BenchmarkBwrapFlags(b *testing.B) {
	needBwrap(b)
	env := shelltest.Env(b)
	ws := env.Cwd
	writeTree(b, ws)
	pol, err := permission.New(permission.Rules{Deny: []string{"Read(./secrets/**)", "Edit(./.git/**)", "Read(.env)"}})
	require.NoError(b, err)
	sb, err := Bubblewrap(BubblewrapConfig{Workspace: ws, Paths: pol.Paths(ws)})
	require.NoError(b, err)
	bw := sb.(*bubblewrap)
	bash, err := exec.LookPath("bash")
	require.NoError(b, err)
	cmd := []string{bash, "--noprofile", "--norc", "-c", "true"}
	full, err := bw.spareBody(cmd, ws, false)
	require.NoError(b, err)
	plan, err := bw.plan(b.Context())
	require.NoError(b, err)

	// without returns full without the given runs of arguments.
	without := func(groups ...[]string) []string {
		out := slices.Clone(full)
		for _, g := range groups {
			for i := 0; i+len(g) <= len(out); i++ {
				if slices.Equal(out[i:i+len(g)], g) {
					out = slices.Delete(out, i, i+len(g))
					break
				}
			}
		}
		return out
	}
	var hidden, masks [][]string
	for _, h := range bw.hiddenNow() {
		hidden = append(hidden, []string{"--size", strconv.Itoa(hiddenSize), "--tmpfs", h}, []string{"--remount-ro", h})
	}
	for _, p := range plan.pins {
		masks = append(masks, []string{"--bind", p, p})
	}
	for _, p := range plan.readOnly {
		masks = append(masks, []string{"--ro-bind", p, p})
	}
	for _, p := range plan.maskDirs {
		masks = append(masks, []string{"--ro-bind", bw.emptyDir, p})
	}
	for _, p := range plan.maskFiles {
		masks = append(masks, []string{"--ro-bind", bw.empty, p})
	}
	size := strconv.FormatInt(bw.tmpSize, 10)
	dash := slices.Index(full, "--")
	more := slices.Clone(full)
	for range 20 {
		more = slices.Insert(more, dash, "--ro-bind", bw.empty, ws+"/pkg/0/sub/0.go")
	}
	withLimits, err := bw.body(cmd, ws, true)
	require.NoError(b, err)
	pidNS := &syscall.SysProcAttr{Setsid: true, Cloneflags: syscall.CLONE_NEWPID, Pdeathsig: syscall.SIGKILL}

	type variant struct {
		name string
		argv []string
		attr *syscall.SysProcAttr
	}
	vs := []variant{
		{name: "bare", argv: cmd},
		{name: "full", argv: full},
		{name: "no-net-ns", argv: without([]string{"--unshare-net"})},
		{name: "no-ipc-uts-cgroup-ns", argv: without([]string{"--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try"})},
		{name: "no-proc", argv: without([]string{"--proc", "/proc"})},
		{name: "no-dev", argv: without([]string{"--dev", "/dev"}, []string{"--remount-ro", "/dev"})},
		{name: "no-tmpfs", argv: without([]string{"--size", size, "--tmpfs", "/dev/shm"}, []string{"--size", size, "--tmpfs", "/tmp", "--dir", privateHome})},
		{name: "no-hidden", argv: without(hidden...)},
		{name: "no-masks", argv: without(masks...)},
		{name: "20-more-masks", argv: more},
		{name: "no-die-with-parent", argv: without([]string{"--die-with-parent"})},
		{name: "no-disable-userns", argv: without([]string{"--disable-userns"})},
		{name: "as-pid-1", argv: slices.Insert(slices.Clone(full), 1, "--as-pid-1")},
		{name: "new-session", argv: slices.Insert(slices.Clone(full), 1, "--new-session")},
		{name: "prlimit-inside", argv: withLimits},
		{name: "limit-shell-in-pid-ns", argv: append(bw.limitShell(Config{}.resolve().Containment(), limitScript+`exec "$@"`), full...), attr: pidNS},
	}
	if os.Geteuid() == 0 {
		// As root bwrap needs no user namespace: what one costs.
		vs = append(vs, variant{name: "no-user-ns", argv: without([]string{"--unshare-user", "--disable-userns", "--cap-drop", "ALL"})})
	}
	times := make([][]time.Duration, len(vs))
	for i := 0; b.Loop(); i++ {
		for k := range vs {
			j := k
			if i%2 == 1 {
				j = len(vs) - 1 - k
			}
			c := exec.Command(vs[j].argv[0], vs[j].argv[1:]...)
			if a := vs[j].attr; a != nil {
				attr := *a
				c.SysProcAttr = &attr
			}
			t0 := time.Now()
			if out, err := c.CombinedOutput(); err != nil {
				b.Fatalf("%s: %v: %s", vs[j].name, err, out)
			}
			times[j] = append(times[j], time.Since(t0))
		}
	}
	bare, whole := median(times[0]), median(times[1])
	for i, v := range vs[1:] {
		m := median(times[i+1])
		b.ReportMetric(float64(m)/float64(bare), v.name+"/bare")
		if i > 0 {
			b.ReportMetric(float64(m-whole), v.name+"-delta-ns")
		}
	}
	b.ReportMetric(float64(bare), "bare-ns")
}
