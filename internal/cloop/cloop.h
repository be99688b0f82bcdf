// Loop control shared by rdmabench's C measurement loops (verbs/engine.c,
// verbs/mrbench.c, bench/sockeng/engine.c): the clock, the return codes of
// loop control, the abort flag, a responder's stop count, the cadence of
// checks in a spinning wait and the no-progress deadline. See doc.go.
//
// Every function is static inline: each cgo package that includes this
// header (with #cgo CFLAGS: -I.../internal/cloop) compiles its own copy, and
// the hot loops pay no call into another object.
#ifndef RDMABENCH_CLOOP_H
#define RDMABENCH_CLOOP_H

#include <stdint.h>
#include <time.h>

// Return codes every loop shares. A loop's own codes (its failures) take
// other values.
enum {
	RB_OK = 0,        // done: the requested iterations, the phase, or the interval ended
	RB_TIMEOUT = 4,   // no progress for timeout_ns: see rb_ctl.wait_what
	RB_ABORTED = 5,   // rb_ctl_abort was called
	RB_FULL = 6,      // the sample buffer is full; drain it and call again
	RB_STOPPED = 100, // internal: a responder reached its stop count
};

// RB_TRY returns the code of x from the calling function unless it is RB_OK.
#define RB_TRY(x) do { int rc_ = (x); if (rc_) return rc_; } while (0)

// The loops' clock. rb_now_ns gives ns on one of two clocks, chosen once
// per process before the loops run (internal/clock: Select):
//   - CLOCK_MONOTONIC_RAW (the default, rb_clk.kind 0): ns, not adjusted
//     by NTP; a vDSO read where the kernel's clocksource is the TSC, a
//     system call where it is not;
//   - the CPU's counter (rb_clk.kind 1): rdtsc on x86, cntvct_el0 on
//     arm64, converted to ns with a rate calibrated against
//     CLOCK_MONOTONIC_RAW: ns0 + (ticks - tsc0) * mult / 2^32, from an
//     anchor taken at the calibration (so the two clocks agree there).
// rb_clk is one object in the whole process (a weak definition in every
// translation unit that includes this header, merged by the linker), so
// that every cgo package's loops read the same clock.
typedef struct rb_clock {
	int kind;      // 0: CLOCK_MONOTONIC_RAW; 1: the CPU's counter
	uint64_t tsc0; // the counter at the anchor
	int64_t ns0;   // CLOCK_MONOTONIC_RAW at the anchor, ns
	uint64_t mult; // ns per tick × 2^32
} rb_clock;

__attribute__((weak)) rb_clock rb_clk;

// rb_mono_ns reads CLOCK_MONOTONIC_RAW, ns.
static inline int64_t rb_mono_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

// rb_ticks reads the CPU's counter (0 where there is none).
static inline uint64_t rb_ticks(void) {
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
	uint64_t v;
	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
	return v;
#else
	return 0;
#endif
}

// rb_now_ns reads the loops' clock, ns. Every timestamp of a sample comes
// from here.
static inline int64_t rb_now_ns(void) {
	if (rb_clk.kind == 1)
		return rb_clk.ns0 + (int64_t)(((unsigned __int128)(rb_ticks() - rb_clk.tsc0) * rb_clk.mult) >> 32);
	return rb_mono_ns();
}

// rb_clock_cost_ns measures the mean cost of one rb_now_ns call over n calls.
static inline double rb_clock_cost_ns(int n) {
	int64_t t0 = rb_now_ns(), t = t0;
	for (int i = 0; i < n; i++)
		t = rb_now_ns();
	return n > 0 ? (double)(t - t0) / n : 0;
}

// rb_ctl is the control part of a loop's state, embedded in it: what another
// thread sets (the abort flag, a responder's stop count) and what a wait's
// deadline needs. Go sets it up with rb_ctl_init.
typedef struct rb_ctl {
	int abort;             // set by rb_ctl_abort, from any thread (atomic)
	int64_t stop_at;       // a responder stops after this many iterations (atomic; -1 = not yet known)
	int64_t timeout_ns;    // longest wait without progress
	const char *wait_what; // what the loop was waiting for when it failed (static string)
} rb_ctl;

