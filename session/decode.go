package session

import (
	"encoding/json"

	"github.com/go-harness/harness"
)

// Loading decodes each log line with a hand-written decoder for the
// event types and the harness vocabulary, which is several times faster
// than encoding/json and allocates little more than what it returns:
// short strings that repeat (block types, tool names) are made once per
// load. The decoder handles lines as this package writes them and any other valid JSON it
// can decode exactly as encoding/json would; anything else (an unknown
// or repeated key, a key with escapes, a number that is not a plain
// integer, a null where a value is kept, invalid JSON) makes it give up,
// and the line is decoded with encoding/json (Event.UnmarshalJSON), which
// also says what is wrong with it. Both give the same event for every
// line the fast decoder accepts; FuzzDecodeEvent checks it.

// decodeState is what the decoding of one log's lines shares.
type decodeState struct {
	// names holds short strings already made (block types, tool names,
	// roles, reasons), so each is allocated once per load.
	names map[string]string
}

func newDecodeState() *decodeState { return &decodeState{names: map[string]string{}} }

// decodeEvent decodes one log line, falling back to encoding/json.
func decodeEvent(line []byte, st *decodeState) (Event, error) {
	if e, ok := fastDecodeEvent(line, st); ok {
		return e, nil
	}
	var e Event
	err := e.unmarshalStd(line)
	return e, err
}

// fastDecodeEvent decodes line with the fast decoder; ok is false when
// it gave up. st is nil when one line is decoded alone.
func fastDecodeEvent(line []byte, st *decodeState) (Event, bool) {
	d := decoder{b: line, st: st}
	e, ok := d.event()
	if !ok || d.bad {
		return Event{}, false
	}
	d.ws()
	if d.i != len(d.b) {
		return Event{}, false
	}
	return e, true
}

// event reads the envelope and, when its type comes before its data as
// Event.MarshalJSON writes it, the payload in the same pass.
func (d *decoder) event() (Event, bool) {
	var e Event
	var typ string
	var p Payload
	var data []byte // the data, when it came before the type
	dataSeen := false
	if d.peek() != '{' {
		return e, d.fail()
	}
	d.object(func(k []byte) bool {
		switch string(k) {
		case "seq":
			e.Seq = d.int()
		case "time":
			e.Time = d.time()
		case "type":
			typ = d.str()
		case "data":
			dataSeen = true
			if d.peek() == 'n' {
				return false // encoding/json keeps a null payload's "null"
			}
			if typ != "" {
				p = d.payload(typ)
			} else {
				data = d.skip(0)
			}
		default:
			return false
		}
		return true
	})
	if d.bad || typ == "" {
		return e, false
	}
	if data != nil {
		sub := decoder{b: data, st: d.st}
		if p = sub.payload(typ); sub.bad {
			return e, false
		}
		sub.ws()
		if sub.i != len(sub.b) {
			return e, false
		}
	}
	if !dataSeen {
		if p, ok := newPayload(typ); ok {
			e.Data = p
		} else {
			e.Data = &Unknown{Type: typ}
		}
		return e, true
	}
	e.Data = p
	return e, !d.bad
}

