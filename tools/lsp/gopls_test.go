package lsp

import (
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/internal/leakcheck"
)

// goplsConfig gives gopls time to spare on a loaded machine: the tests
// assert what it reports, not how fast.
var goplsConfig = Config{Wait: 60 * time.Second, StartWait: 60 * time.Second}

// goModule is a small Go module with one pre-existing error, in a file
// the tests never touch.
var goModule = map[string]string{
	"go.mod": "module example.com/m\n\ngo 1.22\n",
	"main.go": `package main

import "fmt"

func main() {
	fmt.Println(greet("x"))
}
`,
	"greet.go": `package main

func greet(s string) string { return "hi " + s }
`,
	"broken.go": `package main

var unrelated int = "pre-existing"
`,
}

func TestGoplsDiagnostics(t *testing.T) {
	requireGopls(t)
	leakcheck.Check(t)
	w := newWorkspace(t, goModule)
	m := newManager(t, goplsConfig)
	w.use(m.Middleware())

	res := w.read("main.go")
	require.False(t, res.IsError, res.Text())
	assert.Empty(t, Note(res), "a read gets no diagnostics")

	// An edit that introduces one error gets exactly that error, and not
	// the pre-existing one in broken.go.
	res = w.edit("main.go", `greet("x")`, `greet(undefinedName)`)
	require.False(t, res.IsError, res.Text())
	assert.Equal(t, "Diagnostics (gopls): 1 new problem after this change:\n"+
		"main.go:6:20: error: undefined: undefinedName (compiler UndeclaredName)", Note(res))
	assert.Contains(t, res.Text(), "main.go", "the edit's own message is kept")

	// Fixing it: nothing new, and the error is gone.
	res = w.edit("main.go", `greet(undefinedName)`, `greet("y")`)
	assert.Equal(t, "Diagnostics (gopls): no new problems after this change. (1 earlier problem is gone.)", Note(res))

	// A change in one file that breaks another: the other file's new
	// error is reported.
	w.read("greet.go")
	res = w.edit("greet.go", "func greet(", "func greeting(")
	assert.Equal(t, "Diagnostics (gopls): 1 new problem after this change:\n"+
		"main.go:6:14: error: undefined: greet (compiler UndeclaredName)", Note(res))

	// A new file with two errors, written whole.
	res = w.write("extra.go", "package main\n\nfunc extra() int {\n\treturn \"s\"\n}\n\nvar _ = missing\n")
	require.False(t, res.IsError, res.Text())
	note := Note(res)
	assert.True(t, strings.HasPrefix(note, "Diagnostics (gopls): 2 new problems after this change:\n"), note)
	assert.Contains(t, note, "extra.go:4:9: error: cannot use \"s\" (untyped string constant) as int value in return statement (compiler IncompatibleAssign)")
	assert.Contains(t, note, "extra.go:7:9: error: undefined: missing (compiler UndeclaredName)")
	assert.NotContains(t, note, "pre-existing")
	assert.NotContains(t, note, "broken.go")
}

func TestGoplsCrashRestart(t *testing.T) {
	requireGopls(t)
	w := newWorkspace(t, goModule)
	m := newManager(t, goplsConfig)
	w.use(m.Middleware())
	w.read("main.go")
	res := w.edit("main.go", `greet("x")`, `greet(1)`)
	require.Contains(t, Note(res), "1 new problem")

	pid := serverPID(t, m, "gopls")
	require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
	waitDead(t, m, "gopls")

	res = w.edit("main.go", `greet(1)`, `greet(undefinedAfterCrash)`)
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, Note(res), "main.go:6:20: error: undefined: undefinedAfterCrash", "a new server checked the change")
	assert.NotEqual(t, pid, serverPID(t, m, "gopls"))
}

func TestGoplsClosedStopsServer(t *testing.T) {
	requireGopls(t)
	leakcheck.Check(t)
	w := newWorkspace(t, goModule)
	m, err := New(goplsConfig)
	require.NoError(t, err)
	w.use(m.Middleware())
	w.read("main.go")
	w.edit("main.go", `greet("x")`, `greet("z")`)
	pid := serverPID(t, m, "gopls")
	require.NoError(t, m.Close())
	assert.ErrorIs(t, syscall.Kill(pid, 0), syscall.ESRCH, "the server is gone after Close")
	// Calls after Close pass through.
	res := w.edit("main.go", `greet("z")`, `greet(oops)`)
	require.False(t, res.IsError)
	assert.Empty(t, Note(res))
}

// TestGoplsWarmOnRead: a read starts the server and opens the file, so
// the first edit finds it loaded.
func TestGoplsWarmOnRead(t *testing.T) {
	requireGopls(t)
	w := newWorkspace(t, goModule)
	m := newManager(t, goplsConfig)
	w.use(m.Middleware())
	w.read("main.go")
	m.wg.Wait() // the warm-up in the background
	e := m.entries[entryKey{"gopls", w.dir}]
	require.NotNil(t, e)
	require.NoError(t, e.failed)
	require.NotNil(t, e.c, "the read started gopls")
	e.c.mu.Lock()
	_, open := e.c.docs[filepath.Join(w.dir, "main.go")]
	e.c.mu.Unlock()
	assert.True(t, open, "and opened the file it showed")
}

func serverPIDOrZero(m *Manager, name string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, e := range m.entries {
		if k.server != name {
			continue
		}
		select {
		case e.sem <- struct{}{}:
			defer e.unlock()
		default:
			return 0
		}
		if e.c != nil {
			return e.c.proc.Main()
		}
	}
	return 0
}

func serverPID(t *testing.T, m *Manager, name string) int {
	t.Helper()
	pid := serverPIDOrZero(m, name)
	require.NotZero(t, pid, "no %s running", name)
	return pid
}

// waitDead waits until the manager's connection to the server has
// seen it end.
func waitDead(t *testing.T, m *Manager, name string) {
	t.Helper()
	m.mu.Lock()
	var c *client
	for k, e := range m.entries {
		if k.server == name {
			c = e.c
		}
	}
	m.mu.Unlock()
	require.NotNil(t, c)
	select {
	case <-c.conn.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the connection did not see the server end")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestGoplsOtherPackage: a change that breaks a package importing the
// changed one is reported from what gopls publishes for it.
func TestGoplsOtherPackage(t *testing.T) {
	requireGopls(t)
	w := newWorkspace(t, map[string]string{
		"go.mod":     "module example.com/m\n\ngo 1.22\n",
		"lib/lib.go": "package lib\n\n// Hello greets.\nfunc Hello() string { return \"hello\" }\n",
		"main.go":    "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/m/lib\"\n)\n\nfunc main() { fmt.Println(lib.Hello()) }\n",
	})
	m := newManager(t, goplsConfig)
	w.use(m.Middleware())
	w.read("lib/lib.go")
	res := w.edit("lib/lib.go", "func Hello()", "func Greet()")
	require.False(t, res.IsError, res.Text())
	assert.Equal(t, "Diagnostics (gopls): 1 new problem after this change:\n"+
		"main.go:9:31: error: undefined: lib.Hello (compiler UndeclaredImportedName)", Note(res))
}
