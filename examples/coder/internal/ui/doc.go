// Package ui is the coder's terminal user interface: the views that show
// a turn's events, and the console that reads prompts and answers.
//
// # Views
//
// A View shows events. NewHuman draws them for people: streamed text,
// dimmed reasoning, one card per finished tool call chosen by the call's
// render intent, the live output of running commands, and a spinner on a
// terminal. NewJSON writes each event as one JSON line, as
// agent.MarshalEvent encodes it, and messages for people to stderr.
//
// # Console
//
// The Console reads prompts and the answers to approval questions, and
// follows Ctrl-C and the terminal's width while a turn runs. Piped, it
// reads stdin line by line. On a terminal it puts the terminal in raw
// mode and edits the line in place, with a history kept per workspace.
//
// # Why its own line editor
//
// golang.org/x/term's Terminal edits lines well, but it echoes every key
// as it reads it and owns the reading. The coder needs one key reader
// shared by the prompt, the approval questions asked during a turn and
// the keys typed while a turn runs (kept unseen as the next prompt's
// text), and a long line that scrolls sideways so redrawing it never
// moves the live output above. The editor here is that, in about 300
// lines; x/term still provides the terminal's size.
//
// It imports the harness's public packages only.
package ui
