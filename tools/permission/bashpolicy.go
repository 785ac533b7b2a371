package permission

import (
	"fmt"
	"path"
	"strings"

	"github.com/go-harness/harness/tools"
)

// The rules on top of a command line's view (see bash.go).
//
// A deny or ask rule matches a command when it could: a word known only
// when the line runs may be whatever the rule names, so `$(echo rm) x`
// and `/usr/bin/r[m] x` match Bash(rm:*). An allow rule matches only
// what it certainly names: every word it covers written plainly (no
// expansion, glob, brace expansion or ANSI-C quoting). A command run by
// a wrapper (timeout, env, xargs, find -exec, sudo ...) is checked on
// its own as well; a transparent wrapper (timeout, nice, env, bash -c
// ...) needs no rule of its own, the others (sudo, xargs, find) need
// one for themselves and one for what they run, unless a rule names
// both (Bash(sudo apt install:*)).
//
// Every word of every command may name a file: one that a Read deny
// rule matches denies the command, whatever the program (cat, grep,
// base64, cp, tar ...). The files a known writer changes (tee, cp, mv,
// rm, sed -i, dd of=, touch, truncate, ln, chmod ...) and those
// redirected to are checked like the write tool's: an Edit deny rule
// denies, an Edit ask rule asks, and outside the workspace an Edit
// allow rule is needed.

// bashVerdict checks a command line: every simple command, the files
// they name and the files redirected to or from.
func (p *Policy) bashVerdict(call *tools.Call, sub subject) (verdict, *bashView) {
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
				return verdict{list: l.name, rule: r}, nil
			}
		}
	}
	c := &bashCheck{p: p, sub: sub}
	for _, r := range p.allow {
		if whole(r) {
			c.allowedWhole, c.wholeRule = true, r
			break
		}
	}
	c.v = parseBash(sub.command, shellEnv{dir: sub.dir, ws: sub.ws, home: p.home, persistent: sub.info.unknownCwd,
		paths: p.hasReadRules || p.hasEditRules})
	// Plan mode keeps denying every command: read-only lines change
	// nothing in the other modes only.
	c.readOnly = p.mode != ModePlan && readOnlyLine(c.v, sub.info.unknownCwd)
	v := c.verdict()
	v.readOnly = c.readOnly
	return v, c.v
}

// bashCheck is one command line under check.
type bashCheck struct {
	p   *Policy
	sub subject
	v   *bashView
	// allowedWhole: a rule allows every command (Bash, Bash(*)).
	allowedWhole bool
	wholeRule    *rule
	// readOnly: every command of the line is read-only (readOnlyLine),
	// so none needs an allow rule; every other check still applies.
	readOnly bool
	// forms caches the forms of the paths checked (links resolved once
	// per path, not once per rule).
	forms map[string]*subject
}

// How far the links of a path are resolved.
type linkMode uint8

const (
	// linksAll: every link (a redirection, as the write tool's path).
	linksAll linkMode = iota
	// linksInside: the links below the workspace (a file a writer
	// changes: outside the workspace it needs an Edit allow rule as
	// written).
	linksInside
	// linksNone: the path as written (a command's word, which names a
	// file; the sandbox holds what a command reaches through a link).
	linksNone
)

// subjectFor returns the forms of an absolute path, as a file tool's
// subject, with its links resolved as mode says.
func (c *bashCheck) subjectFor(abs string, mode linkMode) *subject {
	key := string(rune('0'+mode)) + abs
	if f, ok := c.forms[key]; ok {
		return f
	}
	if c.forms == nil {
		c.forms = map[string]*subject{}
	}
	f := &subject{info: toolInfo{kind: kindEdit}, dir: c.sub.ws, ws: c.sub.ws}
	_, inside := relUnder(abs, c.sub.ws)
	switch {
	case mode == linksNone, mode == linksInside && !inside:
		f.paths = []string{abs}
		f.forms = []pathForm{newForm(abs, c.sub.ws, c.p.home)}
		f.inside = inside
	default:
		c.p.setPaths(f, abs, nil)
	}
	c.forms[key] = f
	return f
}

