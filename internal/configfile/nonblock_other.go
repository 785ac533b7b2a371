//go:build !unix

package configfile

const nonBlock = 0
