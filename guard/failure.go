package guard

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
)

// defaultFailureStreak is how many failures of one tool in a row make the
// failure guard remind the model.
const defaultFailureStreak = 3

// maxCodes is how many of a streak's latest error codes a reminder lists.
const maxCodes = 5

// failureGuard is the failure guard: see [FailureGuard].
type failureGuard struct {
	streak   int
	excluded map[string]bool
}

// FailureGuard returns a tools.StepObserver that notices one tool failing
// again and again while the model varies its arguments, the loop a
// repeated-call check cannot see, and reminds the model to stop and
// reconsider its approach. It only advises. An invalid FailureConfig is an
// error (harness.CodeInvalidOption) and no observer.
//
// Each tool has its own streak, in call order across steps: an error
// result adds to it, a success of that tool ends it, and calls of other
// tools leave it alone. When a streak reaches the threshold (3 by default)
// and again at each further multiple, a reminder names the tool, the count
// and the latest error codes. A streak whose calls all had identical
// arguments gets no failure reminder: that is a repeated call, the
// RepeatGuard's business. Calls that were not run (CodeNotRun) or were
// cancelled with their turn (CodeAborted) are not the tool's failures and
// are skipped, as are excluded tools (none by default; see
// FailureConfig.Exclude).
// A new user message resets every streak. The reminders' source
// (harness.Reminder.Source) is "failure_guard".
func FailureGuard(cfg FailureConfig) (tools.StepObserver, error) {
	g := &failureGuard{streak: defaultFailureStreak, excluded: excludedSet(cfg.Exclude)}
	switch k := cfg.Streak; {
	case k == 0:
	case k < 2:
		return nil, toolexec.OptionError("guard: FailureConfig.Streak is %d: a streak is at least 2 failures", k)
	default:
		g.streak = k
	}
	return g.observe, nil
}

type failureKey struct{ g *failureGuard }

type failureState struct {
	mu      sync.Mutex
	turn    int
	streaks map[string]*streak
}

type streak struct {
	count  int
	first  string // canonical arguments of the first failure
	varied bool   // some failure had other arguments
	codes  []harness.Code
}

// observe is the guard as a tools.StepObserver.
func (g *failureGuard) observe(ctx context.Context, step *tools.Step) []harness.Reminder {
	st := loadState(step, failureKey{g}, func() *failureState { return &failureState{} })
	st.mu.Lock()
	defer st.mu.Unlock()
	if turn := envTurn(step); turn != st.turn || st.streaks == nil {
		st.turn, st.streaks = turn, map[string]*streak{}
	}
	var order []string // tools that reached a threshold in this step
	hit := map[string]bool{}
	for i, call := range step.Calls {
		if call == nil || i >= len(step.Results) || step.Results[i] == nil || g.excluded[call.Name] {
			continue
		}
		res := step.Results[i]
		if !res.IsError {
			delete(st.streaks, call.Name)
			continue
		}
		if res.Code == harness.CodeNotRun || res.Code == harness.CodeAborted {
			continue
		}
		args := canonicalArgs(call)
		s := st.streaks[call.Name]
		if s == nil {
			s = &streak{first: args}
			st.streaks[call.Name] = s
		}
		s.count++
		s.varied = s.varied || args != s.first
		s.codes = append(s.codes, res.Code)
		if len(s.codes) > maxCodes {
			s.codes = s.codes[len(s.codes)-maxCodes:]
		}
		if s.count%g.streak == 0 && s.varied && !hit[call.Name] {
			hit[call.Name] = true
			order = append(order, call.Name)
		}
	}
	out := make([]harness.Reminder, 0, len(order))
	for _, name := range order {
		s := st.streaks[name]
		if s == nil {
			continue // a later success in the step ended the streak
		}
		out = append(out, harness.Reminder{Source: sourceFailure, Text: failureText(name, s)})
	}
	return out
}

func failureText(name string, s *streak) string {
	codes := make([]string, len(s.codes))
	for i, c := range s.codes {
		codes[i] = string(c)
	}
	latest := "error codes"
	if s.count > len(codes) {
		latest = fmt.Sprintf("latest %d error codes", len(codes))
	}
	return fmt.Sprintf("%s has failed %d times in a row, with varying arguments (%s, oldest first: %s). "+
		"Another variation of the same call is unlikely to succeed. Stop and reconsider the approach: read the "+
		"error messages again, check your assumptions about the state they describe (re-read files that may have "+
		"changed), try a different tool or method, or ask the user if you are blocked.",
		name, s.count, latest, strings.Join(codes, ", "))
}
