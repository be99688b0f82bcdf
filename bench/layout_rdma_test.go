package bench

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/device"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/server"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/internal/testutil"
	"github.com/rdmabench/rdmabench/verbs"
)

// Unusual device layouts, built by the tests themselves in the SoftRoCE
// guest (as root) and taken down when each test ends: a down device that
// sorts first, a VLAN netdev under rxe, an IPv6 control address.

// guestLayout runs setup (ip and rdma commands) and, when the test ends,
// undo in order. It changes the host's network, so it runs only where
// RDMABENCH_REQUIRE_RDMA=1 (the guest) and as root; elsewhere the test
// skips.
func guestLayout(t *testing.T, setup, undo [][]string) {
	t.Helper()
	guestOnly(t)
	t.Cleanup(func() {
		for _, c := range undo {
			if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
				t.Errorf("undo %v: %v: %s", c, err, out)
			}
		}
	})
	for _, c := range setup {
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", c, err, out)
		}
	}
}

// guestOnly skips a test that changes the host's network or kernel
// modules, unless it runs as root with RDMABENCH_REQUIRE_RDMA=1 (the guest).
func guestOnly(t *testing.T) {
	t.Helper()
	requireDevice(t)
	if !testutil.Required() || os.Geteuid() != 0 {
		t.Skipf("changes the network layout: only as root with %s=1 (the SoftRoCE guest)", testutil.RequireEnv)
	}
}

// guestModules inserts the kernel modules that the guest image lists in
// /etc/rdmabench-modules-NAME (the vmexec agent, internal/vm), in order, unless loaded.
func guestModules(t *testing.T, name string) {
	t.Helper()
	guestOnly(t)
	b, err := os.ReadFile("/etc/rdmabench-modules-" + name)
	if err != nil {
		t.Fatalf("the guest's %s modules: %v", name, err)
	}
	loaded, _ := os.ReadFile("/proc/modules")
	for _, m := range strings.Fields(string(b)) {
		mod := strings.TrimSuffix(filepath.Base(m), ".ko")
		if strings.Contains("\n"+string(loaded), "\n"+mod+" ") {
			continue
		}
		if out, err := exec.Command("insmod", m).CombinedOutput(); err != nil {
			t.Fatalf("insmod %s: %v: %s", m, err, out)
		}
	}
}

// waitGID waits (up to 3 s) until dev port 1's GID table holds addr.
func waitGID(t *testing.T, dev string, addr netip.Addr) {
	t.Helper()
	ctx, err := verbs.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		tbl, err := ctx.GIDTable(1)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(tbl, func(g verbs.GIDEntry) bool { return netip.AddrFrom16(g.GID).Unmap() == addr }) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's GID table has no %s after 3 s: %v", dev, addr, tbl)
		}
	}
}

// TestRDMADownDeviceFirst: rxa0, on a netdev that is down, sorts before
// rxe0. The server starts (on the first active port, saying that it
// skipped rxa0) and serves a client; loopback without -d runs, over
// rdma_cm too, and says why it chose its device; -d rxa0 fails clearly.
func TestRDMADownDeviceFirst(t *testing.T) {
	guestLayout(t, [][]string{{"ip", "link", "add", "dummy9", "type", "dummy"}, {"rdma", "link", "add", "rxa0", "type", "rxe", "netdev", "dummy9"}},
		[][]string{{"rdma", "link", "delete", "rxa0"}, {"ip", "link", "delete", "dummy9"}})
	if names, err := verbs.DeviceNames(); err != nil || names[0] != "rxa0" {
		t.Fatalf("devices %v (%v), want rxa0 first", names, err)
	}

	srv, err := server.New(server.Config{GIDIndex: -1, Log: testLog(t)})
	if err != nil {
		t.Fatalf("server at start: %v", err)
	}
	if d := srv.Device(); d.Ctx.Name() == "rxa0" || !strings.Contains(d.Reason, "skipped rxa0 port 1 is PORT_DOWN") {
		t.Errorf("server at start: %s (%q), want an active device and rxa0 skipped", d.Ctx.Name(), d.Reason)
	}
	srv.Close()

	specs := plan(t, spec.Plan{Ops: []string{result.OpSend}, Modes: []string{result.ModeLat}, Template: spec.Spec{Iters: 200}})
	cfg := runCfg(specs)
	doc, err := RunClient(context.Background(), startServerOn(t, "127.0.0.1"), cfg)
	if err != nil {
		t.Fatalf("a client of the server: %v", err)
	}
	checkDoc(t, doc, specs)
	if s := doc.ServerEnv; s == nil || s.Device != "rxe0" || !strings.Contains(s.DeviceReason, "by route: rxe0") {
		t.Errorf("server environment %+v, want rxe0 by route", s)
	}

	// (over rdma_cm in internal/e2e, TestDownDeviceFirst: librdmacm keeps every device
	// open until the process exits, and rxa0 could not be deleted)
	c := runCfg(specs)
	c.Client.Port = 0
	doc, err = RunLoopback(context.Background(), c, testLog(t))
	if err != nil {
		t.Fatalf("loopback: %v", err)
	}
	checkDoc(t, doc, specs)
	if e := doc.Env; e.Device != "rxe0" || !strings.Contains(e.DeviceReason, "by route: rxe0") {
		t.Errorf("loopback: device %s (%q), want rxe0 by route", e.Device, e.DeviceReason)
	}

	for _, port := range []int{1, 0} {
		_, err := server.New(server.Config{Device: "rxa0", Port: port, GIDIndex: -1, Log: testLog(t)})
		if !errors.Is(err, device.ErrPortNotActive) || !strings.Contains(err.Error(), "rxa0 port 1 is PORT_DOWN") {
			t.Errorf("server -d rxa0 (port %d): %v, want %v naming rxa0 port 1", port, err, device.ErrPortNotActive)
		}
	}
}

