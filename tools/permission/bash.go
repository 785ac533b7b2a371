package permission

import (
	"fmt"
	"path"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// A bash command line is read by a real bash parser (mvdan.cc/sh), and
// its syntax tree is walked for every simple command bash would run:
// those of lists and pipelines, of compound commands (if, while, for,
// case, { }, subshells, functions, coprocesses, [[ ]]), of command and
// process substitutions wherever they are (arguments, assignments,
// redirection targets, here-documents, parameter expansions,
// arithmetic), and of the command lines that commands run from their
// arguments (bash -c, eval, trap, alias, a wrapper such as timeout or
// xargs, find -exec). The result is the line's view: the commands, with
// their words as far as they are known before the line runs, the files
// redirected to, and what could not be modelled.
//
// What the walk cannot model with certainty is recorded, never guessed:
// a construct it does not know makes the line impossible to allow by a
// prefix rule, and code whose text exists only when the line runs (eval
// of an expansion, a shell reading its input, arithmetic on a variable
// that may hold a subscript) may match any deny rule.

// bashView is what a command line runs, as the rules see it.
type bashView struct {
	// cmds are the simple commands, outermost first; a command run by a
	// wrapper follows it, with parent set.
	cmds []*cmdView
	// redirs are the files redirected to or from.
	redirs []redirView
	// unmodelled holds why part of the line could not be modelled; such
	// a line is never allowed by a prefix rule.
	unmodelled []string
	// anyCode says why the line may run code the rules cannot see (its
	// text exists only when it runs); any deny rule may match it.
	anyCode string
	// homeUnknown: the line changes HOME, so ~ is not the rules' home.
	homeUnknown bool
	// pwdUnknown: the line changes PWD, so ~+ is not its directory.
	pwdUnknown bool
	// globsWide: the line may turn on dotglob or globstar.
	globsWide bool
}

// cmdView is one simple command.
type cmdView struct {
	// words are the command's words (assignments excluded).
	words []wordv
	// assigns are the assignments before the command (NAME=value), as
	// words; an allow rule must name them.
	assigns []wordv
	// dir is where the command runs.
	dir dirSet
	// parent is the command that runs this one from its arguments (a
	// wrapper such as timeout or xargs, find -exec), nil at the top.
	parent *cmdView
	// inners are the commands this one runs from its arguments, and
	// innerAt the index of the first one's program in words.
	inners  []*cmdView
	innerAt int
	// transparent: a wrapper that needs no rule of its own (timeout,
	// nice, env, bash -c): the command it runs decides.
	transparent bool
	// runsLine: the command runs a command line whose commands are in
	// the view on their own (bash -c, eval); it adds nothing to allow.
	runsLine bool
	// unmodelled says why the command's arguments could not be read (an
	// unknown option of a wrapper): it is never allowed, and a deny rule
	// matching any of its trailing words matches it.
	unmodelled string
	// tail: the program adds arguments when it runs (xargs, find -exec
	// ... {} +).
	tail bool
	// writes are the words naming files the program changes (tee, cp,
	// rm, sed -i, ...), with the directory they resolve against.
	writes []pathArg
	// reads are the words naming files, to check against Read rules
	// (every argument of every command may name one).
	reads []pathArg
	// writesArgs: an unknown program; its arguments may name files it
	// writes.
	writesArgs bool
	// via says how it runs, for messages ("inside bash -c").
	via string
	// outDir is where the shell is after the command (a cd run by
	// builtin or command).
	outDir dirSet
}

// pathArg is a word that may name a file, with the directory it
// resolves against.
type pathArg struct {
	w *wordv
	// value, when not empty, is the path the word names after an = or
	// an option's letter (--file=x, if=x, -fx).
	value string
	// link: the word is what a link points to (ln, cp -s): only Edit
	// deny and ask rules apply to it, not the workspace's bounds.
	link bool
}

// redirView is a file a redirection reads or writes.
type redirView struct {
	w     wordv
	write bool
	dir   dirSet
}

// dirSet is where a command may run: one of a few directories, or
// somewhere the rules do not know.
type dirSet struct {
	unknown bool
	dirs    []string
}

const maxDirs = 4

func knownDir(d string) dirSet { return dirSet{dirs: []string{d}} }

var unknownDir = dirSet{unknown: true}

func (a dirSet) union(b dirSet) dirSet {
	if a.unknown || b.unknown {
		return unknownDir
	}
	if a.equal(b) {
		return a
	}
	out := dirSet{dirs: append([]string(nil), a.dirs...)}
	for _, d := range b.dirs {
		out = out.add(d)
	}
	return out
}

func (a dirSet) add(d string) dirSet {
	if a.unknown {
		return a
	}
	for _, x := range a.dirs {
		if x == d {
			return a
		}
	}
	if len(a.dirs) >= maxDirs {
		return unknownDir
	}
	return dirSet{dirs: append(append([]string(nil), a.dirs...), d)}
}

func (a dirSet) equal(b dirSet) bool {
	if a.unknown != b.unknown || len(a.dirs) != len(b.dirs) {
		return false
	}
	for i := range a.dirs {
		if a.dirs[i] != b.dirs[i] {
			return false
		}
	}
	return true
}

// shellEnv is what the rules know of the shell a line starts in.
type shellEnv struct {
	// dir is the starting directory (clean, absolute), "" when unknown.
	dir string
	// ws is the workspace (clean, absolute).
	ws string
	// home is $HOME, "" when unknown.
	home string
	// persistent: the shell keeps its state between calls (shell_send):
	// its variables, functions and directory come from earlier calls.
	persistent bool
	// paths: record the words that may name files (the policy has Read
	// or Edit rules to check them against).
	paths bool
}

// Limits of the walk.
const (
	// maxLineDepth bounds the nesting of command lines run by commands
	// (bash -c inside eval inside ...).
	maxLineDepth = 8
	// maxNodes bounds the statements and words one line may hold.
	maxNodes = 20000
)

// walker walks the syntax tree of one command line (and of the lines
// its commands run).
type walker struct {
	v     *bashView
	src   string
	env   shellEnv
	depth int
	// sh is the state of the shell the line runs in; a line run by
	// eval shares it, one run by bash -c gets its own.
	sh *shellState
	// budget is shared by every walker of the line.
	budget *int
	// calls counts the simple commands of this walker's tree it
	// visited, to be compared with an independent count.
	calls int
	// via is how the line runs, for messages.
	via string
	// shared: the line runs in its caller's shell (eval).
	shared bool
}

// shellState is what the walk tracks of one shell.
type shellState struct {
	// assigned maps a variable to whether every value the line gives
	// it is safe to evaluate as arithmetic (a number).
	assigned map[string]bool
	// arith are the variables evaluated as arithmetic, where a value
	// holding an array subscript runs the substitutions in it.
	arith []string
	// unknownVars: any variable may hold anything (after source, a
	// nameref, declare -i).
	unknownVars bool
	// cdpath: CDPATH may be set, so cd to a relative name may go
	// anywhere.
	cdpath bool
	// funcCd: a function that changes directory was defined.
	funcCd bool
	// dirFixed: nothing in the line can change the shell's directory
	// (no cd, pushd, popd, source, eval, alias, trap, no command known
	// only when it runs), so a function body runs where it is defined.
	dirFixed bool
}

var parsers = sync.Pool{New: func() any {
	return syntax.NewParser(syntax.Variant(syntax.LangBash), syntax.KeepComments(false))
}}

// parseBash reads a command line and returns its view. A panic in the
// parser or the walk gives a view of code the rules cannot see.
func parseBash(src string, env shellEnv) (v *bashView) {
	defer func() {
		if p := recover(); p != nil {
			why := fmt.Sprintf("a line the parser failed on (%v)", p)
			v = &bashView{anyCode: why, unmodelled: []string{why}, homeUnknown: true, pwdUnknown: true}
		}
	}()
	v = &bashView{}
	budget := maxNodes
	sh := &shellState{cdpath: strings.Contains(src, "CDPATH") || env.persistent}
	v.homeUnknown = env.home == "" || env.persistent || strings.Contains(src, "HOME")
	v.pwdUnknown = env.persistent || strings.Contains(src, "PWD")
	w := &walker{v: v, env: env, sh: sh, budget: &budget}
	dir := knownDir(env.dir)
	if env.dir == "" || env.persistent {
		dir = unknownDir
	}
	w.line(src, dir)
	w.finish()
	return v
}

// line parses and walks one command line, run in the walker's shell.
// It returns the directory the shell is left in.
func (w *walker) line(src string, dir dirSet) dirSet {
	if strings.IndexByte(src, 0) >= 0 {
		w.unparsed("the command holds a NUL byte, which bash does not read as written")
		return unknownDir
	}
	f, fsrc, note, err := parseFile(src)
	if err != nil {
		// What parsed before the error is walked; the rest may run code
		// the rules cannot see (bash runs the lines before a syntax
		// error).
		sub := *w
		sub.src, sub.calls = src, 0
		p := parsers.Get().(*syntax.Parser)
		// The sequence is drained, not left early: the parser yields its
		// error after the statements even when told to stop.
		for st, serr := range p.StmtsSeq(strings.NewReader(src)) {
			if serr == nil && st != nil {
				dir = sub.stmt(st, dir)
			}
		}
		parsers.Put(p)
		w.unparsed(fmt.Sprintf("bash syntax the rules cannot read (%v)", err))
		return unknownDir
	}
	if note != "" {
		w.unmodel(note)
	}
	n, changers := scanFile(f, fsrc)
	if w.depth == 0 || !w.shared {
		w.sh.dirFixed = !changers
	}
	sub := *w
	sub.src, sub.calls = fsrc, 0
	out := sub.stmts(f.Stmts, dir)
	if n != sub.calls {
		w.unparsed("a construct the rules do not model")
	}
	return out
}

// dirChangers are the commands that may change the shell's directory
// (or run code that does, later).
var dirChangers = map[string]bool{"cd": true, "pushd": true, "popd": true, "source": true, ".": true, "eval": true,
	"alias": true, "trap": true, "chdir": true}

// scanFile counts a tree's simple commands, for the check that the walk
// visited them all, and reports whether any may change the shell's
// directory.
func scanFile(f *syntax.File, src string) (int, bool) {
	n, changers := 0, false
	syntax.Walk(f, func(node syntax.Node) bool {
		c, ok := node.(*syntax.CallExpr)
		if !ok {
			return true
		}
		n++
		for i, a := range c.Args {
			if len(a.Parts) == 1 {
				if l, ok := a.Parts[0].(*syntax.Lit); ok && !strings.ContainsAny(l.Value, "\\*?[{~") {
					changers = changers || dirChangers[l.Value]
					continue
				}
			}
			v := wordValue(a, wordContext{}, src)
			if i == 0 && !v.static {
				changers = true
			}
			if v.static && dirChangers[v.text] {
				changers = true
			}
		}
		return true
	})
	return n, changers
}

// unparsed records code the rules cannot see.
func (w *walker) unparsed(why string) {
	if w.via != "" {
		why += " " + w.via
	}
	if w.v.anyCode == "" {
		w.v.anyCode = why
	}
	w.unmodel(why)
}

// unmodel records a construct that keeps the line from being allowed.
func (w *walker) unmodel(why string) {
	for _, u := range w.v.unmodelled {
		if u == why {
			return
		}
	}
	if len(w.v.unmodelled) < 8 {
		w.v.unmodelled = append(w.v.unmodelled, why)
	}
}

// spend takes one node from the budget, and reports false when it is
// spent (the line is then unmodelled).
func (w *walker) spend() bool {
	if *w.budget <= 0 {
		return false
	}
	*w.budget--
	if *w.budget == 0 {
		w.unparsed("a command line too large to check")
		return false
	}
	return true
}

// finish checks the arithmetic the line evaluates against what it
// assigns.
func (w *walker) finish() {
	sh := w.sh
	for _, name := range sh.arith {
		if !w.safeArith(name) {
			w.unparsed(fmt.Sprintf("arithmetic on $%s, whose value may hold a subscript that runs commands", name))
			return
		}
	}
}

// safeArith reports whether evaluating the variable as arithmetic can
// run nothing: it holds a number.
func (w *walker) safeArith(name string) bool {
	sh := w.sh
	if sh.unknownVars {
		return false
	}
	switch name {
	case "?", "#", "$", "!", "-", "RANDOM", "LINENO", "SECONDS", "EPOCHSECONDS", "BASHPID", "PPID", "UID", "EUID", "SHLVL", "OPTIND", "COLUMNS", "LINES":
		return true
	}
	if name == "" || name == "@" || name == "*" || (name[0] >= '0' && name[0] <= '9') {
		return false // the positional parameters come from the caller
	}
	safe, seen := sh.assigned[name]
	if !seen {
		// Set outside the line: by the host's environment for a fresh
		// shell, by earlier calls for a persistent one.
		return !w.env.persistent
	}
	return safe
}

// assign records a value given to a variable.
func (w *walker) assign(name string, safe bool) {
	if w.sh.assigned == nil {
		w.sh.assigned = map[string]bool{}
	}
	if old, seen := w.sh.assigned[name]; seen {
		safe = safe && old
	}
	w.sh.assigned[name] = safe
}

// numericText reports whether a static value is a plain number
// expression (digits, spaces and operators, no names).
func numericText(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c >= '0' && c <= '9') || strings.IndexByte(" \t+-*/%()<>=!&|^~?:,", c) >= 0 {
			continue
		}
		return false
	}
	return true
}

