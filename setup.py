"""Build script for ctorch.

Builds the C extension ``ctorch._C`` from ``csrc/*.c`` (C11, -O3). When nvcc is found (or
CUDA_HOME is set) and CTORCH_CUDA is not 0, ``csrc/cuda/*.cu`` are compiled into a separate
shared object ``ctorch/_C_cuda.so`` that ``_C`` opens on first CUDA use, so that importing
ctorch never needs a GPU, a driver or the CUDA libraries. CTORCH_CUDA=1 makes a missing nvcc
an error. Nothing links a BLAS: CPU matmul opens OpenBLAS at run time (see csrc/blas_cpu.c).
"""
import concurrent.futures
import glob
import os
import re
import shutil
import subprocess
import sys
import time

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


def cuda_version(nvcc):
    """(major, minor) of the toolkit behind nvcc, e.g. (13, 0)."""
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"release (\d+)\.(\d+)", out)
    if m is None:
        sys.exit(f"ctorch: cannot read the CUDA version from `{nvcc} --version`")
    return int(m.group(1)), int(m.group(2))


def cuda_archs():
    """The SASS targets (CTORCH_CUDA_ARCH, e.g. "75;80;86;89;90" or "8.6") and the PTX one (the last)."""
    spec = os.environ.get("CTORCH_CUDA_ARCH", CUDA_ARCHS_DEFAULT)
    archs = [a.strip().replace(".", "") for a in spec.replace(",", ";").split(";") if a.strip()]
    if not archs:
        sys.exit("ctorch: CTORCH_CUDA_ARCH names no architecture")
    return archs, re.sub(r"[^0-9]", "", archs[-1])


def cuda_device_opt():
    """The kernels' optimisation level (CTORCH_CUDA_OPT, 3 by default): 0 compiles them through cicc and
    ptxas unoptimised, in half the time: the test build's (CI has no GPU; what runs there is the CUDA
    emulator's own g++ build), correct everywhere but slow on a GPU."""
    level = os.environ.get("CTORCH_CUDA_OPT", "3")
    if level not in ("0", "3"):
        sys.exit(f"ctorch: CTORCH_CUDA_OPT must be 0 or 3, got {level!r}")
    return [] if level == "3" else ["-Xcicc", "-O0", "-Xptxas", "-O0"]


def build_jobs():
    """How many compilers run at once (CTORCH_BUILD_JOBS; default: the cores)."""
    return max(1, int(os.environ.get("CTORCH_BUILD_JOBS") or os.cpu_count() or 1))


