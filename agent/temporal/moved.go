package temporal

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent"
	"github.com/go-harness/harness/tools"
)

// movedSource is the source of the reminder a session's model gets when
// its turns moved to a worker that does not hold its shells.
const movedSource = "worker_moved"

// noteMoved prepares the notice a session resumed on this worker gives
// its model, when earlier turns opened persistent shells: those lived in
// the other worker's processes and are gone. Background jobs are
// reported lost by the loop itself when it resumes a session.
func (w *Worker) noteMoved(sess *agent.Session) {
	var shells []string
	for _, m := range sess.Messages() {
		for _, c := range m.ToolCalls() {
			if c.Name == "shell_open" {
				shells = append(shells, c.ID)
			}
		}
	}
	if len(shells) == 0 {
		return
	}
	sort.Strings(shells)
	text := "This session now runs on another machine than before (the one that ran it stopped, or let it go). " +
		"The persistent shells opened earlier (shell_open) are gone, with their processes, working directory and variables: " +
		"a shell id from before no longer works. Open a new shell if you need one, and check any state a previous shell left behind."
	w.mu.Lock()
	w.notices[sess.Header().ID] = text
	w.mu.Unlock()
}

// movedNotice is the step observer that hands a session's model the
// notice noteMoved prepared, once, after the first step's results.
func (w *Worker) movedNotice(_ context.Context, step *tools.Step) []harness.Reminder {
	if step == nil || step.Env == nil {
		return nil
	}
	w.mu.Lock()
	text, ok := w.notices[step.Env.SessionID]
	delete(w.notices, step.Env.SessionID)
	w.mu.Unlock()
	if !ok {
		return nil
	}
	return []harness.Reminder{{Source: movedSource, Text: text}}
}

// forwarder sends a turn's events to its workflow in batches, as
// signals, at most every flushEvery, and at the end.
type forwarder struct {
	c        client.Client
	wid, rid string
	ch       chan string
	done     chan struct{}
	next     int
}

const flushEvery = 100 * time.Millisecond

func newForwarder(c client.Client, wid, rid string, from int) *forwarder {
	f := &forwarder{c: c, wid: wid, rid: rid, ch: make(chan string, 1024), done: make(chan struct{}), next: from}
	go f.run()
	return f
}

func (f *forwarder) add(ev agent.Event) {
	b, err := agent.MarshalEvent(ev)
	if err != nil {
		return
	}
	f.ch <- strings.TrimRight(string(b), "\n")
}

func (f *forwarder) close() {
	close(f.ch)
	<-f.done
}

func (f *forwarder) run() {
	defer close(f.done)
	var batch []string
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	flush := func() {
		if len(batch) == 0 {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b := eventBatch{From: f.next, Events: batch}
		if err := f.c.SignalWorkflow(ctx, f.wid, f.rid, signalEvents, b); err == nil {
			f.next += len(batch)
			batch = nil
		}
	}
	for {
		select {
		case s, ok := <-f.ch:
			if !ok {
				flush()
				return
			}
			batch = append(batch, s)
			if len(batch) >= 256 {
				flush()
			}
		case <-t.C:
			flush()
		}
	}
}

// decodeEvent reads one streamed event's type.
func decodeEvent(line string) (Event, error) {
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal([]byte(line), &head); err != nil {
		return Event{}, err
	}
	return Event{Type: head.Type, JSON: json.RawMessage(line)}, nil
}
