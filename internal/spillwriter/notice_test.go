package spillwriter_test

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

type notice struct {
	omitted, total      int
	first, last, nlines int
	locator             string
	offset, limit       int
}

func parseNotice(t *testing.T, text string) notice {
	t.Helper()
	m := omittedRE.FindStringSubmatch(text)
	require.NotNil(t, m, "notice with the omitted byte count in %q", text)
	r := readRE.FindStringSubmatch(text)
	require.NotNil(t, r, "read hint in %q", text)
	atoi := func(s string) int { n, err := strconv.Atoi(s); require.NoError(t, err); return n }
	return notice{atoi(m[1]), atoi(m[2]), atoi(m[3]), atoi(m[4]), atoi(m[5]), r[1], atoi(r[2]), atoi(r[3])}
}

// readLines emulates the read tool on a saved output: lines offset to
// offset+limit-1, 1-based.
func readLines(t *testing.T, s tools.OutputStore, locator string, offset, limit int) string {
	t.Helper()
	all := strings.SplitAfter(string(spilltest.ReadAll(t, s, locator)), "\n")
	require.LessOrEqual(t, offset+limit-1, len(all))
	return strings.Join(all[offset-1:offset-1+limit], "")
}
