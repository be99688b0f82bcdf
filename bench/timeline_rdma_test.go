package bench

import (
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// checkTimeline checks the counter timeline of a loopback duration run
// (TestRDMADurationMode's): every interval carries both sides' port
// counters (the client's read at its boundaries, the server's at the
// client's marks), the packets of the intervals add up to at least their
// ops and at most the test's, and the .hlog has one counters note per
// interval after the interval lines, the tags unchanged.
func checkTimeline(t *testing.T, back *result.Document, hlog string) {
	t.Helper()
	notes := 0
	for _, r := range back.Results {
		name := r.Op + " " + r.Mode
		sums := map[string]int64{}
		var ops int64
		for i, iv := range r.Intervals {
			c := iv.Counters
			if c == nil || c.Client == nil || c.Server == nil {
				t.Errorf("%s interval %d: counters %+v, want both sides", name, i, c)
				continue
			}
			t.Logf("%s interval %d (%d..%d ms, %d ops): client %s; server %s", name, i, iv.StartNS/1e6, iv.EndNS/1e6, iv.Ops,
				formatDeltas(c.Client.Deltas), formatDeltas(c.Server.Deltas))
			for side, p := range map[string]*result.PortCounters{"client": c.Client, "server": c.Server} {
				if p.Device != back.Env.Device || p.Port != back.Env.Port {
					t.Errorf("%s interval %d %s: device %s port %d, want %s port %d", name, i, side, p.Device, p.Port, back.Env.Device, back.Env.Port)
				}
				sums[side] += p.Deltas["sent_pkts"]
			}
			ops += iv.Ops
		}
		// A side's boundaries lag the client's (a server's read waits for the
		// mark), so an interval's packets need not match its ops; over the
		// whole series they do: every op is at least one packet, and the
		// series lies inside the test (whose counters include the warm-up).
		if strings.HasPrefix(back.Env.Device, "rxe") && r.Counters != nil && r.Counters.Client != nil && r.Counters.Server != nil {
			for side, total := range map[string]int64{"client": r.Counters.Client.Deltas["sent_pkts"], "server": r.Counters.Server.Deltas["sent_pkts"]} {
				if sums[side] < ops || sums[side] > total {
					t.Errorf("%s %s: the intervals' sent_pkts add up to %d; want at least their %d ops and at most the test's %d", name, side, sums[side], ops, total)
				}
			}
		}
		notes += len(r.Intervals)
	}
	var lines, got int
	for _, l := range strings.Split(hlog, "\n") {
		switch {
		case strings.HasPrefix(l, "#[Counters Tag="):
			got++
			if !strings.Contains(l, ",client.") || !strings.Contains(l, ";server.") {
				t.Errorf("hlog note without both sides' counters: %s", l)
			}
		case strings.HasPrefix(l, "Tag="):
			lines++
		}
	}
	if got != notes || lines != notes {
		t.Errorf("hlog: %d counters notes and %d interval lines, want %d of each:\n%s", got, lines, notes, hlog)
	}
}
