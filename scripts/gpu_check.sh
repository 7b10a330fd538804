#!/usr/bin/env bash
# gpu_check.sh: what to run, in one go, whenever a machine with an NVIDIA GPU is at hand (no
# network needed; Python with numpy and pytest; torch and cupy optional, for the benchmarks'
# comparisons).
#
# Steps (each prints its command, exit status and time; a failing step never stops the next):
#   1. facts: GPU (nvidia-smi), date, commit, Python, nvcc, compute-sanitizer, pytest plugins
#   2. pip install --no-build-isolation . (no index, no dependencies fetched): ctorch with CUDA,
#      for this GPU's architecture only (CTORCH_CUDA_ARCH, default: the compute capability
#      nvidia-smi reports, else 90), every compile in parallel; the tests import the installed package
#   3. ctorch.cuda.diagnose(), and the backend's exported symbols (nm -D)
#   4. pytest: tests/test_cuda.py first, then the CUDA half of the rest of the suite (-k 'cuda or
#      cross_device', in parallel with pytest-xdist); tests/test_cuda_host.py is left out
#      (host-only checks that CI runs without a GPU)
#   5. compute-sanitizer memcheck over a small subset, with caching off
#      (CTORCH_NO_CUDA_MEMORY_CACHING=1) so that overruns inside cached segments are seen; with
#      GPU_CHECK_SANITIZER=full, over the whole CUDA half instead of steps 4 to 6 (sanitize_all)
#   6. benchmarks/bench_cuda.py and bench_train.py (JSON beside the log)
# Every step runs under `timeout` within a total budget (GPU_CHECK_BUDGET seconds, default 560,
# under the 10-minute limit of one device call); what is left of it is printed before each step.
#
# Results go to $OUT when it is set (the device tool brings that folder back: gpu_check.txt,
# junit-*.xml, bench_*.json), else to benchmarks/results/gpu-<date>/. Commit what matters.
#
#   scripts/gpu_check.sh
#   SKIP_SANITIZER=1 SKIP_BENCH=1 scripts/gpu_check.sh
#   GPU_CHECK_SANITIZER=full GPU_CHECK_SHARD=1/2 scripts/gpu_check.sh   # memcheck over the whole CUDA half
#   GPU_CHECK_REUSE_BUILD=1 ...   # skip the build when a previous call's install is still there
#   CTORCH_CUDA_ARCH=90 GPU_CHECK_BUDGET=560 scripts/gpu_check.sh
#   GPU_CHECK_COMMIT=$(git rev-parse HEAD) ...   # (composed here: the device's copy has no .git)
# Exit status: 0 when every step passed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export PYTHONUNBUFFERED=1
stamp=$(date -u +%Y-%m-%d-%H%M)
if [ -n "${OUT:-}" ]; then
    outdir=$OUT
else
    outdir="benchmarks/results/gpu-$stamp"
fi
mkdir -p "$outdir"
log="$outdir/gpu_check.txt"
budget=${GPU_CHECK_BUDGET:-560}
PY=${PYTHON:-python3}

status=0
failed_steps=""
left() { echo $((budget - SECONDS)); }

# step TITLE SECONDS COMMAND...: runs COMMAND under `timeout` for at most SECONDS (less when the
# budget is nearly spent; skipped when under 15 s are left), prints its exit status and time.
step() {
    local title=$1 limit=$2
    shift 2
    local remaining
    remaining=$(left)
    echo
    echo "== $title   [budget left: ${remaining} s, step limit: ${limit} s]"
    echo "\$ $*"
    if [ "$remaining" -lt 15 ]; then
        echo "-- SKIPPED: the time budget is spent"
        status=1
        failed_steps="$failed_steps; $title (skipped)"
        return 1
    fi
    [ "$limit" -gt $((remaining - 5)) ] && limit=$((remaining - 5))
    local t0=$SECONDS
    timeout -k 10 "$limit" "$@"
    local rc=$?
    local how=""
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && how=" (TIMED OUT after ${limit} s)"
    echo "-- exit $rc after $((SECONDS - t0)) s$how: $title"
    if [ $rc -ne 0 ]; then
        status=1
        failed_steps="$failed_steps; $title (exit $rc)"
    fi
    return $rc
}

find_tool() { # name, then candidate paths
    local name=$1
    shift
    command -v "$name" 2>/dev/null && return 0
    for p in "$@"; do
        [ -x "$p" ] && { echo "$p"; return 0; }
    done
    return 1
}

has_module() { "$PY" -c "import $1" >/dev/null 2>&1; }

