package search_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/leakcheck"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/session/search"
	"github.com/go-harness/harness/session/sessiontest"
)

// plainStore hides the Searcher of the store it wraps, so Search takes
// its generic path.
type plainStore struct{ session.Store }

func TestGenericSearchConformance(t *testing.T) {
	sessiontest.TestStore(t, func(t *testing.T, max int) session.Store {
		return plainStore{session.NewMemory(session.StoreConfig{MaxLineSize: max})}
	})
}

func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	defer f.Close()
	for _, l := range lines {
		_, err := f.WriteString(l)
		require.NoError(t, err)
	}
}

func newLog(t *testing.T, s session.Store, id, cwd string, payloads ...session.Payload) {
	t.Helper()
	log, err := s.Create(context.Background(), session.Header{ID: id, Cwd: cwd})
	require.NoError(t, err)
	if len(payloads) > 0 {
		_, err = log.Append(context.Background(), payloads...)
		require.NoError(t, err)
	}
	require.NoError(t, log.Close())
}

func userMsg(s string) *session.UserMessage {
	return &session.UserMessage{Content: []harness.Block{harness.TextBlock(s)}}
}

func searchW(t *testing.T, s session.Store, q string) []search.Match {
	t.Helper()
	ms, err := search.Search(context.Background(), s, search.Options{Query: q, Workspace: "/w"})
	require.NoError(t, err)
	return ms
}

// Lines written by other JSON writers may escape any character.
func TestJSONLSearchForeignEscapes(t *testing.T) {
	logs := t.TempDir()
	store := session.NewJSONL(logs, session.StoreConfig{})
	newLog(t, store, "foreign", "/w")
	appendLines(t, filepath.Join(logs, "foreign.jsonl"),
		// HTML-escaping writer (encoding/json's default).
		`{"seq":1,"time":"2026-01-01T00:00:00Z","type":"user","data":{"content":[{"type":"text","text":"a \u003chtml\u003e \u0026 b"}]}}`+"\n",
		// ASCII-only writer, escaped slash, surrogate pair.
		`{"seq":2,"time":"2026-01-01T00:00:00Z","type":"user","data":{"content":[{"type":"text","text":"gr\u00fc\u00dfe path\/to \ud83d\ude00 done"}]}}`+"\n",
		// A different field order: type after data.
		`{"data":{"source":"x","text":"late type"},"seq":3,"time":"2026-01-01T00:00:00Z","type":"reminder"}`+"\n",
	)
	for q, seq := range map[string]int64{"<html> & b": 1, "grüße": 2, "path/to": 2, "😀 done": 2, "late type": 3} {
		ms := searchW(t, store, q)
		if assert.Len(t, ms, 1, "query %q", q) {
			assert.Equal(t, seq, ms[0].Seq)
			assert.Equal(t, q, ms[0].Snippet[ms[0].MatchStart:ms[0].MatchEnd])
		}
	}
}

