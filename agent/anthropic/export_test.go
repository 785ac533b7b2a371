package anthropic

import (
	"context"
	"testing"

	"github.com/go-harness/harness/agent/model"
)

// BodyForHost returns the body the model sends for req to baseURL's
// host, without sending it, for the tests.
func BodyForHost(t *testing.T, baseURL string, req *model.Request) []byte {
	t.Helper()
	m, err := New(Config{BaseURL: baseURL, APIKey: "k", Model: "claude-sonnet-5-5"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.(*messagesModel).body(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// LookupModel is the catalog, for the tests.
func LookupModel(id string) (model.Info, bool) {
	info, _, ok := lookupModel(id)
	return info, ok
}
