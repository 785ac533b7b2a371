package mcp

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sseThrough runs stream through an sseAnswer for the answer to req,
// with a frame limit of frame bytes, and returns what the SDK reads and
// the spools.
func sseThrough(t *testing.T, stream string, frame int, maxResult int64, req postedRequest) (string, *spools) {
	t.Helper()
	sp := &spools{}
	rules := bigRules{frame: frame, maxResult: maxResult, logger: slog.New(slog.DiscardHandler), server: "s", spools: sp}
	a := newSSEAnswer(io.NopCloser(strings.NewReader(stream)), rules, req)
	a.limit = frame // the slack would hide the small frames of these tests
	out, err := io.ReadAll(a)
	require.NoError(t, err)
	require.NoError(t, a.Close())
	return string(out), sp
}

func spooledText(t *testing.T, sp *spools, out string) (string, *spooled) {
	t.Helper()
	i := strings.Index(out, `"go-harness/spooled":"`)
	require.GreaterOrEqual(t, i, 0, "a stand-in in %q", out)
	name := out[i+len(`"go-harness/spooled":"`):]
	name = name[:strings.IndexByte(name, '"')]
	s := sp.take(name)
	require.NotNil(t, s)
	b, err := os.ReadFile(s.path)
	require.NoError(t, err)
	os.Remove(s.path)
	return string(b), s
}

func TestSSEAnswerSmallEventsPassThrough(t *testing.T) {
	stream := "id: 1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n: a comment\n\ndata: a\ndata: b\n\ndata: no end"
	out, _ := sseThrough(t, stream, 1<<20, 4<<20, postedRequest{key: "1", call: true})
	assert.Equal(t, stream, out)
}

func TestSSEAnswerSpoolsALargeToolResult(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 300<<10) + `"}]}}`
	// One data line longer than the read buffer, then the message split
	// over two data lines; a small event follows each.
	for _, c := range []struct{ name, data, want string }{
		{"one line", "data: " + msg + "\n", msg},
		{"two lines", "data: " + msg[:1000] + "\ndata:" + msg[1000:] + "\r\n", msg[:1000] + "\n" + msg[1000:]},
	} {
		t.Run(c.name, func(t *testing.T) {
			stream := "id: 41\nevent: message\n" + c.data + "\nid: 42\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n\n"
			out, sp := sseThrough(t, stream, 100<<10, 4<<20, postedRequest{key: "7", call: true})
			assert.True(t, strings.HasPrefix(out, "id: 41\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"content\":[],\"_meta\":{\"go-harness/spooled\":\""), "%.300q", out)
			assert.True(t, strings.HasSuffix(out, "\"}}}\n\nid: 42\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n\n"), "%.300q", out)
			text, s := spooledText(t, sp, out)
			assert.True(t, text == c.want, "the spool holds the message exactly (%d bytes, want %d)", len(text), len(c.want))
			assert.Equal(t, int64(len(c.want)), s.size)
			assert.False(t, s.cut)
		})
	}
}

func TestSSEAnswerRefusesOrDropsOtherLargeMessages(t *testing.T) {
	big := strings.Repeat("y", 10<<10)
	answer := `{"jsonrpc":"2.0","id":3,"result":{"contents":[{"text":"` + big + `"}]}}`
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + big + `"}}`
	typed := `{"jsonrpc":"2.0","id":9,"result":{"content":[{"type":"text","text":"` + big + `"}]}}`
	stream := "data: " + answer + "\n\ndata: " + note + "\n\nevent: other\ndata: " + typed + "\n\ndata: {}\n\n"
	before, _ := os.ReadDir(os.TempDir())
	out, sp := sseThrough(t, stream, 4<<10, 1<<20, postedRequest{key: "9", call: true})
	assert.Equal(t, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"error\":{\"code\":-32603,\"message\":\"the server's answer was 10.1 KiB, more than the 4.0 KiB this client reads for anything but a tool result\"}}\n\n"+
		"data: {}\n\n", out, "an answer to something else is refused, a notification and an event of another type dropped")
	assert.Empty(t, sp.m)
	after, _ := os.ReadDir(os.TempDir())
	assert.Equal(t, len(before), len(after), "no spool file is left")
}

