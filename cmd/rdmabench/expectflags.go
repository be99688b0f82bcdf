package main

import (
	flag "github.com/spf13/pflag"

	"github.com/rdmabench/rdmabench/bench/expect"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// expectFlags are --expect-bw and --expect-lat (run, loopback, mesh).
type expectFlags struct{ bw, lat *string }

// addExpectFlags defines the expectation flags on fs.
func addExpectFlags(fs *flag.FlagSet) *expectFlags {
	return &expectFlags{
		bw: fs.String("expect-bw", "", "expect bandwidth tests at least this: PCT% of the port's data rate after line encoding (90%), "+
			"or a rate in "+expect.RateUnits()+" (375Gb/s); judged on the 95% interval: pass (exit 0), fail (exit 11), cannot tell (exit 12, with the --repeat that would settle it)"),
		lat: fs.String("expect-lat", "", "expect latency tests' percentiles at most these, in ns, us or ms: p50=2.5us,p99=5us; judged as --expect-bw"),
	}
}

// parse reads the flags and holds them to the tests (usage errors).
func (f *expectFlags) parse(specs []spec.Spec) (expect.Expectations, error) {
	var e expect.Expectations
	var err error
	if *f.bw != "" {
		if e.BW, err = expect.ParseBW(*f.bw); err != nil {
			return e, usageError{err}
		}
	}
	if *f.lat != "" {
		if e.Lat, err = expect.ParseLat(*f.lat); err != nil {
			return e, usageError{err}
		}
	}
	if err := e.CheckSpecs(specs); err != nil {
		return e, usageError{err}
	}
	return e, nil
}
