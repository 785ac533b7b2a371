package guard

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
)

// Reminder sources, as logged with each reminder (harness.Reminder.Source).
const (
	sourceRepeat  = "repeat_guard"
	sourceFailure = "failure_guard"
)

// defaultRepeatThresholds are the run lengths of identical calls at which
// the repeat guard reminds the model: 3, then 5, then 8.
func defaultRepeatThresholds() []int { return []int{3, 5, 8} }

// defaultRepeatExcluded names the tools the repeat guard ignores by
// default: bookkeeping tools whose repeated identical calls are normal
// (re-reading a todo list) or wait on someone else (asking the user), and
// whose calls must not hide a loop of other calls around them.
func defaultRepeatExcluded() []string {
	return []string{"todo", "todo_read", "todo_write", "ask_user", "ask_user_question"}
}

// previewRunes is how many characters of a call's arguments a detailed
// reminder quotes.
const previewRunes = 500

// repeatGuard is the repeat guard: see [RepeatGuard].
type repeatGuard struct {
	thresholds []int
	excluded   map[string]bool
}

// RepeatGuard returns a tools.StepObserver that notices the model calling
// the same tool with the same arguments several times in a row and
// reminds it that repeating will not help. It only advises: no call is
// blocked or changed. An invalid RepeatConfig is an error
// (harness.CodeInvalidOption) and no observer.
//
// Calls are compared by tool name and canonical arguments (object keys
// sorted at every level, numbers in one form), across steps and within a
// step in call order. When a run of identical calls reaches a threshold
// (3, 5 and 8 by default), one reminder follows that step's results: a
// short one at the first threshold, then detailed ones naming the tool,
// the count and the arguments (cut at 500 characters). Excluded tools are
// skipped entirely: their calls neither count nor break a run. By default
// these are the names bookkeeping tools usually have (todo, todo_read,
// todo_write, ask_user and ask_user_question), whose repeated identical
// calls are normal or wait on someone else. A new user message (Env.Turn
// changing) starts the count afresh.
//
// The reminders' source (harness.Reminder.Source) is "repeat_guard".
// RepeatConfig changes the thresholds and the list of excluded tools.
//
// The counts live in the session's Env.State, in memory; the reminders
// themselves are logged by the loop like everything the model sees, so a
// resumed session shows the same history (and counts from zero).
func RepeatGuard(cfg RepeatConfig) (tools.StepObserver, error) {
	g := &repeatGuard{thresholds: defaultRepeatThresholds(), excluded: excludedSet(defaultRepeatExcluded())}
	if n := cfg.Thresholds; n != nil {
		if len(n) == 0 {
			return nil, toolexec.OptionError("guard: RepeatConfig.Thresholds is empty: give at least one run length, or nil for the defaults")
		}
		for _, v := range n {
			if v < 2 {
				return nil, toolexec.OptionError("guard: RepeatConfig.Thresholds is %v: a run is at least 2 calls, not %d", n, v)
			}
		}
		ts := slices.Clone(n)
		slices.Sort(ts)
		g.thresholds = slices.Compact(ts)
	}
	if cfg.Exclude != nil {
		g.excluded = excludedSet(cfg.Exclude)
	}
	return g.observe, nil
}

type repeatKey struct{ g *repeatGuard }

type repeatState struct {
	mu    sync.Mutex
	turn  int
	key   string // tool name, NUL, canonical arguments
	args  string
	count int
	run   int // numbers runs, so a step's reminders come one per run
}

// observe is the guard as a tools.StepObserver.
func (g *repeatGuard) observe(ctx context.Context, step *tools.Step) []harness.Reminder {
	st := loadState(step, repeatKey{g}, func() *repeatState { return &repeatState{} })
	st.mu.Lock()
	defer st.mu.Unlock()
	if turn := envTurn(step); turn != st.turn {
		st.turn, st.key, st.args, st.count = turn, "", "", 0
	}
	type hit struct {
		run, count int
		name, args string
	}
	var hits []hit
	for _, call := range step.Calls {
		if call == nil || g.excluded[call.Name] {
			continue
		}
		args := canonicalArgs(call)
		key := call.Name + "\x00" + args
		if key == st.key {
			st.count++
		} else {
			st.key, st.args, st.count = key, args, 1
			st.run++
		}
		if !slices.Contains(g.thresholds, st.count) {
			continue
		}
		h := hit{run: st.run, count: st.count, name: call.Name, args: args}
		if n := len(hits); n > 0 && hits[n-1].run == h.run {
			hits[n-1] = h // one reminder per run per step: the highest
		} else {
			hits = append(hits, h)
		}
	}
	out := make([]harness.Reminder, 0, len(hits))
	for _, h := range hits {
		out = append(out, harness.Reminder{Source: sourceRepeat, Text: g.text(h.name, h.args, h.count)})
	}
	return out
}

// text is the reminder for a run of count identical calls.
func (g *repeatGuard) text(name, args string, count int) string {
	level := slices.Index(g.thresholds, count)
	switch {
	case level == 0:
		return fmt.Sprintf("You have called %s %d times in a row with the same arguments. "+
			"Repeating a call gives the same result: use the one you have, or change your approach.", name, count)
	case level < len(g.thresholds)-1:
		return fmt.Sprintf("Repeated call: %s has now been called %d times in a row with identical arguments:\n%s\n"+
			"Each repeat returns the same result and uses up context. Work with the result you already have, "+
			"or change the arguments or the tool.", name, count, cutRunes(args, previewRunes))
	default:
		return fmt.Sprintf("Repeated call: %s has now been called %d times in a row with identical arguments:\n%s\n"+
			"This is a loop. Stop calling it with these arguments. Take a different approach, and if something "+
			"outside your control blocks you, stop and tell the user what it is.", name, count, cutRunes(args, previewRunes))
	}
}

// loadState returns the per-session state of a guard, or a fresh one when
// the step has no session state (an observer called outside a loop).
func loadState[T any](step *tools.Step, key any, create func() *T) *T {
	if step.Env == nil || step.Env.State == nil {
		return create()
	}
	st, err := tools.LoadState(step.Env.State, key, create)
	if err != nil {
		return create()
	}
	return st
}

func envTurn(step *tools.Step) int {
	if step.Env == nil {
		return 0
	}
	return step.Env.Turn
}

// cutRunes returns s cut to at most n characters (runes), with "…" added
// when something was cut. Invalid UTF-8 becomes U+FFFD.
func cutRunes(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := 0; k < n; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + "…"
}

// canonicalArgs returns the canonical text of a call's arguments (see
// canonicalJSON), written from the value the registry decoded when it
// checked the call, so the text is not parsed again. Arguments it could
// not decode, and those padded with white space JSON does not know
// (which the registry tolerates), are read from their text.
func canonicalArgs(call *tools.Call) string {
	args := call.Args()
	if args == nil || len(strings.TrimSpace(call.Arguments)) != len(strings.Trim(call.Arguments, jsonSpace)) {
		return canonicalJSON([]byte(call.Arguments))
	}
	return encodeCanonical(args)
}
