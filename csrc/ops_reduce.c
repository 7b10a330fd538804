/* ops_reduce.c: the reduce op family (being written). */
#include "registry.h"

PyMethodDef ct_reduce_tensor_methods[] = {{NULL}};
PyMethodDef ct_reduce_module_methods[] = {{NULL}};
PyType_Slot ct_reduce_tensor_slots[] = {{0, NULL}};