func countCalls(f *syntax.File) int {
	n := 0
	syntax.Walk(f, func(node syntax.Node) bool {
		if _, ok := node.(*syntax.CallExpr); ok {
			n++
		}
		return true
	})
	return n
}

func (w *walker) stmts(list []*syntax.Stmt, dir dirSet) dirSet {
	for _, s := range list {
		dir = w.stmt(s, dir)
	}
	return dir
}

func (w *walker) stmt(s *syntax.Stmt, dir dirSet) dirSet {
	if s == nil || !w.spend() {
		return dir
	}
	// Redirections are opened before the command runs, where the shell
	// is.
	for _, r := range s.Redirs {
		w.redirect(r, dir)
	}
	out := w.command(s.Cmd, dir, s)
	if s.Background || s.Coprocess || s.Disown {
		// A background command runs in a subshell.
		return dir
	}
	return out
}

func (w *walker) command(cmd syntax.Command, dir dirSet, s *syntax.Stmt) dirSet {
	switch c := cmd.(type) {
	case nil:
		return dir
	case *syntax.CallExpr:
		return w.call(c, dir, s)
	case *syntax.BinaryCmd:
		x := w.stmt(c.X, dir)
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			// Each side of a pipe runs in a subshell (the last one in
			// the shell itself under lastpipe).
			return dir.union(w.stmt(c.Y, dir))
		}
		return x.union(w.stmt(c.Y, x))
	case *syntax.Subshell:
		w.stmts(c.Stmts, dir)
		return dir
	case *syntax.Block:
		return w.stmts(c.Stmts, dir)
	case *syntax.IfClause:
		out := dir
		for ic := c; ic != nil; ic = ic.Else {
			cond := w.stmts(ic.Cond, out)
			out = out.union(cond).union(w.stmts(ic.Then, cond))
		}
		return out
	case *syntax.WhileClause:
		return w.loop(dir, func(d dirSet) dirSet {
			return w.stmts(c.Do, w.stmts(c.Cond, d))
		})
	case *syntax.ForClause:
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			for _, it := range l.Items {
				w.wordSubs(it, dir)
			}
			if l.Name != nil {
				w.assign(l.Name.Value, false)
			}
		case *syntax.CStyleLoop:
			w.arith(l.Init, dir)
			w.arith(l.Cond, dir)
			w.arith(l.Post, dir)
		}
		return w.loop(dir, func(d dirSet) dirSet { return w.stmts(c.Do, d) })
	case *syntax.CaseClause:
		w.wordSubs(c.Word, dir)
		out := dir
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				w.wordSubs(p, dir)
			}
			out = out.union(w.stmts(it.Stmts, dir))
		}
		return out
	case *syntax.FuncDecl:
		// The body runs when the function is called, from wherever the
		// shell is then.
		before := w.sh.funcCd
		w.sh.funcCd = false
		body := unknownDir
		if w.sh.dirFixed {
			body = dir
		}
		w.stmt(c.Body, body)
		changed := w.sh.funcCd
		w.sh.funcCd = before || changed
		if changed {
			return unknownDir
		}
		return dir
	case *syntax.ArithmCmd:
		w.arith(c.X, dir)
		return dir
	case *syntax.TestClause:
		w.test(c.X, dir)
		return dir
	case *syntax.DeclClause:
		return w.decl(c, dir)
	case *syntax.LetClause:
		cv := &cmdView{dir: dir, words: []wordv{plainWord("let")}}
		for _, e := range c.Exprs {
			w.arith(e, dir)
			if wd, ok := e.(*syntax.Word); ok {
				cv.words = append(cv.words, wordValue(wd, wordContext{}, w.src))
				continue
			}
			raw := "…"
			if start, end := e.Pos().Offset(), e.End().Offset(); start <= end && int(end) <= len(w.src) {
				raw = w.src[start:end]
			}
			if strings.ContainsAny(raw, "$`'\"\\") {
				cv.words = append(cv.words, wordv{pat: pattern(nil).any(), raw: raw})
			} else {
				cv.words = append(cv.words, plainWord(raw))
			}
		}
		w.add(cv)
		return dir
	case *syntax.TimeClause:
		return w.stmt(c.Stmt, dir)
	case *syntax.CoprocClause:
		if c.Name != nil {
			w.wordSubs(c.Name, dir)
		}
		w.stmt(c.Stmt, dir)
		return dir
	}
	w.unparsed(fmt.Sprintf("a %T the rules do not model", cmd))
	return unknownDir
}

