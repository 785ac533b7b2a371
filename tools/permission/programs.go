package permission

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// What the rules know of programs: which run another program from their
// arguments (wrappers such as timeout, env, xargs, sudo, find -exec,
// shells with -c, eval), with their option syntax, so that the command
// they run is checked too; and which write the files their arguments
// name (tee, cp, rm, sed -i, ...), so that Edit rules apply to them.
// An option of a wrapper that is not known makes the rest of the
// command unmodelled: it is never allowed, and a deny rule matching any
// of its trailing words matches it.

// optSpec is a program's option syntax, as getopt reads it when it stops
// at the first operand.
type optSpec struct {
	flags   string // short options without an argument
	args    string // short options with an argument (attached or the next word)
	optArgs string // short options whose argument is attached if at all
	// long maps a long option to 'n' (no argument), 'r' (required: =v
	// or the next word) or 'o' (optional: =v only).
	long map[string]byte
	// numeric: -N is an option (nice -5).
	numeric bool
	// dash: a lone - is an option (env -).
	dash bool
}

// optHit is one option read: its name (a letter or a long name) and its
// value, a word index (valIdx) or attached text (val).
type optHit struct {
	name   string
	val    string
	hasVal bool
	valIdx int
}

func (s *optSpec) lookupLong(name string) (byte, string) {
	if k, ok := s.long[name]; ok {
		return k, name
	}
	// getopt_long takes an unambiguous prefix.
	var found string
	for full := range s.long {
		if strings.HasPrefix(full, name) {
			if found != "" {
				return 0, ""
			}
			found = full
		}
	}
	if found == "" {
		return 0, ""
	}
	return s.long[found], found
}

// scanOpts reads options from words[i:]. It returns the index of the
// first operand, the options, and a problem when a word cannot be read:
// an unknown option, or a word known only when it runs where an option
// may be.
func scanOpts(words []wordv, i int, spec *optSpec) (int, []optHit, string) {
	var hits []optHit
	for i < len(words) {
		wd := words[i]
		if !wd.static {
			if !wd.vanish && len(wd.pat) > 0 && wd.pat[0].kind == tokLit && wd.pat[0].b != '-' {
				return i, hits, "" // an operand
			}
			return i, hits, fmt.Sprintf("the word `%s` may be an option", wd.raw)
		}
		t := wd.text
		switch {
		case t == "--":
			return i + 1, hits, ""
		case t == "-":
			if spec.dash {
				hits = append(hits, optHit{name: "-", valIdx: -1})
				i++
				continue
			}
			return i, hits, ""
		case !strings.HasPrefix(t, "-"):
			return i, hits, ""
		case strings.HasPrefix(t, "--"):
			name, val, hasVal := strings.Cut(t[2:], "=")
			kind, full := spec.lookupLong(name)
			h := optHit{name: full, val: val, hasVal: hasVal, valIdx: -1}
			switch kind {
			case 'n':
				if hasVal {
					return i, hits, fmt.Sprintf("the option %s takes no value", t)
				}
			case 'r':
				if !hasVal {
					if i+1 >= len(words) {
						return i, hits, fmt.Sprintf("the option %s lacks its value", t)
					}
					i++
					h.valIdx, h.hasVal = i, true
					if words[i].static {
						h.val = words[i].text
					}
				}
			case 'o':
			default:
				return i, hits, fmt.Sprintf("the option %s is not known to the rules", t)
			}
			hits = append(hits, h)
			i++
			continue
		}
		if spec.numeric && isAllDigits(t[1:]) {
			hits = append(hits, optHit{name: "N", val: t[1:], hasVal: true, valIdx: -1})
			i++
			continue
		}
		for k := 1; k < len(t); k++ {
			c := t[k]
			switch {
			case strings.IndexByte(spec.flags, c) >= 0:
				hits = append(hits, optHit{name: string(c), valIdx: -1})
				continue
			case strings.IndexByte(spec.args, c) >= 0:
				h := optHit{name: string(c), valIdx: -1, hasVal: true}
				if k+1 < len(t) {
					h.val = t[k+1:]
				} else {
					if i+1 >= len(words) {
						return i, hits, fmt.Sprintf("the option -%c lacks its value", c)
					}
					i++
					h.valIdx = i
					if words[i].static {
						h.val = words[i].text
					}
				}
				hits = append(hits, h)
			case strings.IndexByte(spec.optArgs, c) >= 0:
				hits = append(hits, optHit{name: string(c), val: t[k+1:], hasVal: k+1 < len(t), valIdx: -1})
			default:
				return i, hits, fmt.Sprintf("the option -%c of `%s` is not known to the rules", c, t)
			}
			break
		}
		i++
	}
	return i, hits, ""
}

func hasOpt(hits []optHit, names ...string) (optHit, bool) {
	for _, h := range hits {
		for _, n := range names {
			if h.name == n {
				return h, true
			}
		}
	}
	return optHit{}, false
}

func longs(spec string) map[string]byte {
	m := map[string]byte{}
	for _, f := range strings.Fields(spec) {
		name, kind, ok := strings.Cut(f, ":")
		if !ok {
			m[name] = 'n'
			continue
		}
		m[name] = kind[0]
	}
	return m
}

// wrapSpec is a program that runs the command in its operands.
type wrapSpec struct {
	opts optSpec
	// skip is the number of operands before the command (timeout's
	// duration, chrt's priority).
	skip int
	// transparent: running the command through it needs no rule of its
	// own (it changes how, not what, runs).
	transparent bool
	// noRun names options after which no command runs (command -v).
	noRun []string
	// dir names options whose value is the directory the command runs
	// in (env -C); chroot names those after which paths mean something
	// else (sudo -R).
	dir, chroot []string
}

var wrapperSpecs = map[string]*wrapSpec{
	"timeout": {opts: optSpec{flags: "fpv", args: "ks", long: longs("foreground kill-after:r preserve-status signal:r verbose help version")},
		skip: 1, transparent: true, noRun: []string{"help", "version"}},
	"nice":   {opts: optSpec{args: "n", long: longs("adjustment:r help version"), numeric: true}, transparent: true, noRun: []string{"help", "version"}},
	"nohup":  {opts: optSpec{long: longs("help version")}, transparent: true, noRun: []string{"help", "version"}},
	"stdbuf": {opts: optSpec{args: "ioe", long: longs("input:r output:r error:r help version")}, transparent: true, noRun: []string{"help", "version"}},
	"setsid": {opts: optSpec{flags: "cfw", long: longs("ctty fork wait help version")}, transparent: true, noRun: []string{"help", "version"}},
	"ionice": {opts: optSpec{flags: "t", args: "cnpPu", long: longs("class:r classdata:r pid:r pgid:r ignore uid:r help version")},
		transparent: true, noRun: []string{"p", "P", "u", "pid", "pgid", "uid", "help", "version"}},
	"chrt": {opts: optSpec{flags: "abdefimopRrv", args: "TPD", long: longs("all-tasks batch deadline ext fifo idle max other pid rr reset-on-fork sched-runtime:r sched-period:r sched-deadline:r verbose help version")},
		skip: 1, transparent: true, noRun: []string{"m", "p", "max", "pid", "help", "version"}},
	"taskset":  {opts: optSpec{flags: "acp", long: longs("all-tasks cpu-list pid help version")}, skip: 1, transparent: true, noRun: []string{"p", "pid", "help", "version"}},
	"unbuffer": {opts: optSpec{flags: "p"}, transparent: true},
	"command":  {opts: optSpec{flags: "pvV"}, transparent: true, noRun: []string{"v", "V"}},
	"builtin":  {transparent: true},
	"exec":     {opts: optSpec{flags: "cl", args: "a"}, transparent: true},
	"time": {opts: optSpec{flags: "apqvV", args: "fo", long: longs("format:r output:r append portability verbose quiet help version")},
		transparent: true, noRun: []string{"V", "help", "version"}},
	"sudo": {opts: optSpec{flags: "AbBEeHiKklNnPSsVv", args: "CDghpRrtTUu",
		long: longs("askpass background bell close-from:r chdir:r preserve-env:o edit group:r set-home help host:r login remove-timestamp reset-timestamp list non-interactive preserve-groups prompt:r chroot:r role:r stdin shell type:r command-timeout:r other-user:r user:r version validate")},
		noRun: []string{"e", "edit", "l", "list", "v", "validate", "V", "version", "h", "help", "K", "remove-timestamp"},
		dir:   []string{"D", "chdir"}, chroot: []string{"R", "chroot"}},
	"doas":    {opts: optSpec{flags: "Lns", args: "Cu"}, noRun: []string{"L", "C"}},
	"busybox": {transparent: true},
	"toybox":  {transparent: true},
}

