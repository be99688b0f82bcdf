package main

import (
	"fmt"
	"io"
	"os"

	"github.com/rdmabench/rdmabench/bench/dropin"
	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/internal/version"
)

// The perftest drop-in (docs/perftest.md): invoked through a link named
// after a perftest tool (ib_send_lat, ib_write_bw, ...), rdmabench takes
// that tool's arguments; bench/dropin runs its server or client.

// dropIn runs the drop-in when argv[0]'s base name is a perftest tool;
// ok is false otherwise (rdmabench's own command line).
func dropIn(argv []string) (code int, ok bool) {
	if len(argv) == 0 {
		return 0, false
	}
	tool, ok := perftest.ToolOf(argv[0])
	if !ok {
		return 0, false
	}
	return runDropIn(tool, argv[1:], os.Stdout, os.Stderr), true
}

// runDropIn parses tool's arguments and runs the drop-in (dropin.Run),
// returning its exit code.
func runDropIn(tool perftest.Tool, args []string, stdout, stderr io.Writer) int {
	o, err := perftest.Parse(tool, args)
	if err != nil {
		fmt.Fprintf(stderr, "%s (rdmabench drop-in): %v\n", tool.Name, err)
		return exitUsage
	}
	switch {
	case o.Help:
		dropin.WriteUsage(stdout, tool)
		return exitOK
	case o.Version:
		fmt.Fprintf(stdout, "Version: rdmabench %s (perftest drop-in for %s)\n", version.String(), tool.Name)
		return exitOK
	}
	ctx, stop := signalContext()
	defer stop()
	err = endedEarly(ctx, dropin.Run(ctx, dropin.Config{Options: o, Stdout: stdout, Stderr: stderr, CommandLine: os.Args}))
	if err == nil {
		return exitOK
	}
	fmt.Fprintf(stderr, "%s (rdmabench drop-in): %v\n", tool.Name, err)
	return exitCode(err)
}
