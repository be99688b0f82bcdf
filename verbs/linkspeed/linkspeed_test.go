package linkspeed

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// TestLinkDataRate: every lane speed at every width, on InfiniBand and
// on Ethernet: the data rate after line encoding (8b/10b up to QDR on IB,
// 64b/66b from FDR), never the signalling rate.
func TestLinkDataRate(t *testing.T) {
	widths := []struct {
		code, lanes int
	}{{1, 1}, {16, 2}, {2, 4}, {4, 8}, {8, 12}}
	perLane := []struct {
		code      int
		name      string
		ib, ether float64 // data per lane, Gb/s
	}{
		{1, "SDR", 2, 2.5},
		{2, "DDR", 4, 5},
		{4, "QDR", 8, 10}, // 4X QDR IB: 32 Gb/s of data from 40 signalled
		{8, "FDR10", 10, 10},
		{16, "FDR", 13.636, 14}, // 4X FDR IB: 54.5 of 56.25
		{32, "EDR", 25, 25},
		{64, "HDR", 50, 50},
		{128, "NDR", 100, 100},
		{256, "XDR", 200, 200},
	}
	for _, w := range widths {
		_, lanes := Width(w.code)
		if lanes != w.lanes {
			t.Fatalf("width code %d: %d lanes, want %d", w.code, lanes, w.lanes)
		}
		for _, s := range perLane {
			sp, ok := ByCode(s.code)
			if !ok || sp.Name != s.name {
				t.Fatalf("speed code %d: %q, want %s", s.code, sp.Name, s.name)
			}
			for _, ll := range []string{"InfiniBand", "Ethernet"} {
				want := s.ib * float64(lanes)
				if ll == "Ethernet" {
					want = s.ether * float64(lanes)
				}
				got := DataRate(sp, lanes, ll)
				if math.Abs(got-want) > 0.01*float64(lanes) {
					t.Errorf("%s %dX %s: %.3f Gb/s of data, want %.3f", ll, lanes, s.name, got, want)
				}
				if ll == "InfiniBand" && got > sp.Gbps*float64(lanes)+1e-9 {
					t.Errorf("%dX %s: data %.3f above the signalling rate %.3f", lanes, s.name, got, sp.Gbps*float64(lanes))
				}
			}
		}
	}
}

// TestPortSpeedSysfs: where active_speed gives nothing usable (XDR
// through an rdma-core without active_speed_ex: 0), the port's rate file in
// sysfs names the width and speed.
func TestPortSpeedSysfs(t *testing.T) {
	root := t.TempDir()
	rate := func(dev, s string) {
		d := filepath.Join(root, "class/infiniband", dev, "ports/1")
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "rate"), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rate("mlx5_0", "800 Gb/sec (4X XDR)\n")
	rate("mlx5_1", "400 Gb/sec (4X NDR)\n")
	rate("mlx5_2", "100 Gb/sec (2X HDR)\n")
	rate("rxe0", "2.5 Gb/sec (1X)\n") // SDR: the kernel prints no name
	rate("odd0", "7 Gb/sec (4X ZDR)\n")
	for _, c := range []struct {
		dev         string
		code, lanes int // what ibv_query_port said
		ll          string
		want        float64
	}{
		{"mlx5_0", 0, 4, "InfiniBand", 800},
		{"mlx5_0", 0, 0, "InfiniBand", 800}, // width unknown too
		{"mlx5_1", 0, 4, "Ethernet", 400},
		{"mlx5_2", 64, 2, "InfiniBand", 100}, // active_speed known: used
		{"mlx5_2", 32, 4, "InfiniBand", 100}, // ... even where sysfs differs
		{"rxe0", 0, 1, "Ethernet", 2.5},
		{"odd0", 0, 4, "InfiniBand", 0},     // unknown name: unknown rate
		{"missing0", 0, 4, "InfiniBand", 0}, // no sysfs
		{"missing0", 4, 4, "InfiniBand", 32},
	} {
		sp, lanes := Port(root, c.dev, 1, c.code, c.lanes)
		if got := DataRate(sp, lanes, c.ll); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s (speed %d, %d lanes, %s): %.3f Gb/s, want %.3f", c.dev, c.code, c.lanes, c.ll, got, c.want)
		}
	}
}
