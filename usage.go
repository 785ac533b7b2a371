package harness

// Usage counts the tokens of one model call or a sum of calls.
type Usage struct {
	// InputTokens counts every prompt token, cached or not.
	InputTokens int64 `json:"input_tokens"`
	// OutputTokens counts every completion token, reasoning included.
	OutputTokens int64 `json:"output_tokens"`
	// CacheHitTokens and CacheMissTokens split InputTokens where the
	// provider reports prefix-cache use.
	CacheHitTokens  int64 `json:"cache_hit_tokens,omitempty"`
	CacheMissTokens int64 `json:"cache_miss_tokens,omitempty"`
	// CacheWriteTokens is the part of CacheMissTokens the provider wrote
	// to its prompt cache, where it bills writing apart (Anthropic's
	// cache creation tokens).
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	// ReasoningTokens is the part of OutputTokens spent on reasoning.
	ReasoningTokens int64 `json:"reasoning_tokens,omitempty"`
}

// Add adds o to u.
func (u *Usage) Add(o Usage) {
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheHitTokens += o.CacheHitTokens
	u.CacheMissTokens += o.CacheMissTokens
	u.CacheWriteTokens += o.CacheWriteTokens
	u.ReasoningTokens += o.ReasoningTokens
}

// Reminder is advisory text the harness adds for the model after a
// step's tool results (a repeated-call warning, say). The model sees it
// as user text, and it is logged like everything the model sees.
type Reminder struct {
	// Source names what added it ("repeat_guard", say).
	Source string `json:"source"`
	Text   string `json:"text"`
}

// Modality is a kind of input a model can take. A model declares the
// modalities it takes as a []Modality (model.Info.Input, which tools see
// as tools.Env.ModelInput). Text is always accepted, listed or not; any
// other modality only when listed, so a model whose capabilities are
// unknown (nothing listed) takes text only. Ask with
// slices.Contains(input, harness.ModalityImage).
type Modality string

// The modalities a model may take.
const (
	ModalityText  Modality = "text"
	ModalityImage Modality = "image"
)
