package persistent

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
)

// The protocol of persistent shells.
//
// A shell runs the user's commands in its own process, so a command can
// redefine almost every name the shell knows: functions named printf,
// echo, eval, builtin, command, test or exit, aliases, builtins disabled
// with enable -n, read-only or integer variables, shell options, traps,
// its own file descriptors. The protocol is built so that none of that
// can make the harness report a wrong exit status or directory, and so
// that what breaks it is noticed and said:
//
//   - The harness learns when a command ends from a record on a status
//     channel of its own (descriptor 19 in the shell, a pipe only the
//     harness reads), never from the command's output. A record is RS
//     nonce " " body RS nonce RS (RS is the byte 0x1e) with a fresh
//     random nonce per command.
//   - The record is printed without running any command and without a
//     fork: it is the name of a file that cannot exist (below
//     /dev/null), in a failed input redirection of an arithmetic command
//     (((1))), which bash reports itself ("script: line N: name: Not a
//     directory") on the status channel. The redirection fails before
//     the arithmetic command runs, so no simple command, no DEBUG or ERR
//     trap and no xtrace line sees the nonce, which appears nowhere but
//     in that word: not in a variable, an argument or $BASH_COMMAND. A
//     failed redirection of a compound command does not exit the shell,
//     and as the first part of an && list it neither triggers set -e nor
//     the ERR trap, nor runs the second part. After a record, the rest of
//     bash's message line is dropped.
//   - The record is the last thing the line runs: no command, and so no
//     trap, runs between it and the reading of the next line. Traps for
//     signals that come while the shell waits for input run only once
//     the next line has been read.
//   - The line uses no reserved word, so aliases cannot rewrite it (((
//     is an operator, which no alias can name). Its only command word is
//     \builtin (quoted, so no alias applies), which runs eval (and exit
//     and unset, see below) past any function of those names; none of
//     them is given a secret.
//   - The command runs as \builtin eval of its text quoted whole, with
//     stdin from /dev/null. The text first sets __harness_ran to a
//     per-command token, and the record carries the variable back, so an
//     eval that did not run the text (disabled with enable -n, a function
//     named builtin, a read-only __harness_ran, a DEBUG trap that skips
//     commands) is noticed.
//   - The record's status is $? itself, expanded in the record's own
//     word right after the eval: no variable holds it, so no command can
//     change it in between. It also carries $SHELLOPTS and $PWD.
//   - Whether the shell's stdout and stderr still lead to the harness is
//     looked up from outside, in /proc, when the record comes (see
//     fdProbe). Where that cannot be done, the line compares them with
//     descriptor 18, a copy of the output pipe, with \builtin test after
//     the end record, and a second record carries the result and the
//     shell options again. The result goes through a variable with a
//     per-command random name, unset at the start of the next line; a
//     trap could change it, but it only decides a note. (The protocols
//     before this one kept the status in such a variable, which a DEBUG
//     trap could rewrite before the record.)
//   - Everything the command printed is in the output pipe before the
//     record is written. When the record arrives and the pipe is empty
//     (the harness reads the pipe and handles what it read under one
//     lock, so nothing is in between), the command's output is complete.
//     Otherwise the harness writes a sync record with a token it never
//     gave the shell into the output pipe, and the output up to it is
//     exactly the command's, whether or not it ends in a newline.
//
// What the protocol cannot stop is code that reads the shell's own
// input: verbose mode (set -v) whose echo of the input is read back from
// a file, history (set -o history) read with the history builtin, the
// shell's memory or its input descriptor. Such a command runs inside the
// shell with all of its power; a protocol in the same process cannot
// keep it out. The shell options a record carries are those the next
// line is read with (nothing runs in between), so a result warns when
// set -v or set -o history was on as its command line was read. A
// command can also make the shell run nothing more (set -n), which looks
// like a command that never ends.
//
// The line is kept short: bash reads a script from a pipe one byte at a
// time, each byte a read(2), so the line's length is most of what a
// round trip costs the shell. For true it is 225 bytes (801 with the
// first protocol of records, 528 with a start record and the checks of
// stdout and stderr in bash).

