package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/examples/coder/internal/ui"
)

// approvalDetail is what an approval question shows of the change it
// asks about, in at most maxLines lines: for edit the lines it removes
// and adds, for write the size of the content and its first lines.
// Other calls, and arguments that do not parse, show nothing more than
// the one-line preview.
func approvalDetail(call harness.ToolCall, maxLines int) []string {
	maxLines = max(maxLines, 3)
	var args struct {
		Content    *string `json:"content"`
		OldString  *string `json:"old_string"`
		NewString  *string `json:"new_string"`
		ReplaceAll bool    `json:"replace_all"`
	}
	if json.Unmarshal([]byte(call.Arguments), &args) != nil {
		return nil
	}
	switch {
	case call.Name == "edit" && args.OldString != nil && args.NewString != nil:
		old, repl := splitLines(*args.OldString), splitLines(*args.NewString)
		head := fmt.Sprintf("replaces %s with %s", ui.Plural(len(old), "line", "lines"), ui.Plural(len(repl), "line", "lines"))
		if args.ReplaceAll {
			head += ", at every occurrence"
		}
		out := []string{head}
		room, oldRoom, newRoom := maxLines-1, len(old), len(repl)
		if oldRoom+newRoom > room {
			// The removed lines get half the room, or what the added
			// ones leave.
			oldRoom = min(len(old), max(room/2, room-len(repl)))
			newRoom = room - oldRoom
		}
		out = append(out, marked("- ", old, oldRoom)...)
		out = append(out, marked("+ ", repl, newRoom)...)
		return out
	case call.Name == "write" && args.Content != nil:
		lines := splitLines(*args.Content)
		head := fmt.Sprintf("content: %s, %s", ui.Plural(len(lines), "line", "lines"), ui.ByteSize(int64(len(*args.Content))))
		return append([]string{head}, marked("│ ", lines, maxLines-1)...)
	}
	return nil
}

// marked returns at most room lines: lines with mark before each, and a
// line counting those left out when they do not all fit.
func marked(mark string, lines []string, room int) []string {
	if room <= 0 {
		if len(lines) == 0 {
			return nil
		}
		return []string{fmt.Sprintf("… %s not shown", ui.Plural(len(lines), "line", "lines"))}
	}
	var out []string
	for i, l := range lines {
		if len(lines) > room && i == room-1 {
			out = append(out, "… "+ui.Plural(len(lines)-i, "more line", "more lines"))
			break
		}
		out = append(out, mark+strings.ReplaceAll(l, "\t", "    "))
	}
	return out
}

// splitLines splits text into lines; a final newline ends the last line
// rather than starting an empty one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// cutTo cuts each line to width columns (runes), marking a cut with …,
// so that a question's detail never wraps past its line budget.
func cutTo(lines []string, width int) []string {
	for i, l := range lines {
		if r := []rune(l); width > 1 && len(r) > width {
			lines[i] = string(r[:width-1]) + "…"
		}
	}
	return lines
}
