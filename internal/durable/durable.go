// Package durable holds what the module's file stores do to make a
// rename survive a crash.
package durable

import (
	"errors"
	"os"
)

// SyncDir flushes a directory's entries to stable storage, so that a file
// just created or renamed in it is still there after a crash. A file
// system that cannot sync a directory (os.ErrInvalid) is not an error.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}
