//go:build !linux

package fslocal

import "os"

// fdPath is unknown here: the checks rest on the resolved path.
func fdPath(*os.File) (string, bool) { return "", false }
