package permission

import (
	"path"
	"regexp"
	"strings"

	"github.com/go-harness/harness/tools"
)

// suggestFor proposes the rule an approver may offer to remember for an
// asked call (Decision.Suggest): the narrowest that covers the call and
// reads clearly, or "" when no rule is safe to offer. A candidate is
// kept only when the policy with it (and without its ask rules) allows
// the very call.
func (p *Policy) suggestFor(call *tools.Call, info toolInfo, sub subject, view *bashView) string {
	var r string
	switch info.kind {
	case kindBash:
		r = suggestBash(view)
	case kindEdit:
		r = suggestEdit(sub)
	case kindWeb:
		if sub.host != "" {
			r = "WebFetch(domain:" + sub.host + ")"
		}
	case kindOther:
		r = call.Name
	case kindSkill:
		if sub.skill != "" {
			r = "Skill(" + sub.skill + ")"
		}
	}
	if r == "" {
		return ""
	}
	// The trial drops the ask rules: one that matches asks whatever is
	// allowed, by the user's choice, and the rule is still the one that
	// covers the call.
	base := *p
	base.ask = nil
	q, err := base.WithAllow(r)
	if err != nil {
		return ""
	}
	q.checking = true
	if q.Decide(call).Outcome != Allow {
		return ""
	}
	return r
}

// suggestEdit proposes an Edit rule for a file tool's path: the file's
// directory and everything below it when the file is below the
// workspace's root (Edit(src/**)), the file itself when it is at the
// root (Edit(./main.go)) or outside the workspace (Edit(//etc/hosts)).
// Nothing is offered for a repository's own files (.git), where a hook
// or a configured command runs code, nor for a path a rule cannot name
// plainly.
func suggestEdit(sub subject) string {
	if len(sub.paths) == 0 {
		return ""
	}
	abs := sub.paths[0]
	for _, el := range strings.Split(abs, "/") {
		if el == ".git" {
			return ""
		}
	}
	if strings.ContainsAny(abs, "*?[]\\()\t\n\r") {
		return ""
	}
	rel, inside := relUnder(abs, sub.ws)
	switch {
	case !inside:
		return "Edit(/" + abs + ")"
	case rel == "":
		return ""
	case !strings.Contains(rel, "/"):
		return "Edit(./" + rel + ")"
	}
	return "Edit(" + path.Dir(rel) + "/**)"
}

// noSuggest are programs for which no Bash rule is offered: a rule for
// them would allow arbitrary code (interpreters, shells, programs that
// run the command in their arguments), a destructive family (rm, dd,
// kill), a change of identity (sudo), or sending and fetching anything
// anywhere (curl, ssh).
var noSuggest = map[string]bool{
	// Interpreters (python* is matched by prefix).
	"node": true, "nodejs": true, "deno": true, "bun": true, "perl": true, "ruby": true, "irb": true,
	"php": true, "lua": true, "luajit": true, "Rscript": true, "R": true, "julia": true, "tclsh": true,
	"wish": true, "osascript": true, "pypy": true, "pypy3": true, "java": true, "jshell": true,
	"groovy": true, "scala": true, "kotlin": true, "awk": true, "gawk": true, "mawk": true, "nawk": true,
	"sed": true, "gsed": true, "ex": true, "vim": true, "vi": true, "nvim": true, "emacs": true, "m4": true,
	"gdb": true, "expect": true, "busybox": true, "toybox": true,
	// Programs that run the command line or program they are given.
	"eval": true, "source": true, ".": true, "exec": true, "command": true, "builtin": true, "env": true,
	"xargs": true, "find": true, "parallel": true, "watch": true, "flock": true, "timeout": true,
	"nice": true, "nohup": true, "stdbuf": true, "setsid": true, "ionice": true, "chrt": true,
	"taskset": true, "unbuffer": true, "time": true, "script": true, "trap": true, "alias": true,
	"npx": true, "pnpx": true, "bunx": true, "uvx": true, "pipx": true,
	// Identity and privilege.
	"sudo": true, "doas": true, "su": true, "runuser": true, "pkexec": true,
	// Destructive families.
	"rm": true, "rmdir": true, "unlink": true, "shred": true, "dd": true, "truncate": true, "wipefs": true,
	"fdisk": true, "sfdisk": true, "parted": true, "mkswap": true, "chmod": true, "chown": true,
	"chgrp": true, "chattr": true, "kill": true, "killall": true, "pkill": true, "reboot": true,
	"shutdown": true, "halt": true, "poweroff": true, "crontab": true, "mv": true, "ln": true,
	"mount": true, "umount": true, "iptables": true, "nft": true,
	// Network transfers.
	"curl": true, "wget": true, "ssh": true, "scp": true, "sftp": true, "rsync": true, "nc": true,
	"ncat": true, "netcat": true, "socat": true, "telnet": true, "ftp": true,
}

