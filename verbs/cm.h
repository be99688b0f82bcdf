// Shims for librdmacm (rdma_cm): connection parameters and QP creation take
// scalars, so Go never builds a C struct that holds a pointer.
#ifndef RDMABENCH_CM_H
#define RDMABENCH_CM_H

#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include "shim.h"

static inline struct ibv_context *rb_ctx_at(struct ibv_context **list, int i) { return list[i]; }

// rb_cm_channel creates an event channel whose fd is non-blocking, so
// rdma_get_cm_event returns EAGAIN instead of blocking (waits poll the fd
// with a deadline).
static inline struct rdma_event_channel *rb_cm_channel(void) {
	struct rdma_event_channel *ch = rdma_create_event_channel();
	if (!ch)
		return NULL;
	int fl = fcntl(ch->fd, F_GETFL);
	if (fl < 0 || fcntl(ch->fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		int e = errno;
		rdma_destroy_event_channel(ch);
		errno = e;
		return NULL;
	}
	return ch;
}

static inline int rb_cm_fd(struct rdma_event_channel *ch) { return ch->fd; }

// rb_sockaddr fills a sockaddr_storage from an IPv4 or IPv6 address (16
// bytes, IPv4 as ::ffff:a.b.c.d) and a port (host order).
static inline void rb_sockaddr(struct sockaddr_storage *ss, const uint8_t ip[16], int v4, uint16_t port) {
	memset(ss, 0, sizeof(*ss));
	if (v4) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;
		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		memcpy(&s->sin_addr, ip + 12, 4);
	} else {
		struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;
		s->sin6_family = AF_INET6;
		s->sin6_port = htons(port);
		memcpy(&s->sin6_addr, ip, 16);
	}
}

static inline int rb_cm_bind(struct rdma_cm_id *id, const uint8_t ip[16], int v4, uint16_t port) {
	struct sockaddr_storage ss;
	rb_sockaddr(&ss, ip, v4, port);
	return rdma_bind_addr(id, (struct sockaddr *)&ss) ? errno : 0;
}

static inline int rb_cm_resolve_addr(struct rdma_cm_id *id, const uint8_t src[16], int has_src, const uint8_t dst[16], int v4,
		uint16_t port, int timeout_ms) {
	struct sockaddr_storage s, d;
	rb_sockaddr(&s, src, v4, 0);
	rb_sockaddr(&d, dst, v4, port);
	return rdma_resolve_addr(id, has_src ? (struct sockaddr *)&s : NULL, (struct sockaddr *)&d, timeout_ms) ? errno : 0;
}

static inline int rb_cm_set_tos(struct rdma_cm_id *id, uint8_t tos) {
	return rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof(tos)) ? errno : 0;
}

static inline int rb_cm_set_ack_timeout(struct rdma_cm_id *id, uint8_t timeout) {
	return rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof(timeout)) ? errno : 0;
}

static inline uint16_t rb_cm_src_port(struct rdma_cm_id *id) { return ntohs(rdma_get_src_port(id)); }

// rb_cm_verbs is the device context the id is bound to (NULL before the
// address is bound or resolved).
static inline struct ibv_context *rb_cm_verbs(struct rdma_cm_id *id) { return id->verbs; }
static inline uint8_t rb_cm_port(struct rdma_cm_id *id) { return id->port_num; }
static inline struct ibv_qp *rb_cm_qp(struct rdma_cm_id *id) { return id->qp; }

// rb_cm_create_qp is rb_create_qp through rdma_create_qp: the QP belongs to
// id (destroy it with rdma_destroy_qp). It returns 0 or an errno; caps get
// what the device granted.
static inline int rb_cm_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_cq *scq, struct ibv_cq *rcq,
		struct ibv_srq *srq, int qp_type, int sq_sig_all, rb_qp_caps *caps) {
	struct ibv_qp_init_attr a;
	rb_qp_init_attr(&a, scq, rcq, srq, qp_type, sq_sig_all, caps);
	if (rdma_create_qp(id, pd, &a))
		return errno;
	rb_qp_granted(caps, &a);
	return 0;
}

static inline void rb_conn_param(struct rdma_conn_param *p, const void *priv, uint8_t len, uint8_t resp_res,
		uint8_t init_depth, uint8_t retry, uint8_t rnr_retry) {
	memset(p, 0, sizeof(*p));
	p->private_data = priv;
	p->private_data_len = len;
	p->responder_resources = resp_res;
	p->initiator_depth = init_depth;
	p->retry_count = retry;
	p->rnr_retry_count = rnr_retry;
}

// The private data is copied into C memory by the caller (cgo passes a
// pointer to C-allocated bytes, never a Go pointer kept past the call).
static inline int rb_cm_connect(struct rdma_cm_id *id, const void *priv, uint8_t len, uint8_t resp_res, uint8_t init_depth,
                                uint8_t retry, uint8_t rnr_retry) {
	struct rdma_conn_param p;
	rb_conn_param(&p, priv, len, resp_res, init_depth, retry, rnr_retry);
	return rdma_connect(id, &p) ? errno : 0;
}

