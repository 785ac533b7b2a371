package persistent

import (
	"bytes"
	"fmt"
	osexec "os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const testNonce = "0123456789abcdef0123456789abcdef"

func markerBytes(nonce, body string) []byte {
	return []byte("\x1e" + nonce + " " + body + "\x1e" + nonce + "\n")
}

// scanAll feeds data to a scanner in pieces split at cuts and returns
// the output, the body of the first record and the bytes after it.
func scanAll(t testing.TB, nonce string, data []byte, cuts []int) (out []byte, body []byte, found bool, rest []byte, err error) {
	s := newScanner(nonce)
	prev := 0
	cuts = append(cuts, len(data))
	for _, c := range cuts {
		if c < prev || c > len(data) {
			continue
		}
		piece := append([]byte(nil), data[prev:c]...)
		prev = c
		if found {
			rest = append(rest, piece...)
			continue
		}
		var b, r []byte
		b, r, found, err = s.feed(piece, func(b []byte) { out = append(out, b...) })
		if err != nil {
			return out, nil, false, nil, err
		}
		if found {
			body = append([]byte(nil), b...)
		}
		rest = append(rest, r...)
	}
	if !found {
		out = append(out, s.flush()...)
	}
	return out, body, found, rest, nil
}

func TestScanner(t *testing.T) {
	tests := []struct {
		name   string
		output string
		body   string
		after  string
		cuts   []int
	}{
		{"plain", "hello\n", "e 0 1 - x /srv/app", "", nil},
		{"no trailing newline", "abc", "e 3 1 - x /", "", nil},
		{"empty", "", "", "", nil},
		{"split everywhere", "one\ntwo\n", "e 1 1 - x /a b", "later", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 20, 30, 40, 50}},
		{"split inside the nonce", "x", "s", "", []int{1, 10}},
		{"output ends with RS", "tail\x1e", "s", "", []int{5}},
		{"output holds RS and a part of the nonce", "\x1e0123\x1e" + testNonce[:31] + " no", "s", "", []int{3, 9}},
		{"another nonce", "\x1e" + strings.Repeat("f", 32) + " 0 /e\x1e" + strings.Repeat("f", 32) + "\n", "s", "", nil},
		{"body with newline and RS", "o", "e 255 1 - x /a b\nc\x1ed", "", nil},
		{"bytes after the record", "o", "e 0 1 - x /d", "background\n", []int{2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := append([]byte(tc.output), markerBytes(testNonce, tc.body)...)
			data = append(data, tc.after...)
			out, body, found, rest, err := scanAll(t, testNonce, data, tc.cuts)
			require.NoError(t, err)
			require.True(t, found)
			assert.Equal(t, tc.output, string(out))
			assert.Equal(t, tc.body, string(body))
			assert.Equal(t, tc.after, string(rest))
		})
	}
}

func TestScannerFindsSuccessiveRecords(t *testing.T) {
	s := newScanner(testNonce)
	data := append(append([]byte("junk "), markerBytes(testNonce, "s")...), "mid\n"...)
	data = append(append(data, markerBytes(testNonce, "e 0 1 - x /")...), "tail"...)
	var out []byte
	var bodies []string
	for p := data; len(p) > 0; {
		body, rest, ok, err := s.feed(p, func(b []byte) { out = append(out, b...) })
		require.NoError(t, err)
		if !ok {
			break
		}
		bodies = append(bodies, string(body))
		p = rest
	}
	out = append(out, s.flush()...)
	assert.Equal(t, []string{"s", "e 0 1 - x /"}, bodies)
	assert.Equal(t, "junk mid\ntail", string(out))
}

func TestScannerWithoutRecord(t *testing.T) {
	data := []byte("partial\x1e" + testNonce[:10])
	out, _, found, _, err := scanAll(t, testNonce, data, []int{3})
	require.NoError(t, err)
	assert.False(t, found)
	assert.Equal(t, string(data), string(out), "held bytes are released at the end")

	cut := []byte("x\x1e" + testNonce + " e 0 1 - x /d")
	out, _, found, _, err = scanAll(t, testNonce, cut, []int{5})
	require.NoError(t, err)
	assert.False(t, found)
	assert.Equal(t, string(cut), string(out), "a cut-off record is released too")

	s := newScanner(testNonce)
	long := append([]byte("\x1e"+testNonce+" "), bytes.Repeat([]byte("x"), maxMarkBody+1)...)
	_, rest, ok, err := s.feed(long, func([]byte) {})
	assert.ErrorIs(t, err, errBadMarker)
	assert.False(t, ok)
	assert.Equal(t, string(long), string(rest), "the bytes of a record too long are given back")
	body, _, ok, err := s.feed(markerBytes(testNonce, "s"), func([]byte) {})
	require.NoError(t, err)
	assert.True(t, ok, "the scanner starts afresh")
	assert.Equal(t, "s", string(body))
}

