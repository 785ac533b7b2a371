package permission

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// lineGen generates bash command lines for the differential tests:
// every kind of quoting, expansions, substitutions, here-documents,
// redirections, compound commands, wrappers and the command lines eval
// and bash -c run. Its programs are six names: ok1 and ok2 (allowed by
// the differential's rules, ok2 only with x as its first argument), ask1
// (allowed by nothing), pwn (denied), ls and head (read-only: they run
// without a rule), plus a few real programs.
type lineGen struct {
	r *rand.Rand
	// bin is the directory the programs are in, for the forms that name
	// a program by its path.
	bin string
}

func newLineGen(seed uint64, bin string) *lineGen {
	return &lineGen{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), bin: bin}
}

func (g *lineGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }
func (g *lineGen) chance(n int) bool        { return g.r.IntN(n) == 0 }

// line is a whole command line.
func (g *lineGen) line() string {
	var b strings.Builder
	if g.chance(4) {
		b.WriteString(g.pick("P=pwn; ", "P=ok1; ", "X=a; ", "Q='ask1'; "))
	}
	b.WriteString(g.list(0))
	if g.chance(3) {
		b.WriteString(g.pick("\n", "; ", " && ", " || ", " & ", "\n\n"))
		b.WriteString(g.list(0))
	}
	if g.chance(4) {
		b.WriteString(g.heredocCmd(0))
	}
	if g.chance(10) {
		b.WriteString(g.pick(" # rm '", " #", " # $(pwn)"))
	}
	return b.String() + "\nwait"
}

// list is pipelines joined by operators.
func (g *lineGen) list(d int) string {
	n := 1 + g.r.IntN(2)
	if d > 1 {
		n = 1
	}
	var parts []string
	for range n {
		parts = append(parts, g.pipeline(d))
	}
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteString(g.pick("; ", " && ", " || ", "\n", " & "))
		}
		b.WriteString(p)
	}
	return b.String()
}

func (g *lineGen) pipeline(d int) string {
	s := g.command(d)
	if g.chance(4) {
		s += g.pick(" | ", " |& ") + g.command(d)
	}
	if g.chance(12) {
		s = "! " + s
	}
	return s
}

// command is a simple or compound command.
func (g *lineGen) command(d int) string {
	if d >= 3 {
		return g.simple(d)
	}
	switch g.r.IntN(22) {
	case 0:
		return "( " + g.list(d+1) + " )"
	case 1:
		return "{ " + g.list(d+1) + "; }"
	case 2:
		return "if " + g.simple(d+1) + "; then " + g.list(d+1) + "; else " + g.list(d+1) + "; fi"
	case 3:
		return "for i in a b; do " + g.list(d+1) + "; done"
	case 4:
		return "while " + g.pick("false", "! true") + "; do " + g.list(d+1) + "; done"
	case 5:
		return "case " + g.pick("x", "$X", "y") + " in x) " + g.list(d+1) + ";; *) " + g.list(d+1) + ";; esac"
	case 6:
		return "f() { " + g.list(d+1) + "; }; f"
	case 7:
		return g.pick("eval ", "bash -c ", "sh -c ", "bash -ec ", "builtin eval ") + g.quote(g.list(d+1))
	case 8:
		if g.chance(6) {
			return "((" + g.simple(d+1) + ") )"
		}
	case 9:
		return "time " + g.simple(d+1)
	case 10:
		return "[[ -n " + g.arg(d+1) + " ]] && " + g.simple(d+1)
	case 11:
		return g.findExec(d)
	}
	return g.simple(d)
}