func (c *bashCheck) verdict() verdict {
	p, v := c.p, c.v
	overall := verdict{list: "allow", rule: c.wholeRule}
	if v.anyCode != "" {
		// Code whose text exists only when the line runs may be what any
		// command rule names.
		if r := firstCommandRule(p.deny); r != nil {
			return verdict{list: "deny", rule: r, why: "the line may run code the rules cannot see: " + v.anyCode}
		}
		if r := firstCommandRule(p.ask); r != nil {
			overall = worse(overall, verdict{list: "ask", rule: r, why: "the line may run code the rules cannot see: " + v.anyCode})
		}
	}
	if len(v.unmodelled) > 0 && !c.allowedWhole {
		overall = worse(overall, verdict{why: "the rules cannot model this line, so no prefix rule allows it: " + v.unmodelled[0]})
	}
	for _, cv := range v.cmds {
		overall = worse(overall, c.commandRules(cv))
		if pv := c.paths(cv); pv.list != "" || !c.allowedWhole {
			overall = worse(overall, pv)
		}
		if overall.list == "deny" {
			return overall
		}
	}
	if !c.allowedWhole {
		for _, cv := range v.cmds {
			if cv.parent != nil {
				continue
			}
			ok, r := c.allowed(cv)
			if !ok && c.readOnly {
				continue
			}
			if !ok {
				why := fmt.Sprintf("no rule allows the part `%s`", cmdText(cv))
				if u := unmodelledIn(cv); u != "" {
					why = fmt.Sprintf("the part `%s` is not modelled, so no prefix rule allows it: %s", cmdText(cv), u)
				}
				overall = worse(overall, verdict{why: why})
				continue
			}
			if overall.rule == nil && r != nil {
				overall.rule = r
			}
		}
		if len(v.cmds) == 0 {
			// Nothing runs, but a bare redirection (> file) still
			// truncates or creates its file: no rule allows that.
			overall = worse(overall, verdict{why: "the line runs no command"})
		}
	}
	for _, rd := range v.redirs {
		rv := c.redirect(rd)
		if rv.list == "" && c.allowedWhole {
			continue // every command is allowed, wherever it writes
		}
		overall = worse(overall, rv)
		if overall.list == "deny" {
			return overall
		}
	}
	return overall
}

// unmodelledIn returns why a command, or one it runs, is not modelled.
func unmodelledIn(cv *cmdView) string {
	if cv.unmodelled != "" {
		return cv.unmodelled
	}
	for _, in := range cv.inners {
		if u := unmodelledIn(in); u != "" {
			return u
		}
	}
	return ""
}

// firstCommandRule returns the first rule of a list with a Bash
// specifier.
func firstCommandRule(rules []*rule) *rule {
	for _, r := range rules {
		if r.kind == kindBash && !r.anySpec {
			return r
		}
	}
	return nil
}

// commandRules checks a command against the deny and ask rules.
func (c *bashCheck) commandRules(cv *cmdView) verdict {
	for _, l := range []struct {
		name  string
		rules []*rule
	}{{"deny", c.p.deny}, {"ask", c.p.ask}} {
		for _, r := range l.rules {
			if r.kind != kindBash || r.anySpec {
				continue
			}
			if r.bash.couldMatch(cv.words, cv.tail) {
				why := fmt.Sprintf("the part `%s`%s", cmdText(cv), viaText(cv))
				if cv.unmodelled != "" {
					why += ", whose " + cv.unmodelled
				}
				return verdict{list: l.name, rule: r, why: why}
			}
			if cv.unmodelled != "" {
				// What the command runs is not modelled: any of its
				// trailing words may start it, and a word may be split
				// into several (env -S).
				loose := splitWords(cv.words[1:])
				for i := range loose {
					if r.bash.couldMatch(loose[i:], true) {
						return verdict{list: l.name, rule: r, why: fmt.Sprintf("the part `%s`, which may run what its words say: %s", cmdText(cv), cv.unmodelled)}
					}
				}
			}
		}
	}
	return verdict{list: "allow"}
}

