package main

import (
	"fmt"
	"strconv"
	"strings"

	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/spec"
)

// shapeFlags are the flags of traffic shaping and latency against load.
type shapeFlags struct {
	limitBW, limitMsgRate, loadSweep *string
}

func addShapeFlags(fs *flag.FlagSet) *shapeFlags {
	return &shapeFlags{
		limitBW: fs.String("limit-bw", "", "limit the client's sending, per second, enforced in the C loop: bandwidth tests' measured QPs together, "+
			"or latency-under-load tests' load QPs together; a rate with a unit: 100MB, 400MiB, 2Gb (perftest --rate_limit)"),
		limitMsgRate: fs.String("limit-msgrate", "", "as --limit-bw, in messages per second, e.g. 50000 or 0.5M"),
		loadSweep: fs.String("load-sweep", "", "latency against load: with --load-qps, measure the load's peak, then probe latency open loop "+
			"(at --rate, or a rate the unloaded latency allows) without load and under the load paced at these fractions of the peak, e.g. 10%,25%,50%,75%,90%"),
	}
}

// apply sets the spec template's limits and sweep.
func (f *shapeFlags) apply(s *spec.Spec) error {
	var err error
	if *f.limitBW != "" {
		if s.LimitBW, err = parseRate(*f.limitBW); err != nil {
			return usageError{fmt.Errorf("--limit-bw: %w", err)}
		}
	}
	if *f.limitMsgRate != "" {
		if s.LimitMsgRate, err = parseCount(*f.limitMsgRate); err != nil {
			return usageError{fmt.Errorf("--limit-msgrate: %w", err)}
		}
	}
	if *f.loadSweep != "" {
		if s.LoadSweep, err = spec.ParseLoadSweep(*f.loadSweep); err != nil {
			return usageError{err}
		}
	}
	return nil
}

// rateUnits are the units of parseRate, bytes per second each.
var rateUnits = []struct {
	name string
	bps  float64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"Gb", 1e9 / 8}, {"Mb", 1e6 / 8}, {"Kb", 1e3 / 8}}

// parseRate parses a data rate with its unit ("100MB", "2Gb", "400MiB",
// optionally followed by "/s") into bytes per second.
func parseRate(v string) (float64, error) {
	t := strings.TrimSuffix(strings.TrimSpace(v), "/s")
	for _, u := range rateUnits {
		if num, ok := strings.CutSuffix(t, u.name); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
			if err != nil || !(f > 0) || f > 1e6 {
				break
			}
			return f * u.bps, nil
		}
	}
	return 0, fmt.Errorf("%q: want a positive rate with a unit: GiB, MiB, KiB, GB, MB, KB (bytes/s) or Gb, Mb, Kb (bits/s), e.g. 100MB", v)
}

// parseCount parses a positive count with an optional K or M suffix.
func parseCount(v string) (float64, error) {
	t := strings.TrimSpace(v)
	mul := 1.0
	if n, ok := strings.CutSuffix(t, "M"); ok {
		t, mul = n, 1e6
	} else if n, ok := strings.CutSuffix(t, "K"); ok {
		t, mul = n, 1e3
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || !(f > 0) || f*mul > 1e12 {
		return 0, fmt.Errorf("%q: want a positive number of messages per second, e.g. 50000 or 0.5M", v)
	}
	return f * mul, nil
}
