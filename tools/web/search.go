package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
)

// Searcher is a web search provider: one query in, ranked results out.
// Implementations must honour ctx and return at most q.Count results,
// each with an absolute http or https URL;
// an error should be a *harness.Error whose code says what failed
// (harness.CodeAuth for a refused key, harness.CodeRateLimit,
// harness.CodeTransport, harness.CodeServer) and whose message the model
// can act on. Package webtest has a double and a conformance check.
type Searcher interface {
	Search(ctx context.Context, q Query) ([]Result, error)
}

// Query is one search.
type Query struct {
	// Text is what to search for.
	Text string
	// Count is the most results wanted, at least 1.
	Count int
}

// Result is one search result.
type Result struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet,omitempty"`
	// Age is how old the page is, as the provider says it ("2 days
	// ago", a date), or "".
	Age string `json:"age,omitempty"`
}

// SearchConfig configures the web_search tool.
type SearchConfig struct {
	// Searcher is the provider; it is required.
	Searcher Searcher
	// Name is the provider's name in results ("Brave Search"). Empty
	// means "the search provider".
	Name string
	// Timeout bounds one search. Zero means 20 seconds.
	Timeout time.Duration
	// MaxResults is the most results one call returns, and the default
	// count. Zero means 10.
	MaxResults int
}

type searchArgs struct {
	Query string `json:"query" jsonschema:"What to search the web for."`
	Count int    `json:"count,omitempty" jsonschema:"How many results to return (default and maximum: the tool's limit, usually 10)."`
}

// Limits of what one result shows.
const (
	maxTitle   = 200
	maxSnippet = 500
	maxQuery   = 400
)

// Search returns the web_search tool: web_search(query, count?) asks
// the configured provider and returns its results as a numbered list of
// title, URL and snippet. Results whose URL is not http or https are
// dropped; titles and snippets are stripped of HTML and cut. The render
// is a generic card whose text is the same list. An invalid field of
// cfg is an error matching harness.CodeInvalidOption.
func Search(cfg SearchConfig) (tools.Tool, error) {
	if cfg.Searcher == nil {
		return nil, optionError("SearchConfig.Searcher is nil: give a provider, such as web.Brave(...)")
	}
	s := &searchTool{searcher: cfg.Searcher, name: cfg.Name, timeout: 20 * time.Second, max: 10}
	if s.name == "" {
		s.name = "the search provider"
	}
	var errs []error
	switch {
	case cfg.Timeout < 0:
		errs = append(errs, optionError("SearchConfig.Timeout is %v: it must not be negative (zero keeps the default, 20s)", cfg.Timeout))
	case cfg.Timeout > 0:
		s.timeout = cfg.Timeout
	}
	switch {
	case cfg.MaxResults < 0:
		errs = append(errs, optionError("SearchConfig.MaxResults is %d: it must not be negative (zero keeps the default, 10)", cfg.MaxResults))
	case cfg.MaxResults > 0:
		s.max = cfg.MaxResults
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	spec := tools.Spec{
		Name: "web_search",
		Description: fmt.Sprintf("Search the web with %s. Returns a numbered list of results, each a title, a URL and a snippet; fetch a result's page with web_fetch. "+
			"Use it for what is not in the workspace: current documentation, error messages, release notes. At most %d results per call.", s.name, s.max),
		ConcurrencySafe: true,
		Family:          tools.FamilyNetwork,
		Deadline:        s.timeout + 10*time.Second,
		Render:          harness.RenderGeneric,
	}
	return tools.Define(spec, s.search), nil
}

type searchTool struct {
	searcher Searcher
	name     string
	timeout  time.Duration
	max      int
}

func (s *searchTool) search(ctx context.Context, _ *tools.Call, in searchArgs) (*harness.ToolResult, error) {
	q := strings.Join(strings.Fields(in.Query), " ")
	if q == "" {
		return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: "query is empty: say what to search for."}
	}
	if len([]rune(q)) > maxQuery {
		return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf("the query is %d characters long; search providers take at most %d. Shorten it.", len([]rune(q)), maxQuery)}
	}
	n := in.Count
	if n <= 0 || n > s.max {
		n = s.max
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	results, err := s.searcher.Search(ctx, Query{Text: q, Count: n})
	if err != nil {
		if harness.CodeOf(err) == "" || harness.CodeOf(err) == harness.CodeUnknown {
			code := harness.CodeTransport
			if ctx.Err() != nil {
				code = harness.CodeTimeout
			}
			return nil, &harness.Error{Code: code, Message: fmt.Sprintf("the search with %s failed: %v", s.name, err), Err: err}
		}
		return nil, err
	}
	var kept []Result
	for _, r := range results {
		if len(kept) == n {
			break
		}
		u, err := url.Parse(strings.TrimSpace(r.URL))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			continue
		}
		kept = append(kept, Result{URL: u.String(), Title: plain(r.Title, maxTitle), Snippet: plain(r.Snippet, maxSnippet), Age: plain(r.Age, 40)})
	}
	var b strings.Builder
	if len(kept) == 0 {
		fmt.Fprintf(&b, "No results from %s for %q.", s.name, q)
	} else {
		fmt.Fprintf(&b, "%d results from %s for %q:\n", len(kept), s.name, q)
		for i, r := range kept {
			title := r.Title
			if title == "" {
				title = "(no title)"
			}
			fmt.Fprintf(&b, "\n%d. %s\n   %s\n", i+1, title, r.URL)
			if r.Age != "" {
				fmt.Fprintf(&b, "   (%s)\n", r.Age)
			}
			if r.Snippet != "" {
				fmt.Fprintf(&b, "   %s\n", r.Snippet)
			}
		}
	}
	text := strings.TrimRight(b.String(), "\n")
	return &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(text)},
		Render:  &harness.Render{Kind: harness.RenderGeneric, Title: "Search " + strconv.Quote(cut(q, 80)), Text: text},
	}, nil
}