// payload reads the data of an event of type typ.
func (d *decoder) payload(typ string) Payload {
	switch typ {
	case TypeUser:
		p := &UserMessage{}
		d.object(func(k []byte) bool {
			switch string(k) {
			case "content":
				p.Content = d.blocks()
			case "steer":
				p.Steer = d.bool()
			case "step":
				p.Step = d.intField()
			default:
				return false
			}
			return true
		})
		return p
	case TypeAssistant:
		p := &AssistantMessage{}
		d.object(func(k []byte) bool {
			switch string(k) {
			case "step":
				p.Step = d.intField()
			case "model":
				p.Model = d.str()
			case "content":
				p.Content = d.blocks()
			case "finish":
				p.Finish = d.str()
			case "usage":
				if !d.null() {
					u := d.usage()
					p.Usage = &u
				}
			default:
				return false
			}
			return true
		})
		return p
	case typeToolStart:
		p := &ToolStarted{}
		d.object(func(k []byte) bool {
			switch string(k) {
			case "step":
				p.Step = d.intField()
			case "call_id":
				p.CallID = d.str()
			case "name":
				p.Name = d.str()
			default:
				return false
			}
			return true
		})
		return p
	case TypeToolResult:
		p := &ToolFinished{}
		d.object(func(k []byte) bool {
			switch string(k) {
			case "step":
				p.Step = d.intField()
			case "call_id":
				p.CallID = d.str()
			case "name":
				p.Name = d.str()
			case "result":
				p.Result = d.toolResult()
			case "duration_ms":
				p.DurationMS = d.int()
			default:
				return false
			}
			return true
		})
		return p
	case typeModelRequest:
		p := &ModelRequest{}
		d.object(func(k []byte) bool {
			switch string(k) {
			case "step":
				p.Step = d.intField()
			case "model":
				p.Model = d.str()
			case "fingerprint":
				p.Fingerprint = d.fingerprint()
			default:
				return false
			}
			return true
		})
		return p
	case TypeReminder:
		p := &Reminded{}
		d.object(func(k []byte) bool {
			switch string(k) {
			case "source":
				p.Source = d.str()
			case "text":
				p.Text = d.str()
			default:
				return false
			}
			return true
		})
		return p
	case typeTurnEnd:
		p := &TurnEnded{}
		d.object(func(k []byte) bool {
			switch string(k) {
			case "reason":
				p.Reason = d.str()
			case "steps":
				p.Steps = d.intField()
			case "usage":
				p.Usage = d.usage()
			case "error":
				if !d.null() {
					p.Error = d.errorInfo()
				}
			default:
				return false
			}
			return true
		})
		return p
	case TypeSystem:
		p := &SystemPrompt{}
		d.object(func(k []byte) bool {
			switch string(k) {
			case "text":
				p.Text = d.str()
			default:
				return false
			}
			return true
		})
		return p
	case typeRecord:
		p := &ToolRecord{}
		d.object(func(k []byte) bool {
			switch string(k) {
			case "call_id":
				p.CallID = d.str()
			case "tool":
				p.Tool = d.str()
			case "name":
				p.Name = d.str()
			case "data":
				p.Data = d.raw()
			default:
				return false
			}
			return true
		})
		return p
	case typeRetry:
		p := &ModelRetry{}
		d.object(func(k []byte) bool {
			switch string(k) {
			case "step":
				p.Step = d.intField()
			case "attempt":
				p.Attempt = d.intField()
			case "code":
				p.Code = harness.Code(d.str())
			case "message":
				p.Message = d.str()
			case "delay_ms":
				p.DelayMS = d.int()
			default:
				return false
			}
			return true
		})
		return p
	case typeFallback:
		p := &ModelFallback{}
		d.object(func(k []byte) bool {
			switch string(k) {
			case "step":
				p.Step = d.intField()
			case "from":
				p.From = d.str()
			case "to":
				p.To = d.str()
			case "code":
				p.Code = harness.Code(d.str())
			case "message":
				p.Message = d.str()
			default:
				return false
			}
			return true
		})
		return p
	case typePrune:
		p := &Pruned{}
		d.object(func(k []byte) bool {
			switch string(k) {
			case "calls":
				p.Calls = list(d, d.prunedCall)
			case "estimated_tokens":
				p.EstimatedTokens = d.int()
			default:
				return false
			}
			return true
		})
		return p
	case typeCompaction:
		p := &Compacted{}
		d.object(func(k []byte) bool {
			switch string(k) {
			case "messages":
				p.Messages = d.intField()
			case "summary":
				p.Summary = d.str()
			case "model":
				p.Model = d.str()
			case "source_tokens":
				p.SourceTokens = d.int()
			case "summary_tokens":
				p.SummaryTokens = d.int()
			case "usage":
				if !d.null() {
					u := d.usage()
					p.Usage = &u
				}
			default:
				return false
			}
			return true
		})
		return p
	case typeApproval, typePermission, typeContext, typeHook, typeCheckpoint, typePaused, typeBudget:
		// Rare events (one per decision): the plain decoder.
		raw := d.raw()
		p, _ := newPayload(typ)
		if d.bad || json.Unmarshal(raw, p) != nil {
			d.fail()
		}
		return p
	}
	return &Unknown{Type: typ, Data: d.raw()}
}

