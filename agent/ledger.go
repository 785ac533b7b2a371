package agent

import (
	"github.com/go-harness/harness"
	"github.com/go-harness/harness/session"
	"github.com/go-harness/harness/tools"
)

// restoreLedger rebuilds the read-before-edit ledger (fs.Ledger, see
// tools.Env.Ledger) of a resumed session from its log: every file a
// finished call read or wrote, at the version its result recorded
// (harness.ToolResult.Files), the later access winning. A file read
// before a crash can then be edited after it, if it did not change
// since: the edit's precondition is still the version the model saw.
// Calls cut off by the crash have no result and count for nothing.
func (s *Session) restoreLedger(events []session.Event) {
	var l interface{ Observe(path, version string) }
	for _, e := range events {
		f, ok := e.Data.(*session.ToolFinished)
		if !ok || f.Result.IsError || len(f.Result.Files) == 0 {
			continue
		}
		if l == nil {
			led := (&tools.Env{State: s.state}).Ledger()
			if led == nil {
				return
			}
			l = led
		}
		for _, a := range f.Result.Files {
			if (a.Op == harness.FileRead || a.Op == harness.FileWrite) && a.Path != "" && a.Version != "" {
				l.Observe(a.Path, a.Version)
			}
		}
	}
}
