//go:build !unix

package fslocal_test

import (
	"errors"
	"os"
)

func mkfifo(string) error { return errors.New("not supported") }

func maxRSSKiB(*os.ProcessState) int64 { return 0 }
