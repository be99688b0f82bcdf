// Package runlist runs a list of tests in one client run (one session,
// one environment) through bench.RunLoopback or bench.RunClient, for the
// commands that run many small test lists: rdmabench cliffs (one point a
// list) and rdmabench isolation (one round a list).
package runlist

import (
	"context"
	"fmt"
	"io"
	"log"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// Runner runs specs in order and returns their results (as many as
// ran, in order) and the run's warnings.
type Runner func(ctx context.Context, specs []spec.Spec) ([]result.Result, []string, error)

// Loopback runs with both ends in this process (bench.RunLoopback, its
// server's log discarded) with rc's client configuration; the device the
// run took goes to *device (nil: nowhere).
func Loopback(rc bench.RunConfig, device *string) Runner {
	return docRunner(func(ctx context.Context, rc bench.RunConfig) (*result.Document, error) {
		return bench.RunLoopback(ctx, rc, log.New(io.Discard, "", 0))
	}, rc, device)
}

// Client runs against the server at addr (host:port, bench.RunClient).
func Client(addr string, rc bench.RunConfig, device *string) Runner {
	return docRunner(func(ctx context.Context, rc bench.RunConfig) (*result.Document, error) {
		return bench.RunClient(ctx, addr, rc)
	}, rc, device)
}

func docRunner(run func(context.Context, bench.RunConfig) (*result.Document, error), rc bench.RunConfig, device *string) Runner {
	return func(ctx context.Context, specs []spec.Spec) ([]result.Result, []string, error) {
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