func TestParseEnd(t *testing.T) {
	tests := []struct {
		body string
		want *mark
	}{
		{"e 0 123 - braceexpand:hashall /srv/app", &mark{Status: 0, Ran: "123", Stdout: true, Stderr: true, Opts: "braceexpand:hashall", Dir: "/srv/app"}},
		{"e 255 x 12 x /a b\nc", &mark{Status: 255, Ran: "x", Opts: "x", Dir: "/a b\nc"}},
		{"e 1 7 1 errexit:hashall ", &mark{Status: 1, Ran: "7", Stderr: true, Opts: "errexit:hashall"}},
		{"e 2 7 2 x /", &mark{Status: 2, Ran: "7", Stdout: true, Opts: "x", Dir: "/"}},
		{"e 256 7 - x /", nil},
		{"e -1 7 - x /", nil},
		{"e 01 7 - x /", nil},
		{"e x 7 - x /", nil},
		{"e 0 7 3 x /", nil},
		{"e 0 7 21 x /", nil},
		{"e 0 7 -1 x /", nil},
		{"e 0 7a - x /", nil},
		{"e 0  - x /", &mark{Status: 0, Ran: "x", Stdout: true, Stderr: true, Opts: "x", Dir: "/"}}, // no digits in __harness_ran
		{"e 0 7 - x", nil},
		{"s", nil},
		{"", nil},
		{"x 0 7 - x /", nil},
	}
	for _, tc := range tests {
		m, err := parseEnd([]byte(tc.body))
		if tc.want == nil {
			assert.ErrorIs(t, err, errBadMarker, "%q", tc.body)
			continue
		}
		require.NoError(t, err, "%q", tc.body)
		assert.Equal(t, tc.want, m, "%q", tc.body)
	}
	for body, want := range map[string]*mark{
		"f - braceexpand":     {Stdout: true, Stderr: true, Opts: "braceexpand"},
		"f 1 x":               {Stderr: true, Opts: "x"},
		"f 2 errexit:hashall": {Stdout: true, Opts: "errexit:hashall"},
		"f 12 x":              {Opts: "x"},
		"f 21 x":              nil,
		"f  x":                nil,
		"f - ":                nil,
		"f - x y":             nil,
		"e 0 1 - x /":         nil,
		"f -":                 nil,
		"":                    nil,
	} {
		m := &mark{Status: 3, Ran: "7", Dir: "/d"}
		err := parseFDs([]byte(body), m)
		if want == nil {
			assert.ErrorIs(t, err, errBadMarker, "%q", body)
			continue
		}
		require.NoError(t, err, "%q", body)
		want.Status, want.Ran, want.Dir = 3, "7", "/d"
		assert.Equal(t, want, m, "%q", body)
	}
	m, err := parseEnd([]byte("e 0 1 - errexit:hashall /"))
	require.NoError(t, err)
	assert.True(t, m.errexit())
	m, err = parseEnd([]byte("e 0 1 - braceexpand:noerrexitx /"))
	require.NoError(t, err)
	assert.False(t, m.errexit())
}

func FuzzScanner(f *testing.F) {
	f.Add([]byte("hello\n"), "e 0 1 - x /srv/app", []byte(""), []byte{3, 7})
	f.Add([]byte("abc\x1e"), "e 127 1 - x /a b", []byte("after"), []byte{1, 1, 1, 1})
	f.Add([]byte("\x1e"+testNonce[:20]), "s x", []byte("\x1e"+testNonce+" s x\x1e"+testNonce+"\n"), []byte{30})
	f.Add([]byte{}, "", []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, output []byte, body string, after []byte, cutBytes []byte) {
		start := []byte("\x1e" + testNonce + " ")
		end := []byte("\x1e" + testNonce + "\n")
		if bytes.Contains(output, start) || strings.Contains(body, string(end)) {
			t.Skip("the output contains the record itself")
		}
		data := append(append([]byte(nil), output...), markerBytes(testNonce, body)...)
		data = append(data, after...)
		var cuts []int
		pos := 0
		for _, c := range cutBytes {
			pos += int(c)
			cuts = append(cuts, pos)
		}
		out, got, found, rest, err := scanAll(t, testNonce, data, cuts)
		if len(body) > maxMarkBody-8 {
			return // may be refused as malformed
		}
		require.NoError(t, err)
		require.True(t, found)
		require.Equal(t, string(output), string(out))
		require.Equal(t, body, string(got))
		require.Equal(t, string(after), string(rest))
	})
}

