/* args.h: argument parsing for METH_FASTCALL | METH_KEYWORDS functions. */
#ifndef CTORCH_ARGS_H
#define CTORCH_ARGS_H

#include "ctorch.h"

/* Matches positional args and keyword args against `names` (NULL-terminated). out[i] gets a
 * borrowed reference or NULL when absent. The first `nrequired` names are required. Names
 * starting with '*' are keyword-only (the '*' is not part of the name). Returns 0, or -1 with
 * TypeError set ("fname() got an unexpected keyword argument 'x'", ...). */
int ct_parse_args(const char *fname, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                  const char *const *names, int nrequired, PyObject **out);

/* Optional argument helpers: each returns 0 or -1; absent (NULL) or None keeps the default. */
int ct_arg_bool(PyObject *obj, bool *out);
int ct_arg_int64(PyObject *obj, int64_t *out);
int ct_arg_double(PyObject *obj, double *out);

#define CT_FASTCALL(fn) ((PyCFunction)(void (*)(void))(fn))
#define CT_METH_FK (METH_FASTCALL | METH_KEYWORDS)

#endif /* CTORCH_ARGS_H */
