//go:build experiment

package exp

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// agreeTests are make dropin-agree's default tests: one of each tool.
var agreeTests = []string{
	"ib_send_lat -n 1000", "ib_write_lat -n 1000", "ib_read_lat -n 1000", "ib_atomic_lat -n 1000",
	"ib_send_bw -n 2000 -s 4096", "ib_write_bw -n 2000 -s 4096", "ib_read_bw -n 2000 -s 4096", "ib_atomic_bw -n 2000",
}

// TestDropinAgree is make dropin-agree (docs/perftest.md, "Agreement with
// perftest"): for each test, AGREE_ROUNDS rounds (default 5) of three runs:
// perftest's server with perftest's client (pt-pt), with the drop-in's client
// (pt-rb), and the drop-in's server with perftest's client (rb-pt), the order
// rotated each round so that drift falls on all three alike. AGREE_TEST (e.g.
// "ib_write_bw -n 2000 -s 4096") runs that test instead of the eight. Each
// run's client output goes to $RDMABENCH_OUT/KEY.PAIRING.ROUND.txt, the tests
// to agree.list, failures to agree.fail; scripts/dropinagree (on the host)
// parses the tables and computes the medians and ratios. No parsing here.
//
// Each end runs on a CPU of its own, the same for every pairing: the
// server on CPU 1 and the client on CPU 0 (AGREE_PIN="1,0", the default
// where the guest has two CPUs or more; AGREE_PIN=off leaves placement to
// the scheduler): on the guest's two vCPUs, two busy-polling ends that the
// scheduler puts on one vCPU make that run's figure a multiple of the
// others' (docs/perftest.md, "Agreement with perftest").
func TestDropinAgree(t *testing.T) {
	requireBed(t)
	rounds := envInt(t, "AGREE_ROUNDS", 5)
	srvCPU, cliCPU, placement := agreePin(t)
	tests := agreeTests
	if v := strings.Join(strings.Fields(os.Getenv("AGREE_TEST")), " "); v != "" {
		tests = []string{v}
	}
	out := outDir(t)
	list := fmt.Sprintf("rounds %d\nplacement %s\n", rounds, placement)
	var tools []string
	for _, tc := range tests {
		tools = append(tools, strings.Fields(tc)[0])
		list += key(tc) + "\t" + tc + "\n"
	}
	if err := os.WriteFile(filepath.Join(out, "agree.list"), []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	bin := dropinBin(t, tools...)
	var fails strings.Builder
	const port = 18990
	srvOut := filepath.Join(t.TempDir(), "srv.txt")
	// one runs srv and cli with args; the client's output to outFile.
	one := func(srv, cli, outFile string, args []string) {
		a := append([]string{"-d", "rxe0", "-x", "1", "-p", fmt.Sprint(port)}, args...)
		so, err := os.Create(srvOut)
		if err != nil {
			t.Fatal(err)
		}
		defer so.Close()
		sn, sa := pinned(srvCPU, srv, a)
		sp, err := start(120*time.Second, so, so, nil, sn, sa...)
		if err != nil {
			fmt.Fprintf(&fails, "%s: no server: %v\n", outFile, err)
			return
		}
		if err := waitListen(port, 15*time.Second); err != nil {
			fmt.Fprintf(&fails, "%s: no server: %v\n", outFile, err)
			sp.stop()
			return
		}
		co, err := os.Create(outFile)
		if err != nil {
			t.Fatal(err)
		}
		defer co.Close()
		cn, ca := pinned(cliCPU, cli, append(a, "127.0.0.1"))
		if rc := run(120*time.Second, co, co, nil, cn, ca...); rc != 0 {
			fmt.Fprintf(&fails, "%s: client failed (exit %d)\n%s%s", outFile, rc, readFile(outFile), readFile(srvOut))
		}
		if rc := sp.wait(); rc != 0 {
			fmt.Fprintf(&fails, "%s: server failed (exit %d)\n%s", outFile, rc, readFile(srvOut))
		}
	}
	for r := 1; r <= rounds; r++ {
		for _, tc := range tests {
			f := strings.Fields(tc)
			tool, args, k := f[0], f[1:], key(tc)
			pt, rb := perftestPath(t, tool), filepath.Join(bin, tool)
			for i := 0; i < 3; i++ {
				switch (i + r) % 3 {
				case 0:
					one(pt, pt, filepath.Join(out, fmt.Sprintf("%s.pt-pt.%d.txt", k, r)), args)
				case 1:
					one(pt, rb, filepath.Join(out, fmt.Sprintf("%s.pt-rb.%d.txt", k, r)), args)
				case 2:
					one(rb, pt, filepath.Join(out, fmt.Sprintf("%s.rb-pt.%d.txt", k, r)), args)
				}
			}
		}
		t.Logf("dropin-agree: round %d of %d done", r, rounds)
	}
	if err := os.WriteFile(filepath.Join(out, "agree.fail"), []byte(fails.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if fails.Len() > 0 {
		t.Errorf("runs failed:\n%s", fails.String())
	}
}

// agreePin is AGREE_PIN: the server's and the client's CPU ("1,0" by
// default; -1 each for "off"), and the placement as agree.list states it.
func agreePin(t *testing.T) (srv, cli int, placement string) {
	v, n := os.Getenv("AGREE_PIN"), runtime.NumCPU()
	switch v {
	case "off":
		return -1, -1, "unpinned (AGREE_PIN=off): the scheduler places both ends"
	case "":
		if n < 2 {
			return -1, -1, "unpinned: this guest has one CPU"
		}
		v = "1,0"
	}
	a, b, ok := strings.Cut(v, ",")
	s, err1 := strconv.Atoi(a)
	c, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || s < 0 || c < 0 || s == c || s >= n || c >= n {
		t.Fatalf("AGREE_PIN=%q: want SERVER,CLIENT, two different CPUs below this guest's %d, or off", v, n)
	}
	return s, c, fmt.Sprintf("pinned (AGREE_PIN=%d,%d): every server on CPU %d, every client on CPU %d (taskset)", s, c, s, c)
}

// pinned is name with args run on cpu by taskset (cpu < 0: as it is).
func pinned(cpu int, name string, args []string) (string, []string) {
	if cpu < 0 {
		return name, args
	}
	return "taskset", append([]string{"-c", strconv.Itoa(cpu), name}, args...)
}

// key is a test's name in the files: "ib_write_bw -n 2000" -> ib_write_bw_n_2000.
func key(test string) string {
	return strings.ReplaceAll(strings.ReplaceAll(test, " ", "_"), "-", "")
}
