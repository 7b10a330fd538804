#!/usr/bin/env bash
# asan_cpu.sh: the CPU extension under AddressSanitizer + UndefinedBehaviorSanitizer, and pytest
# run under it (a developer tool; CI does not run it: the sanitized suite takes several times
# the normal one).
#
# Step 1 compiles csrc/*.c as setup.py does (same flags, CTORCH_CUDA=0) plus
# -fsanitize=address,undefined -fno-omit-frame-pointer -fno-wrapv -g -O1 (Python's flags carry -fwrapv,
# which would hide signed overflow from UBSan; -O1 as ASan advises: the sanitized -O3 compile is
# several times slower) into build/asan/obj, incrementally (a source newer than its object, or a
# header newer than it, recompiles; ASAN_JOBS compilers at once, default the cores), and links
# build/asan/lib/ctorch: a copy of python/ctorch with the sanitized _C, so the normal build in
# python/ctorch is neither read nor replaced. Step 2 runs pytest on the given arguments (the whole
# suite but the CUDA files when none are given) with PYTHONPATH=build/asan/lib and
#   LD_PRELOAD=libasan.so:libubsan.so  (Python itself is not sanitized: the runtimes load first)
#   PYTHONMALLOC=malloc                (every Python object through ASan's malloc)
#   ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1  (CPython keeps memory at exit by
#                                      design; tests ask for impossible sizes and expect an error)
#   UBSAN_OPTIONS=print_stacktrace=1
# Reports go to stderr (pytest shows them with -s, or in the failing test's captured output);
# grep the log for "ERROR: AddressSanitizer" and "runtime error:".
#
#   scripts/asan_cpu.sh                               # build, then the CPU suite
#   scripts/asan_cpu.sh tests/test_ops.py -k sum      # build, then these pytest arguments
#   ASAN_SKIP_BUILD=1 scripts/asan_cpu.sh tests/...   # reuse build/asan (python/ is re-copied)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/build/asan
obj=$out/obj
lib=$out/lib/ctorch
mkdir -p "$obj"
if [ -z "${ASAN_SKIP_BUILD:-}" ]; then
    read -r pyinc npinc suffix < <(python3 -c "import sysconfig, numpy
print(sysconfig.get_paths()['include'], numpy.get_include(), sysconfig.get_config_var('EXT_SUFFIX'))")
    newest_header=$(ls -t csrc/*.h | head -1)
    stale=()
    for src in csrc/*.c; do
        o=$obj/$(basename "$src" .c).o
        if [ ! -e "$o" ] || [ "$src" -nt "$o" ] || [ "$newest_header" -nt "$o" ]; then
            stale+=("$src")
        fi
    done
    echo "asan_cpu: compiling ${#stale[@]} of $(ls csrc/*.c | wc -l) sources"
    if [ ${#stale[@]} -gt 0 ]; then
        printf '%s\n' "${stale[@]}" | xargs -P "${ASAN_JOBS:-$(nproc)}" -I{} sh -c \
            'gcc -DNDEBUG -fPIC -Icsrc -I"$1" -I"$2" -std=c11 -fno-strict-aliasing -fno-math-errno -Wall \
             -Wno-unused-function -Wno-missing-braces -fsanitize=address,undefined -fno-omit-frame-pointer \
             -fno-wrapv -g -O1 -c "$3" -o "$4/$(basename "$3" .c).o"' sh "$pyinc" "$npinc" {} "$obj"
    fi
    rm -rf "$out/lib"
    mkdir -p "$out/lib"
    cp -r python/ctorch "$lib"
    rm -f "$lib"/_C*.so
    gcc -shared -fsanitize=address,undefined -o "$lib/_C$suffix" "$obj"/*.o -lm -lpthread -ldl
else
    so=$(ls "$lib"/_C*.so)  # python/ is re-copied, the sanitized _C kept
    cp "$so" "$out/_C.keep"
    rm -rf "$out/lib"
    mkdir -p "$out/lib"
    cp -r python/ctorch "$lib"
    rm -f "$lib"/_C*.so
    mv "$out/_C.keep" "$so"
fi
if [ $# -eq 0 ]; then
    set -- tests --ignore=tests/test_cuda_host.py --ignore=tests/test_cuda_emulated.py -k "not cuda"
fi
export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
export PYTHONMALLOC=malloc
export ASAN_OPTIONS="detect_leaks=0:allocator_may_return_null=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
PYTHONPATH="$out/lib" exec python3 -m pytest -q -p no:cacheprovider "$@"
