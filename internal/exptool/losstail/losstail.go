// Package losstail turns the documents make bench's loss run collects
// (TestLossTail in internal/e2e/exp/pair: one per loss rate, loss-<percent>.json) into a Markdown table (stdout) and a
// plot of latency percentiles against loss: p50, p99 and p99.9 of SEND and
// WRITE latency, WRITE bandwidth, and the retransmission counters of both
// sides. Pure Go: it reads result documents only; scripts/losstail is its
// command.
package losstail

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/plot"
	"github.com/rdmabench/rdmabench/bench/result"
)

// rate is one loss rate's document.
type rate struct {
	pct float64
	doc *result.Document
}

// Run writes the table of the documents at paths (loss-<percent>.json each)
// to w, and with plotPath the latency-against-loss plot there.
func Run(paths []string, plotPath string, w io.Writer) error { return run(paths, plotPath, w) }

func run(paths []string, plotPath string, w io.Writer) error {
	var rates []rate
	for _, p := range paths {
		v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "loss-"), ".json")
		pct, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return fmt.Errorf("%s: want loss-<percent>.json", p)
		}
		doc, err := result.ReadJSONFile(p)
		if err != nil {
			return err
		}
		rates = append(rates, rate{pct, doc})
	}
	if len(rates) == 0 {
		return fmt.Errorf("no documents")
	}
	sort.Slice(rates, func(i, j int) bool { return rates[i].pct < rates[j].pct })
	writeTable(w, rates)
	if plotPath == "" {
		return nil
	}
	var lines []plot.Line
	for i, k := range []struct{ op, name string }{{"send", "SEND"}, {"write", "WRITE"}} {
		for j, q := range []string{"p50", "p99", "p99.9"} {
			l := plot.Line{Name: k.name + " " + q, Color: i, Dash: j, Glyph: j}
			for _, r := range rates {
				if res := find(r.doc, k.op, result.ModeLat); res != nil {
					if v, ok := pick(res.Latency, q); ok {
						l.Sizes, l.Ys = append(l.Sizes, r.pct), append(l.Ys, v/1000)
					}
				}
			}
			lines = append(lines, l)
		}
	}
	return plot.Lines("latency against packet loss on one guest's wire (rxe over an emulated link)", "loss (%)",
		"latency (usec, log scale)", lines, true, plotPath)
}

// find returns the result of op and mode in doc, or nil.
func find(doc *result.Document, op, mode string) *result.Result {
	for i := range doc.Results {
		if r := &doc.Results[i]; r.Op == op && r.Mode == mode {
			return r
		}
	}
	return nil
}

func pick(l result.Latency, q string) (float64, bool) {
	n := map[string]result.Nanos{"p50": l.P50, "p99": l.P99, "p99.9": l.P99_9}[q]
	return n.NS, n.OK
}

// retrans sums the retransmission counters (result.TroubleRetransmissions)
// of both sides of r, and the duplicate requests the responders saw.
func retrans(r *result.Result) (re, dup int64) {
	if r == nil || r.Counters == nil {
		return -1, -1
	}
	for _, side := range []*result.PortCounters{r.Counters.Client, r.Counters.Server} {
		if side == nil {
			continue
		}
		for name, d := range side.Deltas {
			switch result.CounterCategory(name) {
			case result.TroubleRetransmissions:
				re += d
			case result.TroubleDuplicates:
				dup += d
			}
		}
	}
	return re, dup
}

func us(n result.Nanos) string {
	if !n.OK {
		return "n/a"
	}
	return strconv.FormatFloat(n.NS/1000, 'f', 0, 64)
}

func writeTable(w io.Writer, rates []rate) {
	fmt.Fprintln(w, "| loss | SEND p50 / p99 / p99.9 [µs] | WRITE p50 / p99 / p99.9 [µs] | WRITE 64 KiB bw [MiB/s] | retransmissions (SEND lat, WRITE lat, WRITE bw) | duplicate requests (same) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, r := range rates {
		s, wl, wb := find(r.doc, "send", result.ModeLat), find(r.doc, "write", result.ModeLat), find(r.doc, "write", result.ModeBW)
		lat := func(x *result.Result) string {
			if x == nil {
				return "-"
			}
			return us(x.Latency.P50) + " / " + us(x.Latency.P99) + " / " + us(x.Latency.P99_9)
		}
		bw := "-"
		if wb != nil {
			bw = strconv.FormatFloat(wb.Bandwidth.MiBPerSec, 'f', 2, 64)
		}
		var re, dup []string
		for _, x := range []*result.Result{s, wl, wb} {
			a, b := retrans(x)
			re, dup = append(re, count(a)), append(dup, count(b))
		}
		fmt.Fprintf(w, "| %g %% | %s | %s | %s | %s | %s |\n", r.pct, lat(s), lat(wl), bw, strings.Join(re, ", "), strings.Join(dup, ", "))
	}
}

func count(n int64) string {
	if n < 0 {
		return "?"
	}
	return strconv.FormatInt(n, 10)
}
