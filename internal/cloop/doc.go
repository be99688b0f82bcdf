// Package cloop documents cloop.h, the loop control that rdmabench's C
// measurement loops share: verbs/engine.c (the RDMA engine), verbs/mrbench.c
// (the memory-registration loops) and bench/sockeng/engine.c (the kernel-TCP
// baseline).
//
// The header holds what every loop needs the same way, written once:
//
//   - the clock: rb_now_ns, ns, from the CPU's counter (rdtsc,
//     cntvct_el0) calibrated against CLOCK_MONOTONIC_RAW or from
//     clock_gettime(CLOCK_MONOTONIC_RAW), as internal/clock chose it in
//     rb_clk (a weak definition: one object per process, shared by every
//     package's loops), and rb_clock_cost_ns;
//   - the return codes of loop control: RB_OK, RB_TIMEOUT, RB_ABORTED,
//     RB_FULL and the internal RB_STOPPED (a loop's own failures take other
//     values);
//   - rb_ctl, embedded in each loop's C state: the abort flag
//     (rb_ctl_abort, rb_aborted), a responder's stop count (rb_ctl_set_stop,
//     rb_stop_reached) and the no-progress timeout;
//   - the check cadence of a spinning loop: every RB_CHECK_EVERY (64) passes,
//     rb_spin_due in a wait for one event (never on the first spins),
//     rb_pass_due in a streaming loop (on the first pass too), for the flags
//     (rb_flags_check); the clock for a deadline only every RB_CLOCK_EVERY
//     (65,536) passes without progress (rb_clock_due);
//   - the no-progress deadline, rb_idle_expired, and rb_wait_check, the
//     periodic check of a wait (abort, stop, deadline).
//
// Every function is static inline, so each cgo package compiles its own
// copy. A package includes the header with
//
//	#cgo CFLAGS: -I${SRCDIR}/../internal/cloop
//
// (the path relative to the package) and imports this package for its side
// effect only:
//
//	import _ "github.com/rdmabench/rdmabench/internal/cloop"
//
// The go command does not track headers outside a package's directory, so
// without the import an edit of cloop.h would not rebuild the packages that
// include it. The import makes the header, embedded below, part of their
// build inputs.
package cloop

import _ "embed"

// Header is cloop.h. It is embedded so that the build cache of every package
// importing cloop depends on the header's text.
//
//go:embed cloop.h
var Header string
