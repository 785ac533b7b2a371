package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/spillwriter"
	"github.com/go-harness/harness/internal/units"
	"github.com/go-harness/harness/tools"
)

// surveyed is what a first pass over a spooled message found.
type surveyed struct {
	id     json.RawMessage // nil when absent or not small
	method bool            // a request or a notification, not an answer
	// texts counts the texts of the result's content: text blocks and
	// the texts of embedded resources.
	texts int
}

// survey reads a JSON-RPC message in bounded memory and returns its id
// and what kind of message it is. Its error is the first problem of the
// text; what was found before it is returned too.
func survey(r io.Reader) (surveyed, error) {
	var sv surveyed
	j := newJSONStream(r)
	err := j.object(func(key string) error {
		switch key {
		case "id":
			v, err := j.small(1 << 10)
			if errors.Is(err, errTooBig) {
				return nil
			}
			sv.id = v
			return err
		case "method":
			sv.method = true
		case "result":
			return surveyResult(j, &sv)
		}
		_, err := j.skip()
		return err
	})
	if err == nil {
		err = j.end()
	}
	return sv, err
}

func surveyResult(j *jsonStream, sv *surveyed) error {
	if c, err := j.peek(); err != nil || c != '{' {
		if err != nil {
			return err
		}
		_, err := j.skip()
		return err
	}
	return j.object(func(key string) error {
		if key == "content" {
			countText := func() error {
				if c, err := j.peek(); err == nil && c == '"' {
					sv.texts++
				}
				_, err := j.skip()
				return err
			}
			return contentItems(j, func(item string) error {
				switch item {
				case "text":
					return countText()
				case "resource":
					if c, err := j.peek(); err == nil && c == '{' {
						return j.object(func(k string) error {
							if k == "text" {
								return countText()
							}
							_, err := j.skip()
							return err
						})
					}
				}
				_, err := j.skip()
				return err
			})
		}
		_, err := j.skip()
		return err
	})
}

// contentItems reads a content array, calling each with the keys of
// every object in it; each must read the key's value. Values that are
// not objects are skipped.
func contentItems(j *jsonStream, each func(key string) error) error {
	if c, err := j.peek(); err != nil || c != '[' {
		if err != nil {
			return err
		}
		_, err := j.skip()
		return err
	}
	return j.array(func() error {
		if c, err := j.peek(); err != nil || c != '{' {
			if err != nil {
				return err
			}
			_, err := j.skip()
			return err
		}
		return j.object(each)
	})
}

// extracted is what extract found beside the text it wrote.
type extracted struct {
	isError bool
	notes   []string
}

// extract streams the text of a spooled tool result to w: each text
// block and each embedded resource's text, one after the other, a line
// apart. Images, audio and blobs are left out with a note; so is
// structuredContent when the content has text (servers repeat it there),
// and otherwise it is written as its JSON text. Memory stays bounded
// whatever the result's size.
func extract(r io.Reader, w io.Writer, sv surveyed) (extracted, error) {
	var x extracted
	j := newJSONStream(r)
	blocks := 0
	sep := func() {
		if blocks > 0 {
			_, _ = io.WriteString(w, "\n")
		}
		blocks++
	}
	text := func() error {
		if c, err := j.peek(); err != nil || c != '"' {
			if err != nil {
				return err
			}
			_, err := j.skip()
			return err
		}
		sep()
		_, err := j.str(w)
		return err
	}
	left := func(what string) error {
		n, err := j.skip()
		if err == nil {
			x.notes = append(x.notes, fmt.Sprintf("[%s left out (%s): the result was too large to keep anything but its text]", what, units.Bytes(n)))
		}
		return err
	}
	err := j.object(func(key string) error {
		if key != "result" {
			_, err := j.skip()
			return err
		}
		if c, err := j.peek(); err != nil || c != '{' {
			if err != nil {
				return err
			}
			_, err := j.skip()
			return err
		}
		return j.object(func(key string) error {
			switch key {
			case "content":
				return contentItems(j, func(item string) error {
					switch item {
					case "text":
						return text()
					case "data":
						return left("an image or audio block")
					case "resource":
						if c, err := j.peek(); err != nil || c != '{' {
							if err != nil {
								return err
							}
							_, err := j.skip()
							return err
						}
						return j.object(func(k string) error {
							switch k {
							case "text":
								return text()
							case "blob":
								return left("a binary resource")
							}
							_, err := j.skip()
							return err
						})
					}
					_, err := j.skip()
					return err
				})
			case "structuredContent":
				if sv.texts > 0 {
					return left("structuredContent, which servers repeat as text")
				}
				sep()
				_, err := j.copyValue(w)
				return err
			case "isError":
				v, err := j.small(16)
				x.isError = err == nil && string(v) == "true"
				if errors.Is(err, errTooBig) {
					err = nil
				}
				return err
			}
			_, err := j.skip()
			return err
		})
	})
	if err == nil {
		err = j.end()
	}
	return x, err
}

