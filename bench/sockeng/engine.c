// Hot loops of rdmabench's kernel-TCP baseline. See engine.h.
// Timestamps: rb_now_ns (cloop.h), CLOCK_MONOTONIC_RAW, ns, as in
// verbs/engine.c.
//
// The socket is blocking with SO_RCVTIMEO/SO_SNDTIMEO set to tick_ns: on the
// fast path every send or receive is one system call and no clock is read
// besides the samples' two. A call that waits a whole tick returns EAGAIN,
// and only then are abort, stop and the no-progress deadline checked.
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include "engine.h"

static int sys_failed(rb_sock *e, const char *op, const char *what) {
	e->err_errno = errno;
	e->err_op = op;
	e->ctl.wait_what = what;
	return RBS_ERR_SYS;
}

int rbs_setup(rb_sock *e, int fd) {
	e->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (e->fd < 0)
		return sys_failed(e, "fcntl(F_DUPFD_CLOEXEC)", "a private descriptor of the socket");
	int fl = fcntl(e->fd, F_GETFL);
	if (fl < 0 || fcntl(e->fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		return sys_failed(e, "fcntl(F_SETFL)", "making the socket blocking");
	struct timeval tv = { .tv_sec = e->tick_ns / 1000000000LL, .tv_usec = (e->tick_ns % 1000000000LL) / 1000 };
	if (setsockopt(e->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(e->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return sys_failed(e, "setsockopt(SO_RCVTIMEO/SO_SNDTIMEO)", "the socket's wait tick");
	return RB_OK;
}

void rbs_close(rb_sock *e) {
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
}

// xfer sends (rx=0) or receives (rx=1) exactly want bytes at p, looping on
// partial transfers. With stoppable=1 it returns RB_STOPPED when stop_at is
// reached while nothing of the unit has arrived yet.
static int xfer(rb_sock *e, int rx, uint8_t *p, size_t want, int stoppable, const char *what) {
	size_t got = 0;
	int64_t idle = 0;
	while (got < want) {
		ssize_t n = rx ? recv(e->fd, p + got, want - got, 0) : send(e->fd, p + got, want - got, MSG_NOSIGNAL);
		if (n > 0) {
			got += (size_t)n;
			idle = 0;
			continue;
		}
		if (n == 0 && rx) {
			e->err_got = got;
			e->err_want = want;
			e->ctl.wait_what = what;
			return RBS_EOF;
		}
		if (n < 0 && errno == EINTR) // SO_RCVTIMEO sockets are not restarted after a signal
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			// a whole tick passed without a byte (idle: when the wait began)
			RB_TRY(rb_wait_check(&e->ctl, &idle, e->tick_ns, stoppable && got == 0, e->iter, what));
			continue;
		}
		return sys_failed(e, rx ? "recv" : "send", what);
	}
	return RB_OK;
}

// rbs_lat_client runs n ping-pong iterations and appends one full round-trip
// time per iteration to samples, in ns: from just before the message's send
// to the moment the reply's last byte has been read.
int rbs_lat_client(rb_sock *e, uint64_t n) {
	if (e->nsamples + n > e->cap)
		return RB_FULL;
	for (uint64_t i = 0; i < n; i++) {
		if (rb_aborted(&e->ctl))
			return RB_ABORTED;
		int64_t t0 = rb_now_ns();
		RB_TRY(xfer(e, 0, e->buf, e->size, 0, "send buffer space (the server stopped reading)"));
		RB_TRY(xfer(e, 1, e->buf, e->size, 0, "the server's reply"));
		int64_t t1 = rb_now_ns();
		e->samples[e->nsamples++] = (uint64_t)(t1 - t0);
		e->iter++;
	}
	return RB_OK;
}

// rbs_lat_server echoes size-byte messages until stop_at is reached, abort,
// an error, the peer's close, or timeout_ns without a byte. An EOF between
// iterations sets err_got = 0.
int rbs_lat_server(rb_sock *e) {
	for (;;) {
		if (rb_stop_reached(&e->ctl, e->iter))
			return RB_OK;
		if (rb_aborted(&e->ctl))
			return RB_ABORTED;
		int rc = xfer(e, 1, e->buf, e->size, 1, "the client's message");
		if (rc == RB_STOPPED || (rc == RBS_EOF && e->err_got == 0 && rb_stop_reached(&e->ctl, e->iter)))
			return RB_OK;
		RB_TRY(rc);
		RB_TRY(xfer(e, 0, e->buf, e->size, 0, "send buffer space for the reply (the client stopped reading)"));
		e->iter++;
	}
}

// rbs_bw_phase starts a phase of msgs messages (RBS_OPEN_ENDED: until
// rbs_bw_finish) by sending its header.
int rbs_bw_phase(rb_sock *e, uint64_t msgs) {
	uint8_t h[8];
	for (int i = 0; i < 8; i++)
		h[i] = (uint8_t)(msgs >> (8 * i));
	e->target = msgs;
	e->written = 0;
	e->t_first = e->t_last = 0;
	return xfer(e, 0, h, sizeof(h), 0, "send buffer space for a phase header");
}

// rbs_bw_client sends size-byte messages until the phase's messages are
// written, the clock passes until_ns, or samples is full (RB_FULL). Each
// message appends the time its send calls took, ns: from the first send to
// the moment the kernel accepted its last byte.
int rbs_bw_client(rb_sock *e, int64_t until_ns) {
	for (;;) {
		if (e->written >= e->target)
			return RB_OK;
		if (e->nsamples >= e->cap)
			return RB_FULL;
		if (rb_aborted(&e->ctl))
			return RB_ABORTED;
		int64_t t0 = rb_now_ns();
		if (e->written == 0)
			e->t_first = t0;
		RB_TRY(xfer(e, 0, e->buf, e->size, 0, "send buffer space (the receiver stopped reading)"));
		int64_t t1 = rb_now_ns();
		e->samples[e->nsamples++] = (uint64_t)(t1 - t0);
		e->written++;
		if (t1 >= until_ns)
			return RB_OK;
	}
}

// rbs_bw_finish ends the phase: an open-ended phase by shutting down the
// sending side. It waits for the receiver's acknowledgement and stores its
// arrival time in t_last.
int rbs_bw_finish(rb_sock *e) {
	if (e->target == RBS_OPEN_ENDED && shutdown(e->fd, SHUT_WR) < 0)
		return sys_failed(e, "shutdown(SHUT_WR)", "ending the stream");
	uint8_t a = 0;
	RB_TRY(xfer(e, 1, &a, 1, 0, "the receiver's acknowledgement of the last byte"));
	e->t_last = rb_now_ns();
	if (a != RBS_ACK) {
		e->ctl.wait_what = "an acknowledgement byte (got another value)";
		return RBS_PROTO;
	}
	return RB_OK;
}

// rbs_bw_server receives phases and acknowledges each one's last byte. It
// returns RB_OK after an open-ended phase or when the sender closes between
// phases; abort, an error, or timeout_ns without a byte end it early.
int rbs_bw_server(rb_sock *e) {
	for (;;) {
		uint8_t h[8];
		int rc = xfer(e, 1, h, sizeof(h), 0, "the sender's next phase header");
		if (rc == RBS_EOF && e->err_got == 0)
			return RB_OK;
		RB_TRY(rc);
		uint64_t msgs = 0;
		for (int i = 0; i < 8; i++)
			msgs |= (uint64_t)h[i] << (8 * i);
		int open = msgs == RBS_OPEN_ENDED;
		if (!open && msgs > UINT64_MAX / e->size) {
			e->ctl.wait_what = "a phase header (its message count overflows)";
			return RBS_PROTO;
		}
		uint64_t left = open ? UINT64_MAX : msgs * e->size, start = e->bytes;
		int64_t idle = 0;
		while (left > 0) {
			if (rb_aborted(&e->ctl))
				return RB_ABORTED;
			size_t want = left < RBS_RECV_CHUNK ? (size_t)left : RBS_RECV_CHUNK;
			ssize_t n = recv(e->fd, e->rbuf, want, 0);
			if (n > 0) {
				e->bytes += (uint64_t)n;
				e->iter = e->bytes / e->size;
				if (!open)
					left -= (uint64_t)n;
				idle = 0;
				continue;
			}
			if (n == 0) {
				if (open)
					break;
				e->err_got = e->bytes - start;
				e->err_want = msgs * e->size;
				e->ctl.wait_what = "the rest of a phase";
				return RBS_EOF;
			}
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				RB_TRY(rb_wait_check(&e->ctl, &idle, e->tick_ns, 0, e->iter, "the sender's messages"));
				continue;
			}
			return sys_failed(e, "recv", "the sender's messages");
		}
		if (open && (e->bytes - start) % e->size != 0) {
			e->err_got = (e->bytes - start) % e->size;
			e->err_want = e->size;
			e->ctl.wait_what = "the rest of the last message";
			return RBS_EOF;
		}
		uint8_t a = RBS_ACK;
		RB_TRY(xfer(e, 0, &a, 1, 0, "send buffer space for the acknowledgement"));
		if (open)
			return RB_OK;
	}
}
