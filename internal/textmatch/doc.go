// Package textmatch finds lines that match a literal or a regular
// expression in byte buffers, fast: a literal prefilter (the literals
// one of which every match must contain, found with a rare-byte scan,
// case-insensitively where the pattern folds case) picks candidate
// lines, and the regexp runs only on those. It is the matcher engine of
// the grep tool and of session search, which uses its literal analysis
// (RequiredLiterals) and its Finder on JSON-encoded log lines.
//
// It imports only the standard library and golang.org/x/sys/cpu.
package textmatch
