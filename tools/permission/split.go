package permission

import (
	"strings"
)

// A bash command line is split into the simple commands it runs, so that
// a rule can be checked against each of them: `a && b`, `a; b`, `a | b`,
// `a & b`, newlines, subshells, and the commands inside `$( )`, backticks,
// `<( )` and `>( )`, and inside the unquoted here-documents and
// double-quoted words that expand them. The splitter is deliberately
// conservative: what it cannot read with certainty (an unterminated
// quote, a loop header, a function definition) makes the whole line
// "complex", which no allow rule can allow.

// command is one simple command of a line.
type command struct {
	// words are the command's words with quotes removed. A word holding
	// an expansion ($VAR, $( ), backticks, globs are kept literally) has
	// dynamicMark in it, so it never equals a rule's literal word.
	words []string
	// redirects are the files the command reads or writes.
	redirects []redirect
	// complex reports a construct no prefix rule may allow (a loop
	// header, a function definition, a dynamic command name).
	complex bool
}

// redirect is one redirection to or from a file.
type redirect struct {
	write  bool
	target string
	// dynamic reports a target with an expansion: where it points is
	// known only when it runs.
	dynamic bool
}

// dynamicMark is put in a word where an expansion was.
const dynamicMark = "\x00"

// line is the result of splitting a command line.
type line struct {
	commands []command
	// complex is set when part of the line could not be read with
	// certainty; such a line is never allowed by a prefix rule.
	complex bool
	// cwdChanged reports a cd, pushd or popd anywhere in the line: after
	// it, relative redirection targets no longer resolve against the
	// starting directory.
	cwdChanged bool
}

// maxSplitDepth bounds the nesting of substitutions the splitter follows.
const maxSplitDepth = 32

// splitLine splits a bash command line into its simple commands.
func splitLine(s string) line {
	p := &splitter{src: s}
	p.parse(0)
	return p.out
}

type splitter struct {
	src string
	pos int
	out line

	cur       command
	word      strings.Builder
	inWord    bool
	wordDyn   bool
	pendRedir *redirect // the redirection whose target is the next word
	dataWord  bool      // the next word is data (a here-string or a here-doc delimiter)
	heredocs  []heredoc // here-documents whose bodies start after the next newline
	// delimNext is the here-document waiting for its delimiter word.
	delimNext *heredoc
	// wordQuoted reports quotes in the current word (a here-doc delimiter
	// with quotes makes a literal body).
	wordQuoted bool
	// nest is how deep in substitutions this splitter's text is.
	nest int
}

type heredoc struct {
	delim  string
	quoted bool
	strip  bool // <<- strips leading tabs
}

func (p *splitter) peek(off int) byte {
	if p.pos+off < len(p.src) {
		return p.src[p.pos+off]
	}
	return 0
}

// parse reads commands until the end of the input, or, when depth > 0,
// until the unmatched ')' that closes a substitution or subshell (it is
// consumed). It reports whether the closer was found.
func (p *splitter) parse(depth int) bool {
	if p.nest+depth > maxSplitDepth {
		p.out.complex = true
		p.pos = len(p.src)
		return false
	}
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == ' ' || c == '\t':
			p.endWord()
			p.pos++
		case c == '\\':
			if p.peek(1) == '\n' { // a line continuation
				p.pos += 2
				continue
			}
			if p.pos+1 >= len(p.src) {
				p.pos++
				continue
			}
			p.addByte(p.src[p.pos+1])
			p.pos += 2
		case c == '\n':
			p.endCommand()
			p.pos++
			p.readHeredocs()
		case c == ';' || c == '&' || c == '|':
			if c == '&' && p.peek(1) == '>' { // &> and &>>
				p.endWord()
				p.pos += 2
				if p.peek(0) == '>' {
					p.pos++
				}
				p.pendRedir = &redirect{write: true}
				continue
			}
			p.endCommand()
			p.pos++
			if p.peek(0) == c || (c == '|' && p.peek(0) == '&') || (c == ';' && p.peek(0) == '&') {
				p.pos++
			}
		case c == '(':
			if p.inWord || len(p.cur.words) > 0 {
				// name() { ...: a function definition; or an odd word.
				p.out.complex = true
			}
			p.endCommand()
			p.pos++
			if p.peek(0) == '(' { // (( arithmetic ))
				p.skipArith()
				continue
			}
			p.nested(depth)
		case c == ')':
			if depth > 0 {
				p.endCommand()
				p.pos++
				return true
			}
			p.out.complex = true
			p.endCommand()
			p.pos++
		case c == '#' && !p.inWord:
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case c == '\'':
			p.startWord()
			p.wordQuoted = true
			end := strings.IndexByte(p.src[p.pos+1:], '\'')
			if end < 0 {
				p.out.complex = true
				p.word.WriteString(p.src[p.pos+1:])
				p.pos = len(p.src)
				continue
			}
			p.word.WriteString(p.src[p.pos+1 : p.pos+1+end])
			p.pos += end + 2
		case c == '"':
			p.startWord()
			p.wordQuoted = true
			p.pos++
			p.doubleQuoted(depth)
		case c == '`':
			p.startWord()
			p.markDynamic()
			p.pos++
			p.backtick(depth)
		case c == '$':
			p.dollar(depth)
		case (c == '<' || c == '>') && p.peek(1) == '(':
			// Process substitution: its commands run.
			p.startWord()
			p.markDynamic()
			p.pos += 2
			p.nested(depth)
		case c == '<' || c == '>':
			p.redirection()
		default:
			p.addByte(c)
			p.pos++
		}
	}
	p.endCommand()
	if depth > 0 {
		p.out.complex = true // unterminated
		return false
	}
	if len(p.heredocs) > 0 || p.delimNext != nil {
		p.out.complex = true // a here-document without its body
	}
	return true
}

