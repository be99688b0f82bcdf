// Selection and calibration of the loops' clock (cloop.h's rb_clk).
#include <stdint.h>
#include "cloop.h"
#include "clock.h"

// rb_clock_pair reads the counter and CLOCK_MONOTONIC_RAW together: of
// seven tries, the one whose two counter reads around the clock read are
// closest; *tk is their midpoint. It returns that bracket, ticks.
uint64_t rb_clock_pair(uint64_t *tk, int64_t *ns) {
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 7; i++) {
		uint64_t a = rb_ticks();
		int64_t m = rb_mono_ns();
		uint64_t b = rb_ticks();
		if (b - a < best) {
			best = b - a;
			*tk = a + (b - a) / 2;
			*ns = m;
		}
	}
	return best;
}

// rb_clock_set makes the loops' clock the counter at rate ns per tick × 2^32
// (mult), anchored at the pair (tk, ns), or CLOCK_MONOTONIC_RAW (counter 0).
void rb_clock_set(int counter, uint64_t tk, int64_t ns, uint64_t mult) {
	rb_clk.tsc0 = tk;
	rb_clk.ns0 = ns;
	rb_clk.mult = mult;
	__atomic_store_n(&rb_clk.kind, counter ? 1 : 0, __ATOMIC_RELEASE);
}

// rb_clock_offset is the loops' clock minus CLOCK_MONOTONIC_RAW now, ns.
int64_t rb_clock_offset(void) {
	uint64_t tk;
	int64_t ns;
	if (rb_clk.kind != 1)
		return 0;
	rb_clock_pair(&tk, &ns);
	return rb_clk.ns0 + (int64_t)(((unsigned __int128)(tk - rb_clk.tsc0) * rb_clk.mult) >> 32) - ns;
}

int rb_clock_kind(void) { return rb_clk.kind; }

int64_t rb_clock_now(void) { return rb_now_ns(); }

double rb_clock_cost(int n) { return rb_clock_cost_ns(n); }

void rb_clock_shift(int64_t ns) { rb_clk.ns0 += ns; }
