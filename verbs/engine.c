// Hot loops of rdmabench. See engine.h. Timestamps: rb_now_ns (cloop.h),
// CLOCK_MONOTONIC_RAW, ns.
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <string.h>
#include <arpa/inet.h>
#include "engine.h"
#include "reg.h"

// next_gap returns the gap to the next intended send, ns.
static int64_t next_gap(rb_engine *e) {
	if (!e->poisson)
		return e->interval_ns;
	uint64_t x = e->rng; // xorshift64*
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	e->rng = x;
	double u = (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / 9007199254740992.0; // [0, 1)
	return (int64_t)(-log(1.0 - u) * (double)e->interval_ns);
}

static int wc_failed(rb_engine *e, const struct ibv_wc *wc) {
	e->err_wc_wr_id = wc->wr_id;
	e->err_wc_status = wc->status;
	e->err_wc_opcode = wc->opcode;
	e->err_wc_vendor_err = wc->vendor_err;
	e->err_wc_qp_num = wc->qp_num;
	return RB_ERR_WC;
}

// poll_batch polls up to max completions. In event mode, when none is
// ready, it arms the CQ, polls again (a completion may have come before the
// arming) and then sleeps on the CQ's channel for at most 100 ms.
static int poll_batch(rb_engine *e, struct ibv_cq *cq, int max, struct ibv_wc *wcs) {
	int n = ibv_poll_cq(cq, max, wcs);
	if (n != 0 || !e->event)
		return n;
	if (ibv_req_notify_cq(cq, 0))
		return -EIO;
	if ((n = ibv_poll_cq(cq, max, wcs)) != 0)
		return n;
	struct ibv_comp_channel *ch = cq == e->scq ? e->sch : e->rch;
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	if (poll(&p, 1, 100) > 0) {
		struct ibv_cq *ev_cq;
		void *ev_ctx;
		if (ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == 0)
			ibv_ack_cq_events(ev_cq, 1);
	}
	return ibv_poll_cq(cq, max, wcs);
}

// wait_one waits until one completion arrives on cq: busy polling, or in
// event mode sleeping on the CQ's channel. With responder=1 it also returns
// RB_STOPPED once stop_at is reached.
static int wait_one(rb_engine *e, struct ibv_cq *cq, struct ibv_wc *wc, int responder, const char *what) {
	int64_t start = 0;
	for (uint64_t spins = 0;; spins++) {
		int n = poll_batch(e, cq, 1, wc);
		if (n < 0) {
			e->err_errno = n;
			return RB_ERR_POLL;
		}
		if (n == 1)
			return wc->status == IBV_WC_SUCCESS ? RB_OK : wc_failed(e, wc);
		// event mode: each pass may sleep, so each checks; busy polling
		// checks the flags every RB_CHECK_EVERY polls, the deadline (a
		// clock read) every RB_CLOCK_EVERY
		if (e->event || rb_clock_due(spins))
			RB_TRY(rb_wait_check(&e->ctl, &start, 0, responder, e->iter, what));
		else if (rb_spin_due(spins))
			RB_TRY(rb_flags_check(&e->ctl, responder, e->iter));
	}
}

// wait_byte spins until *p == v (the last byte of an RDMA WRITE arrived).
static int wait_byte(rb_engine *e, volatile uint8_t *p, uint8_t v, int responder, const char *what) {
	int64_t start = 0;
	for (uint64_t spins = 0;; spins++) {
		if (*p == v) {
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			return RB_OK;
		}
		if (rb_clock_due(spins))
			RB_TRY(rb_wait_check(&e->ctl, &start, 0, responder, e->iter, what));
		else if (rb_spin_due(spins))
			RB_TRY(rb_flags_check(&e->ctl, responder, e->iter));
	}
}

// post_recv1 posts one receive into the receive area (recv_off past its
// start when receives step), to the QP or its SRQ. Its wr_id is the
// receive's address: with an SRQ shared by several engines, a completion
// tells whose area the message landed in, and where.
static int post_recv1(rb_engine *e) {
	// UD: the GRH (40 bytes) lands first, the payload after it
	struct ibv_sge sge = { .addr = e->laddr + e->roff + e->recv_off, .length = (e->recv_len ? e->recv_len : e->size) + e->recv_extra, .lkey = e->lkey };
	if (e->recv_step && (e->recv_off += e->recv_step) + e->recv_step > e->addr_cycle)
		e->recv_off = 0;
	struct ibv_recv_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = sge.addr;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	int rc = e->srq ? ibv_post_srq_recv(e->srq, &wr, &bad) : ibv_post_recv(e->qp, &wr, &bad);
	if (rc) {
		e->err_errno = rc;
		return RB_ERR_POST;
	}
	e->recv_posted++;
	return RB_OK;
}

int rb_post_recvs(rb_engine *e, uint32_t n) {
	for (uint32_t i = 0; i < n; i++) {
		int rc = post_recv1(e);
		if (rc)
			return rc;
	}
	return RB_OK;
}

// local_base is where work requests find their local buffers: the
// pre-registered memory, or with per-op registration the per-op memory.
static inline uint64_t local_base(rb_engine *e) { return e->per_op ? e->op_base : e->laddr; }

// op_reg registers the local buffer of work request k (per-op mode), sets
// the SGE's lkey and keeps the MR in k's slot until op_dereg.
static int op_reg(rb_engine *e, struct ibv_sge *sge, uint64_t k) {
	struct ibv_mr *mr = rb_reg_errno(e->pd, sge->addr, sge->length, e->op_access, &e->err_errno);
	if (mr == NULL)
		return RB_ERR_REG;
	sge->lkey = mr->lkey;
	e->op_mrs[k % e->tx_depth] = mr;
	return RB_OK;
}

// op_dereg deregisters the MR of work request k (per-op mode), if any.
static int op_dereg(rb_engine *e, uint64_t k) {
	struct ibv_mr **slot = &e->op_mrs[k % e->tx_depth];
	if (*slot == NULL)
		return RB_OK;
	int rc = ibv_dereg_mr(*slot);
	*slot = NULL;
	if (rc) {
		e->err_errno = rc;
		return RB_ERR_DEREG;
	}
	return RB_OK;
}

// rb_op_release deregisters every per-op MR still held (after an error);
// it returns the first failure.
int rb_op_release(rb_engine *e) {
	int first = RB_OK;
	if (!e->per_op || e->op_mrs == NULL)
		return RB_OK;
	for (uint32_t i = 0; i < e->tx_depth; i++) {
		int rc = op_dereg(e, i);
		if (first == RB_OK)
			first = rc;
	}
	return first;
}

static void spread_wr(rb_engine *e, struct ibv_send_wr *wr, struct ibv_sge *sge);

// build_base fills one work request of the engine's operation (sge is its
// scatter/gather entry), off bytes into the local and remote areas, without
// the workload knobs (build_wr).
static void build_base(rb_engine *e, struct ibv_send_wr *wr, struct ibv_sge *sge, uint64_t wr_id, int signaled, uint64_t off) {
	uint64_t base = local_base(e) + off, raddr = e->raddr + off;
	*sge = (struct ibv_sge){ .addr = base, .length = e->size, .lkey = e->lkey };
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = wr_id;
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->send_flags = (signaled ? IBV_SEND_SIGNALED : 0);
	wr->opcode = (enum ibv_wr_opcode)e->op;
	if (e->op == IBV_WR_RDMA_WRITE_WITH_IMM || e->op == IBV_WR_SEND_WITH_IMM)
		wr->imm_data = htonl(e->imm + (uint32_t)wr_id);
	switch (e->op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		wr->send_flags |= e->send_flags;
		if (e->ah) {
			wr->wr.ud.ah = e->ah;
			wr->wr.ud.remote_qpn = e->remote_qpn;
			wr->wr.ud.remote_qkey = e->qkey;
		}
		break;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		wr->send_flags |= e->send_flags;
		wr->wr.rdma.remote_addr = raddr;
		wr->wr.rdma.rkey = e->rkey;
		break;
	case IBV_WR_RDMA_READ:
		sge->addr = base + e->roff;
		wr->wr.rdma.remote_addr = raddr;
		wr->wr.rdma.rkey = e->rkey;
		break;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		sge->addr = base + e->roff;
		sge->length = 8;
		wr->wr.atomic.remote_addr = raddr;
		wr->wr.atomic.rkey = e->rkey;
		wr->wr.atomic.compare_add = e->op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 1 : 0;
		wr->wr.atomic.swap = 0;
		break;
	}
}

// build_wr is build_base with the workload knobs: spreading advances its
// state, so each call builds the next work request of the spread.
static void build_wr(rb_engine *e, struct ibv_send_wr *wr, struct ibv_sge *sge, uint64_t wr_id, int signaled, uint64_t off) {
	build_base(e, wr, sge, wr_id, signaled, off);
	if (e->sp_n || e->nsge > 1)
		spread_wr(e, wr, sge);
}

// wr_slots_build builds the post list's work requests once (wr_ready),
// each linked to the next: the work of a post is then wr_next's patch.
static void wr_slots_build(rb_engine *e) {
	for (int i = 0; i < RB_MAX_POST_LIST; i++) {
		build_base(e, &e->wr_slot[i], &e->sge_slot[i], 0, 0, 0);
		e->wr_slot[i].next = i + 1 < RB_MAX_POST_LIST ? &e->wr_slot[i + 1] : NULL;
	}
	e->wr_ready = 1;
}

// wr_next readies slot i for work request k (signaled or not), off bytes
// into the areas, and returns it. Only what changes from one work request
// to the next is written: wr_id, the signaled flag, the immediate of
// WRITE_WITH_IMM and SEND_WITH_IMM, and the addresses when they step. Spreading and SGE splits
// rebuild the slot (their targets and lists change per work request).
static inline struct ibv_send_wr *wr_next(rb_engine *e, int i, uint64_t k, int sig, uint64_t off) {
	struct ibv_send_wr *wr = &e->wr_slot[i];
	struct ibv_sge *sge = &e->sge_slot[i];
	if (__builtin_expect(e->sp_n || e->nsge > 1, 0)) {
		struct ibv_send_wr *next = wr->next;
		build_wr(e, wr, sge, k, sig, off);
		wr->next = next;
		return wr;
	}
	wr->wr_id = k;
	wr->send_flags = (wr->send_flags & ~(unsigned)IBV_SEND_SIGNALED) | (sig ? IBV_SEND_SIGNALED : 0);
	if (e->op == IBV_WR_RDMA_WRITE_WITH_IMM || e->op == IBV_WR_SEND_WITH_IMM)
		wr->imm_data = htonl(e->imm + (uint32_t)k);
	if (e->addr_step) {
		uint64_t base = local_base(e) + off, raddr = e->raddr + off;
		switch (e->op) {
		case IBV_WR_RDMA_READ:
			sge->addr = base + e->roff;
			wr->wr.rdma.remote_addr = raddr;
			break;
		case IBV_WR_ATOMIC_FETCH_AND_ADD:
		case IBV_WR_ATOMIC_CMP_AND_SWP:
			sge->addr = base + e->roff;
			wr->wr.atomic.remote_addr = raddr;
			break;
		case IBV_WR_SEND:
		case IBV_WR_SEND_WITH_IMM:
			sge->addr = base;
			break;
		default: // WRITE, WRITE_WITH_IMM
			sge->addr = base;
			wr->wr.rdma.remote_addr = raddr;
			break;
		}
	}
	return wr;
}

// sp_next draws the next value of the spreading PRNG (xorshift64*).
static inline uint64_t sp_next(rb_engine *e) {
	uint64_t x = e->sp_rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	e->sp_rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

// sp_below maps a PRNG value to [0, n) (multiply-high: no division).
static inline uint64_t sp_below(uint64_t r, uint64_t n) { return (uint64_t)(((unsigned __int128)r * n) >> 64); }

// spread_wr applies the workload knobs to a work request build_wr filled:
// its target MR and offset (sp_n > 1 or a region), and its SGE split.
static void spread_wr(rb_engine *e, struct ibv_send_wr *wr, struct ibv_sge *sge) {
	if (e->sp_n) {
		uint64_t m, slot;
		if (e->sp_access == RB_SP_RANDOM) {
			m = e->sp_n > 1 ? sp_below(sp_next(e), e->sp_n) : 0;
			slot = sp_below(sp_next(e), e->sp_slots);
		} else {
			m = e->sp_m, slot = e->sp_j;
			if (++e->sp_m == e->sp_n) {
				e->sp_m = 0;
				if (++e->sp_j == e->sp_slots)
					e->sp_j = 0;
			}
		}
		if (!e->sp_raddr) { // SEND: the local buffers alone
		} else if (e->op == IBV_WR_ATOMIC_FETCH_AND_ADD || e->op == IBV_WR_ATOMIC_CMP_AND_SWP) {
			wr->wr.atomic.remote_addr = e->sp_raddr[m] + slot * e->sp_step;
			wr->wr.atomic.rkey = e->sp_rkey[m];
		} else {
			wr->wr.rdma.remote_addr = e->sp_raddr[m] + slot * e->sp_step;
			wr->wr.rdma.rkey = e->sp_rkey[m];
		}
		if (e->sp_laddr) {
			sge->addr = e->sp_laddr[m];
			sge->lkey = e->sp_lkey[m];
		}
	}
	if (e->nsge > 1) {
		struct ibv_sge *l = &e->sgl[(wr->wr_id % e->post_list) * e->nsge];
		uint32_t piece = sge->length / e->nsge;
		for (uint32_t i = 0; i < e->nsge; i++) {
			l[i].addr = sge->addr + (uint64_t)i * piece;
			l[i].length = i + 1 < e->nsge ? piece : sge->length - (e->nsge - 1) * piece;
			l[i].lkey = sge->lkey;
		}
		wr->sg_list = l;
		wr->num_sge = (int)e->nsge;
	}
}

// rb_spread_peek builds n work requests of e's op as the loops do and
// posts nothing: each one's remote address, rkey, SGE bytes in all and
// first SGE's lkey
// (tests of spread_wr without a device).
void rb_spread_peek(rb_engine *e, uint64_t n, uint64_t *raddr, uint32_t *rkey, uint32_t *sge_bytes, uint32_t *lkey) {
	for (uint64_t i = 0; i < n; i++) {
		struct ibv_send_wr wr;
		struct ibv_sge sge;
		build_wr(e, &wr, &sge, i, 0, 0);
		int atomic = e->op == IBV_WR_ATOMIC_FETCH_AND_ADD || e->op == IBV_WR_ATOMIC_CMP_AND_SWP;
		raddr[i] = atomic ? wr.wr.atomic.remote_addr : wr.wr.rdma.remote_addr;
		rkey[i] = atomic ? wr.wr.atomic.rkey : wr.wr.rdma.rkey;
		uint32_t sum = 0;
		for (int j = 0; j < wr.num_sge; j++)
			sum += wr.sg_list[j].length;
		sge_bytes[i] = sum;
		lkey[i] = wr.sg_list[0].lkey;
	}
}

static int dry_check(rb_engine *e, int n);

// post_chain posts the first n prebuilt work requests (slots 0..n-1,
// readied by wr_next) with one ibv_post_send.
static int post_chain(rb_engine *e, int n) {
	struct ibv_send_wr *last = &e->wr_slot[n - 1], *next = last->next, *bad = NULL;
	if (__builtin_expect(e->qp == NULL, 0)) // rb_post_dry: no device
		return e->dry_check ? dry_check(e, n) : RB_OK;
	last->next = NULL;
	int rc = ibv_post_send(e->qp, &e->wr_slot[0], &bad);
	last->next = next;
	if (rc) {
		e->err_errno = rc;
		return RB_ERR_POST;
	}
	return RB_OK;
}

// post_op posts the engine's operation once, signaled, at the areas'
// starts (slot 0). With per-op registration it first registers the local
// buffer (slot wr_id); the caller deregisters it after the completion
// (op_dereg).
static int post_op(rb_engine *e, uint64_t wr_id, int signaled) {
	if (!e->wr_ready)
		wr_slots_build(e);
	wr_next(e, 0, wr_id, signaled, 0);
	if (e->per_op) {
		RB_TRY(op_reg(e, &e->sge_slot[0], wr_id));
		int rc = post_chain(e, 1);
		if (rc)
			op_dereg(e, wr_id); // the post error is the one reported
		return rc;
	}
	return post_chain(e, 1);
}

// write_slot gives the WRITE ping-pong's marker for this iteration (never 0,
// different from the last one) and the last byte of the source and target
// areas: the sender sets *src, the receiver spins until *dst changes to it.
static uint8_t write_slot(rb_engine *e, volatile uint8_t **src, volatile uint8_t **dst) {
	*src = (volatile uint8_t *)(uintptr_t)(local_base(e) + e->size - 1);
	*dst = (volatile uint8_t *)(uintptr_t)(e->laddr + e->roff + e->size - 1);
	if (e->pt_marker)
		return (uint8_t)(e->iter + 1); // perftest's (char)++count: 1, 2, ... 255, 0, 1, ...
	return (uint8_t)(e->iter % 255 + 1);
}

// lat_per_op is one latency iteration with per-operation registration: t0
// is taken before ibv_reg_mr of the local buffer, t1 after its
// ibv_dereg_mr, which follows both the reply (SEND, WRITE) and the work
// request's own completion. A SEND's receive is re-posted after t1.
static int lat_per_op(rb_engine *e, int64_t *t0, int64_t *t1) {
	struct ibv_wc wc;
	uint64_t k = e->iter;
	int rc;
	volatile uint8_t *src = NULL, *dst = NULL;
	uint8_t v = 0;
	if (e->op == IBV_WR_RDMA_WRITE) {
		v = write_slot(e, &src, &dst);
		*src = v;
		__atomic_thread_fence(__ATOMIC_RELEASE);
	}
	*t0 = rb_now_ns();
	RB_TRY(post_op(e, k, 1));
	switch (e->op) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		rc = wait_one(e, e->rcq, &wc, 0, "the peer's reply (receive completion)");
		break;
	case IBV_WR_RDMA_WRITE:
		rc = wait_byte(e, dst, v, 0, "the peer's RDMA WRITE (last byte of the buffer)");
		break;
	default:
		rc = RB_OK; // READ and atomics: the completion is the reply
		break;
	}
	if (rc == RB_OK)
		rc = wait_one(e, e->scq, &wc, 0, "the completion");
	if (rc) {
		op_dereg(e, k); // the first error is the one reported
		return rc;
	}
	RB_TRY(op_dereg(e, k));
	*t1 = rb_now_ns();
	if (e->op == IBV_WR_SEND || e->op == IBV_WR_SEND_WITH_IMM || e->op == IBV_WR_RDMA_WRITE_WITH_IMM)
		RB_TRY(post_recv1(e));
	return RB_OK;
}

static inline uint64_t sample_room(rb_engine *e);
static inline void put_sample(rb_engine *e, uint64_t v);

// rb_lat_client runs n ping-pong iterations (or n single READ/atomic round
// trips) and appends one full round-trip time per iteration to samples, in
// ns: from just before the post to the moment the reply is seen. In open
// loop (interval_ns > 0) each send waits for its intended time on the
// schedule, and the sample runs from the intended time instead. In ring
// mode (open loop: Go records from another thread while the loop keeps
// its schedule) it returns RB_FULL before a send the ring has no room for.
int rb_lat_client(rb_engine *e, uint64_t n) {
	struct ibv_wc wc;
	if (!e->ring && e->nsamples + n > e->cap)
		return RB_FULL;
	for (uint64_t i = 0; i < n; i++) {
		int64_t t0, t1, intended = 0;
		// each iteration: a passive peer (READ, atomics) answers before a
		// wait's periodic check comes round, so the waits alone may never see it
		if (rb_aborted(&e->ctl))
			return RB_ABORTED;
		if (e->ring && sample_room(e) == 0) // the drainer is a whole ring behind
			return RB_FULL;
		if (e->interval_ns > 0) { // open loop: wait for the intended send time
			if (e->next_intended == 0)
				e->next_intended = e->first_intended = rb_now_ns();
			intended = e->next_intended;
			e->next_intended += next_gap(e);
			for (uint64_t spins = 0; rb_now_ns() < intended; spins++)
				if (rb_spin_due(spins) && rb_aborted(&e->ctl))
					return RB_ABORTED;
		}
		if (e->per_op) {
			RB_TRY(lat_per_op(e, &t0, &t1));
		} else switch (e->op) {
		case IBV_WR_SEND:
		case IBV_WR_SEND_WITH_IMM:
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			t0 = rb_now_ns();
			RB_TRY(post_op(e, e->iter, 1));
			RB_TRY(wait_one(e, e->rcq, &wc, 0, "the peer's reply (receive completion)"));
			t1 = e->pt_interval ? 0 : rb_now_ns();
			RB_TRY(post_recv1(e));
			RB_TRY(wait_one(e, e->scq, &wc, 0, "the send completion"));
			break;
		case IBV_WR_RDMA_WRITE: {
			volatile uint8_t *src, *dst;
			uint8_t v = write_slot(e, &src, &dst);
			*src = v;
			__atomic_thread_fence(__ATOMIC_RELEASE);
			t0 = rb_now_ns();
			RB_TRY(post_op(e, e->iter, 1));
			RB_TRY(wait_byte(e, dst, v, 0, "the peer's RDMA WRITE (last byte of the buffer)"));
			t1 = e->pt_interval ? 0 : rb_now_ns();
			RB_TRY(wait_one(e, e->scq, &wc, 0, "the RDMA WRITE completion"));
			break;
		}
		default: // READ and atomics: one full round trip, the peer's CPU is idle
			t0 = rb_now_ns();
			RB_TRY(post_op(e, e->iter, 1));
			RB_TRY(wait_one(e, e->scq, &wc, 0, "the completion"));
			t1 = e->pt_interval ? 0 : rb_now_ns(); // perftest's interval needs t0 alone
			break;
		}
		if (e->pt_interval) { // perftest's interval: from the previous post to this one
			if (e->pt_prev)
				put_sample(e, (uint64_t)(t0 - e->pt_prev));
			e->pt_prev = t0;
		} else { // open loop: from the intended send time (coordinated-omission correction)
			put_sample(e, (uint64_t)(t1 - (intended ? intended : t0)));
		}
		e->iter++;
		if (e->ring) // ring mode: completed counts the iterations for the drainer
			__atomic_store_n(&e->completed, e->completed + 1, __ATOMIC_RELEASE);
	}
	return RB_OK;
}

// rb_lat_server answers ping-pong iterations until stop_at is reached,
// abort, an error, or timeout_ns without a message.
int rb_lat_server(rb_engine *e) {
	struct ibv_wc wc;
	for (;;) {
		int rc;
		switch (e->op) {
		case IBV_WR_SEND:
		case IBV_WR_SEND_WITH_IMM:
		case IBV_WR_RDMA_WRITE_WITH_IMM:
			rc = wait_one(e, e->rcq, &wc, 1, "the client's message (receive completion)");
			if (rc == RB_STOPPED)
				return RB_OK;
			RB_TRY(rc);
			RB_TRY(post_op(e, e->iter, 1));
			e->iter++;
			RB_TRY(post_recv1(e));
			RB_TRY(wait_one(e, e->scq, &wc, 0, "the send completion"));
			break;
		case IBV_WR_RDMA_WRITE: {
			volatile uint8_t *src, *dst;
			uint8_t v = write_slot(e, &src, &dst);
			rc = wait_byte(e, dst, v, 1, "the client's RDMA WRITE (last byte of the buffer)");
			if (rc == RB_STOPPED)
				return RB_OK;
			RB_TRY(rc);
			*src = v;
			__atomic_thread_fence(__ATOMIC_RELEASE);
			RB_TRY(post_op(e, e->iter, 1));
			e->iter++;
			RB_TRY(wait_one(e, e->scq, &wc, 0, "the RDMA WRITE completion"));
			break;
		}
		default: // READ/atomics: the responder's CPU takes no part
			return RB_OK;
		}
	}
}

// paced_room is how many posts pacing allows now (up to want): all of
// them when unpaced.
static inline uint64_t paced_room(rb_engine *e, uint64_t want) {
	if (!e->pace_ns)
		return want;
	int64_t now = rb_now_ns();
	if (!e->pace_start) {
		e->pace_start = now;
		e->pace_base = e->posted;
	}
	uint64_t allowed = (uint64_t)((now - e->pace_start) / e->pace_ns) + 1; // the first post goes at once
	uint64_t done = e->posted - e->pace_base;
	if (done >= allowed)
		return 0;
	return allowed - done < want ? allowed - done : want;
}

// sample_room is how many more samples fit: in ring mode, those the
// drainer has freed; else what is left of the buffer.
static inline uint64_t sample_room(rb_engine *e) {
	if (e->ring)
		return e->cap - (e->nsamples - __atomic_load_n(&e->ring_read, __ATOMIC_ACQUIRE));
	return e->cap - e->nsamples;
}

// put_sample appends one sample (the caller checked sample_room). In ring
// mode the count is published with release order, after the value.
static inline void put_sample(rb_engine *e, uint64_t v) {
	if (e->ring) {
		e->samples[e->nsamples & (e->cap - 1)] = v;
		__atomic_store_n(&e->nsamples, e->nsamples + 1, __ATOMIC_RELEASE);
	} else if (e->nsamples < e->cap) {
		e->samples[e->nsamples++] = v;
	}
}

// bw_post posts while the send queue has room and the target is not
// reached, post_list work requests per ibv_post_send (fewer only for the
// target's tail, or while no signaled work request is outstanding). It
// reads the clock only for a post that needs a stamp: the first post (the span's
// start), a chain holding a signaled work request (its completion's
// sample), and perftest's peak stamps. *stamp, when not 0, is a clock
// read the caller made just before (the completions it has just reaped):
// the first chain uses it instead of a read of its own.
static int bw_post(rb_engine *e, int64_t *stamp) {
	if (!e->wr_ready)
		wr_slots_build(e);
	while (e->posted - e->completed < e->tx_depth && e->posted < e->target_posts) {
		uint64_t room = e->tx_depth - (e->posted - e->completed), left = e->target_posts - e->posted;
		uint64_t n = e->post_list < room ? e->post_list : room;
		if (n > left)
			n = left;
		// whole post lists, as perftest posts them: a chain the send
		// queue's room cuts short waits for room while a signaled work
		// request is outstanding (any cq_mod in a row hold one), whose
		// completion brings it; the target's tail goes as it is
		if (n < e->post_list && n < left && e->posted - e->completed >= e->cq_mod)
			break;
		if (e->pace_ns && (n = paced_room(e, n)) == 0)
			break;
		uint64_t k0 = e->posted, sigmask = 0;
		uint32_t sl = e->sig_left ? e->sig_left : e->cq_mod;
		for (uint64_t i = 0; i < n; i++) {
			uint64_t k = k0 + i;
			int sig = --sl == 0;
			if (sig)
				sl = e->cq_mod;
			if (k + 1 == e->target_posts)
				sig = 1;
			sigmask |= (uint64_t)sig << i;
			wr_next(e, (int)i, k, sig, e->addr_off);
			if (e->addr_step && (e->addr_off += e->addr_step) + e->addr_step > e->addr_cycle)
				e->addr_off = 0;
		}
		e->sig_left = sl;
		int64_t t = 0;
		if (sigmask || k0 == 0 || k0 < e->pt_stamps) {
			t = *stamp && !e->per_op ? *stamp : rb_now_ns(); // per-op: before any registration
			for (uint64_t m = sigmask; m; m &= m - 1)
				e->post_ts[(k0 + (uint64_t)__builtin_ctzll(m)) & e->ts_mask] = (uint64_t)t;
			for (uint64_t k = k0; k < k0 + n && k < e->pt_stamps; k++)
				e->pt_posted[k] = t;
			if (k0 == 0)
				e->t_first = t;
		}
		*stamp = 0;
		if (e->per_op) {
			for (uint64_t i = 0; i < n; i++) {
				int rc = op_reg(e, &e->sge_slot[i], k0 + i);
				if (rc) {
					for (uint64_t j = 0; j < i; j++)
						op_dereg(e, k0 + j);
					return rc;
				}
			}
		}
		int prc = post_chain(e, (int)n);
		if (prc) {
			if (e->per_op)
				for (uint64_t j = 0; j < n; j++)
					op_dereg(e, k0 + j);
			return prc;
		}
		e->posted += n;
	}
	return RB_OK;
}

// rb_bw_step is one pass of a bandwidth sender: post what the send queue
// has room for (bw_post), then poll the send CQ once. *got is the number
// of completions reaped; when it is not 0, *stamp is the time they were
// seen (one clock read, which the next pass's first post reuses), e->t_last
// too, and each signaled completion's sample is recorded. A pass without
// completions reads the clock only to post (bw_post).
int rb_bw_step(rb_engine *e, int64_t *stamp, int *got) {
	struct ibv_wc wcs[16];
	*got = 0;
	RB_TRY(bw_post(e, stamp));
	*stamp = 0; // good for the post right after the completions only
	int n = poll_batch(e, e->scq, 16, wcs);
	if (n < 0) {
		e->err_errno = n;
		return RB_ERR_POLL;
	}
	if (n == 0)
		return RB_OK;
	int64_t now = rb_now_ns();
	for (int i = 0; i < n; i++) {
		if (wcs[i].status != IBV_WC_SUCCESS)
			return wc_failed(e, &wcs[i]);
		uint64_t k = wcs[i].wr_id;
		// per-op: this completion also completes the unsignaled
		// work requests before it (a send queue completes in order)
		if (e->per_op)
			for (uint64_t j = e->completed; j <= k; j++)
				RB_TRY(op_dereg(e, j));
		e->completed = k + 1;
		put_sample(e, (uint64_t)(now - (int64_t)e->post_ts[k & e->ts_mask]));
		if (k < e->pt_stamps)
			e->pt_completed[k] = now;
	}
	e->t_last = now;
	*stamp = now;
	*got = n;
	return RB_OK;
}

// rb_bw_client_entry is rb_bw_client as Go calls it once per batch: it
// also records the pause since the previous return (max_pause_ns) while the
// target is not complete, and the time of this return.
int rb_bw_client_entry(rb_engine *e, int64_t until_ns) {
	int64_t now = rb_now_ns();
	if (e->t_return && e->completed < e->target_posts && now - e->t_return > e->max_pause_ns)
		e->max_pause_ns = now - e->t_return;
	int rc = rb_bw_client(e, until_ns);
	e->t_return = rb_now_ns();
	return rc;
}

// rb_bw_client streams operations: it keeps up to tx_depth outstanding,
// signals every cq_mod-th one (and the last), and stops posting after
// target_posts. For each signaled completion it appends the time from that
// work request's post to its completion (ns). It returns RB_OK when all
// target_posts completed or until_ns passed, RB_FULL when samples is full.
// The clock is read where a sample or the span needs it (rb_bw_step), and
// while no completion comes, on the first pass and then every
// RB_CLOCK_EVERY passes (until_ns and the no-progress deadline).
int rb_bw_client(rb_engine *e, int64_t until_ns) {
	int64_t idle_since = 0, stamp = 0;
	if (sample_room(e) < 16) { // ring mode: the drainer has not caught up
		e->full_returns++;
		return RB_FULL;
	}
	for (uint64_t loops = 0, idle = 0;; loops++) {
		int got;
		RB_TRY(rb_bw_step(e, &stamp, &got));
		if (got) {
			idle = 0;
			idle_since = stamp;
			if (e->completed >= e->target_posts)
				return RB_OK;
			// completions keep coming from a passive peer's device (WRITE,
			// READ) even when the peer is gone or stopped: check here too
			if (rb_aborted(&e->ctl))
				return RB_ABORTED;
			if (sample_room(e) < 16) {
				e->full_returns++;
				return RB_FULL;
			}
			if (stamp >= until_ns)
				return RB_OK;
		} else {
			uint64_t p = idle++;
			if ((e->event || rb_pass_due(p)) && rb_aborted(&e->ctl))
				return RB_ABORTED;
			if (e->event || loops == 0 || rb_clock_due(p)) {
				int64_t now = rb_now_ns();
				if (now >= until_ns)
					return RB_OK;
				if (rb_idle_expired(&e->ctl, &idle_since, now, 0))
					return rb_timeout(&e->ctl, "a send completion (no progress)");
			}
		}
	}
}

// rb_bw_server receives streamed SENDs (or WRITE_WITH_IMMs, SEND_WITH_IMMs), re-posting a
// receive for each, until stop_at messages arrived, abort, or timeout_ns
// without a message. The receive queue holds rx_depth receives.
int rb_bw_server(rb_engine *e) {
	struct ibv_wc wcs[16];
	int64_t idle_since = 0;
	for (uint64_t loops = 0, idle = 0;; loops++) {
		int n = poll_batch(e, e->rcq, 16, wcs);
		if (n < 0) {
			e->err_errno = n;
			return RB_ERR_POLL;
		}
		if (n > 0) {
			for (int i = 0; i < n; i++) {
				if (wcs[i].status != IBV_WC_SUCCESS)
					return wc_failed(e, &wcs[i]);
				e->iter++;
				RB_TRY(post_recv1(e));
			}
			idle_since = 0;
			idle = 0;
			if (rb_aborted(&e->ctl))
				return RB_ABORTED;
		}
		if (rb_stop_reached(&e->ctl, e->iter))
			return RB_OK;
		if (n == 0) {
			uint64_t p = idle++;
			if (e->event || rb_clock_due(p))
				RB_TRY(rb_wait_check(&e->ctl, &idle_since, 0, 0, e->iter, "the client's messages (no progress)"));
			else if (rb_pass_due(p) && rb_aborted(&e->ctl))
				return RB_ABORTED;
		}
	}
}

// rb_drain_send waits for n send completions.
int rb_drain_send(rb_engine *e, uint64_t n) {
	struct ibv_wc wc;
	for (uint64_t i = 0; i < n; i++)
		RB_TRY(wait_one(e, e->scq, &wc, 0, "a send completion"));
	return RB_OK;
}

// rb_bw_client_multi drives n bandwidth senders round robin on the calling
// thread: one post-and-poll step (rb_bw_step) on each engine that has not
// completed its target, in turn. It returns RB_OK when every target
// completed or until_ns passed, RB_FULL when one engine's sample buffer is
// nearly full, or that engine's error; *which is the engine concerned. The
// clock is read as rb_bw_client reads it: by the steps, and on passes
// without a completion on any engine only every RB_CLOCK_EVERY passes.
int rb_bw_client_multi(rb_engine **es, int n, int64_t until_ns, int *which) {
	int64_t idle_since = 0, stamps[n];
	uint64_t last_done = 0;
	memset(stamps, 0, sizeof(stamps));
	*which = 0;
	for (int i = 0; i < n; i++) {
		last_done += es[i]->completed;
		if (es[i]->completed < es[i]->target_posts && sample_room(es[i]) < 16) {
			es[i]->full_returns++;
			*which = i;
			return RB_FULL;
		}
	}
	for (uint64_t loops = 0, idle = 0;; loops++) {
		int active = 0;
		uint64_t done = 0;
		int64_t now = 0;
		for (int i = 0; i < n; i++) {
			rb_engine *e = es[i];
			if (e->completed < e->target_posts) {
				active++;
				int got, rc = rb_bw_step(e, &stamps[i], &got);
				if (rc == RB_OK && got) {
					now = stamps[i];
					if (e->completed < e->target_posts && rb_aborted(&e->ctl))
						rc = RB_ABORTED;
					else if (e->completed < e->target_posts && sample_room(e) < 16) {
						e->full_returns++;
						rc = RB_FULL;
					}
				}
				if (rc != RB_OK) {
					*which = i;
					return rc;
				}
			}
			done += e->completed;
		}
		if (!active)
			return RB_OK;
		if (done != last_done) {
			last_done = done;
			idle = 0;
			idle_since = now;
			if (now >= until_ns)
				return RB_OK;
			continue;
		}
		uint64_t p = idle++;
		if (rb_pass_due(p)) {
			for (int i = 0; i < n; i++) {
				if (es[i]->completed < es[i]->target_posts && rb_aborted(&es[i]->ctl)) {
					*which = i;
					return RB_ABORTED;
				}
			}
		}
		if (loops != 0 && !rb_clock_due(p))
			continue;
		now = rb_now_ns();
		if (now >= until_ns)
			return RB_OK;
		if (rb_idle_expired(&es[0]->ctl, &idle_since, now, 0)) {
			for (int i = 0; i < n; i++) {
				if (es[i]->completed < es[i]->target_posts) {
					*which = i;
					return rb_timeout(&es[i]->ctl, "a send completion (no progress on any QP of the thread)");
				}
			}
			return RB_OK;
		}
	}
}

// rb_recv_one waits for one receive completion and re-posts one receive,
// outside the timed loops (the --verify pass): *wr_id is the address of the
// receive area the message landed in (post_recv1), *byte_len its length,
// *opcode the completion's enum ibv_wc_opcode, *has_imm whether it carries
// an immediate (IBV_WC_WITH_IMM) and *imm that immediate, host order.
int rb_recv_one(rb_engine *e, uint64_t *wr_id, uint32_t *byte_len, uint32_t *opcode, int *has_imm, uint32_t *imm) {
	struct ibv_wc wc;
	RB_TRY(wait_one(e, e->rcq, &wc, 0, "a message of the verify pass (receive completion)"));
	*wr_id = wc.wr_id;
	*byte_len = wc.byte_len;
	*opcode = wc.opcode;
	*has_imm = (wc.wc_flags & IBV_WC_WITH_IMM) != 0;
	*imm = *has_imm ? ntohl(wc.imm_data) : 0;
	return post_recv1(e);
}

// rb_bw_server_multi is rb_bw_server for n engines on one thread, as
// perftest's one process does: each pass polls every engine's receive CQ
// once and re-posts a receive per message. An engine stops at its stop
// count, or when aborted. It returns RB_OK when every engine reached its
// stop count, RB_ABORTED when each has stopped and one was aborted,
// timeout_ns without a message on any engine, or an engine's error (*which
// is the engine concerned). Busy polling only: a wait on one CQ's channel
// would stall the others.
int rb_bw_server_multi(rb_engine **es, int n, int *which) {
	struct ibv_wc wcs[16];
	int64_t idle_since = 0;
	char stopped[n];
	int aborted = 0;
	memset(stopped, 0, sizeof(stopped));
	*which = 0;
	for (uint64_t loops = 0;; loops++) {
		int active = 0, progress = 0;
		for (int i = 0; i < n; i++) {
			rb_engine *e = es[i];
			if (stopped[i])
				continue;
			if (rb_aborted(&e->ctl) || rb_stop_reached(&e->ctl, e->iter)) {
				aborted |= rb_aborted(&e->ctl);
				stopped[i] = 1;
				continue;
			}
			active++;
			int m = ibv_poll_cq(e->rcq, 16, wcs);
			if (m < 0) {
				*which = i;
				e->err_errno = m;
				return RB_ERR_POLL;
			}
			for (int j = 0; j < m; j++) {
				if (wcs[j].status != IBV_WC_SUCCESS) {
					*which = i;
					return wc_failed(e, &wcs[j]);
				}
				e->iter++;
				int rc = post_recv1(e);
				if (rc) {
					*which = i;
					return rc;
				}
			}
			progress |= m > 0;
		}
		if (!active)
			return aborted ? RB_ABORTED : RB_OK;
		if (progress) {
			idle_since = 0;
		} else if (rb_clock_due(loops) && rb_idle_expired(&es[0]->ctl, &idle_since, rb_now_ns(), 0)) {
			for (int i = 0; i < n; i++) {
				if (!stopped[i]) {
					*which = i;
					return rb_timeout(&es[i]->ctl, "the client's messages (no progress on any QP of the thread)");
				}
			}
		}
	}
}

// rb_pt_lat_reply is the SEND or WRITE ping-pong's side that waits first,
// facing a perftest tool (docs/perftest.md): the drop-in's server against
// ib_send_lat's client, the drop-in's client against ib_write_lat's server
// (perftest's WRITE server posts first). n iterations of: wait for the
// peer's message, then reply. Like perftest it times its own posts: each
// sample is the time from the previous post to this one, one full round
// trip seen from this side (none for the first post since pt_prev was
// reset).
int rb_pt_lat_reply(rb_engine *e, uint64_t n) {
	struct ibv_wc wc;
	if (e->nsamples + n > e->cap)
		return RB_FULL;
	for (uint64_t i = 0; i < n; i++) {
		volatile uint8_t *src = NULL, *dst = NULL;
		uint8_t v = 0;
		if (e->op == IBV_WR_RDMA_WRITE) {
			v = write_slot(e, &src, &dst);
			RB_TRY(wait_byte(e, dst, v, 0, "the client's RDMA WRITE (last byte of the buffer)"));
			*src = v;
			__atomic_thread_fence(__ATOMIC_RELEASE);
		} else {
			RB_TRY(wait_one(e, e->rcq, &wc, 0, "the client's message (receive completion)"));
		}
		int64_t t = rb_now_ns();
		RB_TRY(post_op(e, e->iter, 1));
		if (e->pt_prev)
			e->samples[e->nsamples++] = (uint64_t)(t - e->pt_prev);
		e->pt_prev = t;
		e->iter++;
		if (e->op != IBV_WR_RDMA_WRITE)
			RB_TRY(post_recv1(e));
		RB_TRY(wait_one(e, e->scq, &wc, 0, "the reply's completion"));
	}
	return RB_OK;
}

// The posting path without a device (tests and benchmarks; e->qp NULL):
// post_chain posts nothing, and with dry_check compares each work request
// of the chain with one build_wr fills from scratch.

// dry_check compares the chain's n work requests with build_wr's: it
// returns RB_OK, or RB_ERR_POST with err_wc_wr_id the first that differs.
static int dry_check(rb_engine *e, int n) {
	for (int i = 0; i < n; i++) {
		struct ibv_send_wr *w = &e->wr_slot[i], ref;
		struct ibv_sge sge;
		uint64_t k = w->wr_id;
		uint64_t off = e->addr_step ? k % (e->addr_cycle / e->addr_step) * e->addr_step : 0; // stepping from 0 at k = 0
		build_base(e, &ref, &sge, k, (w->send_flags & IBV_SEND_SIGNALED) != 0, off);
		int same = ref.wr_id == w->wr_id && ref.send_flags == w->send_flags && ref.opcode == w->opcode &&
			   ref.num_sge == w->num_sge && ref.imm_data == w->imm_data &&
			   memcmp(&ref.wr, &w->wr, sizeof(ref.wr)) == 0 && sge.addr == w->sg_list[0].addr &&
			   sge.length == w->sg_list[0].length && sge.lkey == w->sg_list[0].lkey &&
			   (i + 1 < n ? w->next == &e->wr_slot[i + 1] : 1);
		int sig = (w->send_flags & IBV_SEND_SIGNALED) != 0;
		if (sig != ((k + 1) % e->cq_mod == 0 || k + 1 == e->target_posts))
			same = 0;
		if (!same) {
			e->err_wc_wr_id = k;
			return RB_ERR_POST;
		}
	}
	return RB_OK;
}

// rb_post_dry runs the bandwidth sender's posting (bw_post) for n work
// requests as if each completed at once, without a device: the work per
// work request of the loop's own (patching, signaling, stamps), or with
// check, each work request compared with build_wr's (dry_check).
int rb_post_dry(rb_engine *e, uint64_t n, int check) {
	int64_t stamp = 0;
	e->dry_check = check;
	e->target_posts = e->posted + n;
	while (e->posted < e->target_posts) {
		uint64_t before = e->posted;
		e->completed = e->posted; // every work request completes at once
		RB_TRY(bw_post(e, &stamp));
		if (e->posted == before)
			return RB_ERR_POST;
		e->completed = e->posted;
	}
	return RB_OK;
}

// rb_post_dry_rebuild is the posting work of the loop before prebuilt work
// requests (a reference for the benchmark): per post call a clock read,
// and per work request two divisions and a build_wr from scratch.
int rb_post_dry_rebuild(rb_engine *e, uint64_t n) {
	e->target_posts = e->posted + n;
	while (e->posted < e->target_posts) {
		struct ibv_send_wr wrs[RB_MAX_POST_LIST];
		struct ibv_sge sges[RB_MAX_POST_LIST];
		uint64_t left = e->target_posts - e->posted;
		int cnt = (int)(e->post_list < left ? e->post_list : left);
		int64_t t = rb_now_ns();
		for (int i = 0; i < cnt; i++) {
			uint64_t k = e->posted + i;
			int sig = ((k + 1) % e->cq_mod == 0) || (k + 1 == e->target_posts);
			if (sig)
				e->post_ts[k % e->tx_depth] = (uint64_t)t;
			build_wr(e, &wrs[i], &sges[i], k, sig, e->addr_off);
			if (e->addr_step && (e->addr_off += e->addr_step) + e->addr_step > e->addr_cycle)
				e->addr_off = 0;
		}
		for (int i = 0; i < cnt; i++)
			wrs[i].next = i + 1 < cnt ? &wrs[i + 1] : NULL;
		__asm__ volatile("" : : "r"(wrs) : "memory"); // the chain is used
		if (e->posted == 0)
			e->t_first = t;
		e->posted += (uint64_t)cnt;
		e->completed = e->posted;
	}
	return RB_OK;
}
