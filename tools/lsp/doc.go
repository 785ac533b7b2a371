// Package lsp runs language servers (gopls, pyright,
// typescript-language-server, rust-analyzer) over the Language Server
// Protocol on their standard input and output, and tells the model what
// its changes broke: after write or edit of a file a server covers, the
// result gets one more text block with the diagnostics the change
// introduced.
//
//	diags, err := lsp.New(lsp.Config{})
//	...
//	defer diags.Close()
//	loop, err := agent.New(
//		agent.WithHooks(agent.Hooks{Tools: []tools.Middleware{spilling, diags.Middleware(), deadlines}}),
//		...
//	)
//
// # Diagnostics after a change
//
// [Manager.Middleware] checks the changed file twice: before the call,
// when it brings the server up to date with the file on disk and notes
// what the server reports (for the file, the files beside it, and what
// it published for any other file), and after the call, when it sends
// the new content and asks again. The block it appends lists what the
// second check has and the first had not, matched by file, severity,
// source, code and message, not by position (which an edit above a
// problem moves), so a problem that was there before is never reported
// as new:
//
//	Diagnostics (gopls): 1 new problem after this change:
//	main.go:6:20: error: undefined: undefinedName (compiler UndeclaredName)
//
// It lists errors and warnings (Config.MinSeverity), at most 10 of them
// (Config.MaxDiagnostics, the rest counted), each on one line cut to 400
// bytes, and says when earlier problems are gone. With nothing new it
// says "no new problems after this change". [Note] finds the block in a
// result, for a host's card of the change; it is part of what the model
// saw, so a replayed session shows it too.
//
// Diagnostics never fail a call. The checks together take at most
// Config.Wait (5 s), plus Config.StartWait (20 s) while a new server
// loads its workspace; a server that does not answer in time, exits, or
// stops reading its input gets a note that the change was not checked,
// and the call's own result is kept. A file no server covers, a file
// system without OS paths, and a server that is not installed pass
// through untouched.
//
// A server answers in one of two ways. One that offers pull diagnostics
// (textDocument/diagnostic; gopls when asked) is asked directly for the
// changed file and the files in its directory. Otherwise, and for every
// other file, the answer is what the server publishes: the check waits
// until the server has published for the changed document's new version
// and then been quiet (no publication, no work in progress) for
// Config.Quiet, or, since servers publish nothing when a file's
// diagnostics did not change, quiet for a second. gopls is asked to
// report its work on each change as progress, so the check also waits
// until what it publishes for other packages is out.
//
// # Servers
//
// [DefaultServers] maps .go to gopls, .py to pyright-langserver --stdio,
// .ts, .tsx, .js and the like to typescript-language-server --stdio, and
// .rs to rust-analyzer; Config.Servers replaces the list. A server is
// started for a workspace (the session file system's root) on the first
// call that needs it, also by a read of a file it covers (in the
// background, so that the first edit finds it loaded), is reused by
// later calls, and is started again when it crashed or failed to answer
// three requests in a row, at most Config.MaxRestarts (3) times; Close
// shuts every server down (shutdown and exit, then SIGTERM and SIGKILL
// to what is left) and waits for them.
//
// Only programs found on PATH, or named by absolute path in the
// configuration, are run, and never one inside the workspace, directly
// or through a symbolic link: what the agent can write is never what the
// harness runs. A server runs contained as the shell tools' commands
// and MCP servers are (internal/proctree: its own PID namespace where the
// kernel allows it), so stopping it stops everything it started, with
// this process's environment minus the variables that look like
// credentials (*_API_KEY, *TOKEN*, AWS_*, DATABASE_URL, ...) unless
// Config.PassEnv names them. It is not sandboxed otherwise: it reads the
// workspace and its dependencies as this process can, and a server that
// runs programs of the workspace runs them outside the shell's sandbox,
// with no permission asked. DefaultServers turns that off where a
// setting can (rust-analyzer's build scripts, procedural macros and
// check-on-save) and marks the servers where it cannot
// (Server.RunsWorkspaceCode: typescript-language-server, pyright), which
// a host that sandboxes commands should leave out:
//
//	var servers []lsp.Server
//	for _, s := range lsp.DefaultServers() {
//		if !s.RunsWorkspaceCode {
//			servers = append(servers, s)
//		}
//	}
//
// It imports harness, fs, tools and internal helpers; nothing of agent,
// session or spill.
package lsp
