//go:build !linux

package persistent

import "errors"

const rawPipes = false

func readFD(fd uintptr, b []byte) (int, error) {
	return 0, errors.New("persistent: raw reads are not supported here")
}

func pipeBytes(fd uintptr) (int, bool) { return 0, false }
