// The bidirectional SEND loop (perftest -b): one thread per side posts its
// SENDs and, in the same loop, reaps and re-posts the receives of the
// peer's. See bidir.c.
#ifndef RDMABENCH_BIDIR_H
#define RDMABENCH_BIDIR_H

#include "engine.h"

int rb_bidir_send(rb_engine *e, int64_t until_ns);

#endif
