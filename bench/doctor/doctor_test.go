package doctor

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

// A fake host: a sysfs and /proc tree (files, symlinks) and the answers
// of the tools, addresses and memlock. good() is a well-set RoCE host
// with an mlx5-like device; each case changes it.

const (
	dev    = "sys/class/infiniband/mlx5_0"
	port   = dev + "/ports/1"
	pciDev = "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0"
	bridge = "sys/devices/pci0000:00/0000:00:01.0"
	netd   = "sys/class/net/eth0"
)

type fake struct {
	files     map[string]string // path under the root → content
	links     map[string]string // path → symlink target
	activeMTU int
	maxMTU    int // 0: unknown
	addrs     []netip.Addr
	addrsErr  error
	tools     map[string]string // "dcb", "mlnx_qos", "ethtool" → output; absent: not installed
	toolErr   map[string]bool   // the tool ran and failed
	soft      int64
	memErr    error
	device    string
}

// deviceConfig is a PCI config space of n bytes whose PCIe capability at
// 0x40 has DevCtl devctl.
func deviceConfig(n int, devctl uint16) string {
	b := make([]byte, n)
	binary.LittleEndian.PutUint16(b[cfgStatus:], cfgStatusCaps)
	b[cfgCapPtr] = 0x40
	if n >= 0x50 {
		b[0x40], b[0x41] = capIDPCIe, 0
		binary.LittleEndian.PutUint16(b[0x40+pcieDevCtl:], devctl)
	}
	return string(b)
}

// bridgeConfig is a bridge's config space of n bytes with an ACS
// capability at 0x100 whose control register is ctl.
func bridgeConfig(n int, ctl uint16) string {
	b := make([]byte, n)
	if n >= 0x108 {
		binary.LittleEndian.PutUint32(b[0x100:], 0x0001_0000|extCapIDACS)
		binary.LittleEndian.PutUint16(b[0x100+acsCtl:], ctl)
	}
	return string(b)
}

func good() *fake {
	f := &fake{
		files: map[string]string{
			dev + "/fw_ver":                                        "22.36.1010",
			dev + "/node_type":                                     "1: CA",
			port + "/state":                                        "4: ACTIVE",
			port + "/phys_state":                                   "5: LinkUp",
			port + "/link_layer":                                   "Ethernet",
			port + "/rate":                                         "100 Gb/sec (4X EDR)",
			port + "/gids/0":                                       "fe80:0000:0000:0000:0202:c9ff:fe00:0001",
			port + "/gids/1":                                       "0000:0000:0000:0000:0000:ffff:c000:0201",
			port + "/gids/2":                                       "0000:0000:0000:0000:0000:0000:0000:0000",
			port + "/gid_attrs/types/0":                            "RoCE v2",
			port + "/gid_attrs/types/1":                            "RoCE v2",
			port + "/gid_attrs/ndevs/0":                            "eth0",
			port + "/gid_attrs/ndevs/1":                            "eth0",
			pciDev + "/current_link_speed":                         "16.0 GT/s PCIe",
			pciDev + "/max_link_speed":                             "16.0 GT/s PCIe",
			pciDev + "/current_link_width":                         "16",
			pciDev + "/max_link_width":                             "16",
			pciDev + "/numa_node":                                  "0",
			pciDev + "/local_cpulist":                              "0-3",
			pciDev + "/msi_irqs/40":                                "msix",
			pciDev + "/msi_irqs/41":                                "msix",
			pciDev + "/config":                                     deviceConfig(256, 0x2810),
			bridge + "/config":                                     bridgeConfig(4096, 0),
			netd + "/mtu":                                          "9000",
			netd + "/ecn/roce_np/enable/0":                         "0",
			netd + "/ecn/roce_np/enable/3":                         "1",
			netd + "/ecn/roce_rp/enable/0":                         "0",
			netd + "/ecn/roce_rp/enable/3":                         "1",
			"proc/irq/40/smp_affinity_list":                        "1",
			"proc/irq/41/effective_affinity_list":                  "2",
			"proc/irq/41/smp_affinity_list":                        "0-7",
			"proc/self/status":                                     "Name:\trdmabench\nCapEff:\t0000000000000000\n",
			"sys/devices/system/node/online":                       "0-1",
			"sys/devices/system/cpu/cpu0/cpufreq/scaling_governor": "performance",
			"sys/devices/system/cpu/cpu1/cpufreq/scaling_governor": "performance",
		},
		links:     map[string]string{dev + "/device": "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0"},
		activeMTU: 4096,
		addrs:     []netip.Addr{netip.MustParseAddr("192.0.2.1")},
		tools: map[string]string{
			"dcb":     "pfc-cap 8 macsec-bypass off delay 0\nprio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off\n",
			"ethtool": "NIC statistics:\n     rx_packets: 100\n     rx_pause_ctrl_phy: 0\n     tx_pause_ctrl_phy: 0\n",
		},
		toolErr: map[string]bool{},
		soft:    -1,
		device:  "mlx5_0",
	}
	return f
}

