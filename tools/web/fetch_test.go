package web

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/toolstest"
)

const article = `<!doctype html><html><head><title>The Gopher's Guide</title></head><body>
<nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<article><h1>The Gopher's Guide</h1>
<p>Gophers dig tunnels. This paragraph is long enough to count as the main content of the page, with enough words for readability to prefer it over the navigation around it.</p>
<h2>Installation</h2>
<p>Install the gopher with <code>go install example.com/gopher@latest</code>; installing takes a minute. Read the <a href="/docs/install">installation notes</a>.</p>
<h2>Feeding</h2>
<p>Feed the gopher twice a day. A well fed gopher digs faster and further than a hungry one, and it sleeps well.</p>
</article>
<footer>Copyright nobody</footer>
</body></html>`

func TestFetchHTML(t *testing.T) {
	leakcheck.Check(t)
	srv := serve(t, htmlPage(article))
	tool := fetchTool(t, FetchConfig{PrivateNets: loopback})
	res := fetchURL(t, tool, srv.URL+"/guide#frag")
	require.False(t, res.IsError, res.Text())
	text := res.Text()
	assert.Contains(t, text, "URL: "+srv.URL+"/guide\n")
	assert.Contains(t, text, "Title: The Gopher's Guide\n")
	assert.Contains(t, text, "Type: HTML, converted to Markdown (the main content")
	assert.Contains(t, text, "## Installation")
	assert.Contains(t, text, "`go install example.com/gopher@latest`")
	assert.Contains(t, text, "[installation notes]("+srv.URL+"/docs/install)", "links are made absolute")
	assert.NotContains(t, text, "Copyright nobody", "the footer is not main content")
	require.NotNil(t, res.Render)
	assert.Equal(t, harness.RenderGeneric, res.Render.Kind)
	assert.Equal(t, "Fetch "+strings.TrimPrefix(srv.URL, "http://")+"/guide", res.Render.Title)
	assert.Contains(t, res.Render.Text, "200 OK")
}

func TestFetchPrompt(t *testing.T) {
	srv := serve(t, htmlPage(article))
	tool := fetchTool(t, FetchConfig{PrivateNets: loopback})
	res := call(t, tool, map[string]any{"url": srv.URL, "prompt": "How do I install it?"})
	require.False(t, res.IsError, res.Text())
	lines := strings.Split(res.Text(), "\n")
	var pointer string
	for _, l := range lines {
		if strings.HasPrefix(l, "- lines ") {
			pointer = l
			break
		}
	}
	require.NotEmpty(t, pointer, res.Text())
	assert.Contains(t, pointer, "## Installation")
	var from, to int
	_, err := fmt.Sscanf(pointer, "- lines %d-%d:", &from, &to)
	require.NoError(t, err)
	assert.Equal(t, "## Installation", lines[from-1], "the pointer's first line is the section's heading, counted in the result")
	assert.Contains(t, strings.Join(lines[from-1:to], "\n"), "go install")

	res = call(t, tool, map[string]any{"url": srv.URL, "prompt": "zebra quagga"})
	assert.Contains(t, res.Text(), "None of the prompt's words (zebra, quagga) appear in the page")
}

// TestFetchRefusesPrivateByDefault: loopback, private and metadata
// addresses are refused with no allowance, before any connection.
func TestFetchRefusesPrivateByDefault(t *testing.T) {
	srv := serve(t, htmlPage(article))
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	tool := fetchTool(t, FetchConfig{})
	for _, u := range []string{
		srv.URL,
		fmt.Sprintf("http://localhost:%d/", port),
		fmt.Sprintf("http://[::1]:%d/", port),
		fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port),
		fmt.Sprintf("http://[::ffff:7f00:1]:%d/", port),
		fmt.Sprintf("http://[0:0:0:0:0:ffff:7f00:1]:%d/", port),
		fmt.Sprintf("http://[::127.0.0.1]:%d/", port),
		fmt.Sprintf("http://[64:ff9b::7f00:1]:%d/", port),
		fmt.Sprintf("http://[2002:7f00:1::]:%d/", port),
		fmt.Sprintf("http://[fe80::1%%25lo]:%d/", port),
		fmt.Sprintf("http://[::]:%d/", port),
		fmt.Sprintf("http://0.0.0.0:%d/", port),
		"http://169.254.169.254/latest/meta-data/",
		"http://[fd00:ec2::254]/latest/meta-data/",
		"http://10.0.0.1/", "http://172.16.5.4/", "http://192.168.1.1/", "http://100.64.0.1/", "http://[fd12::1]/", "http://224.0.0.1/",
		"http://１２７.０.０.１:" + fmt.Sprint(port) + "/",
	} {
		res := fetchURL(t, tool, u)
		assert.True(t, res.IsError, u)
		assert.Equal(t, harness.CodeDenied, res.Code, "%s: %s", u, res.Text())
		assert.Contains(t, res.Text(), "web_fetch does not reach unless allowed", u)
	}
	assert.Zero(t, srv.hits.Load(), "no request reached the server")
}

