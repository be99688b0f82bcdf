//go:build cgo && linux

package verbs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// laneSpeed is one lane speed of enum ibv_port_speed (IB_SPEED_* in the
// kernel): what ibv_query_port's active_speed holds, the name sysfs's
// ports/<n>/rate shows, the lane's rate as ibv_devinfo prints it, and the
// data it carries on InfiniBand and on Ethernet.
type laneSpeed struct {
	code  int     // active_speed
	name  string  // sysfs: "4X EDR"
	gbps  float64 // ibv_devinfo's figure, Gb/s (PortAttr.LaneGbps)
	ib    float64 // InfiniBand data rate after line encoding, Gb/s
	ether float64 // Ethernet (RoCE, iWARP) data rate, Gb/s
}

// laneSpeeds: SDR, DDR and QDR signal 2.5, 5 and 10 Gbaud with 8b/10b
// encoding (80 % data); FDR10 and FDR signal 10.3125 and 14.0625 Gbaud with
// 64b/66b; EDR 25.78125 Gbaud with 64b/66b (25 Gb/s of data); HDR, NDR and
// XDR carry 50, 100 and 200 Gb/s of data per lane (PAM4, 64b/66b and FEC).
// On Ethernet the drivers report the Ethernet speed through the same codes
// (mlx5 and ib_get_eth_speed: 10GbE as 1X QDR or FDR10, 25GbE as 1X EDR,
// 40GbE as 4X QDR or FDR10, 100GbE as 4X EDR, 200GbE as 4X HDR), and the
// Ethernet speed is its data rate: the lane figures are taken as they are.
var laneSpeeds = []laneSpeed{
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

func speedByCode(code int) (laneSpeed, bool) {
	for _, s := range laneSpeeds {
		if s.code == code {
			return s, true
		}
	}
	return laneSpeed{}, false
}

func speedByName(name string) (laneSpeed, bool) {
	for _, s := range laneSpeeds {
		if s.name == name {
			return s, true
		}
	}
	return laneSpeed{}, false
}

// laneRate is the lane rate ibv_devinfo shows for active_speed code, Gb/s
// (0: unknown).
func laneRate(code int) float64 {
	s, _ := speedByCode(code)
	return s.gbps
}

// dataRate is the link's data rate, Gb/s: lanes × the lane's data rate on
// linkLayer ("InfiniBand" or "Ethernet"); 0 when the speed is unknown.
func dataRate(s laneSpeed, lanes int, linkLayer string) float64 {
	if linkLayer == "Ethernet" {
		return s.ether * float64(lanes)
	}
	return s.ib * float64(lanes)
}

// sysfsRate matches ports/<n>/rate: "400 Gb/sec (4X NDR)", "2.5 Gb/sec (1X)".
var sysfsRate = regexp.MustCompile(`\((\d+)X ?([A-Z0-9]*)\)`)

// sysfsRoot is where sysfsPortSpeed reads (a fake tree in tests).
var sysfsRoot = "/sys"

// sysfsPortSpeed reads the kernel's view of a port's width and lane speed
// from sysfs (class/infiniband/<dev>/ports/<port>/rate). ibv_query_port
// through an rdma-core without active_speed_ex (before v48, so Debian 12's
// 44) gives no usable active_speed for XDR, whose code does not fit its 8
// bits, and drivers may report NDR only there; sysfs names the speed.
func sysfsPortSpeed(root, dev string, port int) (laneSpeed, int, error) {
	p := filepath.Join(root, "class/infiniband", dev, "ports", strconv.Itoa(port), "rate")
	b, err := os.ReadFile(p)
	if err != nil {
		return laneSpeed{}, 0, err
	}
	m := sysfsRate.FindSubmatch(b)
	if m == nil {
		return laneSpeed{}, 0, fmt.Errorf("%s: %q has no (<width>X <speed>)", p, b)
	}
	lanes, _ := strconv.Atoi(string(m[1]))
	name := string(m[2])
	if name == "" {
		name = "SDR" // the kernel prints no name for SDR
	}
	s, ok := speedByName(name)
	if !ok {
		return laneSpeed{}, 0, fmt.Errorf("%s: unknown lane speed %q", p, name)
	}
	return s, lanes, nil
}

// portSpeed is the port's lane speed: active_speed's, or where that is
// unknown (0, or a code this table lacks) the one sysfs names.
func portSpeed(root, dev string, port, code, lanes int) (laneSpeed, int) {
	if s, ok := speedByCode(code); ok && lanes > 0 {
		return s, lanes
	}
	if s, n, err := sysfsPortSpeed(root, dev, port); err == nil && n > 0 {
		return s, n
	}
	return laneSpeed{}, lanes
}
