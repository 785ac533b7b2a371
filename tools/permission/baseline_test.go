package permission

// The splitter and the bash rules this package had before issue 27, kept
// as the baseline of BenchmarkDecideVsSplitter: the new decision reads
// the line with a real parser and checks much more, and must stay within
// twice the old one's time. Test code only; nothing else uses it.

import (
	"fmt"
	"path"
	"strings"

	"github.com/go-harness/harness/tools"
)

// A bash oldCommand oldLine is split into the simple commands it runs, so that
// a rule can be checked against each of them: `a && b`, `a; b`, `a | b`,
// `a & b`, newlines, subshells, and the commands inside `$( )`, backticks,
// `<( )` and `>( )`, and inside the unquoted here-documents and
// double-quoted words that expand them. The oldSplitter is deliberately
// conservative: what it cannot read with certainty (an unterminated
// quote, a loop header, a function definition) makes the whole oldLine
// "complex", which no allow rule can allow.

// oldCommand is one simple oldCommand of a oldLine.
type oldCommand struct {
	// words are the oldCommand's words with quotes removed. A word holding
	// an expansion ($VAR, $( ), backticks, globs are kept literally) has
	// oldDynamicMark in it, so it never equals a rule's literal word.
	words []string
	// redirects are the files the oldCommand reads or writes.
	redirects []oldRedirect
	// complex reports a construct no prefix rule may allow (a loop
	// header, a function definition, a dynamic oldCommand name).
	complex bool
}

// oldRedirect is one redirection to or from a file.
type oldRedirect struct {
	write  bool
	target string
	// dynamic reports a target with an expansion: where it points is
	// known only when it runs.
	dynamic bool
}

// oldDynamicMark is put in a word where an expansion was.
const oldDynamicMark = "\x00"

// oldLine is the result of splitting a oldCommand oldLine.
type oldLine struct {
	commands []oldCommand
	// complex is set when part of the oldLine could not be read with
	// certainty; such a oldLine is never allowed by a prefix rule.
	complex bool
	// cwdChanged reports a cd, pushd or popd anywhere in the oldLine: after
	// it, relative redirection targets no longer resolve against the
	// starting directory.
	cwdChanged bool
}

// oldMaxSplitDepth bounds the nesting of substitutions the oldSplitter follows.
const oldMaxSplitDepth = 32

// oldSplitLine splits a bash oldCommand oldLine into its simple commands.
func oldSplitLine(s string) oldLine {
	p := &oldSplitter{src: s}
	p.parse(0)
	return p.out
}

type oldSplitter struct {
	src string
	pos int
	out oldLine

	cur       oldCommand
	word      strings.Builder
	inWord    bool
	wordDyn   bool
	pendRedir *oldRedirect // the redirection whose target is the next word
	dataWord  bool         // the next word is data (a here-string or a here-doc delimiter)
	heredocs  []oldHeredoc // here-documents whose bodies start after the next newline
	// delimNext is the here-document waiting for its delimiter word.
	delimNext *oldHeredoc
	// wordQuoted reports quotes in the current word (a here-doc delimiter
	// with quotes makes a literal body).
	wordQuoted bool
	// nest is how deep in substitutions this oldSplitter's text is.
	nest int
}

type oldHeredoc struct {
	delim  string
	quoted bool
	strip  bool // <<- strips leading tabs
}

func (p *oldSplitter) peek(off int) byte {
	if p.pos+off < len(p.src) {
		return p.src[p.pos+off]
	}
	return 0
}

