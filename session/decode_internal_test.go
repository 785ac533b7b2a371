package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fill sets every field of v, recursively, to a value that is not zero,
// so encoding it writes every key the vocabulary has.
func fill(t *testing.T, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("s\"é\n" + v.Type().Name())
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(7 + depth))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), depth+1)
	case reflect.Slice:
		if v.Type() == reflect.TypeOf(json.RawMessage(nil)) {
			v.SetBytes([]byte(`{"k":[1,2.5e3,"x\u00e9",true,null]}`))
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(t, s.Index(0), depth+1)
		v.Set(s)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if depth > 6 && v.Field(i).Kind() == reflect.Pointer {
				continue // a tool result inside a tool result is deep enough
			}
			fill(t, v.Field(i), depth+1)
		}
	default:
		t.Fatalf("fill: no case for %s", v.Type())
	}
}

// The fast decoder knows every field of every event type: an event with
// all of them set decodes without falling back, to what was encoded. A
// field added to the vocabulary without teaching the decoder fails here.
func TestFastDecoderKnowsEveryField(t *testing.T) {
	for _, typ := range []string{TypeUser, TypeAssistant, typeToolStart, TypeToolResult, typeModelRequest, TypeReminder,
		typeTurnEnd, TypeSystem, typeRecord, typeRetry, typePrune, typeCompaction} {
		t.Run(typ, func(t *testing.T) {
			p, ok := newPayload(typ)
			require.True(t, ok)
			fill(t, reflect.ValueOf(p).Elem(), 0)
			e := Event{Seq: 3, Time: time.Date(2026, 12, 1, 9, 0, 0, 120000000, time.UTC), Data: p}
			line, err := e.MarshalJSON()
			require.NoError(t, err)
			got, ok := fastDecodeEvent(line, newDecodeState())
			require.True(t, ok, "the fast decoder gave up on %s", line)
			assert.Equal(t, e, got)
		})
	}
}

func goldenLines(t testing.TB) [][]byte {
	var lines [][]byte
	for _, name := range []string{"golden.jsonl", "format1-main.jsonl"} {
		raw, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(t, err)
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(nil, 1<<20)
		sc.Scan() // the header
		for sc.Scan() {
			lines = append(lines, append([]byte(nil), sc.Bytes()...))
		}
	}
	return lines
}

// Every line of the golden log and of the format-1 fixture takes the
// fast path.
func TestGoldenLinesTakeTheFastPath(t *testing.T) {
	for _, line := range goldenLines(t) {
		_, ok := fastDecodeEvent(line, newDecodeState())
		assert.True(t, ok, "fell back on %s", line)
	}
}

// FuzzDecodeEvent: whatever the fast decoder accepts, encoding/json
// accepts too and decodes to the same event; it never panics.
func FuzzDecodeEvent(f *testing.F) {
	for _, line := range goldenLines(f) {
		f.Add(line)
	}
	f.Add([]byte(`{"type":"user","seq":1,"data":{"content":[{"type":"text","text":"a\u00e9\ud83d\ude00"}]},"time":"2026-01-01T00:00:00+01:00"}`))
	f.Add([]byte(`{"data":{"content":null},"type":"assistant","seq":-0}`))
	f.Add([]byte(`{"seq":1,"type":"x","data":[1,{"a":"\/"},-1.5E+3]}`))
	f.Add([]byte(`{"seq":1,"type":"tool_result","data":{"result":{"content":[null],"files":[{"op":"read","complete":false}]}}}`))
	f.Add([]byte(`{"seq":1,"type":"user","data":{"content":[{"type":"text","Text":"case"}]}}`))
	f.Add([]byte(`{"seq":2,"type":"assistant","data":{"step":1,"model":"m","content":[{"type":"reasoning","text":"t","signature":"c2ln"},{"type":"reasoning","signature":"ZW5j","redacted":true}],"usage":{"input_tokens":9,"output_tokens":1,"cache_hit_tokens":4,"cache_miss_tokens":5,"cache_write_tokens":3}}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		// Event.UnmarshalJSON (the fast decoder first, on one line alone)
		// and encoding/json alone agree on every line.
		var pub, std Event
		pubErr, stdErr := json.Unmarshal(line, &pub), std.unmarshalStd(line)
		if (pubErr == nil) != (stdErr == nil) {
			t.Fatalf("Event.UnmarshalJSON: %v, encoding/json: %v: %s", pubErr, stdErr, line)
		}
		if pubErr == nil {
			if !pub.Time.Equal(std.Time) {
				t.Fatalf("time %v, encoding/json %v", pub.Time, std.Time)
			}
			pub.Time, std.Time = time.Time{}, time.Time{}
			if !reflect.DeepEqual(pub, std) {
				t.Fatalf("Event.UnmarshalJSON %#v\nencoding/json %#v\nline %s", pub.Data, std.Data, line)
			}
		}
		got, ok := fastDecodeEvent(line, newDecodeState())
		if !ok {
			return
		}
		var want Event
		if err := want.unmarshalStd(line); err != nil {
			t.Fatalf("the fast decoder accepted what encoding/json refuses (%v): %s", err, line)
		}
		if !got.Time.Equal(want.Time) {
			t.Fatalf("time %v, encoding/json %v", got.Time, want.Time)
		}
		got.Time, want.Time = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded %#v\nencoding/json %#v\nline %s", got.Data, want.Data, line)
		}
	})
}

// A repeated key makes the fast decoder give up (encoding/json keeps the
// last value, or merges repeated objects); keys that differ but share a
// length and first byte (call_id, content) do not.
func TestFastDecoderGivesUpOnRepeatedKeys(t *testing.T) {
	for _, line := range []string{
		`{"seq":1,"seq":2,"type":"user","data":{"content":null}}`,
		`{"seq":1,"type":"user","data":{"content":null,"content":[]}}`,
		`{"seq":1,"type":"tool_result","data":{"result":{"call_id":"a","content":null,"call_id":"b"}}}`,
		`{"seq":1,"type":"assistant","data":{"usage":{"input_tokens":1,"input_tokens":2}}}`,
	} {
		_, ok := fastDecodeEvent([]byte(line), newDecodeState())
		assert.False(t, ok, "accepted %s", line)
		_, err := decodeEvent([]byte(line), newDecodeState())
		assert.NoError(t, err, "encoding/json decodes %s", line)
	}
	line := []byte(`{"seq":1,"type":"tool_result","data":{"result":{"call_id":"a","content":[{"type":"text","text":"x"}]}}}`)
	e, ok := fastDecodeEvent(line, newDecodeState())
	require.True(t, ok)
	r := e.Data.(*ToolFinished).Result
	assert.Equal(t, "a", r.CallID)
	assert.Equal(t, "x", r.Content[0].Text)
}
