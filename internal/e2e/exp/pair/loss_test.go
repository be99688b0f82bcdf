//go:build experiment

package pair

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/e2e/exp/expkit"
	"github.com/rdmabench/rdmabench/internal/exptool/losstail"
)

// TestLossTail is loss and the tail on the wire (make bench). RoCE needs a
// lossless fabric; this measures what loss does to it: g1 adds netem loss
// (and LOSS_DELAY, a netem delay) on its eth0, then runs SEND and WRITE
// latency and WRITE bandwidth (LOSS_ITERS iterations, default 1000) against
// the server in g2 at each loss rate of LOSS_RATES (default "0 0.1 1 5" %),
// with both sides' port counters. Writes loss-<rate>.json, table.md (p50,
// p99, p99.9, bandwidth and retransmission counters per loss rate,
// internal/exptool/losstail) and latency.svg. Emulation figures: only the
// shape (how the tail grows with loss) carries over.
func TestLossTail(t *testing.T) {
	t0 := time.Now()
	rates := strings.Fields(expkit.Str("LOSS_RATES", "0 0.1 1 5"))
	iters := expkit.Int(t, "LOSS_ITERS", 1000, 1, 1<<30)
	delay := os.Getenv("LOSS_DELAY")
	ctx := expkit.Context(t, expkit.Seconds(t, "LOSS_TIMEOUT", 1500))
	out := expkit.Out(t)
	b := newBed(t, ctx)
	t.Cleanup(func() { b.fetch(filepath.Join(out, "guests", b.peer.Name)) })
	srv, err := b.serve(18515, []string{"-out", "server.log"}, b.bin, "server", "--bind", b.peer.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.stop()
	clear := func() { tc(context.Background(), "qdisc", "del", "dev", "eth0", "root") }
	defer clear()
	row := regexp.MustCompile(`^ (send|write) `)
	var paths []string
	for _, r := range rates {
		clear()
		if r != "0" {
			args := []string{"qdisc", "add", "dev", "eth0", "root", "netem", "loss", r + "%"}
			if delay != "" {
				args = append(args, "delay", delay)
			}
			if o, err := tc(ctx, args...); err != nil {
				t.Fatalf("tc %s: %v: %s", strings.Join(args, " "), err, o)
			}
		}
		show, _ := tc(ctx, "qdisc", "show", "dev", "eth0")
		fmt.Printf("loss %s%%: %s\n", r, strings.SplitN(show, "\n", 2)[0])
		js, txt := filepath.Join(out, "loss-"+r+".json"), filepath.Join(out, "loss-"+r+".txt")
		err := local(ctx, txt, false, b.bin, "run", b.peer.Addr, "--op", "send,write", "--mode", "lat,bw", "-n", fmt.Sprint(iters), "--json", js)
		text, _ := os.ReadFile(txt)
		if err != nil {
			t.Fatalf("loss %s%%: rdmabench run: %v\n%s", r, err, text)
		}
		for _, l := range strings.Split(string(text), "\n") {
			if row.MatchString(l) {
				fmt.Println(l)
			}
		}
		paths = append(paths, js)
	}
	clear()
	var table strings.Builder
	if err := losstail.Run(paths, filepath.Join(out, "latency.svg"), io.MultiWriter(os.Stdout, &table)); err != nil {
		t.Fatal(err)
	}
	expkit.WriteFile(t, out, "table.md", []byte(table.String()))
	fmt.Printf("loss-tail: %s; table in table.md, plot in latency.svg\n", expkit.Since(t0))
}
