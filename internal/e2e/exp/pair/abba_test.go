//go:build experiment

package pair

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/internal/e2e/exp/expkit"
	"github.com/rdmabench/rdmabench/internal/exptool/wirebw"
)

// abba is an alternating comparison across the wire, rdmabench against one
// perftest tool, in the order given (pt or rb each): g2 runs each run's
// server (rdmabench server --once, as perftest's server exits after its run:
// while a run goes, neither guest polls anything), g1 the clients.
//
// Around each run both guests dump rxe2's hw_counters and their CPU time
// (<tool>-ctr-<i>-<0|1>.txt, expkit.Counters); both sample their CPUs and
// rxe2's packets every 0.5 s (samples.txt, expkit.Sample). g1 (the client,
// guests/b) writes pt-<i>.txt, rb-<i>.txt and rb-<i>.json, with a line
// "failed" when the tool failed; g2's files (the servers, guests/a) are
// fetched at the end. Both tools' busy-polling thread runs on CPU 1 and
// virtio's interrupts on CPU 0 unless pin is false: unpinned, a poller that
// lands on the CPU taking virtio-net's interrupts starves rxe's receive path,
// and single runs of either tool swing by 2x across this wire. With
// rbTaskset rdmabench's whole process runs on CPU 1 as perftest's does, not
// only its engine thread (--cpu 1): its other threads (Go's runtime, the
// sample drainer, the heartbeats) then stay off CPU 0.
type abba struct {
	order     []string
	pt        []string // the perftest command (the client adds the server's address)
	rb        []string // rdmabench run's flags
	pin       bool
	rbTaskset bool
}

// abbaOrder is rounds rounds of ABBA BAAB.
func abbaOrder(rounds int) []string {
	var o []string
	for range rounds {
		o = append(o, strings.Fields("pt rb rb pt rb pt pt rb")...)
	}
	return o
}

