/* determinism.c: torch.use_deterministic_algorithms and its relatives, the process-wide switches
 * that determinism.h exports to the kernels' entry points:
 *
 *   use_deterministic_algorithms(mode, *, warn_only=False), are_deterministic_algorithms_enabled(),
 *   is_deterministic_algorithms_warn_only_enabled(), set/get_deterministic_debug_mode(0|1|2 or
 *   'default'|'warn'|'error'), _get/_set_deterministic_fill_uninitialized_memory (the property of
 *   ctorch.utils.deterministic), with PyTorch's argument checks and messages.
 *
 * The switches are plain globals, written and read under the GIL (PyTorch's are global too, not
 * per thread). Turning determinism on changes no result of ctorch's deterministic kernels; it makes
 * the nondeterministic ones (ct_alert_not_deterministic's callers) raise or warn, and empty() fill
 * its memory. */
#include "determinism.h"
#include "args.h"
#include "creation.h"
#include "dtype.h"
#include "registry.h"
#include "tensor.h"
#include <math.h>

bool ct_deterministic_algorithms = false;
bool ct_deterministic_warn_only = false;
bool ct_deterministic_fill_uninitialized = true;

int ct_alert_not_deterministic(const char *caller)
{
    if (!ct_deterministic_algorithms) {
        return 0;
    }
    if (ct_deterministic_warn_only) {
        return PyErr_WarnFormat(PyExc_UserWarning, 1,
                                "%s does not have a deterministic implementation, but you set "
                                "'torch.use_deterministic_algorithms(True, warn_only=True)'. You can file an issue at "
                                "https://github.com/pytorch/pytorch/issues to help us prioritize adding deterministic "
                                "support for this operation.",
                                caller);
    }
    PyErr_Format(PyExc_RuntimeError,
                 "%s does not have a deterministic implementation, but you set "
                 "'torch.use_deterministic_algorithms(True)'. You can turn off determinism just for this operation, "
                 "or you can use the 'warn_only=True' option, if that's acceptable for your application. You can "
                 "also file an issue at https://github.com/pytorch/pytorch/issues to help us prioritize adding "
                 "deterministic support for this operation.",
                 caller);
    return -1;
}

int ct_deterministic_fill_empty(CtTensorObject *t)
{
    if (!ct_deterministic_algorithms || !ct_deterministic_fill_uninitialized) {
        return 0;
    }
    /* the whole storage (empty_strided's gaps too), seen as one flat run of elements */
    int64_t n = (int64_t)(t->storage->nbytes / ct_dtype_info[t->dtype].itemsize), one = 1;
    if (n == 0) {
        return 0;
    }
    CtScalar value;
    if (ct_is_floating(t->dtype)) {
        value = (CtScalar){CT_KIND_FLOAT, {.d = NAN}};
    } else if (t->dtype == CT_BOOL) {
        value = (CtScalar){CT_KIND_BOOL, {.b = true}};
    } else {
        double lo, hi;
        ct_dtype_range(t->dtype, &lo, &hi);
        value = (CtScalar){CT_KIND_INT, {.i = t->dtype == CT_I64 ? INT64_MAX : (int64_t)hi}};
    }
    CtTensorObject *flat = ct_view_of(t, 1, &n, &one, 0);
    int r = flat != NULL ? ct_fill_(flat, &value) : -1;
    Py_XDECREF(flat);
    return r;
}

/* ---------------------------------------------------------------------------------------------
 * Python functions */

/* obj must be exactly a bool, as PyTorch's parser wants ("argument 'mode' (position 1) must be bool,
 * not int"); pos 0: passed by keyword. */
static int bool_arg(const char *argname, int pos, PyObject *obj, bool *out)
{
    if (!PyBool_Check(obj)) {
        if (pos > 0) {
            PyErr_Format(PyExc_TypeError, "_set_deterministic_algorithms(): argument '%s' (position %d) must be bool, "
                         "not %s", argname, pos, Py_TYPE(obj)->tp_name);
        } else {
            PyErr_Format(PyExc_TypeError, "_set_deterministic_algorithms(): argument '%s' must be bool, not %s",
                         argname, Py_TYPE(obj)->tp_name);
        }
        return -1;
    }
    *out = obj == Py_True;
    return 0;
}

static void set_deterministic(bool mode, bool warn_only)
{
    ct_deterministic_algorithms = mode;
    ct_deterministic_warn_only = warn_only;
}

PyDoc_STRVAR(use_deterministic_algorithms_doc,
             "use_deterministic_algorithms(mode, *, warn_only=False)\n\n"
             "Sets whether operations must use deterministic algorithms. ctorch's kernels are deterministic "
             "(fixed-order reductions, sort-based accumulating scatters); with mode=True the few that are "
             "not (the CUDA backward of grid_sampler_2d/3d) raise RuntimeError, or warn with warn_only=True, "
             "and empty() / empty_like() / new_empty() fill their memory (NaN for floats, "
             "the maximum for integers) while ctorch.utils.deterministic.fill_uninitialized_memory is True.");

