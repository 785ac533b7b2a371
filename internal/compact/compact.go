// Package compact holds the loop's decision of where to cut a history
// for compaction, and the text a summary reaches the model as (the loop
// sizes it, the session's history writes it). It imports only harness.
package compact

import "github.com/go-harness/harness"

// Split returns how many leading messages can be replaced by a
// summary so that about keepTokens of the most recent history stays
// verbatim, the size of message i being tokens(i). The split never
// separates a tool call from its result: it falls just before a user
// message or an assistant message. Zero means nothing can be compacted.
func Split(msgs []harness.Message, keepTokens int64, tokens func(i int) int64) int {
	var kept int64
	i := len(msgs)
	for i > 1 && kept < keepTokens {
		i--
		kept += tokens(i)
	}
	// Keep the whole step: back up to the message that made the calls.
	for i > 0 && i < len(msgs) && msgs[i].Role == harness.RoleTool {
		i--
	}
	if i <= 0 || i >= len(msgs) {
		return 0
	}
	return i
}

// SummaryText wraps a compaction summary the way the model sees it.
func SummaryText(s string) string {
	return "<summary of the earlier conversation>\n" + s + "\n</summary of the earlier conversation>"
}
