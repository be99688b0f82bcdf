//go:build experiment

// Run by make pair-timeline (go test -tags experiment): it checks what the pair run wrote.

package timeline

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// retransmissionCategories are the trouble categories a lost packet moves
// on a reliable connection: the requester's retransmissions (timeouts),
// the sequence errors and NAKs of the packets after the loss, and the
// responder's duplicates and out-of-sequence packets.
var retransmissionCategories = []string{result.TroubleRetransmissions, result.TroubleSequenceErrors,
	result.TroubleOutOfSequence, result.TroubleDuplicates}

// retransmissions sums the deltas of p's counters in
// retransmissionCategories, and names them.
func retransmissions(p *result.PortCounters) (int64, []string) {
	if p == nil {
		return 0, nil
	}
	var n int64
	var names []string
	for k, v := range p.Deltas {
		if slices.Contains(retransmissionCategories, result.CounterCategory(k)) {
			n += v
			names = append(names, fmt.Sprintf("%s %d", k, v))
		}
	}
	sort.Strings(names)
	return n, names
}

// TestTimelineWire reads the document of make pair-timeline
// (TestTimeline in internal/e2e/exp/pair): RDMABENCH_TIMELINE_JSON, a WRITE bandwidth
// run across the two-guest wire, and RDMABENCH_TIMELINE_LOSS, "ON,OFF": the
// ms into the test between which netem dropped packets on the client's
// eth0 (within the lag of the test's first interval line, which the test times
// interval line). An interval rose when its p99 (p50 where p99 is n/a) is over
// twice the median of the intervals outside the loss; every interval that
// overlaps the loss and rose must carry retransmission counters, and there
// must be one. It prints every interval.
func TestTimelineWire(t *testing.T) {
	path := os.Getenv("RDMABENCH_TIMELINE_JSON")
	if path == "" {
		t.Fatal("RDMABENCH_TIMELINE_JSON is not set (make pair-timeline sets it)")
	}
	var on, off float64
	if _, err := fmt.Sscanf(os.Getenv("RDMABENCH_TIMELINE_LOSS"), "%g,%g", &on, &off); err != nil {
		t.Fatalf("RDMABENCH_TIMELINE_LOSS %q: want ON,OFF in ms: %v", os.Getenv("RDMABENCH_TIMELINE_LOSS"), err)
	}
	doc, err := result.ReadJSONFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Results) != 1 || len(doc.Results[0].Intervals) < 3 {
		t.Fatalf("want one result with at least 3 intervals, got %d results", len(doc.Results))
	}
	lossOn, lossOff := on/1e3, off/1e3 // s into the test
	t.Logf("loss from %.2f s to %.2f s into the test", lossOn, lossOff)
	ivs := doc.Results[0].Intervals
	figure := func(iv result.Interval) (float64, string) {
		if iv.P99.OK {
			return iv.P99.NS, "p99"
		}
		if iv.P50.OK {
			return iv.P50.NS, "p50"
		}
		return 0, ""
	}
	lossy := func(iv result.Interval) bool {
		return float64(iv.StartNS)/1e9 < lossOff && float64(iv.EndNS)/1e9 > lossOn
	}
	var clean []float64
	for _, iv := range ivs {
		if v, what := figure(iv); what != "" && !lossy(iv) {
			clean = append(clean, v)
		}
	}
	if len(clean) < 2 {
		t.Fatalf("%d intervals outside the loss have a p99 or p50", len(clean))
	}
	sort.Float64s(clean)
	threshold := 2 * clean[len(clean)/2]
	t.Logf("an interval rose above %.0f us (twice the median of the intervals outside the loss)", threshold/1e3)
	rose := 0
	for i, iv := range ivs {
		var cn, sn int64
		var cl, sl []string
		if iv.Counters != nil {
			cn, cl = retransmissions(iv.Counters.Client)
			sn, sl = retransmissions(iv.Counters.Server)
		}
		v, what := figure(iv)
		up := what != "" && v > threshold
		mark := "     "
		if lossy(iv) {
			mark = "loss "
			if up {
				rose++
				if cn+sn == 0 {
					t.Errorf("interval %d (%.1f-%.1f s): %s rose to %.0f us without a retransmission counter moving", i,
						float64(iv.StartNS)/1e9, float64(iv.EndNS)/1e9, what, v/1e3)
				}
			}
		}
		if up {
			mark += "up"
		} else {
			mark += "  "
		}
		t.Logf("%s interval %d %4.1f-%4.1f s: %5d ops, p50 %9s us, p99 %9s us; client: %s; server: %s", mark, i,
			float64(iv.StartNS)/1e9, float64(iv.EndNS)/1e9, iv.Ops, iv.P50.US(), iv.P99.US(), orNone(cl), orNone(sl))
	}
	if rose == 0 {
		t.Error("no interval during the loss rose: the loss did not show (is netem on?)")
	}
}

func orNone(l []string) string {
	if len(l) == 0 {
		return "-"
	}
	return strings.Join(l, ", ")
}
