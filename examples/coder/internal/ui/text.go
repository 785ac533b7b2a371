package ui

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// money formats a cost in US dollars for the footer: four decimals, as
// one step costs fractions of a cent.
func money(c float64) string { return fmt.Sprintf("$%.4f", c) }

// seconds formats a duration the way a person reads it.
func seconds(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	d = d.Round(time.Second)
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// marshalLine encodes v as one JSON line.
func marshalLine(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// count formats a token count: 950, 12.3k, 1.2M.
func Count(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return strconv.FormatFloat(float64(n)/1000, 'f', 1, 64) + "k"
	default:
		return strconv.FormatFloat(float64(n)/1_000_000, 'f', 1, 64) + "M"
	}
}

// cut shortens s to at most n runes, marking the cut with "…".
func cut(s string, n int) string {
	if n < 2 {
		n = 2
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, runes := 0, 0
	for i < len(s) && runes < n-1 {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		runes++
	}
	return s[:i] + "…"
}

// cutLeft shortens s to at most n runes by dropping its start, marking
// the cut with "…".
func cutLeft(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return "…" + string(r[len(r)-n+1:])
}

// oneLine folds whitespace runs, newlines included, into single spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// expandTabs replaces tabs with spaces so cut lines keep their width,
// and drops control characters that would move the cursor.
func expandTabs(s string) string {
	if !strings.ContainsAny(s, "\t\r\x1b\b") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		switch {
		case r == '\t':
			n := 4 - col%4
			b.WriteString(strings.Repeat(" ", n))
			col += n
		case r == '\r', r == '\x1b', r == '\b':
			// Terminal control: a card shows text, not cursor moves.
		default:
			b.WriteRune(r)
			col++
		}
	}
	return b.String()
}

// plural formats a count with the noun in the form it takes: one when n
// is 1 (or -1), many otherwise ("0 files", "1 file", "2 files").
func plural[N ~int | ~int64](n N, one, many string) string {
	w := many
	if n == 1 || n == -1 {
		w = one
	}
	return strconv.FormatInt(int64(n), 10) + " " + w
}

// byteSize formats a byte count as the harness's texts do: the exact
// count below 1 KiB, otherwise the count in the largest binary multiple
// it reaches, with one decimal ("4.2 KiB").
func byteSize(n int64) string {
	const unit = 1 << 10
	if n < unit {
		return plural(n, "byte", "bytes")
	}
	suffixes := [...]string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i, div := 0, int64(unit)
	for i < len(suffixes)-1 && n/div >= unit {
		div *= unit
		i++
	}
	return strconv.FormatFloat(float64(n)/float64(div), 'f', 1, 64) + " " + suffixes[i]
}

// Plural formats a count with its noun ("1 skill", "3 skills").
func Plural(n int, one, many string) string { return plural(n, one, many) }

// ByteSize formats a byte count as the cards do ("512 bytes", "4.2 KiB").
func ByteSize(n int64) string { return byteSize(n) }

// wrap breaks each line of s that is wider than width columns at spaces,
// indenting the continuation lines two columns more than the line's own
// indentation. A word wider than the room left is cut into pieces, so no
// line is wider than width (when width leaves room for a character past
// the indentation). Tabs count as one column; callers expand them first.
func wrap(s string, width int) string {
	if width <= 0 {
		return s
	}
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		wrapLine(&b, line, width)
	}
	return b.String()
}

func wrapLine(b *strings.Builder, line string, width int) {
	if utf8.RuneCountInString(line) <= width {
		b.WriteString(line)
		return
	}
	body := strings.TrimLeft(line, " ")
	indent := len(line) - len(body)
	cont := strings.Repeat(" ", min(indent+2, max(width-1, 0)))
	if width-len(cont) < 1 {
		b.WriteString(line) // no room to wrap into
		return
	}
	col := 0
	cur := line[:indent]
	col = indent
	first := true
	flush := func() {
		if !first {
			b.WriteByte('\n')
		}
		b.WriteString(strings.TrimRight(cur, " "))
		first = false
		cur, col = cont, len(cont)
	}
	for _, word := range strings.Split(body, " ") {
		n := utf8.RuneCountInString(word)
		sep := 0
		if col > len(cont) || (first && col > indent) {
			sep = 1
		}
		if col+sep+n <= width {
			if sep == 1 {
				cur += " "
			}
			cur += word
			col += sep + n
			continue
		}
		if col > len(cont) || (first && col > indent) {
			flush()
		}
		// A word wider than the room: cut it.
		for utf8.RuneCountInString(word) > width-col {
			r := []rune(word)
			k := width - col
			cur += string(r[:k])
			word = string(r[k:])
			flush()
		}
		cur += word
		col += utf8.RuneCountInString(word)
	}
	if strings.TrimSpace(cur) != "" || first {
		if !first {
			b.WriteByte('\n')
		}
		b.WriteString(strings.TrimRight(cur, " "))
	}
}