func TestFetchNumericIPv4Forms(t *testing.T) {
	srv := serve(t, htmlPage(article))
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	// Even with loopback allowed, the forms resolvers disagree on are refused.
	tool := fetchTool(t, FetchConfig{PrivateNets: loopback})
	for _, h := range []string{"2130706433", "0177.0.0.1", "0x7f.1", "0x7f000001", "127.1", "017700000001"} {
		u := fmt.Sprintf("http://%s:%d/", h, port)
		res := fetchURL(t, tool, u)
		assert.Equal(t, harness.CodeDenied, res.Code, u)
		assert.Contains(t, res.Text(), "non-standard numeric form", u)
		assert.Contains(t, res.Text(), "127.0.0.1", u)
	}
	assert.Zero(t, srv.hits.Load())
}

func TestFetchAllowedByExactRule(t *testing.T) {
	srv := serve(t, htmlPage(article))
	// An exact rule for the address allows it.
	res := fetchURL(t, fetchTool(t, FetchConfig{Policy: policy(t, "WebFetch(domain:127.0.0.1)")}), srv.URL)
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "Gophers dig tunnels")
	// Wildcards, WebFetch alone and domain:* do not.
	for _, rule := range []string{"WebFetch", "WebFetch(domain:*)", "web_fetch"} {
		res := fetchURL(t, fetchTool(t, FetchConfig{Policy: policy(t, rule)}), srv.URL)
		assert.Equal(t, harness.CodeDenied, res.Code, rule)
	}
	// A name allowed exactly that resolves to loopback is allowed; the
	// same name never reaches a metadata address.
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	r := &resolver{answers: [][]netip.Addr{addrs("127.0.0.1")}}
	res = fetchURL(t, fetchTool(t, FetchConfig{Policy: policy(t, "WebFetch(domain:intranet.example)"), Resolver: r}), fmt.Sprintf("http://intranet.example:%d/", port))
	require.False(t, res.IsError, res.Text())
	r = &resolver{answers: [][]netip.Addr{addrs("169.254.169.254")}}
	res = fetchURL(t, fetchTool(t, FetchConfig{Policy: policy(t, "WebFetch(domain:intranet.example)"), Resolver: r}), "http://intranet.example/")
	assert.Equal(t, harness.CodeDenied, res.Code)
	assert.Contains(t, res.Text(), "metadata")
	// A deny rule refuses even a public host the model names.
	deny, err := policy(t).WithAllow()
	require.NoError(t, err)
	_ = deny
}

