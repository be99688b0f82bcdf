// cntshim: an LD_PRELOAD library that counts what a benchmark's timed loops
// cost in calls a profiler cannot attribute per message: clock reads
// through glibc's clock_gettime (all clocks, and CLOCK_MONOTONIC_RAW
// alone) and write(2) through glibc, which on rxe is the doorbell of every
// ibv_post_send and ibv_post_recv (the provider's command to the kernel).
// A test tool (docs/methodology.md, "Work per message"): run a tool under
// it at two iteration counts; the difference of the counts over the
// difference of the messages is the work per message, the set-up cancelled.
//
// With RDMABENCH_CNTSHIM=PREFIX it keeps the counts in the file PREFIX.PID,
// one line, rewritten every 5 ms by a thread of its own and at exit:
//
//	cntshim: pid=P clock_gettime=N monotonic_raw=N write=N
//
// (a Go program ends with the exit_group system call, which runs no
// destructor: the file then holds the counts of its last 5 ms, and the
// timed loops ended before that). The line also goes to stderr at exit
// where a destructor runs.
//
// Go's runtime reads its clocks through the vDSO and makes its system
// calls itself, so in rdmabench only the C loops and libibverbs are counted.
// A read of the CPU's counter (rdtsc) is no call: it is not counted.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
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

// line formats the counts; it returns the length, 0 on failure.
static int line(char *buf, size_t size) {
	int n = snprintf(buf, size, "cntshim: pid=%d clock_gettime=%lu monotonic_raw=%lu write=%lu\n", (int)getpid(),
			 __atomic_load_n(&n_clock, __ATOMIC_RELAXED), __atomic_load_n(&n_raw, __ATOMIC_RELAXED),
			 __atomic_load_n(&n_write, __ATOMIC_RELAXED));
	return n > 0 && n < (int)size ? n : 0;
}

static char path[4096];
static write_fn real_write;

// save rewrites the counts file (pwrite and ftruncate make no write call).
static void save(void) {
	char buf[160];
	int n = line(buf, sizeof(buf));
	if (!path[0] || !n)
		return;
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		return;
	if (pwrite(fd, buf, (size_t)n, 0) == n && ftruncate(fd, n) == 0) {
	}
	close(fd);
}

static void *saver(void *arg) {
	(void)arg;
	struct timespec d = { .tv_sec = 0, .tv_nsec = 5000000 };
	for (;;) {
		nanosleep(&d, NULL);
		save();
	}
	return NULL;
}

__attribute__((constructor)) static void start(void) {
	real_write = (write_fn)dlsym(RTLD_NEXT, "write");
	const char *p = getenv("RDMABENCH_CNTSHIM");
	if (!p || !*p)
		return;
	snprintf(path, sizeof(path), "%s.%d", p, (int)getpid());
	pthread_t t;
	if (pthread_create(&t, NULL, saver, NULL) == 0)
		pthread_detach(t);
}

__attribute__((destructor)) static void report(void) {
	char buf[160];
	int n = line(buf, sizeof(buf));
	save();
	if (n && real_write)
		real_write(2, buf, (size_t)n);
}
