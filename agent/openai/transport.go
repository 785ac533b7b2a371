package openai

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"time"

	"github.com/go-harness/harness"
	"github.com/openai/openai-go/v3/option"
)

// Transport timeouts of the default HTTP client. There is no overall
// timeout: an answer may stream for many minutes, and a timeout on the
// whole exchange would cut it off. A silent stream is caught by the idle
// watchdog instead.
const (
	dialTimeout           = 30 * time.Second
	tlsHandshakeTimeout   = 30 * time.Second
	responseHeaderTimeout = 10 * time.Minute
	idleConnTimeout       = 90 * time.Second
)

// Bounds on bodies read whole.
const (
	maxErrorBody = 64 << 10
	maxJSONBody  = 64 << 20
)

// errIdleTimeout is the cause of a call dropped by the idle watchdog
// ([Config.IdleTimeout]): an error with harness.CodeTimeout, in the chain of
// the model error, whose code is harness.CodeTransport.
func errIdleTimeout() error {
	return &harness.Error{Code: harness.CodeTimeout, Message: "openai: the response went silent for longer than the idle timeout"}
}

// isIdleTimeout reports whether cause, the cause of a call's context, is
// the watchdog's.
func isIdleTimeout(cause error) bool { return errors.Is(cause, harness.CodeTimeout) }

func defaultHTTPClient() *http.Client {
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

// watchdog cancels a call whose response body stays silent for longer
// than idle. It is armed when the response headers arrive (the transport's
// response-header timeout covers the wait before) and re-armed by every
// read that returns data. All methods run on the goroutine that consumes
// the stream; the timer's function only cancels.
type watchdog struct {
	idle   time.Duration
	cancel context.CancelCauseFunc
	timer  *time.Timer
}

func (w *watchdog) start() {
	if w == nil || w.timer != nil {
		return
	}
	w.timer = time.AfterFunc(w.idle, func() { w.cancel(errIdleTimeout()) })
}

func (w *watchdog) touch() {
	if w != nil && w.timer != nil {
		w.timer.Reset(w.idle)
	}
}

func (w *watchdog) stop() {
	if w != nil && w.timer != nil {
		w.timer.Stop()
	}
}

// watchedBody tells the watchdog about every read that brought data.
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

// exchange records what the HTTP layer saw of one call: the status and
// headers, the body of an error reply (read here because not every
// provider's error body is the shape the SDK expects), and the body of a
// plain JSON reply to a streaming request.
type exchange struct {
	// body is the request body.
	body    *requestBody
	status  int
	header  http.Header
	reply   []byte
	bodyErr error
	// jsonReply marks a streaming request answered with a JSON document
	// instead of an event stream; body holds it.
	jsonReply bool
}

func (x *exchange) middleware(wd *watchdog, streaming bool) option.Middleware {
	return func(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
		if x.body != nil {
			// The body is a reader over segments: give its length (so
			// it is not sent chunked) and a way to send it again.
			req.ContentLength = x.body.size
			req.GetBody = func() (io.ReadCloser, error) { return x.body.reader(), nil }
		}
		resp, err := next(req)
		if err != nil || resp == nil || resp.Body == nil {
			return resp, err
		}
		x.status, x.header = resp.StatusCode, resp.Header.Clone()
		if wd != nil {
			wd.start()
			resp.Body = &watchedBody{ReadCloser: resp.Body, touch: wd.touch}
		}
		switch {
		case resp.StatusCode >= 400:
			x.reply, x.bodyErr = readClose(resp.Body, maxErrorBody)
			resp.Body = io.NopCloser(bytes.NewReader(x.reply))
		case streaming && isJSON(resp.Header.Get("Content-Type")):
			x.jsonReply = true
			x.reply, x.bodyErr = readClose(resp.Body, maxJSONBody)
			resp.Body = io.NopCloser(bytes.NewReader(nil))
		}
		return resp, nil
	}
}

func readClose(rc io.ReadCloser, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(rc, limit))
	rc.Close()
	return b, err
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || len(mt) > 5 && mt[len(mt)-5:] == "+json")
}
