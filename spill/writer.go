package spill

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/tools"
)

// errWriterClosed is returned by a write to a closed Writer: it matches
// harness.CodeClosed.
func errWriterClosed() error {
	return &harness.Error{Code: harness.CodeClosed, Message: "spill: write to a closed Writer"}
}

// Writer spills a stream as it arrives, in bounded memory. It keeps the
// first limit bytes and the last limit bytes of what is written; once the
// stream grows past limit, it starts saving it to the store and from then
// on passes every write through to the store as it comes, so an output of
// any size costs about two limits of memory and never touches the model
// whole. Close finishes the save and Output returns either the whole text
// (when it fit) or a preview of at most limit bytes with the locator and
// how to read the rest.
//
// A Writer never fails a write because saving failed: the tool producing
// the stream keeps running, the head and the tail are still kept, and the
// preview says the middle could not be saved. It is safe for concurrent
// use, so a process's stdout and stderr can share one. Writes block while
// the store is busy, which is what keeps memory bounded.
type Writer struct {
	ctx   context.Context
	store tools.OutputStore
	owner tools.Owner
	limit int

	mu       sync.Mutex
	head     []byte
	tail     *textcut.Tail
	size     int64
	newlines int64
	pw       *io.PipeWriter
	bw       *bufio.Writer // batches small writes into pw
	done     chan saved
	writeErr error
	closed   bool
	out      Output
}

// pipeBuffer batches small writes on their way to the store, so a stream
// written a line at a time does not cost a hand-over per line.
const pipeBuffer = 64 << 10

type saved struct {
	st  tools.Stored
	err error
}

// Output is what a Writer produced.
type Output struct {
	// Text is the whole output when it fit the limit, and otherwise a
	// preview of at most limit bytes: head, notice, tail.
	Text string
	// Size is the number of bytes written.
	Size int64
	// Truncated reports that Text is a preview.
	Truncated bool
	// Stored says where the whole output was saved; its Locator is empty
	// unless Truncated and the save succeeded.
	Stored tools.Stored
	// Err is why a truncated output could not be saved, if it could not.
	Err error
}

// NewWriter returns a Writer that saves to store, for owner, a stream
// longer than limit bytes (DefaultThreshold when limit is 0 or less; at
// least MinThreshold). ctx bounds the save. With a nil store nothing is
// saved and a long output keeps only its head and tail.
func NewWriter(ctx context.Context, store tools.OutputStore, owner tools.Owner, limit int) *Writer {
	if limit <= 0 {
		limit = DefaultThreshold
	}
	limit = max(limit, MinThreshold)
	return &Writer{ctx: ctx, store: store, owner: owner, limit: limit, tail: textcut.NewTail(limit)}
}

// NewCallWriter returns a Writer for a call's output: the session's output
// store (call.Env.Output) and the call as owner.
func NewCallWriter(ctx context.Context, call *tools.Call, limit int) *Writer {
	var store tools.OutputStore
	if call.Env != nil {
		store = call.Env.Output
	}
	return NewWriter(ctx, store, OwnerOf(call), limit)
}

// Write implements io.Writer. It fails only after Close.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, errWriterClosed()
	}
	prev := w.size
	w.size += int64(len(p))
	w.newlines += int64(bytes.Count(p, []byte{'\n'}))
	_, _ = w.tail.Write(p)
	if room := w.limit - len(w.head); room > 0 {
		w.head = append(w.head, p[:min(room, len(p))]...)
	}
	if w.size <= int64(w.limit) || w.store == nil || w.writeErr != nil {
		return len(p), nil
	}
	if w.pw == nil {
		pr, pw := io.Pipe()
		w.pw, w.bw, w.done = pw, bufio.NewWriterSize(pw, pipeBuffer), make(chan saved, 1)
		go func() {
			st, err := w.store.Save(w.ctx, w.owner, pr)
			if err == nil {
				pr.CloseWithError(errors.New("spill: the store stopped reading before the end of the output"))
			} else {
				pr.CloseWithError(err)
			}
			w.done <- saved{st, err}
		}()
		// Everything before p is in the head.
		if _, err := w.bw.Write(w.head[:prev]); err != nil {
			w.writeErr = err
			return len(p), nil
		}
	}
	if _, err := w.bw.Write(p); err != nil {
		w.writeErr = err
	}
	return len(p), nil
}

// Close finishes saving and fixes the Output. It returns the save error,
// if any; the Output is usable either way. Closing twice does nothing.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return w.out.Err
	}
	w.closed = true
	w.out.Size = w.size
	if w.size <= int64(w.limit) {
		w.out.Text = string(w.head)
		return nil
	}
	w.out.Truncated = true
	var err error
	switch {
	case w.store == nil:
	case w.pw == nil: // cannot happen: a store and a long output start a save
		err = errors.New("spill: the output was not saved")
	default:
		if err := w.bw.Flush(); err != nil && w.writeErr == nil {
			w.writeErr = err
		}
		_ = w.pw.Close()
		r := <-w.done
		switch {
		case r.err != nil:
			err = r.err
		case w.writeErr != nil:
			err = w.writeErr
		case r.st.Size != w.size:
			err = fmt.Errorf("spill: the store saved %d of %d bytes", r.st.Size, w.size)
		default:
			w.out.Stored = r.st
		}
	}
	w.out.Err = err
	src := source{head: string(w.head), tail: w.tail.String(), size: w.size, newlines: w.newlines}
	pv, ok := buildPreview(src, w.limit, w.out.Stored, err)
	if !ok {
		// Only a store with an absurdly long locator gets here.
		pv.Text = textcut.Prefix(fmt.Sprintf("[%d bytes of output; whole output: %s]", w.size, w.out.Stored.Locator), w.limit)
	}
	w.out.Text = pv.Text
	return err
}

// Output returns what was written: call it after Close.
func (w *Writer) Output() Output {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out
}
