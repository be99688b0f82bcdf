// Command meshcheck checks and edits mesh documents (internal/exptool/meshcheck):
//
//	meshcheck complete FILE N OPS [modes=lat,bw] [hosts=N] [launcher=SUBSTRING]
//	meshcheck local FILE N DEVICE PORT
//	meshcheck killed FILE RANK
//	meshcheck raise IN OUT PAIR F
//
// It prints what it checked and exits 1 on the first failed check.
package main

import (
	"fmt"
	"os"

	"github.com/rdmabench/rdmabench/internal/exptool/meshcheck"
)

func main() {
	if err := meshcheck.Run(os.Stdout, os.Args[1:]...); err != nil {
		fmt.Fprintln(os.Stderr, "meshcheck:", err)
		os.Exit(1)
	}
}
