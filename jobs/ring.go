package jobs

// ring keeps the last size bytes written to it, with their offsets in
// the whole stream.
type ring struct {
	buf   []byte // len grows to size, then wraps
	size  int
	total int64 // bytes ever written
}

func newRing(size int) *ring { return &ring{size: size} }

func (r *ring) write(p []byte) {
	if len(p) > r.size {
		r.total += int64(len(p) - r.size)
		p = p[len(p)-r.size:]
		if len(r.buf) < r.size {
			// p fills every slot, so what the slots held does not matter.
			r.buf = append(r.buf, make([]byte, r.size-len(r.buf))...)
		}
	}
	if len(r.buf) < r.size {
		// Not full yet: buf[i] holds offset i.
		n := min(r.size-len(r.buf), len(p))
		r.buf = append(r.buf, p[:n]...)
		r.total += int64(n)
		p = p[n:]
	}
	for len(p) > 0 {
		// Full: offset off lives in slot off % size.
		n := copy(r.buf[int(r.total%int64(r.size)):], p)
		r.total += int64(n)
		p = p[n:]
	}
}

// start is the offset of the oldest byte kept.
func (r *ring) start() int64 { return r.total - int64(len(r.buf)) }

// slice returns the kept bytes from offset from to offset to
// (start <= from <= to <= total).
func (r *ring) slice(from, to int64) []byte {
	out := make([]byte, 0, to-from)
	if len(r.buf) < r.size {
		base := r.start()
		return append(out, r.buf[from-base:to-base]...)
	}
	for off := from; off < to; {
		i := int(off % int64(r.size))
		n := min(int64(r.size-i), to-off)
		out = append(out, r.buf[i:i+int(n)]...)
		off += n
	}
	return out
}

func (r *ring) read(offset int64, limit int) Window {
	if offset < 0 {
		offset = max(0, r.total+offset)
	}
	w := Window{Total: r.total}
	from := max(offset, r.start())
	if from > r.total {
		from = r.total
	}
	w.Skipped = max(0, from-offset)
	to := r.total
	if limit > 0 {
		to = min(to, from+int64(limit))
	}
	w.Offset, w.Data, w.Next = from, r.slice(from, to), to
	return w
}
