// Package checkpoint records the files of a workspace directory at
// points of an agent session and takes them back: the undo of package
// agent's Session.Rewind, which catches what any tool changed (bash, a
// persistent shell, an MCP server) because it compares trees rather than
// trusting tools to report their changes.
//
// A [Workspace] takes checkpoints of one directory. [Workspace.Take]
// walks it and returns a [Snapshot]: a [Tree] of entries (files,
// directories, symbolic links; never followed, never left) with their
// permissions, sizes and content digests, stored as a manifest in a
// [Store], which is an attachment store (tools.AttachmentStore; the
// stores of session/attachments, on disk or S3), together with the
// files' contents. So checkpoints travel with sessions kept in
// PostgreSQL and on S3, and contents shared by many checkpoints are
// stored once. The contents of small files (up to 64 KiB) are stored
// together, in packs of up to 8 MiB, so the first checkpoint of a tree
// of many small files writes a few objects rather than one per file; a
// content the previous checkpoint kept (a moved file, a revert) is not
// stored again.
//
// # Cost
//
// The previous checkpoint's tree is a stat cache, as git's index is:
// a file whose size, modification and change times, inode, device and
// permissions are unchanged keeps its digest without being read. An
// entry modified within two seconds of the scan that recorded it is
// read again by the next scan, since a change within the same timestamp
// tick could hide (git's racy-git rule). A manifest is stored in
// chunks whose boundaries depend on the paths alone, so one changed
// file stores its content, one chunk and a small root (a tree of one
// chunk, a few hundred entries, is stored as that chunk alone: two
// objects), and a checkpoint of an unchanged tree stores nothing and
// costs one lstat per entry.
// [Workspace.Prime] seeds the cache from a stored checkpoint, so a
// session resumed in another process does not hash the tree again.
//
// # Durability
//
// A checkpoint Take returns is durable: its objects survive a power
// loss. With a [Stager] store (the file store of session/attachments),
// Take writes every object of the checkpoint first and syncs them
// together, one sync per file and one of the directory, rather than
// each object on its own. [Workspace.Stage] writes a checkpoint
// without syncing it, leaving that to the next [Workspace.Sync] or
// Take: its objects can be read at once and survive the program
// stopping, but not a power loss before then. An agent stages the
// checkpoints within a turn and syncs them once before it syncs its
// log, the moment its log promises the turn survives.
//
// # What is recorded
//
// .git (at any depth) and what the .gitignore files of the workspace
// and of the enclosing repository (and its .git/info/exclude) ignore are
// left out, as are Config.Ignore patterns and Config.Exclude paths, and
// pipes, sockets and devices: none of them is ever read, stored or
// touched by a rewind. Files larger than Config.MaxFileBytes (binary
// files larger than Config.MaxBinaryBytes) are recorded by digest and
// size only, as are new files past a checkpoint's budget
// (Config.MaxCheckpointBytes; the next checkpoint tries again); a rewind
// reports them instead of restoring them.
//
// # Rewinding
//
// [Workspace.Plan] compares a checkpoint's tree with the workspace now
// and says, path by path, what a rewind does ([Change]: modified,
// created, deleted since, with line counts), and [Workspace.Apply]
// does it, writing files atomically through the workspace directory
// only. A plan is the dry run: Apply carries out the same changes,
// except for paths that changed in between, which it leaves alone.
//
// Who changed a path decides what a rewind does with it.
// [Workspace.Attribute] reads the session's checkpoints since the one
// rewound to (session.Checkpoint events, [Points]): a change between two
// checkpoints taken within a turn or a rewind is the agent's, a change
// between the end of one and the start of the next (or since the last)
// happened outside the agent, by the user or another program. A rewind
// undoes the agent's changes, leaves paths changed only outside the
// agent alone, and refuses, with an error matching
// harness.CodeConflict, to overwrite a path both changed, unless forced;
// forcing overwrites only what the checkpoint taken just before kept a
// copy of. Paths a checkpoint's .gitignore ignored are never deleted as
// new, and paths ignored now are never overwritten.
//
// It imports harness, session (the checkpoint event), the module's
// internal helpers and golang.org/x/sys; nothing of tools, agent or
// spill.
package checkpoint
