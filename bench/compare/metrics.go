package compare

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
)

// Metric names accepted by ParseMetrics and ParseMaxRegress. Latency metrics
// are in ns in JSON: the sample latency of lat tests, the completion latency
// of bw tests. MetricBW and MetricMpps apply to bw tests only.
const (
	MetricP50    = "p50"
	MetricP90    = "p90"
	MetricP99    = "p99"
	MetricP99_9  = "p99_9"
	MetricP99_99 = "p99_99"
	MetricMean   = "mean"
	MetricMax    = "max"
	MetricBW     = "bw"   // bandwidth (MB/s in JSON; shown in the chosen unit)
	MetricMpps   = "mpps" // message rate, 10^6 messages/s
)

// Default table metrics, used when no metrics are given.
var (
	DefaultLatMetrics = []string{MetricP50, MetricP99, MetricP99_9, MetricMax}
	DefaultBWMetrics  = []string{MetricBW, MetricP50, MetricP99}
)

// metricDef describes one metric.
type metricDef struct {
	key  string  // canonical name, e.g. "p99_9"
	name string  // display name, e.g. "p99.9"
	rate bool    // bandwidth or message rate: higher is better, bw tests only
	pct  float64 // a latency percentile's percent (99.9); 0 for the others
}

// metricDefs lists the metrics in their canonical order.
var metricDefs = []metricDef{
	{key: MetricP50, name: "p50", pct: 50},
	{key: MetricP90, name: "p90", pct: 90},
	{key: MetricP99, name: "p99", pct: 99},
	{key: MetricP99_9, name: "p99.9", pct: 99.9},
	{key: MetricP99_99, name: "p99.99", pct: 99.99},
	{key: MetricMean, name: "mean"},
	{key: MetricMax, name: "max"},
	{key: MetricBW, name: "bw", rate: true},
	{key: MetricMpps, name: "mpps", rate: true},
}

// Metrics are the canonical metric names, in their order (--metrics,
// --max-regress; any reported percentile is taken as well).
func Metrics() []string {
	var keys []string
	for _, m := range metricDefs {
		keys = append(keys, m.key)
	}
	return keys
}

// metricKeys returns the canonical metric names, comma-separated.
func metricKeys() string {
	var keys []string
	for _, m := range metricDefs {
		keys = append(keys, m.key)
	}
	return strings.Join(keys, ", ") + ", or any percentile the results report (--percentiles), e.g. p99.999"
}

// lookupMetric finds a metric by canonical name or alias ("p99.9",
// "p99.99"), or makes one for any other percentile ("p99.999" or
// "p99_999"), which reads the results' Latency.Percentiles.
func lookupMetric(s string) (metricDef, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, m := range metricDefs {
		if s == m.key || s == m.name {
			return m, true
		}
	}
	if num, ok := strings.CutPrefix(s, "p"); ok {
		if p, err := strconv.ParseFloat(strings.ReplaceAll(num, "_", "."), 64); err == nil && p > 0 && p < 100 {
			name := result.PercentileLabel(p)
			return metricDef{key: strings.ReplaceAll(name, ".", "_"), name: name, pct: p}, true
		}
	}
	return metricDef{}, false
}

func metricByKey(key string) metricDef {
	m, _ := lookupMetric(key)
	return m
}

// appliesTo reports whether m is defined for a test of mode: latency metrics
// are defined in both modes, rates in bw mode only.
func (m metricDef) appliesTo(mode string) bool { return !m.rate || mode == result.ModeBW }

// value returns m of r in its JSON unit (ns, MB/s or Mpps) and whether it is
// backed: an n/a percentile, or a latency of an empty histogram, is not.
func (m metricDef) value(r *result.Result) (float64, bool) {
	l := &r.Latency
	if q, ok := l.Quantile(m.pct); ok && m.pct > 0 {
		return q.Value.NS, q.Value.OK
	}
	switch m.key {
	case MetricP50:
		return l.P50.NS, l.P50.OK
	case MetricP90:
		return l.P90.NS, l.P90.OK
	case MetricP99:
		return l.P99.NS, l.P99.OK
	case MetricP99_9:
		return l.P99_9.NS, l.P99_9.OK
	case MetricP99_99:
		return l.P99_99.NS, l.P99_99.OK
	case MetricMean:
		return l.Mean, l.Count > 0
	case MetricMax:
		return l.Max, l.Count > 0
	case MetricBW:
		return r.Bandwidth.MBPerSec, true
	case MetricMpps:
		return r.Bandwidth.Mpps, true
	}
	return 0, false
}

