// Package spillwriter is the streaming spill writer and the preview it
// and the spill middleware cut: a Writer keeps the head and the tail of
// a stream in bounded memory and saves the whole stream to a
// tools.OutputStore as it arrives; BuildPreview cuts an output to a
// byte limit with a notice that says where the rest is and how to read
// it. The shell's output capture and the loop's oversize backstop use the
// Writer; package spill's middleware uses BuildPreview. It is internal
// because only these implementers need it: users configure spilling
// through package spill.
//
// It imports the root package, tools and internal helpers, never spill
// or agent.
package spillwriter
