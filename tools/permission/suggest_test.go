package permission

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSuggestNarrowAndSafe is the table of asked calls and the rule
// offered for "always": the narrowest that covers the call and reads
// clearly, none for interpreters, shells, wrappers and destructive
// families. Every rule offered allows the call it was offered for.
func TestSuggestNarrowAndSafe(t *testing.T) {
	ws := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(ws, "src", "pkg"), 0o755))
	p, err := New(Rules{})
	require.NoError(t, err)
	cases := []struct {
		tool string
		arg  string
		want string
	}{
		// Programs of subcommands: the subcommand is named.
		{"bash", "go test ./...", "Bash(go test:*)"},
		{"bash", "go build -o bin/x ./cmd/x", "Bash(go build:*)"},
		{"bash", "cargo build --release", "Bash(cargo build:*)"},
		{"bash", "npm run build --prod", "Bash(npm run build:*)"},
		{"bash", "npm install left-pad", "Bash(npm install:*)"},
		{"bash", "git commit -m 'fix the typo'", "Bash(git commit:*)"},
		{"bash", "git add main.go", "Bash(git add:*)"},
		{"bash", "make", "Bash(make)"},
		{"bash", "make test", "Bash(make test:*)"},
		{"bash", "go", "Bash(go)"},
		{"bash", "pytest -x tests", "Bash(pytest:*)"},
		{"bash", "mkdir -p build", "Bash(mkdir:*)"},
		// Subcommands that delete, publish or reset: nothing.
		{"bash", "git push --force origin main", ""},
		{"bash", "git reset --hard HEAD~3", ""},
		{"bash", "git clean -fdx", ""},
		{"bash", "git -C /tmp status", ""},
		{"bash", "docker rm -f db", ""},
		{"bash", "kubectl delete ns prod", ""},
		{"bash", "npm uninstall react", ""},
		{"bash", "npm exec -- evil", ""},
		{"bash", "npm run", ""},
		{"bash", "go -C /tmp test", ""},
		// Destructive families.
		{"bash", "rm -rf /", ""},
		{"bash", "rm build/out.txt", ""},
		{"bash", "dd if=/dev/zero of=disk.img", ""},
		{"bash", "chmod -R 777 .", ""},
		{"bash", "mv a b", ""},
		{"bash", "kill -9 1234", ""},
		// Interpreters, shells and programs that run their arguments.
		{"bash", "python3 -c 'import os; os.system(\"id\")'", ""},
		{"bash", "python3 script.py", ""},
		{"bash", "python3.12 -m http.server", ""},
		{"bash", "/usr/bin/python3 -c 1", ""},
		{"bash", "node -e 'process.exit(0)'", ""},
		{"bash", "perl -e 'print 1'", ""},
		{"bash", "ruby -e 'puts 1'", ""},
		{"bash", "awk 'BEGIN{system(\"id\")}'", ""},
		{"bash", "sed -i 's/a/b/' f", ""},
		{"bash", "bash -c 'go test'", ""},
		{"bash", "sh", ""},
		{"bash", "sh script.sh", ""},
		{"bash", "env FOO=1 go test", ""},
		{"bash", "xargs rm < list", ""},
		{"bash", "timeout 10 go test ./...", ""},
		{"bash", "sudo make install", ""},
		{"bash", "npx create-app x", ""},
		{"bash", "find . -name '*.go' -exec gofmt -w {} +", ""},
		{"bash", "eval x", ""},
		{"bash", "curl -o x https://example.com", ""},
		{"bash", "ssh host id", ""},
		// Lines of several commands, assignments, expansions.
		{"bash", "go test ./... && git push", ""},
		{"bash", "go vet ./... | tee log", ""},
		{"bash", "X=1 make", ""},
		{"bash", "$X y", ""},
		{"bash", "echo $(date) > f", ""},
		// File changes: the directory below the workspace, the file at
		// its root or outside it; nothing inside .git.
		{"write", "src/a.go", "Edit(src/**)"},
		{"edit", "src/pkg/b.go", "Edit(src/pkg/**)"},
		{"write", "main.go", "Edit(./main.go)"},
		{"write", "/etc/hosts", "Edit(//etc/hosts)"},
		{"write", ".git/hooks/pre-commit", ""},
		{"edit", ".git/config", ""},
		{"write", "src/weird(1).go", ""},
	}
	for _, c := range cases {
		args := map[string]any{"command": c.arg}
		if c.tool != "bash" {
			args = map[string]any{"file_path": c.arg, "old_string": "a", "new_string": "b", "content": "x"}
		}
		cl := call(ws, c.tool, args)
		d := p.Decide(cl)
		require.Equal(t, Ask, d.Outcome, "%s %s: %s", c.tool, c.arg, d.Reason)
		assert.Equal(t, c.want, d.Suggest, "%s %s", c.tool, c.arg)
		if d.Suggest == "" {
			continue
		}
		q, err := p.WithAllow(d.Suggest)
		require.NoError(t, err, d.Suggest)
		assert.Equal(t, Allow, q.Decide(cl).Outcome, "%s %s: the rule %s offered for it allows it", c.tool, c.arg, d.Suggest)
	}
}

// A rule is offered only when it would allow the call: a command whose
// redirection writes outside the workspace asks again under its own
// prefix rule, so no rule is offered.
func TestSuggestOnlyWhatCovers(t *testing.T) {
	ws := t.TempDir()
	p, err := New(Rules{})
	require.NoError(t, err)
	d := p.Decide(call(ws, "bash", map[string]any{"command": "go test ./... > " + filepath.Join(t.TempDir(), "out")}))
	require.Equal(t, Ask, d.Outcome)
	assert.Equal(t, "", d.Suggest)
	d = p.Decide(call(ws, "bash", map[string]any{"command": "go test ./... > out.log"}))
	require.Equal(t, Ask, d.Outcome)
	assert.Equal(t, "Bash(go test:*)", d.Suggest)
}
