package bench

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/kinds"
	"github.com/rdmabench/rdmabench/bench/proto"
	"github.com/rdmabench/rdmabench/bench/result"

	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// The TCP baseline's tests need no RDMA device: they run on every host.

func tcpSpecs(t *testing.T, p spec.Plan) []spec.Spec {
	t.Helper()
	p.Template.Transport = result.TransportTCP
	p.Ops = []string{result.OpSend}
	return plan(t, p)
}

func tcpRunCfg(specs []spec.Spec) RunConfig {
	cfg := runCfg(specs)
	cfg.Client.Transport = result.TransportTCP
	return cfg
}

// checkTCPDoc is checkDoc plus what a TCP run adds.
func checkTCPDoc(t *testing.T, doc *result.Document, specs []spec.Spec) *result.Document {
	t.Helper()
	back := checkDoc(t, doc, specs)
	if back.Env.QPType != "TCP" || back.Env.GID != "" {
		t.Errorf("TCP environment: connection type %q, GID %q", back.Env.QPType, back.Env.GID)
	}
	for i, r := range back.Results {
		if r.Transport != result.TransportTCP || r.TimedInterval != kinds.TCPTimedInterval(specs[i]) {
			t.Errorf("%s: transport %q, timed interval %q", specs[i].Name(), r.Transport, r.TimedInterval)
		}
		if r.Mode == result.ModeLat && (r.RTT == nil || r.HistogramDivisor != 2 || r.RTT.Min != 2*r.Latency.Min) {
			t.Errorf("%s: latency is not RTT/2: divisor %v, rtt %+v", specs[i].Name(), r.HistogramDivisor, r.RTT)
		}
		if r.Warmup != specs[i].Warmup && specs[i].WarmupTime == 0 {
			t.Errorf("%s: warm-up %d, want %d", specs[i].Name(), r.Warmup, specs[i].Warmup)
		}
	}
	return back
}

// TestTCPServerClient: latency and bandwidth in iterations mode against a
// server, two clients one after the other.
func TestTCPServerClient(t *testing.T) {
	addr := startServer(t)
	// 400 round trips back a p99 (368); 1 MiB round trips are slow under TCG
	specs := append(tcpSpecs(t, spec.Plan{Modes: []string{result.ModeLat}, Sizes: []int{2, 4096}, Template: spec.Spec{Iters: 400, Warmup: -1}}),
		tcpSpecs(t, spec.Plan{Modes: []string{result.ModeLat}, Sizes: []int{1 << 20}, Template: spec.Spec{Iters: 100, Warmup: -1}})...)
	specs = append(specs, tcpSpecs(t, spec.Plan{Modes: []string{result.ModeBW}, Sizes: []int{64, 65536}, Template: spec.Spec{Iters: 1000, Warmup: -1}})...)
	for i := 0; i < 2; i++ {
		doc, err := RunClient(context.Background(), addr, tcpRunCfg(specs))
		if err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
		checkTCPDoc(t, doc, specs)
	}
}

// TestTCPDurationMode: loopback, duration mode with a timed warm-up and
// interval lines.
func TestTCPDurationMode(t *testing.T) {
	specs := tcpSpecs(t, spec.Plan{Modes: []string{result.ModeLat, result.ModeBW}, Sizes: []int{64}, Template: spec.Spec{Duration: 1500 * time.Millisecond, WarmupTime: 100 * time.Millisecond}})
	cfg := tcpRunCfg(specs)
	var lines strings.Builder
	cfg.Client.Run.Out, cfg.Client.Run.Interval = &lines, 500*time.Millisecond
	doc, err := RunLoopback(context.Background(), cfg, testLog(t))
	if err != nil {
		t.Fatal(err)
	}
	back := checkTCPDoc(t, doc, specs)
	for _, r := range back.Results {
		if r.Mode == result.ModeBW { // measure.BWPhase: the intervals on the test's clock
			late := checkIntervals(t, r, 1500*time.Millisecond, 500*time.Millisecond)
			t.Logf("bw: the latest boundary closed %v late", late)
		}
		if r.Iterations == 0 || len(r.Intervals) < 2 || r.Warmup == 0 {
			t.Errorf("%s %s: %d iterations, %d intervals, warm-up %d", r.Op, r.Mode, r.Iterations, len(r.Intervals), r.Warmup)
		}
		var ops int64
		for _, iv := range r.Intervals {
			ops += iv.Ops
		}
		if ops != r.Iterations {
			t.Errorf("%s %s: intervals hold %d operations, want %d", r.Op, r.Mode, ops, r.Iterations)
		}
		if d := time.Duration(r.DurationNS); d < 1400*time.Millisecond || d > 3*time.Second {
			t.Errorf("%s %s: measured %v, want about 1.5s", r.Op, r.Mode, d)
		}
	}
	if strings.Count(lines.String(), "\n") < 4 {
		t.Errorf("too few interval lines:\n%s", lines.String())
	}
	t.Logf("interval lines:\n%s", lines.String())
}

