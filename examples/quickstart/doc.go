// Command quickstart runs one agent turn that fixes a bug in a small
// workspace and streams its events to the terminal.
//
// With no API key it runs offline against a scripted model, so it works on
// any machine with Go installed:
//
//	go run ./examples/quickstart
//
// With DEEPSEEK_API_KEY set it runs live against DeepSeek; with
// HARNESS_BASE_URL, HARNESS_API_KEY and HARNESS_MODEL against any
// OpenAI-compatible endpoint.
package main
