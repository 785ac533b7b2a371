// Package streamwatch bounds a streamed model answer in time, for the
// provider adapters: a [Watch] cancels the call's context when the
// response goes silent (no byte at all), when no answer begins (only
// keep-alives while the request waits in the provider's queue), or when
// an answer that has begun stops progressing (keep-alives, but no
// content). Keep-alives prove that the connection lives, not that the
// answer progresses, so they reset only the first bound.
//
// [HTTPClient] is the adapters' default HTTP client, whose timeouts
// leave the answer itself to the watch.
//
// It imports harness only.
package streamwatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/go-harness/harness"
)

// Config holds the bounds; a zero or negative duration is no bound.
type Config struct {
	// Idle bounds the time without any byte from the server.
	Idle time.Duration
	// Queue bounds the time from the response's start to the first
	// piece of the answer.
	Queue time.Duration
	// Stall bounds the time between pieces of the answer once it has
	// begun.
	Stall time.Duration
}

// Watch is the watchdog of one call. Its methods run on the goroutine
// that reads the response; its timers only cancel the call's context,
// with a cause [Timeout] recognises.
type Watch struct {
	cfg      Config
	cancel   context.CancelCauseFunc
	idle     *time.Timer
	progress *time.Timer
	begun    bool
}

// New returns a watch that cancels with cancel; it starts with [Watch.Start].
func New(cfg Config, cancel context.CancelCauseFunc) *Watch {
	return &Watch{cfg: cfg, cancel: cancel}
}

// errWatch marks the causes a watch cancels with.
var errWatch = errors.New("streamwatch")

func (w *Watch) fire(message string) func() {
	return func() {
		w.cancel(&harness.Error{Code: harness.CodeTimeout, Message: message, Err: errWatch})
	}
}

// Start arms the watch when the response headers arrive. Calling it
// again does nothing.
func (w *Watch) Start() {
	if w == nil || w.idle != nil || w.progress != nil {
		return
	}
	if d := w.cfg.Idle; d > 0 {
		w.idle = time.AfterFunc(d, w.fire(fmt.Sprintf("no data from the model for %s; the stalled response was dropped", d)))
	}
	if d := w.cfg.Queue; d > 0 {
		w.progress = time.AfterFunc(d, w.fire(fmt.Sprintf("no answer began within %s (only keep-alives came while the request waited); the call was dropped", d)))
	}
}

// Bytes tells the watch that data arrived.
func (w *Watch) Bytes() {
	if w != nil && w.idle != nil {
		w.idle.Reset(w.cfg.Idle)
	}
}

// Content tells the watch that a piece of the answer arrived: text,
// reasoning, a piece of a tool call, usage, the finish reason.
func (w *Watch) Content() {
	if w == nil {
		return
	}
	if !w.begun {
		w.begun = true
		if w.progress != nil {
			w.progress.Stop()
			w.progress = nil
		}
		if d := w.cfg.Stall; d > 0 {
			w.progress = time.AfterFunc(d, w.fire(fmt.Sprintf("no content from the model for %s, only keep-alives; the stalled answer was dropped", d)))
		}
		return
	}
	if w.progress != nil {
		w.progress.Reset(w.cfg.Stall)
	}
}

// Stop disarms the watch.
func (w *Watch) Stop() {
	if w == nil {
		return
	}
	if w.idle != nil {
		w.idle.Stop()
	}
	if w.progress != nil {
		w.progress.Stop()
	}
}

// Timeout returns the error a watch cancelled a call with, when cause
// (context.Cause of the call's context) is one: a *harness.Error with
// harness.CodeTimeout that says which bound passed.
func Timeout(cause error) (*harness.Error, bool) {
	var he *harness.Error
	if errors.As(cause, &he) && errors.Is(he.Err, errWatch) {
		return he, true
	}
	return nil, false
}

// Body returns rc that tells the watch of every read that brings data
// ([Watch.Bytes]); a nil watch returns rc.
func (w *Watch) Body(rc io.ReadCloser) io.ReadCloser {
	if w == nil {
		return rc
	}
	return &watchedBody{ReadCloser: rc, touch: w.Bytes}
}

type watchedBody struct {
	io.ReadCloser
	touch func()
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.touch()
	}
	return n, err
}

// Transport timeouts of [HTTPClient]. There is no overall timeout: an
// answer may stream for many minutes, and a timeout on the whole
// exchange would cut it off. A silent or stalled stream is the watch's.
const (
	dialTimeout           = 30 * time.Second
	tlsHandshakeTimeout   = 30 * time.Second
	responseHeaderTimeout = 10 * time.Minute
	idleConnTimeout       = 90 * time.Second
)

// HTTPClient returns a new HTTP client for model calls: dial, TLS
// handshake and response-header timeouts, proxies from the environment,
// and no overall timeout.
func HTTPClient() *http.Client {
	d := &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       idleConnTimeout,
		TLSHandshakeTimeout:   tlsHandshakeTimeout,
		ResponseHeaderTimeout: responseHeaderTimeout,
		ExpectContinueTimeout: time.Second,
	}}
}
