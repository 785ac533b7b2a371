package tools

// Source is a set of tools that can change while a loop runs, such as the
// tools of MCP servers, whose lists change when a server says so. A loop
// given a source asks for its tools before every step and never within
// one, so the calls of a step are checked against the tools the model was
// shown; it rebuilds its registry only when Generation has changed.
// Tools should keep the places of the tools they keep and add new ones at
// the end, so the request prefix stays cacheable.
type Source interface {
	// Tools returns the current tools, in the order the model sees them.
	Tools() []Tool
	// Generation changes whenever Tools would return a different list.
	Generation() uint64
}
