package vm

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// Addresses of the layouts (docs/testbed.md).
const (
	CMAddr  = "192.0.2.1"   // rxe1 on dummy0 (rdma_cm rejects loopback)
	SiwAddr = "203.0.113.1" // siw1 on dummy1
	WireNet = "198.51.100"  // eth0 of guest N: 198.51.100.N (pair, mesh)
)

// Layouts.
const (
	LayoutOne  = "one"
	LayoutPair = "pair"
	LayoutMesh = "mesh"
)

// LayoutGuests is the number of guests of a layout, 0 for an unknown one.
func LayoutGuests(layout string) int {
	switch layout {
	case LayoutOne:
		return 1
	case LayoutPair:
		return 2
	case LayoutMesh:
		return 3
	}
	return 0
}

// PeerAddr is a guest of a bed and its wire address.
type PeerAddr struct {
	Name string `json:"name"`
	Addr string `json:"addr"`
}

// GuestConfig is what the host tells the agent, on the kernel command line
// (rdmabench=<base64url JSON>).
type GuestConfig struct {
	Name    string     `json:"name"`              // g1, g2, ...
	Addr    string     `json:"addr,omitempty"`    // wire address (pair, mesh)
	Peers   []PeerAddr `json:"peers,omitempty"`   // the other guests
	KDir    string     `json:"kdir"`              // the kernel package on the host (modules)
	KVer    string     `json:"kver"`              // its release
	Siw     string     `json:"siw"`               // off, auto, require
	SiwKo   string     `json:"siwko,omitempty"`   // host path of siw.ko
	Out     bool       `json:"out,omitempty"`     // a 9p share "out" to mount at /out
	Probe   bool       `json:"probe,omitempty"`   // accelerator probe: print the marker, power off
	Wire    bool       `json:"wire,omitempty"`    // virtio-net eth0 (pair, mesh)
	Console bool       `json:"console,omitempty"` // agent notes on the console too (debugging)
}

const cmdlineKey = "rdmabench="

// Encode returns the kernel command line word.
func (c GuestConfig) Encode() string {
	b, _ := json.Marshal(c)
	return cmdlineKey + base64.RawURLEncoding.EncodeToString(b)
}

// ParseCmdline finds the configuration in a kernel command line.
func ParseCmdline(cmdline string) (GuestConfig, error) {
	var c GuestConfig
	for _, w := range strings.Fields(cmdline) {
		v, ok := strings.CutPrefix(w, cmdlineKey)
		if !ok {
			continue
		}
		b, err := base64.RawURLEncoding.DecodeString(v)
		if err != nil {
			return c, fmt.Errorf("kernel command line %s...: %v", cmdlineKey, err)
		}
		if err := json.Unmarshal(b, &c); err != nil {
			return c, fmt.Errorf("kernel command line %s...: %v", cmdlineKey, err)
		}
		return c, nil
	}
	return c, fmt.Errorf("no %s... on the kernel command line", cmdlineKey)
}

// PeersEnv formats peers as RDMABENCH_PEERS wants them: name=addr,...
func PeersEnv(ps []PeerAddr) string {
	var f []string
	for _, p := range ps {
		f = append(f, p.Name+"="+p.Addr)
	}
	return strings.Join(f, ",")
}
