//go:build experiment

package pair

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/internal/e2e/exp/expkit"
	"github.com/rdmabench/rdmabench/internal/testutil/vmtest"
)

// TestSmoke is make pair-smoke: across the wire (g1 the clients, g2 the
// servers), g1 pings g2; perftest's 'ib_send_lat -d rxe2 -x 1 -n 200', server
// in g2, client in g1, each printing its result row (2 B, 200 iterations);
// rxe2's hw_counters/sent_pkts moves in both guests during that run;
// 'rdmabench server --bind G2 -d rxe2' in g2 and 'rdmabench run G2 -d rxe2
// --op send --mode lat --iters 200' in g1, whose document names rxe2, the
// peer and g1's GID. Files in $RDMABENCH_OUT (build/pair-smoke).
func TestSmoke(t *testing.T) {
	t0 := time.Now()
	ctx := expkit.Context(t, expkit.Seconds(t, "SMOKE_TIMEOUT", 600))
	out := expkit.Out(t)
	b := newBed(t, ctx)
	t.Cleanup(func() { b.fetch(filepath.Join(out, b.peer.Name)) })

	// iputils' ping where installed, else busybox's
	pingCmd := []string{"ping"}
	if _, err := exec.LookPath("ping"); err != nil {
		pingCmd = []string{"busybox", "ping"}
	}
	ping, err := exec.CommandContext(ctx, pingCmd[0], append(pingCmd[1:], "-c", "3", b.peer.Addr)...).CombinedOutput()
	fmt.Printf("%s", ping)
	if err != nil || !regexp.MustCompile(`3 packets transmitted, 3 (packets )?received`).Match(ping) {
		t.Errorf("%s -c 3 %s: %v", strings.Join(pingCmd, " "), b.peer.Addr, err)
	}

	// perftest across the wire, rxe2's sent packets counted on both sides
	srv, err := b.serve(18515, []string{"-ctr", "lat-ctr", "-out", "lat.txt", "-dev", dev}, "ib_send_lat", "-d", dev, "-x", "1", "-n", "200")
	if err != nil {
		t.Fatal(err)
	}
	c0 := expkit.Counter(dev, "sent_pkts")
	cerr := local(ctx, filepath.Join(out, "lat.txt"), false, "ib_send_lat", "-d", dev, "-x", "1", "-n", "200", b.peer.Addr)
	c1 := expkit.Counter(dev, "sent_pkts")
	serr := srv.wait(120 * time.Second)
	if cerr != nil || serr != nil {
		t.Errorf("ib_send_lat: client %v, server %v", cerr, serr)
	}
	sentMoved(t, vmtest.Peer{Name: "g1"}, c0, c1)
	b.fetch(filepath.Join(out, b.peer.Name))
	ctr := func(k int) int64 {
		b, _ := os.ReadFile(filepath.Join(out, "g2", fmt.Sprintf("lat-ctr-%d.txt", k)))
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "sent_pkts "); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		return -1
	}
	sentMoved(t, b.peer, ctr(0), ctr(1))
	for _, f := range []string{filepath.Join(out, "lat.txt"), filepath.Join(out, "g2", "lat.txt")} {
		latRow(t, f)
	}

	// rdmabench across the wire
	srv, err = b.serve(18515, []string{"-out", "server.log"}, b.bin, "server", "--bind", b.peer.Addr, "-d", dev)
	if err != nil {
		t.Fatal(err)
	}
	js := filepath.Join(out, "run.json")
	rerr := local(ctx, filepath.Join(out, "run.txt"), true, b.bin, "run", b.peer.Addr, "-d", dev, "--op", "send", "--mode", "lat", "--iters", "200", "--json", js)
	srv.stop()
	if rerr != nil {
		t.Fatalf("rdmabench run: %v", rerr)
	}
	doc, err := result.ReadJSONFile(js)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Env.Device != dev || !strings.Contains(doc.Peer, b.peer.Addr) || doc.Env.GID != "::ffff:"+os.Getenv(vmtest.AddrEnv) {
		t.Errorf("run.json: device %q, peer %q, gid %q; want %s, %s..., ::ffff:%s", doc.Env.Device, doc.Peer, doc.Env.GID, dev, b.peer.Addr, os.Getenv(vmtest.AddrEnv))
	}
	if !t.Failed() {
		fmt.Printf("pair-smoke: OK (ping, ib_send_lat and rdmabench send lat across the wire on rxe2; %s)\n", expkit.Since(t0))
	}
}

// sentMoved checks that rxe2's sent_pkts moved in a guest during the run.
func sentMoved(t *testing.T, g vmtest.Peer, before, after int64) {
	fmt.Printf("pair-smoke: %s: rxe2 sent_pkts %d -> %d (+%d) over 200 perftest round trips\n", g.Name, before, after, after-before)
	if before < 0 || after <= before {
		t.Errorf("%s: rxe2 sent_pkts did not move: %d -> %d", g.Name, before, after)
	}
}

// latRow checks a perftest latency output for its row: 2 B, 200 iterations
// (read with rdmabench's parser, bench/perftest; perftest's server prints
// "-nan" for a standard deviation it cannot compute, which the parser does not
// take: then the row's first two fields).
func latRow(t *testing.T, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Error(err)
		return
	}
	var by, it float64
	if p, err := perftest.ParsePrinted(b); err == nil && len(p.Rows) > 0 {
		by, _ = p.Value(p.Rows[0], perftest.ColBytes)
		it, _ = p.Value(p.Rows[0], perftest.ColIterations)
		typ, _ := p.Value(p.Rows[0], perftest.ColTypical)
		fmt.Printf("pair-smoke: %s: %g B, %g iterations, t_typical %g usec\n", path, by, it, typ)
	} else {
		ls := strings.Split(string(b), "\n")
		for i, l := range ls {
			if strings.Contains(l, "#bytes") && strings.Contains(l, "t_typical") && i+1 < len(ls) {
				if f := strings.Fields(ls[i+1]); len(f) > 1 {
					by, _ = strconv.ParseFloat(f[0], 64)
					it, _ = strconv.ParseFloat(f[1], 64)
				}
			}
		}
		fmt.Printf("pair-smoke: %s: %g B, %g iterations (%v)\n", path, by, it, err)
	}
	if by != 2 || it != 200 {
		t.Errorf("%s: row %g B, %g iterations; want 2, 200:\n%s", path, by, it, b)
	}
}
