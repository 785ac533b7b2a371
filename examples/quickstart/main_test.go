package main

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
)

// capture runs the quickstart with args and returns what it printed.
func capture(t *testing.T, args ...string) (string, error) {
	t.Helper()
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
	runErr := run(context.Background(), args)
	os.Stdout = stdout
	w.Close()
	return <-done, runErr
}

// TestQuickstartOffline runs the quickstart with no key and checks that
// the scripted turn really read and fixed the file.
func TestQuickstartOffline(t *testing.T) {
	for _, k := range []string{"DEEPSEEK_API_KEY", "HARNESS_BASE_URL", "HARNESS_API_KEY", "HARNESS_MODEL"} {
		t.Setenv(k, "")
	}
	checkOffline(t)
}

// With a key in the environment the quickstart still runs offline: live
// is the -live flag's, never the environment's. The endpoint named here
// refuses connections, so a live run would fail.
func TestQuickstartOfflineWithKeySet(t *testing.T) {
	t.Setenv("DEEPSEEK_API_KEY", "sk-must-not-be-used")
	t.Setenv("HARNESS_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("HARNESS_API_KEY", "sk-must-not-be-used")
	t.Setenv("HARNESS_MODEL", "some-model")
	checkOffline(t)
}

func checkOffline(t *testing.T) {
	t.Helper()
	out, err := capture(t)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	for _, want := range []string{
		"Running a scripted model, offline: no network, no key used.",
		"Pass -live",
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
	if strings.Contains(out, "Running live") {
		t.Errorf("ran live without -live:\n%s", out)
	}
}

// -live without a key fails before any model call and says what to set.
func TestQuickstartLiveNeedsAKey(t *testing.T) {
	for _, k := range []string{"DEEPSEEK_API_KEY", "HARNESS_BASE_URL", "HARNESS_API_KEY", "HARNESS_MODEL"} {
		t.Setenv(k, "")
	}
	out, err := capture(t, "-live")
	if err == nil || !strings.Contains(err.Error(), "-live needs a key: set DEEPSEEK_API_KEY") {
		t.Fatalf("run -live without a key: %v\n%s", err, out)
	}
	if strings.Contains(out, "scripted") {
		t.Errorf("-live fell back to the scripted model:\n%s", out)
	}
	if _, err := capture(t, "extra"); err == nil || !strings.Contains(err.Error(), "unexpected arguments") {
		t.Fatalf("run with a stray argument: %v", err)
	}
}
