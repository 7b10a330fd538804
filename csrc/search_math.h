/* search_math.h: the binary search of searchsorted/bucketize, written once for the CPU
 * (ops_search.c) and the GPU (cuda/search.cu).
 *
 * ct_search_<DT>(line, ...) is PyTorch's bound search over one sorted line of n elements, with
 * its exact comparisons (not a total order): the left bound moves right while !(line[mid] >= v),
 * the right bound while !(line[mid] > v). A NaN value therefore lands at n, and NaNs in the line
 * make the search walk past them, as PyTorch's does. With a sorter, line element k is
 * line[sorter[k]] (sorter entries already checked to lie in [0, n)). Elements are compared in
 * the dtype's load type (float for float16/bfloat16, which is exact). */
#ifndef CTORCH_SEARCH_MATH_H
#define CTORCH_SEARCH_MATH_H

#include "dtype.h"

#define CT_SEARCH_FN(NAME, ctype, acc, ...)                                                                     \
    CT_HOST_DEVICE int64_t ct_search_##NAME(const char *line, int64_t line_stride, const char *sorter,          \
                                            int64_t sorter_stride, int64_t n, const char *value, bool right)    \
    {                                                                                                           \
        const acc v = (acc)CT_LOAD_##NAME(value);                                                               \
        int64_t lo = 0, hi = n;                                                                                 \
        while (lo < hi) {                                                                                       \
            const int64_t mid = lo + ((hi - lo) >> 1);                                                          \
            const int64_t at = sorter != NULL ? *(const int64_t *)(sorter + mid * sorter_stride) : mid;         \
            const acc m = (acc)CT_LOAD_##NAME(line + at * line_stride);                                         \
            if (right ? !(m > v) : !(m >= v)) {                                                                 \
                lo = mid + 1;                                                                                   \
            } else {                                                                                            \
                hi = mid;                                                                                       \
            }                                                                                                   \
        }                                                                                                       \
        return lo;                                                                                              \
    }
CT_DTYPE_LIST(CT_SEARCH_FN)
#undef CT_SEARCH_FN

#endif /* CTORCH_SEARCH_MATH_H */
