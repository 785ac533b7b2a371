package skills

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/permission"
)

// ToolName is the model-facing name of the skill tool.
const ToolName = "skill"

type toolArgs struct {
	Name string `json:"name" jsonschema:"The name of the skill to load, as the list of skills gives it."`
}

// Tool returns the skill tool: skill(name) loads a skill's instructions
// (the body of its SKILL.md) and says where its files are. The model is
// told of the skills by the list the Catalog puts in the prompt, and
// loads one only when a task needs it.
//
// Loading a skill whose allowed-tools lists tools narrows the rest of
// the turn to them (and the skill tool): every other call is denied
// with a reason naming the skill, whatever the permission policy
// allows, and nothing the policy denies becomes allowed. The narrowing
// is recorded in the session's log (permission.NarrowRecord), so that a
// paused turn resumed elsewhere keeps it; it ends with the turn. A
// permission rule Skill(name) (or Skill(prefix-*)) allows, asks about
// or denies loading a skill, as any rule does a call.
func (c *Catalog) Tool() tools.Tool {
	spec := tools.Spec{
		Name: ToolName,
		Description: "Load a skill: the full instructions of one of the skills listed in the system prompt, and the folder of its files. " +
			"Load a skill before you start a task its description matches, then follow it. " +
			"A skill may limit the tools you can use for the rest of the turn; the result says so.",
		ConcurrencySafe: true,
		Family:          tools.FamilyLocal,
		NeverSpill:      true,
	}
	return tools.Define(spec, c.load)
}

func (c *Catalog) load(ctx context.Context, call *tools.Call, in toolArgs) (*harness.ToolResult, error) {
	var found Found
	if call.Env != nil {
		found = c.Find(ctx, call.Env.FS, call.Env.Cwd)
	} else {
		found = c.Find(ctx, nil, "")
	}
	sk := found.Lookup(strings.TrimSpace(in.Name))
	if sk == nil {
		var names []string
		for _, s := range found.Skills {
			names = append(names, s.Name)
		}
		sort.Strings(names)
		list := "there are none"
		if len(names) > 0 {
			list = "the skills are " + strings.Join(names, ", ")
		}
		return nil, &harness.Error{Code: harness.CodeNotFound, Message: fmt.Sprintf("There is no skill named %q: %s.", in.Name, list)}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Loaded the skill %s (from %s).\n", sk.Name, sk.Dir)
	fmt.Fprintf(&b, "Its files are in %s: paths in it are relative to that folder; read them with read, as %s/<path>.\n", sk.Base(), sk.Base())
	if len(sk.AllowedTools) > 0 {
		if call.Env == nil || call.Env.Record == nil {
			return nil, &harness.Error{Code: harness.CodeDenied, Message: fmt.Sprintf("The skill %s limits the tools a turn may use, and this session cannot record that limit, so it was not loaded.", sk.Name)}
		}
		n := permission.Narrowing{By: "the skill " + sk.Name, Allow: sk.AllowedTools, Exempt: []string{ToolName}}
		if err := call.Env.Record(ctx, call, permission.NarrowRecord, n); err != nil {
			return nil, &harness.Error{Code: harness.CodeDenied, Message: fmt.Sprintf("The skill %s limits the tools a turn may use, and recording that limit failed (%v), so it was not loaded.", sk.Name, err)}
		}
		fmt.Fprintf(&b, "Until this turn ends, the only tools you can use are these (and skill): %s.\n", strings.Join(sk.AllowedTools, ", "))
	}
	b.WriteString("\n")
	b.WriteString(sk.Body)
	return harness.TextResult(b.String()), nil
}
