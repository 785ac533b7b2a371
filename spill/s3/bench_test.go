package s3_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/spill/s3"
	"github.com/go-harness/harness/tools"
)

// BenchmarkReadWindow reads 100 lines near the end of a 7 MB output:
// windowed (ranged requests found with the line index) beside the
// baseline, Open's whole object scanned by fs.ScanText.
func BenchmarkReadWindow(b *testing.B) {
	s := newStore(b, s3.Config{})
	var data bytes.Buffer
	for i := 1; i <= 200_000; i++ {
		fmt.Fprintf(&data, "log line %06d: something happened\n", i)
	}
	st, err := s.Save(context.Background(), tools.Owner{Session: "s", Tool: "bash", Call: "c"}, bytes.NewReader(data.Bytes()))
	require.NoError(b, err)
	w := fs.Window{Offset: 150_000, Limit: 100}
	b.Run("windowed", func(b *testing.B) {
		for range b.N {
			if _, err := s.ReadWindow(context.Background(), st.Locator, w); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("whole_object", func(b *testing.B) {
		for range b.N {
			rc, err := s.Open(context.Background(), st.Locator)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := fs.ScanText(context.Background(), rc, w); err != nil {
				b.Fatal(err)
			}
			rc.Close()
		}
	})
}
