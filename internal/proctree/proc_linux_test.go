package proctree

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/go-harness/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// statLine builds a /proc/PID/stat line with the given fields; the rest
// are zeros, up to field 52 (exit_code).
func statLine(pid int, comm string, state byte, ppid int, start uint64, exit int) string {
	f := make([]string, 50) // fields 3 to 52
	for i := range f {
		f[i] = "0"
	}
	f[0] = string([]byte{state})
	f[1] = fmt.Sprint(ppid)
	f[19] = fmt.Sprint(start)
	f[49] = fmt.Sprint(exit)
	return fmt.Sprintf("%d (%s) %s\n", pid, comm, strings.Join(f, " "))
}

func TestParseStat(t *testing.T) {
	self, err := os.ReadFile("/proc/self/stat")
	require.NoError(t, err)
	tests := []struct {
		name string
		in   string
		want procStat
		ok   bool
	}{
		{"plain", statLine(7, "sleep", 'S', 1, 42, 0), procStat{state: 'S', ppid: 1, start: 42, comm: "sleep"}, true},
		{"comm with parens and spaces", statLine(7, "a) (b c)", 'Z', 3, 9, 35584), procStat{state: 'Z', ppid: 3, start: 9, comm: "a) (b c)", exit: 35584}, true},
		{"empty comm", statLine(7, "", 'R', 0, 1, 0), procStat{state: 'R', start: 1}, true},
		{"no parens", "7 sleep S 1", procStat{}, false},
		{"too few fields", "7 (sleep) S 1 2 3", procStat{}, false},
		{"state of two letters", strings.Replace(statLine(7, "x", 'S', 1, 1, 0), ") S ", ") SS ", 1), procStat{}, false},
		{"closing paren first", ") 7 (", procStat{}, false},
		{"empty", "", procStat{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseStat([]byte(tt.in))
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
	st, ok := parseStat(self)
	require.True(t, ok, "%s", self)
	assert.True(t, st.live())
	assert.Equal(t, os.Getppid(), st.ppid)
}

func TestParseNSpid(t *testing.T) {
	for in, want := range map[string]int{
		"Name:\tsleep\nNSpid:\t4120\t3\nNSpgid:\t1\n": 3,
		"NSpid:\t4120\n":                     4120,
		"NSpid:\t4120\t2\t7\n":               7,
		"NSpid:\n":                           0,
		"NSpid:\t4120\tx\n":                  0,
		"NSpid:\t-3\n":                       0,
		"Name:\tsleep\n":                     0,
		"":                                   0,
		"NSpid:\t5\t6":                       6, // no final newline
		"XNSpid:\t5\n":                       0,
		"Pid:\t5\nNSpid:\t5\t9\nNSpid:\t1\n": 9,
	} {
		assert.Equal(t, want, parseNSpid(in), "%q", in)
	}
	assert.Equal(t, os.Getpid(), innerPID(os.Getpid()), "the test runs where its pid is its own")
}

func TestParseReport(t *testing.T) {
	tests := []struct {
		in   string
		pid  int
		own  bool
		fail bool
	}{
		{"4 own\n", 4, true, false},
		{"12 host\n", 12, false, false},
		{"4 own", 0, false, true},    // cut short
		{"1 own\n", 0, false, true},  // the init itself
		{"x own\n", 0, false, true},  // not a number
		{"4 mine\n", 0, false, true}, // unknown /proc view
		{"4 own extra\n", 0, false, true},
		{"\n", 0, false, true},
		{"-4 own\n", 0, false, true},
	}
	for _, tt := range tests {
		pid, own, err := parseReport(tt.in)
		if tt.fail {
			assert.Error(t, err, "%q", tt.in)
			continue
		}
		require.NoError(t, err, "%q", tt.in)
		assert.Equal(t, tt.pid, pid)
		assert.Equal(t, tt.own, own)
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add([]byte(statLine(7, "sleep", 'S', 1, 42, 0)))
	f.Add([]byte(statLine(7, "a) (b", 'Z', 1, 42, 139)))
	f.Add([]byte("1 (x) S"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, ok := parseStat(b)
		if !ok {
			require.Equal(t, procStat{}, st)
			return
		}
		// comm is what lies between the first '(' and the last ')'.
		s := string(b)
		require.Equal(t, s[strings.IndexByte(s, '(')+1:strings.LastIndexByte(s, ')')], st.comm)
		require.GreaterOrEqual(t, len(strings.Fields(s[strings.LastIndexByte(s, ')')+1:])), 20)
	})
}

func FuzzStatRoundTrip(f *testing.F) {
	f.Add(7, "sleep", byte('S'), 1, uint64(42), 0)
	f.Add(1, "a) (b c", byte('Z'), 0, uint64(1)<<40, 35584)
	f.Fuzz(func(t *testing.T, pid int, comm string, state byte, ppid int, start uint64, exit int) {
		if strings.IndexByte(" \n\t\r\v\f)", state) >= 0 {
			return // the kernel's states are letters
		}
		if strings.ContainsAny(comm, "\x00") {
			return
		}
		in := statLine(pid, comm, state, ppid, start, exit)
		st, ok := parseStat([]byte(in))
		require.True(t, ok, "%q", in)
		require.Equal(t, procStat{state: state, ppid: ppid, start: start, comm: comm, exit: exit}, st)
	})
}

func FuzzParseNSpid(f *testing.F) {
	f.Add("NSpid:\t4120\t3\n")
	f.Add("Name:\tx\nNSpid:\t1\n")
	f.Fuzz(func(t *testing.T, status string) {
		n := parseNSpid(status)
		require.GreaterOrEqual(t, n, 0)
		if n > 0 {
			require.Contains(t, status, "NSpid:")
			require.Contains(t, status, fmt.Sprint(n))
		}
	})
}

func FuzzParseReport(f *testing.F) {
	f.Add("4 own\n")
	f.Add("12 host\n")
	f.Add("4 own")
	f.Fuzz(func(t *testing.T, line string) {
		pid, own, err := parseReport(line)
		if err != nil {
			require.Zero(t, pid)
			return
		}
		require.Greater(t, pid, 1)
		view := "host"
		if own {
			view = "own"
		}
		again, againOwn, err := parseReport(fmt.Sprintf("%d %s\n", pid, view))
		require.NoError(t, err)
		require.Equal(t, pid, again)
		require.Equal(t, own, againOwn)
	})
}

// TestContainmentProbe checks what the probe finds on this machine and
// that the option forces the process tree.
func TestContainmentProbe(t *testing.T) {
	c := Probe(Options{})
	t.Logf("containment here: %s", c)
	if os.Geteuid() == 0 && c.Namespace() {
		assert.False(t, c.UserNamespace(), "root needs no user namespace")
		assert.NotEmpty(t, c.initContainment().mount)
	}
	if os.Geteuid() == 0 && c.Cgroup() {
		noCg := Probe(Options{NoCgroup: true})
		assert.False(t, noCg.Cgroup())
		assert.Equal(t, c.Namespace(), noCg.Namespace(), "the PID namespace probed for commands that are their own init is the one probed without cgroups")
	}
	if os.Geteuid() != 0 && c.Namespace() {
		assert.True(t, c.UserNamespace(), "without root, a PID namespace needs a user namespace")
	}
	forced := Probe(Options{NoNamespace: errors.New("forced")})
	assert.Equal(t, "process tree (no pid namespace: forced)", forced.String())
	assert.False(t, forced.Namespace())
	assert.Equal(t, "the limit of namespaces is reached or zero", reasonText(fmt.Errorf("fork/exec: %w", syscall.ENOSPC)))
	assert.Equal(t, "operation not permitted", reasonText(&os.PathError{Op: "fork/exec", Path: "/bin/bash", Err: syscall.EPERM}))
}

func TestStopOutcomeWording(t *testing.T) {
	ms := []Member{{PID: 12, Name: "sleep"}, {PID: 40, Name: "python3"}}
	tests := []struct {
		name    string
		out     Outcome
		partial bool
		want    string
	}{
		{"term", Outcome{Signal: "SIGTERM"}, false, "were sent SIGTERM and ended"},
		{"kill", Outcome{Signal: "SIGKILL"}, false, "were sent SIGTERM, did not all end in time and were killed with SIGKILL"},
		{"nothing left", Outcome{}, false, "had ended"},
		{"tree", Outcome{Signal: "SIGTERM"}, true, "were sent SIGTERM and ended (all that could be found)"},
		{"survivors", Outcome{Signal: "SIGKILL", Survivors: ms}, false,
			"were sent SIGTERM, did not all end in time and were killed with SIGKILL, but these still run: pid 12 (sleep), pid 40 (python3)"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.out.Ended(tt.partial), tt.name)
	}
	assert.NoError(t, Outcome{Signal: "SIGTERM"}.SurvivorsError("job job1"))
	err := Outcome{Signal: "SIGKILL", Survivors: ms}.SurvivorsError("job job1")
	require.ErrorIs(t, err, harness.CodeNotStopped)
	assert.Equal(t, "processes survived the stop: job job1 left running: pid 12 (sleep), pid 40 (python3)", err.Error())

	var many []Member
	for i := range 10 {
		many = append(many, Member{PID: 100 + i, Name: "x"})
	}
	assert.Equal(t, "pid 100 (x), pid 101 (x), pid 102 (x), pid 103 (x), pid 104 (x), pid 105 (x), pid 106 (x), pid 107 (x), and 2 more", SurvivorList(many))
}
