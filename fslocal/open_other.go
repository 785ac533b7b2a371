//go:build !unix

package fslocal

const openReadFlags = 0
