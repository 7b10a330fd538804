/* determinism.h: the process-wide reproducibility switches of torch.use_deterministic_algorithms
 * (determinism.c) as the kernels' entry points read them.
 *
 * ctorch's kernels are deterministic by construction (fixed-order reduction trees, sort-based
 * accumulating puts, gathers instead of scatters); an entry point whose kernel is not (the CUDA
 * backward of grid_sampler_2d/3d adds with atomicAdd) calls ct_alert_not_deterministic first. */
#ifndef CTORCH_DETERMINISM_H
#define CTORCH_DETERMINISM_H

#include "ctorch.h"

/* torch.are_deterministic_algorithms_enabled() / is_deterministic_algorithms_warn_only_enabled() /
 * torch.utils.deterministic.fill_uninitialized_memory (true by default). */
extern bool ct_deterministic_algorithms;
extern bool ct_deterministic_warn_only;
extern bool ct_deterministic_fill_uninitialized;

/* PyTorch's alertNotDeterministic(caller): with determinism on, RuntimeError "<caller> does not have
 * a deterministic implementation, ..." (or a UserWarning with warn_only). 0, or -1 with the error set
 * (also when the warning was turned into an error). */
int ct_alert_not_deterministic(const char *caller);

/* empty()/empty_like()/new_empty()'s fresh memory under determinism with
 * fill_uninitialized_memory: floats filled with NaN, integers with their maximum, bool with True
 * (the whole storage, as PyTorch does; ctorch has no empty_strided yet). A no-op otherwise. 0 or -1. */
int ct_deterministic_fill_empty(CtTensorObject *t);

#endif /* CTORCH_DETERMINISM_H */