// splitWords splits static words at blanks, as a program that splits a
// string into a command would.
func splitWords(words []wordv) []wordv {
	var out []wordv
	for _, w := range words {
		if !w.static {
			out = append(out, w)
			continue
		}
		for _, f := range strings.Fields(w.text) {
			out = append(out, plainWord(f))
		}
	}
	return out
}

func viaText(cv *cmdView) string {
	if cv.via == "" {
		return ""
	}
	return ", " + cv.via
}

// allowed reports whether the allow rules allow a command and what it
// runs, and by which rule.
func (c *bashCheck) allowed(cv *cmdView) (bool, *rule) {
	if cv.unmodelled != "" {
		return false, nil
	}
	if len(cv.inners) == 0 {
		if cv.runsLine && cv.transparent {
			return true, nil // its commands are checked on their own
		}
		r := c.matchAllow(cv)
		return r != nil, r
	}
	// A rule that names the command it runs allows the whole.
	if r := c.matchAllowCovering(cv); r != nil {
		return true, r
	}
	var by *rule
	if !cv.transparent {
		if by = c.matchAllow(cv); by == nil {
			return false, nil
		}
	}
	for _, in := range cv.inners {
		ok, r := c.allowed(in)
		if !ok {
			return false, nil
		}
		if by == nil {
			by = r
		}
	}
	return true, by
}

// allowWords are the words an allow rule is matched against: the
// assignments before the command, then its words.
func allowWords(cv *cmdView) []wordv {
	if len(cv.assigns) == 0 {
		return cv.words
	}
	return append(append([]wordv(nil), cv.assigns...), cv.words...)
}

func (c *bashCheck) matchAllow(cv *cmdView) *rule {
	words := allowWords(cv)
	for _, r := range c.p.allow {
		if r.kind == kindBash && !r.anySpec && r.bash.certainlyMatches(words, cv.tail) {
			return r
		}
	}
	return nil
}

// matchAllowCovering returns an allow rule that matches a wrapper and
// names the program it runs (Bash(sudo apt install:*)).
func (c *bashCheck) matchAllowCovering(cv *cmdView) *rule {
	at := cv.innerAt + len(cv.assigns)
	if cv.innerAt < 0 {
		return nil
	}
	words := allowWords(cv)
	for _, r := range c.p.allow {
		if r.kind == kindBash && !r.anySpec && r.bash.glob == "" && len(r.bash.words) > at && r.bash.certainlyMatches(words, cv.tail) {
			return r
		}
	}
	return nil
}

// couldMatch reports whether a command whose words may be what the
// patterns say could be one the rule names. tail: more words follow,
// known only when it runs.
func (bp bashPattern) couldMatch(words []wordv, tail bool) bool {
	if len(words) == 0 || (len(bp.words) == 0 && bp.glob == "") {
		return false
	}
	if ok, decided := bp.matchFast(words, tail); decided {
		return ok
	}
	cmd := commandPattern(words, tail)
	for _, alt := range bp.could {
		if intersects(cmd, alt) {
			return true
		}
	}
	return false
}

// matchFast decides a match when the words that count are known.
func (bp bashPattern) matchFast(words []wordv, tail bool) (match, decided bool) {
	if bp.glob != "" {
		for _, w := range words {
			if !w.static || w.vanish {
				return false, false
			}
		}
		if tail {
			return false, false
		}
		texts := make([]string, len(words))
		for i, w := range words {
			texts[i] = w.text
		}
		if wildcard(bp.globParts, strings.Join(texts, " ")) {
			return true, true
		}
		if strings.Contains(texts[0], "/") {
			texts[0] = path.Base(texts[0])
			return wildcard(bp.globParts, strings.Join(texts, " ")), true
		}
		return false, true
	}
	k := len(bp.words)
	if w0 := words[0]; w0.static && !w0.vanish {
		// The program decides most rules at once.
		if prog := w0.text; prog != bp.words[0] && (!strings.Contains(prog, "/") || path.Base(prog) != bp.words[0]) {
			return false, true
		}
	}
	need := k
	if !bp.prefix {
		need = len(words) // every word counts
	}
	for i := 0; i < need && i < len(words); i++ {
		if !words[i].static || words[i].vanish {
			return false, false
		}
	}
	for i := 1; i < k; i++ {
		if i >= len(words) {
			return tail, true
		}
		if words[i].text != bp.words[i] {
			return false, true
		}
	}
	if !bp.prefix {
		return len(words) == k || (len(words) < k && tail), true
	}
	return true, true
}

