package device

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/rdmabench/rdmabench/bench/report"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/verbs"
)

// Report describes one RDMA device for `rdmabench devices`.
type Report struct {
	Name         string `json:"name"`     // e.g. "rxe0"
	Driver       string `json:"driver"`   // kernel driver, e.g. "rdma_rxe"; "" if unknown
	Firmware     string `json:"firmware"` // fw_ver
	VendorID     uint32 `json:"vendor_id"`
	VendorPartID uint32 `json:"vendor_part_id"`
	SoftwareRDMA bool   `json:"software_rdma"` // rxe or siw
	// Transport is "InfiniBand", "RoCE" or "iWARP".
	Transport string       `json:"transport"`
	Ports     []PortReport `json:"ports"`
}

// PortReport describes one port of a device.
type PortReport struct {
	Port      int         `json:"port"`
	State     string      `json:"state"`      // e.g. "PORT_ACTIVE"
	LinkLayer string      `json:"link_layer"` // "Ethernet" or "InfiniBand"
	ActiveMTU int         `json:"active_mtu"` // bytes
	MaxMTU    int         `json:"max_mtu"`    // bytes
	Speed     string      `json:"speed"`      // e.g. "2.5 Gbps"
	Width     string      `json:"width"`      // e.g. "1X"
	GIDs      []GIDReport `json:"gids"`
	// Netdev and Addresses are the port's network device and its IP
	// addresses (RoCE and iWARP; for iWARP the netdev whose MAC the GID
	// carries): what --bind, rdma_cm and the choice by route use.
	Netdev    string   `json:"netdev,omitempty"`
	Addresses []string `json:"addresses,omitempty"`
}

// GIDReport is one valid entry of a port's GID table.
type GIDReport struct {
	Index  int    `json:"index"`
	Type   string `json:"type"`   // "IB", "RoCE v1" or "RoCE v2"
	GID    string `json:"gid"`    // e.g. "::ffff:127.0.0.1"
	Netdev string `json:"netdev"` // e.g. "lo"; "" for IB
}

// Describe opens every RDMA device and reports its attributes, ports
// and GID tables. Errors from verbs are returned unchanged, so errors.Is(err,
// verbs.ErrNoKernelSupport) and the like work.
func Describe() ([]Report, error) {
	names, err := verbs.DeviceNames()
	if err != nil {
		return nil, err
	}
	reps := make([]Report, 0, len(names))
	for _, name := range names {
		rep, err := describeDevice(name)
		if err != nil {
			return nil, err
		}
		reps = append(reps, rep)
	}
	return reps, nil
}

func describeDevice(name string) (rep Report, err error) {
	ctx, err := verbs.Open(name)
	if err != nil {
		return Report{}, err
	}
	defer func() { err = errors.Join(err, ctx.Close()) }()
	da, err := ctx.QueryDevice()
	if err != nil {
		return Report{}, err
	}
	rep = Report{Name: name, Driver: ctx.Driver(), Firmware: da.FWVer, VendorID: da.VendorID,
		VendorPartID: da.VendorPartID, SoftwareRDMA: ctx.IsSoftware(), Ports: []PortReport{}}
	for port := 1; port <= da.PhysPortCnt; port++ {
		pa, err := ctx.QueryPort(port)
		if err != nil {
			return Report{}, err
		}
		tbl, err := ctx.GIDTable(port)
		if err != nil {
			return Report{}, err
		}
		pr := PortReport{Port: port, State: pa.State, LinkLayer: pa.LinkLayer, ActiveMTU: pa.ActiveMTU,
			MaxMTU: pa.MaxMTU, Speed: pa.Speed, Width: pa.Width, GIDs: make([]GIDReport, 0, len(tbl))}
		for _, g := range tbl {
			pr.GIDs = append(pr.GIDs, GIDReport{Index: g.Index, Type: g.Type.String(), GID: g.GID.String(), Netdev: g.Netdev})
		}
		pr.Netdev, pr.Addresses = portNetdev(ctx, tbl)
		rep.Transport = transportOf(ctx, pa.LinkLayer)
		rep.Ports = append(rep.Ports, pr)
	}
	return rep, nil
}

