package perftest

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
)

// TestWindow: a -D run's figures over perftest's middle (the
// intervals between the margins).
func TestWindow(t *testing.T) {
	s := time.Second.Nanoseconds()
	r := result.Result{SizeBytes: 1 << 20, Iterations: 100}
	for i := int64(0); i < 5; i++ {
		r.Intervals = append(r.Intervals, result.Interval{StartNS: i * s, EndNS: (i + 1) * s, Ops: 10 + i})
	}
	w, ok := Window(r, 5*time.Second, time.Second) // intervals 1, 2, 3
	if !ok || w.Iterations != 11+12+13 || w.DurationNS != 3*s {
		t.Fatalf("window: %v %d ops in %d ns", ok, w.Iterations, w.DurationNS)
	}
	if got := w.Bandwidth.MiBPerSec; got != 12 { // 36 MiB in 3 s
		t.Errorf("window: %v MiB/s, want 12", got)
	}
	if _, ok := Window(r, 4*time.Second, 2*time.Second); ok {
		t.Error("a window in a run of twice the margin")
	}
	// the last interval, closed after the drain long past the duration,
	// is not perftest's
	r.Intervals[4].EndNS = 7 * s
	if w, ok := Window(r, 5*time.Second, 0); !ok || w.Iterations != 10+11+12+13 {
		t.Errorf("drained interval: %v %d ops", ok, w.Iterations)
	}
	r.Intervals[3].EndNS = 4*s + int64(WindowSlack) // a boundary passed late still counts
	if w, ok := Window(r, 5*time.Second, time.Second); !ok || w.Iterations != 11+12+13 {
		t.Errorf("late boundary: %v %d ops", ok, w.Iterations)
	}
}

// TestMargin: perftest's margin without -f, a quarter of -D in
// whole seconds.
func TestMargin(t *testing.T) {
	for d, want := range map[time.Duration]time.Duration{2 * time.Second: 0, 5 * time.Second: time.Second, 8 * time.Second: 2 * time.Second, 10 * time.Second: 2 * time.Second} {
		if got := Margin(d); got != want {
			t.Errorf("-D %v: margin %v, want %v", d, got, want)
		}
	}
}

// TestCountWindow: the count read at the margin and at dur-margin after
// the start, as perftest's SIGALRM states mark its sample window; no
// window when the loop ended before it closed.
func TestCountWindow(t *testing.T) {
	var n atomic.Uint64
	stop := make(chan struct{})
	go func() { // one operation a millisecond
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
				n.Add(1)
			}
		}
	}()
	defer close(stop)
	w := CountWindow(n.Load, 400*time.Millisecond, 100*time.Millisecond)
	time.Sleep(450 * time.Millisecond)
	ops, span, ok := w.Stop()
	if !ok || span < 190*time.Millisecond || span > 350*time.Millisecond || ops == 0 || ops > 360 { // a loaded host fires the marks late, never early
		t.Errorf("window: %v, %d ops in %v; want about 200 ms", ok, ops, span)
	}
	if _, _, ok := CountWindow(n.Load, 400*time.Millisecond, 100*time.Millisecond).Stop(); ok {
		t.Error("a window from a loop that ended before it")
	}
}
