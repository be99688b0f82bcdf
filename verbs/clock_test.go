package verbs_test

import (
	"testing"

	"github.com/rdmabench/rdmabench/internal/clock"
	"github.com/rdmabench/rdmabench/verbs"
)

// TestEngineClockIsShared: the engine's loops read the clock that package
// clock selects (cloop.h's rb_clk is one object in the process): after a
// switch to the counter, shifted far from CLOCK_MONOTONIC_RAW, verbs.Now
// agrees with clock.Now, and back.
func TestEngineClockIsShared(t *testing.T) {
	if _, err := clock.Select(clock.Counter); err != nil {
		t.Skipf("no counter: %v", err)
	}
	defer clock.Select(clock.Monotonic) //nolint:errcheck // a known mode

	clock.Shift(1 << 50) // far from CLOCK_MONOTONIC_RAW
	a, v, b := clock.Now(), verbs.Now(), clock.Now()
	if v < a || v > b {
		t.Fatalf("verbs.Now() = %d outside clock.Now()'s [%d, %d]: the packages read different clocks", v, a, b)
	}
	if _, err := clock.Select(clock.Monotonic); err != nil {
		t.Fatal(err)
	}
	if clock.UsesCounter() {
		t.Fatal("still on the counter")
	}
}
