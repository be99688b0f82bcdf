// Command vsperftest re-reads the output directory of make bench's comparison
// with perftest (TestBenchVsPerftest in internal/e2e/exp, build/bench-vs-perftest)
// and prints its report again (internal/vsperftest): the same figures, ratios
// and intervals, e.g. after a change to the analysis or with more resamples.
// Exit 1 when a run failed or a figure is missing, 2 on bad usage.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/rdmabench/rdmabench/internal/vsperftest"
)

func main() {
	var c vsperftest.Config
	flag.StringVar(&c.Dir, "dir", "", "the test's output directory (build/bench-vs-perftest)")
	flag.IntVar(&c.Iters, "iters", 20000, "latency iterations per run (BENCH_ITERS)")
	flag.IntVar(&c.BWDur, "bw-duration", 3, "bandwidth seconds per run (BENCH_BW_DURATION)")
	flag.Int64Var(&c.RSSSmall, "rss-small", 10000, "iterations of the small RSS run (BENCH_RSS_SMALL)")
	flag.Int64Var(&c.RSSLarge, "rss-large", 1000000, "iterations of the large RSS run (BENCH_RSS_LARGE)")
	flag.IntVar(&c.Reps, "reps", 4, "runs per tool of each comparison (4 × BENCH_ROUNDS)")
	flag.IntVar(&c.Resamples, "resamples", 10000, "bootstrap resamples per ratio")
	flag.Parse()
	if c.Dir == "" {
		fmt.Fprintln(os.Stderr, "vsperftest: need -dir")
		os.Exit(2)
	}
	c.LoadStart, c.LoadEnd, c.Others = "?", "?", "?"
	if vsperftest.Run(c, os.Stdout, os.Stderr) > 0 {
		os.Exit(1)
	}
}
