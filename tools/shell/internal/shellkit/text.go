package shellkit

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-harness/harness"
	"github.com/go-harness/harness/internal/textcut"
	"github.com/go-harness/harness/tools"
)

// MaxCommandBytes is the size limit of one command.
const MaxCommandBytes = 1 << 20

// Terminal statuses (harness.Terminal.Status).
const (
	StatusExited    = "exited"
	StatusRunning   = "running"
	StatusTimeout   = "timeout"
	StatusCancelled = "cancelled"
	StatusKilled    = "killed"
)

// CheckCommand refuses a command bash cannot take: empty, with a NUL
// byte, or longer than MaxCommandBytes.
func CheckCommand(command string) error {
	switch {
	case strings.TrimSpace(command) == "":
		return &harness.Error{Code: harness.CodeInvalidArguments, Message: "The command is empty. Pass the bash command line to run in command."}
	case strings.IndexByte(command, 0) >= 0:
		return &harness.Error{Code: harness.CodeInvalidArguments, Message: "The command contains a NUL byte, which bash cannot take. Remove it and send the command again."}
	case len(command) > MaxCommandBytes:
		return &harness.Error{Code: harness.CodeInvalidArguments, Message: fmt.Sprintf("The command is %d bytes long; the limit is %d. Write long scripts to a file first and run the file.", len(command), MaxCommandBytes)}
	}
	return nil
}

// CallEnv returns the call's Env, or an empty one.
func CallEnv(call *tools.Call) *tools.Env {
	if call.Env == nil {
		return &tools.Env{}
	}
	return call.Env
}

// Owner returns who a call's saved output belongs to.
func Owner(call *tools.Call) tools.Owner {
	return tools.Owner{Session: CallEnv(call).SessionID, Tool: call.Name, Call: call.ID}
}

// WaitArg turns an optional wait_ms into a duration: def when it is
// absent, at most max.
func WaitArg(ms *int, def, max time.Duration) (time.Duration, error) {
	if ms == nil {
		return def, nil
	}
	if *ms < 0 {
		return 0, &harness.Error{Code: harness.CodeInvalidArguments, Message: "wait_ms must not be negative. Leave it out for the default."}
	}
	return min(time.Duration(*ms)*time.Millisecond, max), nil
}

// LiveReport returns what reports a command's output as the call's
// progress, or nil when nobody listens.
func LiveReport(call *tools.Call) func([]byte) {
	if call.OnProgress == nil {
		return nil
	}
	report := call.OnProgress
	return func(p []byte) { report(tools.Progress{Output: string(p)}) }
}

// Title is the one-line summary of a command for host cards.
func Title(description, command string) string {
	s := strings.TrimSpace(description)
	if s == "" {
		s, _, _ = strings.Cut(strings.TrimSpace(command), "\n")
	}
	if len(s) > 80 {
		s = textcut.Prefix(s, 77) + "..."
	}
	return s
}

// Dur renders a duration for the model: "450 ms", "2.5 s", "3 s",
// "2 min 5 s", "30 min".
func Dur(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		s := strconv.FormatFloat(d.Seconds(), 'f', 1, 64)
		return strings.TrimSuffix(s, ".0") + " s"
	}
	d = d.Round(time.Second)
	m, s := int(d/time.Minute), int(d%time.Minute/time.Second)
	if s == 0 {
		return fmt.Sprintf("%d min", m)
	}
	return fmt.Sprintf("%d min %d s", m, s)
}
