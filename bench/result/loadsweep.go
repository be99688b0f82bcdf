package result

// LoadSweep is latency against offered load (--load-sweep): one latency
// test probed open loop while its load QPs stream at fractions of their
// measured peak.
type LoadSweep struct {
	Test     string `json:"test"` // the latency test, e.g. "send lat 2B"
	LoadOp   string `json:"load_op"`
	LoadSize int    `json:"load_size_bytes"`
	LoadQPs  int    `json:"load_qps"`
	// PeakMsgsPerSec and PeakMBPerSec are the load's unshaped rate, from a
	// bandwidth test of the load QPs alone before the sweep.
	PeakMsgsPerSec float64 `json:"peak_msgs_per_s"`
	PeakMBPerSec   float64 `json:"peak_mb_per_s"`
	// ProbeRate is the latency probes' open-loop rate, operations/s.
	ProbeRate float64 `json:"probe_rate"`
	// Points are the unloaded probe (offered 0) and one per fraction.
	Points []LoadPoint `json:"points"`
	// Knee is the lowest offered fraction whose p99 exceeds twice the
	// unloaded p99; null when none does (or the unloaded p99 is n/a).
	Knee *float64 `json:"knee"`
}

// LoadPoint is the latency at one offered load.
type LoadPoint struct {
	Offered            float64 `json:"offered"` // fraction of the peak, 0.25 = 25 %
	OfferedMsgsPerSec  float64 `json:"offered_msgs_per_s"`
	AchievedMsgsPerSec float64 `json:"achieved_msgs_per_s"` // what the load QPs did
	AchievedMBPerSec   float64 `json:"achieved_mb_per_s"`
	P50                Nanos   `json:"p50"`
	P99                Nanos   `json:"p99"`
	P99_9              Nanos   `json:"p99_9"`
}

// FindKnee sets s.Knee: the first point after the unloaded one (Points[0])
// whose p99 exceeds twice the unloaded p99.
func (s *LoadSweep) FindKnee() {
	s.Knee = nil
	if len(s.Points) == 0 || !s.Points[0].P99.OK {
		return
	}
	base := s.Points[0].P99.NS
	for _, p := range s.Points[1:] {
		if p.P99.OK && p.P99.NS > 2*base {
			k := p.Offered
			s.Knee = &k
			return
		}
	}
}
