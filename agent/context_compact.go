package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/textcut"
)

// summaryReserve is the room, in tokens, a summarizing request that
// repeats the conversation needs beyond it: the instruction and the
// answer, reasoning included (an eighth of a smaller window).
const summaryReserve = 8000

// addUsage sums two optional usages.
func addUsage(a, b *harness.Usage) *harness.Usage {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	u := *a
	u.Add(*b)
	return &u
}

const compactionSections = `## Goal — what the user asked for, with their constraints.
## Done — what has been done and verified, with file paths.
## State — files changed and how; commands that matter and their outcomes; errors still open.
## Decisions — choices made and why.
## Next — the next concrete steps.
Keep exact names, paths, identifiers and error messages. Be brief: a few hundred words at most.`

const compactionSystem = `You compress the history of a coding agent's session so the agent can continue from your summary alone. Write only the summary, in these sections:
` + compactionSections

// compactionInstruction ends a summarizing request that repeats the
// conversation. It starts with a marker a test double can recognize.
const compactionInstruction = `<compaction request>
Pause the task here and do not call any tool. The conversation so far is about to be replaced by a summary: the work will continue from your summary and the messages that follow this point. Write only the summary, in these sections:
` + compactionSections

// summaryRequest is the first split messages of req followed by the
// instruction to summarize them, under req's system prompt and tools: a
// prefix of requests already sent, so the provider reads it from its
// cache. A structured answer asked for by the turn is left out; the
// summary is plain text.
func summaryRequest(req *model.Request, split int) *model.Request {
	msgs := make([]harness.Message, split, split+1)
	copy(msgs, req.Messages[:split])
	msgs = append(msgs, harness.Message{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock(compactionInstruction)}})
	return &model.Request{System: req.System, Tools: req.Tools, Images: req.Images, Messages: msgs}
}

// transcriptRequest asks for a summary of msgs written out as a
// transcript, under the summarizer's system prompt and without tools.
func transcriptRequest(msgs []harness.Message) *model.Request {
	return &model.Request{
		System:   compactionSystem,
		Messages: []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock(renderTranscript(msgs))}}},
	}
}

// errNoSummary is a summarizing answer without text (tool calls only).
var errNoSummary = errors.New("the model answered the summary request without a summary")

// summarize asks m for a summary with req. It returns the call's usage
// too, when the model reported one, for the log.
func summarize(ctx context.Context, m model.Model, req *model.Request) (string, *harness.Usage, error) {
	asm := &model.Assembler{}
	for c, err := range m.Stream(ctx, req) {
		if err != nil {
			return "", nil, err
		}
		asm.Add(c)
	}
	if err := ctx.Err(); err != nil {
		return "", nil, err
	}
	var usage *harness.Usage
	if u, ok := asm.Usage(); ok {
		usage = &u
	}
	text := strings.TrimSpace(asm.Message().Text())
	if text == "" {
		return "", usage, errNoSummary
	}
	return text, usage, nil
}

// renderTranscript writes messages as plain text for summarization, with
// long tool results cut to their head and tail. A block without its
// payload (a damaged or hand-edited log) is named, never dereferenced.
func renderTranscript(msgs []harness.Message) string {
	const resultHead, resultTail = 3000, 1000
	var b strings.Builder
	b.WriteString("Summarize this conversation between a user and a coding agent:\n\n")
	for _, m := range msgs {
		role := strings.ToUpper(string(m.Role))
		for _, blk := range m.Content {
			switch blk.Type {
			case harness.BlockText:
				fmt.Fprintf(&b, "%s: %s\n\n", role, blk.Text)
			case harness.BlockToolCall:
				if blk.ToolCall == nil {
					fmt.Fprintf(&b, "%s called a tool (the call is missing from the log)\n\n", role)
					continue
				}
				fmt.Fprintf(&b, "ASSISTANT called %s %s\n\n", blk.ToolCall.Name, textcut.Prefix(blk.ToolCall.Arguments, 2000))
			case harness.BlockToolResult:
				r := blk.ToolResult
				if r == nil {
					b.WriteString("RESULT of a tool call (the result is missing from the log)\n\n")
					continue
				}
				var text strings.Builder
				for _, c := range r.Content {
					if c.Type == harness.BlockImage {
						text.WriteString(imageName(c.Image))
						continue
					}
					text.WriteString(c.Text)
				}
				s := text.String()
				if len(s) > resultHead+resultTail {
					s = textcut.HeadLines(s, resultHead) + fmt.Sprintf("\n[... %d bytes omitted ...]\n", len(s)-resultHead-resultTail) + textcut.TailLines(s, resultTail)
				}
				status := ""
				if r.IsError {
					status = " (error " + string(r.Code) + ")"
				}
				fmt.Fprintf(&b, "RESULT of %s%s:\n%s\n\n", r.Name, status, s)
			case harness.BlockImage:
				fmt.Fprintf(&b, "%s: %s\n\n", role, imageName(blk.Image))
			}
		}
	}
	return b.String()
}

// imageName names an image in a transcript; nil is an image whose
// reference is missing from the log.
func imageName(img *harness.Image) string {
	if img == nil {
		return "[image missing from the log]"
	}
	return "[image " + img.Name + "]"
}
