package fs_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/fs"
	"github.com/go-harness/harness/fs/fstest"
)

func ExampleScanText() {
	log := "boot\r\nready\r\nrequest 1\r\nrequest 2\r\nshutdown\r\n"
	t, err := fs.ScanText(context.Background(), strings.NewReader(log), fs.Window{Offset: 2, Limit: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, l := range t.Lines {
		fmt.Printf("%d: %s\n", t.Offset+i, l.Text)
	}
	fmt.Println("total", t.TotalLines, "crlf", t.CRLF)
	// Output:
	// 2: ready
	// 3: request 1
	// total 5 crlf true
}

func ExampleApplyEdit() {
	out, _, err := fs.ApplyEdit([]byte("a := 1\r\nb := 2\r\n"), fs.Edit{Old: "a := 1\nb := 2", New: "a, b := 1, 2"})
	fmt.Printf("%q %v\n", out, err)
	_, _, err = fs.ApplyEdit([]byte("x\nx\n"), fs.Edit{Old: "x", New: "y"})
	fmt.Println(harness.CodeOf(err))
	// Output:
	// "a, b := 1, 2\r\n" <nil>
	// ambiguous_edit
}

func ExampleLedger() {
	var l fs.Ledger
	fmt.Printf("%+v\n", l.WritePrecondition("/w/a.go")) // unseen: create only
	_, err := l.EditPrecondition("/w/a.go")
	fmt.Println(harness.CodeOf(err))
	l.Observe("/w/a.go", "v1") // a read saw version v1
	fmt.Printf("%+v\n", l.WritePrecondition("/w/a.go"))
	// Output:
	// {Absent:true Version:}
	// not_observed
	// {Absent:false Version:v1}
}

// Restrict puts a path policy below every tool: here fstest.DenyPaths
// stands for permission.Policy.Paths, which a loop with permission rules
// applies to its sessions itself.
func ExampleRestrict() {
	ctx := context.Background()
	mem := fstest.NewMemFS("/ws")
	mem.SetFile("/ws/main.go", []byte("package main\n"), 0o644)
	mem.SetFile("/ws/secrets/key.txt", []byte("hunter2\n"), 0o644)
	mem.SetFile("/ws/.git/config", []byte("[core]\n"), 0o644)
	fsys := fs.Restrict(mem, fstest.DenyPaths{Read: []string{"/ws/secrets"}, Write: []string{"/ws/.git"}})

	list, _ := fsys.ReadDir(ctx, "/ws")
	for _, fi := range list {
		fmt.Println(fi.Path)
	}
	_, err := fsys.ReadText(ctx, "/ws/secrets/key.txt", fs.Window{})
	fmt.Println(harness.CodeOf(err))
	_, err = fsys.Write(ctx, "/ws/.git/config", []byte("[core]\n\tbare = true\n"), fs.WriteOptions{})
	fmt.Println(harness.CodeOf(err))
	// Output:
	// /ws/.git
	// /ws/main.go
	// not_found
	// denied
}
