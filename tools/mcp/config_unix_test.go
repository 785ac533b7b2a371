//go:build unix

package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
)

// TestLoadConfigHostileFiles: a .mcp.json that is a link to /dev/zero
// (which grew without end), a FIFO (which hung), a directory, a huge
// file or a cut-short one fails at once with an error naming the file.
func TestLoadConfigHostileFiles(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.json")
	require.NoError(t, os.Symlink("/dev/zero", zero))
	fifo := filepath.Join(dir, "fifo.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	huge := filepath.Join(dir, "huge.json")
	require.NoError(t, os.WriteFile(huge, []byte(`{"mcpServers": {}, "pad": "`+strings.Repeat("x", 2<<20)+`"}`), 0o644))
	cut := filepath.Join(dir, "cut.json")
	require.NoError(t, os.WriteFile(cut, []byte(`{"mcpServers": {"a": {"command": "x"}`), 0o644))
	for _, tc := range []struct {
		path string
		code harness.Code
		want string
	}{
		{zero, harness.CodeNotRegular, zero + " (a symbolic link to /dev/zero) is a character device, not a regular file"},
		{fifo, harness.CodeNotRegular, fifo + " is a named pipe (FIFO)"},
		{dir, harness.CodeNotRegular, dir + " is a directory"},
		{huge, harness.CodeTooLarge, huge + " is larger than the 1048576 bytes that are read of it"},
		{cut, codeInvalidConfig, "mcp: " + cut + ": the configuration is not valid JSON: incomplete JSON at byte 37"},
	} {
		done := make(chan error, 1)
		go func() { _, err := LoadConfig(tc.path); done <- err }()
		select {
		case err := <-done:
			assert.Equal(t, tc.code, harness.CodeOf(err), "%s: %v", tc.path, err)
			assert.ErrorContains(t, err, tc.want)
		case <-time.After(10 * time.Second):
			t.Fatalf("LoadConfig(%s) hangs", tc.path)
		}
	}
}