// nested parses a subshell or substitution body with its own command
// state, then restores the enclosing command.
func (p *splitter) nested(depth int) {
	saved := p.saveWord()
	if !p.parse(depth + 1) {
		p.out.complex = true
	}
	p.restoreWord(saved)
}

type savedWord struct {
	cur       command
	word      string
	inWord    bool
	dyn       bool
	quoted    bool
	pendRedir *redirect
	dataWord  bool
	delimNext *heredoc
}

func (p *splitter) saveWord() savedWord {
	s := savedWord{cur: p.cur, word: p.word.String(), inWord: p.inWord, dyn: p.wordDyn, quoted: p.wordQuoted,
		pendRedir: p.pendRedir, dataWord: p.dataWord, delimNext: p.delimNext}
	p.cur = command{}
	p.word.Reset()
	p.inWord, p.wordDyn, p.wordQuoted, p.pendRedir, p.dataWord, p.delimNext = false, false, false, nil, false, nil
	return s
}

func (p *splitter) restoreWord(s savedWord) {
	p.cur = s.cur
	p.word.Reset()
	p.word.WriteString(s.word)
	p.inWord, p.wordDyn, p.wordQuoted = s.inWord, s.dyn, s.quoted
	p.pendRedir, p.dataWord, p.delimNext = s.pendRedir, s.dataWord, s.delimNext
}

// doubleQuoted reads a double-quoted string after its opening quote:
// backslash escapes, and $ and backtick expansions, whose commands run.
func (p *splitter) doubleQuoted(depth int) {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch c {
		case '"':
			p.pos++
			return
		case '\\':
			if n := p.peek(1); n == '"' || n == '\\' || n == '$' || n == '`' {
				p.word.WriteByte(n)
				p.pos += 2
				continue
			} else if n == '\n' {
				p.pos += 2
				continue
			}
			p.word.WriteByte(c)
			p.pos++
		case '`':
			p.markDynamic()
			p.pos++
			p.backtick(depth)
		case '$':
			p.dollar(depth)
		default:
			p.word.WriteByte(c)
			p.pos++
		}
	}
	p.out.complex = true // unterminated
}

// backtick reads a `...` substitution after its opening backtick and
// splits its body.
func (p *splitter) backtick(depth int) {
	var body strings.Builder
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '\\' && p.pos+1 < len(p.src) {
			n := p.src[p.pos+1]
			if n == '`' || n == '\\' || n == '$' {
				body.WriteByte(n)
			} else {
				body.WriteByte(c)
				body.WriteByte(n)
			}
			p.pos += 2
			continue
		}
		if c == '`' {
			p.pos++
			p.sub(body.String(), depth)
			return
		}
		body.WriteByte(c)
		p.pos++
	}
	p.out.complex = true
	p.sub(body.String(), depth)
}

// sub splits the text of a substitution as a line of its own and adds
// its commands.
func (p *splitter) sub(text string, depth int) {
	q := &splitter{src: text, nest: p.nest + depth + 1}
	q.parse(0)
	p.out.commands = append(p.out.commands, q.out.commands...)
	p.out.complex = p.out.complex || q.out.complex
	p.out.cwdChanged = p.out.cwdChanged || q.out.cwdChanged
}

