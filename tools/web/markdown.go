package web

import (
	"bytes"
	"context"
	"net/url"
	"regexp"
	"strings"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"codeberg.org/readeck/go-readability/v2"
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
}

// toMarkdown converts an HTML page, given as UTF-8, to Markdown: the
// main content when readability finds one, the whole body otherwise.
// Scripts, styles, forms, inline (data:) images and javascript: links
// are left out. Links are made absolute against base.
func toMarkdown(ctx context.Context, src string, base *url.URL) (page, error) {
	doc, err := html.Parse(strings.NewReader(src))
	if err != nil {
		return page{}, err
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

// scrubAttrs removes attribute values that would only bloat or endanger
// the Markdown: data: sources and javascript: links.
func scrubAttrs(n *html.Node) {
	out := n.Attr[:0]
	for _, a := range n.Attr {
		v := strings.ToLower(strings.TrimSpace(a.Val))
		switch {
		case (a.Key == "src" || a.Key == "srcset" || a.Key == "data-src") && strings.HasPrefix(v, "data:"):
			continue
		case a.Key == "href" && (strings.HasPrefix(v, "javascript:") || strings.HasPrefix(v, "data:") || strings.HasPrefix(v, "vbscript:")):
			continue
		}
		out = append(out, a)
	}
	n.Attr = out
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