// runsUnmodelled are programs that run a command from their arguments
// with an option syntax the rules do not model.
var runsUnmodelled = map[string]bool{
	"strace": true, "ltrace": true, "valgrind": true, "gdb": true, "perf": true, "catchsegv": true,
	"nsenter": true, "unshare": true, "chroot": true, "firejail": true, "bwrap": true, "systemd-run": true,
	"fakeroot": true, "fakechroot": true, "pkexec": true, "prlimit": true, "numactl": true, "cgexec": true,
	"runcon": true, "torsocks": true, "proxychains": true, "proxychains4": true, "xvfb-run": true,
	"dbus-run-session": true, "systemd-inhibit": true, "entr": true, "at": true, "batch": true,
	"expect": true, "setpriv": true, "capsh": true, "sg": true, "newgrp": true, "daemonize": true,
	"start-stop-daemon": true, "ssh-agent": true, "flatpak-spawn": true, "ip": false,
}

// shells are the programs that run a command line given with -c, or
// read one from their input.
var shells = map[string]bool{"bash": true, "sh": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true,
	"yash": true, "posh": true, "rbash": true, "ksh93": true, "pdksh": true, "oksh": true, "lksh": true}

// progName is the program a command word names (the last element of a
// path), or "" when the word is known only when it runs.
func progName(wd wordv) string {
	if !wd.static {
		return ""
	}
	return path.Base(wd.text)
}

// run classifies a command by its program: what it runs from its
// arguments, which files it writes, where it leaves the shell. It adds
// the command to the view and returns the directory after it.
func (w *walker) run(cv *cmdView, s *syntax.Stmt) dirSet {
	w.add(cv)
	return w.classify(cv, s, 0)
}

// maxWrap bounds wrappers inside wrappers.
const maxWrap = 16

func (w *walker) classify(cv *cmdView, s *syntax.Stmt, level int) dirSet {
	dir := cv.dir
	cv.innerAt = -1
	if level > maxWrap {
		w.unparsed("commands wrapped too deep to check")
		return dir
	}
	prog := progName(cv.words[0])
	if prog == "" {
		// The program is known only when it runs: it may be eval or a
		// shell running its arguments, so a deny rule matching any of
		// them matches it.
		cv.unmodelled = fmt.Sprintf("the program `%s` is known only when it runs", cv.words[0].raw)
		w.args(cv, 1, -1)
		for name := range dirChangers {
			if !cv.words[0].vanish && intersects(cv.words[0].pat, pattern(nil).lit(name)) || cv.words[0].vanish {
				// The name may be cd: the shell may be anywhere after.
				return unknownDir
			}
		}
		return dir
	}
	if spec, ok := wrapperSpecs[prog]; ok {
		in := w.wrapper(cv, s, spec, prog, level)
		if in != nil && (prog == "command" || prog == "builtin") {
			// A builtin run by command or builtin runs in this shell: cd
			// moves it.
			return in.outDir
		}
		return dir
	}
	switch {
	case shells[prog]:
		w.shell(cv, s, prog)
		return dir
	case runsUnmodelled[prog]:
		cv.unmodelled = prog + " runs a command after options the rules do not model"
		w.args(cv, 1, -1)
		return dir
	}
	switch prog {
	case "cd", "pushd", "popd", "chdir":
		w.args(cv, 1, -1)
		return w.cd(cv, prog)
	case "eval":
		return w.eval(cv)
	case "source", ".":
		// The file's commands run in this shell: they may set any
		// variable and leave it anywhere.
		w.sh.unknownVars = true
		w.args(cv, 1, -1)
		w.source(cv, s)
		return unknownDir
	case "trap":
		w.trap(cv)
		return w.laterDir(dir)
	case "alias":
		w.alias(cv)
		return w.laterDir(dir)
	case "env":
		w.env_(cv, s, level)
		return dir
	case "xargs":
		w.xargs(cv, s, level)
		return dir
	case "find":
		w.find(cv, s, level)
		return dir
	case "git":
		w.git(cv, s, level)
		return dir
	case "watch":
		w.watch(cv, s, level)
		return dir
	case "flock":
		w.flock(cv, s, level)
		return dir
	case "parallel":
		w.parallel(cv)
		return dir
	case "su", "runuser":
		w.su(cv, s, level, prog)
		return dir
	case "script":
		w.script(cv)
		return dir
	case "read", "mapfile", "readarray", "getopts", "printf", "wait", "let", "unset", "test", "[":
		w.assignsVars(cv, prog)
		w.nameArgs(cv, prog)
	case "hash", "enable":
		for _, a := range cv.words[1:] {
			if !a.static || a.text == "-p" || a.text == "-f" || strings.HasPrefix(a.text, "-") && strings.ContainsAny(a.text, "pf") {
				cv.unmodelled = prog + " may change which program a name runs"
			}
		}
	case "shopt":
		for _, a := range cv.words[1:] {
			if !a.static || a.text == "dotglob" || a.text == "globstar" {
				w.v.globsWide = true
			}
		}
	}
	w.writer(cv, prog)
	return dir
}

// laterDir is the directory after a command that defines code run
// later (a trap, an alias): it stays unless that code may change it.
func (w *walker) laterDir(dir dirSet) dirSet {
	if w.sh.dirFixed {
		return dir
	}
	return unknownDir
}

// laterStart is the directory code run later starts in.
func (w *walker) laterStart(dir dirSet) dirSet {
	if w.sh.dirFixed {
		return dir
	}
	return unknownDir
}

// args records the words of a command from index from on (up to to,
// or the end) as paths it may read.
func (w *walker) args(cv *cmdView, from, to int) {
	if to < 0 || to > len(cv.words) {
		to = len(cv.words)
	}
	if from == 1 && len(cv.words) > 0 && cv.words[0].static && strings.Contains(cv.words[0].text, "/") {
		from = 0 // running a file reads it
	}
	if !w.env.paths {
		return
	}
	if cv.reads == nil {
		cv.reads = make([]pathArg, 0, to-from)
	}
	for i := from; i < to; i++ {
		cv.reads = append(cv.reads, pathArg{w: &cv.words[i]})
	}
}

// inner adds the command a wrapper runs: words[at:], with extra
// assignments, in dir.
func (w *walker) inner(cv *cmdView, s *syntax.Stmt, at int, dir dirSet, assigns []wordv, level int, via string) *cmdView {
	return w.innerWith(cv, s, at, dir, assigns, level, via, nil)
}

// innerWith is inner; prepare, when set, changes the command before it
// is classified (xargs -I's placeholder).
func (w *walker) innerWith(cv *cmdView, s *syntax.Stmt, at int, dir dirSet, assigns []wordv, level int, via string, prepare func(*cmdView)) *cmdView {
	in := &cmdView{words: append([]wordv(nil), cv.words[at:]...), assigns: assigns, dir: dir, parent: cv, via: via}
	if len(cv.inners) == 0 {
		cv.innerAt = at
	}
	cv.inners = append(cv.inners, in)
	if prepare != nil {
		prepare(in)
	}
	w.add(in)
	in.outDir = w.classify(in, s, level+1)
	return in
}