func TestJSONLSearchLongLinesAndTornTail(t *testing.T) {
	logs := t.TempDir()
	store := session.NewJSONL(logs, session.StoreConfig{})
	big := strings.Repeat("filler text line\n", 200_000) // 3.4 MB, longer than a read buffer
	newLog(t, store, "long", "/w",
		userMsg("start"),
		&session.ToolFinished{CallID: "c", Name: "bash", Result: harness.ToolResult{Content: []harness.Block{harness.TextBlock(big + "the needle at the end")}}},
		userMsg("needle after the long line"),
	)
	// A complete event whose newline was lost, then nothing.
	line, err := session.Event{Seq: 4, Time: time.Now(), Data: &session.Reminded{Reminder: harness.Reminder{Text: "needle without newline"}}}.MarshalJSON()
	require.NoError(t, err)
	appendLines(t, filepath.Join(logs, "long.jsonl"), string(line))
	ms := searchW(t, store, "needle")
	require.Len(t, ms, 3)
	assert.Equal(t, []int64{2, 3, 4}, []int64{ms[0].Seq, ms[1].Seq, ms[2].Seq})
	assert.True(t, strings.HasPrefix(ms[0].Snippet, "…"), ms[0].Snippet)
	assert.True(t, strings.HasSuffix(ms[0].Snippet, "filler text line\nthe needle at the end"), ms[0].Snippet)
	assert.LessOrEqual(t, len(ms[0].Snippet), len("…")+80+len("needle at the end"))

	// A torn line is skipped, not an error.
	torn, err := session.Event{Seq: 5, Time: time.Now(), Data: &session.Reminded{Reminder: harness.Reminder{Text: "needle torn off"}}}.MarshalJSON()
	require.NoError(t, err)
	appendLines(t, filepath.Join(logs, "long.jsonl"), "\n"+string(torn[:len(torn)-5]))
	ms = searchW(t, store, "needle")
	assert.Len(t, ms, 3)
}

func TestJSONLListReadsBoundedTitle(t *testing.T) {
	logs := t.TempDir()
	store := session.NewJSONL(logs, session.StoreConfig{})
	long := "Fix the \"flaky\" test — ünïcode\nsecond line " + strings.Repeat("x", 2<<20)
	newLog(t, store, "long-title", "/w", &session.SystemPrompt{Text: "sys"}, userMsg(long))
	newLog(t, store, "cut-title", "/w", userMsg(strings.Repeat("é", 100)))
	infos, err := store.List(context.Background(), session.ListOptions{Workspace: "/w"})
	require.NoError(t, err)
	require.Len(t, infos, 2)
	byID := map[string]session.Info{}
	for _, in := range infos {
		byID[in.Header.ID] = in
	}
	assert.Equal(t, "Fix the \"flaky\" test — ünïcode", byID["long-title"].Title, "taken from the start of a line too long to decode")
	assert.Equal(t, strings.Repeat("é", 79)+"…", byID["cut-title"].Title)
	assert.Greater(t, byID["long-title"].Size, int64(2<<20))

	// Broken logs are left out of listings, not errors.
	require.NoError(t, os.WriteFile(filepath.Join(logs, "empty.jsonl"), nil, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(logs, "garbage.jsonl"), []byte(strings.Repeat("z", 100<<10)), 0o600))
	infos, err = store.List(context.Background(), session.ListOptions{})
	require.NoError(t, err)
	assert.Len(t, infos, 2)
	ms := searchW(t, store, "flaky")
	assert.Len(t, ms, 1)
}

func TestListLimitNewestFirst(t *testing.T) {
	logs := t.TempDir()
	store := session.NewJSONL(logs, session.StoreConfig{})
	base := time.Now().Add(-time.Hour)
	for i := range 10 {
		id := fmt.Sprintf("s%02d", i)
		cwd := "/w"
		if i%2 == 1 {
			cwd = "/w2" // a sibling with a common prefix
		}
		newLog(t, store, id, cwd, userMsg("task "+id))
		mod := base.Add(time.Duration(i) * time.Minute)
		require.NoError(t, os.Chtimes(filepath.Join(logs, id+".jsonl"), mod, mod))
	}
	infos, err := store.List(context.Background(), session.ListOptions{Workspace: "/w", Limit: 3})
	require.NoError(t, err)
	var got []string
	for _, in := range infos {
		got = append(got, in.Header.ID)
		assert.Equal(t, "task "+in.Header.ID, in.Title)
	}
	assert.Equal(t, []string{"s08", "s06", "s04"}, got)
}

// cancellingStore cancels a context when its n-th session is loaded: a
// cancellation in the middle of a search.
type cancellingStore struct {
	session.Store
	n      atomic.Int64
	cancel context.CancelFunc
}