// FuzzScannerNoFalseEnd: output without a record never ends a command
// and comes out unchanged.
func FuzzScannerNoFalseEnd(f *testing.F) {
	f.Add([]byte("\x1e"+testNonce+"\n"), []byte{5})
	f.Add([]byte("\x1e\x1e\x1e"), []byte{1, 1})
	f.Add([]byte("\x1e"+testNonce+" s"), []byte{2})
	f.Fuzz(func(t *testing.T, output []byte, cutBytes []byte) {
		if bytes.Contains(output, []byte("\x1e"+testNonce+" ")) {
			t.Skip()
		}
		var cuts []int
		pos := 0
		for _, c := range cutBytes {
			pos += int(c)
			cuts = append(cuts, pos)
		}
		out, _, found, _, err := scanAll(t, testNonce, output, cuts)
		require.NoError(t, err)
		require.False(t, found)
		require.Equal(t, string(output), string(out))
	})
}

// unquote decodes the $'...' strings ansiQuote writes, by bash's rules
// for the escapes it uses.
func unquote(t testing.TB, q string) string {
	require.True(t, strings.HasPrefix(q, "$'") && strings.HasSuffix(q, "'"), q)
	q = q[2 : len(q)-1]
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c == '\'' {
			t.Fatalf("unescaped quote in %q", q)
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		switch q[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '\\', '\'':
			b.WriteByte(q[i])
		case 'x':
			v, err := strconv.ParseUint(q[i+1:i+3], 16, 8)
			if err != nil {
				t.Fatalf("bad \\x escape in %q", q)
			}
			b.WriteByte(byte(v))
			i += 2
		default:
			t.Fatalf("unexpected escape \\%c", q[i])
		}
	}
	return b.String()
}

func FuzzAnsiQuote(f *testing.F) {
	for _, s := range []string{"", "echo 'hi'", "a\\b\nc\td", "\x00\x01\x7f\xff", "é ✓", "$'x'", "`id`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := ansiQuote(s)
		for i := 0; i < len(q); i++ {
			if q[i] < 0x20 || q[i] >= 0x7f {
				t.Fatalf("byte %#x at %d: only printable ASCII may reach the shell's line: %q", q[i], i, q)
			}
		}
		require.Equal(t, s, unquote(t, q))
	})
}

// TestAnsiQuoteInBash checks the quoting against bash itself.
func TestAnsiQuoteInBash(t *testing.T) {
	bash, err := osexec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	var all []byte
	for c := 1; c < 256; c++ {
		all = append(all, byte(c))
	}
	for _, s := range []string{"plain", "it's", `back\slash`, "new\nline", "tab\t", "é ✓ 世界", string(all), "\\x41", "'\\''"} {
		out, err := osexec.Command(bash, "--noprofile", "--norc", "-c", "printf %s "+ansiQuote(s)).Output()
		require.NoError(t, err)
		assert.Equal(t, s, string(out))
	}
}

func TestCommandLineIsOneLine(t *testing.T) {
	c := newCommand()
	for _, prev := range []int{0, 3} {
		for _, fdTests := range []bool{false, true} {
			line := commandLine("echo a\necho 'b'\n", c, prev, fdTests, "_hsabc _hfabc")
			assert.Equal(t, 1, strings.Count(line, "\n"))
			assert.True(t, strings.HasSuffix(line, "\n"))
			records := 1
			if fdTests {
				records = 2 // the record of the checks follows them
			}
			assert.Equal(t, 2*records, strings.Count(line, c.nonce), "the nonce is in the records' file names only")
			assert.NotContains(t, line, c.sync, "the sync token never reaches the shell")
			assert.True(t, strings.HasPrefix(line, `\builtin unset _hsabc _hfabc; \builtin eval $'__harness_ran=`), line)
			for i := 0; i < len(line); i++ {
				require.True(t, line[i] == '\n' || line[i] == rs[0] || (line[i] >= 0x20 && line[i] < 0x7f), "byte %#x at %d", line[i], i)
			}
		}
	}
	assert.Contains(t, commandLine(":", c, 3, false, ""), `(\\builtin exit 3)\n`)
	assert.Contains(t, commandLine(":", c, 1, false, ""), `((0))\n`)
	assert.NotContains(t, commandLine(":", c, 0, false, ""), "exit")
	assert.NotContains(t, commandLine(":", c, 0, false, ""), "unset")
	assert.NotContains(t, commandLine(":", c, 0, false, ""), "test")
	assert.Contains(t, commandLine(":", c, 0, true, ""), `\builtin test /dev/fd/1 -ef /dev/fd/18 || _hf`+c.tag+"=1; ")
}