// commandPattern is what a command's words may be, each after a word
// break; a word that may vanish takes its break with it.
func commandPattern(words []wordv, tail bool) pattern {
	var p pattern
	for _, w := range words {
		if w.vanish {
			p = p.any()
			continue
		}
		p = append(p, ptok{kind: tokLit, b: wordBreak}).append(w.pattern())
	}
	if tail {
		p = p.any()
	}
	return p
}

// certainlyMatches reports whether an allow rule matches words that are
// certainly what they say: the words it covers are plain.
func (bp bashPattern) certainlyMatches(words []wordv, tail bool) bool {
	if len(words) == 0 || (len(bp.words) == 0 && bp.glob == "") {
		return false
	}
	if bp.glob != "" {
		if tail {
			return false
		}
		texts := make([]string, len(words))
		for i, w := range words {
			if !w.plain || w.vanish {
				return false
			}
			texts[i] = w.text
		}
		return wildcard(bp.globParts, strings.Join(texts, " "))
	}
	k := len(bp.words)
	if len(words) < k || (!bp.prefix && (len(words) != k || tail)) {
		return false
	}
	n := k
	if !bp.prefix {
		n = len(words)
	}
	for i := 0; i < n; i++ {
		if !words[i].plain || words[i].vanish || words[i].text != bp.words[i] {
			return false
		}
	}
	return true
}

// cmdText is a command as the user would write it.
func cmdText(cv *cmdView) string {
	var parts []string
	for _, w := range allowWords(cv) {
		if w.raw != "" {
			parts = append(parts, w.raw)
		} else {
			parts = append(parts, w.text)
		}
	}
	s := strings.Join(parts, " ")
	if len(s) > 120 {
		s = s[:117] + "…"
	}
	return s
}

// A place is where a word points on the file system.
type place struct {
	// abs are the absolute paths the word names, one per directory the
	// command may run in.
	abs []string
	// segs are the places it may name, as patterns: a glob, or a
	// directory named before an expansion.
	segs [][]segPat
	// guessSegs are the places it may name below a directory the rules
	// do not know: a rule that may match one asks, it does not deny.
	guessSegs [][]segPat
	// dynamic: where it points is known only when it runs.
	dynamic bool
	// special: a device that is no file (/dev/null, /dev/fd/N).
	special bool
	// links says how far the place's links are resolved.
	links linkMode
	// subs are the forms of abs, resolved once.
	subs []*subject
}

// where works out the place a word names, resolved from dir. value,
// when set, is the path the word names after an option or an =.
func (c *bashCheck) where(w wordv, value string, dir dirSet) place {
	v := c.v
	if w.procSubst {
		return place{special: true}
	}
	text, tilde, rest := w.text, w.tilde, w.tildeRest
	static := w.static
	if value != "" {
		text, static, tilde, rest = value, true, tildeNone, ""
		if value == "~" || strings.HasPrefix(value, "~/") {
			tilde, rest = tildeHome, strings.TrimPrefix(value, "~")
		}
	}
	if static {
		switch tilde {
		case tildeHome:
			if v.homeUnknown {
				return c.unknownPlace(strings.TrimPrefix(rest, "/"))
			}
			text = c.p.home + rest
		case tildeCwd:
			if v.pwdUnknown {
				return c.unknownPlace(strings.TrimPrefix(rest, "/"))
			}
			text = "." + rest
		case tildeUnknown:
			return c.unknownPlace(strings.TrimPrefix(rest, "/"))
		}
		if isSpecialFile(text) {
			return place{special: true}
		}
		if path.IsAbs(text) {
			return place{abs: []string{path.Clean(text)}}
		}
		if text == "" {
			return place{}
		}
		if dir.unknown {
			return c.unknownPlace(text)
		}
		var pl place
		for _, d := range dir.dirs {
			pl.abs = append(pl.abs, path.Join(d, text))
		}
		return pl
	}
	// A glob, or a word with a named directory before its expansion.
	segs, abs, ok := wordSegs(w)
	if !ok {
		return place{dynamic: true}
	}
	if abs {
		return place{segs: [][]segPat{cleanSegs(segs)}, dynamic: !w.glob}
	}
	if dir.unknown || w.tilde != tildeNone {
		pl := place{guessSegs: [][]segPat{append([]segPat{{deep: true}}, segs...)}, dynamic: !w.glob}
		if c.sub.dir != "" && !c.sub.info.unknownCwd && w.tilde == tildeNone {
			pl.segs = [][]segPat{cleanSegs(append(splitSegs(c.sub.dir), segs...))}
		}
		return pl
	}
	pl := place{dynamic: !w.glob}
	for _, d := range dir.dirs {
		pl.segs = append(pl.segs, cleanSegs(append(splitSegs(d), segs...)))
	}
	return pl
}

