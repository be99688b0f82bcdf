// Command wirebw summarises the files of make bench-wire (build/pair-wire-bw):
// internal/exptool/wirebw's Summarise on a directory kept from a run.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/rdmabench/rdmabench/internal/exptool/wirebw"
)

func main() {
	dir := flag.String("dir", "", "the guests' output: DIR/a (server) and DIR/b (client)")
	order := flag.String("order", "", "the tools in run order, space-separated: rb or pt; 8 per round")
	reps := flag.Int("reps", 10000, "bootstrap resamples")
	target := flag.Float64("target", 0.97, "the ratio the overall interval is held to")
	flag.Parse()
	if err := wirebw.Summarise(*dir, strings.Fields(*order), *reps, *target, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "wirebw:", err)
		os.Exit(1)
	}
}
