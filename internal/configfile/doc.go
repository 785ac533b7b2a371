// Package configfile reads the files the library and its programs take
// as configuration (.mcp.json, a coder's .harness/settings.json), and
// opens the other files they read but do not control (session logs,
// stored attachments), without trusting what the path names: [Read]
// accepts only a regular file, of at most [MaxBytes], and never blocks
// on a named pipe or opens a device, so a path that is a symbolic link
// to /dev/zero, a FIFO or a directory fails at once with an error that
// names the file; [Open] and [OpenFile] make the same checks for a
// caller that reads in its own bounded way. [CheckJSON] describes
// malformed JSON by where it went wrong, and a text that ends early as
// "incomplete JSON at byte N".
//
// It imports only the root package (for error codes) and the standard
// library.
package configfile
