/* elementwise.h: the elementwise family's device kernel table. A device fills this struct;
 * ops build a CtIter (operand 0 = output) and call through it. */
#ifndef CTORCH_ELEMENTWISE_H
#define CTORCH_ELEMENTWISE_H

#include "iter.h"

struct CtElementwiseKernels {
    /* out (operand 0) = in (operand 1) converted from it->dtypes[1] to it->dtypes[0].
     * 0, or -1 with an exception set. */
    int (*copy)(const CtIter *it);
};

#endif /* CTORCH_ELEMENTWISE_H */