func (d *decoder) prunedCall() (c PrunedCall) {
	d.object(func(k []byte) bool {
		switch string(k) {
		case "call_id":
			c.CallID = d.str()
		case "seq":
			c.Seq = d.int()
		case "placeholder":
			c.Placeholder = d.str()
		default:
			return false
		}
		return true
	})
	return c
}

func (d *decoder) fingerprint() (f Fingerprint) {
	d.object(func(k []byte) bool {
		switch string(k) {
		case "system":
			f.System = d.str()
		case "tools":
			f.Tools = d.str()
		case "history":
			f.History = d.str()
		case "messages":
			f.Messages = d.intField()
		default:
			return false
		}
		return true
	})
	return f
}

func (d *decoder) errorInfo() *ErrorInfo {
	e := &ErrorInfo{}
	d.object(func(k []byte) bool {
		switch string(k) {
		case "code":
			e.Code = harness.Code(d.str())
		case "message":
			e.Message = d.str()
		default:
			return false
		}
		return true
	})
	return e
}

func (d *decoder) usage() (u harness.Usage) {
	d.object(func(k []byte) bool {
		switch string(k) {
		case "input_tokens":
			u.InputTokens = d.int()
		case "output_tokens":
			u.OutputTokens = d.int()
		case "cache_hit_tokens":
			u.CacheHitTokens = d.int()
		case "cache_miss_tokens":
			u.CacheMissTokens = d.int()
		case "reasoning_tokens":
			u.ReasoningTokens = d.int()
		case "cache_write_tokens":
			u.CacheWriteTokens = d.int()
		default:
			return false
		}
		return true
	})
	return u
}

// blocks reads a list of blocks; null is a nil list.
func (d *decoder) blocks() []harness.Block {
	if d.null() {
		return nil
	}
	out := make([]harness.Block, 0, 2)
	for first := true; d.elems(&first); {
		out = append(out, d.block())
	}
	return out
}

func (d *decoder) block() (b harness.Block) {
	d.object(func(k []byte) bool {
		switch string(k) {
		case "type":
			b.Type = harness.BlockType(d.str())
		case "text":
			b.Text = d.str()
		case "signature":
			b.Signature = d.str()
		case "redacted":
			b.Redacted = d.bool()
		case "image":
			if !d.null() {
				b.Image = d.image()
			}
		case "tool_call":
			if !d.null() {
				b.ToolCall = d.toolCall()
			}
		case "tool_result":
			if !d.null() {
				r := d.toolResult()
				b.ToolResult = &r
			}
		default:
			return false
		}
		return true
	})
	return b
}

func (d *decoder) image() *harness.Image {
	img := &harness.Image{}
	d.object(func(k []byte) bool {
		switch string(k) {
		case "digest":
			img.Digest = d.str()
		case "media_type":
			img.MediaType = d.str()
		case "width":
			img.Width = d.intField()
		case "height":
			img.Height = d.intField()
		case "size":
			img.Size = d.int()
		case "name":
			img.Name = d.str()
		default:
			return false
		}
		return true
	})
	return img
}

func (d *decoder) toolCall() *harness.ToolCall {
	c := &harness.ToolCall{}
	d.object(func(k []byte) bool {
		switch string(k) {
		case "id":
			c.ID = d.str()
		case "name":
			c.Name = d.str()
		case "arguments":
			c.Arguments = d.str()
		default:
			return false
		}
		return true
	})
	return c
}

func (d *decoder) toolResult() (r harness.ToolResult) {
	d.object(func(k []byte) bool {
		switch string(k) {
		case "call_id":
			r.CallID = d.str()
		case "name":
			r.Name = d.str()
		case "content":
			r.Content = d.blocks()
		case "is_error":
			r.IsError = d.bool()
		case "code":
			r.Code = harness.Code(d.str())
		case "render":
			if !d.null() {
				r.Render = d.render()
			}
		case "files":
			r.Files = list(d, d.fileAccess)
		default:
			return false
		}
		return true
	})
	return r
}

