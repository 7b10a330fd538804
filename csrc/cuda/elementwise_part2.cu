/* elementwise_part2.cu: the elementwise kernels of the ops with index % CT_EW_PARTS == 2 (see
 * elementwise_impl.cuh: the ops are spread over parts so that nvcc compiles them in parallel). */
#include "elementwise_impl.cuh"

CT_EW_DEFINE_PART(2)
