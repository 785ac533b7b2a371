// Command quickstart runs one agent turn that fixes a bug in a small
// workspace and streams its events to the terminal.
//
// By default it runs offline against a scripted model, so it works on any
// machine with Go installed, and it stays offline whatever keys the
// environment holds:
//
//	go run ./examples/quickstart
//
// With -live it runs against the model the environment names: DeepSeek
// with DEEPSEEK_API_KEY, or any OpenAI-compatible endpoint with
// HARNESS_BASE_URL, HARNESS_API_KEY and HARNESS_MODEL. -live without a
// key is an error that says what to set.
//
//	DEEPSEEK_API_KEY=sk-... go run ./examples/quickstart -live
package main
