// Command losstail prints the table (and with -plot draws the plot) of
// loss-<percent>.json documents, as make bench's loss run does
// (internal/exptool/losstail).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/rdmabench/rdmabench/internal/exptool/losstail"
)

func main() {
	plotPath := flag.String("plot", "", "write the latency-against-loss plot here (.svg or .png)")
	flag.Parse()
	if err := losstail.Run(flag.Args(), *plotPath, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "losstail:", err)
		os.Exit(1)
	}
}