func TestFetchRedirects(t *testing.T) {
	secret := serve(t, htmlPage("<p>secret</p>"))
	secretPort := secret.Listener.Addr().(*net.TCPAddr).Port
	// The "public" server stands at 127.0.0.2, the only address allowed.
	public := netip.MustParsePrefix("127.0.0.2/32")
	var target atomic.Value
	front := serveOn(t, "127.0.0.2:0", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/final":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("arrived"))
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		default:
			http.Redirect(w, r, target.Load().(string), http.StatusFound)
		}
	})
	tool := fetchTool(t, FetchConfig{PrivateNets: []netip.Prefix{public}})
	cases := []struct {
		to   string
		code harness.Code
		want string
	}{
		{fmt.Sprintf("http://127.0.0.1:%d/", secretPort), harness.CodeDenied, "127.0.0.1 is a loopback address"},
		{fmt.Sprintf("http://localhost:%d/", secretPort), harness.CodeDenied, "resolves to"},
		{"http://169.254.169.254/latest/meta-data/iam/", harness.CodeDenied, "cloud metadata"},
		{fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", secretPort), harness.CodeDenied, "loopback"},
		{fmt.Sprintf("http://2130706433:%d/", secretPort), harness.CodeDenied, "non-standard numeric form"},
		{"file:///etc/passwd", harness.CodeDenied, "file: URLs are refused"},
		{"gopher://127.0.0.1:70/", harness.CodeDenied, "gopher: URLs are refused"},
		{"ftp://example.com/x", harness.CodeDenied, "ftp: URLs are refused"},
		{fmt.Sprintf("http://user:pw@127.0.0.2:%d/final", front.Listener.Addr().(*net.TCPAddr).Port), harness.CodeDenied, "credentials"},
		{"/final", "", "arrived"},
	}
	for _, c := range cases {
		target.Store(c.to)
		res := fetchURL(t, tool, front.URL+"/start")
		if c.code == "" {
			require.False(t, res.IsError, res.Text())
			assert.Contains(t, res.Text(), "URL: "+front.URL+"/final")
			assert.Contains(t, res.Text(), "Requested: "+front.URL+"/start")
		} else {
			assert.Equal(t, c.code, res.Code, "%s: %s", c.to, res.Text())
		}
		assert.Contains(t, res.Text(), c.want, c.to)
	}
	res := fetchURL(t, tool, front.URL+"/loop")
	assert.Equal(t, harness.CodeDenied, res.Code)
	assert.Contains(t, res.Text(), "redirected more than 10 times")
	assert.Zero(t, secret.hits.Load(), "no redirect reached the private server")
}

func TestFetchRedirectToAnotherHostFollowsRules(t *testing.T) {
	other := serveOn(t, "127.0.0.3:0", func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("other host"))
	})
	otherPort := other.Listener.Addr().(*net.TCPAddr).Port
	front := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, fmt.Sprintf("http://other.example:%d/x", otherPort), http.StatusMovedPermanently)
	})
	r := &resolver{answers: [][]netip.Addr{addrs("127.0.0.3")}}
	nets := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	// No rule names other.example: the redirect is reported, not followed.
	tool := fetchTool(t, FetchConfig{Policy: policy(t, "WebFetch(domain:127.0.0.1)"), Resolver: r, PrivateNets: nets})
	res := fetchURL(t, tool, front.URL)
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "redirects to another host: http://other.example:")
	assert.Contains(t, res.Text(), "call web_fetch with that URL")
	assert.Zero(t, other.hits.Load())
	// An allow rule for it: followed.
	tool = fetchTool(t, FetchConfig{Policy: policy(t, "WebFetch(domain:127.0.0.1)", "WebFetch(domain:*.example)"), Resolver: r, PrivateNets: nets})
	res = fetchURL(t, tool, front.URL)
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "other host")
	// A deny rule: refused.
	p, err := permPolicy(t, []string{"WebFetch(domain:127.0.0.1)", "WebFetch"}, []string{"WebFetch(domain:other.example)"})
	require.NoError(t, err)
	tool = fetchTool(t, FetchConfig{Policy: p, Resolver: r, PrivateNets: nets})
	res = fetchURL(t, tool, front.URL)
	assert.Equal(t, harness.CodeDenied, res.Code)
	assert.Contains(t, res.Text(), "denied by the rule WebFetch(domain:other.example)")
	assert.Equal(t, int64(1), other.hits.Load())
}

// TestFetchDNSRebinding: the name is resolved once per connection and
// the connection goes to the address that was checked, so a resolver
// that answers an allowed address first and a loopback one next cannot
// steer the request to loopback.
func TestFetchDNSRebinding(t *testing.T) {
	target := serve(t, htmlPage("<p>internal admin page</p>"))
	port := target.Listener.Addr().(*net.TCPAddr).Port
	decoy := serveOn(t, fmt.Sprintf("127.0.0.2:%d", port), func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("public page"))
	})
	allowed := []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}

	r := &resolver{answers: [][]netip.Addr{addrs("127.0.0.2"), addrs("127.0.0.1")}}
	tool := fetchTool(t, FetchConfig{Resolver: r, PrivateNets: allowed})
	u := fmt.Sprintf("http://rebind.example:%d/", port)
	res := fetchURL(t, tool, u)
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "public page")
	assert.Equal(t, 1, r.calls, "one lookup per connection")
	// The next fetch gets the loopback answer, and is refused.
	res = fetchURL(t, tool, u)
	assert.Equal(t, harness.CodeDenied, res.Code)
	assert.Contains(t, res.Text(), "rebind.example resolves to 127.0.0.1, a loopback address")
	// An answer that mixes an allowed and a loopback address is refused whole.
	r = &resolver{answers: [][]netip.Addr{addrs("127.0.0.2", "127.0.0.1")}}
	res = fetchURL(t, fetchTool(t, FetchConfig{Resolver: r, PrivateNets: allowed}), u)
	assert.Equal(t, harness.CodeDenied, res.Code)
	assert.Zero(t, target.hits.Load(), "the loopback server was never reached")
	assert.Equal(t, int64(1), decoy.hits.Load())
}

