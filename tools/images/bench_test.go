package images

import (
	"bytes"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// peakHeap samples the heap while f runs and returns the largest
// HeapAlloc seen above the starting point.
func peakHeap(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > base && m.HeapAlloc-base > peak.Load() {
				peak.Store(m.HeapAlloc - base)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(done)
	<-stopped
	return peak.Load()
}

// BenchmarkNormalizeJPEG normalizes a 4000x3000 photo (downscale to 2048
// px and re-encode); BenchmarkNormalizeJPEGBaseline only decodes the same
// file with image/jpeg, the least any validation must do.
func BenchmarkNormalizeJPEG(b *testing.B) {
	data := encJPEG(b, photo(4000, 3000))
	b.SetBytes(int64(len(data)))
	var peak uint64
	for b.Loop() {
		peak = max(peak, peakHeap(func() {
			if _, err := Normalize(bg, "p.jpg", data, Limits{}); err != nil {
				b.Fatal(err)
			}
		}))
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
}

func BenchmarkNormalizeJPEGBaseline(b *testing.B) {
	data := encJPEG(b, photo(4000, 3000))
	b.SetBytes(int64(len(data)))
	var peak uint64
	for b.Loop() {
		peak = max(peak, peakHeap(func() {
			if _, err := jpeg.Decode(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}))
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
}

// BenchmarkLargePNG decodes and downscales a 4096x4096 16-bit RGBA PNG,
// plain and interlaced, two ways on the same file: "stream" is Normalize
// (the streaming reader feeding the scaler), "imagepng" the path before
// it (image/png decodes the whole image, then the same scaler and
// encoder). B/op and peak-MiB give the memory ratio, ns/op the time
// ratio.
func BenchmarkLargePNG(b *testing.B) {
	for _, interlaced := range []bool{false, true} {
		name := "rgba16"
		if interlaced {
			name += "-interlaced"
		}
		p := filepath.Join(b.TempDir(), name+".png")
		writeBombPNG(b, p, 4096, 4096, 16, 6, interlaced)
		data, err := os.ReadFile(p)
		require.NoError(b, err)
		b.Run(name+"/stream", func(b *testing.B) {
			b.ReportAllocs()
			var peak uint64
			for b.Loop() {
				peak = max(peak, peakHeap(func() {
					if _, err := Normalize(bg, "big.png", data, Limits{}); err != nil {
						b.Fatal(err)
					}
				}))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
		})
		b.Run(name+"/imagepng", func(b *testing.B) {
			b.ReportAllocs()
			var peak uint64
			for b.Loop() {
				peak = max(peak, peakHeap(func() { oldNormalizePNG(b, data, defaultLongEdge) }))
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
		})
	}
}

// BenchmarkValidatePNG validates a 2048x1536 PNG that passes through
// unchanged: "stream" is Normalize (inflate and check every row, keep no
// pixels), "imagepng" image/png's full decode, which the validation was
// before.
func BenchmarkValidatePNG(b *testing.B) {
	data := encPNG(b, photo(2048, 1536))
	b.Run("stream", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if n, err := Normalize(bg, "shot.png", data, Limits{}); err != nil || n.Reencoded {
				b.Fatal(err)
			}
		}
	})
	b.Run("imagepng", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := png.Decode(bytes.NewReader(data)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
