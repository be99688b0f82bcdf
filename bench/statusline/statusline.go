// Package statusline is a test's status line on a terminal: elapsed and
// remaining time, operations done, p50 and p99 so far, rewritten in place
// while the test runs (outside every timed interval: between a loop's
// batches, or from the sample drainer).
package statusline

import (
	"fmt"
	"io"
	"time"

	"github.com/rdmabench/rdmabench/bench/drain"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/hist"
)

// Every is how often the line is rewritten (the drainer passes as often
// while the line is live).
const Every = drain.LiveEvery

// Line is one test's line. W nil: no line (Update and Clear do nothing).
type Line struct {
	W      io.Writer
	Name   string
	Start  int64         // engine clock, ns
	Total  int64         // iterations, or 0 in duration mode
	Dur    time.Duration // duration mode
	Div    float64       // the latency's divisor (2: RTT/2)
	next   int64
	active bool
}

// Delay delays each Update (tests: a slow recorder of samples, whose time
// must stay out of every sample).
var Delay time.Duration

// Update prints the line when it is due: now (engine clock), the
// operations done and the latency histogram so far.
func (p *Line) Update(now, done int64, h *hist.Histogram) {
	time.Sleep(Delay)
	if p.W == nil || now < p.next {
		return
	}
	p.next = now + int64(Every)
	elapsed := time.Duration(now - p.Start)
	left := "?"
	switch {
	case p.Dur > 0:
		left = (p.Dur - elapsed).Round(100 * time.Millisecond).String()
	case done > 0 && p.Total > 0:
		left = (elapsed * time.Duration(p.Total-done) / time.Duration(done)).Round(100 * time.Millisecond).String()
	}
	p50, ok50 := h.Percentile(50)
	p99, ok99 := h.Percentile(99)
	fmt.Fprintf(p.W, "\r%s: %s elapsed, %s left, %d done, p50 %s us, p99 %s us\033[K", p.Name,
		elapsed.Round(100*time.Millisecond), left, done, result.NanosOf(hist.Value{NS: p50, OK: ok50}, p.Div).US(),
		result.NanosOf(hist.Value{NS: p99, OK: ok99}, p.Div).US())
	p.active = true
}

// Clear removes the line.
func (p *Line) Clear() {
	if p.active {
		fmt.Fprint(p.W, "\r\033[K")
	}
}
