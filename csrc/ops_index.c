/* ops_index.c: the index op family (being written). */
#include "registry.h"

PyMethodDef ct_index_tensor_methods[] = {{NULL}};
PyMethodDef ct_index_module_methods[] = {{NULL}};
PyType_Slot ct_index_tensor_slots[] = {{0, NULL}};
