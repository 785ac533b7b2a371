package fstest_test

import (
	"context"
	"fmt"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/fs/fstest"
)

func ExampleNewMemFS() {
	ctx := context.Background()
	fsys := fstest.NewMemFS("/project")
	fsys.SetFile("/project/main.go", []byte("package main\n\nfunc main() {}\n"), 0o644)

	text, _ := fsys.ReadText(ctx, "/project/main.go", fs.Window{Offset: 3})
	fmt.Println(text.Lines[0].Text, "of", text.TotalLines)

	// Someone else changes the file: a write at the version read is stale.
	fsys.SetFile("/project/main.go", []byte("package main\n"), 0o644)
	_, err := fsys.Write(ctx, "/project/main.go", []byte("package app\n"), fs.WriteOptions{Pre: fs.Precondition{Version: text.Info.Version}})
	fmt.Println(harness.CodeOf(err))
	// Output:
	// func main() {} of 3
	// stale_version
}