const (
	// markerFD is the shell's descriptor of the status channel.
	markerFD = 19
	// outputFD is the shell's copy of the output pipe, to compare its
	// stdout and stderr with.
	outputFD = 18
)

// scriptPath is the script bash is started with: descriptor 3, the pipe
// the harness writes command lines into. bash names it at the start of
// its messages.
const scriptPath = "/dev/fd/3"

const rs = "\x1e"

// nonceLen is the length of a nonce: 22 characters of 62 carry 130
// random bits.
const nonceLen = 22

// alnum are the characters of nonces and tags: letters and digits, which
// need no quoting in a word and are safe in a file name.
const alnum = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// newNonce returns a fresh random nonce of nonceLen letters and digits.
// It is short because bash reads its script from a pipe one byte at a
// time: each byte of a command line costs a read(2).
func newNonce() string { return randomWord(nonceLen, len(alnum)) }

// randomWord returns n characters drawn uniformly from the first k of
// alnum.
func randomWord(n, k int) string {
	out := make([]byte, 0, n)
	var buf [32]byte
	for len(out) < n {
		_, _ = rand.Read(buf[:]) // crypto/rand.Read never fails
		for _, c := range buf {
			// Keep bytes below the largest multiple of k, so each
			// character is equally likely.
			if int(c) < 256-256%k && len(out) < n {
				out = append(out, alnum[int(c)%k])
			}
		}
	}
	return string(out)
}

// newRanToken returns a fresh random token of 18 decimal digits. It is
// digits only so that an integer attribute on __harness_ran keeps it.
func newRanToken() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return strconv.FormatUint(binary.BigEndian.Uint64(b[:])%900_000_000_000_000_000+100_000_000_000_000_000, 10)
}

// command identifies one command of the protocol.
type command struct {
	nonce string // in the records; known only to the words that print them
	tag   string // names the variables of the end record
	ran   string // the value the command text sets __harness_ran to
	sync  string // the output sync token; never sent to the shell
}

// noFile is where every record's file name starts: below /dev/null, so
// opening it fails whatever the name (ENOTDIR). bash writes "script:
// line N: " before it.
const noFile = "/dev/null/"

// tagLen is the length of the tag in an end record's variable names: 6
// lowercase letters and digits, 2 billion names for each.
const tagLen = 6

func newCommand() command {
	return command{nonce: newNonce(), tag: randomWord(tagLen, 36), ran: newRanToken(), sync: newNonce()}
}

// bootLine is the first line a shell reads. Bash starts with the status
// channel as its stderr; the line moves it to markerFD, keeps a copy of
// the output pipe, closes the script's descriptor 3 (bash reads the script
// through a descriptor of its own) and lets SIGINT stop a command but not
// the shell.
func bootLine() string {
	return "exec 3<&- " + strconv.Itoa(outputFD) + ">&1 " + strconv.Itoa(markerFD) + ">&2 2>&1; trap : INT\n"
}