static PyObject *py_use_deterministic_algorithms(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                                 PyObject *kwnames)
{
    static const char *const names[] = {"mode", "*warn_only", NULL};
    PyObject *a[2];
    bool mode = false, warn_only = false;
    bool has_mode = nargs > 0;
    for (Py_ssize_t i = 0; kwnames != NULL && i < PyTuple_GET_SIZE(kwnames); i++) {
        has_mode |= PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), "mode") == 0;
    }
    if (!has_mode) { /* the message of PyTorch's Python function */
        PyErr_SetString(PyExc_TypeError, "use_deterministic_algorithms() missing 1 required positional argument: "
                                         "'mode'");
        return NULL;
    }
    if (ct_parse_args("use_deterministic_algorithms", args, nargs, kwnames, names, 1, a) < 0 ||
        bool_arg("mode", nargs > 0 ? 1 : 0, a[0], &mode) < 0 ||
        (a[1] != NULL && bool_arg("warn_only", 0, a[1], &warn_only) < 0)) {
        return NULL;
    }
    set_deterministic(mode, warn_only);
    Py_RETURN_NONE;
}

static PyObject *py_are_deterministic_algorithms_enabled(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(ct_deterministic_algorithms);
}

static PyObject *py_is_deterministic_algorithms_warn_only_enabled(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(ct_deterministic_warn_only);
}

PyDoc_STRVAR(set_deterministic_debug_mode_doc,
             "set_deterministic_debug_mode(debug_mode)\n\n"
             "The other interface of use_deterministic_algorithms: 'default' or 0 neither errors nor warns on "
             "nondeterministic operations, 'warn' or 1 warns, 'error' or 2 errors.");

static PyObject *py_set_deterministic_debug_mode(PyObject *self, PyObject *arg)
{
    long long mode;
    if (PyUnicode_Check(arg)) {
        static const char *const modes[] = {"default", "warn", "error"};
        for (mode = 0; mode < 3; mode++) {
            if (PyUnicode_CompareWithASCIIString(arg, modes[mode]) == 0) {
                break;
            }
        }
        if (mode == 3) {
            PyErr_Format(PyExc_RuntimeError, "invalid value of debug_mode, expected one of `default`, `warn`, `error`, "
                         "but got %U", arg);
            return NULL;
        }
    } else if (PyLong_Check(arg)) { /* bool included, as isinstance(True, int) */
        int overflow = 0;
        mode = PyLong_AsLongLongAndOverflow(arg, &overflow);
        if (mode == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (overflow != 0 || mode < 0 || mode > 2) {
            PyErr_Format(PyExc_RuntimeError, "invalid value of debug_mode, expected 0, 1, or 2, but got %S", arg);
            return NULL;
        }
    } else {
        PyErr_Format(PyExc_TypeError, "debug_mode must be str or int, but got %R", (PyObject *)Py_TYPE(arg));
        return NULL;
    }
    set_deterministic(mode != 0, mode == 1);
    Py_RETURN_NONE;
}

static PyObject *py_get_deterministic_debug_mode(PyObject *self, PyObject *unused)
{
    return PyLong_FromLong(!ct_deterministic_algorithms ? 0 : ct_deterministic_warn_only ? 1 : 2);
}

static PyObject *py_get_fill_uninitialized(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(ct_deterministic_fill_uninitialized);
}

static PyObject *py_set_fill_uninitialized(PyObject *self, PyObject *arg)
{
    if (!PyBool_Check(arg)) {
        PyErr_Format(PyExc_RuntimeError, "expected a bool, but got %s", Py_TYPE(arg)->tp_name);
        return NULL;
    }
    ct_deterministic_fill_uninitialized = arg == Py_True;
    Py_RETURN_NONE;
}

PyMethodDef ct_determinism_module_methods[] = {
    {"use_deterministic_algorithms", CT_FASTCALL(py_use_deterministic_algorithms), CT_METH_FK,
     use_deterministic_algorithms_doc},
    {"are_deterministic_algorithms_enabled", py_are_deterministic_algorithms_enabled, METH_NOARGS,
     "are_deterministic_algorithms_enabled() -> bool: whether use_deterministic_algorithms(True) is in force"},
    {"is_deterministic_algorithms_warn_only_enabled", py_is_deterministic_algorithms_warn_only_enabled, METH_NOARGS,
     "is_deterministic_algorithms_warn_only_enabled() -> bool: whether it was set with warn_only=True"},
    {"set_deterministic_debug_mode", py_set_deterministic_debug_mode, METH_O, set_deterministic_debug_mode_doc},
    {"get_deterministic_debug_mode", py_get_deterministic_debug_mode, METH_NOARGS,
     "get_deterministic_debug_mode() -> int: 0 (off), 1 (warn only) or 2 (error)"},
    {"_get_deterministic_fill_uninitialized_memory", py_get_fill_uninitialized, METH_NOARGS,
     "whether empty() fills its memory under determinism (ctorch.utils.deterministic.fill_uninitialized_memory)"},
    {"_set_deterministic_fill_uninitialized_memory", py_set_fill_uninitialized, METH_O,
     "sets ctorch.utils.deterministic.fill_uninitialized_memory (a bool)"},
    {NULL},
};
PyMethodDef ct_determinism_tensor_methods[] = {{NULL}};
PyType_Slot ct_determinism_tensor_slots[] = {{0, NULL}};
