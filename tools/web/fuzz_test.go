package web

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzContent checks that judging and decoding any body, under any
// Content-Type, either refuses it or yields valid UTF-8.
func FuzzContent(f *testing.F) {
	f.Add("text/html; charset=utf-8", []byte("<p>caf\xc3\xa9</p>"), false)
	f.Add("text/plain", []byte("caf\xe9"), true)
	f.Add("application/json", []byte("\xef\xbb\xbf{\"a\":1}"), false)
	f.Add("text/html; charset=shift_jis", []byte("\x82\xa0"), false)
	f.Add("", []byte("\xff\xfeh\x00i\x00"), false)
	f.Add("application/octet-stream", []byte("<html><body>x"), true)
	f.Add("text/html; charset=utf-16", []byte("\xfe\xff\x00<\x00p"), true)
	f.Fuzz(func(t *testing.T, ct string, body []byte, cut bool) {
		head := body[:min(len(body), 8<<10)]
		j, err := judge(ct, head)
		if err != nil {
			return
		}
		if j.form < formHTML || j.form > formText {
			t.Fatalf("judge(%q) gave form %d", ct, j.form)
		}
		d := decode(body, ct, j.form, cut)
		if !utf8.ValidString(d.text) {
			t.Fatalf("decode(%q) gave invalid UTF-8", ct)
		}
	})
}

// FuzzMarkdown checks that any HTML converts without panicking, to
// valid UTF-8 without scripts' text or data: URLs.
func FuzzMarkdown(f *testing.F) {
	f.Add("<html><head><title>t</title></head><body><article><h1>x</h1><p>" + strings.Repeat("word ", 80) + "</p></article></body></html>")
	f.Add("<script>alert(1)</script><p>hi <img src='data:image/png;base64,AAAA'> <a href='javascript:x'>l</a></p>")
	f.Add(strings.Repeat("<div>", 400) + "deep" + strings.Repeat("</div>", 400))
	f.Add("<table><tr><td>a<td>b<tr><td colspan=9999>c</table>")
	f.Add("<svg><script>x</script><foreignObject><p>y</p></foreignObject></svg><math><mi>z</mi></math>")
	f.Add("<pre>```\ncode\n```</pre><h2>#</h2>")
	base, _ := url.Parse("https://example.com/dir/page")
	f.Fuzz(func(t *testing.T, src string) {
		if !utf8.ValidString(src) {
			src = strings.ToValidUTF8(src, "\uFFFD")
		}
		p, err := toMarkdown(context.Background(), src, base)
		if err != nil {
			return
		}
		if !utf8.ValidString(p.markdown) || !utf8.ValidString(p.title) {
			t.Fatal("invalid UTF-8 in the conversion")
		}
		if strings.Contains(p.markdown, "](javascript:") || strings.Contains(p.markdown, "](data:") {
			t.Fatalf("a javascript: or data: link survived: %q", p.markdown)
		}
	})
}

// FuzzPrompt checks that the prompt's pointers name line ranges that
// exist and start where the section they name starts.
func FuzzPrompt(f *testing.F) {
	f.Add("install gophers", "# Title\n\nintro\n\n## Install\n\ninstall the gopher\n```\n# not a heading\ninstall\n```\n## Other\n")
	f.Add("x", "")
	f.Add("Ünïcode wörds", "## Ünïcode\nwörds wörds\n")
	f.Add("a", strings.Repeat("line\n", 200)+"a aaa aaaa\n")
	f.Fuzz(func(t *testing.T, prompt, text string) {
		lines := strings.Split(text, "\n")
		const offset = 7
		head := promptHeader(prompt, lines, func(n int) int { return offset + n })
		for _, h := range head {
			if !strings.HasPrefix(h, "- lines ") {
				continue
			}
			var from, to int
			if _, err := fmtSscanf(h, &from, &to); err != nil {
				t.Fatalf("pointer %q: %v", h, err)
			}
			n := len(head) + offset
			if from < n || to < from || to-n >= len(lines) || from-n >= len(lines) {
				t.Fatalf("pointer %q out of range (text starts at line %d, %d lines)", h, n, len(lines))
			}
		}
		for _, s := range sections(lines) {
			if s.start < 1 || s.end < s.start || s.end > len(lines) || s.end-s.start >= chunkLines {
				t.Fatalf("section %+v of %d lines", s, len(lines))
			}
		}
	})
}

// FuzzPlain checks that search titles and snippets come out as one line
// of printable text within the bound.
func FuzzPlain(f *testing.F) {
	f.Add("<b>bold</b> &amp; \x1b[31mred\n\tnext", 20)
	f.Add("<<>>&#0;&#x110000;", 5)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < 2 || n > 1000 {
			return
		}
		out := plain(s, n)
		if utf8.RuneCountInString(out) > n {
			t.Fatalf("plain(%q, %d) is %d runes", s, n, utf8.RuneCountInString(out))
		}
		for _, r := range out {
			if r < 0x20 || r == 0x7f {
				t.Fatalf("plain(%q) kept control character %q", s, r)
			}
		}
	})
}

// FuzzClassify checks that every IPv4 address and its IPv6 forms are
// judged alike.
func FuzzClassify(f *testing.F) {
	f.Add([]byte{127, 0, 0, 1})
	f.Add([]byte{169, 254, 169, 254})
	f.Add([]byte{8, 8, 8, 8})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) != 4 {
			return
		}
		v4 := netip.AddrFrom4([4]byte(b))
		mapped := netip.AddrFrom16(v4.As16())
		var nat64 [16]byte
		copy(nat64[:], []byte{0, 0x64, 0xff, 0x9b})
		copy(nat64[12:], b)
		if (classify(v4) == "") != (classify(mapped) == "") || (classify(v4) == "") != (classify(netip.AddrFrom16(nat64)) == "") {
			t.Fatalf("%v: %q, mapped %q, NAT64 %q", v4, classify(v4), classify(mapped), classify(netip.AddrFrom16(nat64)))
		}
	})
}

func fmtSscanf(s string, from, to *int) (int, error) {
	return fmt.Sscanf(s, "- lines %d-%d:", from, to)
}