// rxe is a software RoCE device over eth0 in a VM: no PCI device, no
// cpufreq, no DCB, no ethtool.
func rxe() *fake {
	f := &fake{
		files: map[string]string{
			"sys/class/infiniband/rxe0/node_type":                 "1: CA",
			"sys/class/infiniband/rxe0/parent":                    "eth0",
			"sys/class/infiniband/rxe0/ports/1/state":             "4: ACTIVE",
			"sys/class/infiniband/rxe0/ports/1/phys_state":        "5: LinkUp",
			"sys/class/infiniband/rxe0/ports/1/link_layer":        "Ethernet",
			"sys/class/infiniband/rxe0/ports/1/rate":              "10 Gb/sec (1X QDR)",
			"sys/class/infiniband/rxe0/ports/1/gids/1":            "0000:0000:0000:0000:0000:ffff:c633:6402",
			"sys/class/infiniband/rxe0/ports/1/gid_attrs/types/1": "RoCE v2",
			netd + "/mtu":      "1500",
			"proc/self/status": "CapEff:\t000001ffffffffff\n",
			"sys/devices/system/cpu/cpu0/topology/core_id": "0",
			"sys/devices/system/node/online":               "0",
		},
		activeMTU: 1024,
		addrs:     []netip.Addr{netip.MustParseAddr("198.51.100.2")},
		tools:     map[string]string{"dcb": "Error: Attribute failed policy validation.\n"},
		toolErr:   map[string]bool{"dcb": true},
		soft:      8 << 20,
		device:    "rxe0",
	}
	return f
}

func (f *fake) clone() *fake {
	g := *f
	g.files, g.links, g.tools, g.toolErr = maps.Clone(f.files), maps.Clone(f.links), maps.Clone(f.tools), maps.Clone(f.toolErr)
	return &g
}

// input writes the tree under a temporary root.
func (f *fake) input(t *testing.T) Input {
	t.Helper()
	root := t.TempDir()
	for p, c := range f.files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for p, target := range f.links {
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		os.MkdirAll(filepath.Join(filepath.Dir(full), target), 0o755)
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
	}
	return Input{
		Root: root, Host: "h", Device: f.device, Port: 1, ActiveMTU: f.activeMTU, MaxMTU: f.maxMTU,
		Memlock: func() (int64, int64, error) { return f.soft, -1, f.memErr },
		Addrs: func(nd string) ([]netip.Addr, error) {
			if nd != "eth0" {
				return nil, fmt.Errorf("no netdev %s", nd)
			}
			return f.addrs, f.addrsErr
		},
		Tool: func(name string, args ...string) ([]byte, error) {
			out, ok := f.tools[name]
			if !ok {
				return nil, fmt.Errorf("exec: %q: %w", name, exec.ErrNotFound)
			}
			if f.toolErr[name] {
				return []byte(out), errors.New("exit status 1")
			}
			return []byte(out), nil
		},
	}
}

func find(fs []result.DoctorFinding, name string) (result.DoctorFinding, bool) {
	for _, f := range fs {
		if f.Check == name {
			return f, true
		}
	}
	return result.DoctorFinding{}, false
}

type checkCase struct {
	check, name string
	base        func() *fake
	change      func(f *fake)
	want        string // status
	detail      string // a substring of the detail (or the fix, with "fix:")
}

