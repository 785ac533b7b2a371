// Package fs defines the FileSystem the agent's file tools work through,
// its version tokens and typed errors, and the observation ledger that makes
// read-before-edit safe.
package fs
