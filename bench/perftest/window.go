package perftest

import (
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
)

// perftest's duration mode (-D), as the drop-in takes its figures facing perftest:
// perftest runs for -D seconds and counts only the operations completed
// between its margins: from margin seconds after its start to margin
// seconds before its end (its SIGALRM states START, SAMPLE, STOP_SAMPLE,
// END), the margin a quarter of -D in whole seconds unless -f sets it
// (-D 2: none; -D 5: 1 s). The drop-in runs its duration loop for the
// whole -D and takes the same middle from its one-second intervals.

// WindowSlack is how late a one-second interval may close and still
// count in Window.
const WindowSlack = 250 * time.Millisecond

// Margin is perftest's margin for a -D of dur without -f: dur/4
// in whole seconds (alarm(2) takes seconds).
func Margin(dur time.Duration) time.Duration {
	return time.Duration(int64(dur.Seconds())/4) * time.Second
}

// Window is r's figures over the middle of a -D run: the
// intervals that lie between margin and dur-margin (each one second,
// closed where the loop passed its boundary: up to WindowSlack late). The
// last one, which the loop closes after its final completions (those it
// waited for after the duration), is left out, as perftest counts nothing
// after its sample ends. ok is false when no interval lies there.
func Window(r result.Result, dur, margin time.Duration) (w result.Result, ok bool) {
	var ops, from, to int64
	from = -1
	for _, iv := range r.Intervals {
		if iv.StartNS < int64(margin) || iv.EndNS > int64(dur-margin+WindowSlack) {
			continue
		}
		if from < 0 {
			from = iv.StartNS
		}
		to = iv.EndNS
		ops += iv.Ops
	}
	if from < 0 || to <= from {
		return r, false
	}
	w = r
	w.Iterations, w.DurationNS = ops, to-from
	w.Bandwidth = result.NewBandwidth(r.SizeBytes, ops, to-from)
	return w, true
}

// WindowCount reads a loop's operation count where perftest's SIGALRM
// states mark its sample window, margin and dur-margin after it starts:
// the latency tools' -D, whose sides each count on their own clock
// (CountWindow).
type WindowCount struct {
	mu     sync.Mutex
	c0, c1 uint64
	t0, t1 time.Time
	n      int // readings taken
	timers [2]*time.Timer
}

// CountWindow starts the window now; count is read from another goroutine
// (one aligned word the loop writes).
func CountWindow(count func() uint64, dur, margin time.Duration) *WindowCount {
	w := &WindowCount{}
	read := func(c *uint64, t *time.Time) func() {
		return func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			*c, *t = count(), time.Now()
			w.n++
		}
	}
	w.timers[0] = time.AfterFunc(margin, read(&w.c0, &w.t0))
	w.timers[1] = time.AfterFunc(dur-margin, read(&w.c1, &w.t1))
	return w
}

// Stop ends the window: its operations and span, ok false when the loop
// ended before the window did.
func (w *WindowCount) Stop() (ops uint64, span time.Duration, ok bool) {
	for _, t := range w.timers {
		t.Stop()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n < 2 || w.c1 < w.c0 {
		return 0, 0, false
	}
	return w.c1 - w.c0, w.t1.Sub(w.t0), true
}
