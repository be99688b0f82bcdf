package pair

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
)

// The core of the two-host stage: clients here against a server on the
// peer, no -d on either side (both must choose rxe2 by route).

// byRoute is what a side's device choice says of its wire address.
func byRoute(addr string) string { return "by route: rxe2 port 1 holds " + addr }

// TestWire: SEND, WRITE and READ latency and bandwidth across the wire.
// Bandwidth at 4 KiB, one packet per message: rxe 6.1 over this emulated
// wire, under host load, has failed multi-packet messages with REM_OP_ERR /
// REM_INV_REQ after its retransmissions (perftest's too, at times);
// loopback covers 64 KiB.
func TestWire(t *testing.T) {
	b := newBed(t)
	srv := b.startServer(t)
	js := filepath.Join(t.TempDir(), "basic.json")
	code, out, took := b.run(t, 5*time.Minute, "run", b.peer.Addr, "--op", "send,write,read", "--mode", "lat,bw", "--size", "4K", "-n", "100", "--json", js)
	if code != 0 {
		t.Fatalf("send/write/read lat,bw across the wire: exit %d after %v; output:\n%s", code, took.Round(time.Millisecond), indent(out))
	}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if regexp.MustCompile(`Device|Server device|software|^ (send|write|read) `).MatchString(l) && len(lines) < 14 {
			lines = append(lines, l)
		}
	}
	t.Logf("%s", strings.Join(lines, "\n"))
	var doc result.Document
	decode(t, js, &doc)
	raw, _ := os.ReadFile(js)
	fail := func(format string, args ...any) {
		t.Helper()
		t.Errorf(format, args...)
		t.Logf("--- %s:\n%s", js, head(string(raw), 3000))
	}
	if !strings.Contains(doc.Env.DeviceReason, byRoute(b.here)) {
		fail("the client did not choose rxe2 by route: environment.device_reason %q, want %q", doc.Env.DeviceReason, byRoute(b.here))
	}
	if doc.ServerEnv == nil || !strings.Contains(doc.ServerEnv.DeviceReason, byRoute(b.peer.Addr)) {
		got := "no server_environment"
		if doc.ServerEnv != nil {
			got = doc.ServerEnv.DeviceReason
		}
		fail("the server did not choose rxe2 by route: server_environment.device_reason %q, want %q", got, byRoute(b.peer.Addr))
	}
	pcie := ""
	for _, c := range doc.Env.Doctor {
		if c.Check == "pcie-link" {
			pcie = c.Status
		}
	}
	if pcie == "" {
		fail("no doctor finding pcie-link in the environment: %+v", doc.Env.Doctor)
	}
	if !strings.Contains(doc.Env.SoftwareRDMANote, "rxe over eth0") {
		fail("the banner does not name rxe over eth0: software_rdma_note %q", doc.Env.SoftwareRDMANote)
	}
	// each of the 6 tests: both sides' port counters, with packets sent
	// (deltas hold only counters that moved)
	var client, server int
	for _, r := range doc.Results {
		if r.Counters != nil && r.Counters.Client != nil && r.Counters.Client.Deltas["sent_pkts"] > 0 {
			client++
		}
		if r.Counters != nil && r.Counters.Server != nil && r.Counters.Server.Deltas["sent_pkts"] > 0 {
			server++
		}
	}
	if len(doc.Results) != 6 || client != 6 || server != 6 {
		fail("packet counters: %d results, %d with the client's sent_pkts, %d with the server's; want 6 of each", len(doc.Results), client, server)
	}
	if err := srv.WaitOutput(byRoute(b.peer.Addr), 5*time.Second); err != nil {
		t.Errorf("the server's log does not say it chose rxe2 by route: %v", err)
	}
}

// TestRDMACM: SEND and READ over rdma_cm, to the server's address.
func TestRDMACM(t *testing.T) {
	b := newBed(t)
	b.startServer(t)
	js := filepath.Join(t.TempDir(), "cm.json")
	code, out, _ := b.run(t, 5*time.Minute, "run", b.peer.Addr, "--rdma-cm", "--op", "send,read", "--mode", "lat,bw", "--size", "2", "-n", "100", "--json", js)
	if code != 0 {
		t.Fatalf("rdma_cm across the wire: exit %d; output:\n%s", code, indent(out))
	}
	var doc result.Document
	decode(t, js, &doc)
	cm, to := 0, 0
	for _, r := range doc.Results {
		if r.Connection != nil && r.Connection.Method == "rdma_cm" {
			cm++
		}
		if r.Connection != nil && strings.Contains(r.Connection.Address, b.peer.Addr+":") {
			to++
		}
	}
	if cm != 4 || to != 4 {
		t.Errorf("%d of %d results over rdma_cm and %d to %s:, want 4 and 4", cm, len(doc.Results), to, b.peer.Addr)
	}
}

// TestUD: UD latency and bandwidth across the wire.
func TestUD(t *testing.T) {
	b := newBed(t)
	b.startServer(t)
	js := filepath.Join(t.TempDir(), "ud.json")
	code, out, _ := b.run(t, 5*time.Minute, "run", b.peer.Addr, "--qp-type", "ud", "--mode", "lat,bw", "--size", "1024", "-n", "100", "--json", js)
	if code != 0 {
		t.Fatalf("UD across the wire: exit %d; output:\n%s", code, indent(out))
	}
	var doc result.Document
	decode(t, js, &doc)
	ud := 0
	for _, r := range doc.Results {
		if r.QPType == "UD" {
			ud++
		}
	}
	if ud != 2 {
		t.Errorf("%d of %d results with qp_type UD, want 2", ud, len(doc.Results))
	}
}

