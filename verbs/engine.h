// The measurement hot loops. Go calls each function once per batch of
// iterations or per reporting interval; everything per operation (post, poll,
// timestamp) happens here, in C.
#ifndef RDMABENCH_ENGINE_H
#define RDMABENCH_ENGINE_H

#include <stdint.h>
#include <infiniband/verbs.h>
#include "cloop.h"

#define RB_MAX_POST_LIST 64

// Return codes: RB_OK, RB_TIMEOUT (nothing happened for ctl.timeout_ns: see
// ctl.wait_what), RB_ABORTED (rb_ctl_abort), RB_FULL (the sample buffer is
// full; drain it and call again) from cloop.h, and the engine's failures:
enum {
	RB_ERR_WC = 1,    // a completion failed: see err_wc_*
	RB_ERR_POST = 2,  // ibv_post_send/recv failed: see err_errno
	RB_ERR_POLL = 3,  // ibv_poll_cq returned < 0
	RB_ERR_REG = 7,   // per-op: ibv_reg_mr failed: see err_errno
	RB_ERR_DEREG = 8, // per-op: ibv_dereg_mr failed: see err_errno
};

// rb_engine is one QP's measurement state. It lives in C memory (calloc) and
// holds no Go pointers. Fields marked (cfg) are set by Go before the first
// call; the others are the loops' state and results.
typedef struct rb_engine {
	struct ibv_qp *qp;         // (cfg)
	struct ibv_cq *scq, *rcq;  // (cfg)
	uint64_t laddr;            // (cfg) local MR start: the source area
	uint32_t lkey;             // (cfg)
	uint64_t roff;             // (cfg) offset of the local target/receive area
	uint64_t raddr;            // (cfg) remote target area (write, read, atomics)
	uint32_t rkey;             // (cfg)
	uint32_t size;             // (cfg) message size, bytes
	int op;                    // (cfg) enum ibv_wr_opcode: IBV_WR_SEND, _SEND_WITH_IMM, _RDMA_WRITE, _RDMA_WRITE_WITH_IMM, _RDMA_READ, _ATOMIC_FETCH_AND_ADD or _ATOMIC_CMP_AND_SWP
	uint32_t imm;              // (cfg) _WITH_IMM ops: work request k carries the immediate imm + k (host order; wraps)
	int send_flags;            // (cfg) extra send flags (IBV_SEND_INLINE)
	uint32_t tx_depth;         // (cfg) outstanding sends in bandwidth mode
	uint32_t cq_mod;           // (cfg) signal every cq_mod-th send in bandwidth mode
	uint32_t rx_depth;         // (cfg) receives kept posted
	uint32_t post_list;        // (cfg) bandwidth: work requests chained per ibv_post_send (1..RB_MAX_POST_LIST)
	int event;                 // (cfg) wait for completions on the CQs' channels instead of busy polling
	struct ibv_comp_channel *sch, *rch; // (cfg) the channels of scq and rcq (event mode)
	int64_t interval_ns;       // (cfg) open loop: mean gap between intended sends; 0 = closed loop
	int poisson;               // (cfg) open loop: exponential gaps (a Poisson process)
	uint64_t rng;              // (cfg) xorshift64* state for Poisson gaps, non-zero
	int64_t next_intended;     // open loop: intended time of the next send; 0 = now
	int64_t first_intended;    // open loop: intended time of the first send
	struct ibv_ah *ah;         // (cfg) UD: the peer's address handle (NULL on connected QPs)
	uint32_t remote_qpn, qkey; // (cfg) UD: the peer's QP number and Q_Key
	uint32_t recv_extra;       // (cfg) UD: bytes before the payload in a receive (the 40-byte GRH)
	uint32_t recv_len;         // (cfg) bytes a receive takes (0: size); perftest's -a keeps the largest while size steps
	struct ibv_srq *srq;       // (cfg) post receives to this shared receive queue (NULL: the QP's own)

	// Address stepping (perftest's cycle buffer): the bandwidth sender's
	// work request k uses local and remote addresses addr_off bytes past
	// the areas' starts, addr_off advancing by addr_step per work request
	// and back to 0 before it would pass addr_cycle. addr_step 0: every
	// work request uses the areas' starts.
	uint64_t addr_step;        // (cfg) bytes per work request; 0 = off
	uint64_t addr_cycle;       // (cfg) bytes of the cycle buffer
	uint64_t addr_off;         // offset of the next work request (reset with the counters)
	// Receives step too (perftest steps its receive buffers over the
	// cycle): receive k lands recv_off = (k mod addr_cycle/recv_step) ×
	// recv_step bytes past the receive area's start. recv_step 0: every
	// receive at the area's start.
	uint64_t recv_step;        // (cfg) bytes per receive; 0 = off
	uint64_t recv_off;         // offset of the next receive

	// Per-operation registration (per_op = 1): each work request's local
	// buffer (the source, or the sink of a READ/atomic) lies in op_base's
	// unregistered memory, laid out like laddr's (source at 0, sink at
	// roff). It is registered with ibv_reg_mr right before the post and
	// deregistered once the work request is known complete; receives and
	// the target of the peer's WRITEs stay in laddr's pre-registered memory.
	int per_op;                // (cfg)
	struct ibv_pd *pd;         // (cfg) PD of the per-op registrations (the QP's)
	uint64_t op_base;          // (cfg) start of the per-op memory
	int op_access;             // (cfg) access of the per-op registrations
	struct ibv_mr **op_mrs;    // (cfg) tx_depth slots: the MR of work request k in slot k % tx_depth, NULL when none

	uint64_t *samples;         // (cfg) sample buffer, nanoseconds
	uint64_t cap;              // (cfg) its capacity
	uint64_t nsamples;         // samples written since the last reset
	uint64_t *post_ts;         // (cfg) ts_mask+1 slots (a power of two >= tx_depth): post time of signaled send k in slot k & ts_mask
	uint64_t ts_mask;          // (cfg)

	// Prebuilt work requests: slot i is the i-th work request of a post
	// list, built once (wr_ready 0: at the next post; Go clears it when
	// the message changes) and linked to slot i+1. A post patches only
	// what changes: wr_id, the signaled flag, a _WITH_IMM op's immediate
	// and, under address stepping, the addresses. Spreading and SGE
	// splits rebuild the work request in its slot (build_wr).
	int wr_ready;
	struct ibv_send_wr wr_slot[RB_MAX_POST_LIST];
	struct ibv_sge sge_slot[RB_MAX_POST_LIST];
	// Signaling without division: sig_left work requests until the next
	// signaled one (every cq_mod-th since ResetCounters); 0 = restart.
	uint32_t sig_left;
	int dry_check;             // rb_post_dry (no device): compare each posted work request with build_wr's

	// Ring mode (ring = 1; a bandwidth sender's measured phase): samples is
	// a ring of cap entries (a power of two) that a Go goroutine drains on
	// another thread while the loop keeps posting. nsamples counts the
	// samples written since the reset (stored with release order), and
	// ring_read those the drainer has recorded (set by Go, atomic). The
	// loop returns RB_FULL only when the drainer is cap - 16 samples behind.
	int ring;                  // (cfg)
	uint64_t ring_read;        // (Go, atomic) samples drained
	// Posting pauses of a bandwidth sender (rb_bw_client_entry), since the
	// last reset: how often it returned RB_FULL, and the longest time from
	// one return to the next call while the target was not complete (the
	// send queue drains meanwhile), ns.
	uint64_t full_returns;
	int64_t t_return;          // the last return (0: none since the reset)
	int64_t max_pause_ns;

	rb_ctl ctl;                // (cfg: rb_ctl_init) abort flag, responder stop count, longest wait for any one event

	uint64_t iter;             // iterations done (ping-pong) / messages received (bw receiver)
	uint64_t posted, completed, target_posts; // bandwidth sender
	uint64_t recv_posted;      // receives posted so far
	int64_t t_first, t_last;   // first post, last completion (CLOCK_MONOTONIC_RAW ns)

	// Bandwidth pacing (a rate limit, --limit-bw): on average no more than
	// one post per pace_ns since the first paced post (a token bucket
	// whose burst is the free room of the send queue).
	int64_t pace_ns;           // (cfg) ns per operation; 0 = unlimited
	int64_t pace_start;        // time of the first paced post; 0 = not yet
	uint64_t pace_base;        // posted when pacing started

	// error details
	uint64_t err_wc_wr_id;
	uint32_t err_wc_status, err_wc_opcode, err_wc_vendor_err, err_wc_qp_num;
	int err_errno;

	// perftest peers (the drop-in facing a perftest tool, rb_pt_*): the
	// WRITE ping-pong's marker is the iteration count modulo 256, as
	// perftest's (char)++count (0 after 255), not write_slot's 1..255;
	// pt_prev is the previous post time of a side that times perftest's
	// interval (0: none yet): the wait-first side (rb_pt_lat_reply), and
	// with pt_interval the side that sends first (rb_lat_client: each
	// sample from one post to the next, the receive's repost inside).
	int pt_marker;             // (cfg) 1: perftest's marker
	int pt_interval;           // (cfg) 1: rb_lat_client times perftest's interval
	int64_t pt_prev;
	// perftest's BW peak (the drop-in facing perftest; off while
	// pt_stamps is 0): the bandwidth sender stamps the post of work
	// request k < pt_stamps in pt_posted[k] and the completion of a
	// signaled one in pt_completed[k] (engine clock, ns; k counts from
	// ResetCounters). Both arrays are mmap'd by Go, pt_stamps entries each.
	uint64_t pt_stamps;
	int64_t *pt_posted, *pt_completed;

	// Spreading (the workload knobs, spread_wr): each work request's
	// remote target is an offset in one of sp_n remote MRs, picked here:
	// RB_SP_SEQ and RB_SP_STRIDE take MR sp_m (round robin) at slot sp_j
	// (advancing once per round), RB_SP_RANDOM draws both from sp_rng
	// (xorshift64*). The offset is slot × sp_step, slot < sp_slots. With
	// sp_laddr the local buffer is sp_laddr[m] (lkey sp_lkey[m]) instead
	// of the areas of laddr. The state carries on across ResetCounters
	// (a measured phase does not replay its warm-up's offsets).
	uint32_t sp_n;             // (cfg) remote MRs; 0 = off
	int sp_access;             // (cfg) RB_SP_*
	uint64_t *sp_raddr;        // (cfg) sp_n remote MR starts (C memory), or NULL: SEND, local buffers only
	uint32_t *sp_rkey;         // (cfg) their rkeys
	uint64_t *sp_laddr;        // (cfg) sp_n local buffers, or NULL
	uint32_t *sp_lkey;         // (cfg) their lkeys
	uint64_t sp_step, sp_slots; // (cfg) bytes between offsets; offsets per MR
	uint64_t sp_rng;           // (cfg) PRNG state, non-zero
	uint32_t sp_m;             // next MR (seq, stride)
	uint64_t sp_j;             // next slot (seq, stride)
	// SGEs (--sge): with nsge > 1 each work request's message is split
	// over nsge contiguous pieces of its local buffer (the last takes the
	// remainder), in sgl's slot (wr_id mod post_list) × nsge; the verbs
	// copy them at the post, so slots are reused at once.
	uint32_t nsge;             // (cfg) 0, 1: one SGE
	struct ibv_sge *sgl;       // (cfg) post_list × nsge entries
} rb_engine;