// quote quotes a line as one word, in single or double quotes.
func (g *lineGen) quote(s string) string {
	if g.chance(2) {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
	return `"` + r.Replace(s) + `"`
}

func (g *lineGen) findExec(d int) string {
	return "find . -maxdepth 0 " + g.pick("-exec", "-execdir") + " " + g.prog() + " " + g.pick("{}", "x {}", "x") + g.pick(` \;`, " ';'", " {} +")
}

// simple is a simple command: assignments, a wrapper, a program, its
// arguments and redirections.
func (g *lineGen) simple(d int) string {
	var b strings.Builder
	if g.chance(8) {
		b.WriteString(g.pick("A=1 ", "A=$(ok1) ", "B='x y' "))
	}
	if g.chance(4) {
		b.WriteString(g.pick("timeout 5 ", "timeout -s KILL 5 ", "nice -n 3 ", "nice ", "env ", "env -u X ", "env A=1 ",
			"stdbuf -o0 ", "command ", "xargs ", "xargs -n 1 ", "time -p ", "nohup ", "command -p "))
	}
	b.WriteString(g.prog())
	for range g.r.IntN(3) {
		b.WriteString(" " + g.arg(d))
	}
	if g.chance(3) {
		b.WriteString(" " + g.redirect(d))
	}
	return b.String()
}

// prog names a program in one of the ways bash reads.
func (g *lineGen) prog() string {
	name := g.pick("ok1", "ok1", "ok2 x", "ok2", "ask1", "pwn", "pwn", "echo", "true", "cat", ":", "ls", "head")
	if strings.HasPrefix(name, "ok2 ") || name == "echo" || name == "true" || name == ":" || name == "cat" {
		return name
	}
	switch g.r.IntN(18) {
	case 0:
		return "'" + name + "'"
	case 1:
		return `"` + name + `"`
	case 2:
		return name[:1] + `"` + name[1:] + `"`
	case 3:
		return `\` + name
	case 4:
		return "$'" + name + "'"
	case 5:
		return fmt.Sprintf(`$'\x%02x%s'`, name[0], name[1:])
	case 6:
		return "$(echo " + name + ")"
	case 7:
		return "`echo " + name + "`"
	case 8:
		return "{" + name + ",x}"
	case 9:
		return g.bin + "/" + name
	case 10:
		return g.bin + "/" + name[:1] + "[" + name[1:2] + "]" + name[2:]
	case 11:
		return "${P:-" + name + "}"
	case 12:
		return "$P"
	case 13:
		return `"$(echo ` + name + `)"`
	}
	return name
}

// arg is an argument in one of many forms.
func (g *lineGen) arg(d int) string {
	switch g.r.IntN(26) {
	case 0:
		return "'a b'"
	case 1:
		return `"a b"`
	case 2:
		return `"$X"`
	case 3:
		return "$X"
	case 4:
		return `"$'"`
	case 5:
		return `'"'`
	case 6:
		return `"'"`
	case 7:
		return `${X:-'}'}`
	case 8:
		return "$((1 + 2))"
	case 9:
		if d < 3 {
			return "$(" + g.list(d+1) + ")"
		}
	case 10:
		if d < 3 {
			return `"$(` + g.list(d+1) + `)"`
		}
	case 11:
		if d < 3 {
			return "`" + g.simple(3) + "`"
		}
	case 12:
		if d < 3 {
			return "<(" + g.list(d+1) + ")"
		}
	case 13:
		if d < 3 {
			return "${X:-$(" + g.simple(d+1) + ")}"
		}
	case 14:
		return "'$(pwn)'"
	case 15:
		return `"\$(pwn)"`
	case 16:
		return `a\;b`
	case 17:
		return "a#b"
	case 18:
		if d < 3 && g.chance(6) {
			return "$((" + g.simple(3) + ") )"
		}
	case 19:
		return "{a,b}"
	case 20:
		return `$'a\'b'`
	case 21:
		return "x"
	case 22:
		return "*.none"
	}
	return g.pick("x", "y", "-n", "--", "a=b")
}

// redirect is a redirection, to files inside and outside the
// workspace and to the git directory the rules protect.
func (g *lineGen) redirect(d int) string {
	switch g.r.IntN(14) {
	case 0:
		return "2>&1"
	case 1:
		return "2>/dev/null"
	case 2:
		return "> .git/w1"
	case 3:
		return ">> .git/w2"
	case 4:
		return "> ~+/.git/w3"
	case 5:
		return "&> out"
	case 6:
		return "< /dev/null"
	case 7:
		return "<<< " + g.arg(d)
	case 8:
		return "> ~-/w4"
	case 9:
		if d < 3 {
			return "> >(" + g.simple(d+1) + ")"
		}
	case 10:
		return `> "$X"`
	case 11:
		return "> .git/$X"
	}
	return g.pick("> out", ">> out", ">| out")
}

// heredocCmd is a command with a here-document, and the lines after it.
func (g *lineGen) heredocCmd(d int) string {
	delim := g.pick("EOF", "'EOF'", `"EOF"`, `\EOF`, "EOF")
	if g.chance(6) {
		delim = g.pick("$X", "${X}", "E$X")
	}
	word := strings.NewReplacer("'", "", `"`, "", `\`, "").Replace(delim)
	dash := g.chance(3)
	op := "<<"
	if dash {
		op = "<<-"
	}
	var body []string
	for range 1 + g.r.IntN(2) {
		body = append(body, g.pick("text", "$X", "$("+g.simple(3)+")", "`"+g.simple(3)+"`", "a \\$(pwn)", "'$(pwn)'"))
	}
	if dash {
		for i := range body {
			body[i] = "\t" + body[i]
		}
		word = "\t" + word
	}
	prog := g.pick("cat", "ok1", "bash", "sh")
	return "\n" + prog + " " + op + delim + "\n" + strings.Join(body, "\n") + "\n" + word + "\n" + g.simple(d)
}
