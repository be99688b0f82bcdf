//go:build experiment

package pair

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/e2e/exp/expkit"
)

// TestTimeline is make pair-timeline (docs/testbed.md, "Counter timelines on
// a lossy wire"): g2 serves once; g1 runs a 4 KiB WRITE bandwidth test for
// DUR seconds (default 12) with 1 s intervals (its completion latency, one
// signaled completion per message: a latency test across this emulated wire
// makes too few round trips per second for an interval's p99) and, from
// LOSS_AT (5) to LOSS_AT + LOSS_FOR (3) seconds into the test, drops LOSS
// (3%) of its eth0 packets (netem). It writes timeline.json, timeline.hlog,
// run.txt and loss.txt ("ON,OFF": ms into the test, timed from the test's
// first interval line); the Makefile then runs TestTimelineWire
// (bench/timeline) on them and draws the plot.
func TestTimeline(t *testing.T) {
	t0 := time.Now()
	dur := expkit.Int(t, "DUR", 12, 3, 3600)
	loss := expkit.Str("LOSS", "3%")
	lossAt := expkit.Int(t, "LOSS_AT", 5, 1, 3600)
	lossFor := expkit.Int(t, "LOSS_FOR", 3, 1, 3600)
	ctx := expkit.Context(t, expkit.Seconds(t, "PAIR_TIMEOUT", 600))
	out := expkit.Out(t)
	b := newBed(t, ctx)
	t.Cleanup(func() { b.fetch(filepath.Join(out, b.peer.Name)) })
	srv, err := b.serve(18515, []string{"-out", "server.log"}, b.bin, "server", "--bind", b.peer.Addr, "--once")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop()

	txt, err := os.Create(filepath.Join(out, "run.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer txt.Close()
	lines := &expkit.Lines{W: txt}
	first := lines.Match(regexp.MustCompile(`^\[ *0\.00-`).MatchString)
	cmd := exec.CommandContext(ctx, b.bin, "run", b.peer.Addr, "--op", "write", "--mode", "bw", "--size", "4K", "--cq-mod", "1",
		"-D", fmt.Sprintf("%ds", dur), "--interval", "1s", "--json", filepath.Join(out, "timeline.json"),
		"--hlog", filepath.Join(out, "timeline.hlog"))
	cmd.Stdout, cmd.Stderr = lines, lines
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var rerr error
	go func() { rerr = cmd.Wait(); close(done) }()
	// the test's first interval line comes 1 s into the test (connecting and
	// the warm-up take seconds under load): the loss starts LOSS_AT s into it
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	_, err = expkit.Await(wctx, first, done, "the first interval line")
	cancel()
	if err != nil {
		t.Fatalf("%v:\n%s", err, lines.String())
	}
	start := time.Now().Add(-time.Second) // the test's start, within the line's own lag
	at := func(s int) {
		select {
		case <-time.After(time.Until(start.Add(time.Duration(s) * time.Second))):
		case <-ctx.Done():
		}
	}
	at(lossAt)
	if o, err := tc(ctx, "qdisc", "add", "dev", "eth0", "root", "netem", "loss", loss); err != nil {
		t.Fatalf("tc netem loss %s: %v: %s", loss, err, o)
	}
	on := time.Since(start).Milliseconds()
	at(lossAt + lossFor)
	tc(context.Background(), "qdisc", "del", "dev", "eth0", "root")
	off := time.Since(start).Milliseconds()
	<-done
	fmt.Printf("loss %s on eth0 of g1 from %d ms to %d ms into the test (rdmabench exit %d)\n", loss, on, off, cmd.ProcessState.ExitCode())
	expkit.WriteFile(t, out, "loss.txt", []byte(fmt.Sprintf("%d,%d\n", on, off)))
	fmt.Println(expkit.Tail(filepath.Join(out, "run.txt"), dur+12))
	if rerr != nil {
		t.Fatalf("rdmabench run: %v", rerr)
	}
	if err := srv.wait(60 * time.Second); err != nil {
		t.Logf("the server in %s: %v", b.peer.Name, err)
	}
	fmt.Printf("pair-timeline: run done after %s\n", expkit.Since(t0))
}
