package spillwriter

import (
	"fmt"
	"strings"

	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/tools"
)

// Source is what a preview is cut from: a prefix and a suffix of an
// output (for an output held in memory, both are the whole text) and the
// output's totals.
type Source struct {
	Head     string // a prefix of the output
	Tail     string // a suffix of the output, starting at a rune boundary
	Size     int64  // bytes in the output
	Newlines int64  // '\n' bytes in the output
}

// Preview is an output cut to a byte limit: Head + Notice + Tail is Text.
type Preview struct {
	Head, Notice, Tail string
	// Omitted is the exact number of output bytes between Head and Tail.
	Omitted int64
	// FirstLine and LastLine are the 1-based lines the omitted bytes
	// span (the first and last may be partly shown).
	FirstLine, LastLine int64
	Text                string
}

// DefaultThreshold is the largest text, in bytes, that is kept whole:
// the spill policy's threshold unless spill.Config.Threshold sets another.
const DefaultThreshold = 30_000

// MinThreshold is the smallest limit a preview has room in: below it, a
// preview has no room for a useful head and tail next to its notice.
// spill.Config.Threshold and the shell's output limit are at least this.
const MinThreshold = 1024

// headShare is the part of the budget given to the head, in fifths: the
// end of an output (the failing test, the final error) is usually what
// matters, so the tail gets more.
const headShare = 2

// BuildPreview cuts src to at most limit bytes: a head cut on a line (or
// at least rune) boundary, a notice with the exact omitted byte count and
// the line span, where the whole output is (st) and how to read it back
// with read's offset and limit, and a tail cut the same way. When st has
// no locator, the notice says the output could not be saved (saveErr). It
// reports false when not even the shortest notice fits in limit. src.Size
// must exceed limit.
func BuildPreview(src Source, limit int, st tools.Stored, saveErr error) (Preview, bool) {
	for _, short := range []bool{false, true} {
		// The head and tail get what the notice leaves. The notice's length
		// depends (by a few digits) on where they are cut, so cut, measure,
		// and cut again with the measured notice plus some slack.
		reserve := 0
		for i := range 6 {
			budget := limit - reserve
			if budget < 0 {
				break
			}
			hb := budget * headShare / 5
			p := assemble(src, textcut.HeadLines(src.Head, hb), textcut.TailLines(src.Tail, budget-hb), st, saveErr, short)
			if len(p.Text) <= limit {
				return p, true
			}
			reserve = max(reserve+len(p.Text)-limit, len(p.Notice)+8*i)
		}
		// The cuts did not converge: try with no head and tail at all.
		if p := assemble(src, "", "", st, saveErr, short); len(p.Text) <= limit {
			return p, true
		}
	}
	return Preview{}, false
}

func assemble(src Source, head, tail string, st tools.Stored, saveErr error, short bool) Preview {
	p := Preview{Head: head, Tail: tail, Omitted: src.Size - int64(len(head)) - int64(len(tail))}
	totalLines := src.Newlines
	if src.Size > 0 && !strings.HasSuffix(src.Tail, "\n") {
		totalLines++
	}
	p.FirstLine = int64(strings.Count(head, "\n")) + 1
	p.LastLine = src.Newlines - int64(strings.Count(tail, "\n")) + 1
	if k := len(src.Tail) - len(tail); k > 0 && src.Tail[k-1] == '\n' {
		p.LastLine-- // the tail starts a line: the omitted part ends before it
	}
	p.LastLine = max(min(p.LastLine, totalLines), p.FirstLine)

	var b strings.Builder
	if head != "" && !strings.HasSuffix(head, "\n") {
		b.WriteByte('\n')
	}
	switch {
	case st.Locator != "" && short:
		fmt.Fprintf(&b, "[%d bytes omitted (lines %d-%d); whole output: %s, readable with read (offset, limit in lines)]",
			p.Omitted, p.FirstLine, p.LastLine, st.Locator)
	case st.Locator != "":
		fmt.Fprintf(&b, "[... %d of %d bytes omitted here (lines %d-%d of %d). The whole output is saved at %s. "+
			"To see the omitted part, call read with file_path %q, offset %d and limit %d "+
			"(offset and limit count lines); if its footer says there is more, continue at the offset it gives.]",
			p.Omitted, src.Size, p.FirstLine, p.LastLine, totalLines, st.Locator,
			st.Locator, p.FirstLine, p.LastLine-p.FirstLine+1)
	case short:
		fmt.Fprintf(&b, "[%d bytes omitted and lost]", p.Omitted)
	default:
		reason := "no output store is configured"
		if saveErr != nil {
			reason = textcut.Prefix(saveErr.Error(), 200)
		}
		fmt.Fprintf(&b, "[... %d of %d bytes omitted here (lines %d-%d of %d). The whole output could not be saved (%s), so this part cannot be read back.]",
			p.Omitted, src.Size, p.FirstLine, p.LastLine, totalLines, reason)
	}
	if tail != "" {
		b.WriteByte('\n')
	}
	p.Notice = b.String()
	p.Text = head + p.Notice + tail
	return p
}
