package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/hist"
)

// TestRDMATimeline: a loopback duration run with 300 ms intervals, a SEND
// latency test and a WRITE bandwidth test, carries both sides' port
// counters in each interval (the client's read at its boundaries, the
// server's at the client's marks), the packets of each interval add up to
// no more than the test's, and the .hlog has one counters note per
// interval after the interval lines, the tags unchanged.
func TestRDMATimeline(t *testing.T) {
	requireDevice(t)
	specs := plan(t, Plan{Ops: []string{result.OpSend, result.OpWrite}, Modes: []string{result.ModeLat, result.ModeBW}, Sizes: []int{64},
		Template: Spec{Duration: 900 * time.Millisecond, Warmup: 100}})
	specs = []Spec{specs[0], specs[3]} // send lat, write bw
	cfg := runCfg(specs)
	cfg.Client.Run.Interval = 300 * time.Millisecond
	var hlog bytes.Buffer
	lw, err := hist.NewLogWriter(&hlog, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Client.Run.HLog = lw
	doc, err := RunLoopback(context.Background(), cfg, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	back := checkDoc(t, doc, specs)
	notes := 0
	for _, r := range back.Results {
		name := r.Op + " " + r.Mode
		if len(r.Intervals) < 2 {
			t.Fatalf("%s: %d intervals, want at least 2", name, len(r.Intervals))
		}
		sums := map[string]int64{}
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
				if strings.HasPrefix(p.Device, "rxe") && p.Deltas["sent_pkts"] < iv.Ops {
					t.Errorf("%s interval %d %s: sent_pkts moved by %d, want at least the interval's %d ops", name, i, side, p.Deltas["sent_pkts"], iv.Ops)
				}
				sums[side] += p.Deltas["sent_pkts"]
			}
		}
		if strings.HasPrefix(back.Env.Device, "rxe") && r.Counters != nil && r.Counters.Client != nil {
			if total := r.Counters.Client.Deltas["sent_pkts"]; sums["client"] > total {
				t.Errorf("%s: the intervals' sent_pkts add up to %d, more than the test's %d", name, sums["client"], total)
			}
		}
		notes += len(r.Intervals)
	}
	var lines, got int
	for _, l := range strings.Split(hlog.String(), "\n") {
		switch {
		case strings.HasPrefix(l, "#[Counters Tag="):
			got++
			if !strings.Contains(l, "client.sent_pkts=") || !strings.Contains(l, "server.sent_pkts=") {
				t.Errorf("hlog note without both sides' sent_pkts: %s", l)
			}
		case strings.HasPrefix(l, "Tag="):
			lines++
		}
	}
	if got != notes || lines != notes {
		t.Errorf("hlog: %d counters notes and %d interval lines, want %d of each:\n%s", got, lines, notes, hlog.String())
	}
}