func (d *decoder) fileAccess() (f harness.FileAccess) {
	d.object(func(k []byte) bool {
		switch string(k) {
		case "op":
			f.Op = harness.FileOp(d.str())
		case "path":
			f.Path = d.str()
		case "version":
			f.Version = d.str()
		case "start_line":
			f.StartLine = d.intField()
		case "end_line":
			f.EndLine = d.intField()
		case "complete":
			f.Complete = d.bool()
		default:
			return false
		}
		return true
	})
	return f
}

func (d *decoder) render() *harness.Render {
	r := &harness.Render{}
	d.object(func(k []byte) bool {
		switch string(k) {
		case "kind":
			r.Kind = harness.RenderKind(d.str())
		case "title":
			r.Title = d.str()
		case "terminal":
			if !d.null() {
				r.Terminal = d.terminal()
			}
		case "diff":
			if !d.null() {
				r.Diff = d.diff()
			}
		case "locations":
			r.Locations = list(d, d.location)
		case "text":
			r.Text = d.str()
		case "questions":
			r.Questions = list(d, d.question)
		case "answers":
			r.Answers = list(d, d.str)
		case "todo":
			r.Todo = list(d, d.todoItem)
		default:
			return false
		}
		return true
	})
	return r
}

func (d *decoder) question() (q harness.Question) {
	d.object(func(k []byte) bool {
		switch string(k) {
		case "question":
			q.Question = d.str()
		case "choices":
			q.Choices = list(d, d.str)
		case "multiple":
			q.Multiple = d.bool()
		default:
			return false
		}
		return true
	})
	return q
}

func (d *decoder) todoItem() (it harness.TodoItem) {
	d.object(func(k []byte) bool {
		switch string(k) {
		case "content":
			it.Content = d.str()
		case "status":
			it.Status = d.str()
		default:
			return false
		}
		return true
	})
	return it
}

func (d *decoder) terminal() *harness.Terminal {
	t := &harness.Terminal{}
	d.object(func(k []byte) bool {
		switch string(k) {
		case "command":
			t.Command = d.str()
		case "cwd":
			t.Cwd = d.str()
		case "output":
			t.Output = d.str()
		case "exit_code":
			if !d.null() {
				n := d.intField()
				t.ExitCode = &n
			}
		case "status":
			t.Status = d.str()
		default:
			return false
		}
		return true
	})
	return t
}

func (d *decoder) diff() *harness.Diff {
	df := &harness.Diff{}
	d.object(func(k []byte) bool {
		switch string(k) {
		case "path":
			df.Path = d.str()
		case "old_text":
			if !d.null() {
				s := d.str()
				df.OldText = &s
			}
		case "new_text":
			df.NewText = d.str()
		case "hunks":
			df.Hunks = list(d, d.hunk)
		case "added":
			df.Added = d.intField()
		case "removed":
			df.Removed = d.intField()
		case "truncated":
			df.Truncated = d.bool()
		default:
			return false
		}
		return true
	})
	return df
}

func (d *decoder) hunk() (h harness.Hunk) {
	d.object(func(k []byte) bool {
		switch string(k) {
		case "old_start":
			h.OldStart = d.intField()
		case "old_lines":
			h.OldLines = d.intField()
		case "new_start":
			h.NewStart = d.intField()
		case "new_lines":
			h.NewLines = d.intField()
		case "lines":
			// A null in a []string keeps "" only by accident of
			// encoding/json: str gives up on it.
			h.Lines = list(d, d.str)
		default:
			return false
		}
		return true
	})
	return h
}

func (d *decoder) location() (l harness.Location) {
	d.object(func(k []byte) bool {
		switch string(k) {
		case "path":
			l.Path = d.str()
		case "start_line":
			l.StartLine = d.intField()
		case "end_line":
			l.EndLine = d.intField()
		default:
			return false
		}
		return true
	})
	return l
}
