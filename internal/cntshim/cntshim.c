// cntshim: an LD_PRELOAD library that counts what a benchmark's timed loops
// cost in calls a profiler cannot attribute per message: clock reads
// through glibc's clock_gettime (all clocks, and CLOCK_MONOTONIC_RAW
// alone) and write(2) through glibc, which on rxe is the doorbell of every
// ibv_post_send and ibv_post_recv (the provider's command to the kernel).
// A test tool (docs/methodology.md, "Work per message"): run a tool under
// it at two iteration counts; the difference of the counts over the
// difference of the messages is the work per message, the set-up cancelled.
//
// At exit it says on stderr, one line:
//
//	cntshim: pid=P clock_gettime=N monotonic_raw=N write=N
//
// and with RDMABENCH_CNTSHIM=FILE appends the same line to FILE too.
//
// Go's runtime reads its clocks through the vDSO and makes its system
// calls itself, so in rdmabench only the C loops and libibverbs are counted.
// A read of the CPU's counter (rdtsc) is no call: it is not counted.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static unsigned long n_clock, n_raw, n_write;

typedef int (*clock_fn)(clockid_t, struct timespec *);
typedef ssize_t (*write_fn)(int, const void *, size_t);

int clock_gettime(clockid_t id, struct timespec *ts) {
	static clock_fn real;
	if (!real)
		real = (clock_fn)dlsym(RTLD_NEXT, "clock_gettime");
	__atomic_add_fetch(&n_clock, 1, __ATOMIC_RELAXED);
	if (id == CLOCK_MONOTONIC_RAW)
		__atomic_add_fetch(&n_raw, 1, __ATOMIC_RELAXED);
	return real(id, ts);
}

ssize_t write(int fd, const void *buf, size_t len) {
	static write_fn real;
	if (!real)
		real = (write_fn)dlsym(RTLD_NEXT, "write");
	__atomic_add_fetch(&n_write, 1, __ATOMIC_RELAXED);
	return real(fd, buf, len);
}

__attribute__((destructor)) static void report(void) {
	char line[160];
	static write_fn real;
	if (!real)
		real = (write_fn)dlsym(RTLD_NEXT, "write");
	int n = snprintf(line, sizeof(line), "cntshim: pid=%d clock_gettime=%lu monotonic_raw=%lu write=%lu\n", (int)getpid(),
			 __atomic_load_n(&n_clock, __ATOMIC_RELAXED), __atomic_load_n(&n_raw, __ATOMIC_RELAXED),
			 __atomic_load_n(&n_write, __ATOMIC_RELAXED));
	if (n <= 0 || n >= (int)sizeof(line))
		return;
	real(2, line, (size_t)n);
	const char *path = getenv("RDMABENCH_CNTSHIM");
	if (path && *path) {
		int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
		if (fd >= 0) {
			real(fd, line, (size_t)n);
			close(fd);
		}
	}
}
