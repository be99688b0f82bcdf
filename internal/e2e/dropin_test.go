package e2e

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
)

// The perftest drop-in (links named ib_send_lat, ib_write_bw, ... to
// rdmabench) against Debian's perftest 6.06 in the bed, on rxe0
// (127.0.0.1, GID index 1). Its output is read by rdmabench's one perftest
// parser (bench/perftest, what `rdmabench import perftest` uses).

const dropinTimeout = 60 * time.Second // each end of a pair

// dropinLinks makes links named tools to the rdmabench under test in a
// fresh directory and returns it.
func dropinLinks(t *testing.T, tools ...string) string {
	t.Helper()
	b := bin(t)
	dir := t.TempDir()
	for _, tool := range tools {
		if err := os.Symlink(b, filepath.Join(dir, tool)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// perftestTool is the path of perftest's own tool, which the bed must have.
func perftestTool(t *testing.T, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		t.Fatalf("perftest's %s is not on PATH (%v): the bed has Debian's perftest (scripts/install-deps.sh)", tool, err)
	}
	return p
}

// ptPair runs a perftest-style pair on rxe0 at port: server, then client
// (127.0.0.1) once the server listens; both must exit 0 within
// dropinTimeout. It returns the client's and the server's output.
func ptPair(t *testing.T, port int, server, client string, args ...string) (cli, srv string) {
	t.Helper()
	at := append([]string{"-d", "rxe0", "-x", "1", "-p", strconv.Itoa(port)}, args...)
	s := startEnv(t, dropinTimeout, nil, nil, server, at...)
	waitListen(t, port, s)
	c := runEnv(t, dropinTimeout, nil, client, append(at, "127.0.0.1")...)
	sc := s.wait(t, dropinTimeout)
	if c.Code != 0 || sc != 0 {
		t.Fatalf("client exit %d, server exit %d\nthe client: %s\nthe server: %s", c.Code, sc, c, s)
	}
	return c.Stdout, s.stdout.String()
}

// parsed is one output read by perftest.ParsePrinted.
func parsed(t *testing.T, what, out string) *perftest.Printed {
	t.Helper()
	p, err := perftest.ParsePrinted([]byte(out))
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
	return p
}

// labels is the test box's title and labels, in order.
func labels(p *perftest.Printed) string {
	l := []string{"title:" + p.Title}
	for _, s := range p.Header {
		l = append(l, s.Label)
	}
	return strings.Join(l, " | ")
}

// setting is the first word of a box setting, "" when absent.
func setting(p *perftest.Printed, label string) string {
	v, ok := p.Setting(label)
	if f := strings.Fields(v); ok && len(f) > 0 {
		return f[0]
	}
	return ""
}

var numberRE = regexp.MustCompile(`^[0-9][0-9.]*$`)

// sameLayout checks the drop-in's output of one side against perftest's:
// the first row has cols numeric columns, size and iters; one table header,
// as perftest's; the box's labels in perftest's order; the same depths,
// MTU, GID index and inline size.
func sameLayout(t *testing.T, what, drop, real string, cols, size, iters int) {
	t.Helper()
	d, r := parsed(t, what+" (the drop-in)", drop), parsed(t, what+" (perftest)", real)
	if len(d.Rows) == 0 {
		t.Fatalf("%s: no result row:\n%s", what, drop)
	}
	row := d.Rows[0].Fields
	if len(row) != cols {
		t.Errorf("%s: %d columns in %q, want %d", what, len(row), d.Rows[0].Line, cols)
	}
	if len(row) < 2 || row[0] != strconv.Itoa(size) || row[1] != strconv.Itoa(iters) {
		t.Errorf("%s: row %q is not %d B, %d iterations", what, d.Rows[0].Line, size, iters)
	}
	for _, v := range row {
		if !numberRE.MatchString(v) {
			t.Errorf("%s: %q in %q is not a number", what, v, d.Rows[0].Line)
		}
	}
	if d.Tables != 1 {
		t.Errorf("%s: %d table headers, want 1", what, d.Tables)
	}
	if d.HeaderLine != r.HeaderLine {
		t.Errorf("%s: table header differs from perftest's:\n%q\n%q", what, d.HeaderLine, r.HeaderLine)
	}
	if r.Title == "" {
		t.Fatalf("%s: no header box in perftest's output:\n%s", what, real)
	}
	if labels(d) != labels(r) {
		t.Errorf("%s: header box labels differ from perftest's:\n%s\nperftest's:\n%s", what, labels(d), labels(r))
	}
	for _, l := range []string{"TX depth", "RX depth", "CQ Moderation", "Mtu", "GID index", "Max inline data"} {
		if a, b := setting(d, l), setting(r, l); a != b {
			t.Errorf("%s: %q %q, perftest's %q", what, l, a, b)
		}
	}
	if t.Failed() {
		t.Logf("%s, the drop-in's output:\n%s\nperftest's:\n%s", what, drop, real)
	}
}

// TestDropInLayout: the drop-in's ib_send_lat prints what perftest's own
// ib_send_lat prints in the bed (both sides), and its ib_write_bw what
// perftest 6.06 printed there for the same command (bench/perftest/testdata
// has the whole outputs; the host tests compare them byte for byte).
func TestDropInLayout(t *testing.T) {
	links := dropinLinks(t, "ib_send_lat", "ib_write_bw")
	realLat := perftestTool(t, "ib_send_lat")
	// one pair at a time: both ends busy-poll, and the guest has 2 vCPUs
	rc, rs := ptPair(t, 18741, realLat, realLat, "-n", "200")
	dc, ds := ptPair(t, 18742, filepath.Join(links, "ib_send_lat"), filepath.Join(links, "ib_send_lat"), "-n", "200")
	sameLayout(t, "ib_send_lat client", dc, rc, 9, 2, 200)
	sameLayout(t, "ib_send_lat server", ds, rs, 9, 2, 200)

	bc, bs := ptPair(t, 18744, filepath.Join(links, "ib_write_bw"), filepath.Join(links, "ib_write_bw"), "-n", "200", "-s", "4096")
	for _, side := range []struct{ name, out string }{{"client", bc}, {"server", bs}} {
		sameLayout(t, "ib_write_bw "+side.name, side.out, writeBW606(side.name == "client"), 5, 4096, 200)
	}
}

// writeBW606 is what perftest 6.06's ib_write_bw -d rxe0 -x 1 -n 200 -s 4096
// printed in the guest (the client's box has the TX depth).
func writeBW606(client bool) string {
	var b strings.Builder
	dash := "---------------------------------------------------------------------------------------\n"
	b.WriteString(dash)
	b.WriteString("                    RDMA_Write BW Test\n")
	b.WriteString(" Dual-port       : OFF\t\tDevice         : rxe0\n Number of qps   : 1\t\tTransport type : IB\n")
	b.WriteString(" Connection type : RC\t\tUsing SRQ      : OFF\n PCIe relax order: ON\n ibv_wr* API     : OFF\n")
	if client {
		b.WriteString(" TX depth        : 128\n")
	}
	b.WriteString(" CQ Moderation   : 100\n Mtu             : 4096[B]\n Link type       : Ethernet\n GID index       : 1\n")
	b.WriteString(" Max inline data : 0[B]\n rdma_cm QPs\t : OFF\n Data ex. method : Ethernet\n")
	b.WriteString(dash)
	b.WriteString(" #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]\n")
	b.WriteString(" 4096       200              0.00               8.00   \t\t   0.002000\n")
	b.WriteString(dash)
	return b.String()
}

// TestDropInAgainstPerftest: the drop-in against real perftest (issue 22),
// two pairs of the matrix at once (the whole matrix: make dropin-perftest):
// perftest's WRITE latency server with the drop-in's client, past
// perftest's 8-bit marker wrap (300 iterations), and perftest's SEND latency
// client with the drop-in's server. Both ends exit 0 and print a table row.
func TestDropInAgainstPerftest(t *testing.T) {
	links := dropinLinks(t, "ib_write_lat", "ib_send_lat")
	for i, c := range []struct{ tool, dir string }{{"ib_write_lat", "pt-srv"}, {"ib_send_lat", "pt-cli"}} {
		real, drop := perftestTool(t, c.tool), filepath.Join(links, c.tool)
		srv, cli := real, drop
		if c.dir == "pt-cli" {
			srv, cli = drop, real
		}
		t.Run(c.tool+"."+c.dir, func(t *testing.T) {
			t.Parallel()
			co, so := ptPair(t, 18800+i, srv, cli, "-n", "300")
			for side, o := range map[string]string{"client": co, "server": so} {
				if p := parsed(t, fmt.Sprintf("%s %s", c.tool, side), o); len(p.Rows) == 0 {
					t.Errorf("%s %s (%s): no table row:\n%s", c.tool, side, c.dir, o)
				}
			}
		})
	}
}

// TestDropInRefusesFlag: a flag the drop-in cannot honour is exit 2, naming
// it, before anything runs.
func TestDropInRefusesFlag(t *testing.T) {
	links := dropinLinks(t, "ib_send_lat")
	wantExit(t, runEnv(t, dropinTimeout, nil, filepath.Join(links, "ib_send_lat"), "-U", "127.0.0.1"), 2, "-U: not supported")
}
