package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-harness/harness/tools"
)

// output is what a hook may print on its standard output, as JSON, when
// it exits with 0.
type output struct {
	Continue       *bool  `json:"continue"`
	StopReason     string `json:"stopReason"`
	SuppressOutput bool   `json:"suppressOutput"`
	SystemMessage  string `json:"systemMessage"`
	// Decision is "block" (or, for PreToolUse, the older "approve").
	Decision string `json:"decision"`
	Reason   string `json:"reason"`

	HookSpecificOutput *struct {
		HookEventName            string          `json:"hookEventName"`
		PermissionDecision       string          `json:"permissionDecision"`
		PermissionDecisionReason string          `json:"permissionDecisionReason"`
		UpdatedInput             json.RawMessage `json:"updatedInput"`
		AdditionalContext        string          `json:"additionalContext"`
		// Decision is PermissionRequest's.
		Decision *struct {
			Behavior     string          `json:"behavior"`
			UpdatedInput json.RawMessage `json:"updatedInput"`
			Message      string          `json:"message"`
			Interrupt    bool            `json:"interrupt"`
		} `json:"decision"`
	} `json:"hookSpecificOutput"`
}

// parseOutput reads a hook's standard output: JSON when it is a JSON
// object. looksJSON reports output that starts as an object, which a
// failed parse then makes an error.
func parseOutput(stdout string) (out *output, looksJSON bool, err error) {
	s := strings.TrimSpace(stdout)
	if !strings.HasPrefix(s, "{") {
		return nil, false, nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	var o output
	if err := dec.Decode(&o); err != nil {
		return nil, true, fmt.Errorf("its output is not valid JSON: %v", err)
	}
	if dec.More() {
		return nil, true, fmt.Errorf("its output holds more than one JSON value")
	}
	return &o, true, nil
}

// aliases are the arguments of this module's tools that Claude Code's
// tools name otherwise: tool_input carries both names, and an
// updatedInput may use either.
var aliases = map[string][][2]string{
	"bash":       {{"timeout_ms", "timeout"}},
	"shell_send": {{"wait_ms", "timeout"}},
	"grep":       {{"case_insensitive", "-i"}, {"context", "-C"}, {"before_context", "-B"}, {"after_context", "-A"}},
	"task":       {{"agent", "subagent_type"}},
}

// toolInput is a call's arguments as a hook written for Claude Code
// reads them: the arguments, file_path made absolute (Claude Code's
// paths are), and the Claude Code names of arguments named otherwise
// here.
func toolInput(call *tools.Call) map[string]any {
	in := map[string]any{}
	_ = json.Unmarshal([]byte(call.Arguments), &in)
	if p, ok := in["file_path"].(string); ok && p != "" && !strings.Contains(p, "://") && call.Env != nil {
		in["file_path"] = call.Env.Resolve(p)
	}
	for _, a := range aliases[call.Name] {
		if v, ok := in[a[0]]; ok {
			if _, taken := in[a[1]]; !taken {
				in[a[1]] = v
			}
		}
	}
	return in
}

// fromClaude turns an updatedInput back into this tool's arguments:
// Claude Code's names become the tool's, and the copies toolInput added
// go.
func fromClaude(tool string, updated json.RawMessage) (json.RawMessage, error) {
	var in map[string]any
	dec := json.NewDecoder(bytes.NewReader(updated))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil || in == nil {
		return nil, fmt.Errorf("updatedInput is not a JSON object")
	}
	for _, a := range aliases[tool] {
		v, ok := in[a[1]]
		if !ok {
			continue
		}
		if _, has := in[a[0]]; !has {
			in[a[0]] = v
		}
		delete(in, a[1])
	}
	return json.Marshal(in)
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
