package perftest

import (
	"math"
	"testing"
)

// TestPeakNS: perftest's peak over recorded stamps.
func TestPeakNS(t *testing.T) {
	for _, c := range []struct {
		name string
		qps  []PeakStamps
		want float64
		ok   bool
	}{
		{"none", nil, 0, false},
		// 4 messages posted at 0,10,20,30 (+100 so no stamp is 0), CQ
		// moderation 2: completions of message 1 at 150, message 3 at
		// 160. Windows: i=0..1 → 50/2, i=0..3 → 60/4 = 15, i=1..3 →
		// 50/3, i=2..3 → 40/2 = 20, i=3..3 → 30, i=1..1 → 40.
		{"cq_mod 2", []PeakStamps{{Posted: []int64{100, 110, 120, 130}, Completed: []int64{0, 150, 0, 160}}}, 15, true},
		// a burst in the middle beats the average: 6 messages, the window
		// 2..4 takes 3 ns a message
		{"burst", []PeakStamps{{Posted: []int64{100, 200, 300, 301, 302, 400}, Completed: []int64{250, 299, 0, 0, 309, 900}}}, 3, true},
		// two QPs, one clock: messages count in the order of their
		// stamps (posts 100,105,110,115; completions of 2 messages at 130
		// and 2 at 140): the window of all 4 is (140-100)/4 = 10
		{"two qps", []PeakStamps{
			{Posted: []int64{100, 110}, Completed: []int64{0, 130}},
			{Posted: []int64{105, 115}, Completed: []int64{0, 140}},
		}, 10, true},
		{"not posted", []PeakStamps{{Posted: []int64{0, 0}, Completed: []int64{0, 0}}}, 0, false},
	} {
		got, ok := PeakNS(c.qps)
		if ok != c.ok || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: %v %v, want %v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// TestPeakNSLimit: no peak above PeakLimit messages, as perftest.
func TestPeakNSLimit(t *testing.T) {
	n := PeakLimit + 1
	q := PeakStamps{Posted: make([]int64, n), Completed: make([]int64, n)}
	for k := range q.Posted {
		q.Posted[k] = int64(1000 + k)
	}
	q.Completed[n-1] = int64(1000 + 2*n)
	if _, ok := PeakNS([]PeakStamps{q}); ok {
		t.Errorf("peak over %d messages", n)
	}
}

// TestPeakMiBPerSec: 65536 bytes every 1 ms is 62.5 MiB/s.
func TestPeakMiBPerSec(t *testing.T) {
	mib, gbit := PeakMiBPerSec(65536, 1e6)
	if math.Abs(mib-62.5) > 1e-9 || math.Abs(gbit-0.524288) > 1e-9 {
		t.Errorf("%v MiB/s %v Gb/s", mib, gbit)
	}
}