class BuildExt(build_ext):
    """_C from csrc/*.c and, when nvcc is found, the CUDA backend from csrc/cuda/*.cu, every
    compile (gcc and nvcc alike) in one pool of build_jobs() workers: the nvcc jobs, the longest,
    are queued first, then _C's sources one file a job, so that both overlap."""

    def build_extensions(self):
        nvcc, home = want_cuda()
        with concurrent.futures.ThreadPoolExecutor(build_jobs()) as pool:
            cuda = self.start_cuda(nvcc, pool) if nvcc is not None else None
            compile_file = self.compiler.compile

            def compile_each(sources, *args, **kwargs):
                futures = [pool.submit(compile_file, [src], *args, **kwargs) for src in sources]
                return [obj for f in futures for obj in f.result()]

            self.compiler.compile = compile_each
            try:
                super().build_extensions()
            finally:
                self.compiler.compile = compile_file
            if cuda is not None:
                self.link_cuda(nvcc, home, *cuda)

    def start_cuda(self, nvcc, pool):
        """Queues the nvcc compiles that are not up to date; returns (objects, gencode, pending)."""
        sources = sorted(glob.glob(os.path.join(HERE, "csrc", "cuda", "*.cu")))
        if not sources:
            print("ctorch: no CUDA sources, skipping the CUDA backend")
            return None
        archs, ptx = cuda_archs()
        gencode = []
        for a in archs:
            gencode += ["-gencode", f"arch=compute_{a},code=sm_{a}"]
        gencode += ["-gencode", f"arch=compute_{ptx},code=compute_{ptx}"]
        build_dir = os.path.join(self.build_temp, "cuda")
        os.makedirs(build_dir, exist_ok=True)
        include = [
            "-I" + os.path.join(HERE, "csrc"),
            "-I" + os.path.join(HERE, "csrc", "cuda"),
            "-I" + __import__("sysconfig").get_paths()["include"],
        ]
        # The arch list is compiled in so that ctorch.cuda.diagnose() can tell whether the GPU
        # has a kernel image. Only ct_cuda_backend_init is exported (-fvisibility=hidden).
        defines = [f'-DCT_CUDA_ARCH_LIST="{";".join(archs)}"', f'-DCT_CUDA_PTX_ARCH="{ptx}"']
        # --fmad=false: no contraction of a*b+c into one FMA, so kernels round as the CPU's C does (the
        # kernels that promise the CPU's bits: pooling, interpolation, col2im, scatter_add, ...)
        flags = ["-O3", "-std=c++17", "-lineinfo", "--expt-relaxed-constexpr", "--fmad=false",
                 "-Xcompiler", "-fPIC,-fvisibility=hidden,-Wall,-Wno-unused-function"] + cuda_device_opt()
        # Objects are rebuilt when their source, a header or the flags changed (a stamp file
        # holds the flags, written once every object is built): a full build of every
        # architecture takes minutes.
        headers = glob.glob(os.path.join(HERE, "csrc", "*.h")) + glob.glob(os.path.join(HERE, "csrc", "cuda", "*.cuh")) \
            + glob.glob(os.path.join(HERE, "csrc", "cuda", "*.h"))
        newest_header = max((os.path.getmtime(h) for h in headers), default=0)
        stamp = os.path.join(build_dir, "flags.txt")
        flag_text = " ".join([nvcc] + flags + include + defines + gencode)
        same_flags = os.path.exists(stamp) and open(stamp).read() == flag_text
        objects = []
        pending = []
        for src in sources:
            obj = os.path.join(build_dir, os.path.basename(src) + ".o")
            objects.append(obj)
            if same_flags and os.path.exists(obj) and os.path.getmtime(obj) > max(os.path.getmtime(src), newest_header):
                continue
            cmd = [nvcc, "-c", src, "-o", obj] + flags + include + defines + gencode
            pending.append((src, pool.submit(self.nvcc_compile, src, cmd)))
        return objects, gencode, pending, (stamp, flag_text)

    @staticmethod
    def nvcc_compile(src, cmd):
        print("ctorch: nvcc", os.path.relpath(src, HERE), flush=True)
        started = time.time()
        rc = subprocess.call(cmd)
        return rc, time.time() - started

    def link_cuda(self, nvcc, home, objects, gencode, pending, stamp):
        failed = []
        for src, f in pending:
            rc, seconds = f.result()
            if rc != 0:
                failed.append(os.path.relpath(src, HERE))
            else:
                print(f"ctorch: compiled {os.path.relpath(src, HERE)} in {seconds:.1f} s")
        if failed:
            sys.exit("ctorch: nvcc failed on " + ", ".join(failed))
        with open(stamp[0], "w") as f:
            f.write(stamp[1])
        ext_dir = os.path.dirname(self.get_ext_fullpath("ctorch._C"))
        out = os.path.join(ext_dir, "_C_cuda.so")
        libdir = os.path.join(home, "lib64")
        if not os.path.isdir(libdir):
            libdir = os.path.join(home, "lib")
        # cudart is static so the object needs no libcudart at run time; cuBLAS is dynamic
        # and found at dlopen time (a missing one is reported by ctorch.cuda.diagnose()).
        # -z defs: the backend must not depend on Python symbols (errors go through CtCudaHost).
        cmd = [nvcc, "-shared", "-o", out] + objects + gencode + [
            "-L" + libdir, "-cudart", "static", "-lcublas", "-Xlinker", "-rpath," + libdir,
            "-Xlinker", "-z,defs"]
        print("ctorch: linking", os.path.relpath(out, HERE) if out.startswith(HERE) else out)
        if subprocess.call(cmd) != 0:
            sys.exit("ctorch: linking the CUDA backend failed")
        self.cuda_output = out

    def copy_extensions_to_source(self):
        # --inplace: setuptools copies _C into the source tree; the CUDA backend goes beside it.
        super().copy_extensions_to_source()
        out = getattr(self, "cuda_output", None)
        if out is not None:
            package_dir = self.get_finalized_command("build_py").get_package_dir("ctorch")
            shutil.copy(out, os.path.join(package_dir, "_C_cuda.so"))
            print("ctorch: copied the CUDA backend to", os.path.join(package_dir, "_C_cuda.so"))


def extension():
    sources = sorted(glob.glob(os.path.join("csrc", "*.c")))
    import numpy

    define_macros = []
    include_dirs = ["csrc", numpy.get_include()]
    nvcc, _ = want_cuda()
    if nvcc is not None:
        major, minor = cuda_version(nvcc)
        # _C never includes CUDA headers; it learns the toolkit version (ctorch.version.cuda,
        # the cuBLAS soname to look for) from these.
        define_macros += [("CT_HAVE_CUDA", "1"), ("CT_CUDA_VERSION", f'"{major}.{minor}"'),
                          ("CT_CUDA_MAJOR", str(major))]
    # setuptools rebuilds _C when a dependency is newer: the headers, and a stamp holding the
    # configuration, rewritten only when it changes (switching CTORCH_CUDA=0/1 rebuilds).
    stamp = os.path.join("build", "ctorch_config.stamp")
    config = repr(define_macros)
    os.makedirs("build", exist_ok=True)
    if not os.path.exists(stamp) or open(stamp).read() != config:
        with open(stamp, "w") as f:
            f.write(config)
    depends = sorted(glob.glob(os.path.join("csrc", "*.h")) + glob.glob(os.path.join("csrc", "cuda", "*.h"))) + [stamp]
    return Extension(
        "ctorch._C",
        sources=sources,
        depends=depends,
        include_dirs=include_dirs,
        define_macros=define_macros,
        libraries=["m", "pthread", "dl"],
        # -fno-math-errno: ctorch never reads errno, and with it sqrt (optimizer steps) vectorises
        extra_compile_args=["-O3", "-std=c11", "-fno-strict-aliasing", "-fno-math-errno", "-Wall",
                            "-Wno-unused-function", "-Wno-missing-braces"],
    )


setup(ext_modules=[extension()], cmdclass={"build_ext": BuildExt})
