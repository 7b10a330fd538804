/* ops_elementwise.c: the elementwise op family (being written). */
#include "registry.h"

PyMethodDef ct_elementwise_tensor_methods[] = {{NULL}};
PyMethodDef ct_elementwise_module_methods[] = {{NULL}};
PyType_Slot ct_elementwise_tensor_slots[] = {{0, NULL}};
