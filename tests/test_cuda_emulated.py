"""The CUDA half of the suite where there is no GPU: on the CUDA emulator (tests/cuda_emu).

The emulated build (csrc/cuda compiled by g++, every block's threads run as fibers, the runtime
and cuBLAS emulated; see tests/cuda_emu/README.md) is made once per session; then each test
file's `cuda` tests run against it in a child pytest (several at a time), one test here per file. Skipped where a
real GPU is present (the suite's own `cuda` parameters run there), where g++ or the CUDA headers
are missing, or with CTORCH_NO_EMULATOR=1.
"""
import concurrent.futures
import glob
import os
import shutil
import subprocess
import sys

import pytest

import ctorch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EMU = os.path.join(HERE, "cuda_emu")
sys.path.insert(0, EMU)
from build import cuda_include  # noqa: E402

SELF = os.path.basename(__file__)
# test_cuda_host.py builds its own programs with nvcc; nothing in it runs on a device.
FILES = sorted(os.path.basename(f) for f in glob.glob(os.path.join(HERE, "test_*.py"))
               if os.path.basename(f) not in (SELF, "test_cuda_host.py"))


def _why_not():
    if os.environ.get("CTORCH_NO_EMULATOR") == "1":
        return "CTORCH_NO_EMULATOR=1"
    if ctorch.cuda.is_available():
        return "a real GPU is present: the suite's cuda tests run on it"
    if shutil.which("g++") is None or shutil.which("gcc") is None:
        return "needs gcc and g++"
    if not os.path.exists(os.path.join(cuda_include(), "cuda_runtime.h")):
        return "needs the CUDA headers"
    return None


pytestmark = pytest.mark.skipif(_why_not() is not None, reason=str(_why_not()))


def _run_file(out, test_file, workdir):
    env = dict(os.environ, PYTHONPATH=out)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "cuda",
                           os.path.join(HERE, test_file)], capture_output=True, text=True, env=env, cwd=workdir)


@pytest.fixture(scope="session")
def emulated(tmp_path_factory):
    """Builds the emulated package, then runs every file's cuda tests on it, as many files at a
    time as there are cores (the biggest first); the tests below report one file each."""
    out = str(tmp_path_factory.mktemp("cuda_emu"))
    r = subprocess.run([sys.executable, os.path.join(EMU, "build.py"), out, "-j", str(os.cpu_count() or 1)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    probe = "import ctorch; print(ctorch.__file__, ctorch.cuda.is_available(), ctorch.cuda.get_device_name(0))"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=out),
                       cwd=out)
    assert r.stdout.startswith(os.path.join(out, "ctorch")) and " True ctorch CUDA emulator" in r.stdout, r.stdout + r.stderr
    order = sorted(FILES, key=lambda f: -os.path.getsize(os.path.join(HERE, f)))
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        runs = {f: pool.submit(_run_file, out, f, out) for f in order}
        return {f: runs[f].result() for f in FILES}


@pytest.mark.parametrize("test_file", FILES)
def test_cuda_tests_on_emulator(emulated, test_file):
    r = emulated[test_file]
    # 5: no test of the file has a cuda parameter
    assert r.returncode in (0, 5), r.stdout[-6000:] + r.stderr[-3000:]
