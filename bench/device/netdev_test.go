package device

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/hostenv"
	"github.com/rdmabench/rdmabench/verbs"
)

// fakeSysfs builds a sysfs tree under a temporary root, as the kernel lays
// it out: class/net/<if> links to the netdev's directory under devices/;
// a netdev of an RDMA NIC has a device link to its PCI function, whose
// infiniband/ lists the RDMA device, and dev_port (0-based); an upper
// netdev (VLAN) has lower_<if> links.
func fakeSysfs(t *testing.T) string {
	root := t.TempDir()
	mk := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ln := func(target, p string) {
		if err := os.Symlink(target, filepath.Join(root, p)); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, v string) {
		if err := os.WriteFile(filepath.Join(root, p), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk("class/net")
	// netdev name, PCI function, RDMA device, dev_port ("" = none)
	for _, n := range []struct{ ifc, pci, dev, devPort string }{
		{"ib0", "0000:03:00.0", "mlx5_1", "0"},  // IPoIB on a one-port function
		{"ib1", "0000:04:00.0", "mlx4_0", "0"},  // IPoIB, mlx4 port 1
		{"ib2", "0000:04:00.0", "mlx4_0", "1"},  // IPoIB, mlx4 port 2
		{"eth0", "0000:05:00.0", "mlx5_2", "0"}, // hardware RoCE
		{"eth1", "0000:06:00.0", "cxgb4_0", ""}, // no dev_port: port 1
		{"dummy0", "", "", ""},                  // a virtual netdev (rxe's)
	} {
		dir := "devices/virtual/net/" + n.ifc
		if n.pci != "" {
			dir = "devices/pci0000:00/" + n.pci + "/net/" + n.ifc
			mk("devices/pci0000:00/" + n.pci + "/infiniband/" + n.dev)
			mk(dir)
			ln("../..", dir+"/device")
		}
		mk(dir)
		if n.devPort != "" {
			write(dir+"/dev_port", n.devPort)
		}
		ln("../../"+dir, "class/net/"+n.ifc)
	}
	// VLANs: eth0.10 on eth0 (hardware RoCE), dummy0.10 on dummy0 (rxe)
	for _, v := range [][2]string{{"eth0.10", "eth0"}, {"dummy0.10", "dummy0"}} {
		dir := "devices/virtual/net/" + v[0]
		mk(dir)
		ln("../"+v[1], dir+"/lower_"+v[1])
		write(dir+"/dev_port", "0")
		ln("../../"+dir, "class/net/"+v[0])
	}
	return root
}

func TestNetdevPort(t *testing.T) {
	root := fakeSysfs(t)
	for _, tc := range []struct {
		ifc, dev string
		port     int
		via      string
	}{
		{"ib0", "mlx5_1", 1, "ib0"},
		{"ib1", "mlx4_0", 1, "ib1"},
		{"ib2", "mlx4_0", 2, "ib2"},
		{"eth0.10", "mlx5_2", 1, "eth0"},
		{"eth1", "cxgb4_0", 1, "eth1"},
		{"dummy0", "", 0, ""},
		{"dummy0.10", "", 0, ""},
		{"nosuch", "", 0, ""},
	} {
		dev, port, via, ok := hostenv.NetdevPort(root, tc.ifc)
		if dev != tc.dev || port != tc.port || via != tc.via || ok != (tc.dev != "") {
			t.Errorf("netdevPort(%s) = %s %d via %s, %v; want %s %d via %s", tc.ifc, dev, port, via, ok, tc.dev, tc.port, tc.via)
		}
	}
	if got := hostenv.LowerNetdevs(root, "dummy0.10"); len(got) != 1 || got[0] != "dummy0" {
		t.Errorf("lowerNetdevs(dummy0.10) = %v", got)
	}
}

func TestChoosePort(t *testing.T) {
	root := fakeSysfs(t)
	gid := func(i int, s string, typ verbs.GIDType, ndev string) verbs.GIDEntry {
		return verbs.GIDEntry{Index: i, GID: verbs.GID(netip.MustParseAddr(s).As16()), Type: typ, Netdev: ndev}
	}
	ips := func(ss ...string) []netip.Addr {
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out
	}
	port := func(dev string, p int, active bool, gids ...verbs.GIDEntry) portView {
		v := portView{Device: dev, Port: p, Active: active, State: "PORT_ACTIVE", GIDs: gids}
		if !active {
			v.State = "PORT_DOWN"
		}
		for _, g := range gids {
			if g.Type != verbs.GIDTypeIB {
				v.Addrs = append(v.Addrs, netip.AddrFrom16(g.GID))
			}
		}
		return v
	}
	v2 := verbs.GIDTypeRoCEv2
	// the guest's layout, with a down rxa0 sorting first
	rxa0 := port("rxa0", 1, false)
	rxe0 := port("rxe0", 1, true, gid(0, "fe80::1", v2, "lo"), gid(1, "::ffff:127.0.0.1", v2, "lo"))
	rxe1 := port("rxe1", 1, true, gid(0, "fe80::2", v2, "dummy0"), gid(1, "::ffff:192.0.2.1", v2, "dummy0"),
		gid(2, "::ffff:198.51.100.1", v2, "dummy0.10"), gid(3, "2001:db8::1", v2, "dummy0"))
	guest := []portView{rxa0, rxe0, rxe1}
	guestIfs := []netIface{{"lo", ips("127.0.0.1", "::1")}, {"dummy0", ips("192.0.2.1", "2001:db8::1", "2001:db8::2")},
		{"dummy0.10", ips("198.51.100.1", "2001:db8:10::1")}, {"dummy9", nil}}
	// InfiniBand: IB GIDs only; the addresses are on IPoIB netdevs
	ib := func(dev string, p int, active bool, guid string) portView {
		return port(dev, p, active, gid(0, "fe80::"+guid, verbs.GIDTypeIB, ""))
	}
	ibPorts := []portView{ib("mlx4_0", 1, true, "2"), ib("mlx4_0", 2, true, "3"), ib("mlx5_0", 1, false, "4"), ib("mlx5_1", 1, true, "5")}
	ibIfs := []netIface{{"ib0", ips("192.0.2.10")}, {"ib1", ips("192.0.2.11")}, {"ib2", ips("192.0.2.12", "2001:db8::12")}}
	// hardware RoCE on eth0 with a VLAN whose IPv6 GID is not (yet) in the table
	roce := []portView{port("mlx5_2", 1, true, gid(0, "fe80::6", v2, "eth0"), gid(1, "::ffff:192.0.2.20", v2, "eth0"))}
	roceIfs := []netIface{{"eth0", ips("192.0.2.20")}, {"eth0.10", ips("198.51.100.20", "2001:db8:10::20")}}

	tests := []struct {
		name    string
		ports   []portView
		ifaces  []netIface
		local   string // "" = none (the server at start)
		dev     string
		port    int
		route   bool
		reason  []string // substrings of the reason
		wantErr string
	}{
		{"down device first, loopback", guest, guestIfs, "127.0.0.1", "rxe0", 1, true, []string{"by route: rxe0 port 1 holds 127.0.0.1"}, ""},
		{"down device first, no address", guest, guestIfs, "", "rxe0", 1, false, []string{"the first active port, rxe0 port 1", "skipped rxa0 port 1 is PORT_DOWN"}, ""},
		{"down device first, unknown address", guest, guestIfs, "203.0.113.9", "rxe0", 1, false, []string{"no active port carries 203.0.113.9", "skipped rxa0"}, ""},
		{"rxe on dummy0", guest, guestIfs, "192.0.2.1", "rxe1", 1, true, []string{"holds 192.0.2.1"}, ""},
		{"VLAN GID on rxe", guest, guestIfs, "198.51.100.1", "rxe1", 1, true, []string{"holds 198.51.100.1"}, ""},
		{"IPv6 GID", guest, guestIfs, "2001:db8::1", "rxe1", 1, true, []string{"holds 2001:db8::1"}, ""},
		{"IPv6 address not in the GID table", guest, guestIfs, "2001:db8::2", "rxe1", 1, true, []string{"has GIDs on netdev dummy0"}, ""},
		{"VLAN address not in the GID table", guest, guestIfs, "2001:db8:10::1", "rxe1", 1, true, []string{"netdev dummy0.10 over dummy0"}, ""},
		{"IPoIB", ibPorts, ibIfs, "192.0.2.10", "mlx5_1", 1, true, []string{"mlx5_1 port 1 lies under netdev ib0, which carries 192.0.2.10"}, ""},
		{"IPoIB, multi-port, port 1", ibPorts, ibIfs, "192.0.2.11", "mlx4_0", 1, true, []string{"under netdev ib1"}, ""},
		{"IPoIB, multi-port, port 2", ibPorts, ibIfs, "192.0.2.12", "mlx4_0", 2, true, []string{"mlx4_0 port 2 lies under netdev ib2"}, ""},
		{"IPoIB over IPv6", ibPorts, ibIfs, "2001:db8::12", "mlx4_0", 2, true, []string{"carries 2001:db8::12"}, ""},
		{"IPoIB on a down port", []portView{ibPorts[0], ib("mlx4_0", 2, false, "3")}, ibIfs, "192.0.2.12", "mlx4_0", 1, false,
			[]string{"the first active port, mlx4_0 port 1", "mlx4_0 port 2 lies under netdev ib2, which carries 192.0.2.12 but is PORT_DOWN"}, ""},
		{"RoCE VLAN through its lower netdev", roce, roceIfs, "2001:db8:10::20", "mlx5_2", 1, true, []string{"under netdev eth0.10 (through eth0)"}, ""},
		{"RoCE VLAN GID missing, IPv4", roce, roceIfs, "198.51.100.20", "mlx5_2", 1, true, []string{"by route: mlx5_2 port 1"}, ""},
		{"no active port", []portView{rxa0, port("rxa1", 1, false)}, guestIfs, "127.0.0.1", "", 0, false, nil, "rxa0 port 1 is PORT_DOWN, rxa1 port 1 is PORT_DOWN"},
		{"no ports", nil, guestIfs, "", "", 0, false, nil, "no RDMA device port"},
	}
	for _, tc := range tests {
		var local netip.Addr
		if tc.local != "" {
			local = netip.MustParseAddr(tc.local)
		}
		c, err := choosePort(tc.ports, local, tc.ifaces, root)
		if tc.wantErr != "" {
			if !errors.Is(err, ErrPortNotActive) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err %v, want ErrPortNotActive with %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if c.Device != tc.dev || c.Port != tc.port || c.ByRoute != tc.route {
			t.Errorf("%s: %s port %d (by route %v, %q), want %s port %d (by route %v)", tc.name, c.Device, c.Port, c.ByRoute, c.Reason, tc.dev, tc.port, tc.route)
		}
		for _, r := range tc.reason {
			if !strings.Contains(c.Reason, r) {
				t.Errorf("%s: reason %q lacks %q", tc.name, c.Reason, r)
			}
		}
	}
}
