package compare

import (
	"fmt"

	"github.com/rdmabench/rdmabench/bench/result"
)

// The fairness of an all-to-one mesh (result.MeshFairness) joins the mesh
// gate: with a bandwidth limit (--max-regress bw=5%), a test whose Jain
// index fell by more than that limit from the baseline's is a regression,
// as a bandwidth that fell would be: the senders' shares grew unequal.

// FairnessRegression is an all-to-one test whose Jain index fell.
type FairnessRegression struct {
	Test   string  // e.g. "send bw 64K"
	Base   float64 // the baseline's Jain index
	New    float64
	Change float64 // New/Base - 1
	Limit  float64 // the allowed fall, a fraction (the bw limit)
}

// Format is "send bw 64K: Jain's fairness index 0.990 -> 0.700 (-29.3% < -5%)".
func (r FairnessRegression) Format() string {
	return fmt.Sprintf("%s: Jain's fairness index %.3f -> %.3f (%+.1f%% < -%g%%)", r.Test, r.Base, r.New, r.Change*100, r.Limit*100)
}

// gateFairness compares the Jain index of every test both documents have
// one for; limit is the allowed fall (limits' bw); notes say what could
// not be compared.
func gateFairness(base, cur *result.MeshDocument, limits map[string]float64) (regs []FairnessRegression, checked int, notes []string) {
	limit, ok := limits[MetricBW]
	if !ok || len(cur.Fairness) == 0 {
		return nil, 0, nil
	}
	baseJain := map[string]float64{}
	for _, f := range base.Fairness {
		if f.Jain != nil {
			baseJain[f.Test] = *f.Jain
		}
	}
	for _, f := range cur.Fairness {
		if f.Jain == nil {
			continue
		}
		b, ok := baseJain[f.Test]
		if !ok || b <= 0 {
			notes = append(notes, fmt.Sprintf("fairness of %s not compared: the baseline has no Jain index for it", fairnessName(f)))
			continue
		}
		checked++
		if ch := *f.Jain/b - 1; ch < -limit {
			regs = append(regs, FairnessRegression{Test: fairnessName(f), Base: b, New: *f.Jain, Change: ch, Limit: limit})
		}
	}
	return regs, checked, notes
}

// fairnessName names f's test as every line does (result.Key), not as the
// document's test field spells it ("send bw 65536B").
func fairnessName(f result.MeshFairness) string {
	return result.NewKey(f.Op, f.Mode, f.SizeBytes, "").String()
}