// TestDialControlChecksTheSocket: the dialer's Control hook refuses a
// connection whose address is not the one checked, whatever path led
// there.
func TestDialControlChecksTheSocket(t *testing.T) {
	g := &guard{hosts: map[string]bool{}, resolver: &resolver{answers: [][]netip.Addr{addrs("127.0.0.2")}}, nets: []netip.Prefix{netip.MustParsePrefix("127.0.0.2/32")}}
	_, err := g.dial(context.Background(), "tcp", "x.example:1")
	// 127.0.0.2:1 is closed, but the check passed: the error is the connection's.
	require.Error(t, err)
	var r *refusal
	assert.False(t, errorsAs(err, &r), "an allowed address is not refused: %v", err)

	g.resolver = &resolver{answers: [][]netip.Addr{addrs("127.0.0.1")}}
	_, err = g.dial(context.Background(), "tcp", "x.example:1")
	assert.True(t, errorsAs(err, &r), "%v", err)
}

func TestFetchIgnoresProxyEnvironment(t *testing.T) {
	var proxied atomic.Int64
	proxy := serve(t, func(w http.ResponseWriter, r *http.Request) {
		proxied.Add(1)
		_, _ = w.Write([]byte("from the proxy"))
	})
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("NO_PROXY", "")
	srv := serveOn(t, "127.0.0.2:0", htmlPage(article))
	res := fetchURL(t, fetchTool(t, FetchConfig{PrivateNets: loopback}), srv.URL)
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "Gophers dig tunnels")
	assert.Zero(t, proxied.Load())
}

func TestFetchCredentialsRefused(t *testing.T) {
	srv := serve(t, htmlPage(article))
	tool := fetchTool(t, FetchConfig{PrivateNets: loopback})
	for _, u := range []string{
		strings.Replace(srv.URL, "http://", "http://user:secret@", 1),
		strings.Replace(srv.URL, "http://", "http://user@", 1),
		strings.Replace(srv.URL, "http://", "http://:pw@", 1),
	} {
		res := fetchURL(t, tool, u)
		assert.Equal(t, harness.CodeDenied, res.Code, u)
		assert.Contains(t, res.Text(), "URLs with credentials (user:password@) are refused")
	}
	assert.Zero(t, srv.hits.Load())
}

func TestFetchSchemesAndPorts(t *testing.T) {
	tool := fetchTool(t, FetchConfig{})
	for u, want := range map[string]string{
		"file:///etc/passwd":                           "file: URLs are refused",
		"FILE:///etc/passwd":                           "file: URLs are refused",
		"ftp://example.com/":                           "ftp: URLs are refused",
		"data:text/html,<p>x</p>":                      "data: URLs are refused",
		"gopher://example.com/":                        "gopher: URLs are refused",
		"javascript:alert(1)":                          "javascript: URLs are refused",
		"example.com/page":                             "not an absolute URL",
		"http:example.com":                             "is not a URL web_fetch can read",
		"http://example.com:25/":                       "port 25 is refused",
		"http://example.com:6667/":                     "port 6667 is refused",
		"http://example.com:99999/":                    "not a valid",
		"http://exa mple.com/":                         "not a valid URL",
		"http://ex%41mple.com/":                        "not a valid URL",
		"http://[::1/":                                 "not a valid URL",
		"http://a..b/":                                 "not valid",
		"http://" + strings.Repeat("a", 300) + ".com/": "not valid",
	} {
		res := fetchURL(t, tool, u)
		assert.True(t, res.IsError, u)
		assert.Contains(t, res.Text(), want, u)
	}
}

