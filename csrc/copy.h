/* copy.h: the CPU cast/copy kernels (every dtype to every dtype), used by ct_copy_ and by
 * any op that needs a strided copy. */
#ifndef CTORCH_COPY_H
#define CTORCH_COPY_H

#include "iter.h"

/* The inner loop converting src dtype to dst dtype (operand 0 dst, 1 src). Never NULL. */
CtInnerLoop ct_cpu_cast_loop(CtDType dst, CtDType src);

#endif /* CTORCH_COPY_H */
