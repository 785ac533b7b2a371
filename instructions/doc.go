// Package instructions gives an agent the instruction files of the
// project it works in: AGENTS.md (the convention most coding agents
// share) and CLAUDE.md (Claude Code's), and the user's own files.
//
// A [Loader] is an agent.ContextSource: give it to agent.WithContext,
// and the loop puts the files in the stable prefix of every request,
// after the system prompt, logs them with their digests
// (session.ContextLoaded), notices when one changes between turns, and
// rebuilds requests from the log when a session is resumed or replayed.
//
//	loop, err := agent.New(
//		agent.WithModel(m),
//		agent.WithStores(agent.Stores{Files: workspace}),
//		agent.WithContext(instructions.New(instructions.Config{Home: home})),
//	)
//
// # Which files, in which order
//
// The model reads, in this order: the user-level files
// (Home/.config/harness/AGENTS.md, then Home/.claude/CLAUDE.md, or
// Config.UserFiles), then the project's, from the workspace root down to
// the working directory, and in each directory AGENTS.md before
// CLAUDE.md (Config.Names). General comes before specific, so that when
// two files disagree the one read later, nearer to where the agent
// works, is the one the model is told refines the other. AGENTS.md
// comes first in a directory because it is the file every agent reads
// and CLAUDE.md is, in practice, the vendor-specific addition to it
// (often a single line importing AGENTS.md, which then is not repeated).
// A file that does not exist is skipped; one that cannot be read (not a
// regular file, over the size cap, denied by the permission policy's
// path rules) is named with a notice in its place.
//
// Files in directories below the working directory are announced when
// the agent reaches them: after a step whose calls read or wrote a file
// below the working directory, the files of the directories between are
// logged and reach the model once, as a message after the step's
// results (see agent.NestedContext). They are not sent again; a
// compaction that summarizes an announcement forgets it, and the file
// is announced again when the agent returns there.
//
// Workspace files are read through the session's file system (so the
// permission policy's path rules apply, and only regular files are
// read, up to Config.MaxFileBytes). User-level files are read from the
// OS, regular files only, and never unless the host names the home
// directory (Config.Home) or the files (Config.UserFiles).
//
// # Imports
//
// A line may import a file with @path, as Claude Code's memory files
// do: @docs/style.md next to the importing file, @/abs/path, or
// @~/.claude/mine.md below the home directory. The imported file is
// inserted after the line, framed by a line that names it, and its own
// imports are followed, at most Config.MaxImportDepth (5) deep. An @
// inside a code span or a fenced code block, or before a word that is
// not a path (@someone), is text. A file is included once per load: a
// second import of it, and a cycle, leave a notice instead. Imports are
// confined: from the workspace to the workspace or the user's
// configuration directories (Home/.claude, Home/.config/harness); from a
// user-level file to those directories. A mention of a file that does
// not exist stays as written.
//
// # Size
//
// The files of the prefix together take at most Config.MaxBytes (64 KiB)
// of text, and each announcement of nested files the same: a file past
// the cap is cut at a line, with a notice that says how much was left
// out and to read the file for the rest; the files after it keep only
// their notices.
//
// It imports harness, agent (for the ContextSource contract), fs,
// session and internal helpers.
package instructions
