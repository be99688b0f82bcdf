//go:build experiment

package exp

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// allTools are perftest's eight tools.
var allTools = []string{"ib_send_lat", "ib_write_lat", "ib_read_lat", "ib_atomic_lat", "ib_send_bw", "ib_write_bw", "ib_read_bw", "ib_atomic_bw"}

// qpTools are the UC and UD pairs perftest 6.06 allows.
var qpTools = []string{"ib_send_lat@UC", "ib_write_lat@UC", "ib_send_bw@UC", "ib_write_bw@UC", "ib_send_lat@UD", "ib_send_bw@UD"}

// matrix is one set of drop-in pairs against real perftest (Debian's, or
// $RDMABENCH_PERFTEST_DIR's) in the guest (rxe0, 127.0.0.1, GID index 1; with cm, rdma_cm QPs on rxe1,
// 192.0.2.1, as rdma_cm resolves no loopback address). For each tool, two
// pairs: perftest's server with the drop-in's client (pt-srv), and the
// drop-in's server with perftest's client (pt-cli). Both ends must exit 0
// and print a table (READ/atomic latency servers: the header only, as
// perftest's), with the iteration count asked for. Args go to both ends.
type matrix struct {
	parallel bool          // the pairs run concurrently, on different ports
	cm       bool          // both ends with -R
	tools    []string      // TOOL[@UC|@UD][:pt-srv|:pt-cli]; nil: allTools
	args     []string      // to both ends; nil: -n 300
	rows     int           // every client's table has at least rows rows (-a: 23)
	tmo      time.Duration // each end's limit (0: 60 s)
	port     int           // the pairs' ports from here on (0: 18800, with cm 18850)
	dmax     time.Duration // each pair, both ends, done within dmax (-D runs; 0: no bound)
}

// pairOut is one pair's outputs and outcome.
type pairOut struct {
	name string
	fail string
}