// destructiveSub are subcommands that delete or reset whatever program
// they belong to (docker rm, kubectl delete, npm uninstall): no rule is
// offered for their family.
var destructiveSub = map[string]bool{
	"rm": true, "rmi": true, "delete": true, "del": true, "remove": true, "uninstall": true, "purge": true,
	"prune": true, "destroy": true, "drop": true, "clean": true, "reset": true, "kill": true, "wipe": true,
	"erase": true, "format": true, "exec": true, "run-script": true, "eval": true, "x": true, "dlx": true,
}

// safeGit are the git subcommands a rule is offered for; others (push,
// reset, clean, checkout, rebase, config ...) may discard work, publish
// it, or run configured commands.
var safeGit = map[string]bool{
	"status": true, "diff": true, "log": true, "show": true, "blame": true, "grep": true, "ls-files": true,
	"rev-parse": true, "describe": true, "shortlog": true, "add": true, "commit": true, "fetch": true,
	"switch": true,
}

// runners are programs whose run subcommand names what it runs (npm run
// build): the rule names it too.
var runners = map[string]bool{"npm": true, "pnpm": true, "yarn": true}

// multi are programs of many subcommands: a rule for the program alone
// would allow all of them, so one is offered only with the subcommand.
var multi = map[string]bool{
	"go": true, "cargo": true, "make": true, "just": true, "npm": true, "pnpm": true, "yarn": true, "git": true, "docker": true,
	"podman": true, "kubectl": true, "helm": true, "terraform": true, "gh": true, "pip": true,
	"pip3": true, "uv": true, "poetry": true, "apt": true, "apt-get": true, "dnf": true, "yum": true,
	"brew": true, "systemctl": true, "dotnet": true, "mvn": true, "gradle": true, "aws": true,
	"gcloud": true, "az": true, "rustup": true, "conda": true, "composer": true, "bundle": true,
}

// subcommand is the shape of a subcommand word (test, run-script,
// ls-files), as opposed to a path, an option or a value.
var subcommand = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// suggestBash proposes a rule for a command line of one plain command:
// Bash(program subcommand:*) for a program of subcommands (Bash(go
// test:*), Bash(npm run build:*)), Bash(program:*) for one without
// (Bash(ls:*), Bash(pytest:*)), Bash(program) for a program of
// subcommands run bare. Nothing is offered for a line of several
// commands, one the rules cannot model, assignments, the programs of
// noSuggest and destructive subcommands.
func suggestBash(v *bashView) string {
	if v == nil || len(v.unmodelled) > 0 || v.anyCode != "" || len(v.cmds) != 1 {
		return ""
	}
	cv := v.cmds[0]
	if len(cv.assigns) > 0 || len(cv.inners) > 0 || cv.runsLine || cv.unmodelled != "" {
		return ""
	}
	w := cv.words
	if len(w) == 0 || !ruleWord(w[0]) {
		return ""
	}
	prog := progName(w[0])
	if noSuggest[prog] || shells[prog] || runsUnmodelled[prog] || wrapperSpecs[prog] != nil ||
		strings.HasPrefix(prog, "python") || strings.HasPrefix(prog, "pypy") {
		return ""
	}
	sub := ""
	if len(w) > 1 && ruleWord(w[1]) && subcommand.MatchString(w[1].text) {
		sub = w[1].text
	}
	switch {
	case len(w) == 1 && multi[prog]:
		return "Bash(" + w[0].text + ")"
	case !multi[prog]:
		return "Bash(" + w[0].text + ":*)"
	case sub == "", destructiveSub[sub], prog == "git" && !safeGit[sub]:
		return ""
	case runners[prog] && sub == "run" && len(w) > 2 && ruleWord(w[2]) && !strings.HasPrefix(w[2].text, "-"):
		return "Bash(" + w[0].text + " run " + w[2].text + ":*)"
	case runners[prog] && sub == "run":
		return ""
	}
	return "Bash(" + w[0].text + " " + sub + ":*)"
}

// ruleWord reports a word a rule can name as written.
func ruleWord(x wordv) bool {
	return x.plain && x.text != "" && !strings.ContainsAny(x.text, "()*: \t\n\\")
}
