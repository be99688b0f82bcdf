// Package report prints results as perftest-style text: the header, the
// latency, bandwidth and connection tables, interval lines and the port
// counter trouble lines, and the table layout the other text outputs share.
// Pure Go.
package report