// unknownPlace is a relative path below a directory the rules do not
// know. The directory may still be the one the command line started in:
// the path resolved from there is one of the places it may be, checked
// as precisely as a known one.
func (c *bashCheck) unknownPlace(rel string) place {
	segs := []segPat{{deep: true}}
	for _, s := range strings.Split(rel, "/") {
		switch s {
		case "", ".":
		case "..":
			segs = append(segs, segPat{deep: true})
		default:
			segs = append(segs, litSeg(s))
		}
	}
	pl := place{guessSegs: [][]segPat{segs}}
	if c.sub.dir != "" && !c.sub.info.unknownCwd {
		pl.abs = []string{path.Join(c.sub.dir, rel)}
	}
	return pl
}

func isSpecialFile(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/")
}

// wordSegs splits a glob word (or a word whose expansions come after a
// named directory) into path elements. It reports whether the word is
// absolute, and false when the word names no place the rules can
// follow (an expansion before any named directory).
func wordSegs(w wordv) ([]segPat, bool, bool) {
	p := w.pat
	if !w.glob {
		// Only the directories named before the first expansion count.
		lit, _ := p.litPrefix()
		i := strings.LastIndexByte(lit, '/')
		if i < 0 {
			return nil, false, false
		}
		dirPart := lit[:i]
		named := false
		for _, s := range strings.Split(dirPart, "/") {
			if s != "" && s != "." && s != ".." {
				named = true
			}
		}
		if !named {
			return nil, false, false
		}
		segs := splitSegs(dirPart)
		return append(segs, segPat{deep: true}), strings.HasPrefix(lit, "/"), true
	}
	abs := len(p) > 0 && p[0].kind == tokLit && p[0].b == '/'
	var segs []segPat
	var cur pattern
	flush := func() {
		if len(cur) == 0 {
			return
		}
		if s, ok := cur.isLiteral(); ok {
			segs = append(segs, litSeg(s))
		} else {
			segs = append(segs, segPat{pat: noLeadingDot(cur)})
		}
		cur = nil
	}
	for _, t := range p {
		if t.kind == tokLit && t.b == '/' {
			flush()
			continue
		}
		cur = append(cur, t)
	}
	flush()
	return segs, abs, true
}

// noLeadingDot makes a glob element that starts with a wildcard refuse
// a leading dot, as bash's globs do.
func noLeadingDot(p pattern) pattern {
	if len(p) == 0 || p[0].kind == tokLit {
		return p
	}
	return append(pattern{{kind: tokClass, class: "!."}}, p...)
}

// cleanSegs resolves . and .. among path elements; a .. after a pattern
// may lead anywhere.
func cleanSegs(segs []segPat) []segPat {
	var out []segPat
	for _, s := range segs {
		switch {
		case s.pat == nil && !s.deep && s.lit == ".":
		case s.pat == nil && !s.deep && s.lit == "..":
			if n := len(out); n > 0 && out[n-1].pat == nil && !out[n-1].deep {
				out = out[:n-1]
			} else if n > 0 {
				out = append(out[:n-1], segPat{deep: true})
			}
		default:
			out = append(out, s)
		}
	}
	return out
}

