// Package effect is the side-effecting tool of the example's tests:
// record_effect appends one line, "<session id> <call id>", to a file,
// so that counting a call's lines tells whether it ran more than once.
package effect

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
)

type args struct {
	SleepMS int `json:"sleep_ms,omitempty" jsonschema:"milliseconds to wait, half before and half after the effect"`
}

// Tool returns record_effect, writing to path.
func Tool(path string) tools.Tool { return Named("record_effect", path) }

// Named returns the same tool under another name.
func Named(name, path string) tools.Tool {
	spec := tools.Spec{
		Name:        name,
		Description: "Records that this call ran by appending a line to the effects file.",
		SideEffects: true,
		Family:      tools.FamilyLocal,
	}
	return tools.Define(spec, func(ctx context.Context, call *tools.Call, in args) (*harness.ToolResult, error) {
		half := time.Duration(in.SleepMS) * time.Millisecond / 2
		if err := sleep(ctx, half); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		_, err = fmt.Fprintf(f, "%s %s\n", call.Env.SessionID, call.ID)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, err
		}
		if err := sleep(ctx, half); err != nil {
			return nil, err
		}
		return harness.TextResult("recorded effect " + call.ID), nil
	})
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
