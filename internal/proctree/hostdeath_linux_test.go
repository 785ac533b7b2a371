package proctree

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hostEnv names the environment variable that makes the test binary a
// host: it starts a contained sleep tagged with the variable's value,
// prints the containment's init pid, and waits to be killed.
const hostEnv = "HARNESS_PROCTREE_TEST_HOST"

func TestMain(m *testing.M) {
	if tag := os.Getenv(hostEnv); tag != "" {
		os.Exit(runHost(tag))
	}
	os.Exit(m.Run())
}

func runHost(tag string) int {
	c := Probe(Options{NoCgroup: true})
	p, err := Start(c, Command{Argv: []string{"/bin/sh", "-c", "sleep 300; : " + tag}, Dir: "/", Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		return 1
	}
	os.Stdout.WriteString(c.String() + " " + strconv.Itoa(p.init) + "\n")
	time.Sleep(time.Minute)
	return 0
}

// A host killed with SIGKILL leaves nothing of a command it contained in
// a PID namespace: the namespace's init dies with its host, and with it
// every process of the namespace.
func TestHostDeathEndsNamespace(t *testing.T) {
	if c := Probe(Options{NoCgroup: true}); !c.Namespace() {
		t.Skipf("no PID namespace here (%s)", c)
	}
	b := make([]byte, 8)
	rand.Read(b)
	tag := "hostdeath-" + hex.EncodeToString(b)
	host := exec.Command(os.Args[0], "-test.run", "^$")
	host.Env = append(os.Environ(), hostEnv+"="+tag)
	out, err := host.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, host.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	t.Logf("host: %s", line)
	deadline := time.Now().Add(time.Minute)
	for len(tagged(tag)) == 0 {
		require.True(t, time.Now().Before(deadline), "the contained sleep did not start")
		time.Sleep(10 * time.Millisecond)
	}
	require.NoError(t, host.Process.Kill())
	host.Wait()
	deadline = time.Now().Add(time.Minute)
	for len(tagged(tag)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes of the dead host's namespace still run: %v", tagged(tag))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