// parse reads commands until the end of the input, or, when depth > 0,
// until the unmatched ')' that closes a substitution or subshell (it is
// consumed). It reports whether the closer was found.
func (p *oldSplitter) parse(depth int) bool {
	if p.nest+depth > oldMaxSplitDepth {
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
			if p.peek(1) == '\n' { // a oldLine continuation
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
				p.pendRedir = &oldRedirect{write: true}
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

// nested parses a subshell or substitution body with its own oldCommand
// state, then restores the enclosing oldCommand.
func (p *oldSplitter) nested(depth int) {
	saved := p.saveWord()
	if !p.parse(depth + 1) {
		p.out.complex = true
	}
	p.restoreWord(saved)
}

type oldSavedWord struct {
	cur       oldCommand
	word      string
	inWord    bool
	dyn       bool
	quoted    bool
	pendRedir *oldRedirect
	dataWord  bool
	delimNext *oldHeredoc
}

func (p *oldSplitter) saveWord() oldSavedWord {
	s := oldSavedWord{cur: p.cur, word: p.word.String(), inWord: p.inWord, dyn: p.wordDyn, quoted: p.wordQuoted,
		pendRedir: p.pendRedir, dataWord: p.dataWord, delimNext: p.delimNext}
	p.cur = oldCommand{}
	p.word.Reset()
	p.inWord, p.wordDyn, p.wordQuoted, p.pendRedir, p.dataWord, p.delimNext = false, false, false, nil, false, nil
	return s
}

func (p *oldSplitter) restoreWord(s oldSavedWord) {
	p.cur = s.cur
	p.word.Reset()
	p.word.WriteString(s.word)
	p.inWord, p.wordDyn, p.wordQuoted = s.inWord, s.dyn, s.quoted
	p.pendRedir, p.dataWord, p.delimNext = s.pendRedir, s.dataWord, s.delimNext
}

// doubleQuoted reads a double-quoted string after its opening quote:
// backslash escapes, and $ and backtick expansions, whose commands run.
func (p *oldSplitter) doubleQuoted(depth int) {
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
func (p *oldSplitter) backtick(depth int) {
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

// sub splits the text of a substitution as a oldLine of its own and adds
// its commands.
func (p *oldSplitter) sub(text string, depth int) {
	q := &oldSplitter{src: text, nest: p.nest + depth + 1}
	q.parse(0)
	p.out.commands = append(p.out.commands, q.out.commands...)
	p.out.complex = p.out.complex || q.out.complex
	p.out.cwdChanged = p.out.cwdChanged || q.out.cwdChanged
}

// dollar reads an expansion starting at '$'.
func (p *oldSplitter) dollar(depth int) {
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
	case isNameStart(n) || oldIsDigit(n) || strings.IndexByte("@*#?-$!", n) >= 0:
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
func (p *oldSplitter) skipArith() {
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
func (p *oldSplitter) redirection() {
	if p.inWord && !p.wordDyn && !p.wordQuoted && oldIsAllDigits(p.word.String()) {
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
		h := &oldHeredoc{}
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
		for j < len(p.src) && (oldIsDigit(p.src[j]) || p.src[j] == '-') {
			j++
		}
		if j > p.pos && (j >= len(p.src) || oldIsBreak(p.src[j])) {
			p.pos = j
			return
		}
		p.pendRedir = &oldRedirect{write: c == '>'}
	case c == '<' && p.peek(0) == '>':
		p.pos++
		p.pendRedir = &oldRedirect{write: true}
	case c == '>':
		if p.peek(0) == '>' || p.peek(0) == '|' {
			p.pos++
		}
		p.pendRedir = &oldRedirect{write: true}
	default:
		p.pendRedir = &oldRedirect{}
	}
}

// readHeredocs consumes the bodies of the here-documents opened on the
// oldLine that just ended. An unquoted delimiter makes a body in which
// substitutions run; those are split too.
func (p *oldSplitter) readHeredocs() {
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
func (p *oldSplitter) expansions(text string) {
	q := &oldSplitter{src: text, nest: p.nest + 1}
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

func (p *oldSplitter) startWord() { p.inWord = true }

func (p *oldSplitter) addByte(c byte) {
	p.inWord = true
	p.word.WriteByte(c)
}

func (p *oldSplitter) markDynamic() {
	p.inWord = true
	p.wordDyn = true
	p.word.WriteString(oldDynamicMark)
}

// endWord finishes the current word: a redirection target, a here-doc
// delimiter, data, or a word of the oldCommand.
func (p *oldSplitter) endWord() {
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
		h.delim = strings.ReplaceAll(w, oldDynamicMark, "")
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

// reserved words that may start a oldCommand and are dropped before the
// oldCommand is matched; others make the oldCommand complex.
var (
	oldDropWords    = map[string]bool{"if": true, "then": true, "else": true, "elif": true, "fi": true, "do": true, "done": true, "while": true, "until": true, "!": true, "time": true, "{": true, "}": true, "esac": true}
	oldComplexWords = map[string]bool{"for": true, "case": true, "select": true, "function": true, "coproc": true, "[[": true, "]]": true}
)

// endCommand finishes the current oldCommand.
func (p *oldSplitter) endCommand() {
	p.endWord()
	if p.pendRedir != nil || p.delimNext != nil || p.dataWord {
		if p.pendRedir != nil || p.delimNext != nil {
			p.out.complex = true // a redirection without a target
		}
		p.pendRedir, p.dataWord = nil, false
	}
	c := p.cur
	p.cur = oldCommand{}
	for len(c.words) > 0 && oldDropWords[c.words[0]] {
		c.words = c.words[1:]
	}
	if len(c.words) > 0 {
		if oldComplexWords[c.words[0]] {
			c.complex = true
		}
		if strings.Contains(c.words[0], oldDynamicMark) {
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

func oldIsBreak(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == ';' || c == '&' || c == '|' || c == ')' || c == '<' || c == '>'
}

func oldIsDigit(c byte) bool { return c >= '0' && c <= '9' }

func oldIsAllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !oldIsDigit(s[i]) {
			return false
		}
	}
	return true
}

// oldBashVerdict checks every simple oldCommand of a oldCommand oldLine, and every
// file it redirects to or from.
func (p *Policy) oldBashVerdict(call *tools.Call, sub subject) verdict {
	// Rules on the tool as a whole (Bash, Bash(*), a name rule).
	whole := func(r *rule) bool {
		if r.name != "" {
			return r.matchName(call.Name)
		}
		return r.kind == kindBash && r.anySpec
	}
	for _, l := range []struct {
		name  string
		rules []*rule
	}{{"deny", p.deny}, {"ask", p.ask}} {
		for _, r := range l.rules {
			if whole(r) {
				return verdict{list: l.name, rule: r}
			}
		}
	}
	ln := oldSplitLine(sub.command)
	overall := verdict{list: "allow"}
	allowedWhole := false
	for _, r := range p.allow {
		if whole(r) {
			overall.rule, allowedWhole = r, true
			break
		}
	}
	if ln.complex && !allowedWhole {
		overall = worse(overall, verdict{why: "the oldCommand uses constructs the rules cannot check part by part"})
	}
	if len(ln.commands) == 0 && !allowedWhole {
		overall = worse(overall, verdict{})
	}
	for _, c := range ln.commands {
		cv := p.oldCommandVerdict(c, allowedWhole)
		if cv.list == "allow" && overall.rule == nil {
			overall.rule = cv.rule
		}
		overall = worse(overall, cv)
		for _, rd := range c.redirects {
			rv := p.oldRedirectVerdict(rd, sub, ln.cwdChanged || sub.info.unknownCwd)
			if rv.list == "" && allowedWhole {
				continue // every oldCommand is allowed, wherever it writes
			}
			overall = worse(overall, rv)
		}
	}
	return overall
}

func (p *Policy) oldCommandVerdict(c oldCommand, allowedWhole bool) verdict {
	text := oldCommandText(c)
	// A oldLine run by a shell inside the oldCommand (bash -c '...', eval
	// '...') is checked against the deny and ask rules too.
	if inner, ok := oldInnerLine(c); ok {
		for _, ic := range inner.commands {
			if v := p.oldCommandVerdict(ic, true); v.list == "deny" || v.list == "ask" {
				return v
			}
		}
	}
	for _, l := range []struct {
		name  string
		rules []*rule
	}{{"deny", p.deny}, {"ask", p.ask}} {
		for _, r := range l.rules {
			if r.kind == kindBash && !r.anySpec && r.bash.oldMatchCommandLoose(c) {
				return verdict{list: l.name, rule: r, why: fmt.Sprintf("the part `%s`", text)}
			}
		}
	}
	if allowedWhole {
		return verdict{list: "allow"}
	}
	for _, r := range p.allow {
		if r.kind == kindBash && !r.anySpec && r.bash.oldMatchCommand(c) {
			return verdict{list: "allow", rule: r}
		}
	}
	return verdict{why: fmt.Sprintf("no rule allows the part `%s`", text)}
}

// oldMatchCommandLoose is oldMatchCommand for deny and ask rules: a complex
// oldCommand is matched on its words too, so constructs cannot hide a
// denied program.
func (bp bashPattern) oldMatchCommandLoose(c oldCommand) bool {
	c.complex = false
	if bp.oldMatchCommand(c) {
		return true
	}
	// /bin/rm is rm.
	if len(c.words) > 0 && strings.Contains(c.words[0], "/") {
		d := c
		d.words = append([]string{path.Base(c.words[0])}, c.words[1:]...)
		if bp.oldMatchCommand(d) {
			return true
		}
	}
	// A leading assignment or wrapper must not hide the program:
	// `FOO=1 rm -rf x`, `env rm`, `oldCommand rm`, `sudo rm`, `nohup rm`,
	// `exec rm`, `time rm`, `xargs rm`.
	for len(c.words) > 1 && (oldIsAssignment(c.words[0]) || oldWrappers[c.words[0]]) {
		c.words = c.words[1:]
		for len(c.words) > 1 && strings.HasPrefix(c.words[0], "-") {
			c.words = c.words[1:]
		}
		if bp.oldMatchCommand(c) {
			return true
		}
	}
	return false
}

// oldInnerLine returns the oldCommand oldLine a shell or eval inside c runs.
func oldInnerLine(c oldCommand) (oldLine, bool) {
	if len(c.words) < 2 {
		return oldLine{}, false
	}
	switch path.Base(c.words[0]) {
	case "eval":
		return oldSplitLine(strings.Join(c.words[1:], " ")), true
	case "bash", "sh", "zsh", "dash", "ksh":
		for i := 1; i+1 < len(c.words); i++ {
			if c.words[i] == "-c" || (strings.HasPrefix(c.words[i], "-") && strings.HasSuffix(c.words[i], "c") && !strings.HasPrefix(c.words[i], "--")) {
				return oldSplitLine(c.words[i+1]), true
			}
		}
	}
	return oldLine{}, false
}

var oldWrappers = map[string]bool{"env": true, "oldCommand": true, "builtin": true, "sudo": true, "nohup": true, "exec": true, "time": true, "xargs": true, "nice": true, "timeout": true, "doas": true, "stdbuf": true}

func oldIsAssignment(w string) bool {
	i := strings.IndexByte(w, '=')
	if i <= 0 {
		return false
	}
	for j := 0; j < i; j++ {
		if !isNameByte(w[j]) {
			return false
		}
	}
	return isNameStart(w[0])
}

// oldRedirectVerdict checks a file a oldCommand reads or writes. A write
// inside the workspace is part of the oldCommand (its verdict decides);
// one outside needs an Edit rule.
func (p *Policy) oldRedirectVerdict(rd oldRedirect, sub subject, cwdUnknown bool) verdict {
	t := strings.ReplaceAll(rd.target, oldDynamicMark, "$")
	if rd.dynamic {
		if !rd.write {
			return verdict{list: "allow"}
		}
		return verdict{why: fmt.Sprintf("the redirection to `%s` goes to a place known only when it runs", t)}
	}
	if t == "/dev/null" || t == "/dev/stdout" || t == "/dev/stderr" || strings.HasPrefix(t, "/dev/fd/") {
		return verdict{list: "allow"}
	}
	if strings.HasPrefix(t, "~/") && p.home != "" {
		t = p.home + t[1:]
	}
	if !path.IsAbs(t) && cwdUnknown {
		if rd.write {
			return verdict{why: fmt.Sprintf("the redirection to `%s` is relative to a directory the oldCommand changes", t)}
		}
		return verdict{list: "allow"}
	}
	abs := path.Join(sub.dir, t)
	if path.IsAbs(t) {
		abs = path.Clean(t)
	}
	fsub := subject{info: toolInfo{kind: kindEdit}, dir: sub.dir, ws: sub.dir}
	p.setPaths(&fsub, abs, nil)
	if !rd.write {
		fsub.info.kind = kindRead
		for _, r := range p.deny {
			if p.matches(r, "", fsub, false) && r.name == "" {
				return verdict{list: "deny", rule: r, why: fmt.Sprintf("reading `%s`", t)}
			}
		}
		return verdict{list: "allow"}
	}
	for _, l := range []struct {
		name  string
		rules []*rule
	}{{"deny", p.deny}, {"ask", p.ask}, {"allow", p.allow}} {
		for _, r := range l.rules {
			if r.name == "" && r.kind == kindEdit && p.matches(r, "", fsub, l.name == "allow") {
				return verdict{list: l.name, rule: r, why: fmt.Sprintf("writing `%s`", t)}
			}
		}
	}
	if fsub.inside {
		return verdict{list: "allow"}
	}
	return verdict{why: fmt.Sprintf("the redirection writes `%s`, outside the workspace", t)}
}

// oldCommandText is a simple oldCommand as the user would write it.
func oldCommandText(c oldCommand) string {
	words := make([]string, len(c.words))
	for i, w := range c.words {
		words[i] = strings.ReplaceAll(w, oldDynamicMark, "$…")
	}
	return strings.Join(words, " ")
}

// oldMatchCommand reports whether a simple oldCommand matches the pattern. A
// complex oldCommand matches only a pattern that matches every oldCommand.
func (bp bashPattern) oldMatchCommand(c oldCommand) bool {
	if c.complex {
		return false
	}
	if bp.glob != "" {
		return wildcard(bp.globParts, strings.Join(c.words, " "))
	}
	if len(c.words) < len(bp.words) || (!bp.prefix && len(c.words) != len(bp.words)) {
		return false
	}
	for i, w := range bp.words {
		if c.words[i] != w {
			return false
		}
	}
	return true
}

// oldDecide is Decide with the old bash rules.
func (p *Policy) oldDecide(call *tools.Call) Decision {
	info := builtinTools[call.Name]
	sub := p.subject(call, info)
	v := p.oldBashVerdict(call, sub)
	d := p.apply(call, sub, v)
	d.Preview = preview(call, sub)
	return d
}
