package wirebw

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// The steady state of each run, from the guests' samplers
// (internal/e2e/exp/expkit.Sample writes DIR/<guest>/samples.txt): a line every
// 0.5 s, "UPTIME TAG | CPU0 | CPU1 | SENT RCVD", where TAG is the run
// going on ("rb-3", "pt-4", or "idle"), CPU0 and CPU1 are that CPU's
// /proc/stat fields user nice system idle iowait irq softirq (USER_HZ
// ticks), and SENT, RCVD are rxe2's sent_pkts and rcvd_pkts. The packet
// rate on the wire, counted by the same counter for both tools, is a
// figure independent of either tool's own clock and timed interval; the
// CPUs say where the guests' time went while the run streamed.

// sample is one sampler line.
type sample struct {
	up         float64 // guest uptime, s
	tag        string
	cpu        [2][7]int64
	sent, rcvd int64
}

// steady is one run's steady state on one guest.
type steady struct {
	secs float64    // length of the steady window, s
	pps  float64    // packets a second: sent (client) or received (server)
	busy [2]float64 // % of each CPU not idle (idle and iowait excluded)
}

// readSamples reads a samples.txt; a missing file is no samples.
func readSamples(path string) ([]sample, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []sample
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if s, ok := parseSample(sc.Text()); ok {
			out = append(out, s)
		} else if strings.TrimSpace(sc.Text()) != "" && !strings.HasPrefix(sc.Text(), "start ") {
			return nil, fmt.Errorf("%s:%d: not a sampler line: %q", path, n, sc.Text())
		}
	}
	return out, sc.Err()
}

// parseSample reads one "UPTIME TAG | CPU0 | CPU1 | SENT RCVD" line.
func parseSample(l string) (sample, bool) {
	var s sample
	parts := strings.Split(l, "|")
	if len(parts) != 4 {
		return s, false
	}
	head := strings.Fields(parts[0])
	if len(head) != 2 {
		return s, false
	}
	var err error
	if s.up, err = strconv.ParseFloat(head[0], 64); err != nil {
		return s, false
	}
	s.tag = head[1]
	for c := 0; c < 2; c++ {
		fs := strings.Fields(parts[1+c])
		if len(fs) != 7 {
			return s, false
		}
		for j, f := range fs {
			if s.cpu[c][j], err = strconv.ParseInt(f, 10, 64); err != nil {
				return s, false
			}
		}
	}
	pk := strings.Fields(parts[3])
	if len(pk) != 2 {
		return s, false
	}
	if s.sent, err = strconv.ParseInt(pk[0], 10, 64); err != nil {
		return s, false
	}
	if s.rcvd, err = strconv.ParseInt(pk[1], 10, 64); err != nil {
		return s, false
	}
	return s, true
}

// userHZ is /proc/stat's tick (USER_HZ): 100 on Linux.
const userHZ = 100

// steadyState is run tag's steady window on one guest: the sampler
// intervals inside the run whose packet rate (received when rcvd, else
// sent) was above half the run's highest, less the first and the last of
// them (ramp-up and drain). ok is false with fewer than 2 such intervals.
func steadyState(ss []sample, tag string, rcvd bool) (st steady, ok bool) {
	type iv struct {
		a, b sample
		rate float64
	}
	pk := func(s sample) int64 {
		if rcvd {
			return s.rcvd
		}
		return s.sent
	}
	var ivs []iv
	peak := 0.0
	for i := 1; i < len(ss); i++ {
		a, b := ss[i-1], ss[i]
		if a.tag != tag || b.tag != tag || b.up <= a.up {
			continue
		}
		r := float64(pk(b)-pk(a)) / (b.up - a.up)
		ivs = append(ivs, iv{a, b, r})
		peak = max(peak, r)
	}
	var kept []iv
	for _, v := range ivs {
		if peak > 0 && v.rate > peak/2 {
			kept = append(kept, v)
		}
	}
	if len(kept) < 4 {
		return st, false
	}
	kept = kept[1 : len(kept)-1]
	var pkts int64
	var ticks [2]int64
	for _, v := range kept {
		st.secs += v.b.up - v.a.up
		pkts += pk(v.b) - pk(v.a)
		for c := 0; c < 2; c++ {
			for j := 0; j < 7; j++ {
				if j == 3 || j == 4 { // idle, iowait
					continue
				}
				ticks[c] += v.b.cpu[c][j] - v.a.cpu[c][j]
			}
		}
	}
	st.pps = float64(pkts) / st.secs
	for c := 0; c < 2; c++ {
		st.busy[c] = 100 * float64(ticks[c]) / userHZ / st.secs
	}
	return st, true
}
