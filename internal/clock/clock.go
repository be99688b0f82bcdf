// Package clock selects the clock of rdmabench's C loops (cloop.h's
// rb_now_ns) for the whole process: the CPU's counter (rdtsc on x86,
// cntvct_el0 on arm64), calibrated against CLOCK_MONOTONIC_RAW, where that
// is sound, else CLOCK_MONOTONIC_RAW itself. A counter read costs a few ns
// and never enters the kernel; clock_gettime costs two to three times as
// much through the vDSO, and a system call where the kernel's clocksource
// is not the TSC.
//
// The counter is sound when the CPU says it is invariant (x86: the
// constant_tsc and nonstop_tsc flags; arm64: the generic timer always is)
// and the kernel keeps time with it (clocksource tsc, or arch_sys_counter
// on arm64): the kernel then vouches for its rate and its agreement across
// CPUs. Select's Auto picks it under that rule; Counter forces it (a test
// on a CPU that does not say so), Monotonic forces CLOCK_MONOTONIC_RAW.
//
// The counter's rate is calibrated once per process, over Window, against
// CLOCK_MONOTONIC_RAW; Offset tells how far the two clocks have drifted
// apart since (the run's check of the calibration).
package clock

/*
#cgo CFLAGS: -I${SRCDIR}/../cloop
#include "clock.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/rdmabench/rdmabench/bench/result"
	_ "github.com/rdmabench/rdmabench/internal/cloop" // cloop.h: rebuild when it changes
)

// Modes of Select.
const (
	Auto      = "auto"      // the counter where sound, else CLOCK_MONOTONIC_RAW
	Counter   = "tsc"       // the counter (rdtsc, cntvct_el0), calibrated
	Monotonic = "monotonic" // CLOCK_MONOTONIC_RAW
)

// Modes lists the modes of Select, the default first (--clock).
var Modes = []string{Auto, Counter, Monotonic}

// Sources, as the result's environment names them (clock_source).
const (
	SourceMonotonic = "CLOCK_MONOTONIC_RAW"
	SourceTSC       = "tsc"
	SourceCNTVCT    = "cntvct"
)

// Window is how long the calibration takes.
const Window = 20 * time.Millisecond

// Info is the clock in use.
type Info struct {
	Source string // SourceMonotonic, SourceTSC or SourceCNTVCT
	Reason string // why: the mode and what the rule found
	// The counter's calibration: its rate (ticks per second), the window
	// it was measured over, ns, and the uncertainty of the calibration's
	// two readings (ns, each): 0 on CLOCK_MONOTONIC_RAW.
	TicksPerSecond  float64
	WindowNS        int64
	UncertaintyNS   float64
	CalibratedSince time.Time // when the calibration ended
}

var (
	ensureMu sync.Mutex
	mu       sync.Mutex
	current  = Info{Source: SourceMonotonic, Reason: "default"}
	mode     = Auto
	done     bool
)

// SetMode sets the mode Ensure selects (Auto by default). It fails on an
// unknown mode.
func SetMode(m string) error {
	switch m {
	case Auto, Counter, Monotonic:
	default:
		return fmt.Errorf("clock %q: want auto, tsc or monotonic", m)
	}
	mu.Lock()
	defer mu.Unlock()
	if m != mode {
		mode, done = m, false
	}
	return nil
}

// Ensure selects the clock of SetMode's mode once per process (later calls
// return the same) and returns it.
func Ensure() (Info, error) {
	ensureMu.Lock() // one selection at a time: concurrent sessions wait for the first
	defer ensureMu.Unlock()
	mu.Lock()
	m, d := mode, done
	mu.Unlock()
	if d {
		return Current(), nil
	}
	info, err := Select(m)
	mu.Lock()
	done = err == nil
	mu.Unlock()
	return info, err
}

// Current is the clock in use.
func Current() Info {
	mu.Lock()
	defer mu.Unlock()
	return current
}

// counterSource names the CPU's counter, "" where there is none.
func counterSource() string {
	switch runtime.GOARCH {
	case "amd64", "386":
		return SourceTSC
	case "arm64":
		return SourceCNTVCT
	}
	return ""
}

// Sound reports whether the counter may time the loops (the package
// comment's rule) and why.
func Sound() (bool, string) {
	src := counterSource()
	if src == "" {
		return false, "no CPU counter on " + runtime.GOARCH
	}
	cs := readTrim("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	if src == SourceTSC {
		flags := cpuFlags()
		if !flags["constant_tsc"] || !flags["nonstop_tsc"] {
			return false, "the TSC is not invariant (/proc/cpuinfo lacks constant_tsc or nonstop_tsc)"
		}
		if cs != "tsc" {
			return false, fmt.Sprintf("the kernel's clocksource is %q, not tsc", cs)
		}
		return true, "invariant TSC, kernel clocksource tsc"
	}
	if cs != "arch_sys_counter" {
		return false, fmt.Sprintf("the kernel's clocksource is %q, not arch_sys_counter", cs)
	}
	return true, "generic timer, kernel clocksource arch_sys_counter"
}

// Select makes the loops' clock that of mode m now and returns it. Call it
// while no loop runs: the counter's anchor agrees with
// CLOCK_MONOTONIC_RAW, so timestamps taken before stay comparable to
// within the calibration's uncertainty.
func Select(m string) (Info, error) {
	if err := SetMode(m); err != nil {
		return Info{}, err
	}
	info := Info{Source: SourceMonotonic}
	ok, why := Sound()
	switch {
	case m == Monotonic:
		info.Reason = "forced (--clock monotonic)"
	case m == Auto && !ok:
		info.Reason = "auto: " + why
	case counterSource() == "":
		return Info{}, fmt.Errorf("clock tsc: %s", why)
	default:
		info = calibrate()
		info.Reason = "auto: " + why
		if m == Counter {
			info.Reason = "forced (--clock tsc); the rule: " + map[bool]string{true: "sound, ", false: "not sound, "}[ok] + why
		}
	}
	if info.Source == SourceMonotonic {
		C.rb_clock_set(0, 0, 0, 0)
	}
	mu.Lock()
	current, mode, done = info, m, true
	mu.Unlock()
	return info, nil
}

// calibrate measures the counter's rate over Window and makes it the
// loops' clock.
func calibrate() Info {
	var tk0, tk1 C.uint64_t
	var ns0, ns1 C.int64_t
	b0 := C.rb_clock_pair(&tk0, &ns0)
	time.Sleep(Window)
	b1 := C.rb_clock_pair(&tk1, &ns1)
	dns, dtk := float64(ns1-ns0), float64(tk1-tk0)
	rate := dtk / dns * 1e9
	mult := C.uint64_t(dns / dtk * (1 << 32))
	C.rb_clock_set(1, tk1, ns1, mult)
	return Info{Source: counterSource(), TicksPerSecond: rate, WindowNS: int64(dns),
		UncertaintyNS: float64(max(b0, b1)) / 2 / rate * 1e9, CalibratedSince: time.Now()}
}

// Offset is the loops' clock minus CLOCK_MONOTONIC_RAW now, ns: how far
// the counter has drifted from the calibration (0 on CLOCK_MONOTONIC_RAW).
func Offset() int64 { return int64(C.rb_clock_offset()) }

// DriftPPM is Offset over the time since the calibration, parts per
// million (0 on CLOCK_MONOTONIC_RAW).
func DriftPPM() float64 {
	info := Current()
	if info.Source == SourceMonotonic || info.CalibratedSince.IsZero() {
		return 0
	}
	since := time.Since(info.CalibratedSince)
	if since <= 0 {
		return 0
	}
	return float64(Offset()) / float64(since.Nanoseconds()) * 1e6
}

// UsesCounter reports whether the loops read the counter now.
func UsesCounter() bool { return C.rb_clock_kind() == 1 }

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// cpuFlags are the flags of the first CPU in /proc/cpuinfo.
func cpuFlags() map[string]bool {
	flags := map[string]bool{}
	for _, line := range strings.Split(readTrim("/proc/cpuinfo"), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(k) == "flags" {
			for _, f := range strings.Fields(v) {
				flags[f] = true
			}
			break
		}
	}
	return flags
}

// Now reads the loops' clock, ns.
func Now() int64 { return int64(C.rb_clock_now()) }

// ReadCost measures the mean cost of one read of the loops' clock over n
// reads, ns.
func ReadCost(n int) float64 { return float64(C.rb_clock_cost(C.int(n))) }

// Shift moves the counter clock by ns (tests: telling whose clock a
// package reads). It does nothing on CLOCK_MONOTONIC_RAW.
func Shift(ns int64) { C.rb_clock_shift(C.int64_t(ns)) }

// FillEnv selects the clock (Ensure) and describes it in env: source,
// reason and calibration. It returns a warning when the mode could not be
// had (the loops then time with CLOCK_MONOTONIC_RAW).
func FillEnv(env *result.Env) []string {
	var warn []string
	info, err := Ensure()
	if err != nil {
		warn = append(warn, fmt.Sprintf("%v: the loops time with CLOCK_MONOTONIC_RAW", err))
		info = Current()
	}
	env.ClockSource, env.ClockReason, env.ClockCalibration = info.Source, info.Reason, nil
	if info.Source != SourceMonotonic {
		env.ClockCalibration = &result.ClockCalibration{TicksPerSecond: info.TicksPerSecond, WindowNS: info.WindowNS,
			UncertaintyNS: info.UncertaintyNS}
	}
	return warn
}

// FillDrift records in env, at the end of a run, how far a counter clock
// ran from CLOCK_MONOTONIC_RAW since its calibration.
func FillDrift(env *result.Env) {
	if env.ClockCalibration != nil {
		env.ClockCalibration.DriftPPM = DriftPPM()
	}
}