func (m matrix) run(t *testing.T, dir string) {
	t.Helper()
	tools, args := m.tools, m.args
	if tools == nil {
		tools = allTools
	}
	if args == nil {
		args = []string{"-n", "300"}
	}
	tmo := m.tmo
	if tmo == 0 {
		tmo = 60 * time.Second
	}
	at, host, port := []string{"-d", "rxe0", "-x", "1"}, "127.0.0.1", 18800
	if m.cm {
		at, host, port = []string{"-d", "rxe1", "-R"}, "192.0.2.1", 18850
	}
	if m.port != 0 {
		port = m.port
	}
	var names []string
	for _, item := range tools {
		tool, _, _ := strings.Cut(item, ":")
		tool, _, _ = strings.Cut(tool, "@")
		names = append(names, tool)
	}
	bin := dropinBin(t, names...)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	// pair runs one pair: the server, then (once it listens) the client;
	// the drop-in's end records the exchange (NAME.rec.json).
	pair := func(name string, port int, srv, cli string, extra []string) pairOut {
		a := append(append(append(slices.Clone(at), "-p", fmt.Sprint(port)), extra...), args...)
		rec := []string{"RDMABENCH_DROPIN_RECORD=" + filepath.Join(dir, name+".rec.json")}
		srvEnv, cliEnv := rec, []string(nil)
		if strings.HasSuffix(name, "pt-srv") {
			srvEnv, cliEnv = nil, rec
		}
		t0 := time.Now()
		sp, err := start(tmo, create(t, filepath.Join(dir, name+".server.txt")), create(t, filepath.Join(dir, name+".server.err")), srvEnv, srv, a...)
		if err != nil {
			return pairOut{name, fmt.Sprintf("%s: server: %v", name, err)}
		}
		if m.cm {
			err = waitCMListen(port, 15*time.Second)
		} else {
			err = waitListen(port, 15*time.Second)
		}
		if err != nil {
			sp.stop()
			return pairOut{name, fmt.Sprintf("%s: no server on %d: %v", name, port, err)}
		}
		crc := run(tmo, create(t, filepath.Join(dir, name+".client.txt")), create(t, filepath.Join(dir, name+".client.err")), cliEnv,
			cli, append(a, host)...)
		if crc != 0 {
			sp.stop() // the pair failed: no need to wait out the server's limit
		}
		src := sp.wait()
		if crc != 0 || src != 0 {
			return pairOut{name, fmt.Sprintf("%s: client exit %d, server exit %d", name, crc, src)}
		}
		took := time.Since(t0)
		t.Logf("%s%s: both ends exit 0 (%.1f s)", name, map[bool]string{true: " -R"}[m.cm], took.Seconds())
		if m.dmax > 0 && took > m.dmax {
			return pairOut{name, fmt.Sprintf("%s: took %.1f s, more than %v", name, took.Seconds(), m.dmax)}
		}
		return pairOut{name: name}
	}

	var (
		mu   sync.Mutex
		outs []pairOut
		wg   sync.WaitGroup
	)
	for _, item := range tools {
		tool, dirs := item, []string{"pt-srv", "pt-cli"}
		if tl, d, ok := strings.Cut(item, ":"); ok {
			tool, dirs = tl, []string{d}
		}
		var extra []string
		qp := ""
		if tl, q, ok := strings.Cut(tool, "@"); ok {
			tool, qp, extra = tl, q, []string{"-c", q}
		}
		pt := perftestPath(t, tool)
		for _, d := range dirs {
			srv, cli := pt, filepath.Join(bin, tool)
			if d == "pt-cli" {
				srv, cli = cli, pt
			}
			name := tool + "." + d
			if qp != "" {
				name = tool + "." + qp + "." + d
			}
			p := port
			port++
			if m.parallel {
				wg.Add(1)
				go func() {
					defer wg.Done()
					o := pair(name, p, srv, cli, extra)
					mu.Lock()
					outs = append(outs, o)
					mu.Unlock()
				}()
			} else {
				outs = append(outs, pair(name, p, srv, cli, extra))
			}
		}
	}
	wg.Wait()
	bad := false
	for _, o := range outs {
		if o.fail == "" {
			continue
		}
		bad = true
		t.Error(o.fail)
		for _, s := range []string{"server", "client"} {
			t.Logf("--- %s %s:\n%s%s", o.name, s, readFile(filepath.Join(dir, o.name+"."+s+".txt")), readFile(filepath.Join(dir, o.name+"."+s+".err")))
		}
	}
	if bad {
		return
	}
	// every timed side printed a table row; READ/atomic latency servers the header only
	headerOnly := func(f string) bool {
		return strings.HasSuffix(f, ".server.txt") && (strings.Contains(f, "read_lat") || strings.Contains(f, "atomic_lat"))
	}
	durationLat := slices.Contains(args, "-D")
	for _, o := range outs {
		for _, side := range []string{"client", "server"} {
			f := filepath.Join(dir, o.name+"."+side+".txt")
			if headerOnly(f) {
				continue
			}
			text := readFile(f)
			n := tableRows(text)
			if n == 0 {
				t.Errorf("%s: no table row:\n%s", f, text)
				continue
			}
			if side == "client" && m.rows > 0 && n < m.rows {
				t.Errorf("%s: %d table rows, want %d:\n%s", f, n, m.rows, text)
			}
			// -D in a latency tool: perftest's duration table (#iterations,
			// t_avg, tps average; no percentiles), more than 0 iterations
			if durationLat && strings.Contains(o.name, "_lat") && !durationLatTable(text) {
				t.Errorf("%s: no -D latency table (#iterations t_avg tps average):\n%s", f, text)
			}
		}
	}
	if !t.Failed() {
		t.Logf("dropin-perftest%s %s: OK", map[bool]string{true: " -R"}[m.cm], strings.Join(args, " "))
	}
}

