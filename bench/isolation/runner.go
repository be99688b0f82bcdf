package isolation

import (
	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/runlist"
)

// Runners through the engine: each round is one client run over the
// control protocol (bench.RunClient or, with both ends in this process,
// bench.RunLoopback), its tests in order in one session, each on fresh
// QPs: one session set-up and one environment a round, not one a test.

// Runner runs one round's tests in order and returns their results (as
// many as ran, in order) and the round's warnings.
type Runner = runlist.Runner

// LoopbackRunner runs each round with both ends in this process, as
// 'rdmabench loopback' does, with rc's client configuration; the device
// goes to *device.
func LoopbackRunner(rc bench.RunConfig, device *string) Runner { return runlist.Loopback(rc, device) }

// ClientRunner runs each round against the server at addr (host:port).
func ClientRunner(addr string, rc bench.RunConfig, device *string) Runner {
	return runlist.Client(addr, rc, device)
}