// pathRule returns the first rule of a list, of kind k (Read or Edit),
// that matches a place: for a deny or ask rule, any path it may be; for
// an allow rule (all), every one.
func (c *bashCheck) pathRule(l list, k kind, pl *place, all bool) *rule {
	ix := c.p.pathIx[l][kindSlot(k)]
	if ix == nil || len(ix.rules) == 0 {
		return nil
	}
	if pl.subs == nil && len(pl.abs) > 0 {
		for _, abs := range pl.abs {
			pl.subs = append(pl.subs, c.subjectFor(abs, pl.links))
		}
	}
	if all || len(pl.segs) > 0 {
		for _, r := range ix.rules {
			if c.matchPlace(r, pl, all) {
				return r
			}
		}
		return nil
	}
	var forms []pathForm
	for _, s := range pl.subs {
		forms = append(forms, s.forms...)
	}
	var buf [16]int
	for _, pos := range ix.candidates(forms, buf[:0]) {
		if r := ix.rules[pos]; c.matchPlace(r, pl, false) {
			return r
		}
	}
	return nil
}

// matchPlace reports whether a path rule matches a place: for a deny
// or ask rule, any path it may be; for an allow rule (all), every one.
func (c *bashCheck) matchPlace(r *rule, pl *place, all bool) bool {
	n, total := 0, 0
	for _, sub := range pl.subs {
		total++
		if c.p.matchPaths(r.path, *sub, all) {
			n++
		}
	}
	for _, segs := range pl.segs {
		total++
		ruleSegs := r.path.absSegs(c.sub.ws, c.p.home)
		if ruleSegs != nil && !all && segsIntersect(ruleSegs, segs) {
			n++
		}
	}
	if all {
		return total > 0 && n == total
	}
	return n > 0
}

// paths checks the files a command's words name.
func (c *bashCheck) paths(cv *cmdView) verdict {
	out := verdict{list: "allow"}
	p := c.p
	if p.hasReadRules {
		for _, a := range cv.reads {
			for _, pl := range c.argPlaces(a, cv.dir) {
				out = worse(out, c.readPlace(pl, *a.w))
			}
		}
	}
	for _, a := range cv.writes {
		pl := c.where(*a.w, a.value, cv.dir)
		pl.links = linksInside
		v := c.writePlace(pl, *a.w, cmdText(cv))
		if a.link && v.list == "" {
			continue // a link may point anywhere; only deny and ask rules apply
		}
		out = worse(out, v)
	}
	if cv.writesArgs && p.hasEditRules {
		for _, a := range cv.reads {
			for _, pl := range c.argPlaces(a, cv.dir) {
				for _, l := range []list{listDeny, listAsk} {
					if r := c.pathRule(l, kindEdit, &pl, false); r != nil {
						out = worse(out, verdict{list: "ask", rule: r, why: fmt.Sprintf("`%s` may write `%s`", cmdText(cv), a.w.raw)})
					}
				}
			}
		}
	}
	return out
}

// argPlaces are the places an argument may name: the word itself (but
// for an option), what follows its =, and what follows a short option's
// letter.
func (c *bashCheck) argPlaces(a pathArg, dir dirSet) []place {
	var out []place
	add := func(pl place) {
		pl.links = linksNone
		out = append(out, pl)
	}
	if !a.w.static || a.value != "" {
		add(c.where(*a.w, a.value, dir))
		return out
	}
	t := a.w.text
	if !strings.HasPrefix(t, "-") || t == "-" {
		add(c.where(*a.w, a.value, dir))
	}
	if i := strings.IndexByte(t, '='); i > 0 && i+1 < len(t) {
		add(c.where(*a.w, t[i+1:], dir))
	}
	if len(t) > 2 && t[0] == '-' && t[1] != '-' && !strings.Contains(t, "=") {
		add(c.where(*a.w, t[2:], dir))
	}
	return out
}

