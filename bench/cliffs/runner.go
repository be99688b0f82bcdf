package cliffs

import (
	"context"
	"fmt"
	"io"
	"log"

	"github.com/rdmabench/rdmabench/bench"
	"github.com/rdmabench/rdmabench/bench/result"
)

// Runners through the engine: each point is one run of the client over
// the control protocol (bench.RunClient or, with both ends in this
// process, bench.RunLoopback), its one test repeated Spec.Repeat times on
// fresh QPs. The device each point ran on goes to *device.

// LoopbackRunner runs each point with both ends in this process, as
// 'rdmabench loopback' does, with rc's client configuration.
func LoopbackRunner(rc bench.RunConfig, device *string) Runner {
	return docRunner(func(ctx context.Context, rc bench.RunConfig) (*result.Document, error) {
		return bench.RunLoopback(ctx, rc, log.New(io.Discard, "", 0))
	}, rc, device)
}

// ClientRunner runs each point against the server at addr (host:port).
func ClientRunner(addr string, rc bench.RunConfig, device *string) Runner {
	return docRunner(func(ctx context.Context, rc bench.RunConfig) (*result.Document, error) {
		return bench.RunClient(ctx, addr, rc)
	}, rc, device)
}

func docRunner(run func(context.Context, bench.RunConfig) (*result.Document, error), rc bench.RunConfig, device *string) Runner {
	return func(ctx context.Context, s bench.Spec) (result.Result, []string, error) {
		rc.Specs = []bench.Spec{s}
		doc, err := run(ctx, rc)
		if doc == nil {
			return result.Result{}, nil, err
		}
		if doc.Env.Device != "" && device != nil {
			*device = doc.Env.Device
		}
		if err == nil && len(doc.Results) != 1 {
			err = fmt.Errorf("%d results for one test", len(doc.Results))
		}
		if err != nil {
			return result.Result{}, doc.Warnings, err
		}
		return doc.Results[0], doc.Warnings, nil
	}
}
