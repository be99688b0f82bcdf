package result

import (
	"fmt"
	"math"
	"sort"
)

// Incast fairness: in an all-to-one mesh every other rank sends to the
// root at once; how evenly they share it is, per test, Jain's fairness
// index over the senders' bandwidth, with each flow's bandwidth and p99.

// MeshFairness is how evenly the senders of an all-to-one run shared the
// root in one test.
type MeshFairness struct {
	Test      string `json:"test"` // e.g. "send bw 65536B"
	Op        string `json:"op"`
	Mode      string `json:"mode"`
	SizeBytes int    `json:"size_bytes"`
	// Jain is Jain's fairness index over the flows' bandwidth (MB/s),
	// (Σx)² / (n·Σx²): 1 when every sender got the same, 1/n when one got
	// everything. Null for a latency test (its flows do not compete for
	// bandwidth) or with fewer than 2 flows.
	Jain *float64 `json:"jain_index"`
	// Flows are the senders measured in this test, by client rank.
	Flows []MeshFlow `json:"flows"`
}

// MeshFlow is one sender's figures in a test of an all-to-one run.
type MeshFlow struct {
	Client     int     `json:"client"`
	ClientHost string  `json:"client_host"`
	MBPerSec   float64 `json:"bw_mb_per_s"` // 10^6 B/s; 0 in latency tests
	P99        Nanos   `json:"p99_ns"`      // the flow's p99 (null: n/a)
}

// JainIndex is Jain's fairness index of xs, (Σx)² / (n·Σx²), in [1/n, 1];
// false for fewer than 2 values, a negative or non-finite value, or all 0.
func JainIndex(xs []float64) (float64, bool) {
	if len(xs) < 2 {
		return 0, false
	}
	var sum, sq float64
	for _, x := range xs {
		if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, false
		}
		sum += x
		sq += x * x
	}
	if sq == 0 {
		return 0, false
	}
	return sum * sum / (float64(len(xs)) * sq), true
}

// MeshFairnessOf is the fairness of each test of d's measured pairs into
// d.Root, in the order of the first pair's tests; nil unless d's pattern
// is all-to-one.
func MeshFairnessOf(d *MeshDocument) []MeshFairness {
	if d.Pattern != "all-to-one" {
		return nil
	}
	var out []MeshFairness
	at := map[Key]int{}
	for _, p := range d.Pairs {
		if p.Status != StatusOK || p.Server != d.Root {
			continue
		}
		for i := range p.Results {
			r := &p.Results[i]
			k := KeyOf(r)
			j, ok := at[k]
			if !ok {
				j = len(out)
				at[k] = j
				// Test keeps the documents' name of a test, "send lat 65536B"
				out = append(out, MeshFairness{Test: fmt.Sprintf("%s %s %dB", r.Op, r.Mode, r.SizeBytes), Op: r.Op, Mode: r.Mode, SizeBytes: r.SizeBytes, Flows: []MeshFlow{}})
			}
			f := MeshFlow{Client: p.Client, ClientHost: p.ClientHost, P99: r.Latency.P99}
			if r.Mode == ModeBW {
				f.MBPerSec = r.Bandwidth.MBPerSec
			}
			out[j].Flows = append(out[j].Flows, f)
		}
	}
	for i := range out {
		fl := out[i].Flows
		sort.SliceStable(fl, func(a, b int) bool { return fl[a].Client < fl[b].Client })
		if out[i].Mode != ModeBW {
			continue
		}
		bw := make([]float64, len(fl))
		for k, f := range fl {
			bw[k] = f.MBPerSec
		}
		if j, ok := JainIndex(bw); ok {
			out[i].Jain = &j
		}
	}
	return out
}