// readPlace checks a place a command reads against the Read rules.
func (c *bashCheck) readPlace(pl place, w wordv) verdict {
	if pl.special || (pl.dynamic && len(pl.segs) == 0 && len(pl.guessSegs) == 0) {
		return verdict{list: "allow"}
	}
	for _, l := range []list{listDeny, listAsk} {
		if r := c.pathRule(l, kindRead, &pl, false); r != nil {
			return verdict{list: l.String(), rule: r, why: fmt.Sprintf("reading `%s`", w.raw)}
		}
	}
	if g := pl.guesses(); g != nil {
		for _, l := range []list{listDeny, listAsk} {
			if r := c.pathRule(l, kindRead, g, false); r != nil {
				return verdict{list: "ask", rule: r, why: fmt.Sprintf("`%s` is relative to a directory known only when it runs, and may be a file the rule covers", w.raw)}
			}
		}
	}
	return verdict{list: "allow"}
}

// guesses is the part of a place below an unknown directory, as a
// place of its own, or nil.
func (pl place) guesses() *place {
	if len(pl.guessSegs) == 0 {
		return nil
	}
	return &place{segs: pl.guessSegs}
}

// writePlace checks a place a command writes: Edit deny and ask rules,
// and, outside the workspace, an Edit allow rule.
func (c *bashCheck) writePlace(pl place, w wordv, what string) verdict {
	if pl.special {
		return verdict{list: "allow"}
	}
	if pl.dynamic && len(pl.segs) == 0 && len(pl.guessSegs) == 0 {
		return verdict{why: fmt.Sprintf("`%s` writes to `%s`, a place known only when it runs", what, w.raw)}
	}
	for _, l := range []list{listDeny, listAsk} {
		if r := c.pathRule(l, kindEdit, &pl, false); r != nil {
			return verdict{list: l.String(), rule: r, why: fmt.Sprintf("writing `%s`", w.raw)}
		}
	}
	if g := pl.guesses(); g != nil {
		for _, l := range []list{listDeny, listAsk} {
			if r := c.pathRule(l, kindEdit, g, false); r != nil {
				return verdict{list: "ask", rule: r, why: fmt.Sprintf("writing `%s`, relative to a directory known only when it runs", w.raw)}
			}
		}
		return verdict{why: fmt.Sprintf("`%s` writes `%s`, relative to a directory known only when it runs", what, w.raw)}
	}
	if !pl.dynamic && c.insidePlace(pl) {
		return verdict{list: "allow"} // an Edit allow rule would change nothing
	}
	if r := c.pathRule(listAllow, kindEdit, &pl, true); r != nil {
		return verdict{list: "allow", rule: r, why: fmt.Sprintf("writing `%s`", w.raw)}
	}
	if pl.dynamic {
		return verdict{why: fmt.Sprintf("`%s` writes to `%s`, a place known only when it runs", what, w.raw)}
	}
	return verdict{why: fmt.Sprintf("`%s` writes `%s`, outside the workspace", what, w.raw)}
}

// insidePlace reports whether every path a place may be is in the
// workspace (links resolved).
func (c *bashCheck) insidePlace(pl place) bool {
	for _, abs := range pl.abs {
		if !c.subjectFor(abs, pl.links).inside {
			return false
		}
	}
	for _, segs := range pl.segs {
		// A glob: the directory before its first pattern must be inside,
		// and no pattern may be "..".
		var prefix []string
		patterns := false
		for _, s := range segs {
			if s.deep {
				return false
			}
			if s.pat != nil {
				patterns = true
				if intersects(s.pat, pattern(nil).lit("..")) {
					return false
				}
				continue
			}
			if patterns {
				continue
			}
			prefix = append(prefix, s.lit)
		}
		if !c.subjectFor("/"+strings.Join(prefix, "/"), pl.links).inside {
			return false
		}
	}
	return len(pl.abs)+len(pl.segs) > 0
}

// redirect checks a file a redirection reads or writes.
func (c *bashCheck) redirect(rd redirView) verdict {
	pl := c.where(rd.w, "", rd.dir)
	if !rd.write {
		if pl.dynamic && len(pl.segs) == 0 {
			return verdict{list: "allow"}
		}
		return c.readPlace(pl, rd.w)
	}
	return c.writePlace(pl, rd.w, "the redirection")
}
