// Package editdist measures how far apart two short strings are, for
// "did you mean" suggestions.
package editdist
