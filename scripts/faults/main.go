// Command faults is rdmabench's own fault-injection suite. It runs inside
// the SoftRoCE guest (make vm-test, part of 'make test'), drives
// the rdmabench binary as servers and clients, and plays bad peers on raw
// TCP connections: garbage and malformed frames, floods, idle, slow and
// silent peers, authentication failures, kills and stops of either side,
// memory bombs and absurd flag values. It prints one line per case and a
// total, and exits 1 when any case fails.
//
// Cases live in one file per group (auth.go, budget.go, flags.go, ...)
// and register themselves from init with register.
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// Case is one fault and what rdmabench must do about it.
type Case struct {
	Group string // file it lives in: auth, session, budget, flags, waits, frames
	Name  string
	// Run returns nil when rdmabench behaved; it uses t to start processes
	// and must leave nothing running (t's cleanups kill what it started).
	Run func(t *T) error
	// Parallel cases may run at once with their neighbours that are
	// parallel too (up to -j): cases that only start short-lived clients
	// with their own port, and time nothing that load could stretch, or
	// whose timing is a wait on a deadline with seconds of slack (a stopped
	// or idle peer).
	Parallel bool
}

var cases []Case

// register adds cases to the suite (from init functions).
func register(cs ...Case) { cases = append(cases, cs...) }

func main() {
	bin := flag.String("bin", "rdmabench", "the rdmabench binary under test")
	only := flag.String("run", "", "run only cases whose group/name matches this regexp")
	list := flag.Bool("list", false, "list the cases and exit")
	jobs := flag.Int("j", 4, "run up to this many parallel cases at once")
	flag.Parse()
	re, err := regexp.Compile(*only)
	if err != nil {
		fmt.Fprintf(os.Stderr, "faults: -run %q: %v\n", *only, err)
		os.Exit(2)
	}
	sort.SliceStable(cases, func(i, j int) bool { return cases[i].Group < cases[j].Group })
	var run []Case
	for _, c := range cases {
		if re.MatchString(c.Group + "/" + c.Name) {
			run = append(run, c)
		}
	}
	start := time.Now()
	var pass, fail int
	for i := 0; i < len(run); {
		if *list {
			fmt.Println(run[i].Group + "/" + run[i].Name)
			i++
			continue
		}
		// a batch: one serial case, or a run of parallel ones
		j := i + 1
		if run[i].Parallel {
			for j < len(run) && run[j].Parallel {
				j++
			}
		}
		outs := runBatch(run[i:j], *bin, *jobs)
		for k, o := range outs {
			id := run[i+k].Group + "/" + run[i+k].Name
			if o.err != nil {
				fail++
				fmt.Printf("FAIL %-48s %6v  %v\n", id, o.took, o.err)
				fmt.Print(o.logs)
			} else {
				pass++
				fmt.Printf("ok   %-48s %6v\n", id, o.took)
			}
		}
		i = j
	}
	if *list {
		return
	}
	fmt.Printf("faults: %d cases, %d passed, %d failed, %v\n", pass+fail, pass, fail, time.Since(start).Round(time.Second))
	if fail > 0 || pass == 0 {
		os.Exit(1)
	}
}

// outcome is one case's result.
type outcome struct {
	err  error
	took time.Duration
	logs string // the processes' output, on failure
}

// runBatch runs cs, at most jobs at once when there are several (all
// parallel), and returns their outcomes in order.
func runBatch(cs []Case, bin string, jobs int) []outcome {
	outs := make([]outcome, len(cs))
	ts := make([]*T, len(cs))
	for i, c := range cs {
		ts[i] = newT(bin, c.Group+"/"+c.Name) // ports in order, before any goroutine
	}
	sem := make(chan struct{}, max(1, jobs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			t0 := time.Now()
			err := runCase(c, ts[i])
			outs[i] = outcome{err: err, took: time.Since(t0).Round(10 * time.Millisecond)}
			if err != nil {
				var b strings.Builder
				ts[i].dumpLogs(&b)
				outs[i].logs = b.String()
			}
		}()
	}
	wg.Wait()
	return outs
}

// runCase runs c with its cleanups, turning a panic into a failure.
func runCase(c Case, t *T) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
		if cerr := t.cleanup(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	return c.Run(t)
}
