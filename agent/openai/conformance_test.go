package openai_test

import (
	"testing"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/agent/model/modeltest"
	"github.com/go-harness/harness/agent/openai"
	"github.com/go-harness/harness/agent/openai/openaitest"
)

// The adapter keeps the Model contract, in each dialect, against the fake
// endpoint: each answer streams reasoning, text, usage and a finish.
func TestModelConformance(t *testing.T) {
	for _, d := range []openai.Dialect{openai.DialectDeepSeek, openai.DialectOpenAI, openai.DialectGeneric} {
		t.Run(string(d), func(t *testing.T) {
			modeltest.TestModel(t, func(t *testing.T) model.Model {
				answer := openaitest.Reply{Chunks: []openaitest.Chunk{
					{Reasoning: "The user wants a greeting."},
					{Text: "Hello"},
					{Text: "!"},
					{Usage: &harness.Usage{InputTokens: 12, OutputTokens: 3}},
					{Finish: "stop"},
				}}
				p := newProvider(t, answer, answer, answer, answer)
				return p.model(openai.Config{Dialect: d})
			})
		})
	}
}