// commandLine returns the one physical line that runs text in the shell
// and then prints its end record. prev is the exit status of the
// previous command, which $? shows the command. With fdTests (when the
// harness cannot look at the shell's descriptors itself) the line checks
// where stdout and stderr lead; unset names the variables of the
// previous line that did so, if any.
//
// The record separator is written as a raw byte, which bash takes as an
// ordinary character of a word.
func commandLine(text string, c command, prev int, fdTests bool, unset string) string {
	const fd = "19"
	var b strings.Builder
	b.Grow(len(text) + len(text)/8 + 320)
	if unset != "" {
		b.WriteString(`\builtin unset ` + unset + "; ")
	}

	// The command, after $? is set to the previous status: 1 by a false
	// arithmetic command, anything else by a subshell (the only fork the
	// protocol ever makes, and only after a command that failed).
	b.WriteString(`\builtin eval $'__harness_ran=` + c.ran + `\n`)
	switch prev {
	case 0:
	case 1:
		b.WriteString(`((0))\n`)
	default:
		b.WriteString(`(\\builtin exit ` + strconv.Itoa(prev) + `)\n`)
	}
	writeQuoted(&b, text)
	b.WriteString("' </dev/null; ")

	// The end record: status, the token the command text set (digits
	// only; empty when it is unset or holds none), which of stdout (1)
	// and stderr (2) no longer lead to the harness ("-" when both do, or
	// when the harness looks itself), the shell options and the
	// directory. __harness_ran is filtered only when it is set, so that
	// set -u cannot make the expansion fail when the command unset it.
	record := func(body, next string) {
		b.WriteString("((1)) 2>&" + fd + " <" + noFile + rs + c.nonce + "\" " + body + "\"" + rs + c.nonce + rs + next)
	}
	const end = "e $? ${__harness_ran:+${__harness_ran//[!0-9]}} - ${SHELLOPTS:-x} ${PWD-}"
	if !fdTests {
		record(end, " && "+fd+">&"+fd+"\n")
		return b.String()
	}
	// With the checks in the line, a second record follows them with
	// their result and the options again. The status goes in the first
	// record, before any other command runs: a trap that ran before the
	// checks could change a variable that held it.
	record(end, " || "+fd+">&"+fd+"; ")
	f := c.fdsVar()
	b.WriteString(`\builtin test /dev/fd/1 -ef /dev/fd/` + strconv.Itoa(outputFD) + " || " + f + "=1; " +
		`\builtin test /dev/fd/2 -ef /dev/fd/` + strconv.Itoa(outputFD) + " || " + f + "+=2; ")
	record("f ${"+f+":--} ${SHELLOPTS:-x}", " && "+fd+">&"+fd+"\n")
	return b.String()
}

// fdsVar names the variable that holds the result of a line's checks of
// stdout and stderr, when the line makes them.
func (c command) fdsVar() string { return "_hf" + c.tag }

// ansiQuote quotes s as a bash $'...' string on one physical line: every
// byte that is not printable ASCII, and the quote and backslash, are
// escaped, so the shell reads the whole string before it runs anything
// and no byte of s can end the line or the quote.
func ansiQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8 + 3)
	b.WriteString("$'")
	writeQuoted(&b, s)
	b.WriteByte('\'')
	return b.String()
}

// writeQuoted writes the inside of ansiQuote's string.
func writeQuoted(b *strings.Builder, s string) {
	const hexDigits = "0123456789abcdef"
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == '\'':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c >= 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
}

// syncRecord is the record the harness writes into the output pipe once
// the end record has come.
func syncRecord(token string) []byte {
	return []byte(rs + token + " " + rs + token + "\n")
}

// mark is a parsed end record.
type mark struct {
	Status int
	// Ran is the value of __harness_ran after the command ("x" if unset).
	Ran string
	// Stdout and Stderr report whether those descriptors of the shell
	// still lead to the harness.
	Stdout, Stderr bool
	// Opts is $SHELLOPTS.
	Opts string
	Dir  string
}

// errexit reports whether set -e was on after the command.
func (m *mark) errexit() bool { return hasOption(m.Opts, "errexit") }

// hasOption reports whether the $SHELLOPTS value opts lists option.
func hasOption(opts, option string) bool {
	return strings.Contains(":"+opts+":", ":"+option+":")
}

// maxMarkBody bounds the body of a record; a directory name is far
// shorter.
const maxMarkBody = 64 << 10

var errBadMarker = errors.New("shell: malformed record")

// scanner finds records RS id " " body RS id "\n" (or, on the status
// channel, RS id " " body RS id RS) in a stream. Bytes that
// may be the start of a record are held back until the next feed shows
// whether they are.
type scanner struct {
	start []byte // RS id " "
	end   []byte // RS id "\n"
	held  []byte // a possible start of a record, or the body so far
	in    bool   // the start was seen
}

func newScanner(id string) *scanner {
	return &scanner{start: []byte(rs + id + " "), end: []byte(rs + id + "\n")}
}

