// Package effect is the side-effecting tool of the example's tests:
// record_effect appends one line, "<session id> <call id>", to a file,
// so that counting a call's lines tells whether it ran more than once.
package effect

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
)

type args struct {
	SleepMS int `json:"sleep_ms,omitempty" jsonschema:"milliseconds to wait, half before and half after the effect"`
}

// Config configures the tool. The zero value of each optional field is
// its default.
type Config struct {
	// Name is the tool's name: record_effect when empty.
	Name string
	// Path is the file the calls append to. Required.
	Path string
	// Gate, when set, holds every call before its effect until it is
	// closed: a test keeps a turn in a tool call until what it checks
	// meanwhile has happened, however slow the machine. A call cancelled
	// while it waits has no effect.
	Gate <-chan struct{}
	// GateFile, when set, is a file holding a step number (a test in
	// another process writes it): a call of a later step of its turn
	// waits before its effect until the file holds its step or a larger
	// one. A missing or unreadable file holds back every call.
	GateFile string
}

// Tool returns record_effect, writing to path.
func Tool(path string) tools.Tool { return New(Config{Path: path}) }

// Named returns the same tool under another name.
func Named(name, path string) tools.Tool { return New(Config{Name: name, Path: path}) }

// gatePoll is how often a call looks for Config.GateFile.
const gatePoll = 20 * time.Millisecond

// New returns the tool cfg describes.
func New(cfg Config) tools.Tool {
	if cfg.Name == "" {
		cfg.Name = "record_effect"
	}
	spec := tools.Spec{
		Name:        cfg.Name,
		Description: "Records that this call ran by appending a line to the effects file.",
		SideEffects: true,
		Family:      tools.FamilyLocal,
	}
	return tools.Define(spec, func(ctx context.Context, call *tools.Call, in args) (*harness.ToolResult, error) {
		half := time.Duration(in.SleepMS) * time.Millisecond / 2
		if err := sleep(ctx, half); err != nil {
			return nil, err
		}
		if err := cfg.wait(ctx, call.Step); err != nil {
			return nil, err
		}
		f, err := os.OpenFile(cfg.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
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

// wait waits for the gates to let a call of step through, or for ctx
// to end.
func (cfg Config) wait(ctx context.Context, step int) error {
	if cfg.Gate != nil {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-cfg.Gate:
		}
	}
	if cfg.GateFile == "" {
		return nil
	}
	for {
		b, err := os.ReadFile(cfg.GateFile)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n >= step {
			return nil
		}
		if err := sleep(ctx, gatePoll); err != nil {
			return err
		}
	}
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