// plain turns a provider's title or snippet into one line of plain
// text: tags removed, entities decoded, whitespace collapsed, control
// characters dropped, cut to n runes.
func plain(s string, n int) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>' && in:
			in = false
			b.WriteByte(' ')
		case in:
		default:
			b.WriteRune(r)
		}
	}
	t := html.UnescapeString(b.String())
	t = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, t)
	t = strings.Join(strings.Fields(t), " ")
	t = strings.ReplaceAll(t, " ,", ",")
	return cut(t, n)
}

// BraveConfig configures the Brave Search API provider.
type BraveConfig struct {
	// Key is the API subscription token (the X-Subscription-Token
	// header); it is required. Hosts usually read it from the
	// BRAVE_SEARCH_API_KEY environment variable.
	Key string
	// Endpoint is the web search endpoint. Empty means
	// https://api.search.brave.com/res/v1/web/search.
	Endpoint string
	// Client is the HTTP client. Nil means http.DefaultClient (the
	// endpoint is fixed, so the environment's proxy settings apply).
	Client *http.Client
}

// BraveEndpoint is the Brave Search API's web search endpoint.
const BraveEndpoint = "https://api.search.brave.com/res/v1/web/search"

// Brave returns a Searcher over the Brave Search API's web search
// (GET with q and count, key in X-Subscription-Token; results from
// web.results[]: title, url, description, age). A missing key is an
// error matching harness.CodeInvalidOption.
func Brave(cfg BraveConfig) (Searcher, error) {
	if strings.TrimSpace(cfg.Key) == "" {
		return nil, optionError("BraveConfig.Key is empty: set the Brave Search API key (BRAVE_SEARCH_API_KEY)")
	}
	b := &brave{key: cfg.Key, endpoint: BraveEndpoint, client: cfg.Client}
	if cfg.Endpoint != "" {
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, optionError("BraveConfig.Endpoint %q is not an http or https URL", cfg.Endpoint)
		}
		b.endpoint = cfg.Endpoint
	}
	if b.client == nil {
		b.client = http.DefaultClient
	}
	return b, nil
}

type brave struct {
	key, endpoint string
	client        *http.Client
}

// braveMax is the most results the API returns for one request.
const braveMax = 20

// braveResponse is the part of the API's WebSearchApiResponse read.
type braveResponse struct {
	Web struct {
		Results []struct {
			Title       string `json:"title"`
			URL         string `json:"url"`
			Description string `json:"description"`
			Age         string `json:"age"`
		} `json:"results"`
	} `json:"web"`
}

// braveError is the API's error body.
type braveError struct {
	Error struct {
		Code   string `json:"code"`
		Detail string `json:"detail"`
		Status int    `json:"status"`
	} `json:"error"`
}

func (b *brave) Search(ctx context.Context, q Query) ([]Result, error) {
	n := min(max(q.Count, 1), braveMax)
	v := url.Values{"q": {q.Text}, "count": {strconv.Itoa(n)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.endpoint+"?"+v.Encode(), nil)
	if err != nil {
		return nil, &harness.Error{Code: harness.CodeInvalidRequest, Message: "the Brave search request could not be made: " + err.Error(), Err: err}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Subscription-Token", b.key)
	resp, err := b.client.Do(req)
	if err != nil {
		code := harness.CodeTransport
		if ctx.Err() != nil {
			code = harness.CodeTimeout
		}
		return nil, &harness.Error{Code: code, Message: "Brave Search could not be reached: " + unwrapAll(err).Error(), Err: err}
	}
	defer resp.Body.Close()
	body, _, err := readCapped(resp.Body, 4<<20)
	if err != nil {
		return nil, &harness.Error{Code: harness.CodeTransport, Message: "reading Brave Search's answer failed: " + err.Error(), Err: err}
	}
	if resp.StatusCode != http.StatusOK {
		var e braveError
		detail := ""
		if json.Unmarshal(body, &e) == nil && e.Error.Detail != "" {
			detail = ": " + plain(e.Error.Detail, 300)
		}
		code := harness.CodeServer
		switch {
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			code = harness.CodeAuth
		case resp.StatusCode == http.StatusTooManyRequests:
			code = harness.CodeRateLimit
		case resp.StatusCode < 500:
			code = harness.CodeInvalidRequest
		}
		return nil, &harness.Error{Code: code, Message: fmt.Sprintf("Brave Search answered %s%s", resp.Status, detail)}
	}
	var r braveResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, &harness.Error{Code: harness.CodeServer, Message: "Brave Search's answer is not the JSON it documents: " + err.Error(), Err: err}
	}
	out := make([]Result, 0, len(r.Web.Results))
	for _, x := range r.Web.Results {
		if len(out) == n {
			break
		}
		if u, err := url.Parse(x.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			continue
		}
		out = append(out, Result{Title: x.Title, URL: x.URL, Snippet: x.Description, Age: x.Age})
	}
	return out, nil
}