// TestFetchHugeBody: a body of 10 GB (generated as it is sent, never
// held) is read up to the cap, and the server is stopped from sending
// the rest.
func TestFetchHugeBody(t *testing.T) {
	leakcheck.Check(t)
	const huge = int64(10) << 30
	var sent atomic.Int64
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Length", fmt.Sprint(huge))
		chunk := bytes.Repeat([]byte("all work and no play makes jack a dull boy\n"), 1500)
		for n := int64(0); n < huge; n += int64(len(chunk)) {
			m, err := w.Write(chunk)
			sent.Add(int64(m))
			if err != nil {
				return
			}
		}
	})
	tool := fetchTool(t, FetchConfig{PrivateNets: loopback, MaxBytes: 1 << 20})
	res := fetchURL(t, tool, srv.URL)
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "Note: the page is larger than 1.0 MiB; only its first 1.0 MiB were read.")
	assert.LessOrEqual(t, len(res.Text()), 1<<20+1024)
	srv.CloseClientConnections()
	assert.Less(t, sent.Load(), int64(64<<20), "the server was not made to send the whole body")
}

// TestFetchGzipBomb: a compressed body that inflates to 10 GB is cut at
// the cap of inflated bytes.
func TestFetchGzipBomb(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Encoding", "gzip")
		zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
		chunk := bytes.Repeat([]byte("a"), 1<<20)
		for i := 0; i < 10<<10; i++ {
			if _, err := zw.Write(chunk); err != nil {
				return
			}
		}
		_ = zw.Close()
	})
	res := fetchURL(t, fetchTool(t, FetchConfig{PrivateNets: loopback, MaxBytes: 1 << 20}), srv.URL)
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "only its first 1.0 MiB were read")
}

// TestFetchSlowloris: a server that trickles its headers or its body
// is cut off by the timeout.
func TestFetchSlowloris(t *testing.T) {
	leakcheck.Check(t)
	trickle := func(headers bool) *counted {
		return serve(t, func(w http.ResponseWriter, r *http.Request) {
			rc := http.NewResponseController(w)
			if headers {
				conn, buf, err := rc.Hijack()
				if err != nil {
					return
				}
				defer conn.Close()
				for _, b := range []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Slow: " + strings.Repeat("a", 10000)) {
					if _, err := buf.Write([]byte{b}); err != nil || buf.Flush() != nil {
						return
					}
					select {
					case <-r.Context().Done():
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
				return
			}
			w.Header().Set("Content-Type", "text/plain")
			for i := 0; i < 10000; i++ {
				if _, err := w.Write([]byte("a")); err != nil || rc.Flush() != nil {
					return
				}
				select {
				case <-r.Context().Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
			}
		})
	}
	for _, headers := range []bool{true, false} {
		srv := trickle(headers)
		tool := fetchTool(t, FetchConfig{PrivateNets: loopback, Timeout: 400 * time.Millisecond})
		res := fetchURL(t, tool, srv.URL)
		assert.Equal(t, harness.CodeTimeout, res.Code, "headers=%v: %s", headers, res.Text())
		assert.Contains(t, res.Text(), "did not answer, or did not finish sending, in time")
		srv.CloseClientConnections()
	}
}

func TestFetchAllScript(t *testing.T) {
	body := "<!doctype html><html><head><title>App</title><script>" + strings.Repeat("var a=1;", 5000) +
		"</script></head><body><div id=root></div><script src=/app.js></script><noscript>Enable JavaScript</noscript></body></html>"
	srv := serve(t, htmlPage(body))
	res := fetchURL(t, fetchTool(t, FetchConfig{PrivateNets: loopback}), srv.URL)
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "The page has no readable text")
	assert.Contains(t, res.Text(), "web_fetch runs no scripts")
	assert.NotContains(t, res.Text(), "var a=1")
}

func pngBytes(t *testing.T) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 4, 4))
	img.Set(1, 1, color.RGBA{255, 0, 0, 255})
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

