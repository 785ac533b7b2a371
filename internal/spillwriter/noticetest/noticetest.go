// Package noticetest reads back, in tests, the notice a spilled output
// leaves in the model's view: how much was omitted and the read call that
// fetches it. The spill middleware's and the writer's tests share it.
package noticetest

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/spill/spilltest"
	"github.com/go-harness/harness/tools"
)

var (
	omittedRE = regexp.MustCompile(`(\d+) of (\d+) bytes omitted here \(lines (\d+)-(\d+) of (\d+)\)`)
	readRE    = regexp.MustCompile(`call read with file_path "(spill://[^"]+)", offset (\d+) and limit (\d+)`)
)

// Notice is what a spill notice says.
type Notice struct {
	Omitted, Total     int // bytes left out of the view, and in all
	First, Last, Lines int // the lines left out, and the output's line count
	Locator            string
	Offset, Limit      int // the read call's window
}

// Parse finds the notice in text and fails the test when it is not there.
func Parse(t *testing.T, text string) Notice {
	t.Helper()
	m := omittedRE.FindStringSubmatch(text)
	require.NotNil(t, m, "notice with the omitted byte count in %q", text)
	r := readRE.FindStringSubmatch(text)
	require.NotNil(t, r, "read hint in %q", text)
	atoi := func(s string) int { n, err := strconv.Atoi(s); require.NoError(t, err); return n }
	return Notice{atoi(m[1]), atoi(m[2]), atoi(m[3]), atoi(m[4]), atoi(m[5]), r[1], atoi(r[2]), atoi(r[3])}
}

// ReadLines does what the read tool does with the notice's call: lines
// offset to offset+limit-1 (1-based) of the saved output.
func ReadLines(t *testing.T, s tools.OutputStore, locator string, offset, limit int) string {
	t.Helper()
	all := strings.SplitAfter(string(spilltest.ReadAll(t, s, locator)), "\n")
	require.LessOrEqual(t, offset+limit-1, len(all))
	return strings.Join(all[offset-1:offset-1+limit], "")
}