// loop walks a loop body until the directories it may start in settle
// (a cd in the body moves the next round). A round whose start moved is
// walked again, and what the previous round added is dropped.
func (w *walker) loop(dir dirSet, body func(dirSet) dirSet) dirSet {
	in := dir
	for range 3 {
		nc, nr, calls := len(w.v.cmds), len(w.v.redirs), w.calls
		next := in.union(body(in))
		if next.equal(in) {
			return next
		}
		w.v.cmds, w.v.redirs, w.calls = w.v.cmds[:nc], w.v.redirs[:nr], calls
		in = next
	}
	body(unknownDir)
	return unknownDir
}

// add records a command in the view.
func (w *walker) add(cv *cmdView) {
	if cv.via == "" {
		cv.via = w.via
	}
	w.v.cmds = append(w.v.cmds, cv)
}

func plainWord(s string) wordv {
	return wordv{text: s, static: true, plain: true, pat: pattern(nil).lit(s), raw: s}
}

// call walks a simple command.
func (w *walker) call(c *syntax.CallExpr, dir dirSet, s *syntax.Stmt) dirSet {
	w.calls++
	for _, a := range c.Assigns {
		w.assignSubs(a, dir)
	}
	for _, wd := range c.Args {
		w.wordSubs(wd, dir)
	}
	if len(c.Args) > 0 {
		w.extglobStart(c.Args[0], dir)
	}
	cv := &cmdView{dir: dir}
	for _, a := range c.Assigns {
		av := assignWord(a, w.src)
		w.noteAssign(a, av, dir)
		cv.assigns = append(cv.assigns, av)
	}
	for _, wd := range c.Args {
		cv.words = append(cv.words, wordValue(wd, wordContext{tilde: true, braces: true}, w.src))
	}
	if len(cv.words) == 0 {
		// Assignments alone: a command of their own words.
		cv.words, cv.assigns = cv.assigns, nil
		w.add(cv)
		return dir
	}
	return w.run(cv, s)
}