var checkCases = []checkCase{
	{"port-state", "active", good, nil, pass, "4: ACTIVE, phys_state 5: LinkUp"},
	{"port-state", "down", good, func(f *fake) { f.files[port+"/state"], f.files[port+"/phys_state"] = "1: DOWN", "3: Disabled" }, fail, "fix:ip link set dev eth0 up"},
	{"port-state", "ib no SM", good, func(f *fake) { f.files[port+"/state"], f.files[port+"/link_layer"] = "2: INIT", "InfiniBand" }, fail, "fix:opensm"},
	{"port-state", "unreadable", good, func(f *fake) { delete(f.files, port+"/state") }, unknown, "not readable"},
	{"port-state", "no device", good, func(f *fake) { f.device = "" }, unknown, "no RDMA device"},

	{"mtu", "jumbo", good, nil, pass, "RoCE MTU 4096, eth0 MTU 9000"},
	{"mtu", "rxe 1500", rxe, nil, pass, "rxe0 port 1: RoCE MTU 1024, eth0 MTU 1500"},
	{"mtu", "rxe 1500 below its max", rxe, func(f *fake) { f.maxMTU = 4096 }, warn, "fix:set eth0 MTU ≥ 4200 (jumbo frames) for a RoCE MTU of 4096"},
	{"mtu", "rxe 1500 below its max detail", rxe, func(f *fake) { f.maxMTU = 4096 }, warn, "the port can run RoCE MTU 4096, but eth0's MTU 1500 holds only 1024"},
	{"mtu", "rxe 1500 at its max", rxe, func(f *fake) { f.maxMTU = 1024 }, pass, "RoCE MTU 1024, eth0 MTU 1500"},
	{"mtu", "2048 of 4096", good, func(f *fake) { f.files[netd+"/mtu"], f.activeMTU, f.maxMTU = "2500", 2048, 4096 }, warn, "fix:set eth0 MTU ≥ 4200"},
	{"mtu", "port below, netdev big enough", good, func(f *fake) { f.activeMTU, f.maxMTU = 1024, 4096 }, pass, "(the netdev would carry RoCE MTU 4096;"},
	{"mtu", "port below the netdev", good, func(f *fake) { f.activeMTU = 1024 }, pass, "(the netdev would carry RoCE MTU 4096;"},
	{"mtu", "netdev too small", good, func(f *fake) { f.files[netd+"/mtu"] = "4096" }, fail, "needs 4180"},
	{"mtu", "active unknown", good, func(f *fake) { f.activeMTU = 0 }, unknown, "active MTU not known"},
	{"mtu", "netdev mtu unreadable", good, func(f *fake) { delete(f.files, netd+"/mtu") }, unknown, "MTU is not known"},
	{"mtu", "infiniband", good, func(f *fake) { f.files[port+"/link_layer"] = "InfiniBand" }, pass, "not applicable"},
	{"mtu", "iwarp", good, func(f *fake) { f.files[dev+"/node_type"] = "4: RNIC" }, pass, "is iWARP"},
	{"mtu", "no link layer", good, func(f *fake) { delete(f.files, port+"/link_layer") }, unknown, "link layer not readable"},

	{"roce-gid", "present", good, nil, pass, "192.0.2.1 (GID 1)"},
	{"roce-gid", "missing", good, func(f *fake) { f.addrs = append(f.addrs, netip.MustParseAddr("192.0.2.9")) }, fail, "no RoCE v2 GID for 192.0.2.9"},
	{"roce-gid", "v1 only", good, func(f *fake) { f.files[port+"/gid_attrs/types/1"] = "IB/RoCE v1" }, fail, "no RoCE v2 GID for 192.0.2.1"},
	{"roce-gid", "other netdev", good, func(f *fake) { f.files[port+"/gid_attrs/ndevs/1"] = "eth0.100" }, fail, "192.0.2.1"},
	{"roce-gid", "ipv6", good, func(f *fake) { f.addrs = []netip.Addr{netip.MustParseAddr("fe80::202:c9ff:fe00:1")} }, pass, "GID 0"},
	{"roce-gid", "no address", good, func(f *fake) { f.addrs = nil }, fail, "no IP address"},
	{"roce-gid", "addresses unreadable", good, func(f *fake) { f.addrsErr = errors.New("netlink: EPERM") }, unknown, "EPERM"},
	{"roce-gid", "rxe by parent", rxe, nil, pass, "198.51.100.2 (GID 1)"},

	{"pfc", "dcb on 3", good, nil, pass, "PFC on priority 3 of eth0"},
	{"pfc", "dcb off", good, func(f *fake) { f.tools["dcb"] = "prio-pfc 0:off 1:off 2:off 3:off\n" }, warn, "off on every priority"},
	{"pfc", "mlnx_qos", good, func(f *fake) {
		delete(f.tools, "dcb")
		f.tools["mlnx_qos"] = "DCBX mode: OS controlled\nPFC configuration:\n\tpriority    0   1   2   3   4   5   6   7\n\tenabled     0   0   0   1   1   0   0   0\n"
	}, pass, "priority 3,4"},
	{"pfc", "no tools", good, func(f *fake) { delete(f.tools, "dcb") }, unknown, "dcb not installed; mlnx_qos not installed"},
	{"pfc", "not supported", rxe, nil, unknown, "dcb: Error: Attribute failed policy validation."},
	{"pfc", "siw by MAC", good, func(f *fake) {
		f.files[dev+"/node_type"] = "4: RNIC"
		f.files[port+"/gids/0"] = "5254:0012:3456:0000:0000:0000:0000:0000"
		f.files["sys/class/net/eth1/address"] = "52:54:00:12:34:56"
		for _, p := range []string{"/gid_attrs/ndevs/0", "/gid_attrs/ndevs/1", "/gids/1"} {
			delete(f.files, port+p)
		}
	}, pass, "PFC on priority 3 of eth1"},
	{"pfc", "no netdev", good, func(f *fake) { delete(f.files, port+"/gid_attrs/ndevs/0"); delete(f.files, port+"/gid_attrs/ndevs/1") }, unknown, "netdev under the RDMA port is not known"},

	{"pause", "none", good, nil, pass, "no pause frames (2 counters)"},
	{"pause", "pausing", good, func(f *fake) { f.tools["ethtool"] = "rx_pause_ctrl_phy: 12\ntx_pause_ctrl_phy: 0\nrx_prio3_pause: 5\n" }, warn, "rx_pause_ctrl_phy 12, rx_prio3_pause 5"},
	{"pause", "storm", good, func(f *fake) { f.tools["ethtool"] = "rx_pause_ctrl_phy: 12\ntx_pause_storm_warning_events: 3\n" }, fail, "tx_pause_storm_warning_events 3"},
	{"pause", "no ethtool", rxe, nil, unknown, "ethtool not installed"},
	{"pause", "no counters", good, func(f *fake) { f.tools["ethtool"] = "rx_packets: 1\n" }, unknown, "no pause counters"},

	{"ecn", "dcqcn on 3", good, nil, pass, "notification point on priority 3, reaction point on 3"},
	{"ecn", "off", good, func(f *fake) { f.files[netd+"/ecn/roce_np/enable/3"] = "0" }, warn, "notification point on priority none"},
	{"ecn", "no sysfs", rxe, nil, unknown, "no ecn/roce_np"},

	{"irq-numa", "local", good, nil, pass, "all 2 IRQs on the node's CPUs 0-3"},
	{"irq-numa", "far", good, func(f *fake) { f.files["proc/irq/41/effective_affinity_list"] = "8-11" }, warn, "1 of 2 IRQs bound only to other nodes' CPUs: 41"},
	{"irq-numa", "one node", good, func(f *fake) { f.files[pciDev+"/numa_node"], f.files["sys/devices/system/node/online"] = "-1", "0" }, pass, "one NUMA node"},
	{"irq-numa", "node unknown", good, func(f *fake) { f.files[pciDev+"/numa_node"] = "-1" }, unknown, "numa_node is -1"},
	{"irq-numa", "no msi", good, func(f *fake) { delete(f.files, pciDev+"/msi_irqs/40"); delete(f.files, pciDev+"/msi_irqs/41") }, unknown, "no msi_irqs"},
	{"irq-numa", "affinity unreadable", good, func(f *fake) {
		for _, p := range []string{"proc/irq/40/smp_affinity_list", "proc/irq/41/effective_affinity_list", "proc/irq/41/smp_affinity_list"} {
			delete(f.files, p)
		}
	}, unknown, "no IRQ affinity readable"},
	{"irq-numa", "software", rxe, nil, unknown, "no PCI device"},

	{"pcie-link", "full", good, nil, pass, "16.0 GT/s PCIe x16, capable of 16.0 GT/s PCIe x16"},
	{"pcie-link", "narrow", good, func(f *fake) { f.files[pciDev+"/current_link_width"] = "8" }, fail, "fewer lanes"},
	{"pcie-link", "slow", good, func(f *fake) { f.files[pciDev+"/current_link_speed"] = "8.0 GT/s PCIe" }, warn, "lower speed"},
	{"pcie-link", "unknown speed", good, func(f *fake) { f.files[pciDev+"/current_link_speed"] = "Unknown" }, unknown, "not readable"},
	{"pcie-link", "no files", good, func(f *fake) { delete(f.files, pciDev+"/max_link_width") }, unknown, "not readable"},
	{"pcie-link", "software", rxe, nil, unknown, "rxe0 has no PCI device"},

	{"relaxed-ordering", "on", good, nil, pass, "enabled in DevCtl (0x2810)"},
	{"relaxed-ordering", "off", good, func(f *fake) { f.files[pciDev+"/config"] = deviceConfig(256, 0x2800) }, warn, "disabled"},
	{"relaxed-ordering", "64 bytes (no root)", good, func(f *fake) { f.files[pciDev+"/config"] = deviceConfig(64, 0x2810) }, unknown, "beyond the 64 bytes"},
	{"relaxed-ordering", "no config", good, func(f *fake) { delete(f.files, pciDev+"/config") }, unknown, "config space"},
	{"relaxed-ordering", "software", rxe, nil, unknown, "no PCI device"},

	{"acs", "no redirect", good, nil, pass, "no ACS redirection on the bridges above 0000:01:00.0: 0000:00:01.0"},
	{"acs", "redirect", good, func(f *fake) { f.files[bridge+"/config"] = bridgeConfig(4096, 0x1d) }, warn, "0000:00:01.0 (ACSCtl 0x001d)"},
	{"acs", "no root", good, func(f *fake) { f.files[bridge+"/config"] = bridgeConfig(64, 0) }, unknown, "not readable: 0000:00:01.0"},
	{"acs", "no ACS capability", good, func(f *fake) { f.files[bridge+"/config"] = string(make([]byte, 4096)) }, pass, "no ACS redirection"},
	{"acs", "software", rxe, nil, unknown, "no PCI device"},

	{"memlock", "unlimited", good, nil, pass, "RLIMIT_MEMLOCK unlimited"},
	{"memlock", "8 MiB", good, func(f *fake) { f.soft = 8 << 20 }, warn, "RLIMIT_MEMLOCK 8 MiB (hard unlimited): registering more"},
	{"memlock", "8 MiB with CAP_IPC_LOCK", rxe, nil, pass, "CAP_IPC_LOCK"},
	{"memlock", "unreadable", good, func(f *fake) { f.memErr = errors.New("EPERM") }, unknown, "EPERM"},

	{"governor", "performance", good, nil, pass, "performance on all 2 CPUs"},
	{"governor", "powersave", good, func(f *fake) {
		f.files["sys/devices/system/cpu/cpu1/cpufreq/scaling_governor"] = "powersave"
	}, warn, "powersave on CPU 1 (of 2 CPUs)"},
	{"governor", "no cpufreq", rxe, nil, unknown, "no CPU has cpufreq"},
}

