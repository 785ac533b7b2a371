//go:build !unix

package checkpoint

import iofs "io/fs"

// statOf returns the metadata the stat cache compares: here only the
// modification time.
func statOf(fi iofs.FileInfo) Stat { return Stat{MtimeNS: fi.ModTime().UnixNano()} }