// Access patterns of rb_engine.sp_access.
enum { RB_SP_SEQ = 0, RB_SP_RANDOM = 1, RB_SP_STRIDE = 2 };

int rb_post_recvs(rb_engine *e, uint32_t n);
int rb_lat_client(rb_engine *e, uint64_t n);
int rb_lat_server(rb_engine *e);
int rb_pt_lat_reply(rb_engine *e, uint64_t n);
int rb_bw_client(rb_engine *e, int64_t until_ns);
int rb_bw_client_entry(rb_engine *e, int64_t until_ns);
int rb_bw_step(rb_engine *e, int64_t *stamp, int *got);
int rb_post_dry(rb_engine *e, uint64_t n, int check);
int rb_post_dry_rebuild(rb_engine *e, uint64_t n);
int rb_bw_client_multi(rb_engine **es, int n, int64_t until_ns, int *which);
int rb_bw_server(rb_engine *e);
int rb_bw_server_multi(rb_engine **es, int n, int *which);
int rb_drain_send(rb_engine *e, uint64_t n);
int rb_op_release(rb_engine *e);
int rb_recv_one(rb_engine *e, uint64_t *wr_id, uint32_t *byte_len, uint32_t *opcode, int *has_imm, uint32_t *imm);
void rb_spread_peek(rb_engine *e, uint64_t n, uint64_t *raddr, uint32_t *rkey, uint32_t *sge_bytes, uint32_t *lkey);

#endif