// TestTCPRefusals: what the TCP baseline does not run is refused with a
// reason, and the session goes on.
func TestTCPRefusals(t *testing.T) {
	addr := startServer(t)
	cl, err := Dial(context.Background(), addr, ClientConfig{Port: 1, GIDIndex: -1, Transport: result.TransportTCP}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	sp := tcpSpecs(t, spec.Plan{Modes: []string{result.ModeLat}, Template: spec.Spec{Iters: 200}})[0]
	open := sp
	open.Rate = 1000
	if _, err := cl.Run(context.Background(), open, measure.Options{CPU: -1}); err == nil || !strings.Contains(err.Error(), "RDMA-only") {
		t.Errorf("open-loop TCP test: %v, want a refusal", err)
	}
	if _, err := verbs.DeviceNames(); kinds.NoRDMADevice(err) {
		// This server runs TCP tests only: an RDMA test is refused with the reason.
		rdma := plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat}, Template: spec.Spec{Iters: 200}})[0]
		if err := cl.c.Send(proto.MsgTest, rdma); err != nil {
			t.Fatal(err)
		}
		if err := cl.c.Send(proto.MsgQPInfo, proto.QPInfo{}); err != nil {
			t.Fatal(err)
		}
		var re *proto.RemoteError
		if err := cl.c.Recv(proto.MsgQPInfo, nil); !errors.As(err, &re) || !strings.Contains(err.Error(), "TCP tests only") {
			t.Errorf("RDMA test on a TCP-only server: %v, want a refusal", err)
		}
	}
	if r, err := cl.Run(context.Background(), sp, measure.Options{CPU: -1}); err != nil || r.Iterations != 200 {
		t.Fatalf("test after the refusals: %d iterations, %v", r.Iterations, err)
	}
}

// TestTCPServerSurvivesLostClient drops the control connection in the middle
// of a test; the server aborts the test and serves the next client.
func TestTCPServerSurvivesLostClient(t *testing.T) {
	addr := startServer(t)
	cl, err := Dial(context.Background(), addr, ClientConfig{Transport: result.TransportTCP}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	sp := tcpSpecs(t, spec.Plan{Modes: []string{result.ModeLat}, Template: spec.Spec{Duration: 30 * time.Second}})[0]
	time.AfterFunc(500*time.Millisecond, func() { cl.c.Close() })
	start := time.Now()
	if _, err = cl.Run(context.Background(), sp, measure.Options{CPU: -1}); err == nil {
		t.Fatal("test went on after the control connection closed")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("noticing the lost control connection took %v", d)
	}
	t.Logf("lost client after %v: %v", time.Since(start).Round(time.Millisecond), err)
	specs := tcpSpecs(t, spec.Plan{Modes: []string{result.ModeLat}, Template: spec.Spec{Iters: 500}})
	doc, err := RunClient(context.Background(), addr, tcpRunCfg(specs))
	if err != nil {
		t.Fatalf("next client: %v", err)
	}
	checkTCPDoc(t, doc, specs)
}

// TestTCPCancel: cancelling the context aborts a running TCP test quickly.
func TestTCPCancel(t *testing.T) {
	addr := startServer(t)
	specs := tcpSpecs(t, spec.Plan{Modes: []string{result.ModeBW}, Template: spec.Spec{Duration: 30 * time.Second}})
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := RunClient(ctx, addr, tcpRunCfg(specs))
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 5*time.Second {
		t.Fatalf("cancelled run: %v after %v", err, time.Since(start))
	}
}
