package web

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"

	"codeberg.org/readeck/go-readability/v2"
	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Limits of the HTML conversion, so that no page can make it take long
// or recurse deep: elements nested deeper are cut off (and counted),
// and a page with more elements skips the main-content extraction.
const (
	maxDepth    = 256
	maxElements = 200_000
	// minArticle is the least text (in bytes of Markdown) an extracted
	// main content must have to be preferred over the whole page.
	minArticle = 200
)

// page is an HTML page converted to Markdown.
type page struct {
	title    string
	markdown string
	// main reports that the main content was extracted (readability);
	// otherwise the whole body was converted.
	main bool
	// pruned counts elements dropped for nesting deeper than maxDepth.
	pruned int
	// plain says why only the text was extracted, without Markdown
	// formatting; "" when the page was converted.
	plain string
}

// toMarkdown converts an HTML page, given as UTF-8, to Markdown: the
// main content when readability finds one, the whole body otherwise.
// Scripts, styles, forms, inline (data:) images and javascript: links
// are left out. Links are made absolute against base. A page with more
// than maxElements elements, or one the parser refuses (nested too
// deep), is reduced to its text instead, which takes time linear in its
// size with a small constant.
func toMarkdown(ctx context.Context, src string, base *url.URL) (page, error) {
	if n := countElements(src, maxElements+1); n > maxElements {
		return plainText(ctx, src, fmt.Sprintf("it has more than %d elements", maxElements))
	}
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return plainText(ctx, src, "it could not be parsed as a tree ("+err.Error()+")")
	}
	var p page
	elements := clean(doc, &p.pruned)
	if err := ctx.Err(); err != nil {
		return page{}, err
	}
	p.title = documentTitle(doc)

	content := doc
	if elements <= maxElements {
		parser := readability.NewParser()
		parser.MaxElemsToParse = maxElements
		// Its default logger formats every node it logs even though
		// the output is discarded: a quarter of the time on large pages.
		parser.Logger = slog.New(slog.DiscardHandler)
		if article, err := parser.ParseDocument(doc, base); err == nil && article.Node != nil {
			md, err := convert(ctx, article.Node, base)
			if err == nil && len(strings.TrimSpace(md)) >= minArticle {
				p.main, p.markdown = true, md
				if t := strings.TrimSpace(article.Title()); t != "" {
					p.title = t
				}
				return p, nil
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return page{}, err
	}
	if body := findBody(doc); body != nil {
		content = body
	}
	md, err := convert(ctx, content, base)
	if err != nil {
		return page{}, err
	}
	p.markdown = md
	return p, nil
}

// countElements counts the start tags of src, up to limit.
func countElements(src string, limit int) int {
	z := html.NewTokenizer(strings.NewReader(src))
	n := 0
	for n < limit {
		switch z.Next() {
		case html.ErrorToken:
			return n
		case html.StartTagToken, html.SelfClosingTagToken:
			n++
		}
	}
	return n
}

// blocks are the elements that break a line in plain text.
var blocks = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Br: true, atom.Li: true, atom.Tr: true, atom.H1: true, atom.H2: true, atom.H3: true,
	atom.H4: true, atom.H5: true, atom.H6: true, atom.Section: true, atom.Article: true, atom.Pre: true, atom.Blockquote: true,
	atom.Table: true, atom.Ul: true, atom.Ol: true, atom.Dl: true, atom.Dt: true, atom.Dd: true, atom.Header: true,
	atom.Footer: true, atom.Main: true, atom.Nav: true, atom.Hr: true, atom.Figure: true, atom.Figcaption: true,
}

// plainText reduces a page to its text with a tokenizer: no tree, no
// recursion, so any page takes time linear in its size. Text inside
// scripts, styles and the like is skipped; block elements break lines.
func plainText(ctx context.Context, src, why string) (page, error) {
	p := page{plain: why}
	z := html.NewTokenizer(strings.NewReader(src))
	var b strings.Builder
	skip := 0 // depth inside elements whose text is not shown
	inTitle := false
	line := false // the current line has text
	for i := 0; ; i++ {
		if i%4096 == 0 && ctx.Err() != nil {
			return page{}, ctx.Err()
		}
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			p.markdown = tidy([]byte(b.String()))
			return p, nil
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			name, _ := z.TagName()
			a := atom.Lookup(name)
			if dropped[a] || a == atom.Head {
				switch {
				case tt == html.StartTagToken && a != atom.Input && a != atom.Br:
					skip++
				case tt == html.EndTagToken && skip > 0:
					skip--
				}
			}
			inTitle = a == atom.Title && tt == html.StartTagToken
			if blocks[a] && line {
				b.WriteString("\n\n")
				line = false
			}
		case html.TextToken:
			text := strings.Join(strings.Fields(string(z.Text())), " ")
			if inTitle && p.title == "" {
				p.title = text
				continue
			}
			if skip > 0 || text == "" {
				continue
			}
			if line {
				b.WriteByte(' ')
			}
			b.WriteString(text)
			line = true
		}
	}
}