static inline void rb_ctl_init(rb_ctl *c, int64_t timeout_ns) {
	c->abort = 0;
	c->stop_at = -1;
	c->timeout_ns = timeout_ns;
	c->wait_what = NULL;
}

// rb_ctl_abort makes the running loop, or the next one, return RB_ABORTED
// at its next check.
static inline void rb_ctl_abort(rb_ctl *c) { __atomic_store_n(&c->abort, 1, __ATOMIC_RELEASE); }

// rb_ctl_set_stop tells a responder to stop once n iterations are done.
static inline void rb_ctl_set_stop(rb_ctl *c, int64_t n) { __atomic_store_n(&c->stop_at, n, __ATOMIC_RELEASE); }

static inline int rb_aborted(rb_ctl *c) { return __atomic_load_n(&c->abort, __ATOMIC_ACQUIRE); }

// rb_stop_reached reports whether iter iterations reach the stop count.
static inline int rb_stop_reached(rb_ctl *c, uint64_t iter) {
	int64_t s = __atomic_load_n(&c->stop_at, __ATOMIC_ACQUIRE);
	return s >= 0 && iter >= (uint64_t)s;
}

// A clock read costs, so a spinning loop checks the abort flag, the stop
// count and its deadline only every RB_CHECK_EVERY passes:
//   - rb_spin_due(spins) in a wait for one event (a completion, a byte):
//     never on the first spins, when the event usually comes;
//   - rb_pass_due(passes) in a streaming loop: on its first pass too, so that
//     a call whose end time has passed returns after one step.
#define RB_CHECK_EVERY 64

static inline int rb_spin_due(uint64_t spins) { return spins % RB_CHECK_EVERY == RB_CHECK_EVERY - 1; }

static inline int rb_pass_due(uint64_t passes) { return passes % RB_CHECK_EVERY == 0; }

// A spinning loop's deadlines (the no-progress timeout, an end time) are
// checked against a count, not by a clock read every few passes: the
// clock is read only every RB_CLOCK_EVERY passes without progress, so that
// a wait of typical length reads it not at all. The checks of the flags
// (rb_spin_due, rb_pass_due) stay at RB_CHECK_EVERY.
#define RB_CLOCK_EVERY 65536

static inline int rb_clock_due(uint64_t spins) { return spins % RB_CLOCK_EVERY == RB_CLOCK_EVERY - 1; }

// rb_idle_expired is the no-progress deadline: it reports whether now is
// timeout_ns or more after *since, the start of the current wait without
// progress. *since == 0 means not yet known: it becomes now - waited_ns (the
// time the caller knows it already waited, e.g. a socket's receive timeout).
// The caller sets *since (or 0) again on progress.
static inline int rb_idle_expired(rb_ctl *c, int64_t *since, int64_t now, int64_t waited_ns) {
	if (*since == 0)
		*since = now - waited_ns;
	return now - *since >= c->timeout_ns;
}

// rb_timeout records what the loop was waiting for and returns RB_TIMEOUT.
static inline int rb_timeout(rb_ctl *c, const char *what) {
	c->wait_what = what;
	return RB_TIMEOUT;
}

// rb_flags_check checks what another thread sets: RB_ABORTED, RB_STOPPED
// (stoppable, and iter reaches the stop count) or RB_OK. No clock read.
static inline int rb_flags_check(rb_ctl *c, int stoppable, uint64_t iter) {
	if (rb_aborted(c))
		return RB_ABORTED;
	if (stoppable && rb_stop_reached(c, iter))
		return RB_STOPPED;
	return RB_OK;
}

// rb_wait_check is the periodic check of a wait for one event. It returns
// RB_ABORTED, RB_STOPPED (stoppable, and iter reaches the stop count),
// RB_TIMEOUT (rb_idle_expired, with what recorded) or RB_OK. The clock is
// read only after the flags.
static inline int rb_wait_check(rb_ctl *c, int64_t *since, int64_t waited_ns, int stoppable, uint64_t iter, const char *what) {
	if (rb_aborted(c))
		return RB_ABORTED;
	if (stoppable && rb_stop_reached(c, iter))
		return RB_STOPPED;
	if (rb_idle_expired(c, since, rb_now_ns(), waited_ns))
		return rb_timeout(c, what);
	return RB_OK;
}

#endif