// bigResultPreview is the limit of the preview of a spooled result: under
// the spill middleware's default threshold, with room for the notes, so
// the preview is not spilled again.
const bigResultPreview = spillwriter.DefaultThreshold / 2

// spooledResult reads a tool result spooled to a file, saving its text
// whole to the session's output store as it goes, and returns what the
// model sees: a preview with the saved output's locator, and notes on
// what was left out.
func (t *remoteTool) spooledResult(ctx context.Context, call *tools.Call, sp *spooled) *harness.ToolResult {
	defer os.Remove(sp.path)
	srv := t.srv
	var store tools.OutputStore
	var session string
	if call.Env != nil {
		store, session = call.Env.Output, call.Env.SessionID
	}
	owner := tools.Owner{Session: session, Tool: call.Name, Call: call.ID}
	w, err := spillwriter.NewWriter(ctx, store, owner, bigResultPreview)
	if err != nil {
		return harness.ErrorResult(harness.CodeToolFailed, "The %s tool of the MCP server %s ran, but its result (%s) could not be read: %v. Check what it did before running it again.",
			t.def.remote, srv.cfg.Name, units.Bytes(sp.size), err)
	}
	w.Save() // the whole text is kept, even should it turn out short
	f, err := os.Open(sp.path)
	var x extracted
	if err == nil {
		x, err = extract(f, w, sp.survey)
		f.Close()
	}
	_ = w.Close()
	out := w.Output()
	r := &harness.ToolResult{}
	if x.isError {
		r.IsError, r.Code = true, harness.CodeToolFailed
	}
	lines := []string{fmt.Sprintf("[the server's answer was %s, over the %s a message is read in memory: its text (%s) was read from a temporary file%s]",
		units.Bytes(sp.size), units.Bytes(int64(sp.frame)), units.Bytes(out.Size), savedWhere(out, store))}
	if sp.cut {
		lines = append(lines, fmt.Sprintf("[the answer was cut at %s (Config.MaxResultBytes): the text ends where the cut fell; what the server sent after it was not read]", units.Bytes(sp.size)))
	} else if err != nil {
		lines = append(lines, fmt.Sprintf("[the answer could not be read to its end: %v; the text ends there]", err))
	}
	lines = append(lines, x.notes...)
	text := out.Text
	if out.Size == 0 {
		text = "The tool returned no text."
	}
	r.Content = []harness.Block{harness.TextBlock(text), harness.TextBlock(joinLines(lines))}
	srv.set.opts.logger.Info("mcp: a large tool result was read from its spool file", "server", srv.cfg.Name, "tool", t.def.remote,
		"bytes", sp.size, "text", out.Size, "locator", out.Stored.Locator, "cut", sp.cut)
	return r
}

func savedWhere(out spillwriter.Output, store tools.OutputStore) string {
	switch {
	case out.Stored.Locator != "":
		return ", and saved whole to " + out.Stored.Locator
	case store == nil:
		return "; no output store keeps it whole, so only its start and end are shown"
	case out.Err != nil:
		return fmt.Sprintf("; saving it whole failed (%v), so only its start and end are shown", out.Err)
	}
	return ""
}

func joinLines(lines []string) string {
	s := ""
	for i, l := range lines {
		if i > 0 {
			s += "\n"
		}
		s += l
	}
	return s
}
