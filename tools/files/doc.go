// Package files provides the model-facing file tools: read, write and edit.
//
//	loop, err := agent.New(
//		agent.WithStores(agent.Stores{Files: fsys}),
//		agent.WithTools(files.Read(files.Config{}), files.Write(files.Config{}), files.Edit(files.Config{})),
//		...
//	)
//
// # read
//
// read(file_path, offset?, limit?) shows a window of a UTF-8 text file as
// numbered lines ("N: text"), with one footer that says whether the end
// of the file was reached and which offset continues.
//
// Windows are bounded in lines, characters per line and bytes, so memory
// stays bounded whatever the file's size. Binary and non-UTF-8 files are
// refused.
//
// A path starting with tools.OutputScheme is read from the session's
// output store with the same windowing. A spill preview's "use read with
// offset/limit" hint so works even when the file system is confined to
// the workspace.
//
// # write and edit
//
// write(file_path, content) creates a file, or replaces one the session
// has read. edit(file_path, old_string, new_string, replace_all?)
// replaces literal text, which must be unique unless replace_all is set.
// CRLF line endings and a UTF-8 byte order mark are kept.
//
// Both go through the session's observation ledger (tools.Env.Ledger, an
// fs.Ledger kept in tools.State). A file the session has not seen is
// never overwritten or edited. A file that changed since it was seen is
// refused as stale before any text is matched, and the message tells the
// model to read it again. A successful change records the new version, so
// write, edit, edit needs no read in between.
//
// # Results
//
// Every error result carries the fs error code (not_found, stale_version,
// edit_not_found, ...) and a message that says what to do next.
//
// Results record file access (harness.FileAccess) for history pruning,
// and carry a render intent: locations for read, a diff with hunks for
// write and edit.
//
// It imports harness, fs, tools and internal helpers; nothing of session,
// spill or agent.
package files
