package main

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden screens under testdata/golden")

// emulate plays what a program wrote to a terminal width columns wide
// and returns the text it leaves, scrollback included, each line
// without trailing blanks. It knows what the coder writes: printable
// text (one column a rune, wrapping at the right margin), carriage
// return, line feed, backspace, and the CSI sequences that move the
// cursor (A, B, C, D) and erase (K, J); colours and other sequences
// change nothing.
func emulate(raw string, width int) string {
	lines := [][]rune{{}}
	row, col := 0, 0
	at := func(r int) {
		for len(lines) <= r {
			lines = append(lines, []rune{})
		}
	}
	rs := []rune(raw)
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; {
		case c == '\r':
			col = 0
		case c == '\n':
			row++
			at(row)
		case c == '\b':
			col = max(col-1, 0)
		case c == 0x1b && i+1 < len(rs) && rs[i+1] == '[':
			j := i + 2
			for j < len(rs) && (rs[j] < 0x40 || rs[j] > 0x7e) {
				j++
			}
			if j == len(rs) {
				i = j
				continue
			}
			n, err := strconv.Atoi(string(rs[i+2 : j]))
			if err != nil || n == 0 {
				n = 1
			}
			switch rs[j] {
			case 'A':
				row = max(row-n, 0)
			case 'B':
				row += n
				at(row)
			case 'C':
				col = min(col+n, width-1)
			case 'D':
				col = max(col-n, 0)
			case 'K':
				if col < len(lines[row]) {
					lines[row] = lines[row][:col]
				}
			case 'J':
				if col < len(lines[row]) {
					lines[row] = lines[row][:col]
				}
				lines = lines[:row+1]
			}
			i = j
		case c < 0x20:
		default:
			if col >= width {
				row, col = row+1, 0
				at(row)
			}
			l := lines[row]
			for len(l) <= col {
				l = append(l, ' ')
			}
			l[col] = c
			lines[row] = l
			col++
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimRight(string(l), " ")
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n") + "\n"
}

// Things on a screen that change from run to run.
var (
	spinnerFrame = regexp.MustCompile(`[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] `)
	secondsText  = regexp.MustCompile(`\b\d+(?:\.\d|m\d\d)s\b`)
	sessionID    = regexp.MustCompile(`\b\d{8}-\d{6}-[0-9a-f]{6,}\b`)
)

// normalized is a screen with what changes from run to run replaced:
// the temporary directories by names, the spinner's frame, durations
// and session ids.
func normalized(screen string, dirs map[string]string) string {
	for dir, name := range dirs {
		screen = strings.ReplaceAll(screen, dir, name)
	}
	screen = spinnerFrame.ReplaceAllString(screen, "⠿ ")
	screen = secondsText.ReplaceAllString(screen, "N.Ns")
	return sessionID.ReplaceAllString(screen, "SESSION")
}

// golden compares got with the checked-in screen testdata/golden/name;
// go test -run ... -update rewrites it.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -run %s -update to write it", t.Name())
	assert.Equal(t, string(want), got)
}

func TestEmulate(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{"abc\r\nde", "abc\nde\n"},
		{"abc\rX", "Xbc\n"},
		{"spin\r\x1b[Kdone\r\n", "done\n"},
		{"one\r\ntwo\r\nthree\x1b[2A\r\x1b[Jnew", "new\n"},
		{"a\r\nb\x1b[1A\rX", "X\nb\n"},
		{"abcdef\x1b[3DX\x1b[K", "abcX\n"},
		{"\x1b[1;34mblue\x1b[0m", "blue\n"},
		{"12345678901", "1234567890\n1\n"},
		{"1234567890\r\nx", "1234567890\nx\n"},
	} {
		assert.Equal(t, c.want, emulate(c.raw, 10), "%q", c.raw)
	}
}
