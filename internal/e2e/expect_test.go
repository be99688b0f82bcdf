package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/expect"
	"github.com/rdmabench/rdmabench/bench/result"
)

// The exit codes of the expectations (cmd/rdmabench/exitcodes.go).
const (
	exitExpectFail = 11
	exitExpectTell = 12
)

// TestExpect: --expect-bw and --expect-lat each pass, fail and cannot tell
// on rxe0, with their exit codes. The bounds come from a first run: far
// below and above its figures for pass and fail, and for cannot tell the
// first run's median, judged on two runs (whose interval, t with one
// degree of freedom, is wide), and a single bandwidth run (no interval).
func TestExpect(t *testing.T) {
	dir := jsonDir(t)
	base := []string{"loopback", "-d", "rxe0", "--op", "write"}

	t.Run("bw", func(t *testing.T) {
		bw := append(base, "--mode", "bw", "--size", "4096", "-n", "1000")
		first := filepath.Join(dir, "bw-first.json")
		mustRB(t, append(bw, "--repeat", "3", "--json", first)...)
		fd := readDoc(t, first)
		med := fd.Results[0].Bandwidth.GbitPerSec
		t.Logf("first run: %.3f Gb/s (median of 3)", med)
		o := rb(t, append(bw, "--repeat", "3", "--expect-bw", fmt.Sprintf("%.4gGb/s", med/100))...)
		wantExit(t, o, 0, "PASS", "expectations: 1 pass, 0 fail, 0 cannot tell")
		logVerdicts(t, o)
		o = rb(t, append(bw, "--repeat", "3", "--expect-bw", fmt.Sprintf("%.4gGb/s", med*100))...)
		wantExit(t, o, exitExpectFail, "FAIL", "expectation not met")
		logVerdicts(t, o)
		o = rb(t, append(bw, "--expect-bw", fmt.Sprintf("%.4gGb/s", med/100))...)
		wantExit(t, o, exitExpectTell, "CANNOT TELL", "one run, no interval; use --repeat 5")
		logVerdicts(t, o)
		tellInside(t, dir, append(bw, "--repeat", "2"), "--expect-bw", func(d *result.Document) string {
			return fmt.Sprintf("%.4gGb/s", d.Results[0].Bandwidth.GbitPerSec)
		}, fmt.Sprintf("%.4gGb/s", med))
		// a fraction of the port's rate names the rate it is of
		o = rb(t, append(bw, "--repeat", "2", "--expect-bw", "0.0001%")...)
		if _, _, ok := expect.PortRate(&fd.Env); ok {
			wantExit(t, o, 0, "PASS", "rxe0 port 1's", "software device")
			logVerdicts(t, o)
		} else {
			wantExit(t, o, exitExpectTell, "the port reports no rate")
			logVerdicts(t, o)
		}
	})

	t.Run("lat", func(t *testing.T) {
		lat := append(base, "--mode", "lat", "-n", "500")
		first := filepath.Join(dir, "lat-first.json")
		mustRB(t, append(lat, "--json", first)...)
		p50 := readDoc(t, first).Results[0].Latency.P50.NS
		t.Logf("first run: p50 %.0f ns", p50)
		o := rb(t, append(lat, "--expect-lat", fmt.Sprintf("p50=%.4gns", p50*100))...)
		wantExit(t, o, 0, "PASS", "order statistics")
		logVerdicts(t, o)
		o = rb(t, append(lat, "--expect-lat", fmt.Sprintf("p50=%.4gns,p99=%.4gns", p50/100, p50*1000))...)
		wantExit(t, o, exitExpectFail, "FAIL", "expectation not met")
		logVerdicts(t, o)
		tellInside(t, dir, append(lat, "--repeat", "2"), "--expect-lat", func(d *result.Document) string {
			return fmt.Sprintf("p50=%.4gns", d.Results[0].Latency.P50.NS)
		}, fmt.Sprintf("p50=%.4gns", p50))
	})
}