// FuzzCommandLine: whatever the command text, the line is one physical
// line of printable bytes (and RS), the nonce is only in the record, and
// the string eval runs is the token assignment, the status setter and
// the text, exactly.
func FuzzCommandLine(f *testing.F) {
	for _, s := range []string{"true", "", "echo 'a'\n", "cat <<EOF\nx\nEOF", "\x00\x1e\xff", "' ; echo $'\\'", "a\\"} {
		f.Add(s, uint8(0), false)
	}
	f.Add("false", uint8(1), true)
	f.Add("exit 3", uint8(3), true)
	f.Fuzz(func(t *testing.T, text string, prev uint8, fdTests bool) {
		c := newCommand()
		line := commandLine(text, c, int(prev), fdTests, "")
		require.Equal(t, 1, strings.Count(line, "\n"))
		require.True(t, strings.HasSuffix(line, "\n"))
		for i := 0; i < len(line); i++ {
			require.True(t, line[i] == '\n' || line[i] == rs[0] || (line[i] >= 0x20 && line[i] < 0x7f), "byte %#x at %d", line[i], i)
		}
		records := 1
		if fdTests {
			records = 2
		}
		require.Equal(t, 2*records, strings.Count(line, c.nonce))
		require.True(t, strings.HasPrefix(line[strings.LastIndex(line, "' </dev/null; "):], "' </dev/null; ((1)) 2>&19 <"+noFile+rs+c.nonce+`" e $? `),
			"the status is $? in the record right after the eval: %q", line)
		q, ok := strings.CutPrefix(line, `\builtin eval `)
		require.True(t, ok, line)
		end := strings.LastIndex(q, "' </dev/null; ")
		require.Positive(t, end)
		var setter string
		switch prev {
		case 0:
		case 1:
			setter = "((0))\n"
		default:
			setter = "(\\builtin exit " + strconv.Itoa(int(prev)) + ")\n"
		}
		require.Equal(t, "__harness_ran="+c.ran+"\n"+setter+text, unquote(t, q[:end+1]))
	})
}

// TestCommandLineRunsNothingAfterRecord: the record is the last command
// the line runs, so no trap runs between it and the reading of the next
// line, and the options it carries are those the next line is read with.
func TestCommandLineRunsNothingAfterRecord(t *testing.T) {
	c := newCommand()
	for _, fdTests := range []bool{false, true} {
		line := commandLine("true", c, 0, fdTests, "")
		// The status is in the first record, right after the eval.
		assert.Contains(t, line, "' </dev/null; ((1)) 2>&19 <"+noFile+rs+c.nonce+`" e $? `)
		end := strings.LastIndex(line, rs+c.nonce+rs)
		require.Positive(t, end)
		assert.Equal(t, " && 19>&19\n", line[end+len(rs+c.nonce+rs):], "after a failed first part, the && list runs nothing more")
	}
}

// renderEnd writes the body of an end record as the shell does.
func renderEnd(m *mark) string {
	fds := ""
	if !m.Stdout {
		fds += "1"
	}
	if !m.Stderr {
		fds += "2"
	}
	if fds == "" {
		fds = "-"
	}
	return fmt.Sprintf("e %d %s %s %s %s", m.Status, m.Ran, fds, m.Opts, m.Dir)
}

// FuzzParseRecords: a parsed end record renders back to the same text,
// and what the shell writes always parses.
func FuzzParseRecords(f *testing.F) {
	f.Add("e 0 123 - braceexpand:hashall /srv/app", uint8(3), "/a b\nc", false, true)
	f.Add("s errexit:history", uint8(0), "", true, true)
	f.Add("e 256 1 3 x /", uint8(255), "\x1e", false, false)
	f.Fuzz(func(t *testing.T, body string, status uint8, dir string, stdout, stderr bool) {
		if m, err := parseEnd([]byte(body)); err == nil {
			// An empty token field means none, as "x" does.
			if f := strings.SplitN(body, " ", 4); len(f) == 4 && f[2] == "" {
				body = f[0] + " " + f[1] + " x " + f[3]
			}
			require.Equal(t, body, renderEnd(m))
		}
		want := &mark{Status: int(status), Ran: "17", Stdout: stdout, Stderr: stderr, Opts: "braceexpand:hashall", Dir: dir}
		m, err := parseEnd([]byte(renderEnd(want)))
		require.NoError(t, err)
		require.Equal(t, want, m)
	})
}

// TestCommandLineLength: bash reads a shell's command lines from a pipe
// one byte at a time, so a round trip costs the shell about a read(2) per
// byte of the line; the protocol's own part of the line stays within a
// ceiling (it was 801 bytes for `true`, then 528).
func TestCommandLineLength(t *testing.T) {
	const ceiling = 240
	for _, prev := range []int{0, 1} {
		line := commandLine("true", newCommand(), prev, false, "")
		assert.LessOrEqual(t, len(line), ceiling, "the line for true after status %d: %q", prev, line)
	}
}
