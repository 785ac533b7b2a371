// Package textcut cuts text to a byte budget without splitting UTF-8
// sequences, preferring line boundaries, and keeps the tail of a stream
// in bounded memory.
package textcut
