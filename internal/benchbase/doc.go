// Package benchbase holds the hand-written baselines that benchmarks in
// several packages measure the library against, so each baseline is
// written once.
package benchbase
