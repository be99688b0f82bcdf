package bench

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// TestRDMACounters: a loopback run on one device fills both sides' port
// counters, and the packet counters (rxe: hw_counters sent_pkts and
// rcvd_pkts, which count same-device loopback too) moved by at least the
// messages of the test. Both sides read the same port, so each counts both
// ends' traffic.
func TestRDMACounters(t *testing.T) {
	requireDevice(t)
	specs := plan(t, spec.Plan{Ops: []string{result.OpSend, result.OpWrite}, Modes: []string{result.ModeLat, result.ModeBW}, Sizes: []int{2},
		Template: spec.Spec{Iters: 1000, Warmup: 100}})
	doc, err := RunLoopback(context.Background(), runCfg(specs), testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	back := checkDoc(t, doc, specs)
	for _, r := range back.Results {
		name := r.Op + " " + r.Mode
		c := r.Counters
		if c == nil || c.Client == nil || c.Server == nil {
			t.Errorf("%s: counters %+v, want both sides", name, c)
			continue
		}
		for side, p := range map[string]*result.PortCounters{"client": c.Client, "server": c.Server} {
			t.Logf("%s %s %s port %d: %s; reset %v", name, side, p.Device, p.Port, formatDeltas(p.Deltas), p.Reset)
			if p.Device != back.Env.Device || p.Port != back.Env.Port {
				t.Errorf("%s %s: device %s port %d, want %s port %d", name, side, p.Device, p.Port, back.Env.Device, back.Env.Port)
			}
			if !strings.HasPrefix(p.Device, "rxe") {
				continue
			}
			// each message is at least one packet; the warm-up counts too
			msgs := r.Iterations + r.Warmup
			if r.Mode == result.ModeLat {
				msgs *= 2 // ping and pong
			}
			for _, k := range []string{"sent_pkts", "rcvd_pkts"} {
				if p.Deltas[k] < msgs {
					t.Errorf("%s %s: %s moved by %d, want at least %d (the test's messages)", name, side, k, p.Deltas[k], msgs)
				}
			}
		}
	}
	var b strings.Builder
	if err := report.WriteCounterLines(&b, back.Results); err != nil {
		t.Fatal(err)
	}
	t.Logf("trouble lines:\n%s", b.String())
}

func formatDeltas(d map[string]int64) string {
	var parts []string
	for k, v := range d {
		parts = append(parts, k+" "+strconv.FormatInt(v, 10))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
