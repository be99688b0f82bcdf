package clock_test

import (
	"math"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/clock"
)

// TestCounterClock forces the counter (as --clock tsc does where the rule
// says no) and checks it against CLOCK_MONOTONIC_RAW: ns, monotonic,
// agreeing with Go's monotonic clock over 50 ms to within 1 %, and drifting
// from CLOCK_MONOTONIC_RAW by less than 100 ppm; then back to the default.
func TestCounterClock(t *testing.T) {
	info, err := clock.Select(clock.Counter)
	if err != nil {
		t.Skipf("no counter: %v", err)
	}
	defer clock.Select(clock.Monotonic) //nolint:errcheck // a known mode
	if !clock.UsesCounter() || info.TicksPerSecond <= 0 || info.WindowNS < int64(clock.Window/2) {
		t.Fatalf("counter clock not in use: %+v", info)
	}
	t.Logf("%+v, read cost %.1f ns", info, clock.ReadCost(10000))
	prev := clock.Now()
	for i := 0; i < 100000; i++ {
		n := clock.Now()
		if n < prev {
			t.Fatalf("the counter clock went back: %d after %d", n, prev)
		}
		prev = n
	}
	c0, g0 := clock.Now(), time.Now()
	time.Sleep(50 * time.Millisecond)
	c1, g1 := clock.Now(), time.Now()
	got, want := float64(c1-c0), float64(g1.Sub(g0).Nanoseconds())
	if math.Abs(got-want)/want > 0.01 {
		t.Errorf("counter clock: %.0f ns over Go's %.0f ns", got, want)
	}
	if d := clock.DriftPPM(); math.Abs(d) > 100 {
		t.Errorf("drift %.1f ppm from CLOCK_MONOTONIC_RAW (offset %d ns)", d, clock.Offset())
	}
}

// TestMonotonicClock: --clock monotonic reads CLOCK_MONOTONIC_RAW (no
// offset); an unknown mode fails.
func TestMonotonicClock(t *testing.T) {
	info, err := clock.Select(clock.Monotonic)
	if err != nil || info.Source != clock.SourceMonotonic || clock.UsesCounter() || clock.Offset() != 0 {
		t.Fatalf("monotonic: %+v, %v", info, err)
	}
	if _, err := clock.Select("hpet"); err == nil {
		t.Error("mode hpet accepted")
	}
	if ok, why := clock.Sound(); why == "" {
		t.Errorf("Sound() = %v with no reason", ok)
	}
}
