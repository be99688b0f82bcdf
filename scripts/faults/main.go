// Command faults is rdmabench's own fault-injection suite. It runs inside
// the SoftRoCE guest (scripts/guest-test.sh, part of 'make test'), drives
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
	"time"
)

// Case is one fault and what rdmabench must do about it.
type Case struct {
	Group string // file it lives in: auth, session, budget, flags, waits, frames
	Name  string
	// Run returns nil when rdmabench behaved; it uses t to start processes
	// and must leave nothing running (t's cleanups kill what it started).
	Run func(t *T) error
}

var cases []Case

// register adds cases to the suite (from init functions).
func register(cs ...Case) { cases = append(cases, cs...) }

func main() {
	bin := flag.String("bin", "rdmabench", "the rdmabench binary under test")
	only := flag.String("run", "", "run only cases whose group/name matches this regexp")
	list := flag.Bool("list", false, "list the cases and exit")
	flag.Parse()
	re, err := regexp.Compile(*only)
	if err != nil {
		fmt.Fprintf(os.Stderr, "faults: -run %q: %v\n", *only, err)
		os.Exit(2)
	}
	sort.SliceStable(cases, func(i, j int) bool { return cases[i].Group < cases[j].Group })
	start := time.Now()
	var pass, fail int
	for _, c := range cases {
		id := c.Group + "/" + c.Name
		if !re.MatchString(id) {
			continue
		}
		if *list {
			fmt.Println(id)
			continue
		}
		t := newT(*bin, id)
		t0 := time.Now()
		err := runCase(c, t)
		d := time.Since(t0).Round(10 * time.Millisecond)
		if err != nil {
			fail++
			fmt.Printf("FAIL %-48s %6v  %v\n", id, d, err)
			t.dumpLogs(os.Stdout)
		} else {
			pass++
			fmt.Printf("ok   %-48s %6v\n", id, d)
		}
	}
	if *list {
		return
	}
	fmt.Printf("faults: %d cases, %d passed, %d failed, %v\n", pass+fail, pass, fail, time.Since(start).Round(time.Second))
	if fail > 0 || pass == 0 {
		os.Exit(1)
	}
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
