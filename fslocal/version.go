package fslocal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"strconv"
	"sync"
	"time"
)

// A version token combines the file's metadata with a hash of its
// content:
//
//	<meta: 16 hex digits><p|r>[<content sum: 16 hex digits>]
//
// The metadata digest covers device, inode, size, modification time and
// change time (in nanoseconds where the platform has them). 'p' means the
// metadata proves equality on its own: the change and modification times
// were more than racyWindow older than the clock when the token was made,
// so any later change of the file must show up as a newer ctime. 'r'
// ("racy") means a change within the same timestamp tick could leave the
// metadata as it was (coarse timestamps, same size): then only the content
// sum can tell.
//
// A token matches the file when the metadata is identical and proven, or
// else when the content sum is identical. So a same-second, same-size
// change is caught, and a file rewritten with identical bytes (a formatter
// that changed nothing, a touch) still matches, which spares the model a
// pointless re-read.
type token struct {
	meta   uint64
	proven bool
	sum    uint64
	hasSum bool
}

// racyWindow is how old a timestamp must be for the metadata to prove
// that the file has not changed since: generous enough for file systems
// with whole-second or two-second timestamps.
const racyWindow = 2 * time.Second

// meta is what the version takes from a stat.
type meta struct {
	dev, ino     uint64
	size         int64
	mtime, ctime int64 // Unix nanoseconds
	hasCtime     bool  // the platform reports a change time and inode
	uid, gid     int
	hasOwner     bool
}

func (m meta) digest() uint64 {
	h := fnv.New64a()
	var b [8]byte
	for _, v := range []uint64{m.dev, m.ino, uint64(m.size), uint64(m.mtime), uint64(m.ctime)} {
		binary.LittleEndian.PutUint64(b[:], v)
		h.Write(b[:])
	}
	return h.Sum64()
}

// provenAt reports whether the metadata alone proves equality, judged at
// now (taken after the stat).
func (m meta) provenAt(now time.Time) bool {
	if !m.hasCtime {
		return false
	}
	newest := max(m.mtime, m.ctime)
	return now.UnixNano()-newest > int64(racyWindow)
}

func (t token) String() string {
	flag := byte('r')
	if t.proven {
		flag = 'p'
	}
	s := fmt.Sprintf("%016x%c", t.meta, flag)
	if t.hasSum {
		s += fmt.Sprintf("%016x", t.sum)
	}
	return s
}

func parseToken(s string) (token, bool) {
	if len(s) != 17 && len(s) != 33 {
		return token{}, false
	}
	m, err := strconv.ParseUint(s[:16], 16, 64)
	if err != nil || (s[16] != 'p' && s[16] != 'r') {
		return token{}, false
	}
	t := token{meta: m, proven: s[16] == 'p'}
	if len(s) == 33 {
		sum, err := strconv.ParseUint(s[17:], 16, 64)
		if err != nil {
			return token{}, false
		}
		t.sum, t.hasSum = sum, true
	}
	return t, true
}

// matches reports whether the file described by cur still has version
// want. sum computes the current content's sum; it is called only when
// the metadata cannot decide.
func matches(want string, cur meta, sum func() (uint64, error)) (bool, error) {
	t, ok := parseToken(want)
	if !ok {
		return false, nil
	}
	if t.proven && t.meta == cur.digest() {
		return true, nil
	}
	if !t.hasSum {
		return false, nil
	}
	s, err := sum()
	if err != nil {
		return false, err
	}
	return s == t.sum, nil
}

// castagnoli is the CRC-32C table, made at the first sum rather than when
// the package is loaded.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// hasher sums content: CRC-32C and CRC-32 (IEEE) side by side, 64 bits in
// all, both computed with hardware help on common CPUs.
type hasher struct{ c, i uint32 }

func (h *hasher) Write(p []byte) (int, error) {
	h.c = crc32.Update(h.c, castagnoli(), p)
	h.i = crc32.Update(h.i, crc32.IEEETable, p)
	return len(p), nil
}

func (h *hasher) Sum64() uint64 { return uint64(h.c)<<32 | uint64(h.i) }

func sumBytes(b []byte) uint64 {
	var h hasher
	h.Write(b)
	return h.Sum64()
}

func sumReader(r io.Reader) (uint64, error) {
	var h hasher
	_, err := io.CopyBuffer(&h, r, make([]byte, 256<<10))
	return h.Sum64(), err
}