// logVerdicts logs the expectation lines of o, for the record.
func logVerdicts(t *testing.T, o out) {
	t.Helper()
	for _, l := range strings.Split(o.Combined(), "\n") {
		if strings.Contains(l, "PASS") || strings.Contains(l, "FAIL") || strings.Contains(l, "CANNOT TELL") || strings.HasPrefix(l, "expectations:") {
			t.Logf("exit %d: %s", o.Code, strings.TrimSpace(l))
		}
	}
}

// tellInside runs args with flag at bound, which should lie inside the
// run's interval: cannot tell (exit 12), naming the --repeat that would
// settle it. Emulation's figures move between runs: when the bound missed
// the run's interval after all, the verdict must still be the rule's (the
// printed interval shows it), and the bound is taken once more from that
// run itself (boundOf its document).
func tellInside(t *testing.T, dir string, args []string, flag string, boundOf func(*result.Document) string, bound string) {
	t.Helper()
	for try := range 2 {
		path := filepath.Join(dir, fmt.Sprintf("tell-%s-%d.json", strings.TrimPrefix(flag, "--"), try))
		o := rb(t, append(args, flag, bound, "--json", path)...)
		if o.Code == exitExpectTell {
			wantExit(t, o, exitExpectTell, "CANNOT TELL", "interval", "expectation cannot be told")
			logVerdicts(t, o)
			if !strings.Contains(o.Combined(), "would settle it") {
				t.Errorf("a cannot tell names no --repeat: %s", o)
			}
			return
		}
		d := readDoc(t, path)
		e := expect.Expectations{}
		var err error
		if flag == "--expect-bw" {
			e.BW, err = expect.ParseBW(bound)
		} else {
			e.Lat, err = expect.ParseLat(bound)
		}
		if err != nil {
			t.Fatal(err)
		}
		v := expect.Judge(d, e)[0]
		want := map[string]int{expect.Pass: 0, expect.Fail: exitExpectFail, expect.CannotTell: exitExpectTell}[v.Verdict]
		if o.Code != want {
			t.Fatalf("exit %d, but its document judges %s (exit %d): %s", o.Code, v, want, o)
		}
		t.Logf("try %d: the bound %s fell outside this run's interval (%s); taking the bound from this run", try, bound, v)
		bound = boundOf(d)
	}
	t.Errorf("%s: no bound inside a run's interval in two tries", flag)
}

// TestAccept: rdmabench accept over every ACTIVE port of the bed (rxe0,
// rxe1, siw1) writes a document that validates against accept.schema.json
// (jsonDir), one NIC per port, and exits with the node's verdict.
func TestAccept(t *testing.T) {
	dir := jsonDir(t)
	path := filepath.Join(dir, "accept.json")
	o := rb(t, "accept", "--op", "write", "-n", "200", "--repeat", "2", "--json", path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no document: %v: %s", err, o)
	}
	var d result.AcceptDocument
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if err := d.Check(); err != nil {
		t.Error(err)
	}
	want := map[string]int{result.VerdictAcceptPass: 0, result.VerdictAcceptFail: exitExpectFail, result.VerdictAcceptTell: exitExpectTell}[d.Verdict]
	wantExit(t, o, want, "Node acceptance of", "node: "+strings.ToUpper(d.Verdict))
	logVerdicts(t, o)
	devs := map[string]bool{}
	for _, n := range d.NICs {
		devs[n.Device] = true
		if n.Verdict != result.VerdictAcceptPass && len(n.Reasons) == 0 {
			t.Errorf("%s: %s without a reason", n.Device, n.Verdict)
		}
		if n.Error == "" && len(n.Checks) != 2 {
			t.Errorf("%s: %d checks, want 2 (WRITE's p50 and bandwidth: --op write)", n.Device, len(n.Checks))
		}
		if !strings.Contains(o.Stdout, n.Device) {
			t.Errorf("the table lacks %s", n.Device)
		}
	}
	for _, dev := range []string{"rxe0", "rxe1", "siw1"} {
		if !devs[dev] {
			t.Errorf("no NIC %s in the document: %s", dev, o)
		}
	}
	t.Logf("accept: %s\n%s", d.Verdict, o.Stdout)
}
