//go:build experiment

package exp

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/perftest"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/internal/vsperftest"
)

// TestBenchVsPerftest is the first part of make bench: rdmabench and perftest
// side by side in the one-guest bed, compared (internal/vsperftest):
//  1. 2 B latency, SEND, WRITE and READ: ib_{send,write,read}_lat -n N
//     against rdmabench loopback --mode lat --size 2 --iters N --inline-size
//     perftest (no inline, as perftest on rxe);
//     1b. inline: rdmabench's default (the device probe: SEND 236 B, WRITE
//     220 B on rxe) against ib_send_lat/ib_write_lat -I with the same size
//     (perftest turns -I off on devices it does not recognise, rxe among them);
//  2. 64 KiB WRITE bandwidth for BENCH_BW_DURATION s, tx depth 128 and CQ
//     moderation 100 given to both; the same over 4 QPs driven by one
//     thread; on 1 QP connected by rdma_cm on rxe1 (192.0.2.1); both ways at
//     once (-b: the sum of both directions in both tools);
//  3. rdmabench's peak RSS for a SEND latency run of BENCH_RSS_SMALL against
//     BENCH_RSS_LARGE iterations.
//
// Each comparison runs 4 × BENCH_ROUNDS times per tool, interleaved back to
// back in the order perftest rdmabench rdmabench perftest rdmabench perftest
// perftest rdmabench (ABBA BAAB: both tools have the same mean position, so
// linear drift cancels); every figure is the median of the tool's runs. The
// raw outputs go to $RDMABENCH_OUT (NAME.txt, NAME.json, status: one "NAME
// RC" line per run); the report to stdout and summary.txt. It fails when a
// run failed or a number could not be parsed (a missed target is not a
// failure: emulated RDMA is noisy). BENCH_HOST_NPROC, BENCH_HOST_LOAD and
// BENCH_HOST_GUESTS describe the host in the report (make sets them).
// BENCH_ITERS (default 20000, at least 1000), BENCH_BW_DURATION (3),
// BENCH_RSS_SMALL (10000), BENCH_RSS_LARGE (1000000), BENCH_ROUNDS (1).
func TestBenchVsPerftest(t *testing.T) {
	requireBed(t)
	t0 := time.Now()
	bin, out := rdmabench(t), outDir(t)
	iters := envInt(t, "BENCH_ITERS", 20000)
	bwdur := envInt(t, "BENCH_BW_DURATION", 3)
	rssSmall := envInt(t, "BENCH_RSS_SMALL", 10000)
	rssLarge := envInt(t, "BENCH_RSS_LARGE", 1000000)
	rounds := envInt(t, "BENCH_ROUNDS", 1)
	if iters < 1000 {
		t.Fatalf("BENCH_ITERS=%d: at least 1000 (perftest's 99.9%% and rdmabench's p99.9 need it)", iters)
	}
	if rssLarge <= rssSmall {
		t.Fatalf("BENCH_RSS_LARGE=%d must exceed BENCH_RSS_SMALL=%d", rssLarge, rssSmall)
	}
	var order []string
	for range rounds {
		order = append(order, "pt", "rb", "rb", "pt", "rb", "pt", "pt", "rb")
	}
	b := &benchRun{t: t, bin: bin, out: out, port: 19100, steps: 9*len(order) + 2,
		ptDev: []string{"-d", "rxe0", "-x", "1"}, ptHost: "127.0.0.1", rbDev: "rxe0"}
	// Older rdmabench builds had a loopback control port (-p); give each run its own.
	help, _ := exec.Command(bin, "loopback", "--help").CombinedOutput()
	b.rbPort = bytes.Contains(help, []byte("--port"))
	b.status = create(t, filepath.Join(out, "status"))

	b.save("perftest-version.txt", lookPath(t, "ib_send_lat"), "-V")
	b.save("rdmabench-version.txt", bin, "version")
	b.write("clocksource", readFile("/sys/devices/system/clocksource/clocksource0/current_clocksource"))
	b.stamp("t0")

	// each runs pt or rb for every entry of order, numbering each tool's runs
	each := func(pt func(n int), rb func(n int)) {
		a, r := 0, 0
		for _, who := range order {
			if who == "pt" {
				a++
				pt(a)
			} else {
				r++
				rb(r)
			}
		}
	}
	n := fmt.Sprint(iters)
	tl := time.Duration(60+iters/2000) * time.Second // 500 us per iteration: generous
	// 1. latency
	for _, op := range []string{"send", "write", "read"} {
		each(func(a int) { b.pt(fmt.Sprintf("lat-%s-pt%d", op, a), tl, "ib_"+op+"_lat", "-s", "2", "-n", n) },
			func(r int) {
				b.rb(fmt.Sprintf("lat-%s-rb%d", op, r), tl, "--op", op, "--mode", "lat", "--size", "2", "--iters", n, "--inline-size", "perftest")
			})
	}
	// 1b. inline: rdmabench's default against perftest given the same size with -I
	for _, op := range []string{"send", "write"} {
		in := map[string]string{"send": "236", "write": "220"}[op]
		each(func(a int) {
			b.pt(fmt.Sprintf("ilat-%s-pt%d", op, a), tl, "ib_"+op+"_lat", "-s", "2", "-n", n, "-I", in)
		},
			func(r int) {
				b.rb(fmt.Sprintf("ilat-%s-rb%d", op, r), tl, "--op", op, "--mode", "lat", "--size", "2", "--iters", n)
			})
	}
	b.stamp("t1")

	// 2. bandwidth: the same duration, tx depth and CQ moderation given to
	// both (perftest's own default at 64 KiB is CQ moderation 1: it turns
	// moderation off above 8 KiB unless -Q is given)
	tb := time.Duration(bwdur+60) * time.Second
	d, ds := fmt.Sprint(bwdur), fmt.Sprintf("%ds", bwdur)
	ptBW := []string{"-s", "65536", "-D", d, "-t", "128", "-Q", "100"}
	rbBW := []string{"--op", "write", "--mode", "bw", "--size", "64K", "-D", ds, "--tx-depth", "128", "--cq-mod", "100"}
	with := func(a []string, more ...string) []string { return append(append([]string{}, a...), more...) }
	each(func(a int) { b.pt(fmt.Sprintf("bw-pt%d", a), tb, "ib_write_bw", ptBW...) },
		func(r int) { b.rb(fmt.Sprintf("bw-rb%d", r), tb, rbBW...) })
	// 2b. over 4 QPs; one thread drives all of them in both tools
	each(func(a int) { b.pt(fmt.Sprintf("bwq-pt%d", a), tb, "ib_write_bw", with(ptBW, "-q", "4")...) },
		func(r int) { b.rb(fmt.Sprintf("bwq-rb%d", r), tb, with(rbBW, "--qps", "4", "--threads", "1")...) })
	// 2c. QPs created and connected by rdma_cm, on rxe1 (rdma_cm resolves no loopback address)
	b.ptDev, b.ptHost, b.rbDev = []string{"-d", "rxe1"}, "192.0.2.1", "rxe1"
	each(func(a int) { b.pt(fmt.Sprintf("bwcm-pt%d", a), tb, "ib_write_bw", with([]string{"-R"}, ptBW...)...) },
		func(r int) { b.rb(fmt.Sprintf("bwcm-rb%d", r), tb, with([]string{"--rdma-cm"}, rbBW...)...) })
	b.ptDev, b.ptHost, b.rbDev = []string{"-d", "rxe0", "-x", "1"}, "127.0.0.1", "rxe0"
	// 2d. both ways at once: -b on both perftest sides (it requires that), on
	// rdmabench's client (its server learns it from the test)
	each(func(a int) { b.pt(fmt.Sprintf("bwb-pt%d", a), tb, "ib_write_bw", with([]string{"-b"}, ptBW...)...) },
		func(r int) { b.rb(fmt.Sprintf("bwb-rb%d", r), tb, with(rbBW, "-b")...) })
	b.stamp("t2")

	// 3. peak RSS
	b.rss("rss-small", rssSmall, false)
	poll := false
	if doc, err := result.ReadJSONFile(filepath.Join(out, "rss-small.json")); err != nil || doc.PeakRSSBytes <= 0 {
		b.say("no peak_rss_bytes in rdmabench's JSON: falling back to polling VmHWM")
		b.steps++
		poll = true
		b.rss("rss-small", rssSmall, true)
	}
	b.rss("rss-large", rssLarge, poll)
	b.stamp("t3")
	b.say("done (failures: %d)", b.failed)
	b.status.Close()

	var sum bytes.Buffer
	problems := vsperftest.Run(vsperftest.Config{Dir: out, Iters: iters, BWDur: bwdur, Reps: 4 * rounds,
		RSSSmall: int64(rssSmall), RSSLarge: int64(rssLarge), HostSecs: int(time.Since(t0).Seconds()),
		NProc: envIntOr("BENCH_HOST_NPROC", 0), LoadStart: envStr("BENCH_HOST_LOAD", "?"), LoadEnd: "?",
		Others: envStr("BENCH_HOST_GUESTS", "?"), Prog: "TestBenchVsPerftest"}, io.MultiWriter(os.Stdout, &sum), os.Stderr)
	b.write("summary.txt", sum.String())
	if problems > 0 {
		t.Errorf("%d problem(s): some runs failed or numbers could not be parsed (see above; the outputs are in %s)", problems, out)
	}
}

