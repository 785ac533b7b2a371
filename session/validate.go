package session

import (
	"fmt"

	"github.com/go-harness/harness"
)

// cleanPayload returns p without the parts that would break whoever reads
// the derived history: blocks and content items that lack the payload
// their type promises (a tool_call block without its call, an image
// without its reference), blocks of unknown types, tool events that name
// no call. It says what it left out, and keep is false when the whole
// event must be skipped. p itself is never changed: a payload with
// something left out is a copy.
func cleanPayload(p Payload) (_ Payload, problems []string, keep bool) {
	switch v := p.(type) {
	case nil:
		return nil, []string{"the event has no data"}, false
	case *UserMessage:
		if cs, dropped := cleanContents(v.Content); dropped != nil {
			c := *v
			c.Content = cs
			return &c, imageProblems("content item", dropped), true
		}
	case *AssistantMessage:
		if bs, probs := cleanBlocks(v.Content); probs != nil {
			c := *v
			c.Content = bs
			return &c, probs, true
		}
	case *ToolStarted:
		if v.CallID == "" {
			return nil, []string{"it names no call (empty call_id)"}, false
		}
	case *ToolFinished:
		if v.CallID == "" {
			return nil, []string{"it names no call (empty call_id)"}, false
		}
		if cs, dropped := cleanContents(v.Result.Content); dropped != nil {
			c := *v
			c.Result.Content = cs
			return &c, imageProblems("result content item", dropped), true
		}
	}
	return p, nil, true
}

// blockProblem says what is wrong with a block, or "" when nothing is.
func blockProblem(b harness.Block) string {
	switch b.Type {
	case harness.BlockText, harness.BlockReasoning:
	case harness.BlockImage:
		if b.Image == nil {
			return "an image block without its image"
		}
	case harness.BlockToolCall:
		if b.ToolCall == nil {
			return "a tool_call block without its tool_call"
		}
	case harness.BlockToolResult:
		if b.ToolResult == nil {
			return "a tool_result block without its tool_result"
		}
	default:
		return fmt.Sprintf("a block of type %q, unknown to this build", b.Type)
	}
	return ""
}

// cleanBlocks returns bs without its invalid blocks, and the invalid
// image items of its tool results, with a description of each. It
// returns bs itself and no problems when all is well.
func cleanBlocks(bs []harness.Block) ([]harness.Block, []string) {
	var out []harness.Block
	var probs []string
	copied := false
	startCopy := func(i int) {
		if !copied {
			out = append(make([]harness.Block, 0, len(bs)), bs[:i]...)
			copied = true
		}
	}
	for i, b := range bs {
		if pr := blockProblem(b); pr != "" {
			probs = append(probs, fmt.Sprintf("content block %d is %s", i+1, pr))
			startCopy(i)
			continue
		}
		if b.Type == harness.BlockToolResult {
			if cs, dropped := cleanContents(b.ToolResult.Content); dropped != nil {
				r := *b.ToolResult
				r.Content = cs
				b.ToolResult = &r
				probs = append(probs, imageProblems(fmt.Sprintf("content block %d: result content item", i+1), dropped)...)
				startCopy(i)
			}
		}
		if copied {
			out = append(out, b)
		}
	}
	if !copied {
		return bs, nil
	}
	return out, probs
}

// cleanContents returns cs without image items that lack their image,
// and the 1-based indexes of those left out. It returns cs itself and no
// indexes when all is well.
func cleanContents(cs []harness.Block) ([]harness.Block, []int) {
	var out []harness.Block
	var dropped []int
	for i, c := range cs {
		if c.Type == harness.BlockImage && c.Image == nil {
			if dropped == nil {
				out = append(make([]harness.Block, 0, len(cs)), cs[:i]...)
			}
			dropped = append(dropped, i+1)
			continue
		}
		if dropped != nil {
			out = append(out, c)
		}
	}
	if dropped == nil {
		return cs, nil
	}
	return out, dropped
}

// imageProblems describes the image items cleanContents left out.
func imageProblems(what string, dropped []int) []string {
	out := make([]string, len(dropped))
	for i, n := range dropped {
		out[i] = fmt.Sprintf("%s %d is an image without its image reference", what, n)
	}
	return out
}
