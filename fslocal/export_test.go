package fslocal

import "time"

// SetHook installs a function that runs at named points of operations:
// "write:locked", "edit:locked", "commit", "read:opened", and "open"
// (after every check of the path, before it is opened).
func SetHook(f FS, h func(stage, rel string)) { f.(*localFS).hook = h }

// SetClock replaces the clock versions are judged against.
func SetClock(f FS, now func() time.Time) { f.(*localFS).now = now }
