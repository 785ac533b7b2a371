package web

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/internal/units"
	"github.com/go-harness/harness/internal/webhost"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// FetchConfig configures the web_fetch tool. The zero value is the
// default: public addresses only, no permission rules consulted.
type FetchConfig struct {
	// Timeout bounds one fetch: connecting, every redirect, and reading
	// the body. Zero means 30 seconds.
	Timeout time.Duration
	// MaxBytes is the most of a body that is read; the rest is not
	// downloaded, and the result says the page was cut. Zero means 10 MiB.
	MaxBytes int64
	// MaxRedirects is the most redirects one fetch follows. Zero means 10.
	MaxRedirects int
	// Policy is the session's permission policy. Its WebFetch rules are
	// asked again for every host a redirect leads to (a deny rule
	// refuses it; a host no allow rule names stops the fetch with a
	// result that says where the redirect leads), and an allow rule that
	// names a host exactly, such as WebFetch(domain:127.0.0.1), lets
	// the fetch reach that host at a loopback or private address. Nil
	// means no rules: redirects to any public host are followed.
	Policy *permission.Policy
	// PrivateHosts are hosts (names or addresses, as a URL writes them)
	// that may be reached at loopback, private or link-local addresses,
	// as an exact allow rule would allow them.
	PrivateHosts []string
	// PrivateNets are address ranges that may be reached though they
	// are loopback, private or link-local, whatever the host's name.
	PrivateNets []netip.Prefix
	// Resolver looks up host names. Nil means the system's resolver.
	Resolver Resolver
	// UserAgent is the User-Agent header sent. Empty means
	// "harness-web-fetch/1".
	UserAgent string
	// TLS, when set, is the TLS configuration of connections (tests
	// trust their own certificate with it). Nil means the system's roots.
	TLS *tls.Config
}

// Defaults.
const (
	defaultTimeout      = 30 * time.Second
	defaultMaxBytes     = 10 << 20
	defaultMaxRedirects = 10
	defaultUserAgent    = "harness-web-fetch/1"
)

type fetchArgs struct {
	URL    string `json:"url" jsonschema:"The http or https URL to fetch."`
	Prompt string `json:"prompt,omitempty" jsonschema:"What you look for in the page (words; not sent anywhere)."`
}

// fetcher is a configured web_fetch tool.
type fetcher struct {
	timeout   time.Duration
	maxBytes  int64
	userAgent string
	guard     *guard
	tls       *tls.Config
}

