/* registry.h: how op families plug into the Tensor type and the _C module.
 *
 * Each family (one .c file) exports NULL-terminated tables; tensor.c adds the methods and
 * slots to ctorch.Tensor and module.c adds the functions to ctorch._C. A family adds a row
 * to CT_FAMILY_LIST and defines the three tables (any may be just the terminator). */
#ifndef CTORCH_REGISTRY_H
#define CTORCH_REGISTRY_H

#include "ctorch.h"

#define CT_FAMILY_LIST(X) \
    X(core)               \
    X(views)              \
    X(elementwise)        \
    X(reduce)             \
    X(index)              \
    X(composite)          \
    X(more)               \
    X(search)             \
    X(histogram)          \
    X(gradient)           \
    X(linalg)             \
    X(linalg_more)        \
    X(linalg_decomp)      \
    X(linalg_eig)         \
    X(linalg_lu)          \
    X(linalg_ldl)         \
    X(creation)           \
    X(random)             \
    X(interop)            \
    X(cuda)               \
    X(nn)                 \
    X(conv)               \
    X(nn_act)             \
    X(norm)               \
    X(pool)               \
    X(attention)          \
    X(upsample)           \
    X(spatial)            \
    X(nn_misc)            \
    X(nn_frac_pool)       \
    X(optim)              \
    X(clip)               \
    X(amp)                \
    X(serialization)      \
    X(rnn)                \
    X(determinism)        \
    X(namespace)          \
    X(tensor_more)        \
    X(shared_memory)      \
    X(legacy)             \
    X(profiler)           \
    X(autograd)

#define CT_FAMILY_DECLARE(name)                       \
    extern PyMethodDef ct_##name##_tensor_methods[];  \
    extern PyMethodDef ct_##name##_module_methods[];  \
    extern PyType_Slot ct_##name##_tensor_slots[];
CT_FAMILY_LIST(CT_FAMILY_DECLARE)
#undef CT_FAMILY_DECLARE

#endif /* CTORCH_REGISTRY_H */