// wrapper models a program of wrapperSpecs; it returns the command it
// runs, if any.
func (w *walker) wrapper(cv *cmdView, s *syntax.Stmt, spec *wrapSpec, prog string, level int) *cmdView {
	i, hits, problem := scanOpts(cv.words, 1, &spec.opts)
	if problem != "" {
		cv.unmodelled = prog + ": " + problem
		w.args(cv, 1, -1)
		return nil
	}
	if _, ok := hasOpt(hits, spec.noRun...); ok {
		if prog == "sudo" {
			if _, edit := hasOpt(hits, "e", "edit"); edit {
				for j := i; j < len(cv.words); j++ {
					cv.writes = append(cv.writes, pathArg{w: ref(cv.words[j])})
				}
			}
		}
		w.args(cv, 1, -1)
		return nil
	}
	if prog == "time" {
		if h, ok := hasOpt(hits, "o", "output"); ok {
			cv.writes = append(cv.writes, optTarget(cv, h))
		}
	}
	cv.transparent = spec.transparent
	i += spec.skip
	if i > len(cv.words) {
		w.args(cv, 1, -1)
		return nil
	}
	if i == len(cv.words) {
		w.args(cv, 1, -1)
		if prog == "sudo" {
			if _, ok := hasOpt(hits, "s", "shell", "i", "login"); ok {
				w.stdinShell(cv, s)
			}
		}
		return nil
	}
	dir := cv.dir
	for _, h := range hits {
		for _, d := range spec.dir {
			if h.name == d {
				dir = optDir(cv, h, dir)
			}
		}
		for _, d := range spec.chroot {
			if h.name == d {
				dir = unknownDir
			}
		}
	}
	w.args(cv, 1, i)
	return w.inner(cv, s, i, dir, nil, level, "run by "+prog)
}

// optDir is the directory an option's value names, resolved from dir.
func optDir(cv *cmdView, h optHit, dir dirSet) dirSet {
	if h.valIdx >= 0 && !cv.words[h.valIdx].static {
		return unknownDir
	}
	if !h.hasVal || h.val == "" || strings.HasPrefix(h.val, "~") {
		return unknownDir
	}
	return joinDir(dir, h.val)
}

// ref is a word's copy to point to.
func ref(w wordv) *wordv { return &w }

// optTarget is the file an option's value names.
func optTarget(cv *cmdView, h optHit) pathArg {
	if h.valIdx >= 0 {
		return pathArg{w: ref(cv.words[h.valIdx])}
	}
	return pathArg{w: ref(plainWord(h.val))}
}

// shell models bash, sh and the like: -c runs its operand as a command
// line; without -c and an operand, the shell runs commands from its
// input.
func (w *walker) shell(cv *cmdView, s *syntax.Stmt, prog string) {
	words := cv.words
	cmode, stdin := false, false
	i := 1
scan:
	for i < len(words) {
		wd := words[i]
		if !wd.static {
			if cmode || !wd.vanish && len(wd.pat) > 0 && wd.pat[0].kind == tokLit && wd.pat[0].b != '-' && wd.pat[0].b != '+' {
				break // an operand, or, after -c, the command line or an option: code either way
			}
			cv.unmodelled = fmt.Sprintf("%s: the word `%s` may be an option", prog, wd.raw)
			w.args(cv, 1, -1)
			return
		}
		t := wd.text
		switch {
		case t == "--" || t == "-":
			i++
			break scan
		case strings.HasPrefix(t, "--"):
			switch t {
			case "--help", "--version":
				w.args(cv, 1, -1)
				return
			case "--norc", "--noprofile", "--login", "--posix", "--restricted", "--verbose", "--noediting", "--debugger",
				"--dump-strings", "--dump-po-strings", "--pretty-print":
				i++
			case "--rcfile", "--init-file":
				i += 2
			default:
				cv.unmodelled = fmt.Sprintf("%s: the option %s is not known to the rules", prog, t)
				w.args(cv, 1, -1)
				return
			}
		case len(t) > 1 && (t[0] == '-' || t[0] == '+'):
			extra := 0
			for k := 1; k < len(t); k++ {
				switch c := t[k]; {
				case c == 'c':
					cmode = true
				case c == 's':
					stdin = true
				case c == 'o' || c == 'O':
					extra++
				case strings.IndexByte("abefhiklmnprtuvxBCEHPT", c) >= 0:
				default:
					cv.unmodelled = fmt.Sprintf("%s: the option -%c is not known to the rules", prog, c)
					w.args(cv, 1, -1)
					return
				}
			}
			i += 1 + extra
		default:
			break scan
		}
	}
	switch {
	case cmode:
		cv.transparent, cv.runsLine = true, true
		if i >= len(words) {
			return // bash -c without its operand runs nothing
		}
		cv.innerAt = i
		w.args(cv, 1, i)
		w.args(cv, i+1, -1)
		if !words[i].static {
			w.unparsed(fmt.Sprintf("%s -c runs `%s`, known only when it runs", prog, words[i].raw))
			return
		}
		w.subLine(words[i].text, cv.dir, "inside "+prog+" -c", false)
	case i < len(words) && !stdin:
		// A script file: its commands are not seen (it is read like any
		// interpreter's program).
		w.args(cv, 1, -1)
	default:
		w.args(cv, 1, -1)
		cv.transparent, cv.runsLine = true, true
		w.stdinShell(cv, s)
	}
}

// stdinShell models a shell reading commands from its input: a
// here-document or here-string with a known body is walked as a
// command line; any other input is code the rules cannot see.
func (w *walker) stdinShell(cv *cmdView, s *syntax.Stmt) {
	var in *syntax.Redirect
	if s != nil {
		for _, r := range s.Redirs {
			if r.N != nil && r.N.Value != "0" {
				continue
			}
			switch r.Op {
			case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc, syntax.RdrIn, syntax.RdrInOut:
				in = r
			case syntax.DplIn:
				in = nil // another descriptor: input the rules cannot see
			}
		}
	}
	if in == nil {
		w.unparsed(fmt.Sprintf("%s runs the commands it reads from its input", cv.words[0].raw))
		return
	}
	switch in.Op {
	case syntax.Hdoc, syntax.DashHdoc:
		if in.Hdoc == nil {
			return
		}
		body := wordValue(in.Hdoc, wordContext{}, w.src)
		if !body.static {
			w.unparsed("a shell runs a here-document whose text is known only when it runs")
			return
		}
		text := body.text
		if !wordQuoted(in.Word) {
			text = hdocUnescape(text)
		}
		w.subLine(text, cv.dir, "in the here-document a shell runs", false)
	case syntax.WordHdoc:
		v := wordValue(in.Word, wordContext{}, w.src)
		if !v.static {
			w.unparsed("a shell runs a here-string known only when it runs")
			return
		}
		w.subLine(v.text, cv.dir, "in the here-string a shell runs", false)
	default:
		// A file: like a script, its commands are not seen.
		cv.transparent, cv.runsLine = false, false
	}
}

