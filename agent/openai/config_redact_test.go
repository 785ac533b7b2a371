package openai_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/go-harness/harness/agent/openai"
)

func TestConfigNeverPrintsItsKey(t *testing.T) {
	const key = "sk-very-secret-0123456789"
	cfg := openai.Config{BaseURL: "https://api.deepseek.com", APIKey: key, Model: "deepseek-flash"}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%20v"} {
		out := fmt.Sprintf(verb, cfg)
		assert.NotContains(t, out, key, verb)
		assert.Contains(t, out, "deepseek-flash", verb)
	}
	assert.Contains(t, fmt.Sprintf("%+v", cfg), "APIKey:[redacted]")
	assert.Contains(t, fmt.Sprintf("%+v", &cfg), "APIKey:[redacted]", "a pointer prints through the value's Format")

	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("model", "config", cfg)
	assert.NotContains(t, buf.String(), key)
	assert.Contains(t, buf.String(), `"config":{"base_url":"https://api.deepseek.com","model":"deepseek-flash","dialect":"","api_key_set":true}`)

	empty := fmt.Sprintf("%+v", openai.Config{Model: "m"})
	assert.Contains(t, empty, "APIKey: ", "no key: nothing to redact")
	assert.NotContains(t, empty, "[redacted]")
}