func TestFetchContentTypes(t *testing.T) {
	pngData := pngBytes(t)
	cases := []struct {
		name, ct string
		body     []byte
		code     harness.Code
		want     []string
	}{
		{"HTML as octet-stream", "application/octet-stream", []byte(article), "", []string{"Type: HTML, converted to Markdown", "(served as application/octet-stream; the content is HTML)", "## Installation"}},
		{"HTML without a type", "", []byte(article), "", []string{"served as no content type; the content is HTML"}},
		{"PNG as text/html", "text/html", pngData, harness.CodeUnsupportedFormat, []string{"serves an image (image/png, labelled text/html)"}},
		{"PNG as image/png", "image/png", pngData, harness.CodeUnsupportedFormat, []string{"image/png"}},
		{"PDF", "application/pdf", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n"), harness.CodeUnsupportedFormat, []string{"serves a PDF"}},
		{"PDF as text", "text/plain", []byte("%PDF-1.7\n1 0 obj\n"), harness.CodeUnsupportedFormat, []string{"serves a PDF"}},
		{"zip", "application/zip", []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00"), harness.CodeUnsupportedFormat, []string{"binary content"}},
		{"ELF as text/plain", "text/plain", append([]byte("\x7fELF\x02\x01\x01\x00"), make([]byte, 64)...), harness.CodeUnsupportedFormat, []string{"binary content"}},
		{"NUL in text", "text/plain", []byte("hello\x00world"), harness.CodeUnsupportedFormat, []string{"binary content"}},
		{"JSON", "application/json", []byte(`{"a": [1, 2, {"b": "c"}]}`), "", []string{"Type: JSON", `{"a": [1, 2, {"b": "c"}]}`}},
		{"problem JSON", "application/problem+json", []byte(`{"title":"x"}`), "", []string{"Type: JSON"}},
		{"plain text", "text/plain; charset=utf-8", []byte("line one\nline two\n"), "", []string{"Type: text/plain", "line one\nline two"}},
		{"markdown", "text/markdown", []byte("# Title\n\nbody\n"), "", []string{"# Title"}},
		{"SVG is text", "image/svg+xml", []byte(`<svg xmlns="http://www.w3.org/2000/svg"><text>hi</text></svg>`), "", []string{"<text>hi</text>"}},
		{"text as video", "video/mp4", []byte("just text"), harness.CodeUnsupportedFormat, []string{"video/mp4"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Content-Type"] = []string{c.ct}
				_, _ = w.Write(c.body)
			})
			res := fetchURL(t, fetchTool(t, FetchConfig{PrivateNets: loopback}), srv.URL)
			if c.code != "" {
				assert.Equal(t, c.code, res.Code, res.Text())
			} else {
				assert.False(t, res.IsError, res.Text())
			}
			for _, w := range c.want {
				assert.Contains(t, res.Text(), w)
			}
		})
	}
}

func TestFetchInvalidUTF8(t *testing.T) {
	body := "<html><head><title>Broken \xff bytes</title></head><body><article><p>" + strings.Repeat("Valid text before. ", 20) +
		"Bad: \xff\xfe\xfd here, and a cut sequence \xe2\x82 there. " + strings.Repeat("Valid text after. ", 20) + "</p></article></body></html>"
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(body))
	})
	res := fetchURL(t, fetchTool(t, FetchConfig{PrivateNets: loopback}), srv.URL)
	require.False(t, res.IsError, res.Text())
	text := res.Text()
	assert.Contains(t, text, "Note: the page is not valid UTF-8: 3 invalid sequences were replaced with U+FFFD.")
	assert.Contains(t, text, "Bad: \uFFFD here, and a cut sequence \uFFFD there.")
	assert.True(t, strings.ToValidUTF8(text, "?") == text, "the result is valid UTF-8")

	// Undeclared legacy text is read as windows-1252, and says so.
	srv = serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("caf\xe9 cr\xe8me"))
	})
	res = fetchURL(t, fetchTool(t, FetchConfig{PrivateNets: loopback}), srv.URL)
	assert.Contains(t, res.Text(), "café crème")
	assert.Contains(t, res.Text(), "Note: decoded from windows-1252 (guessed: none was declared).")

	// A declared legacy charset is honoured.
	srv = serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
		_, _ = w.Write([]byte("na\xefve"))
	})
	res = fetchURL(t, fetchTool(t, FetchConfig{PrivateNets: loopback}), srv.URL)
	assert.Contains(t, res.Text(), "naïve")
}

// TestFetchTitleIsOneLine: a page's title reaches cards and terminals:
// control characters and line breaks do not survive.
func TestFetchTitleIsOneLine(t *testing.T) {
	srv := serve(t, htmlPage("<html><head><title>Evil\x1b[2J\nsecond line\u0085</title></head><body><p>x</p></body></html>"))
	res := fetchURL(t, fetchTool(t, FetchConfig{PrivateNets: loopback}), srv.URL)
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "Title: Evil [2J second line\n")
	assert.NotContains(t, res.Render.Text, "\x1b")
}

