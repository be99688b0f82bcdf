package faults

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rdmabench/rdmabench/internal/testutil/vmtest"
)

// Case is one fault and what rdmabench must do about it.
type Case struct {
	Group string // file it lives in: auth, session, budget, flags, waits, frames
	Name  string
	// Run returns nil when rdmabench behaved; it uses f to start processes
	// and must leave nothing running (f's cleanup kills what it started).
	Run func(f *Fx) error
	// Parallel cases may run at once with their neighbours that are
	// parallel too (up to -faults.j): cases that only start short-lived
	// clients with their own port, and time nothing that load could
	// stretch, or whose timing is a wait on a deadline with seconds of
	// slack (a stopped or idle peer).
	Parallel bool
}

var cases []Case

// register adds cases to the suite (from init functions).
func register(cs ...Case) { cases = append(cases, cs...) }

var jobs = flag.Int("faults.j", 4, "run up to this many parallel cases at once")

// caseLimit bounds one case: past it, the case's context kills whatever it
// started (a hung process ends, and so does every wait on it).
const caseLimit = 4 * time.Minute

// TestFaults runs every case as the subtest group/name (-run
// 'TestFaults/waits/' runs one group), in order of group: a serial case
// alone, a run of parallel ones at once (up to -faults.j).
func TestFaults(t *testing.T) {
	vmtest.RequireGuest(t, "the fault suite runs in the one-guest bed (go test -exec build/vmexec ./internal/e2e/faults): it needs rxe0, rxe1 on dummy0 (192.0.2.1) and root")
	bin := vmtest.Binary(t)
	all := append([]Case(nil), cases...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].Group < all[j].Group })
	if len(all) == 0 {
		t.Fatal("no cases registered")
	}
	for i := 0; i < len(all); {
		// a batch: one serial case, or a run of parallel ones
		j := i + 1
		if all[i].Parallel {
			for j < len(all) && all[j].Parallel {
				j++
			}
		}
		runBatch(t, all[i:j], bin, 19001+i)
		i = j
	}
}

// runBatch runs cs as subtests, at most -faults.j at once when there are
// several (all parallel); case k gets the control port port+k.
func runBatch(t *testing.T, cs []Case, bin string, port int) {
	sem := make(chan struct{}, max(1, *jobs))
	var wg sync.WaitGroup
	for k, c := range cs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			// t.Run may be called from several goroutines at once; each
			// returns when its case has ended
			t.Run(c.Group+"/"+c.Name, func(t *testing.T) { runCase(t, c, bin, port+k) })
		}()
	}
	wg.Wait()
}

// runCase runs c with its cleanup, turning a panic into a failure and
// reporting the processes' output when it fails.
func runCase(t *testing.T, c Case, bin string, port int) {
	limit := caseLimit
	if d, ok := t.Deadline(); ok && time.Until(d)-10*time.Second < limit {
		limit = time.Until(d) - 10*time.Second // end it before go test's own timeout panics without a word
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	f := newFx(ctx, t, bin, port)
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return c.Run(f)
	}()
	if cerr := f.cleanup(); cerr != nil && err == nil {
		err = cerr
	}
	if ctx.Err() != nil && err != nil {
		err = fmt.Errorf("%v (the case ran into its %v limit: its processes were killed)", err, limit.Round(time.Second))
	}
	if err != nil {
		var b strings.Builder
		f.dumpLogs(&b)
		t.Errorf("%v\n%s", err, b.String())
	}
}
