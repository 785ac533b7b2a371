// Package assemble joins the chunks of one streamed model answer into an
// assistant message: the loop assembles every answer with it, and
// provider adapters' tests check their chunks with it. It is internal
// because only the loop and adapters' tests need it; users see the
// assembled harness.Message.
//
// It imports the root package and agent/model, never agent.
package assemble
