// Package compare lines up the tests of several result documents (text,
// Markdown, Go benchmark format) and gates a run against a baseline with
// per-metric limits and port counter limits (counters.go), states on repeated
// runs the smallest change the gate could detect (power.go) and names the
// environment fields that differ (envdiff.go). Pure Go: it runs
// on a laptop without rdma-core.
package compare