// TestRDMAVLANGID: a VLAN netdev on rxe1's dummy0 adds its GIDs to rxe1's
// table; a control connection over the VLAN's address takes rxe1 by route
// and the VLAN's GID on both sides.
func TestRDMAVLANGID(t *testing.T) {
	const ip = "198.51.100.250"
	guestModules(t, "vlan")
	guestLayout(t, [][]string{{"ip", "link", "add", "link", "dummy0", "name", "dummy0.10", "type", "vlan", "id", "10"},
		{"ip", "addr", "add", ip + "/32", "dev", "dummy0.10"}, {"ip", "link", "set", "dummy0.10", "up"}},
		[][]string{{"ip", "link", "delete", "dummy0.10"}})
	waitGID(t, "rxe1", netip.MustParseAddr(ip))
	specs := plan(t, spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeLat}, Template: spec.Spec{Iters: 200}})
	cfg := runCfg(specs)
	doc, err := RunClient(context.Background(), startServerOn(t, ip), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []*result.Env{&doc.Env, doc.ServerEnv} {
		if e == nil || e.Device != "rxe1" || e.GID != "::ffff:"+ip || e.Netdev != "dummy0.10" || !strings.Contains(e.DeviceReason, "by route: rxe1") {
			t.Errorf("environment %+v, want rxe1 by route, GID ::ffff:%s on dummy0.10", e, ip)
			continue
		}
		t.Logf("%s, GID %d %s on %s (%s)", e.DeviceReason, e.GIDIndex, e.GID, e.Netdev, e.GIDReason)
	}
}

// TestRDMAIPv6Control: control connections over IPv6 take a global GID,
// never a link-local one. Over 2001:db8:8::1 on dummy8, which has no RDMA
// device, with -d rxe1 on both sides: rxe1's table holds no GID of that
// address or family, and the IPv4-mapped ::ffff:192.0.2.1 wins over the
// link-local fe80:: GID. Then over 2001:db8::1 on dummy0: rxe1 by route,
// and that GID.
func TestRDMAIPv6Control(t *testing.T) {
	const ip, other = "2001:db8::1", "2001:db8:8::1"
	// first dummy8 alone: rxe1 has no global IPv6 GID yet
	guestLayout(t, [][]string{{"ip", "link", "add", "dummy8", "type", "dummy"}, {"ip", "link", "set", "dummy8", "up"},
		{"ip", "-6", "addr", "add", other + "/64", "dev", "dummy8"}},
		[][]string{{"ip", "link", "delete", "dummy8"}})
	for i, tc := range []struct{ ip, dev, gid string }{{other, "rxe1", "::ffff:192.0.2.1"}, {ip, "", ip}} {
		if i == 1 {
			guestLayout(t, [][]string{{"ip", "-6", "addr", "add", ip + "/64", "dev", "dummy0"}},
				[][]string{{"ip", "-6", "addr", "delete", ip + "/64", "dev", "dummy0"}})
			waitGID(t, "rxe1", netip.MustParseAddr(ip))
		}
		specs := plan(t, spec.Plan{Ops: []string{result.OpWrite}, Modes: []string{result.ModeLat}, Template: spec.Spec{Iters: 200}})
		cfg := runCfg(specs)
		cfg.Client.Device = tc.dev
		doc, err := RunClient(context.Background(), startServerOnDevice(t, tc.ip, tc.dev), cfg)
		if err != nil {
			t.Fatalf("over %s: %v", tc.ip, err)
		}
		for _, e := range []*result.Env{&doc.Env, doc.ServerEnv} {
			if e == nil || e.Device != "rxe1" || e.GID != tc.gid {
				t.Errorf("over %s: environment %+v, want rxe1 with GID %s", tc.ip, e, tc.gid)
				continue
			}
			t.Logf("over %s: %s (%s), GID %d %s (%s)", tc.ip, e.Device, e.DeviceReason, e.GIDIndex, e.GID, e.GIDReason)
		}
	}
}
