package shellkit

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/go-harness/harness/internal/spillwriter"
	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/internal/units"
	"github.com/go-harness/harness/tools"
)

// Capture collects one output stream in bounded memory for the shell's
// view of it: a spillwriter.Writer keeps the first limit bytes and the last
// limit bytes and, once the stream outgrows limit, copies it whole, as it
// arrives, to the output store (when there is one, up to maxSpill bytes),
// so that the model can be shown the head and tail and read the rest
// later. Capture adds the shell's accounting: the bytes written so far,
// the owner of the stream, and an end after which writes are dropped (a
// process may still print after its result was taken). It is safe for
// concurrent use.
type Capture struct {
	mu       sync.Mutex
	limit    int
	w        *spillwriter.Writer
	noStore  bool
	owner    tools.Owner
	total    int64
	finished *SpillInfo
	out      spillwriter.Output
	// Live, when set, sees every write as it arrives (the call's
	// progress report); it must not block.
	Live func(p []byte)
}

// SpillInfo says what became of the whole stream.
type SpillInfo struct {
	// Stored is set when the stream was saved (maybe only its first
	// part, when Cut).
	Stored *tools.Stored
	Err    error
	Cut    bool
	// NoStore reports that there was nowhere to save it.
	NoStore bool
}

// NewCapture returns a Capture showing up to limit bytes that spills to
// store (nil: nowhere) under owner. ctx bounds the store's Save.
func NewCapture(ctx context.Context, limit int, store tools.OutputStore, owner tools.Owner, maxSpill int64) *Capture {
	return NewBudgetCapture(ctx, limit, store, owner, maxSpill, nil)
}

// NewBudgetCapture is NewCapture whose spill also spends a budget shared
// with other captures (spillwriter.WithBudget): a background job's, the
// session's job registry's total-output cap. A nil take spends none.
func NewBudgetCapture(ctx context.Context, limit int, store tools.OutputStore, owner tools.Owner, maxSpill int64, take func(int64) int64) *Capture {
	var budget spillwriter.WriterOption
	if take != nil {
		budget = spillwriter.WithBudget(take)
	}
	w, err := spillwriter.NewWriter(ctx, store, owner, limit, spillwriter.WithMaxSave(maxSpill), budget)
	if err != nil {
		// The options were validated when the tool was built (the
		// output limit is at least spillwriter.MinThreshold, the spill cap
		// positive), so this is not reached; a writer with the defaults
		// keeps the stream working if it ever is.
		w, _ = spillwriter.NewWriter(ctx, store, owner, spillwriter.DefaultThreshold)
		limit = spillwriter.DefaultThreshold
	}
	return &Capture{limit: limit, w: w, noStore: store == nil, owner: owner}
}

// Write keeps what it must of p and forwards p to the store once the
// stream is too long to show whole. It never fails: a store failure is
// remembered and reported by Finish, and writes after Finish are dropped.
func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(p) == 0 || c.finished != nil {
		return len(p), nil
	}
	c.total += int64(len(p))
	_, _ = c.w.Write(p) // fails only once closed, which Finish rules out
	if c.Live != nil {
		c.Live(p)
	}
	return len(p), nil
}

// Total returns the number of bytes written.
func (c *Capture) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Owner returns the owner the stream is saved under.
func (c *Capture) Owner() tools.Owner {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.owner
}

// SetOwner changes the owner a later spill is saved under.
func (c *Capture) SetOwner(o tools.Owner) {
	c.mu.Lock()
	c.owner = o
	c.w.SetOwner(o)
	c.mu.Unlock()
}

// Finish ends the stream. When force is set and the stream was not saved
// yet, it is saved now (the whole of it is in memory then). Finish waits
// for the store and returns what became of the stream; later writes are
// ignored.
func (c *Capture) Finish(force bool) SpillInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished != nil {
		return *c.finished
	}
	if force && c.total > 0 {
		c.w.Save()
	}
	_ = c.w.Close() // the error is in the Output
	c.out = c.w.Output()
	info := SpillInfo{NoStore: c.noStore, Err: c.out.Err, Cut: c.out.Cut}
	if c.out.Err == nil && c.out.Stored.Locator != "" {
		st := c.out.Stored
		info.Stored = &st
	}
	c.finished = &info
	return info
}

// Take ends the stream and returns what the model sees of it, cut to
// budget bytes, with what became of the whole stream. A stream cut for
// the view is saved even when it is shorter than the limit, so that all
// of it can be read.
func (c *Capture) Take(budget int) (Shown, SpillInfo) {
	budget = min(budget, c.limit)
	info := c.Finish(c.Total() > int64(budget))
	return c.view(budget), info
}

// Shown is what the model sees of a stream.
type Shown struct {
	Head    string
	Tail    string
	Omitted int64
	Total   int64
	Lines   int64
}

// view returns the finished stream cut to budget bytes: whole when it
// fits, otherwise a head (a fifth of the budget) and a tail, cut at line
// boundaries where possible.
func (c *Capture) view(budget int) Shown {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.out
	s := Shown{Total: out.Size, Lines: out.Newlines}
	if out.Size <= int64(budget) {
		s.Head = out.Head
		return s
	}
	s.Head = textcut.HeadLines(out.Head, budget/5)
	s.Tail = textcut.TailLines(out.Tail, budget-len(s.Head))
	s.Omitted = out.Size - int64(len(s.Head)) - int64(len(s.Tail))
	return s
}

// Split shares budget between two streams of sizes a and b: each gets
// what it needs up to half, and what one leaves goes to the other.
func Split(budget int, a, b int64) (int, int) {
	half := int64(budget / 2)
	x := min(a, half)
	y := min(b, int64(budget)-x)
	x = min(a, int64(budget)-y)
	return int(x), int(y)
}

// WriteStream appends a stream's view and its spill note to w.
func WriteStream(w *strings.Builder, s Shown, info SpillInfo, what string) {
	w.WriteString(Clean(s.Head))
	if s.Omitted > 0 {
		EnsureNewline(w)
		fmt.Fprintf(w, "[... %s omitted ...]\n", units.Bytes(s.Omitted))
		w.WriteString(Clean(s.Tail))
	}
	EnsureNewline(w)
	if s.Omitted <= 0 {
		return
	}
	switch {
	case info.Stored != nil && info.Cut:
		fmt.Fprintf(w, "[%s was %s (%d lines); only its first %s were saved, as %s: read them with the read tool (file_path %q, offset and limit in lines).]\n",
			what, units.Bytes(s.Total), s.Lines, units.Bytes(info.Stored.Size), info.Stored.Locator, info.Stored.Locator)
	case info.Stored != nil:
		fmt.Fprintf(w, "[The whole %s (%s, %d lines) is saved as %s: read it with the read tool (file_path %q, offset and limit in lines).]\n",
			what, units.Bytes(s.Total), s.Lines, info.Stored.Locator, info.Stored.Locator)
	case info.Err != nil:
		fmt.Fprintf(w, "[The whole %s (%s) could not be saved (%v). To see all of it, run the command again with its output redirected to a file, then read the file.]\n",
			what, units.Bytes(s.Total), info.Err)
	default:
		fmt.Fprintf(w, "[The whole %s (%s) was not saved. To see all of it, run the command again with its output redirected to a file, then read the file.]\n",
			what, units.Bytes(s.Total))
	}
}

// EnsureNewline ends what w holds with a newline, unless it is empty.
func EnsureNewline(w *strings.Builder) {
	if w.Len() > 0 && !strings.HasSuffix(w.String(), "\n") {
		w.WriteByte('\n')
	}
}
