package spillwriter_test

import (
	"context"
	"fmt"

	"github.com/go-harness/harness/internal/spillwriter"
	"github.com/go-harness/harness/spill"
	"github.com/go-harness/harness/tools"
)

// A Writer spills a stream as it arrives.
func ExampleWriter() {
	store, err := spill.NewMemory(spill.StoreConfig{})
	if err != nil {
		panic(err)
	}
	w, err := spillwriter.NewWriter(context.Background(), store, tools.Owner{Session: "s1", Tool: "bash", Call: "c1"}, 4096)
	if err != nil {
		panic(err)
	}
	for i := range 20_000 {
		fmt.Fprintf(w, "progress %d\n", i)
	}
	w.Close()
	out := w.Output()
	fmt.Println("written:", out.Size)
	fmt.Println("truncated:", out.Truncated, "saved:", out.Stored.Size)
	fmt.Println("preview fits:", len(out.Text) <= 4096)
	// Output:
	// written: 288890
	// truncated: true saved: 288890
	// preview fits: true
}