// dollar reads an expansion starting at '$'.
func (p *splitter) dollar(depth int) {
	p.startWord()
	n := p.peek(1)
	switch {
	case n == '(' && p.peek(2) == '(':
		p.pos += 3
		p.skipArith()
	case n == '(':
		p.markDynamic()
		p.pos += 2
		p.nested(depth)
	case n == '{':
		p.markDynamic()
		p.pos += 2
		// ${...} may hold substitutions in its word: parse it as a
		// nested body closed by '}'.
		level := 1
		for p.pos < len(p.src) && level > 0 {
			switch p.src[p.pos] {
			case '{':
				level++
			case '}':
				level--
			case '$':
				if p.peek(1) == '(' || p.peek(1) == '{' {
					p.dollar(depth)
					continue
				}
			case '`':
				p.pos++
				p.backtick(depth)
				continue
			case '\\':
				p.pos++
			}
			p.pos++
		}
		if level > 0 {
			p.out.complex = true
		}
	case n == '\'':
		// $'...': ANSI-C quoting; the escapes are kept as written.
		p.wordQuoted = true
		p.pos += 2
		for p.pos < len(p.src) && p.src[p.pos] != '\'' {
			if p.src[p.pos] == '\\' && p.pos+1 < len(p.src) {
				p.word.WriteByte(p.src[p.pos])
				p.pos++
			}
			p.word.WriteByte(p.src[p.pos])
			p.pos++
		}
		if p.pos >= len(p.src) {
			p.out.complex = true
			return
		}
		p.pos++
		p.markDynamic() // escapes make its value differ from its text
	case n == '"':
		p.pos++ // $"..." is a translated string
	case isNameStart(n) || isDigit(n) || strings.IndexByte("@*#?-$!", n) >= 0:
		p.markDynamic()
		p.pos += 2
		if isNameStart(n) {
			for p.pos < len(p.src) && isNameByte(p.src[p.pos]) {
				p.pos++
			}
		}
	default:
		p.word.WriteByte('$')
		p.pos++
	}
}

// skipArith skips an arithmetic expression after its opening "((" up to
// the matching "))". Arithmetic may hold substitutions, which run.
func (p *splitter) skipArith() {
	level := 2
	for p.pos < len(p.src) && level > 0 {
		switch p.src[p.pos] {
		case '(':
			level++
		case ')':
			level--
		case '`':
			p.out.complex = true // a substitution inside arithmetic runs
		case '$':
			if p.peek(1) == '(' {
				p.out.complex = true
			}
		}
		p.pos++
	}
	if level > 0 {
		p.out.complex = true
	}
	p.markDynamic()
}

// redirection reads a redirection operator at '<' or '>' (a file
// descriptor number before it is part of the current word, which is
// dropped when it is all digits).
func (p *splitter) redirection() {
	if p.inWord && !p.wordDyn && !p.wordQuoted && isAllDigits(p.word.String()) {
		p.word.Reset()
		p.inWord = false
	} else {
		p.endWord()
	}
	c := p.src[p.pos]
	p.pos++
	switch {
	case c == '<' && p.peek(0) == '<' && p.peek(1) == '<': // here-string
		p.pos += 2
		p.dataWord = true
	case c == '<' && p.peek(0) == '<': // here-document
		p.pos++
		h := &heredoc{}
		if p.peek(0) == '-' {
			h.strip = true
			p.pos++
		}
		p.delimNext = h
	case c == '<' && p.peek(0) == '&', c == '>' && p.peek(0) == '&':
		p.pos++
		// A descriptor copy (2>&1, <&-), or, for >& word, a file.
		for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t') {
			p.pos++
		}
		j := p.pos
		for j < len(p.src) && (isDigit(p.src[j]) || p.src[j] == '-') {
			j++
		}
		if j > p.pos && (j >= len(p.src) || isBreak(p.src[j])) {
			p.pos = j
			return
		}
		p.pendRedir = &redirect{write: c == '>'}
	case c == '<' && p.peek(0) == '>':
		p.pos++
		p.pendRedir = &redirect{write: true}
	case c == '>':
		if p.peek(0) == '>' || p.peek(0) == '|' {
			p.pos++
		}
		p.pendRedir = &redirect{write: true}
	default:
		p.pendRedir = &redirect{}
	}
}

