/* parallel.h: a small fork-safe pthread pool for CPU kernels. */
#ifndef CTORCH_PARALLEL_H
#define CTORCH_PARALLEL_H

#include <stdint.h>

/* Calls fn(begin, end, ctx) over a partition of [0, n) on up to ct_num_threads threads.
 * Ranges are at least `grain` long; small n runs inline on the caller. Calls made from
 * inside a worker run inline. fn must not touch Python objects. */
void ct_parallel_for(int64_t n, int64_t grain, void (*fn)(int64_t begin, int64_t end, void *ctx), void *ctx);
int ct_get_num_threads(void);
void ct_set_num_threads(int n);

#endif /* CTORCH_PARALLEL_H */