# GPU_CHECK_SANITIZER=full: in place of the plain test runs and the benchmarks, the whole CUDA half of
# the suite under compute-sanitizer memcheck (caching off), in 8 processes when pytest-xdist is there;
# GPU_CHECK_SHARD=i/n takes every n-th test file from the i-th (name order), for a run split over
# several device calls. The out-of-memory test is left out (it fills the GPU the others share).
sanitize_all() {
    local sanitizer shard=${GPU_CHECK_SHARD:-1/1}
    if ! sanitizer=$(find_tool compute-sanitizer "${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer" \
        "${CUDA_HOME:-/usr/local/cuda}/compute-sanitizer/compute-sanitizer"); then
        echo; echo "== compute-sanitizer not found: memcheck step FAILED"
        status=1
        failed_steps="$failed_steps; compute-sanitizer (not found)"
        return
    fi
    local files
    files=$(shard_files "$shard")
    local opts=(-o faulthandler_timeout=300) # memcheck slows kernels down many times
    has_module pytest_timeout && opts+=(--timeout=300)
    has_module xdist && opts+=(-n 8)
    step "compute-sanitizer memcheck: the CUDA half of the suite, shard $shard ($(echo "$files" | wc -w) files)" \
        $(($(left) - 10)) env CTORCH_NO_CUDA_MEMORY_CACHING=1 "$sanitizer" --tool memcheck --error-exitcode 1 \
        --target-processes all --leak-check no --print-limit 20 "$PY" -m pytest "${pytest_opts[@]}" "${opts[@]}" \
        --junitxml="$outdir/junit-sanitizer.xml" -k "(cuda or cross_device) and not out_of_memory" $files
}

# shard_files i/n: the test files that run on a device (not the host-only ones), every n-th from the i-th
shard_files() {
    local i=${1%/*} n=${1#*/}
    ls tests/test_*.py | grep -v -e '/test_cuda_host.py$' -e '/test_cuda_emulated.py$' | sort |
        awk -v i="$i" -v n="$n" '(NR - 1) % n == i - 1'
}

