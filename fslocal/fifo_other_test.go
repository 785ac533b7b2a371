//go:build !unix

package fslocal_test

import "errors"

func mkfifo(string) error { return errors.New("not supported") }
