// Package codesearch provides the model-facing search tools glob and
// grep, over the session's fs.FileSystem: they work the same on fslocal
// and on the in-memory fs/fstest.MemFS, stay confined to the file
// system, and need no shell.
//
//	loop, err := agent.New(
//		agent.WithStores(agent.Stores{Files: fsys}),
//		agent.WithTools(codesearch.Tools(codesearch.Config{})...),
//		...
//	)
//
// # glob
//
// glob(pattern, path?, limit?) lists the files whose paths below path
// match a `**`-style pattern, most recently modified first.
//
// # grep
//
// grep(pattern, path?, glob?, type?, output_mode?, case_insensitive?,
// literal?, context?, before_context?, after_context?, multiline?,
// head_limit?) searches file contents for a regular expression, with
// ripgrep's conventions. output_mode is files_with_matches (the
// default), content or count. Content shows `N:text` lines under each
// path, context as `N-text`, and groups separated by `--`. type names
// ripgrep's file types for the common languages.
//
// Every result is capped (100 unless asked, at most 1000), reports the
// totals, and says how to narrow or continue.
//
// # What is searched
//
// Both tools walk the tree as ripgrep does by default:
//
//   - .gitignore, .ignore and .git/info/exclude rules are respected,
//     nested ones and those of the directories above the search path;
//   - hidden files and directories, and .git, are skipped;
//   - symbolic links are never followed, so a link cannot lead a search
//     out of the root or into a loop;
//   - devices, pipes and sockets are never opened;
//   - a file holding a NUL byte is binary and skipped.
//
// A path named explicitly (path, or the leading directories of a glob
// pattern) is searched even when hidden or ignored. A host changes these
// defaults with Config (Config.Hidden, Config.NoIgnore).
//
// # Cost
//
// grep streams each file through a fixed buffer, to the size the file
// had when it was opened, so memory stays bounded whatever the tree's
// size; multiline searches read files of up to 8 MiB whole. It searches
// several files at once (Config.Workers): each worker lists directories
// and searches the files it finds, and shares a large directory's files
// with the others in batches. A literal prefilter (internal/textmatch)
// finds candidate lines before the regular expression runs, case
// folded without lowering the text.
//
// Both tools are safe for concurrent use, have no side effects, belong
// to the local deadline family, honour ctx promptly, and render their
// results as locations.
//
// It imports harness, fs, tools and internal helpers; nothing of session,
// spill or agent.
package codesearch