// WriteReports writes reps for people: per device its driver, firmware,
// vendor ids and whether it is software RDMA; per port its state, link
// layer, MTU, speed and GID table.
func WriteReports(w io.Writer, reps []Report) error {
	var b strings.Builder
	if len(reps) == 0 {
		b.WriteString("no RDMA devices\n")
	}
	for i, d := range reps {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(d.Name + "\n")
		kv := func(indent, k, v string) { fmt.Fprintf(&b, "%s%-*s: %s\n", indent, 16-len(indent), k, v) }
		kv("  ", "driver", orUnknown(d.Driver))
		kv("  ", "firmware", orUnknown(d.Firmware))
		kv("  ", "vendor", fmt.Sprintf("vendor_id 0x%04x, vendor_part_id %d", d.VendorID, d.VendorPartID))
		sw := "no"
		if d.SoftwareRDMA {
			sw = "yes (" + result.SoftwareKind(d.Name, d.Driver) + "): " + result.SoftwareCaveat
		}
		kv("  ", "software RDMA", sw)
		kv("  ", "transport", orUnknown(d.Transport))
		for _, p := range d.Ports {
			fmt.Fprintf(&b, "  port %d\n", p.Port)
			kv("    ", "state", p.State)
			kv("    ", "link layer", p.LinkLayer)
			kv("    ", "active MTU", fmt.Sprintf("%d (max %d)", p.ActiveMTU, p.MaxMTU))
			kv("    ", "speed", strings.TrimSpace(p.Speed+" ("+p.Width+")"))
			if p.Netdev != "" {
				kv("    ", "netdev", strings.TrimSpace(p.Netdev+" "+strings.Join(p.Addresses, " ")))
			}
			if len(p.GIDs) == 0 {
				kv("    ", "GIDs", "none")
				continue
			}
			b.WriteString("    GIDs:\n")
			t := report.Table{{Head: "index", Left: true}, {Head: "type", Left: true},
				{Head: "address", Left: true}, {Head: "netdev", Left: true}}
			rows := make([][]string, 0, len(p.GIDs))
			for _, g := range p.GIDs {
				rows = append(rows, []string{strconv.Itoa(g.Index), g.Type, g.GID, orDash(g.Netdev)})
			}
			var tb strings.Builder
			t.Write(&tb, rows)
			for _, l := range strings.SplitAfter(tb.String(), "\n") {
				if l != "" {
					b.WriteString("     " + l)
				}
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// transportOf names a device's transport: iWARP, RoCE (Ethernet link
// layer) or InfiniBand.
func transportOf(ctx *verbs.Context, linkLayer string) string {
	switch {
	case ctx.IsIWARP():
		return "iWARP"
	case linkLayer == "Ethernet":
		return "RoCE"
	case linkLayer == "InfiniBand":
		return "InfiniBand"
	}
	return ""
}

// portNetdev is a port's network device and its IP addresses: the netdev of
// its GIDs (RoCE), or the one whose MAC the GID carries (iWARP).
func portNetdev(ctx *verbs.Context, tbl []verbs.GIDEntry) (string, []string) {
	var ifc *net.Interface
	if ctx.IsIWARP() && len(tbl) > 0 {
		ifc = NetdevOfGID(tbl[0].GID)
	} else {
		for _, g := range tbl {
			if g.Netdev != "" {
				ifc, _ = net.InterfaceByName(g.Netdev)
				break
			}
		}
	}
	if ifc == nil {
		return "", nil
	}
	var addrs []string
	for _, a := range interfaceAddrs(ifc) {
		addrs = append(addrs, a.String())
	}
	return ifc.Name, addrs
}

// TSVColumns are the columns of WriteTSV, in order.
var TSVColumns = []string{"device", "port", "state", "transport", "link_layer", "driver", "firmware", "speed", "width",
	"active_mtu", "netdev", "ipv4"}

// WriteTSV writes one tab-separated line per port of reps, after a
// header line of TSVColumns: ipv4 is the port's first IPv4
// address; an empty field is a value the device does not report.
func WriteTSV(w io.Writer, reps []Report) error {
	if err := report.WriteTSVHeader(w, TSVColumns); err != nil {
		return err
	}
	for _, d := range reps {
		for _, p := range d.Ports {
			ipv4 := ""
			for _, a := range p.Addresses {
				if ip, err := netip.ParseAddr(a); err == nil && ip.Is4() {
					ipv4 = a
					break
				}
			}
			row := []string{d.Name, strconv.Itoa(p.Port), p.State, d.Transport, p.LinkLayer, d.Driver, d.Firmware, p.Speed, p.Width,
				strconv.Itoa(p.ActiveMTU), p.Netdev, ipv4}
			if err := report.WriteTSVRow(w, row); err != nil {
				return err
			}
		}
	}
	return nil
}