// extglobStart handles !(...) at the start of a command: without
// extglob, bash reads it as a negated subshell, which the parser reads
// as a pattern. Its text is walked as a subshell too.
func (w *walker) extglobStart(wd *syntax.Word, dir dirSet) {
	if len(wd.Parts) == 0 {
		return
	}
	eg, ok := wd.Parts[0].(*syntax.ExtGlob)
	if !ok || eg.Pattern == nil {
		return
	}
	w.unmodel("an extended glob, which bash reads as a subshell unless extglob is on")
	w.subLine(eg.Pattern.Value, dir, "inside "+eg.Op.String()+"(...)", false)
}

// subLine walks a command line a command runs. shared: it runs in the
// same shell (eval), which it may leave in another directory.
func (w *walker) subLine(src string, dir dirSet, via string, shared bool) dirSet {
	if w.depth >= maxLineDepth {
		w.unparsed("command lines nested too deep to check")
		return unknownDir
	}
	sub := &walker{v: w.v, env: w.env, sh: w.sh, budget: w.budget, depth: w.depth + 1, via: via, shared: shared}
	if !shared {
		sub.sh = &shellState{cdpath: w.sh.cdpath}
		defer sub.finish()
	}
	out := sub.line(src, dir)
	if !shared {
		return dir
	}
	return out
}