// readHeredocs consumes the bodies of the here-documents opened on the
// line that just ended. An unquoted delimiter makes a body in which
// substitutions run; those are split too.
func (p *splitter) readHeredocs() {
	docs := p.heredocs
	p.heredocs = nil
	for _, h := range docs {
		var body strings.Builder
		found := false
		for p.pos < len(p.src) {
			end := strings.IndexByte(p.src[p.pos:], '\n')
			var ln string
			if end < 0 {
				ln = p.src[p.pos:]
				p.pos = len(p.src)
			} else {
				ln = p.src[p.pos : p.pos+end]
				p.pos += end + 1
			}
			cmp := ln
			if h.strip {
				cmp = strings.TrimLeft(ln, "\t")
			}
			if cmp == h.delim {
				found = true
				break
			}
			body.WriteString(ln)
			body.WriteByte('\n')
		}
		if !found {
			p.out.complex = true
		}
		if !h.quoted {
			p.expansions(body.String())
		}
	}
}

// expansions splits the substitutions of text that is expanded as if
// double-quoted (a here-document body).
func (p *splitter) expansions(text string) {
	q := &splitter{src: text, nest: p.nest + 1}
	for q.pos < len(q.src) {
		switch q.src[q.pos] {
		case '\\':
			q.pos += 2
		case '$':
			q.dollar(0)
		case '`':
			q.pos++
			q.backtick(0)
		default:
			q.pos++
		}
	}
	// The body's own words are data: only its substitutions run.
	p.out.commands = append(p.out.commands, q.out.commands...)
	p.out.complex = p.out.complex || q.out.complex
}

func (p *splitter) startWord() { p.inWord = true }

func (p *splitter) addByte(c byte) {
	p.inWord = true
	p.word.WriteByte(c)
}

func (p *splitter) markDynamic() {
	p.inWord = true
	p.wordDyn = true
	p.word.WriteString(dynamicMark)
}

// endWord finishes the current word: a redirection target, a here-doc
// delimiter, data, or a word of the command.
func (p *splitter) endWord() {
	if !p.inWord {
		return
	}
	w := p.word.String()
	dyn, quoted := p.wordDyn, p.wordQuoted
	p.word.Reset()
	p.inWord, p.wordDyn, p.wordQuoted = false, false, false
	switch {
	case p.delimNext != nil:
		h := p.delimNext
		p.delimNext = nil
		h.delim = strings.ReplaceAll(w, dynamicMark, "")
		h.quoted = quoted || dyn
		p.heredocs = append(p.heredocs, *h)
	case p.pendRedir != nil:
		r := *p.pendRedir
		p.pendRedir = nil
		r.target, r.dynamic = w, dyn || strings.ContainsAny(w, "*?[")
		p.cur.redirects = append(p.cur.redirects, r)
	case p.dataWord:
		p.dataWord = false
	default:
		p.cur.words = append(p.cur.words, w)
	}
}

// reserved words that may start a command and are dropped before the
// command is matched; others make the command complex.
var (
	dropWords    = map[string]bool{"if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true, "done": true, "while": true, "until": true, "!": true, "time": true, "{": true, "}": true, "esac": true}
	complexWords = map[string]bool{"for": true, "case": true, "select": true, "function": true, "coproc": true, "[[": true, "]]": true}
)

// endCommand finishes the current command.
func (p *splitter) endCommand() {
	p.endWord()
	if p.pendRedir != nil || p.delimNext != nil || p.dataWord {
		if p.pendRedir != nil || p.delimNext != nil {
			p.out.complex = true // a redirection without a target
		}
		p.pendRedir, p.dataWord = nil, false
	}
	c := p.cur
	p.cur = command{}
	for len(c.words) > 0 && dropWords[c.words[0]] {
		c.words = c.words[1:]
	}
	if len(c.words) > 0 {
		if complexWords[c.words[0]] {
			c.complex = true
		}
		if strings.Contains(c.words[0], dynamicMark) {
			c.complex = true // the program to run is known only when it runs
		}
		for _, w := range c.words {
			if w == "cd" || w == "pushd" || w == "popd" {
				p.out.cwdChanged = true
			}
		}
	}
	if len(c.words) == 0 && len(c.redirects) == 0 {
		return
	}
	p.out.commands = append(p.out.commands, c)
}

func isBreak(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == ')' || c == '<' || c == '>'
}

func isDigit(c byte) bool     { return c >= '0' && c <= '9' }
func isNameStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isNameByte(c byte) bool  { return isNameStart(c) || isDigit(c) }

func isAllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
