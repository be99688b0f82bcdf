package wirebw

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// samplerText is a sampler's file: before and after tag's run idle lines,
// and during it one line each 0.5 s whose packet counters grow by the
// rates given (packets a second, sent and received alike) and whose CPU0
// spends busy ticks of user time per line (50 ticks: the whole 0.5 s).
func samplerText(tag string, rates []float64, busy int64) string {
	var b strings.Builder
	b.WriteString("start 1764620000 100.00 90.00\n")
	up, pk := 100.0, 0.0
	var u0, idle0, idle1 int64
	line := func(tag string) {
		fmt.Fprintf(&b, "%.2f %s | %d 0 0 %d 0 0 0 | 0 0 0 %d 0 0 0 | %d %d\n", up, tag, u0, idle0, idle1, int64(pk), int64(pk))
	}
	line("idle")
	for _, r := range append([]float64{0}, rates...) {
		up += 0.5
		pk += r / 2
		u0 += busy
		idle0 += 50 - busy
		idle1 += 50
		line(tag)
	}
	up += 0.5
	line("idle")
	return b.String()
}

func TestSteadyState(t *testing.T) {
	for _, c := range []struct {
		name  string
		rates []float64
		busy  int64
		ok    bool
		pps   float64
		cpu0  float64
	}{
		{"ramp, plateau, drain", []float64{500, 3000, 5000, 5000, 5000, 5000, 5000, 5000, 1000}, 25, true, 5000, 50},
		{"plateau with a dip", []float64{4000, 4000, 4000, 1000, 4000, 4000}, 50, true, 4000, 100},
		{"too short", []float64{4000, 4000, 4000}, 10, false, 0, 0},
		{"no traffic", []float64{0, 0, 0, 0, 0, 0}, 10, false, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "samples.txt")
			if err := os.WriteFile(p, []byte(samplerText("rb-3", c.rates, c.busy)), 0o644); err != nil {
				t.Fatal(err)
			}
			ss, err := readSamples(p)
			if err != nil {
				t.Fatal(err)
			}
			for _, rcvd := range []bool{false, true} {
				st, ok := steadyState(ss, "rb-3", rcvd)
				if ok != c.ok {
					t.Fatalf("rcvd %v: ok %v, want %v (%+v)", rcvd, ok, c.ok, st)
				}
				if ok && (math.Abs(st.pps-c.pps) > 1 || math.Abs(st.busy[0]-c.cpu0) > 0.5 || st.busy[1] != 0) {
					t.Errorf("rcvd %v: %+v, want %.0f packets/s, CPU0 %.0f %%, CPU1 0 %%", rcvd, st, c.pps, c.cpu0)
				}
			}
			if _, ok := steadyState(ss, "pt-4", false); ok {
				t.Error("a steady state for a run the samples do not hold")
			}
		})
	}
	if _, err := readSamples(filepath.Join(t.TempDir(), "none")); err != nil {
		t.Errorf("missing file: %v, want no samples and no error", err)
	}
	bad := filepath.Join(t.TempDir(), "samples.txt")
	os.WriteFile(bad, []byte("100.0 rb-1 | 1 2 3 | 0 0 0 0 0 0 0 | 1 2\n"), 0o644)
	if _, err := readSamples(bad); err == nil || !strings.Contains(err.Error(), ":1: not a sampler line") {
		t.Errorf("a malformed line: %v, want its line named", err)
	}
}
