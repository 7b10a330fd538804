/* creation.c: the creation op family (being written). */
#include "registry.h"

PyMethodDef ct_creation_tensor_methods[] = {{NULL}};
PyMethodDef ct_creation_module_methods[] = {{NULL}};
PyType_Slot ct_creation_tensor_slots[] = {{0, NULL}};
