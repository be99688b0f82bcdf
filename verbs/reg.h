// Registration helper shared by the C loops that register memory per
// operation (engine.c, mrbench.c).
#ifndef RDMABENCH_REG_H
#define RDMABENCH_REG_H

#include <errno.h>
#include <stdint.h>
#include <infiniband/verbs.h>

// rb_reg_errno registers [addr, addr+len) with access. On failure it returns
// NULL and sets *err to errno, read right after the call (EINVAL if errno
// was not set).
static inline struct ibv_mr *rb_reg_errno(struct ibv_pd *pd, uint64_t addr, uint64_t len, int access, int *err) {
	errno = 0;
	struct ibv_mr *mr = ibv_reg_mr(pd, (void *)(uintptr_t)addr, len, access);
	if (mr == NULL)
		*err = errno ? errno : EINVAL;
	return mr;
}

#endif
