package isolation

import (
	"context"
	"fmt"
	"io"
	"log"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/result"
)

// Runners through the engine: each round is one run of the client over
// the control protocol (bench.RunClient or, with both ends in this
// process, bench.RunLoopback), its tests in order in one session, each on
// fresh QPs: one session set-up and one environment a round, not one a
// test. The device the round ran on goes to *device.

// Runner runs one round's tests in order and returns their results (as
// many as ran, in order) and the round's warnings.
type Runner = func(ctx context.Context, specs []bench.Spec) ([]result.Result, []string, error)

// LoopbackRunner runs each round with both ends in this process, as
// 'rdmabench loopback' does, with rc's client configuration.
func LoopbackRunner(rc bench.RunConfig, device *string) Runner {
	return docRunner(func(ctx context.Context, rc bench.RunConfig) (*result.Document, error) {
		return bench.RunLoopback(ctx, rc, log.New(io.Discard, "", 0))
	}, rc, device)
}

// ClientRunner runs each round against the server at addr (host:port).
func ClientRunner(addr string, rc bench.RunConfig, device *string) Runner {
	return docRunner(func(ctx context.Context, rc bench.RunConfig) (*result.Document, error) {
		return bench.RunClient(ctx, addr, rc)
	}, rc, device)
}

func docRunner(run func(context.Context, bench.RunConfig) (*result.Document, error), rc bench.RunConfig, device *string) Runner {
	return func(ctx context.Context, specs []bench.Spec) ([]result.Result, []string, error) {
		rc.Specs = specs
		doc, err := run(ctx, rc)
		if doc == nil {
			return nil, nil, err
		}
		if doc.Env.Device != "" && device != nil {
			*device = doc.Env.Device
		}
		if err == nil && len(doc.Results) != len(specs) {
			err = fmt.Errorf("%d results for %d tests", len(doc.Results), len(specs))
		}
		return doc.Results, doc.Warnings, err
	}
}