static inline int rb_cm_accept(struct rdma_cm_id *id, uint8_t resp_res, uint8_t init_depth, uint8_t retry, uint8_t rnr_retry) {
	struct rdma_conn_param p;
	rb_conn_param(&p, NULL, 0, resp_res, init_depth, retry, rnr_retry);
	return rdma_accept(id, &p) ? errno : 0;
}

// rb_cm_event is an rdma_cm_event reduced to scalars; the private data (at
// most 255 bytes) is copied out before the event is acknowledged.
typedef struct {
	int event;
	int status;
	struct rdma_cm_id *id;
	struct rdma_cm_id *listen_id;
	uint8_t initiator_depth;
	uint8_t responder_resources;
	uint8_t private_len;
	uint8_t private_data[256];
	// ESTABLISHED on a UDP port space id (a SIDR reply: rb_cm_ud_param):
	// the peer's QP number and Q_Key, and the address handle to reach it.
	int ud;
	uint32_t ud_qpn, ud_qkey;
	uint8_t ud_dgid[16];
	uint16_t ud_dlid;
	uint8_t ud_is_global, ud_sgid_index, ud_hop_limit, ud_tclass, ud_sl, ud_port;
} rb_cm_event;

// rb_cm_ud_param copies a UD event's parameters into out (the union's UD
// member; the connection members overlay it).
static inline void rb_cm_ud_param(const struct rdma_cm_event *ev, rb_cm_event *out) {
	const struct rdma_ud_param *u = &ev->param.ud;
	out->ud = 1;
	out->ud_qpn = u->qp_num;
	out->ud_qkey = u->qkey;
	memcpy(out->ud_dgid, u->ah_attr.grh.dgid.raw, 16);
	out->ud_dlid = u->ah_attr.dlid;
	out->ud_is_global = u->ah_attr.is_global;
	out->ud_sgid_index = u->ah_attr.grh.sgid_index;
	out->ud_hop_limit = u->ah_attr.grh.hop_limit;
	out->ud_tclass = u->ah_attr.grh.traffic_class;
	out->ud_sl = u->ah_attr.sl;
	out->ud_port = u->ah_attr.port_num;
}

// rb_cm_get_event takes one event (EAGAIN when none is pending), copies it
// into out and acknowledges it. It returns 0 or an errno.
static inline int rb_cm_get_event(struct rdma_event_channel *ch, rb_cm_event *out) {
	struct rdma_cm_event *ev;
	if (rdma_get_cm_event(ch, &ev))
		return errno;
	memset(out, 0, sizeof(*out));
	out->event = ev->event;
	out->status = ev->status;
	out->id = ev->id;
	out->listen_id = ev->listen_id;
	if (ev->event == RDMA_CM_EVENT_ESTABLISHED && ev->id && ev->id->ps == RDMA_PS_UDP) {
		rb_cm_ud_param(ev, out);
		rdma_ack_cm_event(ev);
		return 0;
	}
	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST || ev->event == RDMA_CM_EVENT_ESTABLISHED ||
	    ev->event == RDMA_CM_EVENT_REJECTED || ev->event == RDMA_CM_EVENT_CONNECT_RESPONSE) {
		if (!ev->id || ev->id->ps != RDMA_PS_UDP) { // a UD request's union member has no depths
			out->initiator_depth = ev->param.conn.initiator_depth;
			out->responder_resources = ev->param.conn.responder_resources;
		}
		if (ev->param.conn.private_data && ev->param.conn.private_data_len) {
			out->private_len = ev->param.conn.private_data_len;
			memcpy(out->private_data, ev->param.conn.private_data, out->private_len);
		}
	}
	rdma_ack_cm_event(ev);
	return 0;
}

// rb_qp_path reads back the address vector a connected QP got: path MTU
// (enum), source GID index and port; and its max_rd_atomic.
static inline int rb_qp_path(struct ibv_qp *qp, int *mtu, int *sgid_index, int *port, int *max_rd_atomic) {
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;
	memset(&a, 0, sizeof(a));
	int rc = ibv_query_qp(qp, &a, IBV_QP_PATH_MTU | IBV_QP_AV | IBV_QP_PORT | IBV_QP_MAX_QP_RD_ATOMIC, &ia);
	if (rc)
		return rc;
	*mtu = a.path_mtu;
	*sgid_index = a.ah_attr.grh.sgid_index;
	*port = a.port_num ? a.port_num : a.ah_attr.port_num;
	*max_rd_atomic = a.max_rd_atomic;
	return 0;
}

// rb_qp_set_access narrows the remote access of a connected RC QP (RTS to
// RTS): rdma_cm grants REMOTE_WRITE, and READ/ATOMIC with responder
// resources, whatever the test needs.
static inline int rb_qp_set_access(struct ibv_qp *qp, int access) {
	struct ibv_qp_attr a;
	memset(&a, 0, sizeof(a));
	a.qp_access_flags = access;
	return ibv_modify_qp(qp, &a, IBV_QP_ACCESS_FLAGS);
}

#endif
