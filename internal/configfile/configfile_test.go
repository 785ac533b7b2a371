package configfile_test

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/configfile"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	require.NoError(t, os.WriteFile(good, []byte(`{"a":1}`), 0o644))
	data, err := configfile.Read(good)
	require.NoError(t, err)
	assert.Equal(t, `{"a":1}`, string(data))

	link := filepath.Join(dir, "link.json")
	require.NoError(t, os.Symlink(good, link))
	data, err = configfile.Read(link)
	require.NoError(t, err, "a link to a regular file is fine")
	assert.Equal(t, `{"a":1}`, string(data))

	big := filepath.Join(dir, "big.json")
	require.NoError(t, os.WriteFile(big, make([]byte, configfile.MaxBytes+1), 0o644))
	_, err = configfile.Read(big)
	assert.ErrorIs(t, err, harness.CodeTooLarge)
	assert.ErrorContains(t, err, big+" is larger than the 1048576 bytes that are read of it")
	data, err = configfile.ReadLimit(good, 7)
	require.NoError(t, err)
	assert.Len(t, data, 7)
	_, err = configfile.ReadLimit(good, 6)
	assert.ErrorIs(t, err, harness.CodeTooLarge)

	_, err = configfile.Read(filepath.Join(dir, "missing.json"))
	assert.ErrorIs(t, err, fs.ErrNotExist)
	assert.ErrorContains(t, err, "missing.json: no such file or directory")
}

// TestNotRegular: a directory, a link to /dev/zero and a FIFO fail at
// once, naming the file; the FIFO, which nothing writes, does not hang.
func TestNotRegular(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.json")
	require.NoError(t, os.Symlink("/dev/zero", zero))
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	for _, tc := range []struct{ path, want string }{
		{dir, dir + " is a directory, not a regular file"},
		{zero, zero + " (a symbolic link to /dev/zero) is a character device"},
		{fifo, fifo + " is a named pipe (FIFO)"},
	} {
		done := make(chan error, 1)
		go func() { _, err := configfile.Read(tc.path); done <- err }()
		select {
		case err := <-done:
			assert.ErrorIs(t, err, harness.CodeNotRegular)
			assert.ErrorContains(t, err, tc.want)
		case <-time.After(10 * time.Second):
			t.Fatalf("reading %s hangs", tc.path)
		}
	}
}

func TestCheckJSON(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"mcpServers": {"a": {"command": "x"}}`, "incomplete JSON at byte 38: the text ends before its value does"},
		{``, "incomplete JSON at byte 0: the file is empty"},
		{"  \n", "incomplete JSON at byte 3: the file is empty"},
		{`{"a": [1, 2`, "incomplete JSON at byte 11"},
		{"{\n  \"a\": 1,\n  \"b\": x\n}", "invalid JSON at line 3, column 8 (byte 20): invalid character 'x' looking for beginning of value"},
		{`{"a":1} {}`, "invalid JSON at line 1, column 9 (byte 9): invalid character '{' after top-level value"},
	} {
		err := configfile.CheckJSON([]byte(tc.in))
		require.Error(t, err, "%q", tc.in)
		assert.Contains(t, err.Error(), tc.want, "%q", tc.in)
	}
	assert.NoError(t, configfile.CheckJSON([]byte(` {"a": [1, "x"]} `)))
	other := errors.New("other")
	assert.Equal(t, other, configfile.DescribeJSON(nil, other))
}

func FuzzCheckJSON(f *testing.F) {
	f.Add(`{"mcpServers": {`)
	f.Add(`{"a":1}`)
	f.Add("\n\n{\"a\": x}")
	f.Add(``)
	f.Fuzz(func(t *testing.T, s string) {
		err := configfile.CheckJSON([]byte(s))
		if (err == nil) != json.Valid([]byte(s)) {
			t.Fatalf("CheckJSON(%q) = %v, json.Valid disagrees", s, err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "incomplete JSON at byte ") && !strings.HasPrefix(err.Error(), "invalid JSON at line ") {
			t.Fatalf("an error that does not say where: %v", err)
		}
	})
}