// hdocUnescape removes the backslashes an unquoted here-document's body
// loses when it is expanded (before $, ` and \).
func hdocUnescape(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\\", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// eval runs its arguments, joined by spaces, as a command line in this
// shell.
func (w *walker) eval(cv *cmdView) dirSet {
	cv.transparent, cv.runsLine = true, true
	var parts []string
	for _, a := range cv.words[1:] {
		if !a.static {
			w.unparsed(fmt.Sprintf("eval of `%s`, known only when it runs", a.raw))
			return unknownDir
		}
		parts = append(parts, a.text)
	}
	if len(parts) > 0 && parts[0] == "--" {
		parts = parts[1:]
	}
	return w.subLine(strings.Join(parts, " "), cv.dir, "inside eval", true)
}

// source runs a file's commands in this shell. Its input (source
// /dev/stdin) is modelled as a shell's input is; a process substitution
// or a name known only when it runs is code the rules cannot see; a file
// is read like an interpreter's program.
func (w *walker) source(cv *cmdView, s *syntax.Stmt) {
	if len(cv.words) < 2 {
		return
	}
	f := cv.words[1]
	switch {
	case f.procSubst || !f.static && !f.glob:
		w.unparsed(fmt.Sprintf("%s runs `%s`, commands known only when it runs", cv.words[0].raw, f.raw))
	case f.static && (f.text == "/dev/stdin" || f.text == "/dev/fd/0" || f.text == "/proc/self/fd/0"):
		w.stdinShell(cv, s)
	}
}

// trap: its action is a command line run when the signal comes.
func (w *walker) trap(cv *cmdView) {
	ops := cv.words[1:]
	for len(ops) > 0 && ops[0].static && strings.HasPrefix(ops[0].text, "-") && ops[0].text != "-" {
		if ops[0].text == "--" {
			ops = ops[1:]
			break
		}
		ops = ops[1:]
	}
	if len(ops) < 2 {
		return
	}
	a := ops[0]
	if !a.static {
		w.unparsed(fmt.Sprintf("a trap action `%s`, known only when it runs", a.raw))
		return
	}
	if a.text == "-" || a.text == "" {
		return
	}
	w.subLine(a.text, w.laterStart(cv.dir), "in a trap", false)
}

// alias: each value is a command line run where the alias is used, with
// the words that follow the alias there: its commands are walked, and
// the words after it, in lines the rules see apart (a persistent
// shell's later calls), may be code.
func (w *walker) alias(cv *cmdView) {
	for _, a := range cv.words[1:] {
		if !a.static {
			w.unparsed(fmt.Sprintf("an alias `%s` known only when it runs", a.raw))
			continue
		}
		if _, val, ok := strings.Cut(a.text, "="); ok {
			w.subLine(val, w.laterStart(cv.dir), "in an alias", false)
			w.unparsed("an alias, which makes a name run other code, with the words after it, where it is used")
		}
	}
}

// cd changes the directory the commands after it run in.
func (w *walker) cd(cv *cmdView, prog string) dirSet {
	w.sh.funcCd = true
	in := cv.dir
	args := cv.words[1:]
	for len(args) > 0 && args[0].static && strings.HasPrefix(args[0].text, "-") && args[0].text != "-" {
		stop := args[0].text == "--"
		args = args[1:]
		if stop {
			break
		}
	}
	if prog == "popd" || (prog == "pushd" && (len(args) == 0 || args[0].static && len(args[0].text) > 1 && (args[0].text[0] == '+' || args[0].text[0] == '-'))) {
		return unknownDir
	}
	if len(args) > 0 && !args[0].static && !args[0].vanish {
		return unknownDir
	}
	var target string
	if len(args) == 0 || args[0].vanish && !args[0].static {
		if w.v.homeUnknown {
			return unknownDir
		}
		target = w.env.home
		if len(args) > 0 {
			return unknownDir // an expansion that may be empty, or a directory
		}
	} else {
		a := args[0]
		target = a.text
		switch a.tilde {
		case tildeHome:
			if w.v.homeUnknown {
				return unknownDir
			}
			target = w.env.home + a.tildeRest
		case tildeCwd:
			if w.v.pwdUnknown {
				return unknownDir
			}
			target = "." + a.tildeRest
		case tildeUnknown:
			return unknownDir
		}
		if target == "-" {
			return unknownDir
		}
		if !path.IsAbs(target) && w.sh.cdpath && !strings.HasPrefix(target, "./") && !strings.HasPrefix(target, "../") && target != "." && target != ".." {
			return unknownDir
		}
	}
	return in.union(joinDir(in, target))
}

// env runs its command with assignments (NAME=value operands), maybe in
// another directory.
func (w *walker) env_(cv *cmdView, s *syntax.Stmt, level int) {
	spec := &optSpec{flags: "i0v", args: "uCS", dash: true,
		long: longs("ignore-environment null unset:r chdir:r split-string:r debug block-signal:o default-signal:o ignore-signal:o list-signal-handling help version")}
	i, hits, problem := scanOpts(cv.words, 1, spec)
	if problem == "" {
		if _, ok := hasOpt(hits, "S", "split-string"); ok {
			problem = "env -S splits a string into a command"
		}
	}
	if problem != "" {
		cv.unmodelled = "env: " + problem
		w.args(cv, 1, -1)
		return
	}
	if _, ok := hasOpt(hits, "help", "version", "list-signal-handling"); ok {
		w.args(cv, 1, -1)
		return
	}
	dir := cv.dir
	if h, ok := hasOpt(hits, "C", "chdir"); ok {
		dir = optDir(cv, h, dir)
	}
	var assigns []wordv
	for i < len(cv.words) {
		a := cv.words[i]
		name, isAssign := envAssignName(a)
		if !isAssign {
			if !a.static && (a.vanish || len(a.pat) == 0 || a.pat[0].kind != tokLit) {
				cv.unmodelled = fmt.Sprintf("env: the word `%s` may be an assignment or the command", a.raw)
				w.args(cv, 1, -1)
				return
			}
			break
		}
		val := wordv{static: a.static}
		if a.static {
			_, val.text, _ = strings.Cut(a.text, "=")
		}
		w.specialVar(name, val, cv.dir)
		w.assign(name, false)
		assigns = append(assigns, a)
		i++
	}
	w.args(cv, 1, i)
	if i >= len(cv.words) {
		return
	}
	cv.transparent = true
	w.inner(cv, s, i, dir, assigns, level, "run by env")
}

// envAssignName reports whether an env operand is NAME=value.
func envAssignName(a wordv) (string, bool) {
	var prefix string
	if a.static {
		prefix = a.text
	} else if lit, ok := pattern(a.pat).litPrefix(); ok {
		prefix = lit
	} else {
		return "", false
	}
	name, _, ok := strings.Cut(prefix, "=")
	if !ok || name == "" || strings.HasPrefix(name, "-") {
		return "", false
	}
	return name, true
}

// litPrefix returns the literal text before a pattern's first wildcard,
// and whether there is one.
func (p pattern) litPrefix() (string, bool) {
	b := make([]byte, 0, len(p))
	for _, t := range p {
		if t.kind != tokLit {
			break
		}
		b = append(b, t.b)
	}
	return string(b), len(b) > 0
}

// xargs runs its command (echo by default) with arguments it reads.
func (w *walker) xargs(cv *cmdView, s *syntax.Stmt, level int) {
	spec := &optSpec{flags: "0oprtx", args: "aEdILnPs", optArgs: "eil",
		long: longs("null arg-file:r delimiter:r eof:o replace:o max-lines:o max-args:r max-procs:r open-tty interactive process-slot-var:r no-run-if-empty max-chars:r verbose exit show-limits help version")}
	i, hits, problem := scanOpts(cv.words, 1, spec)
	if problem != "" {
		cv.unmodelled = "xargs: " + problem
		w.args(cv, 1, -1)
		return
	}
	if _, ok := hasOpt(hits, "help", "version", "show-limits"); ok {
		w.args(cv, 1, -1)
		return
	}
	replace := ""
	if h, ok := hasOpt(hits, "I", "i", "replace"); ok {
		replace = h.val
		if replace == "" && h.name != "I" {
			replace = "{}"
		}
	}
	w.args(cv, 1, i)
	if i >= len(cv.words) {
		return // echo
	}
	w.innerWith(cv, s, i, cv.dir, nil, level, "run by xargs", func(in *cmdView) {
		in.tail = true
		if replace != "" {
			markDynamic(in, replace)
		}
	})
}

// markDynamic makes the words of a command holding a placeholder (xargs
// -I, find's {}) known only when it runs.
func markDynamic(cv *cmdView, placeholder string) {
	for i, wd := range cv.words {
		if wd.static && strings.Contains(wd.text, placeholder) {
			cv.words[i] = placeholderWord(wd, placeholder)
		}
	}
	for _, in := range cv.inners {
		markDynamic(in, placeholder)
	}
}

// placeholderWord is a word whose placeholder is replaced when it runs.
func placeholderWord(wd wordv, placeholder string) wordv {
	var p pattern
	parts := strings.Split(wd.text, placeholder)
	for k, part := range parts {
		if k > 0 {
			p = p.any()
		}
		p = p.lit(part)
	}
	return wordv{pat: p, raw: wd.raw}
}

// findArgPrimaries are find's tests and actions that take one argument.
var findArgPrimaries = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true, "-iwholename": true,
	"-regex": true, "-iregex": true, "-lname": true, "-ilname": true, "-newer": true, "-anewer": true,
	"-cnewer": true, "-type": true, "-xtype": true, "-user": true, "-group": true, "-uid": true, "-gid": true,
	"-perm": true, "-size": true, "-mtime": true, "-mmin": true, "-atime": true, "-amin": true, "-ctime": true,
	"-cmin": true, "-used": true, "-links": true, "-inum": true, "-samefile": true, "-maxdepth": true,
	"-mindepth": true, "-fstype": true, "-context": true, "-printf": true, "-regextype": true, "-files0-from": true,
}

