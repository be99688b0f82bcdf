// Package expect judges a run's figures against expectations given on the
// command line (--expect-bw, --expect-lat) by the interval rule: a bound
// passes only when the figure's whole confidence interval clears it, fails
// when the whole interval misses it, and otherwise the verdict is "cannot
// tell", with the --repeat that would settle it (docs/node-bringup.md,
// "How sure is a verdict").
//
// The intervals (95 %) are those the result carries: a latency
// percentile's order-statistic interval (hist.OrderStatCI) for one run; for
// runs repeated with --repeat, the Student t interval of the runs' figures
// (on their logarithm), never narrower than one run's own sampling error.
// The bandwidth of one run has no interval: it cannot be judged.
package expect
