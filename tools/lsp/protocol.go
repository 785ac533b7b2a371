package lsp

import (
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
)

// The parts of the Language Server Protocol this package speaks.

// Position is a 0-based line and character offset in a document.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a span of a document.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Severity of a diagnostic, as LSP numbers them.
type Severity int

// Severities.
const (
	SeverityError       Severity = 1
	SeverityWarning     Severity = 2
	SeverityInformation Severity = 3
	SeverityHint        Severity = 4
)

// String is the severity's name, as a compiler prints it.
func (s Severity) String() string {
	switch s {
	case SeverityError:
		return "error"
	case SeverityWarning:
		return "warning"
	case SeverityInformation:
		return "info"
	case SeverityHint:
		return "hint"
	}
	return "error" // unset: LSP says the client decides; count it as an error
}

// wireDiagnostic is a diagnostic as a server sends it.
type wireDiagnostic struct {
	Range    Range    `json:"range"`
	Severity Severity `json:"severity,omitempty"`
	// Code is a number or a string.
	Code    any    `json:"code,omitempty"`
	Source  string `json:"source,omitempty"`
	Message string `json:"message"`
}

// Diagnostic is a problem a language server reports in a file.
type Diagnostic struct {
	// Path is the file's OS path.
	Path string `json:"path"`
	// Line and Column are 1-based; Column counts bytes when the server
	// agreed to UTF-8 positions, UTF-16 code units otherwise.
	Line     int      `json:"line"`
	Column   int      `json:"column"`
	Severity Severity `json:"severity"`
	Source   string   `json:"source,omitempty"`
	Code     string   `json:"code,omitempty"`
	Message  string   `json:"message"`
}

// key identifies a diagnostic across an edit: everything but where it
// is, which an edit above it moves.
func (d Diagnostic) key() string {
	return d.Path + "\x00" + d.Severity.String() + "\x00" + d.Source + "\x00" + d.Code + "\x00" + d.Message
}

func codeString(c any) string {
	switch v := c.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return strconvF(v)
	}
	return ""
}

// fileURI is the file: URI of an OS path.
func fileURI(path string) string {
	p := filepath.ToSlash(path)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive letter
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// uriPath is the OS path of a file: URI, or "" for another URI.
func uriPath(uri string) string {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return ""
	}
	p := u.Path
	if len(p) >= 3 && p[0] == '/' && p[2] == ':' {
		p = p[1:] // /C:/x on Windows
	}
	return filepath.Clean(filepath.FromSlash(p))
}

func strconvF(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
