// Package webtest is for testing code that uses web search: [Searcher]
// is an in-memory [web.Searcher] that answers from a table and records
// the queries it got, and [TestSearcher] checks that any Searcher keeps
// the contract (run it against a provider's test server, or a real
// provider with a key).
//
// It imports harness, tools/web and testing.
package webtest

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools/web"
)

// Searcher answers queries from Results, keyed by the query text as the
// tool sends it (words separated by single spaces); a query with no
// entry gets no results. Err, when set, is returned instead. It is safe
// for concurrent use; the zero value answers nothing.
type Searcher struct {
	Results map[string][]web.Result
	Err     error

	mu      sync.Mutex
	queries []web.Query
}

// Search returns the results for q.Text, at most q.Count of them.
func (s *Searcher) Search(ctx context.Context, q web.Query) ([]web.Result, error) {
	s.mu.Lock()
	s.queries = append(s.queries, q)
	s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, &harness.Error{Code: harness.CodeAborted, Message: "the search was cancelled", Err: err}
	}
	if s.Err != nil {
		return nil, s.Err
	}
	rs := s.Results[q.Text]
	if q.Count < len(rs) {
		rs = rs[:q.Count]
	}
	return append([]web.Result(nil), rs...), nil
}

// Queries returns the queries Search got, in order.
func (s *Searcher) Queries() []web.Query {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]web.Query(nil), s.queries...)
}

// TestSearcher checks a Searcher against the contract with a query that
// has results: at most Count results come back, each with an absolute
// http(s) URL; a cancelled context fails with an error rather than
// results.
func TestSearcher(t *testing.T, s web.Searcher, query string) {
	t.Helper()
	for _, n := range []int{1, 3} {
		rs, err := s.Search(context.Background(), web.Query{Text: query, Count: n})
		if err != nil {
			t.Fatalf("Search(%q, count %d): %v", query, n, err)
		}
		if len(rs) == 0 {
			t.Fatalf("Search(%q, count %d): no results; give a query that has some", query, n)
		}
		if len(rs) > n {
			t.Errorf("Search(%q, count %d) returned %d results", query, n, len(rs))
		}
		for i, r := range rs {
			u, err := url.Parse(r.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				t.Errorf("result %d has URL %q, not an absolute http(s) URL", i, r.URL)
			}
			if strings.TrimSpace(r.Title) == "" && strings.TrimSpace(r.Snippet) == "" {
				t.Errorf("result %d (%s) has neither title nor snippet", i, r.URL)
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rs, err := s.Search(ctx, web.Query{Text: query, Count: 3})
	if err == nil {
		t.Errorf("Search with a cancelled context returned %d results and no error", len(rs))
	} else if !errors.Is(err, context.Canceled) && harness.CodeOf(err) == "" {
		t.Errorf("Search with a cancelled context: %v; want an error that matches context.Canceled or has a harness code", err)
	}
}
