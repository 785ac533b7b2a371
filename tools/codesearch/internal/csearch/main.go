// Command csearch runs one call of the glob or grep tool over a
// directory, as a process of its own, and prints the tool's result text.
// It exists so that a benchmark can time the tools as whole processes
// (start, search, output, exit) beside ripgrep doing the same work:
//
//	csearch [-workers n] [-cpuprofile file -repeat n] dir tool '{"pattern":"NewReader","literal":true}'
//
// The directory is opened with fslocal and becomes the working
// directory of the call; the arguments are the tool's JSON arguments.
// The exit status is 0 for a result, 1 for a tool error (its text on
// stderr) and 2 for bad usage.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/pprof"

	"github.com/go-harness/harness/fslocal"
	"github.com/go-harness/harness/internal/toolexec"
	"github.com/go-harness/harness/tools"
	"github.com/go-harness/harness/tools/codesearch"
)

func main() {
	workers := flag.Int("workers", 0, "files searched at once (0: the tools' default)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	repeat := flag.Int("repeat", 1, "run the call this many times (for a profile)")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: csearch [-workers n] dir glob|grep json-arguments")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 3 {
		flag.Usage()
		os.Exit(2)
	}
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "csearch:", err)
			os.Exit(2)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "csearch:", err)
			os.Exit(2)
		}
	}
	code := 0
	for range max(1, *repeat) {
		code = run(flag.Arg(0), flag.Arg(1), flag.Arg(2), *workers)
	}
	if *profile != "" {
		pprof.StopCPUProfile()
	}
	os.Exit(code)
}

func run(dir, tool, args string, workers int) int {
	fsys, err := fslocal.New(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "csearch:", err)
		return 2
	}
	defer fsys.Close()
	reg, err := tools.NewRegistry(codesearch.Tools(codesearch.Config{Workers: workers})...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "csearch:", err)
		return 2
	}
	state := &tools.State{}
	defer state.Close()
	call := &tools.Call{ID: "c", Name: tool, Arguments: args,
		Env: &tools.Env{Cwd: fsys.Root(), FS: fsys, State: state}}
	res := reg.Check(call)
	if res == nil {
		res = toolexec.Executor()(context.Background(), call)
	}
	if res.IsError {
		fmt.Fprintln(os.Stderr, res.Text())
		return 1
	}
	os.Stdout.WriteString(res.Text() + "\n")
	return 0
}
