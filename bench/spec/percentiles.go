package spec

import (
	"fmt"

	"github.com/rdmabench/rdmabench/bench/result"
)

// Stats is what the test's results report: its percentiles and the
// confidence of their intervals.
func (s Spec) Stats() result.Stats {
	return result.Stats{Percentiles: s.Percentiles, Confidence: s.Confidence}
}

// ValidateStats refuses a confidence outside [0.5, 1), percentiles outside
// (0, 100) and a repeat count outside 1..MaxRepeat, by value.
func (s Spec) ValidateStats() error {
	if s.Confidence != 0 && !(s.Confidence >= 0.5 && s.Confidence < 1) {
		return fmt.Errorf("--confidence %v: want a level in [0.5, 1), such as 0.95", s.Confidence)
	}
	if s.Repeat < 0 || s.Repeat > MaxRepeat {
		return fmt.Errorf("--repeat %d: want 1..%d runs", s.Repeat, MaxRepeat)
	}
	for _, p := range s.Percentiles {
		if !(p > 0 && p < 100) {
			return fmt.Errorf("--percentiles: %v is not a percent strictly between 0 and 100", p)
		}
	}
	return nil
}
