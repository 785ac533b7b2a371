package openai

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/go-harness/harness/internal/streamwatch"
)

// userAgent names this adapter to the provider.
const userAgent = "harness-openai (Go)"

// endpoint returns the URL of the chat completions resource under
// baseURL and the headers every request to it carries: the key as a
// bearer token, then the caller's headers (which replace those of the
// same name). On OpenAI's own host, OPENAI_ORG_ID, OPENAI_PROJECT_ID and
// OPENAI_CUSTOM_HEADERS (one "Name: value" a line) come first, as
// OpenAI's own client reads them; no other host gets anything from the
// environment, nor an OpenAI-Organization or OpenAI-Project header.
func endpoint(baseURL, key string, extra http.Header, openAIHost bool, lookup func(string) (string, bool)) (string, http.Header, error) {
	base, err := url.Parse(baseURL)
	if err != nil {
		return "", nil, fmt.Errorf("openai: base URL %q: %w", baseURL, err)
	}
	// The resource is resolved against the base as a directory, so
	// https://host/v1 gives https://host/v1/chat/completions.
	if base.Path != "" && !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	if base.RawPath != "" && !strings.HasSuffix(base.RawPath, "/") {
		base.RawPath += "/"
	}
	u, err := base.Parse("chat/completions")
	if err != nil {
		return "", nil, fmt.Errorf("openai: base URL %q: %w", baseURL, err)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", userAgent)
	if openAIHost {
		if v, ok := lookup("OPENAI_ORG_ID"); ok {
			h.Set("OpenAI-Organization", v)
		}
		if v, ok := lookup("OPENAI_PROJECT_ID"); ok {
			h.Set("OpenAI-Project", v)
		}
		if v, ok := lookup("OPENAI_CUSTOM_HEADERS"); ok {
			for line := range strings.SplitSeq(v, "\n") {
				if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) != "" {
					h.Set(strings.TrimSpace(name), strings.TrimSpace(value))
				}
			}
		}
	}
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		if len(extra[k]) > 0 {
			h.Del(k)
		}
		for _, v := range extra[k] {
			h.Add(k, v)
		}
	}
	if !openAIHost {
		h.Del("OpenAI-Organization")
		h.Del("OpenAI-Project")
	}
	return u.String(), h, nil
}

// post sends the request body to the endpoint and returns the response
// as the exchange saw it (see [exchange.received]). One call is one
// attempt: nothing here retries.
func (m *chatModel) post(ctx context.Context, x *exchange, wd *streamwatch.Watch) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.endpoint, x.body.reader())
	if err != nil {
		return nil, err
	}
	req.Header = m.header.Clone()
	if m.streaming {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	// The body is a reader over segments: give its length (so it is not
	// sent chunked) and a way to send it again (a redirect).
	req.ContentLength = x.body.size
	req.GetBody = func() (io.ReadCloser, error) { return x.body.reader(), nil }
	resp, err := m.httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	return x.received(resp, wd, m.streaming), nil
}

// Bounds on bodies read whole.
const (
	maxErrorBody = 64 << 10
	maxJSONBody  = 64 << 20
)

// exchange records what the HTTP layer saw of one call: the status and
// headers, the body of an error reply, and the body of a plain JSON
// reply to a streaming request.
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

// received records the status and headers of resp, puts the watch on
// its body, and reads the body whole when it is an error reply or a JSON
// document answering a streaming request. It returns resp with a body
// that reads what is left.
func (x *exchange) received(resp *http.Response, wd *streamwatch.Watch, streaming bool) *http.Response {
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
	return resp
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
