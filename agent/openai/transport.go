package openai

import (
	"bytes"
	"io"
	"mime"
	"net/http"

	"github.com/openai/openai-go/v3/option"

	"github.com/go-harness/harness/internal/streamwatch"
)

// Bounds on bodies read whole.
const (
	maxErrorBody = 64 << 10
	maxJSONBody  = 64 << 20
)

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

func (x *exchange) middleware(wd *streamwatch.Watch, streaming bool) option.Middleware {
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
			wd.Start()
			resp.Body = wd.Body(resp.Body)
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