// Fetch returns the web_fetch tool: web_fetch(url, prompt?) reads a
// web page over HTTP(S) and returns it as text: HTML converted to
// Markdown (its main content when one is found), text and JSON as they
// are. See the package documentation for what it refuses and why. An
// invalid field of cfg is an error matching harness.CodeInvalidOption.
func Fetch(cfg FetchConfig) (tools.Tool, error) {
	f := &fetcher{timeout: defaultTimeout, maxBytes: defaultMaxBytes, userAgent: defaultUserAgent, tls: cfg.TLS}
	g := &guard{policy: cfg.Policy, hosts: map[string]bool{}, nets: cfg.PrivateNets, resolver: cfg.Resolver, maxRedirs: defaultMaxRedirects}
	var errs []error
	switch {
	case cfg.Timeout < 0:
		errs = append(errs, optionError("FetchConfig.Timeout is %v: it must not be negative (zero keeps the default, 30s)", cfg.Timeout))
	case cfg.Timeout > 0:
		f.timeout = cfg.Timeout
	}
	switch {
	case cfg.MaxBytes < 0:
		errs = append(errs, optionError("FetchConfig.MaxBytes is %d: it must not be negative (zero keeps the default, 10 MiB)", cfg.MaxBytes))
	case cfg.MaxBytes > 0:
		f.maxBytes = cfg.MaxBytes
	}
	switch {
	case cfg.MaxRedirects < 0:
		errs = append(errs, optionError("FetchConfig.MaxRedirects is %d: it must not be negative (zero keeps the default, 10)", cfg.MaxRedirects))
	case cfg.MaxRedirects > 0:
		g.maxRedirs = cfg.MaxRedirects
	}
	for _, h := range cfg.PrivateHosts {
		hs, err := webhost.Parse(h)
		if err != nil {
			errs = append(errs, optionError("FetchConfig.PrivateHosts: %q: %v", h, err))
			continue
		}
		g.hosts[hs.Name] = true
	}
	for _, n := range cfg.PrivateNets {
		if !n.IsValid() {
			errs = append(errs, optionError("FetchConfig.PrivateNets: %v is not a valid prefix", n))
		}
	}
	if cfg.UserAgent != "" {
		f.userAgent = cfg.UserAgent
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	g.dialer = net.Dialer{Timeout: f.timeout}
	f.guard = g
	spec := tools.Spec{
		Name: "web_fetch",
		Description: "Fetch an http or https URL as text: HTML as Markdown (the main content when found), text and JSON as they are; images, PDFs and binaries are refused. " +
			"A large page is saved whole and shown in part, with a spill:// path for the rest. " +
			"Loopback, private, link-local and metadata addresses are refused unless the user allowed the host. " +
			"A redirect to a host not allowed is not followed: the result names the URL. " +
			"No model reads the page: prompt's words are looked up, and the sections where they appear most are listed with line numbers.",
		ConcurrencySafe: true,
		Family:          tools.FamilyNetwork,
		Deadline:        f.timeout + 30*time.Second,
		Render:          harness.RenderGeneric,
	}
	return tools.Define(spec, f.fetch), nil
}

func optionError(format string, args ...any) error {
	return &harness.Error{Code: harness.CodeInvalidOption, Message: "web: " + fmt.Sprintf(format, args...)}
}

// The codes only this package reports, besides the shared ones. Their
// text is public API: match one with errors.Is(err,
// harness.Code("http_status")) or compare ToolResult.Code.
const (
	// codeHTTPStatus (http_status): the server answered with an error
	// status (4xx or 5xx); the message gives the status and the start of
	// the page.
	codeHTTPStatus harness.Code = "http_status"
)

func (f *fetcher) fetch(ctx context.Context, _ *tools.Call, in fetchArgs) (*harness.ToolResult, error) {
	raw := strings.TrimSpace(in.URL)
	if raw == "" {
		return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: "url is empty: give the http or https URL to fetch."}
	}
	if len(raw) > 16<<10 {
		return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf("the URL is %s long; web_fetch takes URLs of at most 16 KiB.", units.Bytes(int64(len(raw))))}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf("%q is not a valid URL: %v.", raw, err)}
	}
	if _, err := f.guard.checkURL(u); err != nil {
		return nil, f.explain(raw, err)
	}
	u.Fragment, u.RawFragment = "", ""

	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	transport := &http.Transport{
		Proxy:                  nil, // a proxy would connect for us, past the address checks
		DialContext:            f.guard.dial,
		TLSClientConfig:        f.tlsConfig(),
		TLSHandshakeTimeout:    f.timeout,
		ResponseHeaderTimeout:  f.timeout,
		MaxResponseHeaderBytes: 256 << 10,
		ForceAttemptHTTP2:      true,
		DisableKeepAlives:      true,
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{
		Transport: transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			urls := make([]*url.URL, len(via))
			for i, v := range via {
				urls[i] = v.URL
			}
			return f.guard.checkRedirect(req.URL, urls)
		},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf("%q is not a URL web_fetch can request: %v.", raw, err)}
	}
	req.Header.Set("User-Agent", f.userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.5")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		var r *redirectElsewhere
		if errors.As(err, &r) {
			return redirectResult(r), nil
		}
		return nil, f.explain(raw, err)
	}
	defer resp.Body.Close()

	body, cut, err := readCapped(resp.Body, f.maxBytes)
	if err != nil {
		return nil, f.explain(raw, fmt.Errorf("reading the body (after %s): %w", units.Bytes(int64(len(body))), err))
	}
	final := resp.Request.URL
	return f.render(ctx, in, raw, final, resp, body, cut, time.Since(start))
}

