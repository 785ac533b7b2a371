package permission

import "strings"

// readOnlyCommands are the programs whose commands run without asking in
// every mode but bypass's (which asks nothing anyway), when a whole line
// is made of them: they read files and print, and change nothing. The
// value names the arguments that would make one change or run something
// (see readOnlyCmd); a line with any of them asks as before. The
// package documentation lists them (keep both in step).
//
// A read-only line is still checked in full: Read deny and ask rules on
// every word it names, a command deny or ask rule, a cd to a place
// known only when it runs. It must not redirect output to a file (but
// /dev/null), nor run anything else: a command substitution, a pipe to
// another program, a wrapper (env, timeout, xargs) or an assignment
// before the command make it an ordinary line. In a persistent shell
// (shell_send) nothing is read-only: an earlier command may have
// defined a function or changed PATH so that a name runs something
// else. The sandbox, where the host uses one, holds as for every
// command.
var readOnlyCommands = map[string]string{
	"ls": "", "cat": "", "head": "", "tail": "", "wc": "", "pwd": "", "echo": "", "printf": "",
	"grep": "", "egrep": "", "fgrep": "", "stat": "", "du": "", "df": "", "which": "",
	"basename": "", "dirname": "", "realpath": "", "readlink": "", "diff": "", "cmp": "",
	"md5sum": "", "sha1sum": "", "sha256sum": "", "sha512sum": "", "cut": "", "nl": "", "tac": "",
	"rev": "", "whoami": "", "id": "", "uname": "", "printenv": "", "true": "", "false": "",
	"test": "", "[": "", "cd": "",
	"rg":   "--pre, --pre-glob, --hostname-bin, -z, --search-zip (they run other programs)",
	"find": "-exec, -execdir, -ok, -okdir, -delete, -fprint, -fprint0, -fprintf, -fls",
	"git":  "any subcommand but status, diff, log and show, global options before it; --output and --ext-diff (any --ou..., --ext...)",
	"tree": "-o (writes its listing to a file)",
	"file": "-C, --compile (writes a magic file)",
}

// strictArgs are the programs of readOnlyCommands whose arguments must
// be written plainly: a glob or an expansion could become one of the
// arguments they refuse (a file named -delete for find).
var strictArgs = map[string]bool{"rg": true, "find": true, "git": true, "tree": true, "file": true}

// readOnlyLine reports whether a command line only reads: every command
// of it is read-only (readOnlyCmd), and it writes no file by a
// redirection. A line the rules could not model in full is not.
func readOnlyLine(v *bashView, persistent bool) bool {
	if v == nil || persistent || len(v.cmds) == 0 || len(v.unmodelled) > 0 || v.anyCode != "" ||
		v.homeUnknown || v.pwdUnknown || v.globsWide {
		return false
	}
	for _, rd := range v.redirs {
		if rd.write && !(rd.w.static && rd.w.text == "/dev/null") {
			return false
		}
	}
	for _, cv := range v.cmds {
		if !readOnlyCmd(cv) {
			return false
		}
	}
	return true
}

// readOnlyCmd reports whether one simple command is a program of
// readOnlyCommands, named plainly, with none of the arguments its entry
// refuses, and nothing else about it (an assignment, a command it runs,
// a file it writes) that the rules know of.
func readOnlyCmd(cv *cmdView) bool {
	if cv.parent != nil || cv.unmodelled != "" || len(cv.inners) > 0 || cv.runsLine || cv.tail ||
		len(cv.assigns) > 0 || len(cv.writes) > 0 || len(cv.words) == 0 {
		return false
	}
	w0 := cv.words[0]
	if !w0.plain || strings.Contains(w0.text, "/") {
		return false
	}
	prog := w0.text
	if _, ok := readOnlyCommands[prog]; !ok {
		return false
	}
	// The walk takes any git command's arguments for files it may
	// write; the subcommands below write none.
	if cv.writesArgs && prog != "git" {
		return false
	}
	args := cv.words[1:]
	if strictArgs[prog] {
		for _, a := range args {
			if !a.plain {
				return false
			}
		}
	}
	for i, a := range args {
		t := a.text
		switch prog {
		case "rg":
			if strings.HasPrefix(t, "--pre") || strings.HasPrefix(t, "--hostname-bin") || strings.HasPrefix(t, "--search-zip") ||
				(strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsRune(t, 'z')) {
				return false
			}
		case "find":
			switch t {
			case "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls":
				return false
			}
		case "git":
			if i == 0 {
				switch t {
				case "status", "diff", "log", "show":
				default:
					return false
				}
			}
			// --output and what git takes for it (a unique prefix).
			if t == "--o" || strings.HasPrefix(t, "--ou") || strings.HasPrefix(t, "--ext") {
				return false
			}
		case "tree":
			if strings.HasPrefix(t, "-o") || strings.HasPrefix(t, "--o") {
				return false
			}
		case "file":
			if t == "-C" || strings.HasPrefix(t, "--c") || (strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.ContainsRune(t, 'C')) {
				return false
			}
		}
	}
	if prog == "git" && len(args) == 0 {
		return false
	}
	return true
}
