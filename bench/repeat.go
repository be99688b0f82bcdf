package bench

import (
	"context"
	"fmt"

	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
)

// runRepeated runs spec s Spec.Repeat times (at least once), each on
// fresh QPs (every Client.Run sets up its own), and combines the runs
// (result.CombineRuns): the medians of their figures, each run's, and
// their spread.
func runRepeated(ctx context.Context, cl *Client, s spec.Spec, o measure.Options) (result.Result, error) {
	k := max(s.Repeat, 1)
	runs := make([]result.Result, 0, k)
	for i := 0; i < k; i++ {
		r, err := cl.Run(ctx, s, o)
		if err != nil {
			if k > 1 {
				err = fmt.Errorf("run %d of %d: %w", i+1, k, err)
			}
			return result.Result{}, err
		}
		runs = append(runs, r)
	}
	return result.CombineRuns(runs)
}
