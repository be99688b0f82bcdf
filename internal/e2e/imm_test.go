package e2e

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// immRowRE is a result row of a table (a test ran).
var immRowRE = regexp.MustCompile(`(?m)^ (send|write|read|fetch_add|cmp_swap|write_imm|send_imm) +[0-9]`)

// TestImm: WRITE and SEND with immediate on soft-RoCE (rxe0), latency and
// bandwidth with --verify (the payload, the receive completion's kind and
// the immediate, checked by the server); on soft-iWARP (siw1), which has no
// immediate data, refused before the first test with the op, the device and
// its transport named (exit 3); and perftest's spellings in the drop-in.
func TestImm(t *testing.T) {
	dir := jsonDir(t)
	js := filepath.Join(dir, "imm.json")
	o := mustRB(t, "loopback", "-d", "rxe0", "--op", "write_imm,send_imm", "--mode", "lat,bw", "-n", "300", "--verify", "--json", js)
	d := readDoc(t, js)
	var got []string
	for _, r := range d.Results {
		got = append(got, r.Op+" "+r.Mode)
		if r.Verify == nil || r.Verify.CheckedBy != "server" || r.Verify.Messages < 1 || r.Iterations < 300 {
			t.Errorf("%s %s: %d iterations, verify %+v; want 300 and the server's check", r.Op, r.Mode, r.Iterations, r.Verify)
		}
	}
	if want := "write_imm lat,send_imm lat,write_imm bw,send_imm bw"; strings.Join(got, ",") != want {
		t.Errorf("%s: results %v, want %s", js, got, want)
	}
	wantOutput(t, "the loopback's tables", o.Stdout, "write_imm: each latency is half of an RDMA WRITE with immediate ping-pong round trip",
		"send_imm: each latency is half of a SEND with immediate ping-pong round trip")

	// siw1: refused before any test runs, send (which siw carries) included
	for _, op := range []string{result.OpWriteImm, result.OpSendImm} {
		o := rb(t, "loopback", "-d", "siw1", "--rdma-cm", "--op", "send,"+op, "--mode", "lat", "-n", "50")
		wantExit(t, o, 3, "siw1 is an iWARP device: --op "+op+" (with immediate data) not supported by the device: "+
			"iWARP carries no immediate data (RoCE and InfiniBand do)")
		if immRowRE.MatchString(o.Stdout) {
			t.Errorf("siw1 %s: a test ran before the refusal:\n%s", op, o.Stdout)
		}
	}

	// the drop-in: perftest's --write_with_imm and --send_with_imm, both ends rdmabench
	links := dropinLinks(t, "ib_write_lat", "ib_send_bw")
	for i, c := range []struct{ tool, flag string }{{"ib_write_lat", "--write_with_imm"}, {"ib_send_bw", "--send_with_imm"}} {
		cli, srv := ptPair(t, 18791+i, filepath.Join(links, c.tool), filepath.Join(links, c.tool), c.flag, "-n", "200")
		if !regexp.MustCompile(`(?m)^ +2 +200 `).MatchString(cli) && !regexp.MustCompile(`(?m)^ +65536 +200 `).MatchString(cli) {
			t.Errorf("%s %s: the client printed no table row:\n%s\nthe server:\n%s", c.tool, c.flag, cli, srv)
		}
	}
}
