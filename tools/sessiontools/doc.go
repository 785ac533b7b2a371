// Package sessiontools gives the model two tools over the session store:
// session_search, which finds text (literal or a regular expression) in
// earlier sessions, and session_read, which shows the events around a
// match.
//
// # Workspace
//
// Both tools are confined to the calling session's workspace: sessions
// whose working directory is the caller's (tools.Env.Cwd) or a directory
// below it. Sessions of other workspaces can hold other projects' code
// and credentials; a host reaches them only by setting
// Config.AllWorkspaces. session_read refuses a session of another
// workspace with an error result ([CodeOutsideWorkspace]) that says so.
// session_search leaves out the calling session, which is already in the
// model's context.
//
// # Results
//
// Search results list each matching event, newest session first: its
// session id, event number (seq), type, and a snippet of the text as the
// model saw it. session_read shows the event at seq in full and its
// neighbours summarized (long texts, tool arguments and tool output cut).
//
// Results are plain text. A large result is left to the spill middleware
// like any other tool's.
//
// # Stores
//
// The tools hold no state and are safe for concurrent use. They work over
// any session.Store, and use the store's own search (search.Searcher)
// when it has one, as the JSONL and Memory stores do.
//
// # Path policy
//
// Under a path policy (fs.PolicyOf the session's file system, which the
// loop restricts by its permission rules), earlier sessions obey it too.
// A session whose working directory the policy hides is not there for
// either tool. An event that shows a hidden path (a tool result whose
// file accesses, locations or diff name one, and the call that asked for
// it) is left out of searches and withheld from session_read.
//
// What a shell command printed is not tied to a path and is not withheld;
// the sandbox keeps hidden files from commands in the first place.
//
// It imports harness, fs (the path policy), session (the logs it reads),
// tools and internal helpers; nothing of agent.
package sessiontools
