package peer

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/bench/measure"
	"github.com/rdmabench/rdmabench/bench/result"
	"github.com/rdmabench/rdmabench/bench/spec"
	"github.com/rdmabench/rdmabench/verbs"
)

// peerLat is a ping-pong side facing a peer that answers until stopAt,
// then sends nothing more: a round trip of rtt each (its sample is the time
// it really took, as the engine's are), and after stopAt a
// wait that only abort ends (as the engine's wait for a message that never
// comes). Pure: it serves the host test of the -D cut, not the real path.
type peerLat struct {
	rtt     time.Duration
	stopAt  time.Time
	samples []uint64
	once    sync.Once
	aborted chan struct{}
}

func (p *peerLat) Capacity() int     { return 1 << 16 }
func (p *peerLat) ResetSamples()     { p.samples = p.samples[:0] }
func (p *peerLat) Samples() []uint64 { return p.samples }
func (p *peerLat) abort()            { p.once.Do(func() { close(p.aborted) }) }
func (p *peerLat) LatClient(n int) error {
	for range n {
		select {
		case <-p.aborted:
			return fmt.Errorf("latency loop: %w", verbs.ErrAborted)
		default:
		}
		if time.Now().After(p.stopAt) {
			<-p.aborted
			return fmt.Errorf("latency loop: %w", verbs.ErrAborted)
		}
		t0 := time.Now()
		time.Sleep(p.rtt)
		p.samples = append(p.samples, uint64(time.Since(t0))) // what it took: a loaded host stretches the sleep
	}
	return nil
}

// TestPerftestLatDuration: a -D ping-pong side facing a perftest peer
// that stops first (each side stops on its own clock) ends
// latStopGrace after its duration, without an error, and reports the
// round trips it completed (#iterations = its samples); facing one that
// answers throughout it ends at its duration.
func TestPerftestLatDuration(t *testing.T) {
	const dur = 400 * time.Millisecond
	for _, c := range []struct {
		name     string
		peerStop time.Duration
	}{{"peer stops first", dur - 150*time.Millisecond}, {"peer answers throughout", time.Hour}} {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			p := &peerLat{rtt: 2 * time.Millisecond, stopAt: start.Add(c.peerStop), aborted: make(chan struct{})}
			reset := false
			s := spec.Spec{Op: result.OpSend, Mode: result.ModeLat, Size: 2, Duration: dur}
			r, err := dropInLatFor(p, p.abort, func() { reset = true }, result.Result{SizeBytes: 2}, s, measure.Options{})
			took := time.Since(start)
			if err != nil {
				t.Fatalf("%v after %v", err, took)
			}
			if took > dur+latStopGrace+300*time.Millisecond {
				t.Errorf("ended after %v, want by %v", took, dur+latStopGrace)
			}
			if r.Iterations <= 0 || r.Iterations != r.Samples {
				t.Errorf("#iterations %d, samples %d: want the samples, > 0", r.Iterations, r.Samples)
			}
			if c.peerStop < dur && (r.DurationNS > int64(c.peerStop+50*time.Millisecond) || r.DurationNS < int64(c.peerStop-50*time.Millisecond)) {
				t.Errorf("span %v, want about %v (to the last round trip, not the Abort)", time.Duration(r.DurationNS), c.peerStop)
			}
			if want := c.peerStop < dur; reset != want {
				t.Errorf("ResetAbort called %v, want %v", reset, want)
			}
			t.Logf("%d round trips in %v", r.Iterations, took)
		})
	}
}
