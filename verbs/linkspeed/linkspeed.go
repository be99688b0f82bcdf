// Package linkspeed is the table of RDMA lane speeds (enum ibv_port_speed)
// and the port speed as sysfs names it: pure Go, for package verbs.
package linkspeed

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// Lane is one lane speed of enum ibv_port_speed (IB_SPEED_* in the
// kernel): what ibv_query_port's active_speed holds, the name sysfs's
// ports/<n>/rate shows, the lane's rate as ibv_devinfo prints it, and the
// data it carries on InfiniBand and on Ethernet.
type Lane struct {
	Code  int     // active_speed
	Name  string  // sysfs: "4X EDR"
	Gbps  float64 // ibv_devinfo's figure, Gb/s (PortAttr.LaneGbps)
	IB    float64 // InfiniBand data rate after line encoding, Gb/s
	Ether float64 // Ethernet (RoCE, iWARP) data rate, Gb/s
}

// laneSpeeds: SDR, DDR and QDR signal 2.5, 5 and 10 Gbaud with 8b/10b
// encoding (80 % data); FDR10 and FDR signal 10.3125 and 14.0625 Gbaud with
// 64b/66b; EDR 25.78125 Gbaud with 64b/66b (25 Gb/s of data); HDR, NDR and
// XDR carry 50, 100 and 200 Gb/s of data per lane (PAM4, 64b/66b and FEC).
// On Ethernet the drivers report the Ethernet speed through the same codes
// (mlx5 and ib_get_eth_speed: 10GbE as 1X QDR or FDR10, 25GbE as 1X EDR,
// 40GbE as 4X QDR or FDR10, 100GbE as 4X EDR, 200GbE as 4X HDR), and the
// Ethernet speed is its data rate: the lane figures are taken as they are.
var laneSpeeds = []Lane{
	{1, "SDR", 2.5, 2, 2.5},
	{2, "DDR", 5, 4, 5},
	{4, "QDR", 10, 8, 10},
	{8, "FDR10", 10, 10, 10},
	{16, "FDR", 14.0625, 14.0625 * 64 / 66, 14},
	{32, "EDR", 25.78125, 25, 25},
	{64, "HDR", 50, 50, 50},
	{128, "NDR", 100, 100, 100},
	{256, "XDR", 200, 200, 200},
}

// ByCode is the lane speed of active_speed code.
func ByCode(code int) (Lane, bool) {
	for _, s := range laneSpeeds {
		if s.Code == code {
			return s, true
		}
	}
	return Lane{}, false
}

// ByName is the lane speed sysfs names name ("EDR").
func ByName(name string) (Lane, bool) {
	for _, s := range laneSpeeds {
		if s.Name == name {
			return s, true
		}
	}
	return Lane{}, false
}

// LaneRate is the lane rate ibv_devinfo shows for active_speed code, Gb/s
// (0: unknown).
func LaneRate(code int) float64 {
	s, _ := ByCode(code)
	return s.Gbps
}

// DataRate is the link's data rate, Gb/s: lanes × the lane's data rate on
// linkLayer ("InfiniBand" or "Ethernet"); 0 when the speed is unknown.
func DataRate(s Lane, lanes int, linkLayer string) float64 {
	if linkLayer == "Ethernet" {
		return s.Ether * float64(lanes)
	}
	return s.IB * float64(lanes)
}

// sysfsRate matches ports/<n>/rate: "400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X)".
var sysfsRate = regexp.MustCompile(`\((\d+)X ?([A-Z0-9]*)\)`)

// Sysfs reads the kernel's view of a port's width and lane speed
// from sysfs (class/infiniband/<dev>/ports/<port>/rate). ibv_query_port
// through an rdma-core without active_speed_ex (before v48, so Debian 12's
// 44) gives no usable active_speed for XDR, whose code does not fit its 8
// bits, and drivers may report NDR only there; sysfs names the speed.
func Sysfs(root, dev string, port int) (Lane, int, error) {
	p := filepath.Join(root, "class/infiniband", dev, "ports", strconv.Itoa(port), "rate")
	b, err := os.ReadFile(p)
	if err != nil {
		return Lane{}, 0, err
	}
	m := sysfsRate.FindSubmatch(b)
	if m == nil {
		return Lane{}, 0, fmt.Errorf("%s: %q has no (<width>X <speed>)", p, b)
	}
	lanes, _ := strconv.Atoi(string(m[1]))
	name := string(m[2])
	if name == "" {
		name = "SDR" // the kernel prints no name for SDR
	}
	s, ok := ByName(name)
	if !ok {
		return Lane{}, 0, fmt.Errorf("%s: unknown lane speed %q", p, name)
	}
	return s, lanes, nil
}

// Port is the port's lane speed: active_speed's, or where that is
// unknown (0, or a code this table lacks) the one sysfs names.
func Port(root, dev string, port, code, lanes int) (Lane, int) {
	if s, ok := ByCode(code); ok && lanes > 0 {
		return s, lanes
	}
	if s, n, err := Sysfs(root, dev, port); err == nil && n > 0 {
		return s, n
	}
	return Lane{}, lanes
}

// Width is the name and lane count of ibv_port_attr.active_width code w
// ("4X", 4); 0 lanes when the code is unknown.
func Width(w int) (string, int) {
	switch w {
	case 1:
		return "1X", 1
	case 2:
		return "4X", 4
	case 4:
		return "8X", 8
	case 8:
		return "12X", 12
	case 16:
		return "2X", 2
	}
	return fmt.Sprintf("width(%d)", w), 0
}