// TestNetdevMTUFor: the netdev MTU a RoCE MTU needs (the fix the mtu check
// names).
func TestNetdevMTUFor(t *testing.T) {
	for _, c := range []struct{ roce, want int }{{4096, 4200}, {2048, 2200}, {1024, 1200}, {512, 700}, {256, 400}} {
		if got := NetdevMTUFor(c.roce); got != c.want {
			t.Errorf("NetdevMTUFor(%d) = %d, want %d", c.roce, got, c.want)
		}
	}
}

func TestChecks(t *testing.T) {
	for _, c := range checkCases {
		t.Run(c.check+"/"+c.name, func(t *testing.T) {
			f := c.base().clone()
			if c.change != nil {
				c.change(f)
			}
			_, fs := Run(f.input(t))
			got, ok := find(fs, c.check)
			if !ok {
				t.Fatalf("no %s finding in %v", c.check, fs)
			}
			text, sub := got.Detail, c.detail
			if s, isFix := strings.CutPrefix(c.detail, "fix:"); isFix {
				text, sub = got.Fix, s
			}
			if got.Status != c.want || !strings.Contains(text, sub) {
				t.Errorf("%s = %s %q (fix %q), want %s with %q", c.check, got.Status, got.Detail, got.Fix, c.want, c.detail)
			}
			if (got.Status == pass) != (got.Fix == "") {
				t.Errorf("%s %s with fix %q: a fix belongs to every status but pass", c.check, got.Status, got.Fix)
			}
		})
	}
}

