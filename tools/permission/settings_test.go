package permission

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
)

// ReadSettings reads a settings file's permissions, and refuses files
// that are not regular or not JSON, naming the file.
func TestReadSettings(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		return p
	}

	good := write("good.json", `{"permissions":{"allow":["Bash(go test:*)"],"deny":["Read(.env)"],"defaultMode":"plan"}}`)
	r, err := ReadSettings(good)
	require.NoError(t, err)
	assert.Equal(t, Rules{Allow: []string{"Bash(go test:*)"}, Deny: []string{"Read(.env)"}, Mode: ModePlan}, r)

	_, err = ReadSettings(filepath.Join(dir, "missing.json"))
	assert.ErrorIs(t, err, fs.ErrNotExist)

	_, err = ReadSettings(dir)
	assert.ErrorIs(t, err, harness.CodeNotRegular)
	assert.ErrorContains(t, err, dir+" is a directory")

	big := write("big.json", `{"x":"`+strings.Repeat("a", 1<<20)+`"}`)
	_, err = ReadSettings(big)
	assert.ErrorIs(t, err, harness.CodeTooLarge)
	assert.ErrorContains(t, err, big)

	cut := write("cut.json", `{"permissions": {"allow": ["Read"]`)
	_, err = ReadSettings(cut)
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	assert.ErrorContains(t, err, cut+": incomplete JSON at byte 34")

	badRule := write("rule.json", `{"permissions":{"allow":["Bash("]}}`)
	_, err = ReadSettings(badRule)
	assert.ErrorIs(t, err, harness.CodeInvalidOption)
	assert.ErrorContains(t, err, badRule+": ")
	assert.Equal(t, 1, strings.Count(err.Error(), "permission: "), "the prefix once: %v", err)
}
