package web

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html/charset"

	"github.com/go-harness/harness"
)

// form is how a body is turned into text for the model.
type form int

const (
	formHTML form = iota + 1
	formJSON
	formText
)

// judged is what a body was found to be.
type judged struct {
	form form
	// label is the media type the server declared ("" for none), sniffed
	// what the content looks like (http.DetectContentType's answer).
	label, sniffed string
	// note says, when they differ, which was believed.
	note string
}

// judge decides from the declared Content-Type and the first bytes of a
// body what it is. Content decides over the label when they disagree
// about whether it is text: an image or binary labelled text/html is
// refused, and HTML labelled application/octet-stream is read as HTML.
// It returns a refusal for images, PDFs, audio, video and other binary
// content.
func judge(contentType string, head []byte) (judged, error) {
	label, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		label = ""
	}
	label = strings.ToLower(label)
	sniffed, _, _ := mime.ParseMediaType(http.DetectContentType(head))
	j := judged{label: label, sniffed: sniffed}
	shown := label
	if shown == "" {
		shown = "no content type"
	}

	switch {
	case strings.HasPrefix(sniffed, "image/"):
		return j, unsupported("the URL serves an image (%s, labelled %s), and web_fetch returns text only: it reads HTML, text and JSON. To look at an image, save it to the workspace with a command and use read_image.", sniffed, shown)
	case sniffed == "application/pdf" || label == "application/pdf":
		return j, unsupported("the URL serves a PDF (labelled %s), which web_fetch does not read: it reads HTML, text and JSON. Look for an HTML version of the document.", shown)
	case strings.HasPrefix(sniffed, "audio/") || strings.HasPrefix(sniffed, "video/") || strings.HasPrefix(sniffed, "font/"):
		return j, unsupported("the URL serves %s content (labelled %s), which web_fetch does not read: it reads HTML, text and JSON.", sniffed, shown)
	case !textual(sniffed) || bytes.IndexByte(head, 0) >= 0 && !utf16BOM(head):
		return j, unsupported("the URL serves binary content (%s, labelled %s), which web_fetch does not read: it reads HTML, text and JSON.", sniffed, shown)
	}
	// The content looks like text.
	switch {
	case label == "text/html" || label == "application/xhtml+xml":
		j.form = formHTML
	case label == "application/json" || strings.HasSuffix(label, "+json"):
		j.form = formJSON
	case strings.HasPrefix(label, "image/") && label != "image/svg+xml",
		strings.HasPrefix(label, "audio/"), strings.HasPrefix(label, "video/"), strings.HasPrefix(label, "font/"):
		return j, unsupported("the URL serves %s, and web_fetch returns text only: it reads HTML, text and JSON.", label)
	case textLabel(label):
		j.form = formText
		if sniffed == "text/html" && label == "text/plain" {
			// A server's default label; the content is HTML.
			j.form, j.note = formHTML, "served as text/plain; the content is HTML"
		}
	default:
		// No label, a generic one (application/octet-stream) or one for
		// a binary format whose content looks like text.
		switch sniffed {
		case "text/html":
			j.form = formHTML
		default:
			j.form = formText
		}
		j.note = "served as " + shown + "; the content is " + map[form]string{formHTML: "HTML", formText: "text"}[j.form]
	}
	return j, nil
}

// unsupported is the error for content web_fetch does not return.
func unsupported(format string, args ...any) error {
	return &harness.Error{Code: harness.CodeUnsupportedFormat, Message: fmt.Sprintf(format, args...)}
}

// textual reports whether a sniffed type is text.
func textual(sniffed string) bool {
	return strings.HasPrefix(sniffed, "text/") || sniffed == "application/json" || sniffed == "application/xml" ||
		sniffed == "application/javascript"
}

// textLabel reports whether a declared type is text web_fetch returns as
// it is.
func textLabel(label string) bool {
	switch {
	case strings.HasPrefix(label, "text/"):
		return true
	case label == "image/svg+xml", label == "application/xml", strings.HasSuffix(label, "+xml"),
		label == "application/javascript", label == "application/ecmascript", label == "application/x-javascript",
		label == "application/x-sh", label == "application/toml", label == "application/yaml", label == "application/x-yaml",
		label == "application/x-ndjson", label == "application/graphql", label == "application/sql":
		return true
	}
	return false
}

func utf16BOM(b []byte) bool {
	return bytes.HasPrefix(b, []byte{0xFE, 0xFF}) || bytes.HasPrefix(b, []byte{0xFF, 0xFE})
}

// decoded is a body as UTF-8 text.
type decoded struct {
	text string
	// charset is the encoding it was read in; guessed reports that
	// nothing declared it.
	charset string
	guessed bool
	// replaced counts invalid UTF-8 sequences replaced with U+FFFD.
	replaced int
}

// decode turns a body into UTF-8: in the encoding a byte order mark or
// the Content-Type declares; else as UTF-8 when it is valid UTF-8; else
// in the encoding an HTML meta element declares, or windows-1252 (the
// web's default for undeclared legacy text). JSON is UTF-8. Invalid
// UTF-8 is replaced with U+FFFD and counted; a sequence cut by the size
// limit at the end is dropped.
func decode(body []byte, contentType string, f form, cut bool) decoded {
	if cut {
		body = trimPartialRune(body)
	}
	if f == formJSON {
		return utf8Text(bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF")), "utf-8", false)
	}
	e, name, certain := charset.DetermineEncoding(body, contentType)
	if !certain && utf8.Valid(body) {
		return decoded{text: string(body), charset: "utf-8", guessed: true}
	}
	if name == "utf-8" || e == nil {
		return utf8Text(bytes.TrimPrefix(body, []byte("\xEF\xBB\xBF")), "utf-8", !certain)
	}
	out, err := e.NewDecoder().Bytes(body)
	if err != nil {
		return utf8Text(body, "utf-8", true)
	}
	d := utf8Text(out, name, !certain)
	return d
}

// utf8Text returns b as text, each run of invalid UTF-8 replaced with
// U+FFFD and counted.
func utf8Text(b []byte, cs string, guessed bool) decoded {
	d := decoded{charset: cs, guessed: guessed}
	if utf8.Valid(b) {
		d.text = string(b)
		return d
	}
	var sb strings.Builder
	sb.Grow(len(b))
	inBad := false
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n <= 1 {
			if !inBad {
				sb.WriteRune(utf8.RuneError)
				d.replaced++
				inBad = true
			}
			b = b[1:]
			continue
		}
		inBad = false
		sb.Write(b[:n])
		b = b[n:]
	}
	d.text = sb.String()
	return d
}

// trimPartialRune drops an incomplete UTF-8 sequence at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}
