/* ops_linalg.c: the linalg op family (being written). */
#include "registry.h"

PyMethodDef ct_linalg_tensor_methods[] = {{NULL}};
PyMethodDef ct_linalg_module_methods[] = {{NULL}};
PyType_Slot ct_linalg_tensor_slots[] = {{0, NULL}};