// wordSubs walks the commands in a word's substitutions.
func (w *walker) wordSubs(wd *syntax.Word, dir dirSet) {
	if wd == nil {
		return
	}
	for _, p := range wd.Parts {
		w.partSubs(p, dir)
	}
}

func (w *walker) partSubs(p syntax.WordPart, dir dirSet) {
	switch x := p.(type) {
	case *syntax.DblQuoted:
		for _, q := range x.Parts {
			w.partSubs(q, dir)
		}
	case *syntax.CmdSubst:
		w.stmts(x.Stmts, dir)
	case *syntax.ProcSubst:
		w.stmts(x.Stmts, dir)
	case *syntax.ArithmExp:
		w.arith(x.X, dir)
	case *syntax.ParamExp:
		w.paramSubs(x, dir)
	case *syntax.BraceExp:
		for _, e := range x.Elems {
			w.wordSubs(e, dir)
		}
	}
}

func (w *walker) paramSubs(x *syntax.ParamExp, dir dirSet) {
	if x.Excl && x.Names == 0 {
		// ${!name}: the variable named by another; its value is read
		// as arithmetic only where the subscript is.
		if x.Param != nil {
			w.sh.arith = append(w.sh.arith, x.Param.Value)
		}
	}
	if x.Index != nil {
		w.arith(x.Index, dir)
	}
	if x.Slice != nil {
		w.arith(x.Slice.Offset, dir)
		w.arith(x.Slice.Length, dir)
	}
	if x.Repl != nil {
		w.wordSubs(x.Repl.Orig, dir)
		w.wordSubs(x.Repl.With, dir)
	}
	if x.Exp != nil {
		w.wordSubs(x.Exp.Word, dir)
		if x.Exp.Op == syntax.OtherParamOps && x.Exp.Word != nil && strings.Contains(x.Exp.Word.Lit(), "P") {
			w.unparsed("${...@P}, which runs the substitutions in a variable's value")
		}
		if x.Exp.Op == syntax.AssignUnset || x.Exp.Op == syntax.AssignUnsetOrNull {
			// ${x:=value} assigns.
			if x.Param != nil {
				w.assign(x.Param.Value, false)
			}
		}
	}
	if x.NestedParam != nil {
		w.partSubs(x.NestedParam, dir)
	}
}

