//go:build !unix

package codesearch_test

import "errors"

func mkfifo(string) error { return errors.New("not supported") }
