package jobs

import (
	"bytes"
	"testing"
)

// FuzzRing checks the output window against a plain copy of the whole
// stream: whatever the writes and the window size, a read returns the
// bytes at the offsets it says, and only the last size bytes are kept.
func FuzzRing(f *testing.F) {
	f.Add(uint8(4), []byte("hello, world"), uint8(3), int16(2), uint8(5))
	f.Add(uint8(1), []byte("ab"), uint8(1), int16(-1), uint8(0))
	f.Add(uint8(16), bytes.Repeat([]byte("x\n"), 40), uint8(7), int16(30), uint8(9))
	f.Fuzz(func(t *testing.T, size uint8, data []byte, chunk uint8, offset int16, limit uint8) {
		if size == 0 {
			size = 1
		}
		if chunk == 0 {
			chunk = 1
		}
		r := newRing(int(size))
		var all []byte
		for len(data) > 0 {
			n := min(int(chunk), len(data))
			r.write(data[:n])
			all = append(all, data[:n]...)
			data = data[n:]
			chunk = chunk*7 + 3 // vary the chunk sizes
			if chunk == 0 {
				chunk = 1
			}
		}
		w := r.read(int64(offset), int(limit))
		if w.Total != int64(len(all)) {
			t.Fatalf("total %d, wrote %d", w.Total, len(all))
		}
		keptFrom := max(0, int64(len(all))-int64(size))
		if w.Offset < keptFrom || w.Offset > w.Total || w.Next != w.Offset+int64(len(w.Data)) {
			t.Fatalf("window %+v outside what is kept (from %d)", w, keptFrom)
		}
		if !bytes.Equal(w.Data, all[w.Offset:w.Next]) {
			t.Fatalf("read %q at %d, stream has %q", w.Data, w.Offset, all[w.Offset:w.Next])
		}
		if limit > 0 && len(w.Data) > int(limit) {
			t.Fatalf("read %d bytes, limit %d", len(w.Data), limit)
		}
		want := int64(offset)
		if want < 0 {
			want = max(0, int64(len(all))+want)
		}
		if want >= keptFrom && want <= w.Total && w.Offset != want {
			t.Fatalf("asked for %d, got %d though it is kept", want, w.Offset)
		}
		if limit == 0 && w.Next != w.Total {
			t.Fatalf("an unlimited read stopped at %d of %d", w.Next, w.Total)
		}
	})
}