// find: -exec, -execdir, -ok and -okdir run a command; -delete, -fprint
// and the like write.
func (w *walker) find(cv *cmdView, s *syntax.Stmt, level int) {
	words := cv.words
	i := 1
	for i < len(words) && words[i].static {
		t := words[i].text
		if t == "-H" || t == "-L" || t == "-P" || strings.HasPrefix(t, "-O") {
			i++
		} else if t == "-D" {
			i += 2
		} else {
			break
		}
	}
	startAt := i
	for i < len(words) {
		wd := words[i]
		if wd.static && (strings.HasPrefix(wd.text, "-") || wd.text == "(" || wd.text == "!" || wd.text == ",") {
			break
		}
		if !wd.static && (wd.vanish || len(wd.pat) == 0 || wd.pat[0].kind != tokLit || wd.pat[0].b == '-') {
			cv.unmodelled = fmt.Sprintf("find: the word `%s` may be part of its expression", wd.raw)
			w.args(cv, 1, -1)
			return
		}
		i++
	}
	starts := words[startAt:i]
	w.args(cv, 1, i)
	deleteAll := false
	for i < len(words) {
		wd := words[i]
		if !wd.static {
			if i > 0 && words[i-1].static && findArgPrimaries[words[i-1].text] {
				i++
				continue
			}
			cv.unmodelled = fmt.Sprintf("find: the word `%s` may be part of its expression", wd.raw)
			return
		}
		switch t := wd.text; t {
		case "-exec", "-execdir", "-ok", "-okdir":
			k := i + 1
			plus := false
			for ; k < len(words); k++ {
				if words[k].static && words[k].text == ";" {
					break
				}
				if words[k].static && words[k].text == "+" && k > i+1 && words[k-1].static && words[k-1].text == "{}" {
					plus = true
					break
				}
			}
			if k == i+1 {
				i = k + 1
				continue
			}
			dir := cv.dir
			if t == "-execdir" || t == "-okdir" {
				dir = unknownDir
			}
			in := &cmdView{words: append([]wordv(nil), words[i+1:k]...), dir: dir, parent: cv, via: "run by find " + t}
			if len(cv.inners) == 0 {
				cv.innerAt = i + 1
			}
			cv.inners = append(cv.inners, in)
			markDynamic(in, "{}")
			in.tail = plus
			w.add(in)
			w.classify(in, s, level+1)
			i = k + 1
		case "-delete":
			deleteAll = true
			i++
		case "-fprint", "-fprint0", "-fls":
			if i+1 < len(words) {
				cv.writes = append(cv.writes, pathArg{w: ref(words[i+1])})
			}
			i += 2
		case "-fprintf":
			if i+1 < len(words) {
				cv.writes = append(cv.writes, pathArg{w: ref(words[i+1])})
			}
			i += 3
		default:
			if findArgPrimaries[t] || strings.HasPrefix(t, "-newer") {
				if i+1 < len(words) {
					cv.reads = append(cv.reads, pathArg{w: ref(words[i+1])})
				}
				i += 2
				continue
			}
			i++
		}
	}
	if deleteAll {
		if len(starts) == 0 {
			cv.writes = append(cv.writes, pathArg{w: ref(plainWord("."))})
		}
		for _, st := range starts {
			cv.writes = append(cv.writes, pathArg{w: ref(st)})
		}
	}
}

// gitSafeConfig are the -c settings that run nothing.
var gitSafeConfig = []string{"user.", "color.", "advice.", "core.quotepath", "core.autocrlf", "core.safecrlf", "core.filemode",
	"core.ignorecase", "core.longpaths", "init.defaultbranch", "commit.gpgsign", "tag.gpgsign", "safe.directory", "log.",
	"pull.rebase", "pull.ff", "push.default", "merge.ff", "rebase.autosquash", "rebase.autostash", "fetch.prune",
	"column.ui", "i18n.", "status.", "format.", "maintenance.auto", "gc.auto", "diff.noprefix", "diff.renames",
	"diff.algorithm", "http.sslverify", "protocol.version", "feature.", "index.", "pack.", "checkout.", "branch.autosetup"}

// git: its global options come before the subcommand; -c may set a
// command git runs (an alias, a pager, an ssh command).
func (w *walker) git(cv *cmdView, s *syntax.Stmt, level int) {
	words := cv.words
	dir := cv.dir
	transparent := true
	i := 1
loop:
	for i < len(words) {
		wd := words[i]
		if !wd.static {
			if !wd.vanish && len(wd.pat) > 0 && wd.pat[0].kind == tokLit && wd.pat[0].b != '-' {
				break
			}
			cv.unmodelled = fmt.Sprintf("git: the word `%s` may be an option", wd.raw)
			w.args(cv, 1, -1)
			return
		}
		t := wd.text
		switch {
		case t == "-C":
			if i+1 >= len(words) {
				break loop
			}
			dir = optDir(cv, optHit{valIdx: i + 1, val: words[i+1].text, hasVal: true}, dir)
			if !w.inside(dir) {
				transparent = false
			}
			i += 2
		case t == "-c":
			if i+1 >= len(words) {
				break loop
			}
			w.gitConfig(cv, words[i+1])
			i += 2
		case strings.HasPrefix(t, "--config-env"):
			w.unparsed("git --config-env takes a setting from the environment, which may name a command")
			if !strings.Contains(t, "=") {
				i++
			}
			i++
		case strings.HasPrefix(t, "--exec-path="):
			w.unparsed("git --exec-path runs git's commands from another directory")
			i++
		case t == "-p" || t == "--paginate" || t == "-P" || t == "--no-pager" || t == "--no-replace-objects" ||
			t == "--literal-pathspecs" || t == "--glob-pathspecs" || t == "--noglob-pathspecs" || t == "--icase-pathspecs" ||
			t == "--no-optional-locks" || t == "--no-lazy-fetch" || t == "--no-advice":
			i++
		case t == "--bare" || strings.HasPrefix(t, "--git-dir=") || strings.HasPrefix(t, "--work-tree=") ||
			strings.HasPrefix(t, "--namespace=") || strings.HasPrefix(t, "--attr-source=") || strings.HasPrefix(t, "--super-prefix="):
			transparent = false
			i++
		case t == "--git-dir" || t == "--work-tree" || t == "--namespace" || t == "--attr-source":
			transparent = false
			i += 2
		case t == "--version" || t == "--help" || t == "--html-path" || t == "--man-path" || t == "--info-path" || t == "--exec-path" || strings.HasPrefix(t, "--list-cmds="):
			w.args(cv, 1, -1)
			return
		case strings.HasPrefix(t, "-"):
			cv.unmodelled = fmt.Sprintf("git: the option %s is not known to the rules", t)
			w.args(cv, 1, -1)
			return
		default:
			break loop
		}
	}
	if i == 1 || i >= len(words) {
		w.args(cv, 1, -1)
		cv.writesArgs = true
		return
	}
	// The command without its global options, for the rules: git -C x
	// push is git push.
	w.args(cv, 1, i)
	cv.transparent = transparent
	in := &cmdView{words: append([]wordv{words[0]}, words[i:]...), assigns: nil, dir: dir, parent: cv, via: "git without its global options"}
	cv.innerAt = i
	cv.inners = append(cv.inners, in)
	in.innerAt = -1
	w.add(in)
	w.args(in, 1, -1)
	in.writesArgs = true
}

// gitConfig checks a git -c setting.
func (w *walker) gitConfig(cv *cmdView, wd wordv) {
	if !wd.static {
		w.unparsed(fmt.Sprintf("git -c `%s`, known only when it runs, may name a command", wd.raw))
		return
	}
	key, _, _ := strings.Cut(strings.ToLower(wd.text), "=")
	for _, safe := range gitSafeConfig {
		if key == safe || strings.HasSuffix(safe, ".") && strings.HasPrefix(key, safe) {
			return
		}
	}
	w.unparsed(fmt.Sprintf("git -c %s, a setting that may run a command", key))
}

// inside reports whether every directory of d is known and in the
// workspace.
func (w *walker) inside(d dirSet) bool {
	if d.unknown || w.env.ws == "" {
		return false
	}
	for _, x := range d.dirs {
		if _, ok := relUnder(x, w.env.ws); !ok {
			return false
		}
	}
	return true
}

