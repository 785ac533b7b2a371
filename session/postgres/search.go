package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-harness/harness/internal/textmatch"
	"github.com/go-harness/harness/session/internal/jsonstr"
	"github.com/go-harness/harness/session/search"
)

// maxNesting bounds how deep searchText looks into strings that hold
// JSON (tool call arguments hold JSON, whose strings may hold more).
const maxNesting = 4

// searchText returns every string of an event line, decoded, and the
// strings of any string that is itself JSON, one per line: a superset of
// the text search.Search matches (a match lies within one piece of
// text), which the trigram index narrows searches with. NUL, which a
// text column cannot hold, becomes U+FFFD here and in queries alike.
func searchText(line []byte) string {
	var b strings.Builder
	b.Grow(len(line))
	if walkStrings(line, &b, 0) {
		return b.String()
	}
	// Not JSON as Event.MarshalJSON writes it: decoded whole, if at all.
	var v any
	if json.Unmarshal(line, &v) != nil {
		return ""
	}
	b.Reset()
	collect(v, &b, 0)
	return b.String()
}

// walkStrings writes every string value of the JSON text data (not the
// keys of its objects) to b, decoded, as collect does for the decoded
// value, in one pass over the bytes. It reports false, having written
// whatever, when data is not balanced JSON; it does not check the rest
// of the syntax, which only a line not written by Append could break.
func walkStrings(data []byte, b *strings.Builder, depth int) bool {
	var stack []byte // '{' or '[' of each open container
	key := false     // the next string in an object is a key
	for i := 0; i < len(data); {
		switch c := data[i]; c {
		case '"':
			j := i + 1
			for j < len(data) && data[j] != '"' {
				if data[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(data) {
				return false
			}
			if key {
				key = false
			} else {
				str, ok := jsonstr.Prefix(data[i+1 : j+1])
				if !ok {
					return false
				}
				writeBody(str, b, depth)
			}
			i = j + 1
			continue
		case '{':
			stack = append(stack, c)
			key = true
		case '[':
			stack = append(stack, c)
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c-2 {
				return false // '{'+2 is '}', '['+2 is ']'
			}
			stack = stack[:len(stack)-1]
		case ',':
			key = len(stack) > 0 && stack[len(stack)-1] == '{'
		}
		i++
	}
	return len(stack) == 0
}

// writeBody writes one decoded string to b, and the strings within it
// when it holds JSON.
func writeBody(x string, b *strings.Builder, depth int) {
	if strings.IndexByte(x, 0) >= 0 {
		b.WriteString(strings.ReplaceAll(x, "\x00", "\uFFFD"))
	} else {
		b.WriteString(x)
	}
	b.WriteByte('\n')
	if t := strings.TrimLeft(x, " \t\r\n"); depth < maxNesting && t != "" && (t[0] == '{' || t[0] == '[') {
		if inner := []byte(x); json.Valid(inner) {
			walkStrings(inner, b, depth+1)
		}
	}
}

func collect(v any, b *strings.Builder, depth int) {
	switch x := v.(type) {
	case string:
		b.WriteString(strings.ReplaceAll(x, "\x00", "\uFFFD"))
		b.WriteByte('\n')
		if t := strings.TrimLeft(x, " \t\r\n"); depth < maxNesting && t != "" && (t[0] == '{' || t[0] == '[') {
			var inner any
			if json.Unmarshal([]byte(x), &inner) == nil {
				collect(inner, b, depth+1)
			}
		}
	case []any:
		for _, e := range x {
			collect(e, b, depth)
		}
	case map[string]any:
		for _, e := range x {
			collect(e, b, depth)
		}
	}
}

var _ search.Searcher = (*store)(nil)

// Search implements search.Searcher in SQL: the sessions of the
// workspace that hold a candidate event, newest first, and their
// candidate events, found with the trigram index for a literal query;
// search.Lines then matches them exactly as the JSONL store
// matches its files, so both answer a search alike.
func (s *store) Search(ctx context.Context, opts search.Options) ([]search.Match, error) {
	// An invalid query fails before any SQL is sent.
	if _, err := search.Lines(ctx, opts, nil, nil); err != nil {
		return nil, err
	}
	ws := opts.Workspace
	if opts.AllWorkspaces {
		ws = ""
	}
	where, args := workspaceFilter(ws, nil)
	var cond []string
	if where != "" {
		cond = append(cond, strings.TrimPrefix(where, " WHERE "))
	}
	if len(opts.Exclude) > 0 {
		args = append(args, opts.Exclude)
		cond = append(cond, fmt.Sprintf("NOT (id = ANY($%d))", len(args)))
	}
	// The event filter, shared by the session query and the line query.
	var evCond []string
	var evArgs []any
	if opts.Types != nil {
		evArgs = append(evArgs, opts.Types)
		evCond = append(evCond, "type = ANY($%d)")
	}
	if !opts.Regex && utf8.ValidString(opts.Query) {
		evArgs = append(evArgs, "%"+likeEscape(strings.ReplaceAll(opts.Query, "\x00", "\uFFFD"))+"%")
		evCond = append(evCond, "body LIKE $%d")
	}
	if opts.Regex {
		for _, f := range regexFilters(opts.Query) {
			evArgs = append(evArgs, f.arg)
			evCond = append(evCond, f.cond)
		}
	}
	eventWhere := func(first int) string {
		parts := make([]string, len(evCond))
		for i, c := range evCond {
			parts[i] = fmt.Sprintf(c, first+i)
		}
		return strings.Join(parts, " AND ")
	}
	if len(evCond) > 0 {
		cond = append(cond, "EXISTS (SELECT 1 FROM harness_events e WHERE e.session_id = harness_sessions.id AND "+eventWhere(len(args)+1)+")")
		args = append(args, evArgs...)
	}
	sql := `SELECT header, title, updated_ns, size, meta FROM harness_sessions`
	if len(cond) > 0 {
		sql += " WHERE " + strings.Join(cond, " AND ")
	}
	rows, err := s.pool.Query(ctx, sql+orderNewest, args...)
	if err != nil {
		return nil, dbErr("searching sessions", err)
	}
	infos, err := scanInfos(rows)
	if err != nil {
		return nil, dbErr("searching sessions", err)
	}
	lineSQL := `SELECT line FROM harness_events WHERE session_id = $1`
	if len(evCond) > 0 {
		lineSQL += " AND " + eventWhere(2)
	}
	lineSQL += " ORDER BY seq"
	return search.Lines(ctx, opts, infos, func(ctx context.Context, i int) ([][]byte, error) {
		rows, err := s.pool.Query(ctx, lineSQL, append([]any{infos[i].Header.ID}, evArgs...)...)
		if err != nil {
			return nil, dbErr("searching session "+infos[i].Header.ID, err)
		}
		defer rows.Close()
		var out [][]byte
		for rows.Next() {
			out = append(out, bytes.Clone(rows.RawValues()[0]))
		}
		if err := rows.Err(); err != nil {
			return nil, dbErr("searching session "+infos[i].Header.ID, err)
		}
		return out, nil
	})
}

// sqlFilter is one condition on an event's body and its parameter (the
// condition has a %d for the parameter's number).
type sqlFilter struct {
	cond string
	arg  string
}

// regexFilters returns conditions every event holding a match of the
// regular expression pattern passes: for each set of literals one of
// which every match contains (textmatch.RequiredSets, as the JSONL search
// prefilters lines), the body holds one of them. A match lies within one
// piece of text and the body holds every piece, so the conditions only
// drop events without a match, and search.Lines decides on the rest.
func regexFilters(pattern string) []sqlFilter {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	var out []sqlFilter
	for _, set := range textmatch.RequiredSets(re.Simplify()) {
		if len(set) == 0 {
			continue
		}
		if len(set) == 1 && !set[0].Fold {
			out = append(out, sqlFilter{"body LIKE $%d", "%" + likeEscape(bodyForm(set[0].Text)) + "%"})
			continue
		}
		alts := make([]string, len(set))
		for i, l := range set {
			alts[i] = regexLiteral(bodyForm(l.Text), l.Fold)
		}
		out = append(out, sqlFilter{"body ~ $%d", strings.Join(alts, "|")})
	}
	return out
}

// bodyForm is text as the body column holds it: NUL, which a text
// column cannot hold, is U+FFFD there.
func bodyForm(s string) string { return strings.ReplaceAll(s, "\x00", "\uFFFD") }

// regexLiteral returns a PostgreSQL regular expression (ARE) matching s
// exactly or, with fold, with ASCII letters in either case: every ASCII
// punctuation character or symbol is escaped (a backslash before one
// stands for the character itself), and a folded letter is a bracket of
// its two cases, which no locale changes.
func regexLiteral(s string, fold bool) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case fold && r < utf8.RuneSelf && unicode.IsLetter(r):
			b.WriteByte('[')
			b.WriteRune(unicode.ToLower(r))
			b.WriteRune(unicode.ToUpper(r))
			b.WriteByte(']')
		case r > ' ' && r < utf8.RuneSelf-1 && !unicode.IsLetter(r) && !unicode.IsDigit(r):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
