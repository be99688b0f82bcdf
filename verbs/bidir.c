// The bidirectional SEND loop. It drives the send side with rb_bw_client
// (one post-and-poll step per pass) and reaps the receive CQ in the same
// pass, re-posting one receive per message, so that a side never stops
// receiving while it sends (the peer would stall on RNR). Timestamps and
// loop control: cloop.h.
#include "bidir.h"

// sample_room_bidir is how many more samples the (ring) buffer holds, as
// engine.c's sample_room.
static inline uint64_t sample_room_bidir(rb_engine *e) {
	if (e->ring)
		return e->cap - (e->nsamples - __atomic_load_n(&e->ring_read, __ATOMIC_ACQUIRE));
	return e->cap - e->nsamples;
}

// reap_recvs polls the receive CQ once: it counts each arrived message in
// e->iter and re-posts a receive for it. It returns RB_OK or the failure.
static int reap_recvs(rb_engine *e) {
	struct ibv_wc wcs[16];
	int n = ibv_poll_cq(e->rcq, 16, wcs);
	if (n < 0) {
		e->err_errno = n;
		return RB_ERR_POLL;
	}
	for (int i = 0; i < n; i++) {
		if (wcs[i].status != IBV_WC_SUCCESS) {
			e->err_wc_wr_id = wcs[i].wr_id;
			e->err_wc_status = wcs[i].status;
			e->err_wc_opcode = wcs[i].opcode;
			e->err_wc_vendor_err = wcs[i].vendor_err;
			e->err_wc_qp_num = wcs[i].qp_num;
			return RB_ERR_WC;
		}
		e->iter++;
		RB_TRY(rb_post_recvs(e, 1));
	}
	return RB_OK;
}

// rb_bidir_send streams SENDs as rb_bw_client does (tx_depth outstanding,
// every cq_mod-th signaled, a sample per signaled completion, at most
// target_posts) while it receives the peer's. A call that starts with sends
// to complete returns RB_OK once they are complete; one that starts with
// none returns RB_OK once the messages received reach the stop count
// (rb_ctl_set_stop). Either returns RB_OK when until_ns passes, RB_FULL
// when the sample buffer is nearly full, and RB_TIMEOUT after timeout_ns
// with neither a send nor a receive completion. Busy polling only. The
// clock is read by the send steps (rb_bw_step) and, while no send
// completes, on the first pass and then every RB_CLOCK_EVERY passes.
int rb_bidir_send(rb_engine *e, int64_t until_ns) {
	int sending = e->completed < e->target_posts;
	int64_t idle_since = 0, stamp = 0;
	uint64_t seen = e->completed + e->iter;
	for (uint64_t loops = 0, idle = 0;; loops++) {
		int got = 0;
		if (e->completed < e->target_posts) {
			if (sample_room_bidir(e) < 16) {
				e->full_returns++;
				return RB_FULL;
			}
			RB_TRY(rb_bw_step(e, &stamp, &got));
		}
		RB_TRY(reap_recvs(e));
		if (e->completed >= e->target_posts && (sending || rb_stop_reached(&e->ctl, e->iter)))
			return RB_OK;
		uint64_t done = e->completed + e->iter;
		if (got) {
			if (rb_aborted(&e->ctl))
				return RB_ABORTED;
			if (stamp >= until_ns)
				return RB_OK;
		}
		if (done != seen) {
			seen = done;
			idle = 0;
			idle_since = got ? stamp : 0;
			// receives alone (the sends complete): the end time still counts
			if (got || !rb_clock_due(loops) || rb_now_ns() < until_ns)
				continue;
			return RB_OK;
		}
		uint64_t p = idle++;
		if (rb_pass_due(p) && rb_aborted(&e->ctl))
			return RB_ABORTED;
		if (loops != 0 && !rb_clock_due(p))
			continue;
		int64_t now = rb_now_ns();
		if (now >= until_ns)
			return RB_OK;
		if (rb_idle_expired(&e->ctl, &idle_since, now, 0)) {
			return rb_timeout(&e->ctl, e->completed < e->target_posts ? "a send or receive completion (no progress)"
										: "the peer's messages (no progress)");
		}
	}
}
