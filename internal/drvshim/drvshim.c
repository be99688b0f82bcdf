// drvshim: an LD_PRELOAD library that makes a software RDMA device (rxe, siw)
// answer a few libibverbs calls the way a hardware driver does, over the real
// verbs underneath. It is a test tool: make vm-test builds it
// (build/libdrvshim.so) and internal/e2e's TestDriverShim* tests run rdmabench
// and perftest under it. docs/development.md lists the behaviours.
//
// RDMABENCH_DRVSHIM chooses the behaviours, a comma list (read at every call,
// so a test may change it):
//
//	cxgb4      ibv_modify_qp with IBV_QP_ACCESS_FLAGS on a connected iWARP QP
//	           fails with EIO, as Chelsio's c4iw_modify_qp does (it takes those
//	           attributes only while the QP is IDLE). Connected: ibv_query_qp
//	           says the QP is past INIT, or the call changes the access without
//	           a state transition (siw on Linux 6.1 does not report qp_state,
//	           and on iWARP the kernel, not libibverbs, moves the QP to RTS).
//	mlx5sq     ibv_query_device reports max_qp_wr as a ConnectX does (at most
//	           32768), and ibv_create_qp fails with EINVAL when the send queue,
//	           counted in 64-byte WQE basic blocks as mlx5 counts it (a WQE of
//	           several blocks by QP type, SGEs and inline size; the queue
//	           rounded up to a power of two), needs more blocks than that,
//	           although max_send_wr itself is within max_qp_wr.
//	rdatom=N   ibv_query_device reports at most N for max_qp_rd_atom and
//	           max_qp_init_rd_atom (a device with fewer outstanding READs).
//	cmport=N   the first N rdma_connect calls of the process on an iWARP
//	           device fail with EADDRNOTAVAIL before reaching the kernel, as
//	           siw's connect does when the source port rdma_cm chose is still
//	           held by an earlier TCP connection of the same address pair
//	           (rdma_cm knows only its own ids).
//	trace      changes nothing: says on stderr each ibv_modify_qp that sets
//	           IBV_QP_ACCESS_FLAGS, with the access and whether the call is a
//	           state transition (to check what a QP is granted).
//
// Only exported libibverbs functions can be interposed: ibv_post_send,
// ibv_poll_cq and ibv_query_port are inline (ibv_query_port reaches the
// provider through the context's ops, and the exported symbol of that name
// is a compatibility entry point).
//
// Every answer the shim changes is said on stderr ("drvshim: cxgb4: ..."), so
// a log shows the shim was active.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

// has reports whether behaviour name is in RDMABENCH_DRVSHIM; with val, it
// also parses "name=N" into *val.
static int has(const char *name, long *val) {
	const char *env = getenv("RDMABENCH_DRVSHIM");
	size_t n = strlen(name);
	if (!env)
		return 0;
	for (const char *p = env; *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len >= n && strncmp(p, name, n) == 0) {
			if (len == n && !val)
				return 1;
			if (val && len > n + 1 && p[n] == '=') {
				*val = strtol(p + n + 1, NULL, 10);
				return 1;
			}
		}
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

static void note(const char *what) {
	fprintf(stderr, "drvshim: %s\n", what);
}

// loaded says which behaviours the process runs under, so that a log shows
// the shim was in place even where no answer changed.
__attribute__((constructor)) static void loaded(void) {
	const char *env = getenv("RDMABENCH_DRVSHIM");
	if (env && *env)
		fprintf(stderr, "drvshim: loaded (%s)\n", env);
}

// next looks up the next definition of a libibverbs symbol (the real one).
static void *next(const char *sym) {
	void *f = dlvsym(RTLD_NEXT, sym, "IBVERBS_1.1");
	if (!f)
		f = dlsym(RTLD_NEXT, sym);
	if (!f) {
		fprintf(stderr, "drvshim: %s not found: %s\n", sym, dlerror());
		abort();
	}
	return f;
}

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask) {
	static int (*real)(struct ibv_qp *, struct ibv_qp_attr *, int);
	if (!real)
		real = next("ibv_modify_qp");
	if ((attr_mask & IBV_QP_ACCESS_FLAGS) && has("trace", NULL)) {
		char msg[160];
		if (attr_mask & IBV_QP_STATE)
			snprintf(msg, sizeof msg, "trace: ibv_modify_qp qp 0x%x access 0x%x (to state %d)", qp->qp_num, attr->qp_access_flags, attr->qp_state);
		else
			snprintf(msg, sizeof msg, "trace: ibv_modify_qp qp 0x%x access 0x%x (no state change)", qp->qp_num, attr->qp_access_flags);
		note(msg);
	}
	if ((attr_mask & IBV_QP_ACCESS_FLAGS) && has("cxgb4", NULL) &&
	    qp->context->device->transport_type == IBV_TRANSPORT_IWARP) {
		static int (*query)(struct ibv_qp *, struct ibv_qp_attr *, int, struct ibv_qp_init_attr *);
		struct ibv_qp_attr cur;
		struct ibv_qp_init_attr init;
		if (!query)
			query = next("ibv_query_qp");
		memset(&cur, 0, sizeof(cur));
		int connected = !(attr_mask & IBV_QP_STATE); // an access change outside a transition
		if (query(qp, &cur, IBV_QP_STATE, &init) == 0 && cur.qp_state != IBV_QPS_RESET && cur.qp_state != IBV_QPS_INIT)
			connected = 1;
		if (connected) {
			note("cxgb4: ibv_modify_qp IBV_QP_ACCESS_FLAGS on a connected iWARP QP: EIO");
			return EIO;
		}
	}
	return real(qp, attr, attr_mask);
}