// perftestPath is perftest's tool: in $RDMABENCH_PERFTEST_DIR (a perftest
// build, e.g. 6.29, to check the drop-in against) when set, else on PATH
// (Debian's 6.06 in the bed).
func perftestPath(t *testing.T, tool string) string {
	t.Helper()
	if d := os.Getenv("RDMABENCH_PERFTEST_DIR"); d != "" {
		p := filepath.Join(d, tool)
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("RDMABENCH_PERFTEST_DIR: %v", err)
		}
		return p
	}
	return lookPath(t, tool)
}

var (
	tableHeader  = regexp.MustCompile(`^ *#bytes`)
	durLatHeader = regexp.MustCompile(`^ #bytes +#iterations +t_avg\[usec\] +tps average$`)
	digits       = regexp.MustCompile(`^[0-9]+$`)
)

// tableRows counts the rows of perftest's table: lines after the header
// whose first field is a number.
func tableRows(text string) int {
	h, n := false, 0
	for _, l := range strings.Split(text, "\n") {
		if tableHeader.MatchString(l) {
			h = true
			continue
		}
		if f := strings.Fields(l); h && len(f) > 0 && digits.MatchString(f[0]) {
			n++
		}
	}
	return n
}

// durationLatTable reports whether text has perftest's -D latency table with
// a row of more than 0 iterations.
func durationLatTable(text string) bool {
	h := false
	for _, l := range strings.Split(text, "\n") {
		if durLatHeader.MatchString(l) {
			h = true
			continue
		}
		if f := strings.Fields(l); h && len(f) > 1 && digits.MatchString(f[0]) && f[1] != "0" && digits.MatchString(f[1]) {
			return true
		}
	}
	return false
}

// TestDropinPerftest is make dropin-perftest: the drop-in against Debian's
// real perftest, every tool both ways, RC without and with -R, the UC and UD
// pairs perftest allows, then the modes one pair at a time: -a (every size,
// one row each), -D 2 and -b in the tools that take them, -D 2 in the four
// latency tools without and with -R (each pair within 8 s). Each step is a
// subtest (-test.run '^TestDropinPerftest$/^rc$' runs one); the outputs go
// to $RDMABENCH_OUT/STEP/NAME.{server,client}.{txt,err}, the drop-in's
// recording of the exchange to NAME.rec.json. $RDMABENCH_PERFTEST_DIR names
// another perftest build to face (6.28, 6.29; make dropin-perftest
// PERFTEST_DIR=DIR).
func TestDropinPerftest(t *testing.T) {
	requireBed(t)
	out := outDir(t)
	lat := []string{"ib_send_lat", "ib_write_lat", "ib_read_lat", "ib_atomic_lat"}
	steps := []struct {
		name string
		m    matrix
	}{
		{"rc", matrix{parallel: true}},
		{"rdma_cm", matrix{parallel: true, cm: true}},
		{"qp", matrix{parallel: true, tools: qpTools}},
		{"all_sizes", matrix{rows: 23, tmo: 200 * time.Second, port: 18700,
			tools: []string{"ib_write_lat", "ib_send_lat", "ib_read_lat", "ib_send_bw", "ib_write_bw", "ib_read_bw"}, args: []string{"-a", "-n", "5"}}},
		{"duration_bw", matrix{port: 18720, tools: []string{"ib_write_bw", "ib_send_bw", "ib_read_bw", "ib_atomic_bw"}, args: []string{"-D", "2"}}},
		{"bidir", matrix{parallel: true, port: 18740, tools: []string{"ib_write_bw", "ib_send_bw", "ib_read_bw"}, args: []string{"-b", "-n", "300"}}},
		{"duration_lat", matrix{dmax: 8 * time.Second, port: 18760, tools: lat, args: []string{"-D", "2"}}},
		{"duration_lat_cm", matrix{dmax: 8 * time.Second, port: 18880, cm: true, tools: lat, args: []string{"-D", "2"}}},
	}
	for _, s := range steps {
		t.Run(s.name, func(t *testing.T) { s.m.run(t, filepath.Join(out, s.name)) })
	}
}
