package jobs

import (
	"context"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/tools"
)

// NoticeSource is the Source of the reminders Notices adds.
const NoticeSource = "jobs"

// Notices returns a tools.StepObserver that tells the model about the
// jobs that ended: after each step, one reminder per job that ended
// since the last step (see Info.Notice), unless a tool already showed
// the model how it ended (Job.Shown). The loop logs each reminder and
// reports it to the host as an event, so a resumed or replayed session
// sends what the live one sent. Add it to the loop's step observers.
func Notices() tools.StepObserver {
	return func(_ context.Context, step *tools.Step) []harness.Reminder {
		if step == nil || step.Env == nil || step.Env.State == nil {
			return nil
		}
		r, err := FromState(step.Env.State, Config{})
		if err != nil {
			return nil
		}
		var out []harness.Reminder
		for _, info := range r.TakeEnded() {
			out = append(out, harness.Reminder{Source: NoticeSource, Text: info.Notice()})
		}
		return out
	}
}
