// Command coder is a small coding agent for the terminal, built only from
// the harness library's public API.
//
//	go run ./examples/coder -C ~/src/project "make the failing test pass"
//	go run ./examples/coder                       # a prompt loop in the current directory
//	go run ./examples/coder -continue             # the latest session of this directory
//	go run ./examples/coder -json -p "…" | jq .   # every event as a JSON line
//
// The model comes from the environment: ANTHROPIC_API_KEY for Claude
// over Anthropic's Messages API (ANTHROPIC_BASE_URL for another endpoint
// of that API), else HARNESS_BASE_URL, HARNESS_API_KEY and HARNESS_MODEL
// for any OpenAI-compatible endpoint, otherwise DEEPSEEK_API_KEY for
// DeepSeek; HARNESS_PROVIDER (anthropic, openai or deepseek) picks one
// explicitly. -fallback-model names a model (an id of the same provider,
// or provider:id) that answers when the first fails for good with an
// overload, a rate limit or an outage. -model overrides the model id; -image
// and -context-window declare image input and the context window of a
// model the built-in catalog does not know (without a window, history is
// pruned and compacted only when the provider reports an overflow).
//
// The agent works in one workspace directory (-C, default the current
// directory): the file tools cannot leave it, and commands start in it.
// Its tools are read, write and edit, read_image (for models that take
// images; images are kept content-addressed beside the session logs),
// bash (with background jobs) and persistent shells, session_search and
// session_read over the earlier sessions of the workspace, with oversized
// output spilled to disk, reminders when the model repeats a call or
// keeps failing, and per-tool deadlines.
//
// web_fetch reads public web pages (a loopback or private host only
// with an allow rule such as -allow 'WebFetch(domain:127.0.0.1)'), and
// web_search is offered when BRAVE_SEARCH_API_KEY is set; -web=false
// leaves both out. After write and edit, a language server found on PATH
// (gopls, pyright, typescript-language-server, rust-analyzer; those that
// run workspace code are left out under a sandbox) tells the model which
// problems the change introduced, shown under the edit's diff too;
// -diagnostics=false turns that off.
//
// Project context: AGENTS.md and CLAUDE.md from the workspace root down
// to the working directory (and ~/.config/harness/AGENTS.md,
// ~/.claude/CLAUDE.md) follow the system prompt; Agent Skills (SKILL.md
// folders in .harness/skills, .claude/skills, .agents/skills and their
// user-level twins) are listed by name and loaded with the skill tool;
// the command hooks of .harness/settings.json, .claude/settings.json,
// .claude/settings.local.json and ~/.claude/settings.json run on the
// loop's events, under the commands' sandbox. One banner line says what
// was found, /context lists it, and -no-instructions, -no-skills and
// -no-hooks turn each off.
//
// As the context fills, superseded file reads are pruned and older
// history is compacted into a summary. -context says when: cost (the
// default) minimizes dollars at the model's prices (DeepSeek's are
// built in; a cache hit costs 1/50 of a miss, so a cut that breaks the
// cached prefix must save more than it re-sends), cutting only when that
// pays or when the window forces it; thresholds prunes above half the
// window and compacts above 0.8 of it, whatever the cache; off never
// cuts. A model without known prices is handled by thresholds.
//
// MCP servers: the servers of the workspace's .mcp.json (or of -mcp FILE,
// in the same format: {"mcpServers": {"name": {"command": ..., "args":
// [...], "env": {...}}, "web": {"type": "http", "url": ..., "headers":
// {...}}}}) are connected at start and listed with their tool counts; their
// tools are offered as mcp__<server>__<tool> and shown as generic cards.
// Stdio servers run in the workspace. What happens to a server later (it
// stops, connects again, fails, its tools change or one is skipped) is
// shown as one dim status line. A broken workspace file is reported and
// skipped; a broken -mcp file is a usage error.
//
// Sessions are logged as JSON Lines in -sessions (default
// $XDG_DATA_HOME/harness/sessions, else ~/.local/share/harness/sessions;
// on macOS ~/Library/Application Support/harness/sessions, on Windows
// %LocalAppData%\harness\sessions), so any session can be resumed with
// -resume id, or the newest one of the workspace with -continue.
// Oversized tool output is kept under the same directory, in spill/, for
// 30 days; images in attachments/.
//
// Undo: the workspace files are recorded at every turn and before every
// call that may change them (-no-checkpoints turns this off); the
// contents go to attachments/, and .gitignore'd paths and .git are left
// out. /undo takes the last turn back: the files it changed, whatever
// tool changed them, and the conversation, which goes on in a fork of
// the session (the original stays, resumable). /rewind lists the turns
// and goes back to before the one picked (/rewind N, /rewind last,
// /rewind @SEQ for a checkpoint within a turn; a last word files or
// conversation takes back only those), after showing what it would do
// and asking. A file changed outside the agent since then (by you,
// between turns) is a conflict: coder asks before overwriting it, and
// keeps its content in a checkpoint first. Headless, -rewind N|last|@SEQ
// with -continue or -resume ID does the same (-rewind-scope, -force),
// and -dry-run only prints what it would do. -fork ID[@SEQ] goes on in
// a copy of a session, -list lists the sessions of the workspace (id,
// time, title), and -continue recaps the last exchange.
//
// With -json, stdout carries JSON lines only: first {"type":"session",
// "session_id":..., "cwd":..., "model":..., "resumed":...}, then every
// event of every turn as agent.MarshalEvent encodes it (a turn_end line
// carries "error": {"code", "message"} when the turn failed). Messages
// for people go to stderr.
//
// With a prompt (-p, or the arguments after the flags) coder runs one turn
// and exits; without one it reads prompts from stdin, one line each (end
// a line with \ to continue it on the next), until end of input, /exit or
// Ctrl-C at the prompt. Ctrl-C during a turn cancels the turn, which stays
// in the log and can be resumed; a second Ctrl-C exits.
//
// The prompt loop has its own commands, which never reach the model:
// /clear (a new session), /compact (summarize the older history now),
// /context, /cost, /model [NAME] (show or switch the model), /undo (take
// back the last turn: its file changes, bash's included, and the
// conversation, which goes on in a fork), /rewind [N] (pick a turn, or
// go back to before turn N after showing what changes; see Undo above),
// /usage, /help and /exit; any other /word is answered "unknown command".
//
// On a terminal the prompt line is edited in place (arrow keys, Home and
// End, Ctrl-A/E/U/K/W) and Up and Down recall earlier prompts, kept per
// workspace under the sessions directory, in history/. The width follows
// the terminal's, also when it is resized.
//
// While a turn runs, a line typed at the terminal is shown below the
// output, in place of the spinner. Enter steers it into the turn: the
// model reads it after the current tool calls, before its next step.
// Tab queues it instead, to run as its own turn once this one completes.
// The screen says which happened (a line steered just as the turn ends
// is queued). Queued lines left after a turn that did not complete wait
// until Enter at an empty prompt runs them; a line left unfinished comes
// back as the next prompt's text.
//
// The model can ask the user questions (the ask_user tool): at a
// terminal each is asked at the prompt, its choices numbered, and a
// number (several, 1,3, where more than one may be picked) or free text
// answers it. It keeps a plan (the todo tool), shown at a terminal as a
// short checklist below the output that changes in place, and printed
// once when the turn ends. The job tools (job_list, job_output,
// job_stop) follow the work bash and task run in the background.
//
// -max-cost USD and -max-tokens N cap what the session's model calls
// spend (all its turns; tokens count input and output; cost is priced
// for the models coder knows prices of). Reaching one pauses the turn:
// at a terminal coder asks whether to go on and with which limit, and the
// same turn goes on. Without colour (piped, or NO_COLOR set) each
// line of reasoning starts with "┆ "; -reasoning=false hides it.
//
// Every tool call is decided before it runs. -permission-mode default
// asks before anything with side effects that no rule allows,
// accept-edits also lets file changes inside the workspace through, plan
// is read-only, and bypass asks nothing (deny rules still apply). Rules
// in Claude Code's syntax come from .harness/settings.json in the
// workspace ({"permissions": {"allow": [], "ask": [], "deny": []}}) and
// from -allow RULE and -deny RULE (repeatable). At a terminal coder asks
// inline: [y]es, [n]o, [a]lways with the suggested rule, or typed
// feedback the model reads. Without a terminal (or with -json) a call
// that needs an answer pauses the turn: coder lists the waiting calls
// (id, tool, preview) and exits 3; -continue -approve all|ID,... and
// -reject all|ID,... [-feedback text] answer them and finish that turn.
// Questions and budgets pause the same way: coder prints the questions
// and the command that answers them, -continue -answer TEXT (one per
// question, in order; a choice's number picks it), or for a budget the
// command that goes on with a higher -max-cost or -max-tokens. The
// printed commands keep the flags the run was given.
// Commands run under bubblewrap (-sandbox read-only, workspace-write or
// full-access; workspace-write by default where bubblewrap is installed,
// and unconfined with a warning where it is not; where it cannot make
// its namespaces, commands fail and say to choose full access).
//
// # Reading the source
//
// main.go is the embedding: the flags, the wiring of agent.New (model,
// stores, tools, hooks, permissions, MCP servers) and the loop that runs
// a turn and shows its events. The files beside it build one part each
// (flags.go, wire.go, tools.go, web.go, project.go, commands.go,
// rewind.go, sessions.go, approval.go, workspace.go, permissions.go,
// mcp.go, providers.go; supervise.go for steering, questions and
// budgets). The terminal user interface, which a host with
// its own front end would replace, is in internal/ui.
//
// Memory: unless GOGC or GOMEMLIMIT is set, coder lets the heap grow to
// five times what is live before collecting (GOGC=400) and bounds it at
// 1 GiB (GOMEMLIMIT), past which it collects sooner: a turn allocates a
// few megabytes, which the default target would collect for nothing.
//
// Exit status: 0 when the turn completed, 1 when the model or the loop
// failed (the error's message and code are printed) or the turn hit the
// step limit, 2 on usage errors (bad flags, no model configured, an
// unknown session), 3 when the turn waits for approval, answers or a
// higher budget, 130 when a turn
// was cancelled. In the prompt loop it
// is the status of the last turn.
package main