// tlsConfig is the configuration of TLS connections.
func (f *fetcher) tlsConfig() *tls.Config {
	if f.tls != nil {
		return f.tls.Clone()
	}
	return &tls.Config{MinVersion: tls.VersionTLS12}
}

// readCapped reads r up to max bytes and reports whether there was more.
// It stops reading at the cap: the rest is never downloaded.
func readCapped(r io.Reader, max int64) ([]byte, bool, error) {
	buf := make([]byte, 0, min(max+1, 64<<10))
	lr := io.LimitReader(r, max+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return buf, false, err
		}
	}
	if int64(len(buf)) > max {
		return buf[:max], true, nil
	}
	return buf, false, nil
}

// explain turns a failure into an error for the model.
func (f *fetcher) explain(raw string, err error) error {
	var r *refusal
	if errors.As(err, &r) {
		return &harness.Error{Code: harness.CodeDenied, Message: "web_fetch refused " + raw + ": " + r.msg, Err: err}
	}
	if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		return &harness.Error{Code: harness.CodeTimeout, Err: err,
			Message: fmt.Sprintf("web_fetch gave up on %s after %v: the server did not answer, or did not finish sending, in time (%v).", raw, f.timeout, unwrapAll(err))}
	}
	if errors.Is(err, context.Canceled) {
		return &harness.Error{Code: harness.CodeAborted, Message: "web_fetch of " + raw + " was cancelled.", Err: err}
	}
	return &harness.Error{Code: harness.CodeTransport, Err: err, Message: fmt.Sprintf("web_fetch could not fetch %s: %v.", raw, unwrapAll(err))}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// unwrapAll strips the url.Error wrapping (which repeats the method and
// URL) from an error's text.
func unwrapAll(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redirectResult tells the model where a redirect to a host no rule
// allows leads.
func redirectResult(r *redirectElsewhere) *harness.ToolResult {
	msg := fmt.Sprintf("%s redirects to another host: %s\nIt was not followed, since no rule allows that host. If you want its content, call web_fetch with that URL (which may ask the user for permission).", r.from, r.to)
	return &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(msg)},
		Render:  &harness.Render{Kind: harness.RenderGeneric, Title: "Fetch " + short(r.from), Text: "redirects to " + r.to},
	}
}

// short is a URL without its scheme, cut for a card title.
func short(raw string) string {
	s := strings.TrimPrefix(strings.TrimPrefix(raw, "https://"), "http://")
	return cut(s, 80)
}

