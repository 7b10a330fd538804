"""Build script for ctorch.

Builds the C extension ``ctorch._C`` from ``csrc/*.c`` (C11, -O3). When nvcc is found (or
CUDA_HOME is set) and CTORCH_CUDA is not 0, ``csrc/cuda/*.cu`` are compiled into a separate
shared object ``ctorch/_C_cuda.so`` that ``_C`` opens on first CUDA use, so that importing
ctorch never needs a GPU, a driver or the CUDA libraries. CTORCH_CUDA=1 makes a missing nvcc
an error. Nothing links a BLAS: CPU matmul opens OpenBLAS at run time (see csrc/blas_cpu.c).
"""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
CUDA_ARCHS_DEFAULT = "75;80;86;89;90"


def find_nvcc():
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home and os.path.exists(os.path.join(home, "bin", "nvcc")):
        return os.path.join(home, "bin", "nvcc"), home
    nvcc = shutil.which("nvcc")
    if nvcc:
        return nvcc, os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    for home in ("/usr/local/cuda",):
        if os.path.exists(os.path.join(home, "bin", "nvcc")):
            return os.path.join(home, "bin", "nvcc"), home
    return None, None


def want_cuda():
    flag = os.environ.get("CTORCH_CUDA", "")
    nvcc, home = find_nvcc()
    if flag == "0":
        print("ctorch: CTORCH_CUDA=0, building for the CPU only")
        return None, None
    if nvcc is None:
        if flag == "1":
            sys.exit("ctorch: CTORCH_CUDA=1 but nvcc was not found (set CUDA_HOME)")
        print("ctorch: nvcc not found, building for the CPU only")
        return None, None
    return nvcc, home


class BuildExt(build_ext):
    def build_extensions(self):
        super().build_extensions()
        nvcc, home = want_cuda()
        if nvcc is not None:
            self.build_cuda(nvcc, home)

    def build_cuda(self, nvcc, home):
        sources = sorted(glob.glob(os.path.join(HERE, "csrc", "cuda", "*.cu")))
        if not sources:
            print("ctorch: no CUDA sources, skipping the CUDA backend")
            return
        archs = os.environ.get("CTORCH_CUDA_ARCH", CUDA_ARCHS_DEFAULT).replace(",", ";").split(";")
        gencode = []
        for a in archs:
            a = a.strip().replace(".", "")
            if a:
                gencode += ["-gencode", f"arch=compute_{a},code=sm_{a}"]
        last = archs[-1].strip().replace(".", "")
        gencode += ["-gencode", f"arch=compute_{last},code=compute_{last}"]
        build_dir = os.path.join(self.build_temp, "cuda")
        os.makedirs(build_dir, exist_ok=True)
        include = [
            "-I" + os.path.join(HERE, "csrc"),
            "-I" + os.path.join(HERE, "csrc", "cuda"),
            "-I" + __import__("sysconfig").get_paths()["include"],
        ]
        objects = []
        jobs = []
        for src in sources:
            obj = os.path.join(build_dir, os.path.basename(src) + ".o")
            cmd = [nvcc, "-c", src, "-o", obj, "-O3", "-std=c++17", "-Xcompiler", "-fPIC",
                   "--expt-relaxed-constexpr"] + include + gencode
            jobs.append((src, cmd))
            objects.append(obj)
        procs = []
        maxjobs = max(1, int(os.environ.get("CTORCH_NVCC_JOBS", os.cpu_count() or 1)))
        for src, cmd in jobs:
            while len(procs) >= maxjobs:
                p, s = procs.pop(0)
                if p.wait() != 0:
                    sys.exit(f"ctorch: nvcc failed on {s}")
            print("ctorch: nvcc", os.path.relpath(src, HERE))
            procs.append((subprocess.Popen(cmd), src))
        for p, s in procs:
            if p.wait() != 0:
                sys.exit(f"ctorch: nvcc failed on {s}")
        ext_dir = os.path.dirname(self.get_ext_fullpath("ctorch._C"))
        out = os.path.join(ext_dir, "_C_cuda.so")
        libdir = os.path.join(home, "lib64")
        if not os.path.isdir(libdir):
            libdir = os.path.join(home, "lib")
        # cudart is static so the object needs no libcudart at run time; cuBLAS is dynamic
        # and found at dlopen time (a missing one is reported by ctorch.cuda.diagnose()).
        cmd = [nvcc, "-shared", "-o", out] + objects + gencode + [
            "-L" + libdir, "-cudart", "static", "-lcublas", "-Xlinker", "-rpath," + libdir]
        print("ctorch: linking", os.path.relpath(out, HERE) if out.startswith(HERE) else out)
        if subprocess.call(cmd) != 0:
            sys.exit("ctorch: linking the CUDA backend failed")


def extension():
    sources = sorted(glob.glob(os.path.join("csrc", "*.c")))
    import numpy

    define_macros = []
    include_dirs = ["csrc", numpy.get_include()]
    nvcc, _ = want_cuda()
    if nvcc is not None:
        define_macros.append(("CT_HAVE_CUDA", "1"))
    return Extension(
        "ctorch._C",
        sources=sources,
        include_dirs=include_dirs,
        define_macros=define_macros,
        libraries=["m", "pthread", "dl"],
        # -fno-math-errno: ctorch never reads errno, and with it sqrt (optimizer steps) vectorises
        extra_compile_args=["-O3", "-std=c11", "-fno-strict-aliasing", "-fno-math-errno", "-Wall",
                            "-Wno-unused-function", "-Wno-missing-braces"],
    )


setup(ext_modules=[extension()], cmdclass={"build_ext": BuildExt})
