package plot

// KindInfo is one value of rdmabench plot's --kind: what its help line
// and docs/plots.md say it draws.
type KindInfo struct {
	Name string
	// Help is the flag's and the command's one-line description (plain
	// text).
	Help string
	// Doc is the description of docs/plots.md's table (Markdown, one line).
	Doc string
}

// KindTable lists every --kind, in KindNames' order, then the kinds of
// the other documents (heatmap, cliffs). docs/plots.md's table is
// generated from it (rdmabench gen-docs).
var KindTable = []KindInfo{
	{KindAuto, "percentile for several files or one message size, the size plots for a size sweep, load for load sweeps",
		"`percentile` for several files or a single size, and the size plots for a size sweep (`load` too for a document with load sweeps); " +
			"a mesh document draws `heatmap`, a cliffs document `cliffs`"},
	{KindPercentile, "latency against percentile (HdrHistogram style; runs overlay)",
		"latency (µs) against percentile on HdrHistogram's log scale (0%, 90%, 99%, 99.9% …); runs of a test overlay"},
	{KindCDF, "cumulative fraction against latency",
		"cumulative fraction against latency (log µs)"},
	{KindSizeLatency, "p50 and p99 (or --metric) latency against message size",
		"p50 and p99 (or `--metric p99_9`, …) against message size (log2)"},
	{KindSizeBW, "bandwidth against message size",
		"bandwidth (MiB/s) against message size (log2)"},
	{KindLoad, "latency against offered load (run --load-sweep)",
		"p50, p99 and p99.9 (log µs) against the offered load in % of the load's peak, one color per sweep (`run --load-qps N --load-sweep ...`); the knee in the title when there is one sweep"},
	{KindTimeline, "one test's intervals: latency and port counters over time (-D or --interval)",
		"one test's intervals (a `-D` run, or one with `--interval`): above, p50 and p99 of each interval (µs); below, on the same time axis, " +
			"how much each port counter moved in each interval, per side (client solid, server dashed); by default the counters that signal trouble " +
			"and moved (retransmissions, out-of-sequence, sequence errors, RNR, duplicates, ECN/CNP, ...), or those `--counters a,b` names " +
			"(JSON names, e.g. `sent_pkts`); the first test with intervals that `--op`/`--mode`/`--size` select"},
	{KindHeatmap, "one mesh document: the N×N map of one test (p99 or --metric; bandwidth for bw)",
		"one `rdmabench mesh --json` document: the N×N map of one test, rows the client, columns the server, axes named by host; " +
			"p99 (or `--metric`) for a latency test, bandwidth for a bw test (`--op`, `--mode`, `--size` pick the test; default: the first lat test); " +
			"chosen by itself for a mesh document ([mesh.md](mesh.md))"},
	{KindCliffs, "one cliffs document: the figure along its axis, the runs' spread, each knee",
		"one `rdmabench cliffs --json` document: the figure along its axis (log2), the runs' median, min and max, each knee " +
			"([cliffs.md](cliffs.md)); chosen by itself for a cliffs document"},
}

// KindArgs are --kind's values, in KindTable's order.
func KindArgs() []string {
	out := make([]string, len(KindTable))
	for i, k := range KindTable {
		out[i] = k.Name
	}
	return out
}
