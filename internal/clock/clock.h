#ifndef RDMABENCH_CLOCK_H
#define RDMABENCH_CLOCK_H
#include <stdint.h>
uint64_t rb_clock_pair(uint64_t *tk, int64_t *ns);
void rb_clock_set(int counter, uint64_t tk, int64_t ns, uint64_t mult);
int64_t rb_clock_offset(void);
int rb_clock_kind(void);
int64_t rb_clock_now(void);
double rb_clock_cost(int n);
void rb_clock_shift(int64_t ns);
#endif
