"""Checks of the CUDA backend's host-side logic that need nvcc but no GPU.

tests/cuda_host/ holds two C++ programs built against csrc/cuda/ with a fake CUDA runtime
(fake_cudart.cpp, linked with -cudart none): allocator_harness.cu runs the caching allocator
(rounding, pools, splits and merges, stream awareness, statistics, the OOM retry and message,
the pinned-memory cache); copy_harness.cu runs copy.cu's per-thread bodies, conversions, offset
calculator, iteration-space splitting and launch decisions; reduce_harness.cu emulates the grids
of reduce.cu and sort.cu with their per-thread bodies (reductions, arg-reductions, scans,
softmax, sorts, launch plans) against naive references. Skipped where nvcc is missing.
"""
import os
import shutil
import subprocess
import sysconfig

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "tests", "cuda_host")


def find_nvcc():
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")):
        if home and os.path.exists(os.path.join(home, "bin", "nvcc")):
            return os.path.join(home, "bin", "nvcc")
    if shutil.which("nvcc"):
        return shutil.which("nvcc")
    if os.path.exists("/usr/local/cuda/bin/nvcc"):
        return "/usr/local/cuda/bin/nvcc"
    return None


NVCC = find_nvcc()
pytestmark = pytest.mark.skipif(NVCC is None or shutil.which("g++") is None or
                                not os.path.exists(os.path.join(ROOT, "csrc", "cuda")),
                                reason="needs nvcc, g++ and the sources")


@pytest.fixture(scope="module")
def fake_runtime(tmp_path_factory):
    out = tmp_path_factory.mktemp("cuda_host")
    obj = str(out / "fake_cudart.o")
    include = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(NVCC))), "include")
    subprocess.run(["g++", "-c", "-std=c++17", "-I" + include, os.path.join(HERE, "fake_cudart.cpp"), "-o", obj],
                   check=True)
    return out, obj


def build_and_run(fake_runtime, sources):
    out, obj = fake_runtime
    exe = str(out / os.path.basename(sources[0]).replace(".cu", ""))
    cmd = [NVCC, "-std=c++17", "-cudart", "none", "-arch=compute_75", "-code=compute_75", "-O1",
           "--expt-relaxed-constexpr", "-I" + os.path.join(ROOT, "csrc"), "-I" + os.path.join(ROOT, "csrc", "cuda"),
           "-I" + HERE, "-I" + sysconfig.get_paths()["include"]] + sources + [obj, "-o", exe]
    subprocess.run(cmd, check=True)
    r = subprocess.run([exe], capture_output=True, text=True, timeout=300)
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_caching_allocator_on_fake_runtime(fake_runtime):
    out = build_and_run(fake_runtime, [os.path.join(HERE, "allocator_harness.cu"),
                                       os.path.join(ROOT, "csrc", "cuda", "allocator.cu")])
    assert "all allocator checks passed" in out


def test_copy_kernels_on_host(fake_runtime):
    out = build_and_run(fake_runtime, [os.path.join(HERE, "copy_harness.cu")])
    assert "all copy checks passed" in out


def test_reduce_kernels_on_host(fake_runtime):
    out, obj = fake_runtime
    include = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(NVCC))), "include")
    cub_stubs = str(out / "fake_cudart_cub.o")
    subprocess.run(["g++", "-c", "-std=c++17", "-I" + include, os.path.join(HERE, "fake_cudart_cub.cpp"), "-o",
                    cub_stubs], check=True)
    text = build_and_run(fake_runtime, [os.path.join(HERE, "reduce_harness.cu"), cub_stubs])
    assert "all reduce checks passed" in text


def test_index_kernels_on_host(fake_runtime):
    out = build_and_run(fake_runtime, [os.path.join(HERE, "index_harness.cu")])
    assert "all index checks passed" in out


@pytest.mark.parametrize("source", ["random.cu", "index.cu"])
def test_no_fused_multiply_add(tmp_path, source):
    """Random samples (and accumulated index_put sums) must be the CPU's bits: the GPU code of
    these files may contain no fma, which nvcc would otherwise form from a * b + c (philox.h and
    index.cu spell every such operation with round-to-nearest intrinsics)."""
    ptx = str(tmp_path / (source + ".ptx"))
    subprocess.run([NVCC, "-ptx", "-std=c++17", "-O3", "--expt-relaxed-constexpr", "-arch=compute_75",
                    "-I" + os.path.join(ROOT, "csrc"), "-I" + os.path.join(ROOT, "csrc", "cuda"),
                    "-I" + sysconfig.get_paths()["include"], os.path.join(ROOT, "csrc", "cuda", source), "-o", ptx],
                   check=True)
    text = open(ptx).read()
    assert ".entry" in text
    fused = [line.strip() for line in text.splitlines() if line.strip().startswith("fma.")]
    assert not fused, fused[:5]
    # log/cos are philox.h's own; sqrt must be the correctly rounded one
    assert "sqrt.approx" not in text and ".ftz" not in text
