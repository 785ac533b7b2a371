// Package search finds literal text or a regular expression in the
// sessions of a workspace, as the model saw the text: JSON escapes never
// hide a match.
//
// There is no index. A store is searched in one of three ways:
//
//   - For a store of session.NewJSONL, [Search] scans the log files in
//     parallel. It reads each header first, looks for the query in the
//     raw bytes and decodes only what may match.
//   - A store that searches itself (a database with an index) implements
//     [Searcher].
//   - Any other store is searched by loading each session of the
//     workspace.
//
// Other workspaces are searched only when the caller asks for it
// (Options.AllWorkspaces): they can hold other projects' code and
// secrets.
//
// It imports session, harness and internal helpers; never tools, agent
// or spill, and session does not import it.
package search