main() {
    local cuda_home=${CUDA_HOME:-/usr/local/cuda}
    echo "# ctorch GPU check"
    local gpus
    gpus=$(nvidia-smi --query-gpu=index,name,compute_cap,memory.total,driver_version --format=csv,noheader \
        2>/dev/null | paste -sd ';' -)
    echo "device: ${gpus:-unknown (nvidia-smi not found)}"
    echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    if [ -n "${GPU_CHECK_COMMIT:-}" ]; then # the device machine's copy of the tree may have no .git
        echo "commit: $GPU_CHECK_COMMIT (as given)"
    else
        echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (plus uncommitted changes)')"
    fi
    echo "host: $(uname -srm); $($PY -V 2>&1); nvcc $(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //') x $(nproc)"
    echo "python packages: $($PY - <<'EOF' 2>&1
import importlib
out = []
for m in ("numpy", "pytest", "torch", "cupy", "xdist", "pytest_timeout"):
    try:
        mod = importlib.import_module(m)
        out.append(f"{m} {getattr(mod, '__version__', 'yes')}")
    except Exception as e:
        out.append(f"{m} absent")
print(", ".join(out))
EOF
)"
    echo "cublas: $(ls "$cuda_home"/lib64/libcublas.so* 2>/dev/null | head -1 || true) $($PY -c 'import nvidia.cublas, os; print(os.path.dirname(nvidia.cublas.__file__))' 2>/dev/null || true)"
    echo "results: $outdir"

    # --- build: this GPU's architecture only, every nvcc job in parallel --------------------------
    local arch=${CTORCH_CUDA_ARCH:-}
    if [ -z "$arch" ]; then
        arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
        [ -n "$arch" ] || arch=90
    fi
    local built=0
    # pip, as a user installs it, from this tree and nothing else: the build uses the setuptools and
    # numpy already there (--no-build-isolation) and fetches nothing (--no-index, --no-deps)
    # GPU_CHECK_REUSE_BUILD=1: keep the ctorch a previous call installed on this (still warm) machine
    # when it imports with CUDA, e.g. between the shards of a full sanitizer run
    if [ -n "${GPU_CHECK_REUSE_BUILD:-}" ] && (cd /tmp && "$PY" -c \
        "import ctorch, sys; sys.exit(0 if ctorch.cuda.is_available() else 1)" >/dev/null 2>&1); then
        echo; echo "== pip install skipped: GPU_CHECK_REUSE_BUILD set and the installed ctorch has CUDA"
        built=1
    elif step "pip install --no-build-isolation . (CUDA, sm_$arch)" 270 env CTORCH_CUDA=1 CTORCH_CUDA_ARCH="$arch" \
        CTORCH_BUILD_JOBS="$(nproc)" "$PY" -m pip install --no-build-isolation --no-index --no-deps \
        --no-cache-dir --root-user-action=ignore --disable-pip-version-check --force-reinstall .; then
        built=1
    fi
    step "ctorch.cuda.diagnose()" 60 "$PY" -c \
        "import ctorch, sys; print(ctorch.__file__); ctorch.cuda.diagnose(); sys.exit(0 if ctorch.cuda.is_available() else 1)"
    local so
    so=$(cd /tmp && "$PY" -c "import ctorch, os; print(os.path.join(os.path.dirname(ctorch.__file__), '_C_cuda.so'))" 2>/dev/null)
    if [ -f "$so" ]; then
        # exactly one exported symbol of ours, and the libraries it needs
        step "exports of $so" 20 bash -c "nm -D --defined-only '$so' | grep -c ' T ' ; \
nm -D --defined-only '$so' | grep ' T ct_' ; readelf -d '$so' | grep -E 'NEEDED|RUNPATH|RPATH' ; \
nm -D --defined-only '$so' | grep -q ' T ct_cuda_backend_init\$'"
    fi

    # --- tests ---------------------------------------------------------------------------------------
    local pytest_opts=(-q -p no:cacheprovider -rfE --tb=short --durations=10 -o faulthandler_timeout=90)
    has_module pytest_timeout && pytest_opts+=(--timeout=90)
    if [ "${GPU_CHECK_SANITIZER:-subset}" = full ]; then
        sanitize_all
        echo
        echo "overall: $([ $status -eq 0 ] && echo PASS || echo "FAIL (${failed_steps#; })") after $SECONDS s"
        return $status
    fi
    # test_cuda.py alone and serially (its out-of-memory test fills the GPU); then everything else
    # that runs on CUDA (the cuda-parametrised tests and the cross-device files), in 4 processes
    # when pytest-xdist is there
    step "pytest: tests/test_cuda.py" 60 "$PY" -m pytest "${pytest_opts[@]}" \
        --junitxml="$outdir/junit-cuda.xml" tests/test_cuda.py
    local rest_opts=()
    has_module xdist && rest_opts+=(-n 4)
    step "pytest: the CUDA half of the rest of the suite (-k 'cuda or cross_device')" 170 "$PY" -m pytest \
        "${pytest_opts[@]}" "${rest_opts[@]}" --junitxml="$outdir/junit-rest.xml" -k "cuda or cross_device" \
        --ignore=tests/test_cuda_host.py --ignore=tests/test_cuda.py tests

    # --- compute-sanitizer ---------------------------------------------------------------------------
    local sanitizer
    if [ -n "${SKIP_SANITIZER:-}" ]; then
        echo; echo "== compute-sanitizer skipped (SKIP_SANITIZER set)"
    elif sanitizer=$(find_tool compute-sanitizer "$cuda_home/bin/compute-sanitizer" \
        "$cuda_home/compute-sanitizer/compute-sanitizer"); then
        # The leak check is off: the allocators keep memory at exit by design.
        step "compute-sanitizer memcheck: a subset" 45 env CTORCH_NO_CUDA_MEMORY_CACHING=1 "$sanitizer" \
            --tool memcheck --error-exitcode 1 --target-processes all --leak-check no --print-limit 20 \
            "$PY" -m pytest -q -p no:cacheprovider -rfE -k "same_device_cop or zero_size or empty_cuda or data_ptr \
or (casts_on_gpu and uint8) or (test_seed_workflow and cuda)" tests/test_cuda.py tests/test_train.py
    else
        echo; echo "== compute-sanitizer not found: memcheck step FAILED"
        status=1
        failed_steps="$failed_steps; compute-sanitizer (not found)"
    fi

    # --- benchmarks ------------------------------------------------------------------------------
    if [ -n "${SKIP_BENCH:-}" ]; then
        echo; echo "== benchmarks skipped (SKIP_BENCH set)"
    else
        [ -f benchmarks/bench_cuda.py ] && step "benchmark bench_cuda.py" 150 "$PY" benchmarks/bench_cuda.py \
            --json "$outdir/bench_cuda.json"
        [ -f benchmarks/bench_train.py ] && step "benchmark bench_train.py" 40 "$PY" benchmarks/bench_train.py \
            --device cuda --json "$outdir/bench_train.json"
    fi
    [ $built -eq 1 ] || echo "NOTE: the build failed; every later failure may follow from it."
    echo
    echo "overall: $([ $status -eq 0 ] && echo PASS || echo "FAIL (${failed_steps#; })") after $SECONDS s"
    return $status
}

main "$@" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
echo "(written to $log)"
exit "$rc"
