#!/usr/bin/env bash
# gpu_check.sh: what to run whenever a machine with an NVIDIA GPU is at hand (no network needed).
#
# Builds ctorch with CUDA in place, says what ctorch.cuda.diagnose() sees, runs the whole test
# suite, runs the suite's CUDA half (tests whose id mentions cuda) under compute-sanitizer's
# memcheck, and runs the benchmarks that exist (benchmarks/bench_cpu.py, bench_cuda.py).
# Everything printed also goes to benchmarks/results/gpu-<date>.txt, which starts with the
# device, the date and the git commit: commit that file.
#
#   scripts/gpu_check.sh                 # everything
#   SKIP_SANITIZER=1 scripts/gpu_check.sh
#   CTORCH_CUDA_ARCH=90 scripts/gpu_check.sh   # build for this GPU only (faster)
# Exit status: 0 when every step passed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
mkdir -p benchmarks/results
stamp=$(date -u +%Y-%m-%d-%H%M)
out="benchmarks/results/gpu-$stamp.txt"

find_tool() { # name, then candidate paths
    local name=$1
    shift
    command -v "$name" 2>/dev/null && return 0
    for p in "$@"; do
        [ -x "$p" ] && { echo "$p"; return 0; }
    done
    return 1
}

status=0
step() { # title, command...
    local title=$1
    shift
    echo
    echo "== $title"
    echo "\$ $*"
    local t0=$SECONDS
    "$@"
    local rc=$?
    echo "-- exit $rc after $((SECONDS - t0)) s"
    [ $rc -eq 0 ] || status=1
}

main() {
    local cuda_home=${CUDA_HOME:-/usr/local/cuda}
    echo "# ctorch GPU check"
    local gpus
    gpus=$(nvidia-smi --query-gpu=index,name,compute_cap,memory.total,driver_version --format=csv,noheader \
        2>/dev/null | paste -sd ';' -)
    echo "device: ${gpus:-unknown (nvidia-smi not found)}"
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (plus uncommitted changes)')"
    echo "host: $(uname -srm); $(python3 -V 2>&1); nvcc $(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //') x $(nproc)"

    step "build with CUDA" env CTORCH_CUDA=1 python3 setup.py build_ext --inplace
    export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}"
    step "ctorch.cuda.diagnose()" python3 -c "import ctorch, sys; ctorch.cuda.diagnose(); sys.exit(0 if ctorch.cuda.is_available() else 1)"
    step "pytest: the whole suite" python3 -m pytest -q -p no:cacheprovider tests

    local sanitizer
    if [ -n "${SKIP_SANITIZER:-}" ]; then
        echo; echo "== compute-sanitizer skipped (SKIP_SANITIZER set)"
    elif sanitizer=$(find_tool compute-sanitizer "$cuda_home/bin/compute-sanitizer" \
        "$cuda_home/compute-sanitizer/compute-sanitizer"); then
        # The caching allocator keeps memory at exit by design, so no leak check.
        step "compute-sanitizer memcheck: the CUDA half of the suite" "$sanitizer" --tool memcheck \
            --error-exitcode 1 --target-processes all python3 -m pytest -q -p no:cacheprovider -k cuda tests
    else
        echo; echo "== compute-sanitizer not found: memcheck step FAILED"
        status=1
    fi

    for bench in benchmarks/bench_cpu.py benchmarks/bench_cuda.py; do
        if [ -f "$bench" ]; then
            step "benchmark $bench" python3 "$bench"
        else
            echo; echo "== $bench not present, skipped"
        fi
    done
    echo
    echo "overall: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
    return $status
}

main "$@" 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
echo "(written to $out)"
exit "$rc"
