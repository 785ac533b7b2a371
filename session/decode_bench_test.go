package session

import (
	"bufio"
	"bytes"
	"os"
	"testing"
)

// BenchmarkDecodeEvent measures the decoding of log lines alone, without
// reading the file or building history: the lines of a resume log of
// 20,000 events (see writeResumeLog) decoded with the fast decoder, beside
// encoding/json unmarshalling the same lines into Events. Both report
// MB/s of lines.
func BenchmarkDecodeEvent(b *testing.B) {
	s, _, n := writeResumeLog(b, 20_000)
	raw, err := os.ReadFile(s.path("resume"))
	if err != nil {
		b.Fatal(err)
	}
	var lines [][]byte
	var size int64
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<24)
	sc.Scan() // the header
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
		size += int64(len(sc.Bytes()) + 1)
	}
	if len(lines) != n {
		b.Fatalf("read %d lines, want %d", len(lines), n)
	}
	b.Run("fast", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			st := newDecodeState()
			for _, line := range lines {
				if _, ok := fastDecodeEvent(line, st); !ok {
					b.Fatalf("fell back on %s", line)
				}
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			for _, line := range lines {
				var e Event
				if err := e.unmarshalStd(line); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
