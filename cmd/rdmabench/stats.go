package main

import (
	"fmt"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// statsFlags are the flags of what the results report about their
// latency distributions: which percentiles, how sure, and whether the
// table shows the intervals.
type statsFlags struct {
	percentiles *string
	confidence  *float64
	ci          *bool
	repeat      *int
}

func addStatsFlags(fs *flag.FlagSet) *statsFlags {
	return &statsFlags{
		percentiles: fs.String("percentiles", "50,90,99,99.9,99.99", "latency percentiles to report in the table, the JSON and compare, e.g. 50,99,99.9,99.999"),
		confidence: fs.Float64("confidence", 0.95, "confidence level of the percentiles' intervals (order statistics; JSON ci_low/ci_high), in [0.5, 1); "+
			"a percentile whose interval runs off the end of the data prints n/a"),
		ci: fs.Bool("ci", false, "print each percentile's confidence interval in a table under the latency table"),
		repeat: fs.Int("repeat", 1, "run each test this many times, each on fresh QPs: the result has each run's figures, their medians "+
			"and spread (min, max, coefficient of variation); compare --baseline then tests each figure for significance"),
	}
}

// apply sets the spec template's percentiles and confidence.
func (f *statsFlags) apply(s *spec.Spec) error {
	if *f.repeat < 1 {
		return usageError{fmt.Errorf("--repeat %d: want at least 1 run (at most %d)", *f.repeat, spec.MaxRepeat)}
	}
	ps, err := result.ParsePercentiles(*f.percentiles)
	if err != nil {
		return usageError{err}
	}
	s.Percentiles, s.Confidence, s.Repeat = ps, *f.confidence, *f.repeat
	if err := s.ValidateStats(); err != nil {
		return usageError{err}
	}
	return nil
}