// run runs the comparison; its files go to out/guests/{a,b}.
func (a abba) run(t *testing.T, ctx context.Context, out string) string {
	b := newBed(t, ctx)
	guests := filepath.Join(out, "guests")
	os.RemoveAll(guests)
	cdir, sdir := mkdir(t, guests, "b"), mkdir(t, guests, "a")
	t.Cleanup(func() { b.fetch(sdir) })
	var pin, rbcpu []string
	if a.pin {
		expkit.PinIRQs()
		if err := expkit.Helper(ctx, t, b.peer, "pinirq").Run(); err != nil {
			t.Fatalf("%s: pinning virtio's interrupts: %v", b.peer.Name, err)
		}
		pin, rbcpu = []string{"taskset", "-c", "1"}, []string{"--cpu", "1"}
	}
	rbwrap := []string(nil)
	if a.rbTaskset && a.pin {
		rbwrap, rbcpu = pin, nil // taskset leaves rdmabench one CPU, which --cpu 1 would then refuse
	}

	// the samplers, on CPU 1 where pinned (the test binary's sampler helper)
	self := expkit.Self(t)
	sf, err := os.Create(filepath.Join(cdir, "samples.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer sf.Close()
	lsamp := exec.Command(self, "rxe2")
	if a.pin {
		lsamp = exec.Command("taskset", "-c", "1", self, "rxe2")
	}
	lsamp.Env, lsamp.Stdout, lsamp.Stderr = append(os.Environ(), expkit.HelperEnv+"=sampler"), sf, os.Stderr
	if err := lsamp.Start(); err != nil {
		t.Fatal(err)
	}
	pf, err := os.Create(filepath.Join(sdir, "samples.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	psamp := expkit.Command(ctx, b.peer, self, "rxe2")
	if a.pin {
		psamp = expkit.Command(ctx, b.peer, "taskset", "-c", "1", self, "rxe2")
	}
	psamp.Env, psamp.Stdout, psamp.Stderr = append(psamp.Env, expkit.HelperEnv+"=sampler"), pf, os.Stderr
	if err := psamp.Start(); err != nil {
		t.Fatalf("%s: sampler: %v", b.peer.Name, err)
	}
	stopSamplers := func() {
		lsamp.Process.Signal(syscall.SIGTERM)
		lsamp.Wait()
		psamp.Signal(syscall.SIGTERM)
		psamp.Wait()
	}
	defer stopSamplers()

	tag := func(s string) { os.WriteFile(expkit.TagFile, []byte(s+"\n"), 0o644) }
	ctr := func(who string, i, k int) {
		expkit.WriteFile(t, cdir, fmt.Sprintf("%s-ctr-%d-%d.txt", who, i, k), []byte(expkit.Counters(dev)))
	}
	for j, who := range a.order {
		i := j + 1
		name := fmt.Sprintf("%s-%d", who, i)
		var srv *server
		var txt string
		var client []string
		switch who {
		case "rb":
			srv, err = b.serve(18600, []string{"-tag", name, "-ctr", fmt.Sprintf("rb-ctr-%d", i), "-out", "server.log"},
				cat(rbwrap, []string{b.bin, "server", "--bind", b.peer.Addr, "-p", "18600", "--once"}, rbcpu)...)
			txt = filepath.Join(cdir, name+".txt")
			client = cat(rbwrap, []string{b.bin, "run", b.peer.Addr, "-p", "18600"}, a.rb, rbcpu,
				[]string{"--json", filepath.Join(cdir, name+".json")})
		case "pt":
			srv, err = b.serve(18515, []string{"-tag", name, "-ctr", fmt.Sprintf("pt-ctr-%d", i), "-out", fmt.Sprintf("pt-server-%d.txt", i)},
				cat(pin, a.pt)...)
			txt = filepath.Join(cdir, name+".txt")
			client = cat(pin, a.pt, []string{b.peer.Addr})
		default:
			t.Fatalf("order: %q is neither rb nor pt", who)
		}
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		ctr(who, i, 0)
		tag(name)
		cerr := local(ctx, txt, false, client[0], client[1:]...)
		if cerr != nil {
			appendFile(txt, "failed\n")
		}
		tag("idle")
		ctr(who, i, 1)
		if err := srv.wait(120 * time.Second); err != nil {
			t.Logf("run %d: the server in %s: %v", i, b.peer.Name, err)
		}
		if ctx.Err() != nil {
			t.Fatalf("run %d: %v", i, ctx.Err())
		}
	}
	stopSamplers()
	b.fetch(sdir)
	return guests
}

func cat(parts ...[]string) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func appendFile(path, s string) {
	if f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
		f.WriteString(s)
		f.Close()
	}
}

// TestBidir is bidirectional WRITE bandwidth across the wire (make bench),
// rdmabench -b against perftest's ib_write_bw -b, both 64 KiB, tx depth
// 128, CQ moderation 100, BIDIR_ITERS iterations per side and run (default
// 800), QP timeout exponent BIDIR_QP_TIMEOUT (default 14, perftest's), 4
// runs each per round in ABBA BAAB order (BIDIR_ROUNDS rounds, default 1).
// It prints each run with both sides' retransmissions (rxe's
// completer_retry_err) and how busy each guest's CPUs were, the ratio of the
// medians per round and over all rounds (target >= 0.95), and each
// rdmabench run's two sides. BIDIR_PIN=0: unpinned; BIDIR_RB_FLAGS: more
// rdmabench flags; BIDIR_TIMEOUT: seconds for it all (1200).
//
// Across this emulated wire a stall of the host (another guest's vCPU
// scheduled in) longer than the ACK timeout (4.096 us x 2^14 = 67 ms) makes
// rxe retransmit, and every retransmission costs a run a few percent: under
// host load both tools' single runs swing by 2x. Compare on a quiet host.
// Iterations, not -D: in iteration mode both tools time the same interval,
// each side from its first post to its last completion (perftest's -D
// samples a window in the middle of the run, leaving out the pipeline's fill
// and drain).
func TestBidir(t *testing.T) {
	iters := expkit.Int(t, "BIDIR_ITERS", 800, 1, 1<<30)
	rounds := expkit.Int(t, "BIDIR_ROUNDS", 1, 1, 99)
	qpt := expkit.Int(t, "BIDIR_QP_TIMEOUT", 14, 1, 31)
	ctx := expkit.Context(t, expkit.Seconds(t, "BIDIR_TIMEOUT", 1200))
	out := expkit.Out(t)
	a := abba{
		order: abbaOrder(rounds),
		pt:    strings.Fields(fmt.Sprintf("ib_write_bw -d rxe2 -x 1 -b -s 65536 -n %d -t 128 -Q 100 -u %d", iters, qpt)),
		rb: append(strings.Fields(fmt.Sprintf("--op write --mode bw --size 64K --iters %d --tx-depth 128 --cq-mod 100 -u %d -b --report-both", iters, qpt)),
			strings.Fields(os.Getenv("BIDIR_RB_FLAGS"))...),
		pin: expkit.Str("BIDIR_PIN", "1") == "1",
	}
	guests := a.run(t, ctx, out)
	summary := summarise(t, out, guests, a.order, 0.95)
	// rdmabench's two sides of each -b run
	for j, who := range a.order {
		if who != "rb" {
			continue
		}
		doc, err := result.ReadJSONFile(filepath.Join(guests, "b", fmt.Sprintf("rb-%d.json", j+1)))
		if err != nil || len(doc.Results) == 0 || doc.Results[0].Sides == nil {
			continue
		}
		s := doc.Results[0].Sides
		line := fmt.Sprintf("run %d rdmabench -b: both directions: client %.2f + server %.2f MiB/s\n", j+1,
			s.Client.Bandwidth.MiBPerSec, s.Server.Bandwidth.MiBPerSec)
		fmt.Print(line)
		summary.WriteString(line)
	}
}

// TestWireBW is unidirectional 64 KiB WRITE bandwidth across the wire (make
// bench-wire, make bench), rdmabench against perftest's ib_write_bw, in
// WIRE_ROUNDS rounds (default 4) of 8 alternating runs, ABBA BAAB. Each run:
// WIRE_ITERS iterations (default 2000), tx depth 128, CQ moderation
// WIRE_CQ_MOD (default 1: both tools' default above 8 KiB), QP timeout
// exponent WIRE_QP_TIMEOUT (default 14, perftest's). internal/exptool/wirebw
// prints every run with both sides' retransmissions and how busy each guest
// was, its steady packet rate (from the samplers), the ratio of the medians
// (rdmabench over perftest) per round and over all rounds and its 95 %
// bootstrap interval (target >= 0.97). WIRE_PIN=0: unpinned;
// WIRE_RB_TASKSET=0: only rdmabench's engine thread on CPU 1 (--cpu 1);
// WIRE_RB_FLAGS: more rdmabench flags; WIRE_TIMEOUT: seconds (1800).
func TestWireBW(t *testing.T) {
	iters := expkit.Int(t, "WIRE_ITERS", 2000, 1, 1<<30)
	rounds := expkit.Int(t, "WIRE_ROUNDS", 4, 1, 99)
	cqmod := expkit.Int(t, "WIRE_CQ_MOD", 1, 1, 128)
	qpt := expkit.Int(t, "WIRE_QP_TIMEOUT", 14, 1, 31)
	ctx := expkit.Context(t, expkit.Seconds(t, "WIRE_TIMEOUT", 1800))
	out := expkit.Out(t)
	a := abba{
		order: abbaOrder(rounds),
		pt:    strings.Fields(fmt.Sprintf("ib_write_bw -d rxe2 -x 1 -s 65536 -n %d -t 128 -Q %d -u %d", iters, cqmod, qpt)),
		rb: append(strings.Fields(fmt.Sprintf("--op write --mode bw --size 64K --iters %d --tx-depth 128 --cq-mod %d -u %d", iters, cqmod, qpt)),
			strings.Fields(os.Getenv("WIRE_RB_FLAGS"))...),
		pin:       expkit.Str("WIRE_PIN", "1") == "1",
		rbTaskset: expkit.Str("WIRE_RB_TASKSET", "1") == "1",
	}
	guests := a.run(t, ctx, out)
	summarise(t, out, guests, a.order, 0.97)
}

// summarise prints wirebw's summary and keeps it in out/summary.txt.
func summarise(t *testing.T, out, guests string, order []string, target float64) *strings.Builder {
	var sb strings.Builder
	if err := wirebw.Summarise(guests, order, 10000, target, io.MultiWriter(os.Stdout, &sb)); err != nil {
		t.Error(err)
	}
	expkit.WriteFile(t, out, "order.txt", []byte(strings.Join(order, " ")+"\n"))
	t.Cleanup(func() { expkit.WriteFile(t, out, "summary.txt", []byte(sb.String())) })
	return &sb
}
