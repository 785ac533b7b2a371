//go:build !unix

package session

import "os"

// lockFile is a no-op where advisory locks are not available.
func lockFile(*os.File) error { return nil }

// unlockFile is a no-op where advisory locks are not available.
func unlockFile(*os.File) {}