// arith walks an arithmetic expression: its substitutions run, and the
// variables it reads are evaluated as arithmetic in turn.
func (w *walker) arith(e syntax.ArithmExpr, dir dirSet) {
	switch x := e.(type) {
	case nil:
	case *syntax.BinaryArithm:
		w.arith(x.X, dir)
		w.arith(x.Y, dir)
		if isArithAssign(x.Op) {
			if name := arithName(x.X); name != "" {
				w.assign(name, true) // arithmetic assigns a number
			}
		}
	case *syntax.UnaryArithm:
		w.arith(x.X, dir)
	case *syntax.ParenArithm:
		w.arith(x.X, dir)
	case *syntax.FlagsArithm:
		w.arith(x.X, dir)
	case *syntax.Word:
		w.wordSubs(x, dir)
		if name := arithName(x); name != "" {
			w.sh.arith = append(w.sh.arith, name)
			return
		}
		for _, p := range x.Parts {
			switch q := p.(type) {
			case *syntax.ParamExp:
				if q.Param != nil {
					w.sh.arith = append(w.sh.arith, q.Param.Value)
				} else {
					w.sh.arith = append(w.sh.arith, "")
				}
			case *syntax.Lit:
				if !numericText(q.Value) && !isName(q.Value) {
					w.arithText(q.Value)
				}
			case *syntax.SglQuoted:
				w.arithText(q.Value)
			case *syntax.DblQuoted:
				for _, r := range q.Parts {
					if l, ok := r.(*syntax.Lit); ok {
						w.arithText(l.Value)
					} else if pe, ok := r.(*syntax.ParamExp); ok && pe.Param != nil {
						w.sh.arith = append(w.sh.arith, pe.Param.Value)
					} else {
						w.sh.arith = append(w.sh.arith, "")
					}
				}
			}
		}
	default:
		w.unparsed(fmt.Sprintf("arithmetic (%T) the rules do not model", e))
	}
}

func isArithAssign(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
		syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn, syntax.PowAssgn:
		return true
	}
	return false
}

// arithText checks literal text that bash evaluates as arithmetic: a
// subscript with a substitution in it runs.
func (w *walker) arithText(s string) {
	if strings.ContainsAny(s, "$`") {
		w.unparsed("arithmetic on text holding a substitution, which bash runs")
		return
	}
	// Names in the text are variables read as arithmetic.
	for i := 0; i < len(s); {
		if isNameStart(s[i]) && (i == 0 || !isNameByte(s[i-1])) {
			j := i
			for j < len(s) && isNameByte(s[j]) {
				j++
			}
			w.sh.arith = append(w.sh.arith, s[i:j])
			i = j
			continue
		}
		i++
	}
}

// arithName returns the variable an arithmetic word names (x, or x[i]
// whose index the parser keeps apart), or "".
func arithName(e syntax.ArithmExpr) string {
	wd, ok := e.(*syntax.Word)
	if !ok || len(wd.Parts) != 1 {
		return ""
	}
	switch p := wd.Parts[0].(type) {
	case *syntax.Lit:
		if isName(p.Value) {
			return p.Value
		}
	case *syntax.ParamExp:
		if p.Short && p.Param != nil && !p.Dollar.IsValid() {
			return p.Param.Value
		}
	}
	return ""
}

func isName(s string) bool {
	if s == "" || !isNameStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isNameByte(s[i]) {
			return false
		}
	}
	return true
}

func isNameStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isNameByte(c byte) bool  { return isNameStart(c) || (c >= '0' && c <= '9') }

