package webtest_test

import (
	"testing"

	"github.com/go-harness/harness/tools/web"
	"github.com/go-harness/harness/tools/web/webtest"
)

func TestFakeKeepsTheContract(t *testing.T) {
	s := &webtest.Searcher{Results: map[string][]web.Result{"go": {
		{Title: "Go", URL: "https://go.dev/"}, {Title: "Tour", URL: "https://go.dev/tour/"}, {Snippet: "spec", URL: "https://go.dev/ref/spec"},
	}}}
	webtest.TestSearcher(t, s, "go")
	if n := len(s.Queries()); n != 3 {
		t.Fatalf("the conformance check made %d queries, want 3", n)
	}
}
