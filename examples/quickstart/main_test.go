package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

// TestQuickstartOffline runs the quickstart with no key and checks that
// the scripted turn really read and fixed the file.
func TestQuickstartOffline(t *testing.T) {
	for _, k := range []string{"DEEPSEEK_API_KEY", "HARNESS_BASE_URL", "HARNESS_API_KEY", "HARNESS_MODEL"} {
		t.Setenv(k, "")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	runErr := run(context.Background())
	os.Stdout = stdout
	w.Close()
	out := <-done
	if runErr != nil {
		t.Fatalf("run: %v\n%s", runErr, out)
	}
	for _, want := range []string{
		"running a scripted model, offline",
		"main.go lines 1-12",
		`-	return "Hello, wrold!"`,
		`+	return "Hello, world!"`,
		"[turn completed after 3 steps]",
		`main.go now says: return "Hello, world!"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
