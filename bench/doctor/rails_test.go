package doctor

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rdmabench/rdmabench/bench/result"
)

func railPorts(host string, mtus ...int) []result.DoctorPort {
	var out []result.DoctorPort
	for i, m := range mtus {
		h := result.DoctorHost{Host: host, Device: []string{"mlx5_0", "mlx5_1", "mlx5_2"}[i], Port: 1, LinkLayer: "Ethernet",
			Netdev: "eth" + string(rune('0'+i)), NetdevMTU: m, ActiveMTU: 4096}
		if m < 4200 {
			h.ActiveMTU = 1024
		}
		out = append(out, result.DoctorPort{Rail: i, Local: h, Findings: []result.DoctorFinding{{Check: "mtu", Status: pass}}})
	}
	return out
}

// TestPairRails: as many ports on both hosts pairs rail i with rail i;
// otherwise only the port by route is compared.
func TestPairRails(t *testing.T) {
	for _, c := range []struct {
		name        string
		local, peer []result.DoctorPort
		pairing     string
		peerMTU     []string // each local port's peer-mtu status, "" none
	}{
		{"rails", railPorts("a", 9000, 9000), railPorts("b", 9000, 1500), "rail by rail", []string{pass, fail}},
		{"older server", railPorts("a", 9000, 9000), nil, "by route: mlx5_1 port 1 here with mlx5_1 port 1 at B (the server gave no ports", []string{"", fail}},
		{"fewer ports there", railPorts("a", 9000, 9000, 9000), railPorts("b", 9000, 1500), "2 at B: rails cannot be told", []string{"", fail, ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			routed := c.local[1].Local
			peer := railPorts("b", 9000, 1500)[1].Local
			got := PairRails(c.local, c.peer, routed, peer, nil, "B")
			if !strings.Contains(got, c.pairing) {
				t.Errorf("pairing %q, want %q", got, c.pairing)
			}
			for i, p := range c.local {
				f, ok := find(p.Findings, "peer-mtu")
				switch {
				case c.peerMTU[i] == "" && (ok || p.Peer != nil):
					t.Errorf("port %d compared (%+v) where rails cannot be told and it is not the port by route", i, f)
				case c.peerMTU[i] != "" && (!ok || f.Status != c.peerMTU[i] || p.Peer == nil):
					t.Errorf("port %d: peer-mtu %+v (peer %v), want %s", i, f, p.Peer, c.peerMTU[i])
				}
			}
		})
	}
}

// TestWriteReportPorts: one table per port, the ports counted by their
// worst finding, the failing ones named.
func TestWriteReportPorts(t *testing.T) {
	ports := railPorts("a", 9000, 1500, 9000)
	ports[1].Findings = append(ports[1].Findings, result.DoctorFinding{Check: "port-state", Status: fail, Detail: "mlx5_1 port 1: state 1: DOWN", Fix: "bring it up"})
	ports[2].Findings[0].Status = warn
	doc := &result.DoctorDocument{Local: ports[0].Local, Findings: ports[0].Findings, Ports: ports}
	var b bytes.Buffer
	if err := WriteReport(&b, doc, "every port", ""); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"This host: a (every port)\n",
		"\nRail 0: a, mlx5_0 port 1, netdev eth0\n",
		"\nRail 1: a, mlx5_1 port 1, netdev eth1\n",
		"\nRail 2: a, mlx5_2 port 1, netdev eth2\n",
		"  port-state  FAIL    mlx5_1 port 1: state 1: DOWN\n",
		"\nPorts checked: 3 (1 pass, 1 warn, 1 fail, 0 unknown); failing: mlx5_1 port 1\n",
		"\nStatus: FAIL (1 fail, 1 warn, 0 unknown, 2 pass)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "  check  "); n != 3 {
		t.Errorf("%d tables, want 3:\n%s", n, out)
	}
}
