package agent

import (
	"fmt"
	"sync"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/imagetext"
)

// imageBudget bounds the images one request carries
// (ContextPolicy.MaxImages and MaxImageBytes). When the history holds
// more, the oldest reach the model as short text placeholders naming the
// attachment, newest kept first, in steps past Count (see omitted); the
// session log keeps every image reference. A zero field means its
// default.
type imageBudget struct {
	// Count is the most images one request carries.
	Count int
	// Bytes is the most image bytes (stored sizes, before any transport
	// encoding) one request carries.
	Bytes int64
}

// Image budget defaults: 20 images and 20 MiB, which stays well inside
// common request-body limits once the bytes are base64-encoded.
const (
	defaultImageBudgetCount = 20
	defaultImageBudgetBytes = 20 << 20
)

func (b imageBudget) withDefaults() imageBudget {
	if b.Count <= 0 {
		b.Count = defaultImageBudgetCount
	}
	if b.Bytes <= 0 {
		b.Bytes = defaultImageBudgetBytes
	}
	return b
}

// Why an image reaches the model as a placeholder.
const (
	omitTextOnly = iota + 1
	omitNoStore
	omitBudget
)

func omitReason(why int, budget imageBudget) string {
	switch why {
	case omitTextOnly:
		return "the current model does not accept image input"
	case omitNoStore:
		return "no attachment store is configured to load it"
	case omitBudget:
		return fmt.Sprintf("one of the oldest images past what a request carries (%d images, at most %d bytes)", budget.Count, budget.Bytes)
	}
	return ""
}

// omitted returns how many of the oldest images go over the budget: at
// least as many as take the newest past Count images or Bytes bytes,
// and, past Count, a whole number of steps of a quarter of Count. Each
// change of the number changes an early part of the history, which a
// provider's prefix cache then misses from there on; in steps, a new
// image past the budget moves that point once every few images instead
// of every time. The number never falls as images are added.
func omitted(refs []imageRef, budget imageBudget) int {
	n := len(refs)
	byCount := 0
	if over := n - budget.Count; over > 0 {
		step := max(budget.Count/4, 1)
		byCount = min((over+step-1)/step*step, n)
	}
	byBytes := 0
	var size int64
	for i := n - 1; i >= 0; i-- {
		size += max(refs[i].img.Size, 0)
		if size > budget.Bytes {
			byBytes = i + 1
			break
		}
	}
	return max(byCount, byBytes)
}

// imageRef locates one image in a message list.
type imageRef struct {
	msg, block, content int // content is -1 for an image block
	img                 *harness.Image
}

// projectImages returns msgs as a model with the given capabilities
// should see them: every image becomes a placeholder when the model does
// not accept images or no store can load them, and the oldest images
// beyond the budget become placeholders otherwise. msgs is never changed:
// changed messages get new block slices (the history shares its blocks).
// A message whose projection is unchanged from the previous request keeps
// the slice it got then, so request fingerprints stay incremental.
func projectImages(msgs []harness.Message, acceptsImages, haveStore bool, budget imageBudget, cache *imageCache) []harness.Message {
	var refs []imageRef
	for i, m := range msgs {
		for j, b := range m.Content {
			switch {
			case b.Type == harness.BlockImage && b.Image != nil:
				refs = append(refs, imageRef{i, j, -1, b.Image})
			case b.Type == harness.BlockToolResult && b.ToolResult != nil:
				for k, c := range b.ToolResult.Content {
					if c.Type == harness.BlockImage && c.Image != nil {
						refs = append(refs, imageRef{i, j, k, c.Image})
					}
				}
			}
		}
	}
	if len(refs) == 0 {
		return msgs
	}
	budget = budget.withDefaults()
	omit := make([]int, len(refs))
	switch {
	case !acceptsImages:
		for i := range omit {
			omit[i] = omitTextOnly
		}
	case !haveStore:
		for i := range omit {
			omit[i] = omitNoStore
		}
	default:
		for i := range omitted(refs, budget) {
			omit[i] = omitBudget
		}
	}

	out := make([]harness.Message, len(msgs))
	copy(out, msgs)
	used := map[cacheKey][]harness.Block{}
	for start := 0; start < len(refs); {
		end := start
		for end < len(refs) && refs[end].msg == refs[start].msg {
			end++
		}
		mi := refs[start].msg
		sig := make([]byte, 0, end-start)
		changed := false
		for _, r := range omit[start:end] {
			sig = append(sig, byte('0'+r))
			changed = changed || r != 0
		}
		if changed {
			content := msgs[mi].Content
			key := cacheKey{first: &content[0], n: len(content), sig: string(sig)}
			blocks, ok := cache.get(key)
			if !ok {
				blocks = replaceImages(content, refs[start:end], omit[start:end], budget)
			}
			used[key] = blocks
			out[mi].Content = blocks
		}
		start = end
	}
	cache.replace(used)
	return out
}

// replaceImages returns a copy of content with the images marked in omit
// replaced by placeholders.
func replaceImages(content []harness.Block, refs []imageRef, omit []int, budget imageBudget) []harness.Block {
	blocks := make([]harness.Block, len(content))
	copy(blocks, content)
	copied := map[int]bool{} // tool result blocks already copied
	for i, r := range refs {
		if omit[i] == 0 {
			continue
		}
		text := imagetext.Placeholder(r.img, omitReason(omit[i], budget))
		if r.content < 0 {
			blocks[r.block] = harness.TextBlock(text)
			continue
		}
		if !copied[r.block] {
			tr := *blocks[r.block].ToolResult
			tr.Content = append([]harness.Block(nil), tr.Content...)
			blocks[r.block].ToolResult = &tr
			copied[r.block] = true
		}
		blocks[r.block].ToolResult.Content[r.content] = harness.TextBlock(text)
	}
	return blocks
}

// imageCache keeps the projected blocks of the previous request, so an
// unchanged projection reuses its slice.
type imageCache struct {
	mu sync.Mutex
	m  map[cacheKey][]harness.Block
}

type cacheKey struct {
	first *harness.Block
	n     int
	sig   string
}

func (c *imageCache) get(k cacheKey) ([]harness.Block, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b, ok := c.m[k]
	return b, ok
}

func (c *imageCache) replace(m map[cacheKey][]harness.Block) {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.m = m
	c.mu.Unlock()
}

type imageCacheKey struct{}
