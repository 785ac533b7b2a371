package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"unicode/utf8"
)

// PrefixCache emulates the prefix cache of DeepSeek's API as DeepSeek
// documents it, so that a test can measure what a sequence of requests
// costs: put it in front of a [Server] ([PrefixCache.Server]) or of any
// handler ([PrefixCache.Handler]), and every chat completion is answered
// with the prompt's cache hits and misses in its usage, in DeepSeek's
// fields (prompt_tokens, prompt_cache_hit_tokens,
// prompt_cache_miss_tokens), which the openai adapter reads and the
// pricing package prices. The zero PrefixCache is ready to use with
// DeepSeek's parameters.
//
// # The model it follows
//
// The prompt of a request is its tool definitions followed by its
// messages, byte for byte as the request body spells them (a chat
// template puts the tool definitions at the start of the prompt too),
// without the messages array's closing bracket: so the prompt of a
// request that extends an earlier conversation begins with the earlier
// request's whole prompt, as a rendered chat does. Its length in tokens
// is a documented, deterministic estimate, not a tokenizer: one token
// per BytesPerToken bytes, a partial last token counting as one.
//
// The cache stores prompts in units of UnitTokens tokens. After each
// request it holds the prompt's prefix at every unit boundary and the
// whole prompt (to its last whole token). A later request hits the
// longest stored prefix that its own prompt begins with, provided that
// prefix is at least one whole unit; every token after it is a miss.
// Prefixes are kept per model (a request's "model" field), as 64-bit
// hashes chained unit by unit (a collision, vanishingly unlikely in a
// test's few thousand requests, would count a miss as a hit), and never
// expire. The model's answer is not stored: the next request's copy of it
// is a miss, where DeepSeek may have cached the output too.
//
// With Window set, a prompt longer than Window tokens is refused with
// status 400 and DeepSeek's context-length error, as the real endpoint
// refuses it, and is not stored.
type PrefixCache struct {
	// UnitTokens is the size of a storage unit in tokens; zero means 64,
	// DeepSeek's.
	UnitTokens int
	// BytesPerToken is the token estimate: zero means 4.
	BytesPerToken int
	// Window is the context window in tokens; zero means none.
	Window int

	mu    sync.Mutex
	seed  maphash.Seed
	units map[prefixDigest]struct{}
	// ends holds, per unit-boundary prefix, the tails of whole prompts
	// stored after it (shorter than a unit).
	ends  map[prefixDigest][]string
	stats CacheStats
}

// CacheUse is what the cache made of one request's prompt.
type CacheUse struct {
	// PromptTokens is the prompt's length in tokens: HitTokens plus
	// MissTokens.
	PromptTokens int64 `json:"prompt_tokens"`
	HitTokens    int64 `json:"prompt_cache_hit_tokens"`
	MissTokens   int64 `json:"prompt_cache_miss_tokens"`
}

// CacheStats sums what the cache measured.
type CacheStats struct {
	// Requests counts the prompts measured; Refused those over the
	// window, which count in nothing else.
	Requests int
	Refused  int
	CacheUse
	// PeakTokens is the longest prompt measured, refused ones included.
	PeakTokens int64
}

// prefixDigest names a prefix: its length in units and a hash chained
// over its units.
type prefixDigest struct {
	units int
	hash  uint64
}

// WindowError is the error of a prompt longer than the cache's window.
type WindowError struct {
	Window, Tokens int64
}

func (e *WindowError) Error() string {
	return fmt.Sprintf("This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, 0 in the completion). Please reduce the length of the messages or completion.", e.Window, e.Tokens, e.Tokens)
}

func (c *PrefixCache) unit() int {
	if c.UnitTokens > 0 {
		return c.UnitTokens
	}
	return 64
}

func (c *PrefixCache) bytesPerToken() int {
	if c.BytesPerToken > 0 {
		return c.BytesPerToken
	}
	return 4
}

// Tokens returns the token estimate of n bytes of prompt.
func (c *PrefixCache) Tokens(n int) int64 {
	b := c.bytesPerToken()
	return int64((n + b - 1) / b)
}

