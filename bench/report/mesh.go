package report

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/result"
)

// MeshTests lists the tests of a mesh document in first-seen order.
func MeshTests(doc *result.MeshDocument) []result.Key {
	var keys []result.Key
	seen := map[result.Key]bool{}
	for _, p := range doc.Pairs {
		for i := range p.Results {
			k := result.KeyOf(&p.Results[i])
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// MeshResult is pair p's result of test k, or nil.
func MeshResult(p *result.MeshPair, k result.Key) *result.Result {
	for i := range p.Results {
		if result.KeyOf(&p.Results[i]) == k {
			return &p.Results[i]
		}
	}
	return nil
}

// RankLabel is "host(rank)".
func RankLabel(doc *result.MeshDocument, rank int) string {
	h := ""
	if rank < len(doc.Ranks) {
		h = doc.Ranks[rank].Host
	}
	if h == "" {
		h = "?"
	}
	return fmt.Sprintf("%s(%d)", h, rank)
}

// WriteMeshMatrix writes one N×N matrix per test, rows the client, columns
// the server: latency tests show p50/p99/p99.9 in µs, bandwidth tests the
// bandwidth in unit. "FAILED" marks a failed pair, "-" one not measured.
// Failed pairs are listed after the matrices with their errors.
func WriteMeshMatrix(w io.Writer, doc *result.MeshDocument, unit string) error {
	var b strings.Builder
	n := len(doc.Ranks)
	fmt.Fprintf(&b, "mesh: %d ranks, pattern %s, %d rounds, %d pairs, %d failed (%s)\n",
		n, doc.Pattern, doc.Rounds, len(doc.Pairs), doc.Failed(), doc.Outcome)
	labels := make([]string, n)
	for i := range labels {
		labels[i] = RankLabel(doc, i)
	}
	for _, k := range MeshTests(doc) {
		cells := make([][]string, n)
		for i := range cells {
			cells[i] = make([]string, n)
			for j := range cells[i] {
				cells[i][j] = "-"
			}
		}
		var what string
		for i := range doc.Pairs {
			p := &doc.Pairs[i]
			if p.Client >= n || p.Server >= n {
				continue
			}
			r := MeshResult(p, k)
			c := "FAILED"
			switch {
			case r == nil && p.Status == result.StatusOK:
				continue
			case r == nil:
			case k.Mode == result.ModeLat:
				c = r.Latency.P50.US() + "/" + r.Latency.P99.US() + "/" + r.Latency.P99_9.US()
			default:
				v, _, _ := r.Bandwidth.In(unit)
				c = strconv.FormatFloat(v, 'f', 2, 64)
			}
			cells[p.Client][p.Server] = c
		}
		if k.Mode == result.ModeLat {
			what = "p50/p99/p99.9 latency, usec"
		} else {
			_, l, _ := result.Bandwidth{}.In(unit)
			what = "bandwidth, " + l
		}
		fmt.Fprintf(&b, "\n%s: %s (row: client, column: server)\n", k, what)
		width := 8
		for i := range n {
			width = max(width, len(labels[i]))
			for j := range n {
				width = max(width, len(cells[i][j]))
			}
		}
		fmt.Fprintf(&b, "%-*s", width, "")
		for j := range n {
			fmt.Fprintf(&b, "  %*s", width, labels[j])
		}
		b.WriteString("\n")
		for i := range n {
			fmt.Fprintf(&b, "%-*s", width, labels[i])
			for j := range n {
				fmt.Fprintf(&b, "  %*s", width, cells[i][j])
			}
			b.WriteString("\n")
		}
	}
	first := true
	for _, p := range doc.Pairs {
		if p.Status == result.StatusOK {
			continue
		}
		if first {
			b.WriteString("\nfailed pairs:\n")
			first = false
		}
		fmt.Fprintf(&b, "  %s (round %d): %s\n", p.Name(), p.Round, p.Error)
	}
	for _, r := range doc.Ranks {
		if r.Status == result.StatusLost {
			fmt.Fprintf(&b, "  rank %s lost: %s\n", RankLabel(doc, r.Rank), r.Error)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Outlier is a pair whose figure of a test lies more than k robust
// deviations from the median of all pairs (worse side only: higher latency,
// lower bandwidth).
type Outlier struct {
	Pair   *result.MeshPair
	Test   result.Key
	Metric string  // "p99" (ns) or "bw" (MB/s)
	Value  float64 // the pair's figure
	Median float64 // the fabric's median
	Score  float64 // (Value − Median) / max(1.4826 × MAD, 1 % of Median), worse is positive; +Inf when both are 0
	Result *result.Result
}

// MeshOutliers finds, for every test, the pairs more than k robust
// deviations (1.4826 × the median absolute deviation, at least 1 % of the
// median) worse than the median of the measured pairs: p99 for latency tests, bandwidth for
// bandwidth tests. Tests with fewer than 3 measured pairs are skipped.
// Worst first.
func MeshOutliers(doc *result.MeshDocument, k float64) []Outlier {
	var out []Outlier
	for _, key := range MeshTests(doc) {
		metric := "p99"
		if key.Mode == result.ModeBW {
			metric = "bw"
		}
		type val struct {
			p *result.MeshPair
			r *result.Result
			v float64
		}
		var vals []val
		for i := range doc.Pairs {
			p := &doc.Pairs[i]
			r := MeshResult(p, key)
			if r == nil || p.Status != result.StatusOK {
				continue
			}
			v, ok := r.Latency.P99.NS, r.Latency.P99.OK
			if metric == "bw" {
				v, ok = r.Bandwidth.MBPerSec, true
			}
			if ok {
				vals = append(vals, val{p, r, v})
			}
		}
		if len(vals) < 3 {
			continue
		}
		xs := make([]float64, len(vals))
		for i, v := range vals {
			xs[i] = v.v
		}
		med := median(xs)
		dev := make([]float64, len(xs))
		for i, x := range xs {
			dev[i] = math.Abs(x - med)
		}
		// the deviation unit: 1.4826 × MAD, but at least 1 % of the median,
		// so that a fabric of equal figures does not make any wobble an outlier
		mad := max(1.4826*median(dev), 0.01*math.Abs(med))
		for _, v := range vals {
			d := v.v - med
			if metric == "bw" {
				d = -d
			}
			if d <= 0 {
				continue
			}
			score := math.Inf(1)
			if mad > 0 {
				score = d / mad
			}
			if score > k {
				out = append(out, Outlier{Pair: v.p, Test: key, Metric: metric, Value: v.v, Median: med, Score: score, Result: v.r})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// WriteMeshOutliers lists outliers worst first, each with the trouble
// counters (result.TroubleCounters) of both ends; "no outliers" when none.
func WriteMeshOutliers(w io.Writer, outs []Outlier, k float64) error {
	var b strings.Builder
	if len(outs) == 0 {
		fmt.Fprintf(&b, "\noutliers (> %g robust deviations from the median): none\n", k)
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "\noutliers (> %g robust deviations from the median), worst first:\n", k)
	for _, o := range outs {
		val, med := strconv.FormatFloat(o.Value/1000, 'f', 2, 64)+" us", strconv.FormatFloat(o.Median/1000, 'f', 2, 64)+" us"
		if o.Metric == "bw" {
			val, med = strconv.FormatFloat(o.Value, 'f', 2, 64)+" MB/s", strconv.FormatFloat(o.Median, 'f', 2, 64)+" MB/s"
		}
		score := "inf (MAD 0)"
		if !math.IsInf(o.Score, 1) {
			score = strconv.FormatFloat(o.Score, 'f', 1, 64)
		}
		fmt.Fprintf(&b, "  %s %s %s: %s vs median %s, %s deviations", o.Pair.Name(), o.Test, o.Metric, val, med, score)
		if c := o.Result.Counters; c != nil {
			var sides []string
			if t := troubleOf(c.Client); t != "" {
				sides = append(sides, "client "+t)
			}
			if t := troubleOf(c.Server); t != "" {
				sides = append(sides, "server "+t)
			}
			if len(sides) > 0 {
				fmt.Fprintf(&b, "; counters: %s", strings.Join(sides, "; "))
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// OutlierNIC is a rank's NIC that takes part in several outlier pairs.
type OutlierNIC struct {
	Rank   int
	Label  string // "host(rank)"
	Device string // the rank's device ("" by route)
	Pairs  int    // the outlier pairs it is an end of
}

// MeshOutlierNICs names the NICs behind the outliers: the ranks that are an
// end of the most outlier pairs, when that is at least 2 (one outlier pair
// cannot tell its two ends apart). With --rails each document is one rail,
// so this is the NIC that is an outlier on its rail.
func MeshOutlierNICs(doc *result.MeshDocument, outs []Outlier) []OutlierNIC {
	type pk struct{ c, s int }
	seen := map[pk]bool{}
	n := map[int]int{}
	for _, o := range outs {
		k := pk{o.Pair.Client, o.Pair.Server}
		if seen[k] {
			continue
		}
		seen[k] = true
		n[o.Pair.Client]++
		n[o.Pair.Server]++
	}
	most := 0
	for _, c := range n {
		most = max(most, c)
	}
	var out []OutlierNIC
	if most < 2 {
		return nil
	}
	for r := range len(doc.Ranks) {
		if n[r] == most {
			out = append(out, OutlierNIC{Rank: r, Label: RankLabel(doc, r), Device: doc.Ranks[r].Device, Pairs: most})
		}
	}
	return out
}

// WriteMeshOutlierNICs writes the NICs MeshOutlierNICs names, one line;
// nothing when it names none. what names the set of pairs, e.g. "rail 1".
func WriteMeshOutlierNICs(w io.Writer, doc *result.MeshDocument, outs []Outlier, what string) error {
	nics := MeshOutlierNICs(doc, outs)
	if len(nics) == 0 {
		return nil
	}
	var parts []string
	for _, c := range nics {
		dev := c.Device
		if dev == "" {
			dev = "device by route"
		}
		parts = append(parts, fmt.Sprintf("%s %s", c.Label, dev))
	}
	_, err := fmt.Fprintf(w, "outlier NIC on %s: %s (an end of %d of the outlier pairs)\n", what, strings.Join(parts, ", "), nics[0].Pairs)
	return err
}