// TestQPs4: WRITE bandwidth on 4 QPs driven by 2 threads: per-QP results.
func TestQPs4(t *testing.T) {
	b := newBed(t)
	b.startServer(t)
	js := filepath.Join(t.TempDir(), "qps.json")
	code, out, _ := b.run(t, 5*time.Minute, "run", b.peer.Addr, "--op", "write", "--mode", "bw", "--qps", "4", "--threads", "2", "--size", "4K", "-n", "400", "--json", js)
	if code != 0 {
		t.Fatalf("4 QPs across the wire: exit %d; output:\n%s", code, indent(out))
	}
	var doc result.Document
	decode(t, js, &doc)
	if len(doc.Results) == 0 || len(doc.Results[0].PerQP) != 4 {
		n := -1
		if len(doc.Results) > 0 {
			n = len(doc.Results[0].PerQP)
		}
		t.Errorf("results[0].per_qp has %d QPs, want 4", n)
	}
}

// TestLoopbackGIDRefused: a loopback GID (rxe0) against a remote peer is
// refused before any traffic, within 10 s (the client's start, its control
// connection and device open under the guest's emulation; a refusal that
// waited for the transport's retries would take far longer), naming both GIDs. The server has
// served a client first, as the old stage's had (a fresh server's first
// device open, its libraries read over the bed's 9p root, took 4 s).
func TestLoopbackGIDRefused(t *testing.T) {
	b := newBed(t)
	b.startServer(t)
	if code, out, _ := b.run(t, 2*time.Minute, "run", b.peer.Addr, "--op", "send", "--mode", "lat", "-n", "10"); code != 0 {
		t.Fatalf("a first client across the wire: exit %d; output:\n%s", code, indent(out))
	}
	code, out, took := b.run(t, time.Minute, "run", b.peer.Addr, "-d", "rxe0", "--op", "send", "--mode", "lat", "-n", "10")
	if code == 0 || code == -1 {
		t.Fatalf("rxe0 against a remote peer was not refused: exit %d after %v; output:\n%s", code, took.Round(time.Millisecond), indent(out))
	}
	for _, want := range []string{"these ends cannot talk (a loopback GID reaches only its own host", "::ffff:127.0.0.1", "::ffff:" + b.peer.Addr} {
		if !strings.Contains(out, want) {
			t.Errorf("the loopback-GID refusal lacks %q; output:\n%s", want, indent(out))
		}
	}
	if took > 10*time.Second {
		t.Errorf("the loopback-GID refusal took %v (limit 10 s)", took.Round(time.Millisecond))
	}
	t.Logf("refused in %v (exit %d)", took.Round(time.Millisecond), code)
}

// TestDoctorPeerMTU: doctor HOST with netdev MTU 1500 here and 9000 on the
// peer (the wire's MTU): peer-mtu fails (exit 10); the guests have no PCIe
// device under rxe and no cpufreq: unknown, not pass.
func TestDoctorPeerMTU(t *testing.T) {
	b := newBed(t)
	b.startServer(t)
	ip := func(mtu string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, "ip", "link", "set", "eth0", "mtu", mtu).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip link set eth0 mtu %s: %v: %s", mtu, err, out)
		}
		return nil
	}
	if err := ip("1500"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ip("9000"); err != nil {
			t.Error(err)
		}
	})
	js := filepath.Join(t.TempDir(), "doctor.json")
	code, out, _ := b.run(t, 2*time.Minute, "doctor", b.peer.Addr, "--json", js)
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if regexp.MustCompile(`^  (mtu|peer-mtu|pcie-link|governor) |^Status`).MatchString(l) {
			lines = append(lines, l)
		}
	}
	t.Logf("%s", strings.Join(lines, "\n"))
	if code != 10 {
		t.Fatalf("doctor exit %d against a peer with MTU 9000 (1500 here), want 10; output:\n%s", code, indent(out))
	}
	var doc result.DoctorDocument
	decode(t, js, &doc)
	status := map[string]string{}
	for _, f := range doc.Findings {
		status[f.Check] = f.Status
	}
	for check, want := range map[string]string{"peer-mtu": "fail", "pcie-link": "unknown", "governor": "unknown"} {
		if status[check] != want {
			t.Errorf("doctor: %s is %q, want %q; output:\n%s", check, status[check], want, indent(out))
		}
	}
	if want := "RoCE MTU 1024 (eth0 MTU 1500) here, RoCE MTU 4096 (eth0 MTU 9000) at"; !strings.Contains(out, want) {
		t.Errorf("doctor's peer-mtu does not name both ends' MTUs (%q); output:\n%s", want, indent(out))
	}
	// Every port, rail by rail (both guests have the same devices): rxe2's
	// rail compares with the peer's rxe2, and its mtu warns with the fix.
	if !strings.Contains(out, "Paired with the server's ports rail by rail") {
		t.Errorf("doctor HOST did not pair the ports rail by rail; output:\n%s", indent(out))
	}
	found := false
	for _, p := range doc.Ports {
		if p.Local.Device != "rxe2" {
			continue
		}
		found = true
		st := map[string]result.DoctorFinding{}
		for _, f := range p.Findings {
			st[f.Check] = f
		}
		if p.Peer == nil || p.Peer.Device != "rxe2" || st["peer-mtu"].Status != "fail" ||
			st["mtu"].Status != "warn" || !strings.Contains(st["mtu"].Fix, "set eth0 MTU ≥ 4200 (jumbo frames) for a RoCE MTU of 4096") {
			t.Errorf("rxe2's rail: peer %+v, peer-mtu %+v, mtu %+v; want the peer's rxe2, fail, warn naming the fix", p.Peer, st["peer-mtu"], st["mtu"])
		}
	}
	if !found {
		t.Errorf("no rxe2 among the ports %+v", doc.Ports)
	}
}