// Stats returns the sums of the requests measured so far.
func (c *PrefixCache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// promptOf returns the model and the prompt of a chat completion request
// body: its tools followed by its messages, as spelled in the body.
func promptOf(body []byte) (string, promptText, error) {
	fields, ok := topLevel(body, "model", "messages", "tools")
	if !ok {
		return "", promptText{}, fmt.Errorf("openaitest: the request body is not a JSON object")
	}
	var modelName string
	if fields[0] != nil && json.Unmarshal(fields[0], &modelName) != nil {
		return "", promptText{}, fmt.Errorf("openaitest: the request's model is not a string")
	}
	msgs, tools := fields[1], fields[2]
	if len(msgs) < 2 || msgs[0] != '[' {
		return "", promptText{}, fmt.Errorf("openaitest: the request has no messages array")
	}
	// The closing bracket is left out, so that a request's prompt
	// begins with the whole prompt of the request it extends, as a chat
	// template's rendering of a longer conversation begins with the
	// shorter one's.
	msgs = msgs[:len(msgs)-1]
	if len(tools) == 0 || tools[0] != '[' {
		tools = nil
	}
	return modelName, promptText{tools, msgs}, nil
}

// promptText is a prompt in two parts, read as one text without copying
// it: request bodies are megabytes.
type promptText [2][]byte

func (p promptText) len() int { return len(p[0]) + len(p[1]) }

// slice returns the prompt's bytes i to j, copied into scratch only when
// they straddle the parts.
func (p promptText) slice(i, j int, scratch []byte) []byte {
	n := len(p[0])
	switch {
	case j <= n:
		return p[0][i:j]
	case i >= n:
		return p[1][i-n : j-n]
	}
	return append(append(scratch[:0], p[0][i:]...), p[1][:j-n]...)
}

// topLevel returns the raw values of the named members of the JSON
// object body (nil for a missing one; the last of duplicates), without
// decoding the rest: request bodies are megabytes of history. It checks
// the object's structure, not every value's syntax, and reports false
// when the structure is broken. Names are matched exactly.
func topLevel(body []byte, names ...string) ([][]byte, bool) {
	out := make([][]byte, len(names))
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return nil, false
	}
	i = skipSpace(body, i+1)
	if i < len(body) && body[i] == '}' {
		return out, skipSpace(body, i+1) == len(body)
	}
	for {
		if i >= len(body) || body[i] != '"' {
			return nil, false
		}
		end := skipString(body, i)
		if end < 0 {
			return nil, false
		}
		var key string
		if bytes.IndexByte(body[i:end], '\\') >= 0 || !utf8.Valid(body[i:end]) {
			if json.Unmarshal(body[i:end], &key) != nil {
				return nil, false
			}
		} else {
			key = string(body[i+1 : end-1])
		}
		i = skipSpace(body, end)
		if i >= len(body) || body[i] != ':' {
			return nil, false
		}
		start := skipSpace(body, i+1)
		end = skipValue(body, start)
		if end < 0 {
			return nil, false
		}
		for k, n := range names {
			if n == key {
				out[k] = body[start:end]
			}
		}
		i = skipSpace(body, end)
		if i >= len(body) {
			return nil, false
		}
		switch body[i] {
		case ',':
			i = skipSpace(body, i+1)
		case '}':
			return out, skipSpace(body, i+1) == len(body)
		default:
			return nil, false
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string starting at i, or
// -1 when it does not end.
func skipString(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// skipValue returns the index just past the value starting at i, or -1
// when there is none: strings and nesting are followed, literals are
// taken as they stand.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		var stack []byte
		for j := i; j < len(b); j++ {
			switch c := b[j]; c {
			case '"':
				k := skipString(b, j)
				if k < 0 {
					return -1
				}
				j = k - 1
			case '{', '[':
				stack = append(stack, c)
			case '}', ']':
				if len(stack) == 0 || (c == '}') != (stack[len(stack)-1] == '{') {
					return -1
				}
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && bytes.IndexByte([]byte(",}] \t\r\n"), b[j]) < 0 {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// Use measures the prompt of a chat completion request body, as the
// endpoint would: it returns the prompt's hits and misses and stores
// its prefixes. A body that is not a chat completion request is an
// error; a prompt over the window is a *WindowError and is not stored.
func (c *PrefixCache) Use(body []byte) (CacheUse, error) {
	modelName, prompt, err := promptOf(body)
	if err != nil {
		return CacheUse{}, err
	}
	return c.use(modelName, prompt)
}

func (c *PrefixCache) use(modelName string, prompt promptText) (CacheUse, error) {
	size := prompt.len()
	tokens := c.Tokens(size)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stats.PeakTokens = max(c.stats.PeakTokens, tokens)
	if c.Window > 0 && tokens > int64(c.Window) {
		c.stats.Refused++
		return CacheUse{}, &WindowError{Window: int64(c.Window), Tokens: tokens}
	}
	if c.units == nil {
		c.seed = maphash.MakeSeed()
		c.units = map[prefixDigest]struct{}{}
		c.ends = map[prefixDigest][]string{}
	}
	bpt := c.bytesPerToken()
	unitBytes := c.unit() * bpt
	d := prefixDigest{hash: maphash.String(c.seed, modelName)}
	matching := true
	hitUnits := 0
	var hitDigest prefixDigest
	n := 0
	scratch := make([]byte, 0, unitBytes)
	for ; (n+1)*unitBytes <= size; n++ {
		d = c.next(d, prompt.slice(n*unitBytes, (n+1)*unitBytes, scratch))
		if matching {
			if _, ok := c.units[d]; ok {
				hitUnits, hitDigest = n+1, d
			} else {
				matching = false
			}
		}
		c.units[d] = struct{}{}
	}
	hit := hitUnits * unitBytes
	if hitUnits > 0 {
		best := 0
		for _, tail := range c.ends[hitDigest] {
			if len(tail) > best && hit+len(tail) <= size && string(prompt.slice(hit, hit+len(tail), scratch)) == tail {
				best = len(tail)
			}
		}
		hit += best
	}
	// The whole prompt, to its last whole token, is stored too.
	if tail := (size - n*unitBytes) / bpt * bpt; n > 0 && tail > 0 {
		t := string(prompt.slice(n*unitBytes, n*unitBytes+tail, scratch))
		found := false
		for _, e := range c.ends[d] {
			if e == t {
				found = true
				break
			}
		}
		if !found {
			c.ends[d] = append(c.ends[d], t)
		}
	}
	u := CacheUse{PromptTokens: tokens, HitTokens: int64(hit / bpt)}
	u.MissTokens = u.PromptTokens - u.HitTokens
	c.stats.Requests++
	c.stats.PromptTokens += u.PromptTokens
	c.stats.HitTokens += u.HitTokens
	c.stats.MissTokens += u.MissTokens
	return u, nil
}

// next chains a unit onto the digest of the prefix before it.
func (c *PrefixCache) next(prev prefixDigest, unit []byte) prefixDigest {
	var h maphash.Hash
	h.SetSeed(c.seed)
	var b [8]byte
	for i := range b {
		b[i] = byte(prev.hash >> (8 * i))
	}
	h.Write(b[:])
	h.Write(unit)
	return prefixDigest{units: prev.units + 1, hash: h.Sum64()}
}

// Handler returns next with the cache in front: a POST to
// /chat/completions is measured before next answers it, and the usage of
// next's successful answer (the top-level usage of a streamed chunk, or
// of a JSON completion) is given the prompt's tokens, hits and misses; an
// answer without usage gets one, with the completion tokens estimated
// from what it streamed. A prompt over the window is answered 400 with
// DeepSeek's error document and never reaches next. Requests that are
// not chat completions pass through untouched.
func (c *PrefixCache) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/chat/completions" {
			next.ServeHTTP(w, r)
			return
		}
		body, _ := readBody(r)
		r.Body = io.NopCloser(bytes.NewReader(body))
		use, err := c.Use(body)
		if we, ok := err.(*WindowError); ok {
			doc, _ := json.Marshal(map[string]any{"error": map[string]any{
				"message": we.Error(), "type": "invalid_request_error", "param": nil, "code": "invalid_request_error"}})
			Reply{Status: http.StatusBadRequest, Body: string(doc)}.ServeHTTP(w, r)
			return
		}
		if err != nil {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		res := rec.Result()
		out := rec.Body.Bytes()
		if res.StatusCode == http.StatusOK {
			switch ct := res.Header.Get("Content-Type"); {
			case strings.HasPrefix(ct, "text/event-stream"):
				out = withStreamUsage(out, use, c.bytesPerToken())
			case strings.HasPrefix(ct, "application/json"):
				out = withBodyUsage(out, use)
			}
		}
		for k, vs := range res.Header {
			w.Header()[k] = vs
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(res.StatusCode)
		w.Write(out)
	})
}

// readBody reads a request's body whole, in one allocation when its
// length is known.
func readBody(r *http.Request) ([]byte, error) {
	var b bytes.Buffer
	if r.ContentLength > 0 {
		b.Grow(int(r.ContentLength) + 1)
	}
	_, err := b.ReadFrom(r.Body)
	return b.Bytes(), err
}

// Server starts a Server, as NewServer does, with the cache in front of
// it. Close it when the test ends.
func (c *PrefixCache) Server(replies ...Reply) *Server {
	s := &Server{replies: replies}
	s.srv = httptest.NewServer(c.Handler(http.HandlerFunc(s.serve)))
	s.URL = s.srv.URL
	return s
}

// withStreamUsage returns a server-sent event stream whose usage carries
// use: every data event with a usage object gets the prompt's counts;
// a stream with none gets a usage chunk before its [DONE] (or at its
// end), its completion tokens estimated from the deltas it streamed.
// Anything that is not a JSON data event is kept as it is.
func withStreamUsage(stream []byte, use CacheUse, bytesPerToken int) []byte {
	var out bytes.Buffer
	found := false
	streamed := 0
	lines := bytes.SplitAfter(stream, []byte("\n"))
	inserted := false
	for _, line := range lines {
		payload, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			out.Write(line)
			continue
		}
		trimmed := bytes.TrimSpace(payload)
		if bytes.Equal(trimmed, []byte("[DONE]")) {
			if !found && !inserted {
				writeUsageEvent(&out, use, streamed, bytesPerToken)
				inserted = true
			}
			out.Write(line)
			continue
		}
		var ev map[string]any
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		if dec.Decode(&ev) != nil || dec.More() {
			out.Write(line)
			continue
		}
		streamed += streamedBytes(ev)
		u, ok := ev["usage"].(map[string]any)
		if !ok {
			out.Write(line)
			continue
		}
		found = true
		setUsage(u, use)
		b, err := json.Marshal(ev)
		if err != nil {
			out.Write(line)
			continue
		}
		out.WriteString("data: ")
		out.Write(b)
		if bytes.HasSuffix(line, []byte("\n")) {
			out.WriteString("\n")
		}
	}
	if !found && !inserted {
		if out.Len() > 0 && !bytes.HasSuffix(out.Bytes(), []byte("\n\n")) {
			if !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
				out.WriteString("\n")
			}
			out.WriteString("\n")
		}
		writeUsageEvent(&out, use, streamed, bytesPerToken)
	}
	return out.Bytes()
}

func writeUsageEvent(out *bytes.Buffer, use CacheUse, streamed, bytesPerToken int) {
	completion := int64((streamed + bytesPerToken - 1) / bytesPerToken)
	u := map[string]any{"completion_tokens": completion}
	setUsage(u, use)
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1, "model": "test-model", "choices": []any{}, "usage": u})
	out.WriteString("data: ")
	out.Write(b)
	out.WriteString("\n\n")
}

// setUsage writes the prompt's counts into a usage object, and a total
// that adds the completion tokens it has.
func setUsage(u map[string]any, use CacheUse) {
	u["prompt_tokens"] = use.PromptTokens
	u["prompt_cache_hit_tokens"] = use.HitTokens
	u["prompt_cache_miss_tokens"] = use.MissTokens
	var completion int64
	if n, ok := u["completion_tokens"].(json.Number); ok {
		completion, _ = n.Int64()
	} else if n, ok := u["completion_tokens"].(int64); ok {
		completion = n
	}
	u["total_tokens"] = use.PromptTokens + completion
}

// streamedBytes counts the bytes of answer a chunk streams: its text,
// reasoning and tool-call pieces.
func streamedBytes(ev map[string]any) int {
	n := 0
	choices, _ := ev["choices"].([]any)
	for _, ch := range choices {
		c, _ := ch.(map[string]any)
		d, _ := c["delta"].(map[string]any)
		for _, k := range []string{"content", "reasoning_content"} {
			if s, ok := d[k].(string); ok {
				n += len(s)
			}
		}
		calls, _ := d["tool_calls"].([]any)
		for _, tc := range calls {
			call, _ := tc.(map[string]any)
			f, _ := call["function"].(map[string]any)
			for _, k := range []string{"name", "arguments"} {
				if s, ok := f[k].(string); ok {
					n += len(s)
				}
			}
		}
	}
	return n
}

// withBodyUsage gives a JSON completion's usage the prompt's counts; a
// body that is not a JSON object is kept as it is.
func withBodyUsage(body []byte, use CacheUse) []byte {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if dec.Decode(&doc) != nil || doc == nil {
		return body
	}
	u, ok := doc["usage"].(map[string]any)
	if !ok {
		u = map[string]any{}
		doc["usage"] = u
	}
	setUsage(u, use)
	b, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	return b
}