// newRecordScanner finds the records of the status channel, RS id " "
// body RS id RS, which bash prints inside a message line of its own.
func newRecordScanner(id string) *scanner {
	return &scanner{start: []byte(rs + id + " "), end: []byte(rs + id + rs)}
}

// feed consumes p. Bytes that are certainly not part of a record are
// passed to out (which must not keep the slice). When a record completes,
// feed returns its body and the bytes that followed it in p, which the
// caller feeds again to look for more. An error means a record was
// malformed (too long); its bytes are returned as rest and the scanner
// starts afresh.
func (s *scanner) feed(p []byte, out func([]byte)) (body, rest []byte, ok bool, err error) {
	from := 0 // where the end may start in held; what came before was searched
	if !s.in {
		data := p
		if len(s.held) > 0 {
			data = append(s.held, p...)
			s.held = nil
		}
		i := bytes.Index(data, s.start)
		if i < 0 {
			k := partialSuffix(data, s.start)
			if len(data)-k > 0 {
				out(data[:len(data)-k])
			}
			s.held = append([]byte(nil), data[len(data)-k:]...)
			return nil, nil, false, nil
		}
		if i > 0 {
			out(data[:i])
		}
		s.in = true
		s.held = append([]byte(nil), data[i+len(s.start):]...)
	} else {
		from = max(0, len(s.held)-len(s.end)+1)
		s.held = append(s.held, p...)
	}
	j := bytes.Index(s.held[from:], s.end)
	if j >= 0 {
		j += from
	}
	if j < 0 {
		if len(s.held) > maxMarkBody {
			bad := append(append([]byte(nil), s.start...), s.held...)
			s.held, s.in = nil, false
			return nil, bad, false, errBadMarker
		}
		return nil, nil, false, nil
	}
	held := s.held
	s.held, s.in = nil, false
	return held[:j], held[j+len(s.end):], true, nil
}

// flush returns the bytes held back (at the end of the stream, when no
// record will complete), a cut-off record included.
func (s *scanner) flush() []byte {
	h := s.held
	if s.in {
		h = append(append([]byte(nil), s.start...), h...)
	}
	s.held, s.in = nil, false
	return h
}

// parseFDs parses the body of the record that follows the checks of
// stdout and stderr in a line: "f fds opts". It sets those fields of m.
func parseFDs(b []byte, m *mark) error {
	f := strings.Split(string(b), " ")
	if len(f) != 3 || f[0] != "f" || f[2] == "" {
		return errBadMarker
	}
	switch f[1] {
	case "-", "1", "2", "12":
	default:
		return errBadMarker
	}
	m.Stdout, m.Stderr, m.Opts = !strings.Contains(f[1], "1"), !strings.Contains(f[1], "2"), f[2]
	return nil
}

// parseEnd parses the body of an end record:
// "e status ran fds opts dir".
func parseEnd(b []byte) (*mark, error) {
	f := strings.SplitN(string(b), " ", 6)
	if len(f) != 6 || f[0] != "e" {
		return nil, errBadMarker
	}
	n, err := strconv.Atoi(f[1])
	if err != nil || n < 0 || n > 255 || f[1] != strconv.Itoa(n) {
		return nil, errBadMarker
	}
	if f[2] != "x" && strings.Trim(f[2], "0123456789") != "" || f[4] == "" {
		return nil, errBadMarker
	}
	if f[2] == "" {
		f[2] = "x" // unset, or no digits in it
	}
	switch f[3] {
	case "-", "1", "2", "12":
	default:
		return nil, errBadMarker
	}
	return &mark{Status: n, Ran: f[2], Stdout: !strings.Contains(f[3], "1"), Stderr: !strings.Contains(f[3], "2"),
		Opts: f[4], Dir: f[5]}, nil
}

// partialSuffix returns the length of the longest suffix of data that is
// a proper prefix of tok.
func partialSuffix(data, tok []byte) int {
	for k := min(len(data), len(tok)-1); k > 0; k-- {
		if bytes.HasSuffix(data, tok[:k]) {
			return k
		}
	}
	return 0
}
