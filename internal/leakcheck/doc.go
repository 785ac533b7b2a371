// Package leakcheck fails a test that leaves goroutines behind.
package leakcheck
