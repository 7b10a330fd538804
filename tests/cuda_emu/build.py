"""Builds ctorch with its CUDA backend running on the CUDA emulator, as the package OUT/ctorch:
python/ctorch, _C compiled as a CUDA build (CT_HAVE_CUDA) and _C_cuda.so compiled from csrc/cuda
by g++ against cuda_emu.h and emu_runtime.cpp. `PYTHONPATH=OUT pytest tests` then runs the
CUDA half of the suite on the emulated GPUs (see README.md here).

usage: build.py OUT [-j JOBS]"""
import argparse
import glob
import os
import shutil
import subprocess
import sys
import sysconfig

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import translate  # noqa: E402


def cuda_include():
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")):
        if home and os.path.isdir(os.path.join(home, "include")):
            return os.path.join(home, "include")
    nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    return os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))), "include")


def changed(path, text):
    """Writes text to path unless it already holds it (keeps the mtime for the rebuild check)."""
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path, "w") as f:
        f.write(text)


def stale(obj, deps):
    return not os.path.exists(obj) or os.path.getmtime(obj) < max(os.path.getmtime(d) for d in deps)


def run_jobs(jobs, njobs):
    running = []
    for name, cmd in jobs:
        while len(running) >= njobs:
            p, n = running.pop(0)
            if p.wait() != 0:
                sys.exit("cuda_emu: compiling failed: " + n)
        print("cuda_emu:", cmd[0], os.path.basename(name), flush=True)
        running.append((subprocess.Popen(cmd), name))
    for p, n in running:
        if p.wait() != 0:
            sys.exit("cuda_emu: compiling failed: " + n)


def build_c_extension(out, njobs):
    """ctorch._C as setup.py builds it with CUDA (CT_HAVE_CUDA), at -O1."""
    import numpy
    obj_dir = os.path.join(out, "c")
    os.makedirs(obj_dir, exist_ok=True)
    flags = ["gcc", "-std=c11", "-O1", "-fPIC", "-fno-strict-aliasing", "-fno-math-errno", "-w",
             "-DCT_HAVE_CUDA=1", '-DCT_CUDA_VERSION="13.0"', "-DCT_CUDA_MAJOR=13",
             "-I" + os.path.join(ROOT, "csrc"), "-I" + numpy.get_include(),
             "-I" + sysconfig.get_paths()["include"]]
    headers = glob.glob(os.path.join(ROOT, "csrc", "*.h")) + glob.glob(os.path.join(ROOT, "csrc", "cuda", "*.h"))
    jobs, objects = [], []
    for src in sorted(glob.glob(os.path.join(ROOT, "csrc", "*.c"))):
        obj = os.path.join(obj_dir, os.path.basename(src) + ".o")
        objects.append(obj)
        if stale(obj, [src] + headers):
            jobs.append((src, flags + ["-c", src, "-o", obj]))
    run_jobs(jobs, njobs)
    lib = os.path.join(out, "ctorch", "_C" + sysconfig.get_config_var("EXT_SUFFIX"))
    subprocess.run(["gcc", "-shared", "-o", lib] + objects + ["-lm", "-lpthread", "-ldl"], check=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--c-extension", metavar="SO",
                    help="use this ctorch._C (it must be a CUDA build: CT_HAVE_CUDA) instead of compiling one")
    ap.add_argument("--asan", action="store_true",
                    help="the backend under AddressSanitizer: kernels' out-of-bounds accesses are reported "
                         "(run Python with LD_PRELOAD=$(gcc -print-file-name=libasan.so))")
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    src_dir = os.path.join(out, "src")
    os.makedirs(src_dir, exist_ok=True)
    flags = ["g++", "-std=c++17", os.environ.get("CT_EMU_OPT", "-O1"), "-g0", "-fPIC", "-fvisibility=hidden", "-w",
             "-include", os.path.join(HERE, "cuda_emu.h"), "-I" + HERE,
             "-I" + os.path.join(ROOT, "csrc"), "-I" + os.path.join(ROOT, "csrc", "cuda"),
             "-I" + sysconfig.get_paths()["include"], "-I" + cuda_include(),
             '-DCT_CUDA_ARCH_LIST="75"', '-DCT_CUDA_PTX_ARCH="75"']
    sanitize = ["-fsanitize=address", "-fno-omit-frame-pointer"] if args.asan else []
    flags += sanitize
    stamp = os.path.join(out, "flags.txt")
    if not os.path.exists(stamp) or open(stamp).read() != " ".join(flags):
        for obj in glob.glob(os.path.join(src_dir, "*.o")):
            os.remove(obj)  # built with other flags
        with open(stamp, "w") as f:
            f.write(" ".join(flags))
    shutil.copytree(os.path.join(ROOT, "python", "ctorch"), os.path.join(out, "ctorch"), dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("*.so", "__pycache__"))
    if args.c_extension:
        shutil.copy(args.c_extension, os.path.join(out, "ctorch", os.path.basename(args.c_extension)))
    else:
        build_c_extension(out, args.j)
    deps = [os.path.join(HERE, "cuda_emu.h")] + glob.glob(os.path.join(ROOT, "csrc", "cuda", "*.cuh")) \
        + glob.glob(os.path.join(ROOT, "csrc", "cuda", "*.h")) + glob.glob(os.path.join(ROOT, "csrc", "*.h"))
    jobs, objects = [], []
    for src in sorted(glob.glob(os.path.join(ROOT, "csrc", "cuda", "*.cu"))) + [os.path.join(HERE, "emu_runtime.cpp")]:
        dst = src
        if src.endswith(".cu"):
            dst = os.path.join(src_dir, os.path.basename(src) + ".cpp")
            with open(src) as f:
                changed(dst, '#line 1 "%s"\n' % src + translate.translate(f.read()))
        obj = os.path.join(src_dir, os.path.basename(src) + ".o")
        objects.append(obj)
        if stale(obj, [dst] + deps):
            jobs.append((src, flags + ["-c", dst, "-o", obj]))
    run_jobs(jobs, args.j)
    lib = os.path.join(out, "ctorch", "_C_cuda.so")
    subprocess.run(["g++", "-shared", "-o", lib] + objects + sanitize + ["-Wl,-z,defs", "-lpthread"], check=True)
    print("cuda_emu: built", lib)


if __name__ == "__main__":
    main()