// TestEveryCheckTested checks that each check has a passing and an unknown
// case, and each case's check exists.
func TestEveryCheckTested(t *testing.T) {
	seen := map[string]map[string]bool{}
	for _, c := range checkCases {
		if seen[c.check] == nil {
			seen[c.check] = map[string]bool{}
		}
		seen[c.check][c.want] = true
	}
	for _, c := range checks {
		if !seen[c.name][pass] || !seen[c.name][unknown] {
			t.Errorf("check %s: cases for %v, want pass and unknown at least", c.name, seen[c.name])
		}
		delete(seen, c.name)
	}
	for name := range seen {
		t.Errorf("cases for %s, which is no check", name)
	}
}

// TestNothingReadablePassesNothing runs every check over an empty tree
// with nothing answering: no check may pass.
func TestNothingReadablePassesNothing(t *testing.T) {
	in := Input{Root: t.TempDir(), Device: "mlx5_0", Port: 1,
		Memlock: func() (int64, int64, error) { return 0, 0, errors.New("no") },
		Addrs:   func(string) ([]netip.Addr, error) { return nil, errors.New("no") },
		Tool:    func(string, ...string) ([]byte, error) { return nil, exec.ErrNotFound },
	}
	_, fs := Run(in)
	if len(fs) != len(checks) {
		t.Fatalf("%d findings, want %d", len(fs), len(checks))
	}
	for _, f := range fs {
		if f.Status != unknown {
			t.Errorf("%s: %s (%s) over an empty tree, want unknown", f.Check, f.Status, f.Detail)
		}
		if f.Fix == "" {
			t.Errorf("%s: unknown without a fix", f.Check)
		}
	}
}

