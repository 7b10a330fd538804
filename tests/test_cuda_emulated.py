"""The CUDA half of the suite where there is no GPU: on the CUDA emulator (tests/cuda_emu).

The emulated build (csrc/cuda compiled by g++, every block's threads run as fibers, the runtime
and cuBLAS emulated; see tests/cuda_emu/README.md) is made once per session; then each test
file's `cuda` tests run against it in a child pytest (several at a time), one test here per file
(or per shard of a big file), and with CTORCH_EMU_BENCH=1 the GPU benchmark scripts at toy sizes (--smoke). All of
it starts in the background as soon as the suite is collected (start_background, called by
conftest.py), while the rest of the suite runs. Skipped where a
real GPU is present (the suite's own `cuda` parameters run there), where g++ or the CUDA headers
are missing, or with CTORCH_NO_EMULATOR=1.
"""
import atexit
import concurrent.futures
import glob
import os
import shutil
import subprocess
import sys
import tempfile

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


# what runs on the emulator: each test file's cuda tests, and the GPU benchmarks at toy sizes
# (scripts/gpu_check.sh runs them for real; here, that they run at all, numbers unused)
# (test_cross_device_*.py and test_cuda.py are about CUDA through and through: all their tests;
# elsewhere the tests whose id names cuda, i.e. the cuda value of the device parameter).
# The files that take minutes on the emulator are split into shards (conftest's --ctorch-shard),
# so that no one child run is most of the wall time; the files that take seconds share child runs
# (a child's start-up, about a second, would otherwise be most of their cost).
SHARDS = {"test_cross_device_reduce.py": 4}
OWN_RUN = {"test_reduce.py", "test_train.py", "test_elementwise.py", "test_leaks_ops.py", "test_linalg.py"}
SMALL_GROUPS = 2
JOBS = {}
JOB_FILES = {}  # job -> the test files it runs
small = []
for f in FILES:
    if not (f.startswith("test_cross_device_") or f == "test_cuda.py" or f in OWN_RUN):
        small.append(f)
        continue
    args = ["-m", "pytest", "-q", "-p", "no:cacheprovider", os.path.join(HERE, f)] \
        + ([] if f.startswith("test_cross_device_") or f == "test_cuda.py" else ["-k", "cuda"])
    n = SHARDS.get(f, 1)
    for i in range(1, n + 1):
        job = f if n == 1 else f"{f} {i}/{n}"
        JOBS[job], JOB_FILES[job] = args + ([] if n == 1 else ["--ctorch-shard", f"{i}/{n}"]), [f]
for i in range(SMALL_GROUPS):
    group = small[i::SMALL_GROUPS]
    job = f"{len(group)} smaller files ({group[0]}, ...)"
    JOBS[job] = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "cuda"] + [os.path.join(HERE, f) for f in group]
    JOB_FILES[job] = group
if os.environ.get("CTORCH_EMU_BENCH", "0") == "1":  # off in CI for time (scripts/gpu_check.sh runs them on a GPU)
    JOBS["bench_cuda.py --smoke"] = [os.path.join(ROOT, "benchmarks", "bench_cuda.py"), "--smoke"]
    JOBS["bench_train.py --smoke"] = [os.path.join(ROOT, "benchmarks", "bench_train.py"), "--smoke", "--device", "cuda"]


def _run(out, job):
    env = dict(os.environ, PYTHONPATH=out)
    return subprocess.run([sys.executable] + JOBS[job], capture_output=True, text=True, env=env, cwd=out)


def _build_and_run():
    """Builds the emulated package, then runs every job on it, as many at a time as there are
    cores (the biggest first): {job: its CompletedProcess}."""
    out = tempfile.mkdtemp(prefix="ctorch_emu_")
    atexit.register(shutil.rmtree, out, True)
    cmd = [sys.executable, os.path.join(EMU, "build.py"), out, "-j", str(os.cpu_count() or 1)]
    if getattr(ctorch.version, "cuda", None) is not None:
        cmd += ["--c-extension", ctorch._C.__file__]  # a CUDA build already: no need to compile _C again
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-4000:]
    probe = "import ctorch; print(ctorch.__file__, ctorch.cuda.is_available(), ctorch.cuda.get_device_name(0))"
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=out),
                       cwd=out)
    assert r.stdout.startswith(os.path.join(out, "ctorch")) and " True ctorch CUDA emulator" in r.stdout, r.stdout + r.stderr
    size = {j: sum(os.path.getsize(os.path.join(HERE, f)) / SHARDS.get(f, 1) for f in files)
            for j, files in JOB_FILES.items()}
    order = sorted(JOBS, key=lambda j: -size.get(j, 0))
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        runs = {j: pool.submit(_run, out, j) for j in order}
        return {j: runs[j].result() for j in JOBS}


_work = []  # the background run's future, once started


def start_background():
    """Called by conftest once the tests are collected: the build and the runs go on in a thread
    while the rest of the suite runs."""
    if not _work and _why_not() is None:
        _work.append(concurrent.futures.ThreadPoolExecutor(max_workers=1).submit(_build_and_run))


@pytest.fixture(scope="session")
def emulated():
    start_background()
    return _work[0].result()


@pytest.mark.parametrize("job", list(JOBS))
def test_on_emulator(emulated, job):
    r = emulated[job]
    # 5: pytest found no test with a cuda parameter in the file (one of CPU-only tests)
    assert r.returncode in ((0, 5) if len(JOB_FILES.get(job, ())) == 1 else (0,)), r.stdout[-6000:] + r.stderr[-3000:]
    if job.startswith("bench_cuda"):
        assert "ctorch CUDA emulator" in r.stdout and "h2d" in r.stdout, r.stdout
        assert "INVALID" not in r.stdout and "n/a" not in r.stdout, r.stdout
    elif job.startswith("bench_train"):
        assert "mlp step b=64" in r.stdout and "sgd step 100 x 1K" in r.stdout, r.stdout
