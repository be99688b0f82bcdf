package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// counterResults: rxe loopback on one port with retransmissions; a clean
// test (only packet counts moved); an mlx5 pair with congestion, sequence
// and link trouble and a reset; a test without counters (TCP); a server
// that sent none.
func counterResults() []result.Result {
	rxe := func(d map[string]int64, reset ...string) *result.PortCounters {
		return &result.PortCounters{Device: "rxe0", Port: 1, Deltas: d, Reset: reset}
	}
	return []result.Result{
		{Op: "send", Mode: "lat", SizeBytes: 2, Counters: &result.CounterDeltas{
			Client: rxe(map[string]int64{"sent_pkts": 4400, "rcvd_pkts": 4400, "completer_retry_err": 373, "duplicate_request": 373}),
			Server: rxe(map[string]int64{"sent_pkts": 4400, "rcvd_pkts": 4400, "completer_retry_err": 373, "duplicate_request": 373})}},
		{Op: "write", Mode: "bw", SizeBytes: 65536, Counters: &result.CounterDeltas{
			Client: rxe(map[string]int64{"sent_pkts": 64000, "rcvd_pkts": 2000}, "sent_pkts"),
			Server: rxe(map[string]int64{})}},
		{Op: "read", Mode: "lat", SizeBytes: 4096, Counters: &result.CounterDeltas{
			Client: &result.PortCounters{Device: "mlx5_0", Port: 1,
				Deltas: map[string]int64{"port_xmit_data": 1e6, "rp_cnp_handled": 12, "implied_nak_seq_err": 2, "local_ack_timeout_err": 1},
				Reset:  []string{"hw_counters/link_downed", "port_rcv_packets"}},
			Server: &result.PortCounters{Device: "mlx5_1", Port: 2,
				Deltas: map[string]int64{"np_ecn_marked_roce_packets": 40, "np_cnp_sent": 12, "out_of_sequence": 3, "symbol_error": 1,
					"port_rcv_errors": 1, "link_downed": 1, "out_of_buffer": 7}}}},
		{Op: "send", Mode: "lat", SizeBytes: 2, Transport: result.TransportTCP},
		{Op: "send", Mode: "bw", SizeBytes: 2, Counters: &result.CounterDeltas{
			Client: &result.PortCounters{Device: "rxe1", Port: 1, Deltas: map[string]int64{"rcvd_rnr_err": 5, "send_err": 1}}}},
	}
}

func TestCounterLines(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCounterLines(&b, counterResults()); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "counter_lines.golden", b.Bytes())
	out := b.String()
	if strings.Contains(out, "write bw") || strings.Contains(out, "sent_pkts") || strings.Contains(out, "port_xmit_data") {
		t.Errorf("counters that signal no trouble in:\n%s", out)
	}
	if n := strings.Count(out, "\n") - strings.Count(out, "\n   "); n != 5 { // note, 3 tests, shared-port note; a test's continued lines aside
		t.Errorf("%d lines, want 5:\n%s", n, out)
	}
}

func TestCounterLinesNone(t *testing.T) {
	rs := counterResults()[1:2] // packets only
	rs = append(rs, result.Result{Op: "send", Mode: "lat", SizeBytes: 2})
	var b bytes.Buffer
	if err := WriteCounterLines(&b, rs); err != nil || b.Len() != 0 {
		t.Errorf("wrote %q (%v), want nothing", b.String(), err)
	}
}