// test walks a [[ ]] expression; the operands of -eq and its kin are
// arithmetic.
func (w *walker) test(e syntax.TestExpr, dir dirSet) {
	switch x := e.(type) {
	case nil:
	case *syntax.BinaryTest:
		w.test(x.X, dir)
		w.test(x.Y, dir)
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, side := range []syntax.TestExpr{x.X, x.Y} {
				if wd, ok := side.(*syntax.Word); ok {
					w.arithWordText(wd)
				}
			}
		}
	case *syntax.UnaryTest:
		w.test(x.X, dir)
		if x.Op == syntax.TsVarSet {
			// -v a[$(cmd)] evaluates its operand's subscript.
			if wd, ok := x.X.(*syntax.Word); ok {
				w.arithWordText(wd)
			}
		}
	case *syntax.ParenTest:
		w.test(x.X, dir)
	case *syntax.Word:
		w.wordSubs(x, dir)
	default:
		w.unparsed(fmt.Sprintf("a test (%T) the rules do not model", e))
	}
}

// arithWordText checks a word whose value bash evaluates as arithmetic
// after expanding it.
func (w *walker) arithWordText(wd *syntax.Word) {
	for _, p := range wd.Parts {
		switch q := p.(type) {
		case *syntax.Lit:
			if !numericText(q.Value) {
				w.arithText(q.Value)
			}
		case *syntax.SglQuoted:
			w.arithText(q.Value)
		case *syntax.DblQuoted:
			for _, r := range q.Parts {
				if l, ok := r.(*syntax.Lit); ok {
					w.arithText(l.Value)
				} else if pe, ok := r.(*syntax.ParamExp); ok && pe.Param != nil && pe.Index == nil && !pe.Excl {
					w.sh.arith = append(w.sh.arith, pe.Param.Value)
				} else {
					w.sh.arith = append(w.sh.arith, "")
				}
			}
		case *syntax.ParamExp:
			if q.Param != nil && q.Index == nil && !q.Excl {
				w.sh.arith = append(w.sh.arith, q.Param.Value)
			} else {
				w.sh.arith = append(w.sh.arith, "")
			}
		default:
			w.sh.arith = append(w.sh.arith, "")
		}
	}
}

// assignSubs walks the substitutions of an assignment.
func (w *walker) assignSubs(a *syntax.Assign, dir dirSet) {
	if a.Index != nil {
		w.arith(a.Index, dir)
	}
	w.wordSubs(a.Value, dir)
	if a.Array != nil {
		for _, el := range a.Array.Elems {
			if el.Index != nil {
				w.arith(el.Index, dir)
			}
			w.wordSubs(el.Value, dir)
		}
	}
}

// noteAssign records what an assignment does to the shell: the
// variable's value, and the code some variables hold.
func (w *walker) noteAssign(a *syntax.Assign, av wordv, dir dirSet) {
	if a.Name == nil {
		return
	}
	name := a.Name.Value
	safe := a.Array == nil && a.Index == nil && !a.Append
	if safe && a.Value != nil {
		val := wordValue(a.Value, wordContext{}, w.src)
		safe = val.static && numericText(val.text) || isArithOnly(a.Value)
	}
	w.assign(name, safe)
	var val wordv
	if a.Value != nil {
		val = wordValue(a.Value, wordContext{}, w.src)
	} else {
		val = wordv{static: true}
	}
	w.specialVar(name, val, dir)
}

// isArithOnly reports a word that is one arithmetic expansion (its
// value is a number).
func isArithOnly(wd *syntax.Word) bool {
	if wd == nil || len(wd.Parts) != 1 {
		return false
	}
	switch p := wd.Parts[0].(type) {
	case *syntax.ArithmExp:
		return true
	case *syntax.DblQuoted:
		if len(p.Parts) == 1 {
			_, ok := p.Parts[0].(*syntax.ArithmExp)
			return ok
		}
	}
	return false
}

// specialVar handles the variables whose value bash runs as code: the
// prompts (expanded, with their substitutions, when shown: PS4 by set
// -x), PROMPT_COMMAND, and exported functions.
func (w *walker) specialVar(name string, val wordv, dir dirSet) {
	switch {
	case name == "PS0" || name == "PS1" || name == "PS2" || name == "PS3" || name == "PS4":
		if !val.static {
			w.unparsed(fmt.Sprintf("%s set to a value known only when it runs (its substitutions run when it is shown)", name))
			return
		}
		w.docLine(val.text, dir, "in "+name)
	case name == "PROMPT_COMMAND":
		if !val.static {
			w.unparsed("PROMPT_COMMAND set to a value known only when it runs")
			return
		}
		w.subLine(val.text, dir, "in PROMPT_COMMAND", false)
	case strings.HasPrefix(name, "BASH_FUNC_"):
		w.unparsed("an exported function in the environment")
	case name == "BASH_ENV" || name == "ENV":
		w.unmodel(name + " makes the shells started below run a file")
	}
}

