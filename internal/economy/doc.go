// Package economy holds the end-to-end measurement of the context economy:
// a scripted 60-step session run with every feature on and with all of them
// off (see economy_test.go), and a scripted 40-step exploration run in the
// parent and handed to a sub-agent, comparing the parent's context
// (subagent_test.go). It has no code of its own.
package economy