func convert(ctx context.Context, n *html.Node, baseURL *url.URL) (string, error) {
	conv := htmltomarkdown.NewConverter(htmltomarkdown.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(),
		strikethrough.NewStrikethroughPlugin(),
	))
	opts := []htmltomarkdown.ConvertOptionFunc{htmltomarkdown.WithContext(ctx)}
	if baseURL != nil {
		opts = append(opts, htmltomarkdown.WithDomain(baseURL.String()))
	}
	out, err := conv.ConvertNode(n, opts...)
	if err != nil {
		return "", err
	}
	return tidy(out), nil
}

var blankRuns = regexp.MustCompile(`\n{3,}`)

// tidy trims trailing spaces from lines and collapses runs of blank
// lines.
func tidy(b []byte) string {
	lines := bytes.Split(b, []byte("\n"))
	for i, l := range lines {
		lines[i] = bytes.TrimRight(l, " \t\r")
	}
	s := string(bytes.Join(lines, []byte("\n")))
	return strings.TrimSpace(blankRuns.ReplaceAllString(s, "\n\n"))
}

// dropped are the elements that never carry a page's text.
var dropped = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Iframe: true,
	atom.Object: true, atom.Embed: true, atom.Canvas: true, atom.Svg: true,
	atom.Input: true, atom.Button: true, atom.Select: true, atom.Textarea: true,
}

// clean walks the tree without recursion: it removes what never carries
// text, inline data: images and javascript: links, cuts off elements
// nested deeper than maxDepth (counting them in pruned), and returns
// the number of elements left.
func clean(doc *html.Node, pruned *int) int {
	type item struct {
		n     *html.Node
		depth int
	}
	count := 0
	stack := []item{{doc, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for c := it.n.FirstChild; c != nil; {
			next := c.NextSibling
			switch {
			case c.Type == html.ElementNode && dropped[c.DataAtom] && c.Namespace == "":
				it.n.RemoveChild(c)
			case c.Type == html.ElementNode && c.Namespace == "svg":
				it.n.RemoveChild(c)
			case c.Type == html.CommentNode:
				it.n.RemoveChild(c)
			case it.depth+1 > maxDepth:
				*pruned += countNodes(c)
				it.n.RemoveChild(c)
			default:
				if c.Type == html.ElementNode {
					count++
					scrubAttrs(c)
				}
				stack = append(stack, item{c, it.depth + 1})
			}
			c = next
		}
	}
	return count
}

// scrubAttrs removes the URLs that would only bloat or endanger the
// Markdown: inline data: sources and javascript: or vbscript: links, in
// any attribute that holds a URL.
func scrubAttrs(n *html.Node) {
	out := n.Attr[:0]
	for _, a := range n.Attr {
		if urlAttrs[a.Key] && badURL(a.Val) {
			continue
		}
		out = append(out, a)
	}
	n.Attr = out
}

var urlAttrs = map[string]bool{"href": true, "src": true, "srcset": true, "data-src": true, "data-srcset": true, "poster": true,
	"action": true, "formaction": true, "cite": true, "background": true, "longdesc": true, "xlink:href": true}

// badURL reports a data:, javascript: or vbscript: URL, read as a
// browser reads it: leading spaces and controls and any tab or line
// break inside ignored, case ignored.
func badURL(v string) bool {
	v = strings.TrimLeft(v, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	v = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return -1
		}
		return r
	}, v)
	v = strings.ToLower(v)
	return strings.HasPrefix(v, "data:") || strings.HasPrefix(v, "javascript:") || strings.HasPrefix(v, "vbscript:")
}

// countNodes counts the element nodes of a subtree, without recursion.
func countNodes(n *html.Node) int {
	count := 0
	stack := []*html.Node{n}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x.Type == html.ElementNode {
			count++
		}
		for c := x.FirstChild; c != nil; c = c.NextSibling {
			stack = append(stack, c)
		}
	}
	return count
}

func findBody(doc *html.Node) *html.Node {
	stack := []*html.Node{doc}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x.Type == html.ElementNode && x.DataAtom == atom.Body {
			return x
		}
		for c := x.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, c)
		}
	}
	return nil
}

// documentTitle is the text of the page's <title>, or "".
func documentTitle(doc *html.Node) string {
	stack := []*html.Node{doc}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if x.Type == html.ElementNode && x.DataAtom == atom.Title && x.Namespace == "" {
			var b strings.Builder
			for c := x.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.TextNode {
					b.WriteString(c.Data)
				}
			}
			return strings.Join(strings.Fields(b.String()), " ")
		}
		if x.Type == html.ElementNode && x.DataAtom == atom.Body {
			continue
		}
		for c := x.LastChild; c != nil; c = c.PrevSibling {
			stack = append(stack, c)
		}
	}
	return ""
}
