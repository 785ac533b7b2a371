package main

import (
	"context"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
)

// waitRequests waits until the provider has received n requests.
func (p *provider) waitRequests(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for len(p.Requests()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("the provider received %d requests, not %d", len(p.Requests()), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// gated replies once the test lets it (a value on gate), so that keys
// are typed while the model is called, whatever the machine's speed.
func gated(gate <-chan struct{}, r reply) reply {
	return reply{Handler: func(w http.ResponseWriter, req *http.Request) {
		select {
		case <-gate:
		case <-req.Context().Done():
			return
		}
		r.ServeHTTP(w, req)
	}}
}

// ptyRun is the coder's prompt loop on a pseudo-terminal.
type ptyRun struct {
	t      *testing.T
	ctl    *os.File
	raw    *lockedBuffer
	done   chan int
	width  int
	dirs   map[string]string
	exited bool
}

// startPTY runs the prompt loop on a terminal width columns wide, in a
// new workspace with files.
func startPTY(t *testing.T, p *provider, width int, files map[string]string, args ...string) *ptyRun {
	t.Helper()
	return startPTYEnv(t, p, p.env("NO_COLOR=1"), width, files, args...)
}

// startPTYEnv is startPTY with the environment env.
func startPTYEnv(t *testing.T, p *provider, env func(string) string, width int, files map[string]string, args ...string) *ptyRun {
	t.Helper()
	ws, sessions := workspace(t, files), t.TempDir()
	ctl, tty := openPTY(t, width, 24)
	r := &ptyRun{t: t, ctl: ctl, raw: screenReader(ctl), done: make(chan int, 1), width: width,
		dirs: map[string]string{ws: "/ws", sessions: "/sessions", p.URL(): "http://model"}}
	args = append([]string{"-C", ws, "-sessions", sessions, "-permission-mode", "bypass", "-diagnostics=false"}, args...)
	go func() {
		r.done <- run(context.Background(), args, env, tty, tty, &lockedBuffer{}, signals{interrupts: make(chan os.Signal, 1), resize: make(chan os.Signal, 1)})
	}()
	t.Cleanup(func() {
		if !r.exited {
			r.typed("\x04")
			select {
			case <-r.done:
			case <-time.After(time.Minute):
			}
		}
	})
	require.True(t, r.raw.waitFor("› "), r.screen())
	return r
}

func (r *ptyRun) typed(s string) {
	_, err := r.ctl.Write([]byte(s))
	require.NoError(r.t, err)
}

// waitFor waits until the screen shows s.
func (r *ptyRun) waitFor(s string) {
	r.t.Helper()
	s = strings.TrimRight(s, " ") // the screen's lines end without blanks
	for range 20_000 / 5 {
		if strings.Contains(r.screen(), s) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	r.t.Fatalf("the screen never showed %q:\n%s", s, r.screen())
}

// waitCount waits until the screen shows s n times.
func (r *ptyRun) waitCount(s string, n int) {
	r.t.Helper()
	for range 20_000 / 5 {
		if strings.Count(r.screen(), s) >= n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	r.t.Fatalf("the screen never showed %q %d times:\n%s", s, n, r.screen())
}

// screen is what the terminal shows now, scrollback included,
// normalized.
func (r *ptyRun) screen() string {
	return normalized(emulate(r.raw.String(), r.width), r.dirs)
}

// settled is the screen once two looks 50ms apart agree (the spinner
// redraws in between).
func (r *ptyRun) settled() string {
	prev := r.screen()
	for range 200 {
		time.Sleep(50 * time.Millisecond)
		now := r.screen()
		if now == prev {
			return now
		}
		prev = now
	}
	return prev
}

// exit leaves the prompt loop with Ctrl-D and returns the exit status.
func (r *ptyRun) exit() int {
	r.t.Helper()
	time.Sleep(50 * time.Millisecond)
	r.typed("\x04")
	select {
	case code := <-r.done:
		r.exited = true
		return code
	case <-time.After(time.Minute):
		r.t.Fatal("Ctrl-D at the prompt did not exit")
	}
	return 0
}

// A line typed while the model works is shown as it is typed; Enter
// steers it into the turn (the model reads it after the step's tool
// results) and Tab queues it, to run as the next turn once this one
// completes. The screens at 80 and 120 columns are checked in.
func TestSteerAndQueueOnTerminal(t *testing.T) {
	for _, width := range []int{80, 120} {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			g1, g2 := make(chan struct{}), make(chan struct{})
			p := newProvider(t,
				gated(g1, call(toolCall(0, "r1", "read", map[string]any{"file_path": "a.txt"}))),
				gated(g2, say("Checked a.txt and the README.")),
				say("Linted: nothing to fix."))
			r := startPTY(t, p, width, map[string]string{"a.txt": "hello\n"})
			r.typed("check a.txt\r")
			r.waitFor("Enter steers · Tab queues")
			// A steer that arrives before the first model call is sent
			// with it; this test steers after the step's tool results.
			p.waitRequests(t, 1)
			r.typed("also check the README")
			r.waitFor("» also check the README  (Enter steers · Tab queues)")
			typing := r.settled()
			r.typed("\r")
			r.waitFor("steered: the agent reads it before its next step")
			close(g1)
			r.waitFor("Read a.txt")
			r.typed("then run the linter\t")
			r.waitFor("queued: it runs after this turn")
			close(g2)
			r.waitCount("── completed", 2)
			r.waitFor("Linted: nothing to fix.")
			assert.Equal(t, exitOK, r.exit())

			reqs := p.Requests()
			require.Len(t, reqs, 3)
			second := reqs[1].Messages(t)
			require.GreaterOrEqual(t, len(second), 2)
			assert.Equal(t, "tool", second[len(second)-2]["role"], "the steered message follows the step's tool result")
			assert.Equal(t, map[string]any{"role": "user", "content": "also check the README"}, second[len(second)-1])
			third := reqs[2].Messages(t)
			assert.Equal(t, map[string]any{"role": "user", "content": "then run the linter"}, third[len(third)-1], "the queued message is the next turn")

			golden(t, "steer-"+strconv.Itoa(width)+".txt", "── while typing\n"+typing+"── at the end\n"+r.settled())
		})
	}
}

// A line left unfinished when the turn ends comes back as the next
// prompt's text, sent only with Enter.
func TestUnfinishedSteerComesBack(t *testing.T) {
	g := make(chan struct{})
	p := newProvider(t, gated(g, say("one")), say("two"))
	r := startPTY(t, p, 80, nil)
	r.typed("first\r")
	r.waitFor("Enter steers · Tab queues")
	r.typed("second thoughts")
	r.waitFor("» second thoughts")
	close(g)
	r.waitFor("── completed")
	r.waitFor("typed during the turn, not sent")
	time.Sleep(100 * time.Millisecond)
	assert.Len(t, p.Requests(), 1)
	r.typed("\r")
	r.waitCount("── completed", 2)
	assert.Equal(t, exitOK, r.exit())
	reqs := p.Requests()
	require.Len(t, reqs, 2)
	msgs := reqs[1].Messages(t)
	assert.Equal(t, "second thoughts", msgs[len(msgs)-1]["content"])
}

// The model's questions are asked at the prompt, one after the other,
// the choices numbered: a number picks a choice, anything else is the
// answer. The screens at 80 and 120 columns are checked in.
func TestQuestionsOnTerminal(t *testing.T) {
	for _, width := range []int{80, 120} {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			qs := append([]harness.Question{{Question: "Which checks should run?", Choices: []string{"unit tests", "lint", "race detector"}, Multiple: true}}, twoQuestions...)
			p := newProvider(t, call(askCall("q1", qs...)), say("Using sqlite with a users table; running unit tests and the race detector."))
			r := startPTY(t, p, width, nil)
			r.typed("set up the db\r")
			r.waitFor("numbers (1,3), or your answer › ")
			r.typed("1,3\r")
			r.waitFor("1-2, or your answer › ")
			r.typed("2\r")
			r.waitFor("(3/3) What is the table called?")
			r.typed("users\r")
			r.waitFor("── completed")
			assert.Equal(t, exitOK, r.exit())
			reqs := p.Requests()
			require.Len(t, reqs, 2)
			msgs := reqs[1].Messages(t)
			result, _ := msgs[len(msgs)-1]["content"].(string)
			assert.Contains(t, result, "unit tests, race detector")
			assert.Contains(t, result, "sqlite")
			assert.Contains(t, result, "users")
			golden(t, "questions-"+strconv.Itoa(width)+".txt", r.settled())
		})
	}
}

// The plan is shown under the turn's output while it runs and changes in
// place as the model updates it (one plan on the screen, never a pile),
// and is printed once when the turn ends. The screens at 80 and 120
// columns are checked in.
func TestPlanOnTerminal(t *testing.T) {
	plan := func(id string, statuses ...string) reply {
		items := []harness.TodoItem{
			{Content: "Read the failing test"}, {Content: "Fix the parser for quoted fields"}, {Content: "Run the whole test suite"},
		}
		for i, s := range statuses {
			items[i].Status = s
		}
		return call(toolCall(0, id, "todo", map[string]any{"items": items}))
	}
	const (
		pending = harness.TodoPending
		doing   = harness.TodoInProgress
		done    = harness.TodoDone
	)
	for _, width := range []int{80, 120} {
		t.Run(strconv.Itoa(width), func(t *testing.T) {
			g1, g2 := make(chan struct{}), make(chan struct{})
			p := newProvider(t,
				plan("t1", doing, pending, pending),
				gated(g1, plan("t2", done, doing, pending)),
				gated(g2, plan("t3", done, done, done)),
				say("All three done."))
			r := startPTY(t, p, width, nil)
			r.typed("fix the parser\r")
			r.waitFor("▸ Read the failing test")
			first := r.settled()
			close(g1)
			r.waitFor("▸ Fix the parser for quoted fields")
			second := r.settled()
			close(g2)
			r.waitFor("── completed")
			final := r.settled()
			assert.Equal(t, exitOK, r.exit())
			for _, s := range []string{first, second} {
				pinned := 0
				for _, l := range strings.Split(s, "\n") {
					if strings.HasPrefix(l, "Plan · ") {
						pinned++
					}
				}
				assert.Equal(t, 1, pinned, "one plan shown while the turn runs:\n%s", s)
				assert.Contains(t, s, "thinking", "the spinner stays under the plan")
			}
			assert.Contains(t, final, "Plan · 3/3 done\n  ✓ Read the failing test")
			golden(t, "plan-"+strconv.Itoa(width)+".txt", "── first plan\n"+first+"── updated\n"+second+"── at the end\n"+final)
		})
	}
}

// At a terminal a turn paused at -max-cost asks whether to go on, and
// with which budget: a limit not above the one reached is refused, a
// higher one goes on with the same turn; declined, the turn stays paused.
func TestBudgetPauseOnTerminal(t *testing.T) {
	p := newProvider(t, bigCall("r1"), say("All read."), bigCall("r2"))
	r := startPTYEnv(t, p, p.env("NO_COLOR=1", "HARNESS_MODEL=deepseek-v4-flash"), 80, map[string]string{"a.txt": "hello\n"}, "-max-cost", "0.01")
	r.typed("read a.txt\r")
	r.waitFor("⏸ the cost budget is reached: $0.0")
	r.waitFor("? [Y/n] or a new limit ›")
	require.Len(t, p.Requests(), 1)
	r.typed("0.005\r")
	r.waitFor("$0.005 is not above the limit reached: give more")
	r.typed("$1\r")
	r.waitFor("All read.")
	r.waitFor("── completed")
	reqs := p.Requests()
	require.Len(t, reqs, 2)
	msgs := reqs[1].Messages(t)
	assert.Contains(t, msgs[len(msgs)-1]["content"], "hello", "the same turn went on")

	assert.Equal(t, exitOK, r.exit())

	// Declined: the turn stays paused, and the screen says how to go on.
	p = newProvider(t, bigCall("r1"))
	r = startPTYEnv(t, p, p.env("NO_COLOR=1", "HARNESS_MODEL=deepseek-v4-flash"), 120, map[string]string{"a.txt": "hello\n"}, "-max-cost", "0.01")
	r.typed("read a.txt\r")
	r.waitFor("? [Y/n] or a new limit ›")
	r.typed("n\r")
	r.waitFor("the turn stays paused at its budget; a new prompt starts afresh, or go on later with: coder -C")
	r.waitFor("-continue -max-cost 0.0")
	assert.Equal(t, exitPaused, r.exit())
	assert.Len(t, p.Requests(), 1)
}

// A session left waiting for answers (headless, exit 3) is asked them
// at the terminal when it is continued there, and the same turn goes on.
func TestPausedQuestionsAskedOnContinue(t *testing.T) {
	p := newProvider(t, call(askCall("q1", twoQuestions...)), say("Using postgres, table accounts."))
	ws, sessions := workspace(t, nil), t.TempDir()
	r0 := runCLI(t, p.env(), "", "-C", ws, "-sessions", sessions, "-p", "set up the db")
	require.Equal(t, exitPaused, r0.code, r0.stderr)

	ctl, tty := openPTY(t, 80, 24)
	r := &ptyRun{t: t, ctl: ctl, raw: screenReader(ctl), done: make(chan int, 1), width: 80, dirs: map[string]string{ws: "/ws"}}
	go func() {
		r.done <- run(context.Background(), []string{"-C", ws, "-sessions", sessions, "-permission-mode", "bypass", "-diagnostics=false", "-continue"},
			p.env("NO_COLOR=1"), tty, tty, &lockedBuffer{}, signals{interrupts: make(chan os.Signal, 1), resize: make(chan os.Signal, 1)})
	}()
	r.waitFor("the last turn waits for answers to the agent's questions")
	r.waitFor("1-2, or your answer ›")
	r.typed("1\r")
	r.waitFor("(2/2) What is the table called?")
	r.typed("accounts\r")
	r.waitFor("── completed")
	assert.Equal(t, exitOK, r.exit())
	reqs := p.Requests()
	require.Len(t, reqs, 2)
	msgs := reqs[1].Messages(t)
	assert.Contains(t, msgs[len(msgs)-1]["content"], "postgres")
	assert.Contains(t, msgs[len(msgs)-1]["content"], "accounts")
}