func TestSSEAnswerCutsAnEndlessEvent(t *testing.T) {
	head := `data: {"jsonrpc":"2.0","id":"c1","result":{"content":[{"type":"text","text":"`
	r := io.MultiReader(strings.NewReader(head), endless('z'))
	sp := &spools{}
	rules := bigRules{frame: 8 << 10, maxResult: 1 << 20, logger: slog.New(slog.DiscardHandler), server: "s", spools: sp}
	a := newSSEAnswer(io.NopCloser(r), rules, postedRequest{key: `"c1"`, call: true})
	out, err := io.ReadAll(a)
	require.NoError(t, err)
	text, s := spooledText(t, sp, string(out))
	assert.True(t, s.cut)
	assert.Equal(t, int64(1<<20), s.size)
	assert.Len(t, text, 1<<20)
	assert.True(t, strings.HasPrefix(text, head[len("data: "):]))
}

type endless byte

func (e endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}

func TestJSONAnswer(t *testing.T) {
	msg := `{"jsonrpc":"2.0","id":5,"result":{"content":[{"type":"text","text":"` + strings.Repeat("w", 20<<10) + `"}]}}`
	sp := &spools{}
	rules := bigRules{frame: 8 << 10, maxResult: 1 << 20, logger: slog.New(slog.DiscardHandler), server: "s", spools: sp}
	read := func(body string, req postedRequest) (string, error) {
		a := &jsonAnswer{body: io.NopCloser(strings.NewReader(body)), rules: rules, req: req}
		b, err := io.ReadAll(a)
		return string(b), err
	}
	out, err := read(`{"jsonrpc":"2.0","id":5,"result":{}}`, postedRequest{key: "5", call: true})
	require.NoError(t, err)
	assert.Equal(t, `{"jsonrpc":"2.0","id":5,"result":{}}`, out)

	out, err = read(msg, postedRequest{key: "5", call: true})
	require.NoError(t, err)
	text, _ := spooledText(t, sp, out)
	assert.True(t, text == msg)

	out, err = read(msg, postedRequest{key: "5"})
	require.NoError(t, err)
	assert.Equal(t, `{"jsonrpc":"2.0","id":5,"error":{"code":-32603,"message":"the server's answer was more than the 8.0 KiB this client reads for anything but a tool result"}}`, out)
	_, err = read(msg, postedRequest{})
	assert.ErrorContains(t, err, "larger than the 8.0 KiB read of one answer")
}

// FuzzSSEAnswer: a stream whose events are all under the limit reaches
// the SDK byte for byte; any stream is read to its end without a panic,
// and what is spooled is removed.
func FuzzSSEAnswer(f *testing.F) {
	f.Add("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", 64)
	f.Add("id: 1\nevent: message\ndata: a\ndata: b\n\n: c\n\ndata: x", 4)
	f.Add("data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[]}}\r\n\r\n", 8)
	f.Add("\n\n\ndata:\n\n", 1)
	f.Fuzz(func(t *testing.T, stream string, frame int) {
		if frame <= 0 || frame > 1<<16 {
			return
		}
		sp := &spools{}
		rules := bigRules{frame: frame, maxResult: 1 << 16, logger: slog.New(slog.DiscardHandler), server: "s", spools: sp}
		a := newSSEAnswer(io.NopCloser(strings.NewReader(stream)), rules, postedRequest{key: "1", call: true})
		a.limit = frame
		out, err := io.ReadAll(a)
		if err != nil {
			t.Fatal(err)
		}
		a.Close()
		small := true
		for _, ev := range strings.Split(strings.ReplaceAll(stream, "\r\n", "\n"), "\n\n") {
			if len(ev)+2 > frame-16 {
				small = false
			}
		}
		if small && !bytes.Equal(out, []byte(stream)) {
			t.Fatalf("a stream of small events changed:\n%q\n%q", stream, out)
		}
		sp.dropOf(nil)
	})
}
