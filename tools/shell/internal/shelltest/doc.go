// Package shelltest holds the test helpers of the shell tools' packages:
// output store and session log doubles, an Env rooted in a temporary
// directory, a runner that calls a tool as the dispatcher does, process
// tags to find what a command left running, the persistent-shell driver
// Shells, and the escape suite that checks that no stop leaves a process
// behind. Only tests import it.
package shelltest
