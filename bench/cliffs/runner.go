package cliffs

import (
	"context"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/runlist"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// Runners through the engine: each point is one run of the client over
// the control protocol (bench.RunClient or, with both ends in this
// process, bench.RunLoopback), its one test repeated Spec.Repeat times on
// fresh QPs. The device each point ran on goes to *device.

// LoopbackRunner runs each point with both ends in this process, as
// 'rdmabench loopback' does, with rc's client configuration.
func LoopbackRunner(rc bench.RunConfig, device *string) Runner {
	return onePoint(runlist.Loopback(rc, device))
}

// ClientRunner runs each point against the server at addr (host:port).
func ClientRunner(addr string, rc bench.RunConfig, device *string) Runner {
	return onePoint(runlist.Client(addr, rc, device))
}

// onePoint runs one point's test as a list of one.
func onePoint(run runlist.Runner) Runner {
	return func(ctx context.Context, s spec.Spec) (result.Result, []string, error) {
		rs, warns, err := run(ctx, []spec.Spec{s})
		if err != nil {
			return result.Result{}, warns, err
		}
		return rs[0], warns, nil
	}
}
