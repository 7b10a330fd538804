/* numpy_interop.c: the interop op family (being written). */
#include "registry.h"

PyMethodDef ct_interop_tensor_methods[] = {{NULL}};
PyMethodDef ct_interop_module_methods[] = {{NULL}};
PyType_Slot ct_interop_tensor_slots[] = {{0, NULL}};
