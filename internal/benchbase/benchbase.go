package benchbase

import (
	"bytes"
	"os"
)

// ReplaceInFile is the plain way to edit a file: read it whole, replace
// the first occurrence of old with new, write it back in place and fsync.
// It has none of the safety of the file tools (no atomic rename, no
// version check), which is what makes it the baseline.
func ReplaceInFile(path, old, new string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	data = bytes.Replace(data, []byte(old), []byte(new), 1)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