func TestFacts(t *testing.T) {
	h, _ := Run(good().input(t))
	want := result.DoctorHost{Host: "h", Device: "mlx5_0", Port: 1, LinkLayer: "Ethernet", Netdev: "eth0", NetdevMTU: 9000, ActiveMTU: 4096,
		Firmware: "22.36.1010", Rate: "100 Gb/sec (4X EDR)", GIDTypes: []string{"RoCE v2"}, PCIeSpeed: "16.0 GT/s PCIe", PCIeWidth: "16"}
	if fmt.Sprint(h) != fmt.Sprint(want) {
		t.Errorf("facts\n %+v\nwant\n %+v", h, want)
	}
	r, _ := Run(rxe().input(t))
	if r.Netdev != "eth0" || r.NetdevMTU != 1500 || r.PCIeSpeed != "" {
		t.Errorf("rxe facts %+v", r)
	}
}

func TestCompare(t *testing.T) {
	base := result.DoctorHost{Host: "a", Device: "mlx5_0", LinkLayer: "Ethernet", Netdev: "eth0", NetdevMTU: 9000, ActiveMTU: 4096,
		Firmware: "22.36.1010", Rate: "100 Gb/sec (4X EDR)", GIDTypes: []string{"IB/RoCE v1", "RoCE v2"}, PCIeSpeed: "16.0 GT/s PCIe", PCIeWidth: "16"}
	for _, c := range []struct {
		name, check string
		change      func(l, r *result.DoctorHost)
		want        string
		detail      string
	}{
		{"same", "peer-mtu", nil, pass, "RoCE MTU 4096 (eth0 MTU 9000) here, RoCE MTU 4096 (eth0 MTU 9000) at B"},
		{"1500 vs 9000", "peer-mtu", func(l, r *result.DoctorHost) { l.NetdevMTU, l.ActiveMTU = 1500, 1024 }, fail, "the path runs at 1024"},
		{"1500 vs 9000 fix", "peer-mtu", func(l, r *result.DoctorHost) { l.NetdevMTU, l.ActiveMTU = 1500, 1024 }, fail, "fix:ip link set dev eth0 mtu 9000 on the end with 1500"},
		{"netdevs differ", "peer-mtu", func(l, r *result.DoctorHost) { r.NetdevMTU = 4200 }, warn, "the same RoCE MTU"},
		{"peer unknown", "peer-mtu", func(l, r *result.DoctorHost) { r.ActiveMTU = 0 }, unknown, "RoCE MTU ?"},
		{"same", "peer-firmware", nil, pass, `"22.36.1010" here`},
		{"differ", "peer-firmware", func(l, r *result.DoctorHost) { r.Firmware = "22.35.2000" }, warn, `"22.35.2000" at B`},
		{"software", "peer-firmware", func(l, r *result.DoctorHost) { l.Firmware, r.Firmware = "", "" }, unknown, "not reported"},
		{"same", "peer-gid-types", nil, pass, "[IB/RoCE v1, RoCE v2] here"},
		{"v2 on one end", "peer-gid-types", func(l, r *result.DoctorHost) { r.GIDTypes = []string{"IB/RoCE v1"} }, fail, "RoCE v2 on one end only"},
		{"v1 on one end", "peer-gid-types", func(l, r *result.DoctorHost) { r.GIDTypes = []string{"RoCE v2"} }, warn, "[RoCE v2] at B"},
		{"none", "peer-gid-types", func(l, r *result.DoctorHost) { l.GIDTypes = nil }, unknown, "not readable"},
		{"same", "peer-link-speed", nil, pass, "rate 100 Gb/sec (4X EDR), PCIe 16.0 GT/s PCIe x16 here"},
		{"rate", "peer-link-speed", func(l, r *result.DoctorHost) { r.Rate = "25 Gb/sec (1X EDR)" }, warn, "slower end"},
		{"pcie", "peer-link-speed", func(l, r *result.DoctorHost) { r.PCIeWidth = "8" }, warn, "PCIe links differ"},
		{"unknown", "peer-link-speed", func(l, r *result.DoctorHost) { r.Rate = "" }, unknown, "rate unknown, PCIe 16.0 GT/s PCIe x16 at B"},
	} {
		t.Run(c.check+"/"+c.name, func(t *testing.T) {
			l, r := base, base
			l.GIDTypes, r.GIDTypes = append([]string(nil), base.GIDTypes...), append([]string(nil), base.GIDTypes...)
			if c.change != nil {
				c.change(&l, &r)
			}
			fs := Compare(l, r, "B")
			if len(fs) != len(peerChecks) {
				t.Fatalf("%d findings", len(fs))
			}
			got, _ := find(fs, c.check)
			text, sub := got.Detail, c.detail
			if s, isFix := strings.CutPrefix(c.detail, "fix:"); isFix {
				text, sub = got.Fix, s
			}
			if got.Status != c.want || !strings.Contains(text, sub) {
				t.Errorf("%s = %s %q (fix %q), want %s with %q", c.check, got.Status, got.Detail, got.Fix, c.want, c.detail)
			}
		})
	}
}

// TestDocsDescribeEveryCheck keeps docs/doctor.md's sections in step with
// the checks.
func TestDocsDescribeEveryCheck(t *testing.T) {
	b, err := os.ReadFile("../../docs/doctor.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range Names() {
		if !strings.Contains(string(b), "\n### `"+name+"`\n") {
			t.Errorf("docs/doctor.md has no section ### `%s`", name)
		}
	}
}
