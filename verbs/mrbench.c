// Memory-registration benchmark loops. See mrbench.h. Timestamps:
// rb_now_ns (cloop.h), CLOCK_MONOTONIC_RAW, ns, as in engine.c.
#include <errno.h>
#include <string.h>
#include "mrbench.h"
#include "reg.h"

int rb_mr_reg_bench(struct ibv_pd *pd, uint64_t addr, uint64_t len, int access, uint64_t n,
		uint64_t *samples_reg, uint64_t *samples_dereg, int64_t until_ns, rb_mr_reg_status *st) {
	st->done = 0;
	st->err_errno = 0;
	for (uint64_t i = 0; i < n; i++) {
		int64_t t0 = rb_now_ns();
		int e = 0;
		struct ibv_mr *mr = rb_reg_errno(pd, addr, len, access, &e);
		int64_t t1 = rb_now_ns();
		if (mr == NULL) {
			st->err_errno = e;
			return RB_MR_ERR_REG;
		}
		int rc = ibv_dereg_mr(mr);
		int64_t t2 = rb_now_ns();
		if (rc) {
			st->err_errno = rc;
			return RB_MR_ERR_DEREG;
		}
		samples_reg[i] = (uint64_t)(t1 - t0);
		samples_dereg[i] = (uint64_t)(t2 - t1);
		st->done = i + 1;
		if (until_ns > 0 && t2 >= until_ns && i + 1 >= 2)
			break;
	}
	return RB_OK;
}

// post_write posts one signaled RDMA WRITE of the source with lkey.
static int post_write(rb_mr_op *o, uint32_t lkey) {
	struct ibv_sge sge = { .addr = o->laddr, .length = o->size, .lkey = lkey };
	struct ibv_send_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = o->iter;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = o->raddr;
	wr.wr.rdma.rkey = o->rkey;
	int rc = ibv_post_send(o->qp, &wr, &bad);
	if (rc) {
		o->err_errno = rc;
		return RB_MR_ERR_POST;
	}
	return RB_OK;
}

// wait_write polls the send CQ until the WRITE's completion arrives, with a
// no-progress deadline of ctl.timeout_ns.
static int wait_write(rb_mr_op *o) {
	struct ibv_wc wc;
	int64_t start = 0;
	for (uint64_t spins = 0;; spins++) {
		int n = ibv_poll_cq(o->scq, 1, &wc);
		if (n < 0) {
			o->err_errno = n;
			return RB_MR_ERR_POLL;
		}
		if (n == 1) {
			if (wc.status == IBV_WC_SUCCESS)
				return RB_OK;
			o->err_wc_wr_id = wc.wr_id;
			o->err_wc_status = wc.status;
			o->err_wc_vendor_err = wc.vendor_err;
			o->err_wc_qp_num = wc.qp_num;
			return RB_MR_ERR_WC;
		}
		if (rb_spin_due(spins))
			RB_TRY(rb_wait_check(&o->ctl, &start, 0, 0, o->iter, "the RDMA WRITE completion"));
	}
}

int rb_mr_op_run(rb_mr_op *o, uint64_t n) {
	if (o->nsamples + n > o->cap)
		return RB_FULL;
	for (uint64_t i = 0; i < n; i++) {
		int64_t t0 = rb_now_ns();
		if (o->per_op) {
			struct ibv_mr *mr = rb_reg_errno(o->pd, o->laddr, o->size, o->access, &o->err_errno);
			if (mr == NULL)
				return RB_MR_ERR_REG;
			int rc = post_write(o, mr->lkey);
			if (rc == RB_OK)
				rc = wait_write(o);
			// Deregister even after an error (the first error is reported).
			int drc = ibv_dereg_mr(mr);
			if (rc)
				return rc;
			if (drc) {
				o->err_errno = drc;
				return RB_MR_ERR_DEREG;
			}
		} else {
			int rc = post_write(o, o->lkey);
			if (rc == RB_OK)
				rc = wait_write(o);
			if (rc)
				return rc;
		}
		int64_t t1 = rb_now_ns();
		if (o->t_first == 0)
			o->t_first = t0;
		o->t_last = t1;
		o->samples[o->nsamples++] = (uint64_t)(t1 - t0);
		o->iter++;
	}
	return RB_OK;
}
