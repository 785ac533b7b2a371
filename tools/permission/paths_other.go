//go:build !unix

package permission

import "os"

// statID is unknown here: no file has hard links the policy can find.
func statID(os.FileInfo) (dev, ino uint64, ok bool) { return 0, 0, false }

// stampOf is unknown here: no listing is kept.
func stampOf(os.FileInfo) (dirStamp, bool) { return dirStamp{}, false }

func fsNow() int64 { return 0 }

func trustedFS(string) bool { return false }
