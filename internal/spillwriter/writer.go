package spillwriter

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
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
)

// errWriterClosed is returned by a write to a closed Writer: it matches
// harness.CodeClosed.
func errWriterClosed() error {
	return &harness.Error{Code: harness.CodeClosed, Message: "spill: write to a closed Writer"}
}

// Writer spills a stream as it arrives, in bounded memory. It keeps the
// first limit bytes and the last limit bytes of what is written; once the
// stream grows past limit (or when Save is called), it starts saving it to
// the store and from then on passes every write through to the store as it
// comes, so an output of any size costs about two limits of memory and
// never touches the model whole. Close finishes the save and Output
// returns either the whole text (when it fit) or a preview of at most
// limit bytes with the locator and how to read the rest, beside the head
// and the tail kept, for a caller that shows the stream its own way.
//
// A Writer never fails a write because saving failed: the tool producing
// the stream keeps running, the head and the tail are still kept, and the
// preview says the middle could not be saved. It is safe for concurrent
// use, so a process's stdout and stderr can share one. Writes block while
// the store is busy, which is what keeps memory bounded.
type Writer struct {
	ctx     context.Context
	store   tools.OutputStore
	owner   tools.Owner
	limit   int
	maxSave int64
	budget  func(n int64) int64

	mu       sync.Mutex
	head     []byte
	tail     *textcut.Tail
	size     int64
	newlines int64
	pw       *io.PipeWriter
	bw       *bufio.Writer // batches small writes into pw
	done     chan saved
	sent     int64 // bytes handed to the store
	cut      bool  // maxSave reached: the rest is not saved
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
	// Newlines is the number of line feeds written.
	Newlines int64
	// Head and Tail are the first and the last limit bytes written (the
	// same text when the output fit), for a caller that builds its own
	// view of the stream.
	Head, Tail string
	// Truncated reports that Text is a preview.
	Truncated bool
	// Stored says where the output was saved; its Locator is empty unless
	// the save succeeded (the output was longer than the limit, or Save
	// was called).
	Stored tools.Stored
	// Cut reports that the save stopped at the WithMaxSave cap: Stored
	// holds the first Stored.Size bytes only.
	Cut bool
	// Err is why the output could not be saved, if it could not.
	Err error
}

// WriterOption configures a Writer.
type WriterOption func(*Writer) error

// WithMaxSave caps the bytes of the stream a Writer saves to the store:
// past n bytes the save ends and Output reports Cut. By default the whole
// stream is saved. n must be positive.
func WithMaxSave(n int64) WriterOption {
	return func(w *Writer) error {
		if n <= 0 {
			return toolexec.OptionError("spill: WithMaxSave(%d): the cap must be positive", n)
		}
		w.maxSave = n
		return nil
	}
}

// WithBudget makes a save also spend a budget shared with other writers:
// before each part of the stream goes to the store, take(n) returns how
// many of its n bytes may (and are then counted); past what it allows the
// save ends and Output reports Cut, as past WithMaxSave's cap.
func WithBudget(take func(n int64) int64) WriterOption {
	return func(w *Writer) error {
		w.budget = take
		return nil
	}
}

// NewWriter returns a Writer that saves to store, for owner, a stream
// longer than limit bytes (DefaultThreshold when limit is 0; otherwise at
// least MinThreshold, the room a preview needs). ctx bounds the save. With
// a nil store nothing is saved and a long output keeps only its head and
// tail. An invalid limit or option is an error (harness.CodeInvalidOption).
func NewWriter(ctx context.Context, store tools.OutputStore, owner tools.Owner, limit int, opts ...WriterOption) (*Writer, error) {
	if limit == 0 {
		limit = DefaultThreshold
	}
	if limit < MinThreshold {
		return nil, toolexec.OptionError("spill: a Writer's limit of %d bytes is below the %d bytes a preview needs", limit, MinThreshold)
	}
	w := &Writer{ctx: ctx, store: store, owner: owner, limit: limit, tail: textcut.NewTail(limit)}
	var errs []error
	for _, o := range opts {
		if o != nil {
			errs = append(errs, o(w))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return w, nil
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
	if w.pw == nil && w.size > int64(w.limit) && prev <= int64(len(w.head)) {
		// The stream just outgrew the limit: everything before p is in
		// the head.
		w.startLocked(w.head[:prev])
	}
	w.sendLocked(p)
	return len(p), nil
}

// Save starts saving the stream now, even though it may never outgrow the
// limit: what was written so far goes first, and later writes follow as
// they come. It does nothing without a store, once saving has started, or
// after Close.
func (w *Writer) Save() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.pw != nil || w.size > int64(len(w.head)) {
		return
	}
	w.startLocked(w.head[:w.size])
}

// SetOwner sets the owner a save that has not started yet is made for.
func (w *Writer) SetOwner(o tools.Owner) {
	w.mu.Lock()
	w.owner = o
	w.mu.Unlock()
}

// startLocked starts the save, beginning with prefix.
func (w *Writer) startLocked(prefix []byte) {
	if w.store == nil || w.pw != nil {
		return
	}
	pr, pw := io.Pipe()
	w.pw, w.bw, w.done = pw, bufio.NewWriterSize(pw, pipeBuffer), make(chan saved, 1)
	store, owner, ctx := w.store, w.owner, w.ctx
	go func() {
		st, err := store.Save(ctx, owner, pr)
		if err == nil {
			pr.CloseWithError(errors.New("spill: the store stopped reading before the end of the output"))
		} else {
			pr.CloseWithError(err)
		}
		w.done <- saved{st, err}
	}()
	w.sendLocked(prefix)
}

// sendLocked passes p on to the store, up to the save cap.
func (w *Writer) sendLocked(p []byte) {
	if w.pw == nil || w.writeErr != nil || w.cut || len(p) == 0 {
		return
	}
	if w.maxSave > 0 && int64(len(p)) > w.maxSave-w.sent {
		p = p[:w.maxSave-w.sent]
		w.cut = true
	}
	if w.budget != nil {
		if n := max(0, min(w.budget(int64(len(p))), int64(len(p)))); n < int64(len(p)) {
			p = p[:n]
			w.cut = true
		}
	}
	var n int
	var err error
	if w.bw.Buffered() == 0 && len(p) >= pipeBuffer/2 {
		// A large write goes to the store as it is: batching it would
		// only copy it once more.
		n, err = w.pw.Write(p)
	} else {
		n, err = w.bw.Write(p)
	}
	w.sent += int64(n)
	if err != nil {
		w.writeErr = err
	}
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
	w.out.Newlines = w.newlines
	w.out.Head, w.out.Tail = string(w.head), w.tail.String()
	var err error
	if w.pw != nil {
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
		case r.st.Size != w.sent:
			err = fmt.Errorf("spill: the store saved %d of %d bytes", r.st.Size, w.sent)
		default:
			w.out.Stored = r.st
			w.out.Cut = w.cut
		}
	}
	w.out.Err = err
	if w.size <= int64(w.limit) {
		w.out.Text = w.out.Head
		return err
	}
	w.out.Truncated = true
	src := Source{Head: w.out.Head, Tail: w.out.Tail, Size: w.size, Newlines: w.newlines}
	pv, ok := BuildPreview(src, w.limit, w.out.Stored, err)
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