// watch runs its operands, joined, as a command line of sh -c (or
// directly with -x).
func (w *walker) watch(cv *cmdView, s *syntax.Stmt, level int) {
	spec := &optSpec{flags: "bcCegprtwxq", args: "n", optArgs: "d",
		long: longs("beep color no-color differences:o errexit chgexit interval:r precise no-rerun no-title no-wrap exec help version")}
	i, hits, problem := scanOpts(cv.words, 1, spec)
	if problem != "" {
		cv.unmodelled = "watch: " + problem
		w.args(cv, 1, -1)
		return
	}
	w.args(cv, 1, i)
	if i >= len(cv.words) {
		return
	}
	cv.transparent = true
	if _, ok := hasOpt(hits, "x", "exec"); ok {
		w.inner(cv, s, i, cv.dir, nil, level, "run by watch")
		return
	}
	cv.runsLine, cv.innerAt = true, i
	var parts []string
	for _, a := range cv.words[i:] {
		if !a.static {
			w.unparsed(fmt.Sprintf("watch runs `%s`, known only when it runs", a.raw))
			return
		}
		parts = append(parts, a.text)
	}
	w.subLine(strings.Join(parts, " "), cv.dir, "run by watch", false)
}

// flock runs a command (or a -c command line) holding a lock.
func (w *walker) flock(cv *cmdView, s *syntax.Stmt, level int) {
	spec := &optSpec{flags: "sxeunoFhV", args: "wEc",
		long: longs("shared exclusive unlock nonblock nb close no-fork verbose wait:r timeout:r conflict-exit-code:r command:r help version")}
	i, hits, problem := scanOpts(cv.words, 1, spec)
	if problem != "" {
		cv.unmodelled = "flock: " + problem
		w.args(cv, 1, -1)
		return
	}
	cv.transparent = true
	line, hasLine := hasOpt(hits, "c", "command")
	if i < len(cv.words) {
		i++ // the lock file or descriptor
	}
	w.args(cv, 1, i)
	if !hasLine && i+1 < len(cv.words) && cv.words[i].static && (cv.words[i].text == "-c" || cv.words[i].text == "--command") {
		line, hasLine = optHit{valIdx: i + 1, hasVal: true}, true
		if cv.words[i+1].static {
			line.val = cv.words[i+1].text
		}
	}
	if hasLine {
		cv.runsLine = true
		if line.valIdx >= 0 && !cv.words[line.valIdx].static {
			w.unparsed("flock -c runs a command known only when it runs")
			return
		}
		w.subLine(line.val, cv.dir, "run by flock -c", false)
		return
	}
	if i < len(cv.words) {
		w.inner(cv, s, i, cv.dir, nil, level, "run by flock")
	}
}

// parallel runs its command through a shell for each argument; its
// options are not modelled.
func (w *walker) parallel(cv *cmdView) {
	w.args(cv, 1, -1)
	if len(cv.words) > 1 && (!cv.words[1].static || strings.HasPrefix(cv.words[1].text, "-")) {
		cv.unmodelled = "parallel's options are not modelled"
		return
	}
	var parts []string
	for _, a := range cv.words[1:] {
		if a.static && strings.HasPrefix(a.text, ":::") {
			break
		}
		if !a.static {
			w.unparsed(fmt.Sprintf("parallel runs `%s`, known only when it runs", a.raw))
			return
		}
		parts = append(parts, a.text)
	}
	if len(parts) == 0 {
		w.unparsed("parallel runs the commands it reads from its input")
		return
	}
	cv.runsLine, cv.innerAt = true, 1
	w.subLine(strings.Join(parts, " "), cv.dir, "run by parallel", false)
}

// su and runuser run a -c command line as another user, or a shell
// reading its input.
func (w *walker) su(cv *cmdView, s *syntax.Stmt, level int, prog string) {
	w.args(cv, 1, -1)
	for i := 1; i < len(cv.words); i++ {
		a := cv.words[i]
		if !a.static {
			continue
		}
		var line wordv
		switch {
		case a.text == "-c" || a.text == "--command" || a.text == "--session-command":
			if i+1 >= len(cv.words) {
				return
			}
			line = cv.words[i+1]
		case strings.HasPrefix(a.text, "--command=") || strings.HasPrefix(a.text, "--session-command="):
			_, v, _ := strings.Cut(a.text, "=")
			line = plainWord(v)
		default:
			continue
		}
		if !line.static {
			w.unparsed(prog + " -c runs a command known only when it runs")
			return
		}
		w.subLine(line.text, unknownDir, "run by "+prog, false)
		return
	}
	if prog == "runuser" {
		spec := &optSpec{flags: "flmpP", args: "ugGsw", long: longs("login preserve-environment pty user:r group:r supp-group:r shell:r whitelist-environment:r help version")}
		i, hits, problem := scanOpts(cv.words, 1, spec)
		if _, ok := hasOpt(hits, "u", "user"); ok && problem == "" && i < len(cv.words) {
			w.inner(cv, s, i, unknownDir, nil, level, "run by runuser")
			return
		}
	}
	w.stdinShell(cv, s)
}

// script runs a -c command line and writes its typescript file.
func (w *walker) script(cv *cmdView) {
	w.args(cv, 1, -1)
	spec := &optSpec{flags: "aeEfqkTh", args: "cIOBtmT", long: longs("append command:r echo:r log-in:r log-out:r log-io:r log-timing:r logging-format:r return flush force quiet timing:o output-limit:r help version")}
	i, hits, problem := scanOpts(cv.words, 1, spec)
	if problem != "" {
		cv.unmodelled = "script: " + problem
		return
	}
	if h, ok := hasOpt(hits, "c", "command"); ok {
		if h.valIdx >= 0 && !cv.words[h.valIdx].static {
			w.unparsed("script -c runs a command known only when it runs")
		} else {
			w.subLine(h.val, cv.dir, "run by script -c", false)
		}
	}
	if i < len(cv.words) {
		cv.writes = append(cv.writes, pathArg{w: ref(cv.words[i])})
	} else {
		cv.writes = append(cv.writes, pathArg{w: ref(plainWord("typescript"))})
	}
}

// assignsVars records the variables builtins give values to (read,
// mapfile, printf -v, getopts): their values come from outside.
func (w *walker) assignsVars(cv *cmdView, prog string) {
	for i, a := range cv.words[1:] {
		if !a.static {
			w.sh.unknownVars = true
			continue
		}
		if isName(a.text) {
			w.assign(a.text, false)
		}
		_ = i
	}
	switch prog {
	case "read":
		w.assign("REPLY", false)
	case "mapfile", "readarray":
		w.assign("MAPFILE", false)
	case "getopts":
		w.assign("OPTARG", false)
	}
}

// nameArgs checks the words builtins take as variable names (unset x,
// read x, printf -v x, test -v x, mapfile x, getopts o x, wait -p x): a
// subscript in a name is evaluated as arithmetic, and a substitution in
// it runs; a name known only when it runs may be such a subscript.
func (w *walker) nameArgs(cv *cmdView, prog string) {
	var names []wordv
	words := cv.words[1:]
	optNames := map[string]string{"read": "a", "printf": "v", "wait": "p", "test": "vR", "[": "vR"}[prog]
	optVals := map[string]string{"read": "dinNpt" + "u", "mapfile": "dnOsuCc", "readarray": "dnOsuCc"}[prog]
	operandsAreNames := prog == "unset" || prog == "read" || prog == "mapfile" || prog == "readarray"
	for i := 0; i < len(words); i++ {
		a := words[i]
		if a.static && len(a.text) > 1 && a.text[0] == '-' && (prog != "test" && prog != "[" || len(a.text) == 2) {
			if a.text == "--" {
				continue
			}
			flag := a.text[len(a.text)-1]
			if strings.IndexByte(optNames, flag) >= 0 && i+1 < len(words) {
				names = append(names, words[i+1])
				i++
				continue
			}
			if strings.IndexByte(optVals, flag) >= 0 && i+1 < len(words) {
				if (prog == "mapfile" || prog == "readarray") && flag == 'C' {
					w.callback(words[i+1])
				}
				if (prog == "mapfile" || prog == "readarray") && flag == 'O' {
					w.arithWordValue(words[i+1])
				}
				i++
			}
			continue
		}
		switch {
		case operandsAreNames:
			names = append(names, a)
		case prog == "getopts" && i == 1:
			names = append(names, a)
		}
	}
	for _, n := range names {
		if !n.static {
			w.unparsed(fmt.Sprintf("%s takes `%s`, a variable name known only when it runs (a subscript in it runs its substitutions)", prog, n.raw))
			continue
		}
		if i := strings.IndexByte(n.text, '['); i >= 0 {
			w.arithText(strings.TrimSuffix(n.text[i+1:], "]"))
		}
	}
}

