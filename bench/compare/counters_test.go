package compare

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

func TestParseMaxCounter(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]int64
		err  string // part of the error; "" for none
	}{
		{"retransmissions=0", map[string]int64{"retransmissions": 0}, ""},
		{" Retransmissions = 0 , rcvd_seq_err=10,hw_counters/link_downed=1", map[string]int64{"retransmissions": 0, "rcvd_seq_err": 10, "hw_counters/link_downed": 1}, ""},
		{"sent_pkts=1000000,VL15_dropped=0,congestion=5", map[string]int64{"sent_pkts": 1000000, "VL15_dropped": 0, "congestion": 5}, ""},
		{"", nil, "max-counter is empty"},
		{"retransmissions", nil, `entry "retransmissions": want NAME=N`},
		{"retransmissions=x", nil, `entry "retransmissions=x": limit "x" for retransmissions is not a whole number >= 0`},
		{"rnr=-1", nil, `entry "rnr=-1": limit "-1" for rnr is not a whole number >= 0`},
		{"rcvd_seq_err=1.5", nil, `limit "1.5" for rcvd_seq_err`},
		{"duplicates=10%", nil, `limit "10%" for duplicates`},
		{"rnr=", nil, `limit "" for rnr`},
		{"rnr=99999999999999999999", nil, `limit "99999999999999999999" for rnr`},
		{"rnr=1,RNR=2", nil, `entry "RNR=2": rnr given twice`},
		{"=3", nil, `"" is neither a category`},
		{"sent pkts=3", nil, `"sent pkts" is neither a category (completion_errors, congestion,`},
		{"../x=3", nil, `"../x" is neither`},
		{"rnr=1,", nil, `entry ""`},
	} {
		got, err := ParseMaxCounter(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseMaxCounter(%q) error %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseMaxCounter(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// gateDoc is a new run: send lat 2B with the given counters, a TCP test
// and write bw 64K whose server sent no counters.
func gateDoc(c *result.CounterDeltas) *result.Document {
	return &result.Document{Results: []result.Result{
		{Op: "send", Mode: "lat", SizeBytes: 2, Counters: c},
		{Op: "send", Mode: "lat", SizeBytes: 2, Transport: result.TransportTCP},
		{Op: "write", Mode: "bw", SizeBytes: 65536, Counters: &result.CounterDeltas{
			Client: &result.PortCounters{Device: "rxe0", Port: 1, Deltas: map[string]int64{"sent_pkts": 64000}}}},
	}}
}

func side(dev string, d map[string]int64, reset ...string) *result.PortCounters {
	return &result.PortCounters{Device: dev, Port: 1, Deltas: d, Reset: reset}
}

func TestGateCounters(t *testing.T) {
	rxeLoop := &result.CounterDeltas{ // one port: both sides count the same
		Client: side("rxe0", map[string]int64{"sent_pkts": 4400, "completer_retry_err": 373, "duplicate_request": 300}),
		Server: side("rxe0", map[string]int64{"sent_pkts": 4400, "completer_retry_err": 373, "duplicate_request": 300}),
	}
	twoHosts := &result.CounterDeltas{
		Client: side("rxe2", map[string]int64{"completer_retry_err": 325, "retry_exceeded_err": 1, "rcvd_seq_err": 11},
			"link_downed", "rcvd_rnr_err"),
		Server: side("rxe2", map[string]int64{"duplicate_request": 278, "send_rnr_err": 4}),
	}
	for _, tc := range []struct {
		name    string
		c       *result.CounterDeltas
		limits  map[string]int64
		want    []string // the excesses, as String gives them
		notes   []string // parts of notes
		checked int
	}{
		{"category exceeded on both sides of one port", rxeLoop, map[string]int64{"retransmissions": 0},
			[]string{"send lat 2B: client rxe0 port 1: retransmissions 373 > 0 (completer_retry_err 373)",
				"send lat 2B: server rxe0 port 1: retransmissions 373 > 0 (completer_retry_err 373)"},
			[]string{"write bw 64K: no server port counters in the new run, --max-counter not checked there"}, 3},
		{"per side, not summed: 300 each within 400", rxeLoop, map[string]int64{"duplicates": 400}, nil, nil, 3},
		{"raw counter at its limit passes", rxeLoop, map[string]int64{"duplicate_request": 300, "sent_pkts": 64000}, nil, nil, 6},
		{"raw counter above its limit", rxeLoop, map[string]int64{"sent_pkts": 4399},
			[]string{"send lat 2B: client rxe0 port 1: sent_pkts 4400 > 4399", "send lat 2B: server rxe0 port 1: sent_pkts 4400 > 4399",
				"write bw 64K: client rxe0 port 1: sent_pkts 64000 > 4399"}, nil, 3},
		{"absent counter is 0", rxeLoop, map[string]int64{"rcvd_seq_err": 0, "congestion": 0}, nil, nil, 6},
		{"sum of a category", twoHosts, map[string]int64{"retransmissions": 325, "sequence_errors": 11},
			[]string{"send lat 2B: client rxe2 port 1: retransmissions 326 > 325 (completer_retry_err 325, retry_exceeded_err 1)"}, nil, 6},
		{"reset counter not checked", twoHosts, map[string]int64{"link_downed": 0, "link_downs": 0},
			nil, []string{"send lat 2B: client link_downed reset during the test, not checked"}, 5}, // the category's other counters are checked
		{"category checked without its reset counter", twoHosts, map[string]int64{"rnr": 3},
			[]string{"send lat 2B: server rxe2 port 1: rnr 4 > 3 (send_rnr_err 4)"},
			[]string{"send lat 2B: client rcvd_rnr_err reset during the test, not checked"}, 3},
		{"no counters at all", nil, map[string]int64{"retransmissions": 0}, nil,
			[]string{"send lat 2B: no client port counters", "send lat 2B: no server port counters"}, 1},
		{"no limits", rxeLoop, nil, nil, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &GateReport{}
			g.CheckCounters(gateDoc(tc.c), tc.limits)
			var got []string
			for _, e := range g.Counters {
				got = append(got, e.String())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("excesses:\n got %q\nwant %q", got, tc.want)
			}
			for _, n := range tc.notes {
				if countPrefix(g.Notes, n) == 0 && !strings.Contains(strings.Join(g.Notes, "\n"), n) {
					t.Errorf("notes %q lack %q", g.Notes, n)
				}
			}
			if g.CountersChecked != tc.checked {
				t.Errorf("checked %d, want %d", g.CountersChecked, tc.checked)
			}
			err := g.Err()
			var re *RegressionError
			if (err != nil) != (len(tc.want) > 0) || (err != nil && (!errors.As(err, &re) || len(re.Counters) != len(tc.want))) {
				t.Errorf("Err() = %v with %d excesses", err, len(tc.want))
			}
		})
	}
}

// A metric regression and a counter excess together: one error naming both,
// one a line.
func TestGateCountersWithRegressions(t *testing.T) {
	g := &GateReport{Regressions: []Regression{{Test: result.Key{Op: "send", Mode: "lat", SizeBytes: 2}, Metric: "p99", Change: 0.2}}}
	g.CheckCounters(gateDoc(&result.CounterDeltas{Server: side("rxe0", map[string]int64{"out_of_seq_request": 2})}),
		map[string]int64{"out_of_sequence": 1})
	want := "2 regressions:\n  send lat 2B p99 +20.0%\n  send lat 2B server out_of_sequence 2 > 1"
	if err := g.Err(); err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}
