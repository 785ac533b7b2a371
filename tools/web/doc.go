// Package web provides the model-facing web tools: web_fetch, which
// reads a page over HTTP(S) as text, and web_search, which asks a search
// provider through the small [Searcher] interface.
//
//	fetch, err := web.Fetch(web.FetchConfig{Policy: policy})
//	...
//	brave, err := web.Brave(web.BraveConfig{Key: os.Getenv("BRAVE_SEARCH_API_KEY")})
//	search, err := web.Search(web.SearchConfig{Searcher: brave, Name: "Brave Search"})
//	...
//	loop, err := agent.New(agent.WithTools(fetch, search), agent.WithPermissions(policy), ...)
//
// # web_fetch(url, prompt?)
//
// A GET of an http or https URL, with a timeout (30 s) over the whole
// fetch and a cap on the body (10 MiB, read as it streams; the rest is
// never downloaded, and the result says the page was cut). What comes
// back is judged by its content as well as its label: HTML is converted
// to Markdown (the main content, found by go-readability, when there is
// one; the whole body otherwise; links made absolute; scripts, styles,
// forms, inline data: images and javascript: links left out); text and
// JSON are returned as they are; images, PDFs, audio, video and other
// binary content are refused with harness.CodeUnsupportedFormat, also
// when labelled text/html, while HTML labelled application/octet-stream
// is read as HTML. Text is decoded from the charset a byte order mark,
// the Content-Type or an HTML meta element declares; undeclared text is
// UTF-8 when it is valid UTF-8 and windows-1252 otherwise; invalid UTF-8
// is replaced with U+FFFD, and the result says how much. A page nested
// deeper than 256 elements loses the deeper part; one with more than
// 200,000 elements, or one the HTML parser refuses, is reduced to its
// text, so no page makes the conversion recurse deep or run long.
//
// The result starts with a header (final URL, title, type, notes), then
// the text. Large results are saved whole and shown in part by the spill
// middleware, like any large result, so the model gets a spill://
// locator to read the rest with offset and limit.
//
// The prompt is a hint, not an instruction to a model (there is none
// inside the tool): its words are looked up in the page, and the header
// lists the sections (between Markdown headings, cut into parts of 40
// lines) where they occur most, with their line numbers in the result,
// which are also the line numbers in the spilled output.
//
// # What web_fetch refuses
//
// Only http and https; URLs with credentials (user:password@); hosts
// written as IPv4 addresses in forms other than the dotted quad
// (2130706433, 0177.0.0.1, 0x7f.1), which resolvers read differently;
// the Fetch standard's "bad ports" (25, 6667 and the like: services that
// do not speak HTTP), unless the host may be private (below). Other
// ports are allowed: the address decides what may be reached, not the
// port.
//
// Addresses that are not the public internet are refused: loopback,
// private (RFC 1918, unique local), link-local, carrier-grade NAT,
// multicast, unspecified, reserved and documentation ranges, cloud
// metadata (169.254.169.254, fd00:ec2::254), and IPv6 forms that carry
// such an IPv4 address (IPv4-mapped, IPv4-compatible, NAT64, 6to4). The
// check is made on every address a name resolves to (a mixed answer is
// refused whole), for the first URL and every redirect, and there is no
// DNS-rebinding window: a name is resolved once per connection and the
// connection is made to an address that was checked, while the dialer's
// Control hook checks the socket's own address before it connects. The
// environment's proxy settings are ignored, since a proxy would connect
// in the tool's place, past the check.
//
// A host may reach such addresses when FetchConfig.PrivateHosts names
// it, when an address range of FetchConfig.PrivateNets holds the
// address, or when an allow rule of the permission policy names the host
// exactly: WebFetch(domain:127.0.0.1), WebFetch(domain:wiki.corp). A
// wildcard rule, WebFetch alone and bypass mode never do. A metadata
// address is reached only when its address is allowed itself, never
// through a name. See permission.Policy.WebHost.
//
// Redirects (at most 10) are judged hop by hop like the first URL. A
// redirect to another host is followed when an allow rule names that
// host (or when no policy is configured), refused when a deny rule does,
// and otherwise not followed: the result names the URL it leads to, and
// fetching that goes through the permission decision like any call.
//
// # web_search(query, count?)
//
// [Search] asks a [Searcher] and returns a numbered list of title, URL
// and snippet, with a generic render whose text is the same list. [Brave]
// is a Searcher over the Brave Search API; package webtest has a double
// and a conformance check for any Searcher.
//
// # Codes
//
// Refusals have harness.CodeDenied, unsupported content
// harness.CodeUnsupportedFormat, a timeout harness.CodeTimeout, network
// failures harness.CodeTransport, invalid URLs
// harness.CodeInvalidArguments, and a server's error status
// "http_status" (the result shows the start of what it sent).
//
// It imports harness, tools, tools/permission (for the rules it asks
// about hosts), internal helpers, golang.org/x/net/html,
// codeberg.org/readeck/go-readability/v2 and
// github.com/JohannesKaufmann/html-to-markdown/v2.
package web
