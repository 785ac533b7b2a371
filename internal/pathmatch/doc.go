// Package pathmatch matches slash-separated paths against glob patterns
// and gitignore rules, for the search tools.
//
// A [Glob] is a `**`-style pattern: `*` and `?` never cross a `/`, `[...]`
// is a character class (`[!...]` or `[^...]` negated, POSIX classes such
// as `[[:digit:]]`), `\` escapes the next character, a `**` segment
// matches any number of directories, and `{a,b}` alternatives are
// expanded. [Rules] hold the patterns of one gitignore-style file
// (.gitignore, .ignore, .git/info/exclude) with git's semantics:
// comments, negation, anchoring by a leading or middle slash, directory
// rules by a trailing slash, escaped characters and trailing spaces; the
// last matching rule decides. [Stack] layers the files of nested
// directories, closer ones first.
//
// It imports only the standard library.
package pathmatch