func (s *cancellingStore) Load(ctx context.Context, id string) (*session.Transcript, error) {
	if s.n.Add(-1) == 0 {
		s.cancel()
	}
	return s.Store.Load(ctx, id)
}

func TestSearchCancelledMidScan(t *testing.T) {
	leakcheck.Check(t)
	mem := session.NewMemory(session.StoreConfig{})
	for i := range 40 {
		newLog(t, mem, fmt.Sprintf("s%02d", i), "/w", userMsg("needle"), userMsg("needle again"))
	}
	all, err := search.Search(context.Background(), mem, search.Options{Query: "needle", Workspace: "/w", Limit: 1000})
	require.NoError(t, err)
	require.Len(t, all, 80)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	store := &cancellingStore{Store: mem, cancel: cancel}
	store.n.Store(5)
	ms, err := search.Search(ctx, store, search.Options{Query: "needle", Workspace: "/w", Limit: 1000, Parallel: 2})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Less(t, len(ms), 80, "the scan stopped early")
}

func TestSearchConcurrent(t *testing.T) {
	leakcheck.Check(t)
	logs := t.TempDir()
	store := session.NewJSONL(logs, session.StoreConfig{})
	for i := range 20 {
		newLog(t, store, fmt.Sprintf("s%02d", i), "/w", userMsg(fmt.Sprintf("needle %d", i)))
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			ms, err := search.Search(context.Background(), store, search.Options{Query: "needle", Workspace: "/w", Limit: 5})
			assert.NoError(t, err)
			assert.Len(t, ms, 5)
		})
	}
	wg.Wait()
}

// FuzzSearchLiteral: any text inserted into an event's text is found by
// a literal search for it, and by a regex search for it quoted.
func FuzzSearchLiteral(f *testing.F) {
	f.Add("before ", "needle", " after", uint8(0))
	f.Add("a\"b", "\"quoted\\\"", "\n", uint8(1))
	f.Add("\x00\x1f", "\u2028\u2029\t", "\x7f", uint8(2))
	f.Add("\xff\xfe", "<html>&amp;", "ü", uint8(3))
	f.Add("", "\\u00fc", "\\/", uint8(2))
	f.Add("日本", "語のテキスト", "です", uint8(1))
	f.Fuzz(func(t *testing.T, prefix, q, suffix string, where uint8) {
		if q == "" || !utf8.ValidString(q) {
			return
		}
		text := prefix + q + suffix
		var p session.Payload
		switch where % 4 {
		case 0:
			p = userMsg(text)
		case 1:
			p = &session.ToolFinished{CallID: "c", Name: "bash", Result: harness.ToolResult{Content: []harness.Block{harness.TextBlock(text)}}}
		case 2:
			args, err := json.Marshal(map[string]string{"content": text}) // HTML-escaped, as models may write
			require.NoError(t, err)
			p = &session.AssistantMessage{Content: []harness.Block{{Type: harness.BlockToolCall,
				ToolCall: &harness.ToolCall{ID: "c", Name: "write", Arguments: string(args)}}}}
		case 3:
			p = &session.Reminded{Reminder: harness.Reminder{Text: text}}
		}
		for _, store := range []session.Store{session.NewMemory(session.StoreConfig{}), session.NewJSONL(t.TempDir(), session.StoreConfig{})} {
			newLog(t, store, "fuzz", "/w", userMsg("unrelated"), p)
			for _, regex := range []bool{false, true} {
				query := q
				if regex {
					query = regexp.QuoteMeta(q)
				}
				ms, err := search.Search(context.Background(), store, search.Options{Query: query, Regex: regex, Workspace: "/w", Limit: 10})
				require.NoError(t, err)
				found := false
				for _, m := range ms {
					require.Equal(t, q, m.Snippet[m.MatchStart:m.MatchEnd])
					found = found || m.Seq == 2
				}
				require.True(t, found, "%T: %q in %q not found (regex %v)", store, q, text, regex)
			}
		}
	})
}
