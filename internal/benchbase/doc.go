// Package benchbase holds the hand-written baselines that benchmarks in
// several packages measure the library against, so each baseline is
// written once, and [Interleave], which times the library and its
// baseline in one loop, alternating, so that a ratio comes out of one
// run whatever else the machine does.
package benchbase
