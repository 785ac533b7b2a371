package modeltest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/agent/model"
	"github.com/go-harness/harness/internal/leakcheck"
)

// hang is how long a check waits for a call that should end before it
// reports the call as hung; a bound for failure, not a speed target.
const hang = 30 * time.Second

// calls is how many calls a check makes at the most on one model (the
// concurrency check); the others make one.
const calls = 4

// TestModel checks the model.Model that newModel returns against the
// contract of package model. newModel is called once per check, with that
// check's subtest; the model it returns must answer up to four plain
// requests (a short user message, no tools), one after another or at
// once, each with any complete answer. Register what it starts (a fake
// backend, idle connections) for closing with t.Cleanup: the suite checks
// for goroutines left running after the cleanups of each check.
func TestModel(t *testing.T, newModel func(t *testing.T) model.Model) {
	t.Helper()
	for _, c := range checks() {
		t.Run(c.name, func(t *testing.T) {
			leakcheck.Check(t)
			if err := c.run(t.Context(), newModel(t)); err != nil {
				t.Error(err)
			}
		})
	}
}

// check is one of the suite's checks: it returns what it found wrong.
type check struct {
	name string
	run  func(ctx context.Context, m model.Model) error
}

func checks() []check {
	return []check{
		{"info", checkInfo},
		{"answer", checkAnswer},
		{"cancelled", checkCancelled},
		{"stop_early", checkStopEarly},
		{"concurrent", checkConcurrent},
	}
}

// plainRequest is the request every check sends.
func plainRequest() *model.Request {
	return &model.Request{
		System:   "You are a test. Answer in one short sentence.",
		Messages: []harness.Message{{Role: harness.RoleUser, Content: []harness.Block{harness.TextBlock("Say hello.")}}},
	}
}

func checkInfo(ctx context.Context, m model.Model) error {
	info := m.Info()
	if info.Name == "" {
		return errors.New("Info().Name is empty: name the provider's model id")
	}
	if len(info.Input) > 0 {
		want := slices.Clone(info.Input)
		info.Input[0] = "changed by the caller"
		if got := m.Info().Input; !slices.Equal(got, want) {
			return fmt.Errorf("Info().Input is shared with the model: after the caller changed its copy, Info().Input is %q, want %q (return a copy)", got, want)
		}
	}
	return nil
}

// item is one value of a Stream sequence.
type item struct {
	chunk model.Chunk
	err   error
}

// collect runs one Stream call to its end, failing if it does not end
// within hang.
func collect(ctx context.Context, m model.Model, req *model.Request) ([]item, error) {
	done := make(chan []item, 1)
	go func() {
		var got []item
		for c, err := range m.Stream(ctx, req) {
			got = append(got, item{c, err})
		}
		done <- got
	}()
	select {
	case got := <-done:
		return got, nil
	case <-time.After(hang):
		return nil, fmt.Errorf("Stream did not end within %v", hang)
	}
}

// wellFormed checks the shape of a sequence that ended: chunks of known
// types with only their own field set, at most one error and nothing after
// it, and nothing after a finish chunk.
func wellFormed(got []item) error {
	var errs []error
	for i, it := range got {
		last := i == len(got)-1
		if it.err != nil {
			if !last {
				errs = append(errs, fmt.Errorf("item %d of %d is an error (%v) but the sequence went on: an error must end it", i+1, len(got), it.err))
			}
			continue
		}
		c := it.chunk
		if c.Type == model.ChunkModel && i > 0 && got[i-1].chunk.Type != model.ChunkModel {
			errs = append(errs, fmt.Errorf("chunk %d of %d names the answering model after other chunks: a model chunk comes first", i+1, len(got)))
		}
		if c.Type == model.ChunkFinish && !last {
			errs = append(errs, fmt.Errorf("chunk %d of %d is the finish chunk but the sequence went on: it must be last", i+1, len(got)))
		}
		if err := chunkShape(c); err != nil {
			errs = append(errs, fmt.Errorf("chunk %d: %w", i+1, err))
		}
	}
	return errors.Join(errs...)
}

