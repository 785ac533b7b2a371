package session

import "github.com/go-harness/harness"

// contentBlocks returns the blocks of a user message as the derived
// history holds them: image blocks stay, and any other block becomes a
// text block with its text, so a user message of the history only ever
// holds text and images whatever its logged blocks said.
func contentBlocks(cs []harness.Block) []harness.Block {
	out := make([]harness.Block, 0, len(cs))
	for _, c := range cs {
		switch c.Type {
		case harness.BlockImage:
			out = append(out, harness.Block{Type: harness.BlockImage, Image: c.Image})
		default:
			out = append(out, harness.TextBlock(c.Text))
		}
	}
	return out
}
