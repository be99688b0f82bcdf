// The bidirectional SEND loop. It drives the send side with rb_bw_client
// (one post-and-poll step per pass) and reaps the receive CQ in the same
// pass, re-posting one receive per message, so that a side never stops
// receiving while it sends (the peer would stall on RNR). Timestamps and
// loop control: cloop.h.
#include "bidir.h"

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
// with neither a send nor a receive completion. Busy polling only.
int rb_bidir_send(rb_engine *e, int64_t until_ns) {
	int sending = e->completed < e->target_posts;
	int64_t idle_since = rb_now_ns();
	uint64_t seen = e->completed + e->iter;
	for (uint64_t loops = 0;; loops++) {
		if (e->completed < e->target_posts)
			RB_TRY(rb_bw_client(e, 0)); // until passed: one step (RB_FULL included)
		RB_TRY(reap_recvs(e));
		if (e->completed >= e->target_posts && (sending || rb_stop_reached(&e->ctl, e->iter)))
			return RB_OK;
		if (!rb_pass_due(loops))
			continue;
		if (rb_aborted(&e->ctl))
			return RB_ABORTED;
		int64_t now = rb_now_ns();
		if (now >= until_ns)
			return RB_OK;
		uint64_t done = e->completed + e->iter;
		if (done != seen) {
			seen = done;
			idle_since = now;
		} else if (rb_idle_expired(&e->ctl, &idle_since, now, 0)) {
			return rb_timeout(&e->ctl, e->completed < e->target_posts ? "a send or receive completion (no progress)"
										: "the peer's messages (no progress)");
		}
	}
}
