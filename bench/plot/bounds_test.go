package plot

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result/resulttest"
)

// TestDrawBoundedOnUncheckedValues: the plots' axes and ticks are capped
// whatever values they are given, so that even a document that skipped the
// check (a negative size: 23 GB of ticks before the caps) draws, or
// fails, within seconds and the memory ceiling.
func TestDrawBoundedOnUncheckedValues(t *testing.T) {
	docs, labels := plotFixtures(t)
	docs[0].Results[0].SizeBytes = -5
	docs[0].Results[9].SizeBytes = 0
	out := filepath.Join(t.TempDir(), "p.svg")
	for _, kind := range []string{KindSizeLatency, KindSizeBW, KindPercentile, KindCDF} {
		watchdog := time.AfterFunc(5*time.Second, func() { panic(kind + ": still drawing after 5 s") })
		resulttest.Bounded(t, func() {
			_, _ = Draw(docs, labels, kind, Selection{}, out)
		})
		watchdog.Stop()
	}
}