// mlx5 send WQE layout (bytes): control segment 16, remote address 16,
// atomic 16, UD datagram segment 48, data segment 16 per SGE, inline
// segment header 4; a basic block (BB) is 64.
enum { CTRL = 16, RADDR = 16, ATOMIC = 16, DGRAM = 48, DATA = 16, INL = 4, BB = 64 };

// mlx5MaxQPWR is the max_qp_wr a ConnectX reports (1 << log_max_qp_sz),
// counted in basic blocks.
enum { MLX5_MAX_QP_WR = 32768 };

// sqOverhead is the fixed part of a send WQE of the QP type.
static int sqOverhead(enum ibv_qp_type t) {
	switch (t) {
	case IBV_QPT_RC:
		return CTRL + ATOMIC + RADDR;
	case IBV_QPT_UC:
		return CTRL + RADDR;
	case IBV_QPT_UD:
		return CTRL + DGRAM;
	default:
		return CTRL + ATOMIC + RADDR;
	}
}

// wqeSize is one send WQE, rounded up to whole basic blocks.
static long wqeSize(const struct ibv_qp_init_attr *a) {
	long base = sqOverhead(a->qp_type);
	long sge = base + (long)(a->cap.max_send_sge ? a->cap.max_send_sge : 1) * DATA;
	long inl = a->cap.max_inline_data ? base + INL + a->cap.max_inline_data : 0;
	long n = sge > inl ? sge : inl;
	return (n + BB - 1) / BB * BB;
}

static long roundupPow2(long n) {
	long p = 1;
	while (p < n)
		p <<= 1;
	return p;
}

struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr) {
	static struct ibv_qp *(*real)(struct ibv_pd *, struct ibv_qp_init_attr *);
	if (!real)
		real = next("ibv_create_qp");
	if (attr && attr->cap.max_send_wr > 0 && has("mlx5sq", NULL)) {
		static int (*qdev)(struct ibv_context *, struct ibv_device_attr *);
		struct ibv_device_attr da;
		if (!qdev)
			qdev = next("ibv_query_device");
		if (qdev(pd->context, &da) == 0) {
			long cap = da.max_qp_wr < MLX5_MAX_QP_WR ? da.max_qp_wr : MLX5_MAX_QP_WR;
			long bbs = roundupPow2((long)attr->cap.max_send_wr * wqeSize(attr)) / BB;
			if ((long)attr->cap.max_send_wr <= cap && bbs > cap) {
				char msg[200];
				snprintf(msg, sizeof msg, "mlx5sq: ibv_create_qp: %u send WRs of %ld bytes need %ld basic blocks, above max_qp_wr %ld: EINVAL",
					 attr->cap.max_send_wr, wqeSize(attr), bbs, cap);
				note(msg);
				errno = EINVAL;
				return NULL;
			}
		}
	}
	return real(pd, attr);
}

int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr) {
	static int (*real)(struct ibv_context *, struct ibv_device_attr *);
	long n;
	if (!real)
		real = next("ibv_query_device");
	int rc = real(ctx, attr);
	if (rc == 0 && has("mlx5sq", NULL) && attr->max_qp_wr > MLX5_MAX_QP_WR)
		attr->max_qp_wr = MLX5_MAX_QP_WR;
	if (rc == 0 && has("rdatom", &n) && n >= 0) {
		if (attr->max_qp_rd_atom > n)
			attr->max_qp_rd_atom = (int)n;
		if (attr->max_qp_init_rd_atom > n)
			attr->max_qp_init_rd_atom = (int)n;
	}
	return rc;
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param) {
	static int (*real)(struct rdma_cm_id *, struct rdma_conn_param *);
	static long calls;
	long n;
	if (!real)
		real = next("rdma_connect");
	if (has("cmport", &n) && id->verbs && id->verbs->device->transport_type == IBV_TRANSPORT_IWARP &&
	    __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED) < n) {
		note("cmport: rdma_connect: EADDRNOTAVAIL (the source port's address pair is taken)");
		errno = EADDRNOTAVAIL;
		return -1;
	}
	return real(id, param);
}
