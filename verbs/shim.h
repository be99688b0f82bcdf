// Small C shims for verbs that are macros, unions or byte-order sensitive.
// They take and return scalars so Go never builds a C struct holding a pointer.
#ifndef RDMABENCH_SHIM_H
#define RDMABENCH_SHIM_H

#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

// ibv_query_port is a macro over a compat symbol that cgo cannot call.
static inline int rb_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr) {
	memset(attr, 0, sizeof(*attr));
	return ibv_query_port(ctx, port, attr);
}

static inline struct ibv_device *rb_dev_at(struct ibv_device **list, int i) { return list[i]; }

// rb_wc is a completion reduced to scalars.
typedef struct {
	uint64_t wr_id;
	uint32_t status, opcode, vendor_err, byte_len, qp_num, src_qp, imm_data, wc_flags;
} rb_wc;

static inline int rb_poll_one(struct ibv_cq *cq, rb_wc *out) {
	struct ibv_wc wc;
	int n = ibv_poll_cq(cq, 1, &wc);
	if (n <= 0) return n;
	out->wr_id = wc.wr_id;
	out->status = wc.status;
	out->opcode = wc.opcode;
	out->vendor_err = wc.vendor_err;
	out->byte_len = wc.byte_len;
	out->qp_num = wc.qp_num;
	out->src_qp = wc.src_qp;
	out->imm_data = (wc.wc_flags & IBV_WC_WITH_IMM) ? ntohl(wc.imm_data) : 0;
	out->wc_flags = wc.wc_flags;
	return 1;
}

// rb_qp_caps holds what the caller asks for and, after creation, what the
// device granted.
typedef struct {
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline_data;
} rb_qp_caps;

// rb_qp_init_attr fills a for a QP of qp_type on scq/rcq asking for caps;
// srq, when not NULL, is the shared receive queue its receives come from.
static inline void rb_qp_init_attr(struct ibv_qp_init_attr *a, struct ibv_cq *scq, struct ibv_cq *rcq,
		struct ibv_srq *srq, int qp_type, int sq_sig_all, const rb_qp_caps *caps) {
	memset(a, 0, sizeof(*a));
	a->send_cq = scq;
	a->recv_cq = rcq;
	a->srq = srq;
	a->qp_type = (enum ibv_qp_type)qp_type;
	a->sq_sig_all = sq_sig_all;
	a->cap.max_send_wr = caps->max_send_wr;
	a->cap.max_recv_wr = caps->max_recv_wr;
	a->cap.max_send_sge = caps->max_send_sge;
	a->cap.max_recv_sge = caps->max_recv_sge;
	a->cap.max_inline_data = caps->max_inline_data;
}

// rb_qp_granted copies the sizes the device granted back into caps.
static inline void rb_qp_granted(rb_qp_caps *caps, const struct ibv_qp_init_attr *a) {
	caps->max_send_wr = a->cap.max_send_wr;
	caps->max_recv_wr = a->cap.max_recv_wr;
	caps->max_send_sge = a->cap.max_send_sge;
	caps->max_recv_sge = a->cap.max_recv_sge;
	caps->max_inline_data = a->cap.max_inline_data;
}

static inline struct ibv_qp *rb_create_qp(struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq,
		struct ibv_srq *srq, int qp_type, int sq_sig_all, rb_qp_caps *caps) {
	struct ibv_qp_init_attr a;
	rb_qp_init_attr(&a, scq, rcq, srq, qp_type, sq_sig_all, caps);
	struct ibv_qp *qp = ibv_create_qp(pd, &a);
	if (qp)
		rb_qp_granted(caps, &a);
	return qp;
}

static inline int rb_qp_to_init(struct ibv_qp *qp, uint8_t port, int access, uint32_t qkey, uint16_t pkey_index) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = pkey_index;
	a.port_num = port;
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (qp->qp_type == IBV_QPT_UD) {
		a.qkey = qkey;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = access;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	return ibv_modify_qp(qp, &a, mask);
}

// rb_qp_to_rtr moves an RC QP to RTR. The GID travels as two big-endian
// halves (hi = bytes 0..7, lo = bytes 8..15).
static inline int rb_qp_to_rtr(struct ibv_qp *qp, uint8_t port, int path_mtu, uint32_t dest_qpn,
		uint32_t rq_psn, uint16_t dlid, int use_grh, uint64_t gid_hi, uint64_t gid_lo,
		uint8_t sgid_index, uint8_t hop_limit, uint8_t tclass, uint8_t sl,
		uint8_t max_dest_rd_atomic, uint8_t min_rnr_timer) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = (enum ibv_mtu)path_mtu;
	a.dest_qp_num = dest_qpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = max_dest_rd_atomic;
	a.min_rnr_timer = min_rnr_timer;
	a.ah_attr.dlid = dlid;
	a.ah_attr.sl = sl;
	a.ah_attr.port_num = port;
	if (use_grh) {
		a.ah_attr.is_global = 1;
		for (int i = 0; i < 8; i++) {
			a.ah_attr.grh.dgid.raw[i] = (uint8_t)(gid_hi >> (56 - 8 * i));
			a.ah_attr.grh.dgid.raw[8 + i] = (uint8_t)(gid_lo >> (56 - 8 * i));
		}
		a.ah_attr.grh.sgid_index = sgid_index;
		a.ah_attr.grh.hop_limit = hop_limit;
		a.ah_attr.grh.traffic_class = tclass;
	}
	int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN;
	if (qp->qp_type == IBV_QPT_RC) // UC has no responder resources and no RNR NAKs
		mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	return ibv_modify_qp(qp, &a, mask);
}