// chunkShape checks that a chunk has a known type and only its field set.
func chunkShape(c model.Chunk) error {
	text, call, usage, finish := c.Text != "", c.ToolCall != model.ToolCallDelta{}, c.Usage != harness.Usage{}, c.Finish != ""
	if c.Type != model.ChunkReasoning && (c.Signature != "" || c.Redacted) {
		return fmt.Errorf("a chunk of type %d carries a signature or the redacted mark, which only reasoning chunks have: %+v", c.Type, c)
	}
	switch c.Type {
	case model.ChunkText, model.ChunkReasoning:
		if call || usage || finish {
			return fmt.Errorf("a text or reasoning chunk sets other fields: %+v", c)
		}
		if c.Redacted && (text || c.Signature == "") {
			return fmt.Errorf("a redacted reasoning chunk carries text or no data: its encrypted reasoning goes in Signature, and Text stays empty: %+v", c)
		}
	case model.ChunkModel:
		if !text || call || usage || finish {
			return fmt.Errorf("a model chunk names no model in Text, or sets other fields: %+v", c)
		}
	case model.ChunkToolCall:
		if text || usage || finish {
			return fmt.Errorf("a tool-call chunk sets other fields: %+v", c)
		}
		if c.ToolCall.Index < 0 {
			return fmt.Errorf("a tool-call chunk has the negative index %d", c.ToolCall.Index)
		}
	case model.ChunkUsage:
		if text || call || finish {
			return fmt.Errorf("a usage chunk sets other fields: %+v", c)
		}
	case model.ChunkFinish:
		if text || call || usage {
			return fmt.Errorf("a finish chunk sets other fields: %+v", c)
		}
		switch c.Finish {
		case model.FinishStop, model.FinishToolCalls, model.FinishLength:
		case model.FinishAborted:
			return fmt.Errorf("a finish chunk says %q, which only the loop logs; a cancelled call yields an error", c.Finish)
		default:
			return fmt.Errorf("a finish chunk says %q, not one of model.FinishStop, FinishToolCalls, FinishLength", c.Finish)
		}
	default:
		return fmt.Errorf("unknown chunk type %d", c.Type)
	}
	return nil
}

// complete checks that a sequence is a whole answer: well formed, no
// error, and ending with its one finish chunk.
func complete(got []item) error {
	if err := wellFormed(got); err != nil {
		return err
	}
	if len(got) == 0 {
		return errors.New("Stream yielded nothing: a complete answer ends with a finish chunk")
	}
	if err := got[len(got)-1].err; err != nil {
		return fmt.Errorf("Stream failed on a plain request: %w", err)
	}
	if t := got[len(got)-1].chunk.Type; t != model.ChunkFinish {
		return fmt.Errorf("the answer's last chunk is of type %d, not the finish chunk (model.ChunkFinish)", t)
	}
	return nil
}

func checkAnswer(ctx context.Context, m model.Model) error {
	req := plainRequest()
	before, err := json.Marshal(req)
	if err != nil {
		return err
	}
	got, err := collect(ctx, m, req)
	if err != nil {
		return err
	}
	if err := complete(got); err != nil {
		return err
	}
	if after, _ := json.Marshal(req); string(after) != string(before) {
		return fmt.Errorf("Stream changed the request: before %s, after %s", before, after)
	}
	return nil
}

func checkCancelled(ctx context.Context, m model.Model) error {
	ctx, cancel := context.WithCancel(ctx)
	cancel()
	got, err := collect(ctx, m, plainRequest())
	if err != nil {
		return fmt.Errorf("with a cancelled context: %w", err)
	}
	if err := wellFormed(got); err != nil {
		return fmt.Errorf("with a cancelled context: %w", err)
	}
	if len(got) == 0 || got[len(got)-1].err == nil {
		return errors.New("with a cancelled context, Stream ended without an error: yield one matching harness.CodeAborted (see model.NewError)")
	}
	if err := got[len(got)-1].err; harness.CodeOf(err) != harness.CodeAborted {
		return fmt.Errorf("with a cancelled context, Stream failed with %v (code %q), not with an error whose harness.CodeOf is aborted (context.Canceled, or model.NewError(harness.CodeAborted, ...) wrapping it)", err, harness.CodeOf(err))
	}
	return nil
}

func checkStopEarly(ctx context.Context, m model.Model) error {
	done := make(chan int, 1)
	go func() {
		n := 0
		for range m.Stream(ctx, plainRequest()) {
			n++
			break
		}
		done <- n
	}()
	select {
	case n := <-done:
		if n == 0 {
			return errors.New("Stream yielded nothing for a plain request")
		}
		return nil
	case <-time.After(hang):
		return fmt.Errorf("Stream did not return within %v of the consumer stopping after the first item", hang)
	}
}

func checkConcurrent(ctx context.Context, m model.Model) error {
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			got, err := collect(ctx, m, plainRequest())
			if err == nil {
				err = complete(got)
			}
			if err != nil {
				errs[i] = fmt.Errorf("call %d of %d at once: %w", i+1, calls, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
