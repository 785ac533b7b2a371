package shell

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/tools/permission"
	"github.com/go-harness/harness/tools/shell/internal/shelltest"
)

// TestEnvironmentWithoutSandbox: an unconfined command does not get the
// host's credentials, unless the host passes them by name, and the log
// names (never shows) what was withheld.
func TestEnvironmentWithoutSandbox(t *testing.T) {
	t.Setenv("DEEPSEEK_API_KEY", "sk-hostsecret")
	t.Setenv("MY_SERVICE_TOKEN", "tok-hostsecret")
	t.Setenv("DB_PASSWORD", "pw-hostsecret")
	t.Setenv("HARNESS_PLAIN", "plain-value")
	env := shelltest.Env(t)
	cmd := `echo "[$DEEPSEEK_API_KEY][$MY_SERVICE_TOKEN][$DB_PASSWORD][$HARNESS_PLAIN]"; env | grep -c hostsecret`
	res := shelltest.Run(t, context.Background(), Bash(Config{}), env, map[string]any{"command": cmd})
	assert.Contains(t, res.Text(), "[][][][plain-value]\n0\n")
	rec := shelltest.RecordsOf(t, env).All()
	require.NotEmpty(t, rec)
	data := string(rec[0].Data)
	assert.Contains(t, data, "DEEPSEEK_API_KEY")
	assert.NotContains(t, data, "hostsecret", "names only")
	assert.Contains(t, Bash(Config{}).Spec().Description, "without variables that look like credentials")

	env = shelltest.Env(t)
	res = shelltest.Run(t, context.Background(), Bash(Config{PassEnv: []string{"DEEPSEEK_API_KEY", "MY_*"}}), env, map[string]any{"command": cmd})
	assert.Contains(t, res.Text(), "[sk-hostsecret][tok-hostsecret][][plain-value]\n2\n", "the host passes what it names")

	tool := Bash(Config{PassEnv: []string{"BAD NAME"}})
	res = shelltest.Run(t, context.Background(), tool, env, map[string]any{"command": "true"})
	assert.True(t, res.IsError, "an invalid PassEnv entry is refused")
}

func TestEnvironmentUnderSandbox(t *testing.T) {
	t.Setenv("DEEPSEEK_API_KEY", "sk-hostsecret")
	t.Setenv("HARNESS_PLAIN", "plain-value")
	t.Setenv("GOFLAGS", "-mod=mod")
	env := shelltest.Env(t)
	cmd := `echo "[$DEEPSEEK_API_KEY][$HARNESS_PLAIN][$GOFLAGS][${PATH:+path}][$HOME]"`
	res := shelltest.Run(t, context.Background(), Bash(Config{Sandbox: &shelltest.EnvSandbox{}}), env, map[string]any{"command": cmd})
	assert.Contains(t, res.Text(), "[][][][path][", "under any sandbox only the allow-list reaches commands")
	res = shelltest.Run(t, context.Background(), Bash(Config{Sandbox: &shelltest.EnvSandbox{}, PassEnv: []string{"GO*"}, Env: []string{"SET=by-host"}}), env,
		map[string]any{"command": `echo "[$GOFLAGS][$SET][$DEEPSEEK_API_KEY]"`})
	assert.Contains(t, res.Text(), "[-mod=mod][by-host][]")
}

// TestSandboxMasksAtEachCommand: a one-shot command gets masks made when
// it starts, so a file that comes to match a rule is masked from the next
// command; a persistent shell keeps the masks it got when it opened.
func TestSandboxMasksAtEachCommand(t *testing.T) {
	needBwrap(t)
	env := shelltest.Env(t)
	ws := env.Cwd
	pol, err := permission.New(permission.Rules{Deny: []string{"Read(.env)", "Read(./secrets/**)"}})
	require.NoError(t, err)
	sb, err := Bubblewrap(BubblewrapConfig{Workspace: ws, Paths: pol.Paths(ws)})
	require.NoError(t, err)
	tool := Bash(Config{Sandbox: sb})
	k := shelltest.NewShells(t, env, Tools(Config{Sandbox: sb}))
	id, _ := k.OpenShell(nil)

	require.NoError(t, os.MkdirAll(filepath.Join(ws, "app/secrets"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "app/.env"), []byte("TOKEN=later\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "secrets"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "secrets/k"), []byte("LATER-SECRET\n"), 0o644))
	res := shelltest.Run(t, context.Background(), tool, env, map[string]any{"command": "cat app/.env secrets/k; echo end"})
	assert.NotContains(t, res.Text(), "later")
	assert.NotContains(t, res.Text(), "LATER-SECRET")
	assert.Contains(t, res.Text(), "end")

	res = k.Do(id, "cat app/.env secrets/k")
	assert.Contains(t, res.Text(), "TOKEN=later", "a shell keeps the masks it opened with; files made later are not masked in it")
	assert.True(t, strings.Contains(sb.Describe(), "paths the permission rules deny"))
}

// TestSandboxWorkspaceIsHidden: a workspace that is itself a directory
// the sandbox hides by default (a home directory) stays visible and
// writable.
func TestSandboxWorkspaceIsHidden(t *testing.T) {
	needBwrap(t)
	env := shelltest.Env(t)
	sb, err := Bubblewrap(BubblewrapConfig{Workspace: env.Cwd})
	require.NoError(t, err)
	bw := sb.(*bubblewrap)
	bw.hidden = append(bw.hidden, env.Cwd, filepath.Join(env.Cwd, "inner"))
	require.NoError(t, os.Mkdir(filepath.Join(env.Cwd, "inner"), 0o755))
	res := shelltest.Run(t, context.Background(), Bash(Config{Sandbox: sb}), env, map[string]any{"command": "echo ok > inner/f && cat inner/f"})
	assert.Contains(t, res.Text(), "ok\n", res.Text())
}

// TestSandboxPlantedDeniedLink: a link with a denied name that points at
// the root or above the workspace does not mask them (which would hide
// everything); one that points at a file masks the file.
func TestSandboxPlantedDeniedLink(t *testing.T) {
	needBwrap(t)
	env := shelltest.Env(t)
	ws := env.Cwd
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "a", "b"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(ws, "real.txt"), []byte("REAL\n"), 0o644))
	require.NoError(t, os.Symlink("/", filepath.Join(ws, "a", ".env")))
	require.NoError(t, os.Symlink(filepath.Dir(ws), filepath.Join(ws, "a", "b", ".env")))
	require.NoError(t, os.Symlink("../real.txt", filepath.Join(ws, "a", "c.pem")))
	pol, err := permission.New(permission.Rules{Deny: []string{"Read(.env)", "Read(*.pem)"}})
	require.NoError(t, err)
	sb, err := Bubblewrap(BubblewrapConfig{Workspace: ws, Paths: pol.Paths(ws)})
	require.NoError(t, err)
	res := shelltest.Run(t, context.Background(), Bash(Config{Sandbox: sb}), env, map[string]any{"command": "ls / >/dev/null && echo root-ok; cat real.txt; echo end"})
	assert.Contains(t, res.Text(), "root-ok\n", res.Text())
	assert.NotContains(t, res.Text(), "REAL", "the target of a denied link is masked")
	assert.Contains(t, res.Text(), "end")
}