// render builds the result of a fetched page.
func (f *fetcher) render(ctx context.Context, in fetchArgs, raw string, final *url.URL, resp *http.Response, body []byte, truncated bool, took time.Duration) (*harness.ToolResult, error) {
	ct := resp.Header.Get("Content-Type")
	head := body[:min(len(body), 8<<10)]
	j, err := judge(ct, head)
	if err != nil {
		if resp.StatusCode >= 400 {
			return nil, &harness.Error{Code: codeHTTPStatus, Message: fmt.Sprintf("%s answered %s.", raw, resp.Status)}
		}
		return nil, &harness.Error{Code: harness.CodeUnsupportedFormat, Message: "web_fetch did not return " + raw + ": " + err.Error(), Err: err}
	}
	d := decode(body, ct, j.form, truncated)

	var header []string
	header = append(header, "URL: "+final.String())
	if final.String() != raw {
		header = append(header, "Requested: "+raw)
	}
	var text, kind string
	var title string
	switch j.form {
	case formHTML:
		p, err := toMarkdown(ctx, d.text, final)
		if err != nil {
			if ctx.Err() != nil {
				return nil, f.explain(raw, ctx.Err())
			}
			return nil, &harness.Error{Code: harness.CodeToolFailed, Message: fmt.Sprintf("the HTML of %s could not be converted: %v.", raw, err)}
		}
		text, title = p.markdown, p.title
		kind = "HTML, converted to Markdown (the whole page)"
		if p.main {
			kind = "HTML, converted to Markdown (the main content; navigation and other parts left out)"
		}
		if p.plain != "" {
			kind = "HTML, reduced to its text (" + p.plain + ")"
		}
		if p.pruned > 0 {
			header = append(header, fmt.Sprintf("Note: %d elements nested more than %d deep were left out.", p.pruned, maxDepth))
		}
	case formJSON:
		text, kind = d.text, "JSON"
	default:
		text, kind = d.text, j.label
		if kind == "" {
			kind = "text"
		}
	}
	title = cut(oneLine(title), 300)
	if title != "" {
		header = append(header, "Title: "+title)
	}
	typeLine := "Type: " + kind
	if j.note != "" {
		typeLine += " (" + j.note + ")"
	}
	header = append(header, typeLine)
	if resp.StatusCode >= 300 {
		header = append(header, "Status: "+resp.Status)
	}
	if truncated {
		header = append(header, fmt.Sprintf("Note: the page is larger than %s; only its first %s were read.", units.Bytes(f.maxBytes), units.Bytes(f.maxBytes)))
	}
	if d.replaced > 0 {
		header = append(header, fmt.Sprintf("Note: the page is not valid %s: %s replaced with U+FFFD.", strings.ToUpper(d.charset), units.Plural(d.replaced, "invalid sequence was", "invalid sequences were")))
	} else if d.charset != "utf-8" {
		how := "declared"
		if d.guessed {
			how = "guessed: none was declared"
		}
		header = append(header, fmt.Sprintf("Note: decoded from %s (%s).", d.charset, how))
	}
	text = strings.ReplaceAll(text, "\x00", "\uFFFD")
	if strings.TrimSpace(text) == "" {
		what := "no text"
		if j.form == formHTML {
			what = fmt.Sprintf("no readable text: its %s of HTML hold only markup and scripts (a page whose content a script renders in a browser; web_fetch runs no scripts)", units.Bytes(int64(len(body))))
		}
		header = append(header, "The page has "+what+".")
	}
	lines := strings.Split(text, "\n")
	header = append(header, promptHeader(in.Prompt, lines, func(n int) int { return len(header) + n + 2 })...)

	var b strings.Builder
	for _, l := range header {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	if strings.TrimSpace(text) != "" {
		b.WriteByte('\n')
		b.WriteString(text)
		b.WriteByte('\n')
	}
	out := b.String()

	summary := fmt.Sprintf("%s · %s · %s in %v", resp.Status, kind, units.Bytes(int64(len(body))), took.Round(time.Millisecond))
	if title != "" {
		summary = title + "\n" + summary
	}
	res := &harness.ToolResult{
		Content: []harness.Block{harness.TextBlock(out)},
		Render:  &harness.Render{Kind: harness.RenderGeneric, Title: "Fetch " + short(final.String()), Text: summary},
	}
	if resp.StatusCode >= 400 {
		res.IsError, res.Code = true, codeHTTPStatus
		res.Content[0] = harness.TextBlock(fmt.Sprintf("%s answered %s. What it sent:\n\n%s", raw, resp.Status, truncate(out, 4<<10)))
	}
	return res, nil
}

// oneLine makes a page's text one line of printable text, for headers
// and cards: control characters (a page's title reaches terminals)
// become spaces and whitespace runs one space.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)), " ")
}

// truncate cuts s to at most n bytes, at a line end where one is near.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return textcut.HeadLines(s, n) + "\n[…]"
}
