"""Picks the BLAS behind CPU float32/float64 matmul at import.

ctorch links no BLAS: the C engine (csrc/blas_cpu.c) opens one at run time. Tried in order:
the path in CTORCH_BLAS (when it names a file), the ``scipy_openblas32`` package (a dependency
on x86-64 and aarch64), then the OpenBLAS NumPy bundles (numpy.libs/ or numpy/.libs/).
CTORCH_BLAS=0 keeps the built-in blocked kernel. Nothing found is not an error: the built-in
kernel runs every dtype. Once loaded, OpenBLAS takes float products of up to 64^3
multiply-adds (where it is faster than the built-in kernel and runs on the calling thread);
larger ones stay on the built-in kernel, within ~5% of OpenBLAS on an idle machine and far
steadier on a busy one (see CT_BLAS_MAX_WORK in csrc/ops_linalg.c).
"""
import glob
import os

from . import _C


def _scipy_openblas32():
    # get_lib_dir() is the package's lib/ folder and get_library(fullname=True) the one file
    # there named libscipy_openblas*; finding them without importing the package saves the
    # ~20 ms its importlib.metadata import costs. The package's own API is the fallback.
    import importlib.util

    try:
        spec = importlib.util.find_spec("scipy_openblas32")
    except Exception:
        return
    if spec is None:
        return
    for folder in spec.submodule_search_locations or ():
        yield from sorted(glob.glob(os.path.join(folder, "lib", "libscipy_openblas*.so*")))
        yield from sorted(glob.glob(os.path.join(folder, "lib", "libscipy_openblas*.dylib")))
    try:
        import scipy_openblas32

        yield os.path.join(scipy_openblas32.get_lib_dir(), scipy_openblas32.get_library(fullname=True))
    except Exception:
        return


def _numpy_bundled():
    import numpy

    pkg = os.path.dirname(numpy.__file__)
    for folder in (os.path.join(os.path.dirname(pkg), "numpy.libs"), os.path.join(pkg, ".libs")):
        for pattern in ("libscipy_openblas*.so*", "libopenblas*.so*", "libscipy_openblas*.dylib",
                        "libopenblas*.dylib"):
            yield from sorted(glob.glob(os.path.join(folder, pattern)))


def candidates():
    """Library paths to try, best first."""
    env = os.environ.get("CTORCH_BLAS", "")
    if env not in ("", "0", "1") and os.path.isfile(env):
        yield env
    yield from _scipy_openblas32()
    yield from _numpy_bundled()


def load():
    """Opens the first library that works; returns its name, or None (the built-in kernel)."""
    if os.environ.get("CTORCH_BLAS", "") == "0":
        return None
    try:
        for path in candidates():
            try:
                return _C._blas_load(path)
            except OSError:
                continue
    except Exception:  # a broken package must never break `import ctorch`
        return None
    return None
