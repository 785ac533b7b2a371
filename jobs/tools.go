package jobs

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
)

// Bounds of the job tools.
const (
	// DefaultReadLimit is how many bytes job_output returns when the
	// call names no limit; MaxReadLimit is the most it returns.
	DefaultReadLimit = 16 << 10
	MaxReadLimit     = 64 << 10
	// MaxWait is the longest job_output waits for a job to end, and
	// job_stop for a stopped job to end.
	MaxWait = 10 * time.Minute
)

// Tools returns the model's tools over a session's jobs of every kind:
// job_list, job_output and job_stop. They take the registry from the
// call's session state (FromState), so they see the jobs that bash,
// task and host tools start.
func Tools() []tools.Tool {
	return []tools.Tool{listTool(), outputTool(), stopTool()}
}

type listArgs struct{}

type outputArgs struct {
	JobID  string `json:"job_id" jsonschema:"The id of the job, such as job3."`
	Offset *int64 `json:"offset,omitempty" jsonschema:"Byte offset in the job's output to read from; negative counts back from the end. Default: the last bytes, up to limit."`
	Limit  *int   `json:"limit,omitempty" jsonschema:"Most bytes to return (default 16384, at most 65536)."`
	WaitMS *int   `json:"wait_ms,omitempty" jsonschema:"Milliseconds to wait for the job to end before reading (default 0, at most 600000)."`
}

type stopArgs struct {
	JobID string `json:"job_id" jsonschema:"The id of the job to stop."`
}

func registry(call *tools.Call) (*Registry, error) {
	if call == nil || call.Env == nil {
		return FromState(nil, Config{})
	}
	return FromState(call.Env.State, Config{})
}

func listTool() tools.Tool {
	spec := tools.Spec{Name: "job_list", Family: tools.FamilyLocal, ConcurrencySafe: true,
		Description: "List the session's background jobs of every kind (commands started by bash with run_in_background, background sub-agents, others): " +
			"id, kind, status (running, stopping, completed, killed, failed, lost), how long it ran, how much it printed, and what it is. " +
			"You are told when a job ends, so there is no need to poll."}
	return tools.Define(spec, func(ctx context.Context, call *tools.Call, _ listArgs) (*harness.ToolResult, error) {
		r, err := registry(call)
		if err != nil {
			return nil, err
		}
		list := r.List()
		if len(list) == 0 {
			return harness.TextResult("There are no background jobs."), nil
		}
		now := r.cfg.Now()
		var b strings.Builder
		for _, i := range list {
			b.WriteString(i.line(now))
			b.WriteByte('\n')
		}
		return harness.TextResult(strings.TrimSuffix(b.String(), "\n")), nil
	})
}

// line describes a job in one line for the model.
func (i Info) line(now time.Time) string {
	end := i.Ended
	if end.IsZero() {
		end = now
	}
	s := fmt.Sprintf("%s  %s  %s", i.ID, i.Kind, i.Status)
	if i.ExitCode != nil {
		s += fmt.Sprintf(" (exit %d)", *i.ExitCode)
	}
	s += fmt.Sprintf("  %s  %d bytes of output", end.Sub(i.Started).Round(100*time.Millisecond), i.Output)
	if i.Title != "" {
		s += "  " + oneLine(i.Title, 120)
	}
	return s
}

func outputTool() tools.Tool {
	spec := tools.Spec{Name: "job_output", Family: tools.FamilyLocal, Deadline: MaxWait + 30*time.Second,
		Description: "Read what a background job of any kind printed, by byte offset: the result says the offsets it covers and the offset to read from next. " +
			"Without offset it returns the last bytes. Only the last part of a long output is kept here; a job's own tool (bash_output for bash jobs) may name a saved copy of the whole. " +
			"With wait_ms it first waits for the job to end. The result ends with the job's status, and a sub-agent's final answer once it has one."}
	return tools.Define(spec, func(ctx context.Context, call *tools.Call, in outputArgs) (*harness.ToolResult, error) {
		r, err := registry(call)
		if err != nil {
			return nil, err
		}
		j, err := r.Get(in.JobID)
		if err != nil {
			return nil, err
		}
		limit := DefaultReadLimit
		if in.Limit != nil {
			if *in.Limit <= 0 {
				return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: "limit must be positive. Leave it out for the default."}
			}
			limit = min(*in.Limit, MaxReadLimit)
		}
		if in.WaitMS != nil {
			if *in.WaitMS < 0 {
				return nil, &harness.Error{Code: harness.CodeInvalidArguments, Message: "wait_ms must not be negative. Leave it out to read at once."}
			}
			wctx, cancel := context.WithTimeout(ctx, min(time.Duration(*in.WaitMS)*time.Millisecond, MaxWait))
			select {
			case <-j.Done():
			case <-wctx.Done():
			}
			cancel()
		}
		offset := int64(-limit)
		if in.Offset != nil {
			offset = *in.Offset
		}
		w := j.Read(offset, limit)
		info := j.Info()
		var b strings.Builder
		switch {
		case w.Total == 0:
			b.WriteString("(no output)\n")
		case len(w.Data) == 0:
			fmt.Fprintf(&b, "(nothing at offset %d; the output has %d bytes)\n", w.Offset, w.Total)
		default:
			if w.Skipped > 0 {
				fmt.Fprintf(&b, "[%d bytes before offset %d are no longer kept here]\n", w.Skipped, w.Offset)
			}
			b.WriteString(strings.ToValidUTF8(string(w.Data), "\uFFFD"))
			if !strings.HasSuffix(b.String(), "\n") {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "[bytes %d to %d of %d; read on from offset %d]\n", w.Offset, w.Next, w.Total, w.Next)
		}
		b.WriteString(status(info, r.cfg.Now()))
		if info.Status.Final() {
			j.Shown()
		}
		return harness.TextResult(b.String()), nil
	})
}

// status is the last line of a job tool's result.
func status(i Info, now time.Time) string {
	s := "[" + i.line(now) + "]"
	if i.Detail != "" && i.Status.Final() {
		s += "\n[" + oneLine(i.Detail, 500) + "]"
	}
	if i.Answer != "" {
		s += "\nFinal answer:\n" + i.Answer
	}
	return s
}

func stopTool() tools.Tool {
	spec := tools.Spec{Name: "job_stop", Family: tools.FamilyProcess, SideEffects: true, Deadline: MaxWait + 30*time.Second,
		Description: "Stop a background job of any kind: a command's processes get SIGTERM, then SIGKILL; a sub-agent is cancelled. " +
			"Waits for the job to end and returns its status; read what it printed with job_output."}
	return tools.Define(spec, func(ctx context.Context, call *tools.Call, in stopArgs) (*harness.ToolResult, error) {
		r, err := registry(call)
		if err != nil {
			return nil, err
		}
		j, err := r.Get(in.JobID)
		if err != nil {
			return nil, err
		}
		note := ""
		if j.Ended() {
			note = "The job had already ended.\n"
		}
		sctx, cancel := context.WithTimeout(ctx, MaxWait)
		defer cancel()
		info, err := j.Stop(sctx)
		if err != nil {
			return nil, err
		}
		j.Shown()
		return harness.TextResult(note + status(info, r.cfg.Now())), nil
	})
}
