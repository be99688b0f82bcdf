// The kernel-TCP baseline's measurement loops: the socket counterpart of
// verbs/engine.h. Go calls each function once per batch of iterations or per
// reporting interval; every send, receive and timestamp happens here, in C.
//
// Stream format of a bandwidth test (sender to receiver): phases, each an
// 8-byte little-endian message count followed by count*size bytes; the
// count RBS_OPEN_ENDED means "until the sender shuts down its side". The
// receiver answers each phase with one acknowledgement byte (RBS_ACK) once
// it has read the phase's last byte. A ping-pong test has no framing: size
// bytes each way per iteration.
#ifndef RDMABENCH_SOCKENG_ENGINE_H
#define RDMABENCH_SOCKENG_ENGINE_H

#include <stdint.h>
#include "cloop.h"

// Return codes: RB_OK (the requested iterations, the phase, or the interval
// ended), RB_TIMEOUT (no byte moved for ctl.timeout_ns: see ctl.wait_what),
// RB_ABORTED (rb_ctl_abort), RB_FULL (the sample buffer is full; drain it
// and call again) from cloop.h, and the loops' failures:
enum {
	RBS_ERR_SYS = 1, // a system call failed: see err_op, err_errno
	RBS_EOF = 7,     // the peer closed the connection: see ctl.wait_what, err_got, err_want
	RBS_PROTO = 8,   // the byte stream does not follow the format above: see ctl.wait_what
};

#define RBS_OPEN_ENDED UINT64_MAX
#define RBS_ACK 0xAC
#define RBS_RECV_CHUNK (256u << 10) // bytes per recv of a bandwidth receiver

// rb_sock is one TCP connection's measurement state. It lives in C memory
// (calloc) and holds no Go pointers. Fields marked (cfg) are set by Go before
// rbs_setup; the others are the loops' state and results.
typedef struct rb_sock {
	int fd;                    // private dup of the socket, blocking (rbs_setup); -1 when closed
	uint32_t size;             // (cfg) message size, bytes
	int64_t tick_ns;           // (cfg) SO_RCVTIMEO/SO_SNDTIMEO: how often a blocked call checks abort, stop, timeout
	uint8_t *buf;              // (cfg) size bytes: what is sent, where ping-pong replies land
	uint8_t *rbuf;             // (cfg) RBS_RECV_CHUNK bytes: a bandwidth receiver's buffer

	uint64_t *samples;         // (cfg) sample buffer, nanoseconds
	uint64_t cap;              // (cfg) its capacity
	uint64_t nsamples;         // samples written since the last reset

	rb_ctl ctl;                // (cfg: rb_ctl_init) abort flag, ping-pong responder's stop count, longest wait without a byte moving

	uint64_t iter;             // ping-pong iterations done / whole messages received by a bandwidth receiver
	uint64_t bytes;            // payload bytes received by a bandwidth receiver
	uint64_t target, written;  // bandwidth sender: messages of the current phase / written in it
	int64_t t_first, t_last;   // bandwidth sender: first send of the phase, acknowledgement (CLOCK_MONOTONIC_RAW ns)

	// error details
	int err_errno;
	const char *err_op;        // failed system call (static string); ctl.wait_what: what it, a timeout, EOF or framing error was waiting for
	uint64_t err_got, err_want; // bytes of the unit in progress at EOF: err_got == 0 is a clean boundary
} rb_sock;

int rbs_setup(rb_sock *e, int fd);
void rbs_close(rb_sock *e);
int rbs_lat_client(rb_sock *e, uint64_t n);
int rbs_lat_server(rb_sock *e);
int rbs_bw_phase(rb_sock *e, uint64_t msgs);
int rbs_bw_client(rb_sock *e, int64_t until_ns);
int rbs_bw_finish(rb_sock *e);
int rbs_bw_server(rb_sock *e);

#endif
