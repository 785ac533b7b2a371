// Command server is the test MCP server of package mcp over stdio. With
// -ignore-eof it keeps running after its input closes, as badly behaved
// servers do.
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/go-harness/harness/tools/mcp/internal/testserver"
)

func main() {
	ignoreEOF := flag.Bool("ignore-eof", false, "keep running after standard input closes")
	ignoreTerm := flag.Bool("ignore-term", false, "ignore SIGTERM")
	flag.Parse()
	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	var stats testserver.Stats
	s := testserver.New(&stats, func() { os.Exit(3) })
	err := s.Run(context.Background(), &sdk.StdioTransport{})
	if *ignoreEOF {
		for {
			time.Sleep(time.Hour)
		}
	}
	if err != nil {
		log.Print(err)
	}
}