static inline int rb_qp_to_rts(struct ibv_qp *qp, uint32_t sq_psn, uint8_t timeout, uint8_t retry_cnt,
		uint8_t rnr_retry, uint8_t max_rd_atomic) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = timeout;
	a.retry_cnt = retry_cnt;
	a.rnr_retry = rnr_retry;
	a.max_rd_atomic = max_rd_atomic;
	int mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (qp->qp_type == IBV_QPT_RC) // UC has no acks: no timeout, retries or READ/atomics
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	return ibv_modify_qp(qp, &a, mask);
}

// rb_ud_to_rtr moves a UD QP to RTR: only the state (the address is per
// work request, in an address handle).
static inline int rb_ud_to_rtr(struct ibv_qp *qp) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

// rb_ud_to_rts moves a UD QP to RTS: the state and the send PSN.
static inline int rb_ud_to_rts(struct ibv_qp *qp, uint32_t sq_psn) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

// rb_create_ah creates an address handle from scalars (GID halves as in
// rb_qp_to_rtr).
static inline struct ibv_ah *rb_create_ah(struct ibv_pd *pd, uint8_t port, uint16_t dlid, int use_grh,
		uint64_t gid_hi, uint64_t gid_lo, uint8_t sgid_index, uint8_t hop_limit, uint8_t tclass, uint8_t sl) {
	struct ibv_ah_attr a;
	memset(&a, 0, sizeof(a));
	a.dlid = dlid;
	a.sl = sl;
	a.port_num = port;
	if (use_grh) {
		a.is_global = 1;
		for (int i = 0; i < 8; i++) {
			a.grh.dgid.raw[i] = (uint8_t)(gid_hi >> (56 - 8 * i));
			a.grh.dgid.raw[8 + i] = (uint8_t)(gid_lo >> (56 - 8 * i));
		}
		a.grh.sgid_index = sgid_index;
		a.grh.hop_limit = hop_limit;
		a.grh.traffic_class = tclass;
	}
	return ibv_create_ah(pd, &a);
}

// rb_post_send_ud posts one UD SEND (imm is host order; with_imm selects
// SEND_WITH_IMM).
static inline int rb_post_send_ud(struct ibv_qp *qp, struct ibv_ah *ah, uint32_t remote_qpn, uint32_t qkey,
		uint64_t wr_id, uint64_t laddr, uint32_t len, uint32_t lkey, int flags, int with_imm, uint32_t imm) {
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = len > 0 ? 1 : 0;
	wr.opcode = with_imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	wr.send_flags = flags;
	if (with_imm)
		wr.imm_data = htonl(imm);
	wr.wr.ud.ah = ah;
	wr.wr.ud.remote_qpn = remote_qpn;
	wr.wr.ud.remote_qkey = qkey;
	return ibv_post_send(qp, &wr, &bad);
}

static inline int rb_qp_to_err(struct ibv_qp *qp) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_ERR;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

// rb_post_send posts one work request built from scalars. imm is host order.
static inline int rb_post_send(struct ibv_qp *qp, int opcode, uint64_t wr_id, uint64_t laddr, uint32_t len,
		uint32_t lkey, uint64_t raddr, uint32_t rkey, int flags, uint32_t imm, uint64_t compare_add,
		uint64_t swap) {
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = len > 0 ? 1 : 0;
	wr.opcode = (enum ibv_wr_opcode)opcode;
	wr.send_flags = flags;
	if (opcode == IBV_WR_RDMA_WRITE_WITH_IMM || opcode == IBV_WR_SEND_WITH_IMM)
		wr.imm_data = htonl(imm);
	if (opcode == IBV_WR_ATOMIC_CMP_AND_SWP || opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = compare_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

static inline int rb_post_recv(struct ibv_qp *qp, uint64_t wr_id, uint64_t laddr, uint32_t len, uint32_t lkey) {
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_recv(qp, &wr, &bad);
}

// rb_create_srq calls ibv_create_srq asking for max_wr receives of max_sge
// entries; *max_wr and *max_sge get what the device granted.
static inline struct ibv_srq *rb_create_srq(struct ibv_pd *pd, uint32_t *max_wr, uint32_t *max_sge) {
	struct ibv_srq_init_attr a;
	memset(&a, 0, sizeof(a));
	a.attr.max_wr = *max_wr;
	a.attr.max_sge = *max_sge;
	struct ibv_srq *srq = ibv_create_srq(pd, &a);
	if (srq) {
		*max_wr = a.attr.max_wr;
		*max_sge = a.attr.max_sge;
	}
	return srq;
}

static inline int rb_post_srq_recv(struct ibv_srq *srq, uint64_t wr_id, uint64_t laddr, uint32_t len, uint32_t lkey) {
	struct ibv_sge sge = { .addr = laddr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr, *bad = NULL;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	return ibv_post_srq_recv(srq, &wr, &bad);
}

static inline struct ibv_mr *rb_reg_mr(struct ibv_pd *pd, uint64_t addr, uint64_t len, int access) {
	return ibv_reg_mr(pd, (void *)(uintptr_t)addr, len, access);
}

static inline uint64_t rb_gid_hi(const union ibv_gid *g) {
	uint64_t v = 0;
	for (int i = 0; i < 8; i++) v = (v << 8) | g->raw[i];
	return v;
}
static inline uint64_t rb_gid_lo(const union ibv_gid *g) {
	uint64_t v = 0;
	for (int i = 8; i < 16; i++) v = (v << 8) | g->raw[i];
	return v;
}

#endif