// callback checks mapfile -C's callback, a command line it runs.
func (w *walker) callback(cb wordv) {
	if !cb.static {
		w.unparsed("mapfile -C runs a callback known only when it runs")
		return
	}
	w.subLine(cb.text, unknownDir, "in a mapfile callback", false)
}

// arithWordValue checks a word bash evaluates as arithmetic.
func (w *walker) arithWordValue(a wordv) {
	if !a.static {
		w.sh.arith = append(w.sh.arith, "")
		return
	}
	if !numericText(a.text) {
		w.arithText(a.text)
	}
}

// readers are programs that do not write the files their arguments
// name.
var readers = map[string]bool{
	"cat": true, "head": true, "tail": true, "less": true, "more": true, "grep": true, "egrep": true, "fgrep": true,
	"rg": true, "ag": true, "ack": true, "ls": true, "dir": true, "vdir": true, "wc": true, "diff": true, "cmp": true,
	"file": true, "stat": true, "du": true, "df": true, "base64": true, "base32": true, "basenc": true, "xxd": true,
	"od": true, "hexdump": true, "md5sum": true, "sha1sum": true, "sha224sum": true, "sha256sum": true,
	"sha384sum": true, "sha512sum": true, "b2sum": true, "cksum": true, "sum": true, "strings": true, "cut": true,
	"nl": true, "tac": true, "rev": true, "column": true, "comm": true, "join": true, "paste": true, "fold": true,
	"fmt": true, "pr": true, "zcat": true, "bzcat": true, "xzcat": true, "zstdcat": true, "zgrep": true,
	"zless": true, "jq": true, "yq": true, "tree": true, "bat": true, "realpath": true, "readlink": true,
	"dirname": true, "basename": true, "test": true, "[": true, "echo": true, "printf": true, "true": true,
	"false": true, "pwd": true, "which": true, "type": true, "whereis": true, "id": true, "whoami": true,
	"date": true, "uname": true, "hostname": true, "sleep": true, "expr": true, "seq": true, "yes": true,
	"diff3": true, "sdiff": true, "nproc": true, "getconf": true, "export": true, "local": true, "declare": true,
	"readonly": true, "typeset": true, "unset": true, "set": true, "shift": true, "exit": true, "return": true,
	"break": true, "continue": true, "wait": true, "jobs": true, "kill": true, "umask": true, "ulimit": true,
	"cd": true, "pushd": true, "popd": true, "read": true, "mapfile": true, "readarray": true, "getopts": true,
	"let": true, "shopt": true, ":": true, "hash": true, "help": true, "history": true, "sort": true, "uniq": true,
	"find": true, "xargs": true, "timeout": true, "nice": true, "env": true, "command": true, "builtin": true,
	"exec": true, "nohup": true, "stdbuf": true, "eval": true, "source": true, ".": true, "trap": true,
	"alias": true, "unalias": true, "time": true, "watch": true, "printenv": true, "locale": true, "tput": true,
	"stty": true, "tty": true, "lsof": true, "ps": true, "pgrep": true, "top": true, "free": true, "uptime": true,
}

// writer finds the files a known writer changes; an unknown program's
// arguments may name files it writes.
func (w *walker) writer(cv *cmdView, prog string) {
	w.args(cv, 1, -1)
	words := cv.words
	add := func(wd wordv) { cv.writes = append(cv.writes, pathArg{w: ref(wd)}) }
	addPath := func(wd wordv, value string) {
		cv.writes = append(cv.writes, pathArg{w: ref(wd), value: value})
	}
	operands := func(spec *optSpec) ([]wordv, []optHit) { return permuted(words, spec) }
	switch prog {
	case "tee":
		ops, _ := operands(&optSpec{flags: "aip", long: longs("append ignore-interrupts output-error:o help version")})
		for _, o := range ops {
			add(o)
		}
	case "sed":
		ops, hits := operands(&optSpec{flags: "nrEsuz", args: "efl", optArgs: "i",
			long: longs("expression:r file:r in-place:o line-length:r null-data zero-terminated quiet silent regexp-extended separate sandbox debug posix follow-symlinks unbuffered binary help version")})
		if _, ok := hasOpt(hits, "i", "in-place"); !ok {
			return
		}
		if _, ok := hasOpt(hits, "e", "f", "expression", "file"); !ok && len(ops) > 0 {
			ops = ops[1:]
		}
		for _, o := range ops {
			add(o)
		}
	case "rsync":
		// Which operand is the destination depends on options the rules
		// do not model: every operand may be written.
		ops, _ := operands(&optSpec{flags: "abcdDEgHhIklLmnoOpPqrRsSuvWxXzZ08AU", args: "BefMT"})
		for _, o := range ops {
			add(o)
		}
	case "cp", "mv", "install", "ln":
		spec := writerSpecs[prog]
		ops, hits := operands(spec)
		if unknownOpt(words, spec) {
			// An option the rules do not know may take a value that
			// shifts which operand is the destination.
			for _, o := range ops {
				add(o)
			}
			return
		}
		links := prog == "ln" || prog == "mv"
		if _, ok := hasOpt(hits, "l", "s"); ok && (prog == "cp") {
			links = true
		}
		if _, ok := hasOpt(hits, "d"); ok && prog == "install" {
			for _, o := range ops {
				add(o)
			}
			return
		}
		var dest wordv
		srcs := ops
		if h, ok := hasOpt(hits, "t", "target-directory"); ok {
			dest = *optTarget(cv, h).w
		} else if len(ops) > 0 {
			dest, srcs = ops[len(ops)-1], ops[:len(ops)-1]
		} else {
			return
		}
		add(dest)
		for _, s := range srcs {
			if links {
				// A link to a file is a way to write it.
				cv.writes = append(cv.writes, pathArg{w: ref(s), link: prog != "mv"})
			}
			if dest.static && s.static {
				addPath(dest, path.Join(dest.text, path.Base(s.text)))
			}
		}
	case "dd":
		for _, a := range words[1:] {
			if a.static && strings.HasPrefix(a.text, "of=") {
				addPath(a, strings.TrimPrefix(a.text, "of="))
			} else if !a.static {
				if lit, _ := a.pat.litPrefix(); strings.HasPrefix(lit, "of=") || strings.HasPrefix("of=", lit) {
					add(a)
				}
			}
		}
	case "truncate", "touch", "rm", "rmdir", "unlink", "shred", "mkdir", "mkfifo", "mknod", "chmod", "chown", "chgrp", "chattr", "setfacl":
		ops, _ := operands(writerSpecs[prog])
		for _, o := range ops {
			add(o)
		}
	case "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "zstd", "unzstd":
		ops, hits := operands(&optSpec{flags: "cdfhklLnNqrtvVz0123456789", args: "S", long: longs("stdout to-stdout list test keep suffix:r")})
		if _, ok := hasOpt(hits, "c", "stdout", "to-stdout", "l", "list", "t", "test"); ok {
			return
		}
		for _, o := range ops {
			add(o)
		}
	case "sort":
		_, hits := operands(&optSpec{flags: "bdfgiMhnRrVcCmsuz", args: "kotST", long: longs("output:r key:r field-separator:r buffer-size:r temporary-directory:r")})
		if h, ok := hasOpt(hits, "o", "output"); ok {
			cv.writes = append(cv.writes, optTarget(cv, h))
		}
	case "uniq":
		ops, _ := operands(&optSpec{flags: "cdDiuz", args: "fsw", long: longs("count repeated all-repeated:o skip-fields:r skip-chars:r ignore-case unique zero-terminated check-chars:r group:o")})
		if len(ops) >= 2 {
			add(ops[1])
		}
	case "curl", "wget":
		for i := 1; i < len(words); i++ {
			a := words[i]
			if !a.static {
				continue
			}
			switch a.text {
			case "-o", "--output", "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--output-dir",
				"--libcurl", "--etag-save", "--stderr", "-O", "--output-document", "-a", "--append-output", "-P", "--directory-prefix", "--output-file":
				if a.text == "-O" && prog == "curl" {
					add(plainWord("."))
					continue
				}
				if i+1 < len(words) {
					add(words[i+1])
				}
			default:
				for _, pre := range []string{"--output=", "--output-document=", "--output-file=", "--directory-prefix=", "--append-output="} {
					if strings.HasPrefix(a.text, pre) {
						addPath(a, strings.TrimPrefix(a.text, pre))
					}
				}
				if len(a.text) > 2 && (strings.HasPrefix(a.text, "-o") || strings.HasPrefix(a.text, "-O") && prog == "wget") {
					addPath(a, a.text[2:])
				}
			}
		}
	case "tar":
		w.tar(cv)
	case "patch":
		for i := 1; i+1 < len(words); i++ {
			if words[i].static && (words[i].text == "-o" || words[i].text == "--output") {
				add(words[i+1])
			}
		}
		cv.writesArgs = true
	default:
		if !readers[prog] {
			cv.writesArgs = true
		}
	}
}

