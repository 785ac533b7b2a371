// Package skills gives an agent Agent Skills: folders of instructions,
// scripts and references for particular tasks, each described by a
// SKILL.md, in the format agentskills.io specifies and Claude Code
// reads.
//
// A SKILL.md starts with YAML front matter (name, description, and
// optionally license, compatibility, metadata and allowed-tools),
// followed by the Markdown instructions. [Parse] reads one and says
// what is wrong with one that does not make a skill: no front matter,
// YAML that does not parse, a missing name or description, a name that
// is not its folder's or breaks the format's rules (lowercase letters,
// digits and single hyphens, at most 64), a description over 1024
// characters, a file over the size cap.
//
// # Where skills are found
//
// A [Catalog] finds skills in the user's folders (Home/.config/harness/
// skills, Home/.claude/skills, Home/.agents/skills, when the host gives
// the home directory), in the workspace (.harness/skills, .claude/skills
// and .agents/skills at the workspace root and at the working
// directory, read through the session's file system, so the permission
// policy's path rules apply) and among the skills a host ships
// (Config.Embedded: an fs.FS such as an embed.FS). Of two skills with
// one name, the first in that order is used and the other is reported
// as a problem.
//
// # Progressive disclosure
//
// The model sees a skill in three steps, each only when it needs the
// next. The catalog is an agent.ContextSource: give it to
// agent.WithContext, and the stable prefix of every request lists each
// skill's name and description, nothing more. The skill tool
// ([Catalog.Tool], model-facing name skill, argument name) returns a
// skill's instructions and the folder of its files. The files the
// instructions name are read with the read tool: a workspace skill's
// where they are, and a user or embedded skill's through a
// skill://<name>/<path> locator, which [Catalog.Middleware] serves
// (put it in agent.Hooks.Tools) with the read tool's windowing and
// output, read-only and confined to the skill's folder.
//
//	catalog, err := skills.New(skills.Config{Home: home})
//	loop, err := agent.New(
//		agent.WithModel(m),
//		agent.WithTools(append(files.Tools(files.Config{}), catalog.Tool())...),
//		agent.WithContext(catalog),
//		agent.WithHooks(agent.Hooks{Tools: []tools.Middleware{catalog.Middleware()}}),
//	)
//
// # allowed-tools
//
// In this library allowed-tools narrows: once a skill that lists tools
// is loaded, the rest of the turn may call only those tools (and the
// skill tool), as rules in Claude Code's syntax (Read, Grep,
// Bash(git status:*), mcp__github), whatever the permission policy
// allows; it never allows a call the policy denies or asks about. The
// narrowing is recorded in the session's log and applied by the loop's
// permission step (see permission.Narrowing), so a paused turn resumed
// in another process keeps it; it ends with the turn. Whether a skill
// may be loaded at all is a permission rule like any other:
// Skill(name), Skill(prefix-*), or Skill for every skill.
//
// It imports harness, agent (for the ContextSource contract), fs,
// session, tools, tools/permission, internal helpers and
// go.yaml.in/yaml/v3.
package skills