func TestFetchHTTPErrorStatus(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("<html><body><h1>Not here</h1><p>The page moved.</p></body></html>"))
	})
	res := fetchURL(t, fetchTool(t, FetchConfig{PrivateNets: loopback}), srv.URL+"/missing")
	assert.True(t, res.IsError)
	assert.Equal(t, codeHTTPStatus, res.Code)
	assert.Contains(t, res.Text(), "answered 404 Not Found")
	assert.Contains(t, res.Text(), "The page moved.")
}

func TestFetchTLS(t *testing.T) {
	srv := serveTLS(t, htmlPage(article))
	pool := srv.Client().Transport.(*http.Transport).TLSClientConfig
	res := fetchURL(t, fetchTool(t, FetchConfig{PrivateNets: loopback, TLS: pool}), srv.URL)
	require.False(t, res.IsError, res.Text())
	assert.Contains(t, res.Text(), "Gophers dig tunnels")
	// Without trusting the test certificate, TLS fails and says so.
	res = fetchURL(t, fetchTool(t, FetchConfig{PrivateNets: loopback}), srv.URL)
	assert.Equal(t, harness.CodeTransport, res.Code)
	assert.Contains(t, res.Text(), "certificate")
}

// TestFetchSpills: a page larger than the spill threshold reaches the
// model as a preview with a spill:// locator, through the spill
// middleware as any large result does, and the header (with the
// prompt's pointers) is in the preview.
func TestFetchSpills(t *testing.T) {
	var b strings.Builder
	b.WriteString("<html><body><article><h1>Big</h1>")
	for i := 0; i < 400; i++ {
		fmt.Fprintf(&b, "<h2>Section %d</h2><p>%s</p>", i, strings.Repeat("filler words here ", 20))
	}
	b.WriteString("<h2>Unicorns</h2><p>The unicorn section is what we want.</p></article></body></html>")
	srv := serve(t, htmlPage(b.String()))
	tool := fetchTool(t, FetchConfig{PrivateNets: loopback})
	mw, err := spill.Middleware(spill.Config{})
	require.NoError(t, err)
	env := toolstest.NewEnv()
	defer env.Close()
	c := &tools.Call{ID: "c1", Name: "web_fetch", Arguments: fmt.Sprintf(`{"url":%q,"prompt":"unicorns"}`, srv.URL), Spec: tool.Spec(), Env: env.Env}
	res := mw(func(ctx context.Context, call *tools.Call) *harness.ToolResult {
		r, err := tool.Execute(ctx, call)
		require.NoError(t, err)
		return r
	})(context.Background(), c)
	text := res.Text()
	assert.Less(t, len(text), 31_000)
	assert.Contains(t, text, tools.OutputScheme)
	assert.Contains(t, text, "## Unicorns (2 matches)")
	// The pointer's line numbers are those of the saved output.
	loc := regexp.MustCompile(`spill://[^\s"]+\.txt`).FindString(text)
	var from int
	_, err = fmt.Sscanf(text[strings.Index(text, "- lines "):], "- lines %d-", &from)
	require.NoError(t, err)
	rc, err := env.Output.Open(context.Background(), loc)
	require.NoError(t, err)
	defer rc.Close()
	var whole bytes.Buffer
	_, err = whole.ReadFrom(rc)
	require.NoError(t, err)
	assert.Equal(t, "## Unicorns", strings.Split(whole.String(), "\n")[from-1])
}

func TestFetchConfigErrors(t *testing.T) {
	for _, cfg := range []FetchConfig{{Timeout: -1}, {MaxBytes: -1}, {MaxRedirects: -1}, {PrivateHosts: []string{"exa mple"}}, {PrivateNets: []netip.Prefix{{}}}} {
		_, err := Fetch(cfg)
		assert.ErrorIs(t, err, harness.CodeInvalidOption, "%+v", cfg)
	}
}

func TestFetchCancelled(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	tool := fetchTool(t, FetchConfig{PrivateNets: loopback})
	env := toolstest.NewEnv()
	defer env.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	res, err := env.Call(ctx, tool, map[string]any{"url": srv.URL})
	require.NoError(t, err)
	assert.Equal(t, harness.CodeAborted, res.Code, res.Text())
	srv.CloseClientConnections()
}