// writerSpecs are the option syntaxes of writers whose operands are
// told apart from option values. An option taking a value must be
// listed, or its value is taken for an operand (which errs toward a
// write, but would shift cp's destination: see unknownOpt).
var writerSpecs = map[string]*optSpec{
	"cp":       {flags: "abdfHilLnPprRsTuvxZ", args: "St", long: longs("archive attributes-only backup:o copy-contents debug force interactive link dereference no-clobber no-dereference preserve:o no-preserve:r parents recursive reflink:o remove-destination sparse:r strip-trailing-slashes symbolic-link suffix:r target-directory:r no-target-directory update:o verbose one-file-system context:o keep-directory-symlink help version")},
	"mv":       {flags: "bfinTuvZ", args: "St", long: longs("backup:o debug exchange force interactive no-clobber no-copy strip-trailing-slashes suffix:r target-directory:r no-target-directory update:o verbose context help version")},
	"install":  {flags: "bcCdDpsTvZ", args: "gmoSt", long: longs("backup:o compare directory group:r mode:r owner:r preserve-timestamps strip strip-program:r suffix:r target-directory:r no-target-directory verbose preserve-context context:o debug help version")},
	"ln":       {flags: "bdfFinLPrsTv", args: "St", long: longs("backup:o directory force interactive logical no-dereference physical relative symbolic suffix:r target-directory:r no-target-directory verbose help version")},
	"truncate": {flags: "co", args: "rs", long: longs("no-create io-blocks reference:r size:r help version")},
	"touch":    {flags: "acfhm", args: "drt", long: longs("date:r reference:r time:r no-dereference no-create help version")},
	"rm":       {flags: "dfiIrRv", long: longs("force interactive:o one-file-system no-preserve-root preserve-root:o recursive dir verbose help version")},
	"rmdir":    {flags: "pv", long: longs("ignore-fail-on-non-empty parents verbose help version")},
	"unlink":   {long: longs("help version")},
	"shred":    {flags: "fuvxz", args: "ns", long: longs("force iterations:r random-source:r size:r remove:o verbose exact zero help version")},
	"mkdir":    {flags: "pvZ", args: "m", long: longs("mode:r parents verbose context:o help version")},
	"mkfifo":   {flags: "Z", args: "m", long: longs("mode:r context:o help version")},
	"mknod":    {flags: "Z", args: "m", long: longs("mode:r context:o help version")},
	"chmod":    {flags: "cfvR", long: longs("changes silent quiet verbose no-preserve-root preserve-root reference:r recursive help version")},
	"chown":    {flags: "cfhvRHLP", long: longs("changes dereference no-dereference from:r no-preserve-root preserve-root quiet silent reference:r recursive verbose help version")},
	"chgrp":    {flags: "cfhvRHLP", long: longs("changes dereference no-dereference no-preserve-root preserve-root quiet silent reference:r recursive verbose help version")},
	"chattr":   {flags: "RVf", args: "vp"},
	"setfacl":  {flags: "bkndRLPtv", args: "mMxX", long: longs("modify:r modify-file:r remove:r remove-file:r set:r set-file:r remove-all remove-default restore:r test recursive logical physical mask no-mask default help version")},
}

// unknownOpt reports an option that spec does not know among words.
func unknownOpt(words []wordv, spec *optSpec) bool {
	for i := 1; i < len(words); i++ {
		wd := words[i]
		if !wd.static {
			if len(wd.pat) == 0 || wd.pat[0].kind != tokLit || wd.pat[0].b == '-' {
				return true
			}
			continue
		}
		if wd.text == "--" {
			return false
		}
		if strings.HasPrefix(wd.text, "-") && wd.text != "-" {
			j, _, problem := scanOpts(words, i, spec)
			if problem != "" {
				return true
			}
			i = j - 1
		}
	}
	return false
}

// permuted reads the operands of a GNU program, whose options may come
// after operands, until --. An unknown option is taken as a flag: its
// value, if it has one, is then an operand, which errs toward a write.
func permuted(words []wordv, spec *optSpec) ([]wordv, []optHit) {
	var ops []wordv
	var hits []optHit
	for i := 1; i < len(words); i++ {
		wd := words[i]
		if !wd.static || !strings.HasPrefix(wd.text, "-") || wd.text == "-" {
			ops = append(ops, wd)
			continue
		}
		if wd.text == "--" {
			ops = append(ops, words[i+1:]...)
			break
		}
		j, h, problem := scanOpts(words, i, spec)
		hits = append(hits, h...)
		if problem != "" || j <= i {
			j = i + 1
		}
		i = j - 1
	}
	return ops, hits
}

// tar writes its archive when it creates one, and the directory it
// extracts to.
func (w *walker) tar(cv *cmdView) {
	words := cv.words
	create, extract := false, false
	var file, dirw *wordv
	i := 1
	if len(words) > 1 && words[1].static && !strings.HasPrefix(words[1].text, "-") {
		// The old form: letters, whose arguments follow in order.
		letters := words[1].text
		i = 2
		for k := 0; k < len(letters); k++ {
			switch letters[k] {
			case 'c', 'r', 'u', 'A':
				create = true
			case 'x':
				extract = true
			case 'f':
				if i < len(words) {
					file = &words[i]
				}
				i++
			case 'C':
				if i < len(words) {
					dirw = &words[i]
				}
				i++
			case 'b', 'T', 'X', 'K', 'N', 'V', 'L':
				i++
			}
		}
	}
	for ; i < len(words); i++ {
		a := words[i]
		if !a.static {
			continue
		}
		t := a.text
		switch {
		case t == "-f" || t == "--file" || t == "-C" || t == "--directory":
			if i+1 < len(words) {
				if t == "-f" || t == "--file" {
					file = &words[i+1]
				} else {
					dirw = &words[i+1]
				}
			}
			i++
			continue
		case strings.HasPrefix(t, "--file="):
			v := plainWord(strings.TrimPrefix(t, "--file="))
			file = &v
		case strings.HasPrefix(t, "--directory="):
			v := plainWord(strings.TrimPrefix(t, "--directory="))
			dirw = &v
		case t == "--create" || t == "--append" || t == "--update" || t == "--concatenate":
			create = true
		case t == "--extract" || t == "--get":
			extract = true
		case strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--"):
			create = create || strings.ContainsAny(t, "cruA")
			extract = extract || strings.Contains(t, "x")
			if k := strings.IndexByte(t, 'f'); k >= 0 {
				if k+1 < len(t) {
					v := plainWord(t[k+1:])
					file = &v
				} else if i+1 < len(words) {
					file = &words[i+1]
					i++
				}
			}
		}
	}
	if create && file != nil {
		cv.writes = append(cv.writes, pathArg{w: ref(*file)})
	}
	if extract {
		if dirw != nil {
			cv.writes = append(cv.writes, pathArg{w: ref(*dirw)})
		} else {
			cv.writes = append(cv.writes, pathArg{w: ref(plainWord("."))})
		}
	}
}