// docLine walks the substitutions of text expanded as a here-document
// is (a prompt).
func (w *walker) docLine(text string, dir dirSet, via string) {
	if !strings.ContainsAny(text, "$`") {
		return
	}
	p := parsers.Get().(*syntax.Parser)
	wd, err := p.Document(strings.NewReader(text))
	parsers.Put(p)
	if err != nil || wd == nil {
		w.unparsed("a prompt with substitutions the rules cannot read " + via)
		return
	}
	sub := &walker{v: w.v, env: w.env, sh: w.sh, budget: w.budget, depth: w.depth + 1, via: via, src: text}
	sub.wordSubs(wd, dir)
	if sub.calls != countCallsWord(wd) {
		w.unparsed("a construct the rules do not model " + via)
	}
}

func countCallsWord(wd *syntax.Word) int {
	n := 0
	syntax.Walk(wd, func(node syntax.Node) bool {
		if _, ok := node.(*syntax.CallExpr); ok {
			n++
		}
		return true
	})
	return n
}

// decl walks declare, local, export, readonly and typeset: a command of
// their words, whose assignments are recorded.
func (w *walker) decl(c *syntax.DeclClause, dir dirSet) dirSet {
	cv := &cmdView{dir: dir, words: []wordv{plainWord(c.Variant.Value)}}
	integer, nameref := false, false
	for _, a := range c.Args {
		w.assignSubs(a, dir)
		av := assignWord(a, w.src)
		cv.words = append(cv.words, av)
		if a.Name == nil && av.static && strings.HasPrefix(av.text, "-") {
			integer = integer || strings.Contains(av.text, "i")
			nameref = nameref || strings.Contains(av.text, "n")
		}
		if a.Name == nil && !av.static {
			// A name known only when it runs, which may hold a subscript.
			w.unparsed(fmt.Sprintf("%s of `%s`, a name known only when it runs", c.Variant.Value, av.raw))
		}
		if a.Name == nil && av.static && !strings.HasPrefix(av.text, "-") {
			if i := strings.IndexByte(av.text, '['); i >= 0 {
				name, _, _ := strings.Cut(av.text[i+1:], "]")
				w.arithText(name)
			}
		}
	}
	if nameref || integer {
		// A nameref makes a name stand for another; -i evaluates every
		// value given to the variable as arithmetic.
		w.sh.unknownVars = true
		if integer {
			w.unparsed("declare -i, which evaluates values as arithmetic")
		}
	}
	for _, a := range c.Args {
		if a.Name != nil && !a.Naked {
			w.noteAssign(a, wordv{}, dir)
		}
	}
	w.add(cv)
	return dir
}

// redirect records the file a redirection reads or writes, and walks
// the substitutions of its target and here-document.
func (w *walker) redirect(r *syntax.Redirect, dir dirSet) {
	if r.Word != nil {
		w.wordSubs(r.Word, dir)
	}
	if r.Hdoc != nil {
		w.wordSubs(r.Hdoc, dir)
	}
	if r.N != nil && strings.HasPrefix(r.N.Value, "{") {
		// {fd}>file assigns the descriptor's number.
		w.assign(strings.Trim(r.N.Value, "{}"), true)
	}
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return
	}
	wv := wordValue(r.Word, wordContext{tilde: true}, w.src)
	rv := redirView{w: wv, dir: dir}
	switch r.Op {
	case syntax.RdrIn:
	case syntax.DplIn, syntax.DplOut:
		if wv.static && (isAllDigits(wv.text) || wv.text == "-" || (strings.HasSuffix(wv.text, "-") && isAllDigits(strings.TrimSuffix(wv.text, "-")))) {
			return // a descriptor copied or closed
		}
		// >&word with a word that is no number opens a file.
		rv.write = r.Op == syntax.DplOut
	default:
		rv.write = true
	}
	w.v.redirs = append(w.v.redirs, rv)
}

func isAllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// joinDir resolves a path against each directory of a set.
func joinDir(d dirSet, p string) dirSet {
	if path.IsAbs(p) {
		return knownDir(path.Clean(p))
	}
	if d.unknown {
		return unknownDir
	}
	out := dirSet{}
	for _, x := range d.dirs {
		out = out.add(path.Join(x, p))
	}
	return out
}
