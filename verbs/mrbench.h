// Memory-registration benchmark loops: the cost of ibv_reg_mr/ibv_dereg_mr
// and of an RDMA WRITE with per-operation registration against a pooled MR.
// Go calls each function once per batch; everything per iteration (register,
// post, poll, deregister, timestamp) happens here, in C.
#ifndef RDMABENCH_MRBENCH_H
#define RDMABENCH_MRBENCH_H

#include <stdint.h>
#include <string.h>
#include <infiniband/verbs.h>
#include "cloop.h"

// Return codes: RB_OK, RB_TIMEOUT (no completion for ctl.timeout_ns: see
// ctl.wait_what), RB_ABORTED (rb_ctl_abort), RB_FULL (the sample buffer
// cannot hold the batch) from cloop.h, and the loops' failures:
enum {
	RB_MR_ERR_REG = 1,   // ibv_reg_mr failed: see err_errno
	RB_MR_ERR_DEREG = 2, // ibv_dereg_mr failed: see err_errno
	RB_MR_ERR_POST = 3,  // ibv_post_send failed: see err_errno
	RB_MR_ERR_WC = 7,    // the WRITE completed with an error: see err_wc_*
	RB_MR_ERR_POLL = 8,  // ibv_poll_cq returned < 0: see err_errno
};

// rb_mr_reg_status reports how far rb_mr_reg_bench got and why it stopped.
typedef struct {
	uint64_t done; // reg/dereg pairs timed
	int err_errno; // with RB_MR_ERR_REG / RB_MR_ERR_DEREG
} rb_mr_reg_status;

// rb_mr_reg_bench registers and deregisters [addr, addr+len) with access n
// times and writes each call's duration (ns) to samples_reg[i] and
// samples_dereg[i]. When until_ns > 0 it stops early once the clock passes
// until_ns, after at least min(n, 2) pairs.
int rb_mr_reg_bench(struct ibv_pd *pd, uint64_t addr, uint64_t len, int access, uint64_t n,
		uint64_t *samples_reg, uint64_t *samples_dereg, int64_t until_ns, rb_mr_reg_status *st);

// rb_mr_op is one RDMA WRITE loop towards a passive peer. It lives in C
// memory (calloc) and holds no Go pointers. Fields marked (cfg) are set by Go
// before the first call.
typedef struct rb_mr_op {
	struct ibv_pd *pd;   // (cfg) PD of the per-operation registrations
	struct ibv_qp *qp;   // (cfg) connected RC QP
	struct ibv_cq *scq;  // (cfg) its send CQ
	uint64_t laddr;      // (cfg) source of the WRITEs
	uint32_t lkey;       // (cfg) pooled mode: lkey of the MR over the source
	uint64_t raddr;      // (cfg) peer's target area
	uint32_t rkey;       // (cfg)
	uint32_t size;       // (cfg) bytes per WRITE
	int access;          // (cfg) access of per-operation registrations
	int per_op;          // (cfg) 1: ibv_reg_mr + WRITE + ibv_dereg_mr per operation
	rb_ctl ctl;          // (cfg: rb_ctl_init) abort flag, longest wait for one completion

	uint64_t *samples;   // (cfg) per-operation latency, ns
	uint64_t cap;        // (cfg) its capacity, entries
	uint64_t nsamples;   // samples written since the last reset

	uint64_t iter;          // operations done
	int64_t t_first, t_last; // start of the first and end of the last operation (CLOCK_MONOTONIC_RAW ns)

	// error details
	uint64_t err_wc_wr_id;
	uint32_t err_wc_status, err_wc_vendor_err, err_wc_qp_num;
	int err_errno;
} rb_mr_op;

// rb_mr_op_run does n operations, one at a time, and appends each one's
// latency to samples: in pooled mode from just before ibv_post_send to the
// polled completion; in per-op mode from just before ibv_reg_mr to just
// after ibv_dereg_mr.
int rb_mr_op_run(rb_mr_op *o, uint64_t n);

// rb_query_odp reads the On-Demand Paging capabilities (ibv_query_device_ex).
// It returns 0 or an errno value.
static inline int rb_query_odp(struct ibv_context *ctx, uint64_t *general, uint32_t *rc, uint32_t *uc, uint32_t *ud) {
	struct ibv_device_attr_ex a;
	memset(&a, 0, sizeof(a));
	int ret = ibv_query_device_ex(ctx, NULL, &a);
	if (ret)
		return ret;
	*general = a.odp_caps.general_caps;
	*rc = a.odp_caps.per_transport_caps.rc_odp_caps;
	*uc = a.odp_caps.per_transport_caps.uc_odp_caps;
	*ud = a.odp_caps.per_transport_caps.ud_odp_caps;
	return 0;
}

#endif
