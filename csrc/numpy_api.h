/* numpy_api.h: include this (not numpy headers directly) from any file that uses numpy's C
 * API; module.c owns the API table and calls import_array(). */
#ifndef CTORCH_NUMPY_API_H
#define CTORCH_NUMPY_API_H

#define PY_ARRAY_UNIQUE_SYMBOL ctorch_ARRAY_API
#define NO_IMPORT_ARRAY
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#endif /* CTORCH_NUMPY_API_H */
