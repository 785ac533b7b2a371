package openaitest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
)

// Request is one request the server received.
type Request struct {
	Header http.Header
	Path   string
	Body   []byte
}

// JSON returns the request body decoded, or nil when it is not a JSON
// object.
func (r Request) JSON() map[string]any {
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		return nil
	}
	return m
}

// Messages returns the request's messages ("messages" of the body), or
// nil when it has none.
func (r Request) Messages() []map[string]any {
	var out []map[string]any
	msgs, _ := r.JSON()["messages"].([]any)
	for _, m := range msgs {
		if mm, ok := m.(map[string]any); ok {
			out = append(out, mm)
		}
	}
	return out
}

// Server is a fake OpenAI-compatible endpoint. It answers requests to
// /chat/completions (under any prefix, such as DeepSeek's /beta) with its
// scripted replies, in order, and records
// every request. When the script runs out it answers 400 with a JSON
// error, so a test that makes one call too many fails clearly instead of
// retrying; any other path is a 404 and takes no reply.
type Server struct {
	// URL is the base URL to give a client, "http://127.0.0.1:port"
	// (the client appends /chat/completions).
	URL string

	srv      *httptest.Server
	mu       sync.Mutex
	replies  []Reply
	requests []Request
}

// NewServer starts a server with a script of replies. Close it when the
// test ends.
func NewServer(replies ...Reply) *Server {
	s := &Server{replies: replies}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close shuts the server down, waiting for requests in flight.
func (s *Server) Close() { s.srv.Close() }

// Add appends replies to the script.
func (s *Server) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replies = append(s.replies, replies...)
}

// Requests returns the requests received so far, oldest first.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.mu.Lock()
	s.requests = append(s.requests, Request{Header: r.Header.Clone(), Path: r.URL.Path, Body: body})
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		s.mu.Unlock()
		Reply{Status: http.StatusNotFound, Body: `{"error":{"message":"no such path"}}`}.ServeHTTP(w, r)
		return
	}
	if len(s.replies) == 0 {
		s.mu.Unlock()
		Reply{Status: http.StatusBadRequest, Body: `{"error":{"message":"the test script has no more replies"}}`}.ServeHTTP(w, r)
		return
	}
	rep := s.replies[0]
	s.replies = s.replies[1:]
	s.mu.Unlock()
	rep.ServeHTTP(w, r)
}
