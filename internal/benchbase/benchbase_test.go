package benchbase

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReplaceInFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("a X b X"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ReplaceInFile(p, "X", "YY"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(p)
	if string(got) != "a YY b X" {
		t.Fatalf("got %q", got)
	}
	if err := ReplaceInFile(filepath.Join(t.TempDir(), "missing"), "a", "b"); err == nil {
		t.Fatal("a missing file is an error")
	}
}