// format formats v, in m's JSON unit, for display: latency in µs with 2
// decimals, bandwidth in unit with 2 decimals, message rate with 6.
func (m metricDef) format(v float64, unit string) string {
	switch m.key {
	case MetricBW:
		bw, _, _ := bandwidthOfMB(v).In(unit)
		return strconv.FormatFloat(bw, 'f', 2, 64)
	case MetricMpps:
		return strconv.FormatFloat(v, 'f', 6, 64)
	}
	return report.US(v)
}

// unitLabel is the unit m is displayed in, as in "41.20 us".
func (m metricDef) unitLabel(unit string) string {
	switch m.key {
	case MetricBW:
		_, label, _ := result.Bandwidth{}.In(unit)
		return label
	case MetricMpps:
		return "Mpps"
	}
	return "us"
}

// rowLabel is the table's metric column for m in a test of mode, in the
// style of the report tables: "p99[usec]", "comp_p99[usec]", "BW[MiB/sec]".
func (m metricDef) rowLabel(mode, unit string) string {
	switch m.key {
	case MetricBW:
		_, label, _ := result.Bandwidth{}.In(unit)
		return "BW[" + label + "]"
	case MetricMpps:
		return "MsgRate[Mpps]"
	}
	if mode == result.ModeBW {
		return "comp_" + m.name + "[usec]"
	}
	return m.name + "[usec]"
}

// bandwidthOfMB returns the bandwidth of mb 10^6 bytes/s in every unit.
func bandwidthOfMB(mb float64) result.Bandwidth {
	return result.Bandwidth{MBPerSec: mb, MiBPerSec: mb * 1e6 / (1 << 20), GbitPerSec: mb * 8 / 1e3}
}

// ParseMetrics parses a comma-separated list of metric names (p50, p90, p99,
// p99_9 or p99.9, p99_99 or p99.99, mean, max, bw, mpps) into canonical
// names, in the given order without duplicates. An empty string gives nil:
// the defaults, DefaultLatMetrics and DefaultBWMetrics.
func ParseMetrics(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for _, part := range strings.Split(s, ",") {
		m, ok := lookupMetric(part)
		if !ok {
			return nil, fmt.Errorf("metric %q unknown; valid: %s", strings.TrimSpace(part), metricKeys())
		}
		if !slices.Contains(out, m.key) {
			out = append(out, m.key)
		}
	}
	return out, nil
}

// ParseMaxRegress parses regression limits such as "p99=10%,bw=5%" into a
// map from canonical metric name to the limit as a fraction (0.10, 0.05).
// Every entry needs a known metric, a non-negative number and a % sign; a
// metric may appear once. The error names the bad entry.
func ParseMaxRegress(s string) (map[string]float64, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("max-regress is empty; want METRIC=PERCENT%,..., e.g. p99=10%,bw=5%")
	}
	limits := map[string]float64{}
	for _, part := range strings.Split(s, ",") {
		entry := strings.TrimSpace(part)
		k, v, ok := strings.Cut(entry, "=")
		if !ok {
			return nil, fmt.Errorf("max-regress entry %q: want METRIC=PERCENT%%, e.g. p99=10%%", entry)
		}
		m, ok := lookupMetric(k)
		if !ok {
			return nil, fmt.Errorf("max-regress entry %q: metric %q unknown; valid: %s", entry, strings.TrimSpace(k), metricKeys())
		}
		if _, dup := limits[m.key]; dup {
			return nil, fmt.Errorf("max-regress entry %q: metric %s given twice", entry, m.key)
		}
		v = strings.TrimSpace(v)
		num, pct := strings.CutSuffix(v, "%")
		if !pct {
			return nil, fmt.Errorf("max-regress entry %q: limit %q needs a %% sign, e.g. %s=10%%", entry, v, m.key)
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("max-regress entry %q: limit %q is not a non-negative percentage", entry, v)
		}
		if m.rate && f >= 100 {
			return nil, fmt.Errorf("max-regress entry %q: a %s limit must be below 100%%", entry, m.key)
		}
		limits[m.key] = f / 100
	}
	return limits, nil
}

// metricsFor returns the metrics shown for a test of mode.
func metricsFor(metrics []string, mode string) []metricDef {
	if len(metrics) == 0 {
		metrics = DefaultLatMetrics
		if mode == result.ModeBW {
			metrics = DefaultBWMetrics
		}
	}
	var out []metricDef
	for _, k := range metrics {
		if m, ok := lookupMetric(k); ok && m.appliesTo(mode) {
			out = append(out, m)
		}
	}
	return out
}