// envIntOr returns the integer in $name, or def.
func envIntOr(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

// benchRun is TestBenchVsPerftest's state: the ports, the progress and the
// status file.
type benchRun struct {
	t             *testing.T
	bin, out      string
	port          int
	step, steps   int
	failed        int
	rbPort        bool
	ptDev         []string // perftest's device: rxe0 on lo (GID 1), or rxe1 for rdma_cm
	ptHost, rbDev string
	status        *os.File
}

func (b *benchRun) say(format string, args ...any) {
	fmt.Printf("bench: "+format+"\n", args...)
}

func (b *benchRun) write(name, text string) {
	if err := os.WriteFile(filepath.Join(b.out, name), []byte(text), 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// save writes a command's output to name.
func (b *benchRun) save(name, prog string, args ...string) {
	o, _ := exec.Command(prog, args...).CombinedOutput()
	b.write(name, string(o))
}

// stamp writes the time (Unix seconds) to name.
func (b *benchRun) stamp(name string) { b.write(name, fmt.Sprintf("%d\n", time.Now().Unix())) }

func (b *benchRun) record(name string, rc int) {
	fmt.Fprintf(b.status, "%s %d\n", name, rc)
	if rc != 0 {
		b.failed++
		b.say("FAILED: %s (exit %d)", name, rc)
	}
}

// pt runs a perftest pair (output NAME.txt, the server's NAME.server.txt),
// tried up to three times when perftest printed inf or nan (its CPU-frequency
// calibration failed: "Correlation coefficient r^2 ... < 0.9", seen under
// TCG), as rdmabench's parser of perftest's output reads it.
func (b *benchRun) pt(name string, limit time.Duration, tool string, args ...string) {
	b.step++
	b.say("[%d/%d] %s: %s %s", b.step, b.steps, name, tool, strings.Join(args, " "))
	txt := filepath.Join(b.out, name+".txt")
	rc := 0
	for try := 1; ; try++ {
		rc = b.ptOnce(name, limit, tool, args)
		if rc != 0 || !ptBad(txt) {
			break
		}
		if try >= 3 {
			b.say("%s: perftest printed inf/nan %d times", name, try)
			break
		}
		if err := os.Rename(txt, filepath.Join(b.out, fmt.Sprintf("%s.try%d.txt", name, try))); err != nil {
			b.t.Fatal(err)
		}
		b.say("%s: perftest printed inf/nan (its clock calibration failed); retrying", name)
	}
	b.record(name, rc)
}

func (b *benchRun) ptOnce(name string, limit time.Duration, tool string, args []string) int {
	b.port++
	a := append(append(append([]string{}, b.ptDev...), "-p", fmt.Sprint(b.port)), args...)
	prog := lookPath(b.t, tool)
	so := create(b.t, filepath.Join(b.out, name+".server.txt"))
	sp, err := start(limit, so, so, nil, prog, a...)
	if err != nil {
		b.say("%s: %v", name, err)
		return -1
	}
	if b.ptHost == "127.0.0.1" {
		err = waitListen(b.port, 15*time.Second)
	} else {
		err = waitCMListen(b.port, 15*time.Second) // rdma_cm listens in the RDMA port space, not in /proc/net/tcp
	}
	if err != nil {
		b.say("note: %s server: %v", tool, err)
	}
	o := create(b.t, filepath.Join(b.out, name+".txt"))
	crc := run(limit, o, o, nil, prog, append(a, b.ptHost)...)
	o.Close()
	if crc != 0 {
		sp.stop()
	}
	src := sp.wait()
	if crc == 0 {
		return src
	}
	return crc
}

// ptBad reports whether perftest's result row in file has inf or nan.
func ptBad(file string) bool {
	raw, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	_, err = perftest.ParsePrinted(raw)
	return err != nil && strings.Contains(err.Error(), "not a finite number")
}

// rbArgs is rdmabench loopback's device (and control port, for old builds).
func (b *benchRun) rbArgs(dev string) []string {
	a := []string{"loopback", "-d", dev}
	if b.rbPort {
		a = append(a, "-p", fmt.Sprint(b.port))
	}
	return a
}

// rb runs one rdmabench loopback: JSON to NAME.json, output to NAME.txt.
func (b *benchRun) rb(name string, limit time.Duration, args ...string) {
	b.step++
	b.port++
	b.say("[%d/%d] %s: rdmabench loopback %s", b.step, b.steps, name, strings.Join(args, " "))
	o := create(b.t, filepath.Join(b.out, name+".txt"))
	rc := run(limit, o, o, nil, b.bin, append(append(b.rbArgs(b.rbDev), args...), "--json", filepath.Join(b.out, name+".json"))...)
	o.Close()
	b.record(name, rc)
}

// rss runs rdmabench's SEND latency run of n iterations; with poll it also
// reads VmHWM every 0.2 s into NAME.vmhwm_kb, for a binary without
// peak_rss_bytes (polling steals CPU from the two busy-polling engine
// threads, so it is off by default).
func (b *benchRun) rss(name string, n int, poll bool) {
	b.step++
	b.port++
	note := ""
	if poll {
		note = " (polling VmHWM)"
	}
	b.say("[%d/%d] %s: rdmabench loopback --op send --mode lat --size 2 --iters %d%s", b.step, b.steps, name, n, note)
	limit := time.Duration(60+n/2000) * time.Second
	o := create(b.t, filepath.Join(b.out, name+".txt"))
	args := append(b.rbArgs("rxe0"), "--op", "send", "--mode", "lat", "--size", "2", "--iters", fmt.Sprint(n),
		"--json", filepath.Join(b.out, name+".json"))
	p, err := start(limit, o, o, nil, b.bin, args...)
	if err != nil {
		b.say("%s: %v", name, err)
		b.record(name, -1)
		return
	}
	hwm := "0"
	if poll {
		status := fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid)
		for p.running() {
			for _, l := range strings.Split(readFile(status), "\n") {
				if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
					hwm = f[1]
				}
			}
			select {
			case <-p.done:
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	rc := p.wait()
	o.Close()
	if poll {
		b.write(name+".vmhwm_kb", hwm+"\n")
	}
	b.record(name, rc)
}
