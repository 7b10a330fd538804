/* emu_runtime.cpp: the emulated GPU under ctorch's CUDA backend when built by build.py.
 *
 * - Kernels: launch_grid runs every block of the grid in turn and every thread of a block as a
 *   fiber (ucontext) that runs until it ends or waits at __syncthreads or a warp operation; a
 *   barrier opens when every live thread of the block waits at it, a warp operation when every
 *   live lane of its mask does. Threads that wait on each other in a way a GPU could not resolve
 *   (a barrier some threads never reach while others wait at a warp operation) fail the launch.
 *   A one-thread block runs on the caller's stack.
 *   Launch configurations a GPU refuses fail as cudaErrorInvalidConfiguration.
 * - The runtime: CT_EMU_DEVICES devices (default 2) of CT_EMU_MEMORY_MB MiB each (default 4096),
 *   "device memory" is host memory (256-byte aligned, filled with 0xff bytes so that a kernel
 *   reading memory nothing wrote sees NaNs), streams run their work at once, events are
 *   timestamps.
 * - cuBLAS: cublasGemmStridedBatchedEx as a column-major GEMM in double, TF32 inputs rounded to
 *   10 mantissa bits, with cuBLAS's argument checks. */
#include "cuda_emu.h"
#include <chrono>
#include <functional>
#include <map>
#include <math.h>
#include <mutex>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#include <ucontext.h>
#include <vector>

#define EMU_EXPORT __attribute__((visibility("default")))

uint3 threadIdx, blockIdx;
dim3 blockDim, gridDim;

/* --- what the host asked of the GPU, counted (ct_emu_counters): work put on a stream (kernels,
 * GEMMs, memsets) and the calls at which a real host waits for the GPU (synchronize calls, and
 * copies into host memory, which return only when done) ------------------------------------------ */
static long long count_launches, count_syncs, count_d2h;

/* CT_EMU_TRACE=1: each of them printed to stderr as it comes */
static bool tracing()
{
    static const bool on = getenv("CT_EMU_TRACE") != nullptr && strcmp(getenv("CT_EMU_TRACE"), "1") == 0;
    return on;
}

static void count_wait(long long *counter, const char *what)
{
    (*counter)++;
    if (tracing()) {
        fprintf(stderr, "cuda emulator: host waits: %s\n", what);
    }
}

/* out[0] launches, out[1] synchronize calls, out[2] device-to-host copies, since the start */
extern "C" __attribute__((visibility("default"))) void ct_emu_counters(long long *out)
{
    out[0] = count_launches;
    out[1] = count_syncs;
    out[2] = count_d2h;
}

/* --- the per-thread state of the runtime --------------------------------------------------------- */
static thread_local cudaError_t last_error = cudaSuccess;
static thread_local int current_device = 0;

static int num_devices()
{
    static int n = -1;
    if (n < 0) {
        const char *e = getenv("CT_EMU_DEVICES");
        n = e ? atoi(e) : 2;
    }
    return n;
}
static size_t capacity()
{
    const char *e = getenv("CT_EMU_MEMORY_MB");
    return (size_t)(e ? atoll(e) : 4096) << 20;
}

static cudaError_t fail(cudaError_t e)
{
    last_error = e;
    return e;
}

/* --- fibers ------------------------------------------------------------------------------------
 * A fiber switch saves the callee-saved registers on the old stack and the stack pointer in
 * *save, then resumes the stack at next (x86-64 System V; ucontext elsewhere, ~50x slower as it
 * makes a system call per switch). */
namespace {
enum { RUNNABLE, AT_BARRIER, AT_WARP, DONE };
const size_t kStack = 256 << 10;

#if defined(__x86_64__)
extern "C" void ct_emu_switch(void **save, void *next);
asm(R"(
    .text
    .globl ct_emu_switch
    .hidden ct_emu_switch
    .type ct_emu_switch, @function
ct_emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size ct_emu_switch, .-ct_emu_switch
)");
struct Context {
    void *sp;
};
#else
struct Context {
    ucontext_t uc;
};
#endif

struct Fiber {
    Context ctx;
    char *stack = nullptr;
    uint3 tid;
    int state;
    unsigned mask;
    uint64_t value, result;
    int kind, arg, width;
};

std::recursive_mutex launch_mutex;
std::vector<Fiber> fibers;
Context scheduler;
int running = -1;          /* fiber running now, -1: a one-thread block runs on the caller's stack */
const std::function<void()> *body;
std::vector<char> shared_buffer;
#if defined(__SANITIZE_ADDRESS__)
const void *scheduler_bottom; /* the stack of the thread that launched */
size_t scheduler_size;

const void *stack_bottom(const Context *c)
{
    return c == &scheduler ? scheduler_bottom : (const void *)((const Fiber *)c)->stack;
}
size_t stack_size(const Context *c) { return c == &scheduler ? scheduler_size : kStack; }
#endif

/* Built with AddressSanitizer (build.py --asan), every switch tells it which stack comes next. */
void switch_to(Context *save, Context *next, bool ending = false)
{
#if defined(__SANITIZE_ADDRESS__)
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(ending ? nullptr : &fake, stack_bottom(next), stack_size(next));
#endif
#if defined(__x86_64__)
    ct_emu_switch(&save->sp, next->sp);
#else
    swapcontext(&save->uc, &next->uc);
#endif
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

int block_threads;          /* threads of the block running now */

/* The running fiber stops (it waits, or it ended): the next runnable fiber of this pass over the
 * block runs, or the scheduler when there is none (one switch per stop, not two). */
/* The order the threads of a block run in within a pass (CT_EMU_ORDER): "forward" (thread 0
 * first, the default), "reverse", or "shuffle" (a new permutation per block). A kernel whose
 * result changes with the order has a race: threads reading shared or global memory that other
 * threads write with no barrier between, or warp-synchronous code without __syncwarp. */
std::vector<int> order;
int order_pos;             /* position of the running fiber in order */

int order_mode()
{
    static int mode = -1;
    if (mode < 0) {
        const char *e = getenv("CT_EMU_ORDER");
        mode = e == nullptr || strcmp(e, "reverse") != 0 ? (e != nullptr && strcmp(e, "shuffle") == 0 ? 2 : 0) : 1;
    }
    return mode;
}

void plan_order(int n)
{
    order.resize(n);
    for (int i = 0; i < n; i++) {
        order[i] = order_mode() == 1 ? n - 1 - i : i;
    }
    if (order_mode() == 2) {
        static uint64_t state = 0x9e3779b97f4a7c15ull;
        for (int i = n - 1; i > 0; i--) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            std::swap(order[i], order[(int)((state >> 33) % (uint64_t)(i + 1))]);
        }
    }
}

void pass_on(bool ending = false)
{
    Context *self = &fibers[running].ctx;
    int k = order_pos + 1;
    while (k < block_threads && fibers[order[k]].state != RUNNABLE) {
        k++;
    }
    if (k < block_threads) {
        order_pos = k;
        running = order[k];
        threadIdx = fibers[running].tid;
        switch_to(self, &fibers[running].ctx, ending);
    } else {
        switch_to(self, &scheduler, ending);
    }
}

[[noreturn]] void fiber_main()
{
#if defined(__SANITIZE_ADDRESS__)
    __sanitizer_finish_switch_fiber(nullptr, nullptr, nullptr);
#endif
    (*body)();
    fibers[running].state = DONE;
    pass_on(true);
    __builtin_unreachable();
}

/* Makes f start fiber_main when next switched to. */
void start_fiber(Fiber &f)
{
#if defined(__SANITIZE_ADDRESS__)
    ASAN_UNPOISON_MEMORY_REGION(f.stack, kStack); /* the last run's frames that never returned */
#endif
#if defined(__x86_64__)
    /* the stacks' tops are staggered: equal offsets within a page would put every fiber's top
     * frames in one cache set, and a switch would miss the cache every time */
    const size_t stagger = ((size_t)(&f - fibers.data()) * 1088) % 65536;
    uintptr_t top = ((uintptr_t)f.stack + kStack - stagger) & ~(uintptr_t)15;
    void **sp = (void **)top;
    *--sp = nullptr;               /* fiber_main's return address slot: it never returns */
    *--sp = (void *)&fiber_main;   /* where ct_emu_switch's ret goes */
    for (int r = 0; r < 6; r++) {
        *--sp = nullptr;           /* rbp, rbx, r12-r15 */
    }
    f.ctx.sp = sp;
#else
    getcontext(&f.ctx.uc);
    f.ctx.uc.uc_stack.ss_sp = f.stack;
    f.ctx.uc.uc_stack.ss_size = kStack;
    f.ctx.uc.uc_link = nullptr;
    makecontext(&f.ctx.uc, (void (*)())fiber_main, 0);
#endif
}

/* Opens the warp operations whose lanes have all arrived; true if one opened. */
bool open_warps(int n)
{
    bool opened = false;
    for (int w = 0; w * 32 < n; w++) {
        const int base = w * 32, lanes = std::min(32, n - base);
        int first = -1;
        for (int l = 0; l < lanes; l++) {
            if (fibers[base + l].state == AT_WARP) {
                first = l;
                break;
            }
        }
        if (first < 0) {
            continue;
        }
        const unsigned mask = fibers[base + first].mask;
        bool ready = true;
        unsigned present = 0;
        for (int l = 0; l < lanes; l++) {
            const Fiber &f = fibers[base + l];
            if (!((mask >> l) & 1u) || f.state == DONE) {
                continue;
            }
            if (f.state != AT_WARP || f.mask != mask) {
                ready = false;
                break;
            }
            present |= 1u << l;
        }
        if (!ready) {
            continue;
        }
        unsigned ballot = 0;
        for (int l = 0; l < lanes; l++) {
            if (((present >> l) & 1u) && fibers[base + l].value != 0) {
                ballot |= 1u << l;
            }
        }
        for (int l = 0; l < lanes; l++) {
            if (!((present >> l) & 1u)) {
                continue;
            }
            Fiber &f = fibers[base + l];
            const int width = f.width, seg = l & ~(width - 1), in_seg = l & (width - 1);
            int src = l;
            switch (f.kind) {
            case ct_emu::kShflIdx: src = seg + (f.arg & (width - 1)); break;
            case ct_emu::kShflUp: src = in_seg >= f.arg ? l - f.arg : l; break;
            case ct_emu::kShflDown: src = in_seg + f.arg < width ? l + f.arg : l; break;
            case ct_emu::kShflXor: src = (l ^ f.arg) < seg + width ? l ^ f.arg : l; break;
            default: break;
            }
            if (src >= lanes || !((present >> src) & 1u)) {
                src = l; /* undefined on a GPU; here the lane's own value */
            }
            f.result = f.kind == ct_emu::kBallot ? ballot : fibers[base + src].value;
            f.state = RUNNABLE;
        }
        opened = true;
    }
    return opened;
}

bool open_barrier(int n)
{
    bool any = false;
    for (int i = 0; i < n; i++) {
        if (fibers[i].state == AT_BARRIER) {
            any = true;
        } else if (fibers[i].state != DONE) {
            return false;
        }
    }
    for (int i = 0; i < n && any; i++) {
        fibers[i].state = RUNNABLE;
    }
    return any;
}

uint3 thread_of(int i, dim3 b)
{
    uint3 t;
    t.x = (unsigned)i % b.x;
    t.y = ((unsigned)i / b.x) % b.y;
    t.z = (unsigned)i / (b.x * b.y);
    return t;
}

/* Runs one block on fibers; false if its threads deadlock. */
bool run_block_fibers(int n)
{
    if ((int)fibers.size() < n) {
        fibers.resize(n);
    }
    block_threads = n;
    plan_order(n);
#if defined(__SANITIZE_ADDRESS__)
    /* the launching thread's stack, looked up once per thread (glibc reads /proc/self/maps) */
    static thread_local const void *thread_bottom = nullptr;
    static thread_local size_t thread_size = 0;
    if (thread_bottom == nullptr) {
        pthread_attr_t attr;
        void *addr;
        pthread_getattr_np(pthread_self(), &attr);
        pthread_attr_getstack(&attr, &addr, &thread_size);
        pthread_attr_destroy(&attr);
        thread_bottom = addr;
    }
    scheduler_bottom = thread_bottom;
    scheduler_size = thread_size;
#endif
    for (int i = 0; i < n; i++) {
        Fiber &f = fibers[i];
        if (f.stack == nullptr) {
            f.stack = (char *)mmap(nullptr, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (f.stack == MAP_FAILED) {
                f.stack = nullptr;
                fprintf(stderr, "cuda emulator: no memory for a fiber stack\n");
                return false;
            }
        }
        start_fiber(f);
        f.tid = thread_of(i, blockDim);
        f.state = RUNNABLE;
    }
    for (;;) {
        bool ran = false, live = false;
        for (int k = 0; k < n; k++) {
            const int i = order[k];
            if (fibers[i].state == RUNNABLE) {
                order_pos = k;
                running = i;
                threadIdx = fibers[i].tid;
                switch_to(&scheduler, &fibers[i].ctx); /* runs this pass's runnable fibers */
                ran = true;
                break;
            }
        }
        for (int i = 0; i < n && !live; i++) {
            live = fibers[i].state != DONE;
        }
        if (!live) {
            break;
        }
        bool opened = open_warps(n);
        opened = open_barrier(n) || opened;
        if (!ran && !opened) {
            bool waiting_any = false;
            for (int i = 0; i < n; i++) {
                waiting_any = waiting_any || fibers[i].state != DONE;
            }
            if (waiting_any) {
                fprintf(stderr, "cuda emulator: the threads of block (%u, %u, %u) wait on each other forever "
                                "(a barrier not every thread reaches, or a warp operation with lanes missing)\n",
                        blockIdx.x, blockIdx.y, blockIdx.z);
                running = -1;
                return false;
            }
            break;
        }
    }
    running = -1;
    return true;
}

const char *bad_config(const ct_emu::Config &c)
{
    if (c.grid.x == 0 || c.grid.y == 0 || c.grid.z == 0 || c.block.x == 0 || c.block.y == 0 || c.block.z == 0) {
        return "an empty grid or block";
    }
    if (c.grid.x > 2147483647u || c.grid.y > 65535 || c.grid.z > 65535) {
        return "a grid dimension over the limit";
    }
    if ((unsigned long long)c.block.x * c.block.y * c.block.z > 1024 || c.block.z > 64) {
        return "more than 1024 threads per block";
    }
    if (c.shared > 48 * 1024) {
        return "more than 48 KiB of dynamic shared memory";
    }
    return nullptr;
}
} /* namespace */

namespace ct_emu {

EMU_EXPORT void *dynamic_shared() { return shared_buffer.data(); }

EMU_EXPORT void sync_block()
{
    if (running < 0) {
        return; /* a one-thread block */
    }
    fibers[running].state = AT_BARRIER;
    pass_on();
}

EMU_EXPORT uint64_t warp_exchange(unsigned mask, uint64_t value, int kind, int arg, int width)
{
    if (running < 0) {
        return kind == kBallot ? (value != 0) : value; /* a one-thread block */
    }
    Fiber &f = fibers[running];
    f.state = AT_WARP;
    f.mask = mask;
    f.value = value;
    f.kind = kind;
    f.arg = arg;
    f.width = width;
    pass_on();
    return fibers[running].result;
}

EMU_EXPORT void launch_grid(const Config &c, const std::function<void()> &fn)
{
    std::lock_guard<std::recursive_mutex> lock(launch_mutex);
    const char *bad = bad_config(c);
    if (bad != nullptr) {
        fprintf(stderr, "cuda emulator: launch refused: %s (grid %u x %u x %u, block %u x %u x %u, %zu bytes)\n",
                bad, c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y, c.block.z, c.shared);
        fail(cudaErrorInvalidConfiguration);
        return;
    }
    count_launches++;
    if (tracing()) {
        fprintf(stderr, "cuda emulator: launch %s grid %u x %u x %u block %u x %u x %u\n", c.name, c.grid.x, c.grid.y,
                c.grid.z, c.block.x, c.block.y, c.block.z);
    }
    const std::function<void()> *saved_body = body;
    body = &fn;
    gridDim = c.grid;
    blockDim = c.block;
    shared_buffer.assign(c.shared + 16, (char)0xff);
    const int n = (int)(c.block.x * c.block.y * c.block.z);
    const bool straight = n == 1;
    bool ok = true;
    for (unsigned z = 0; z < c.grid.z && ok; z++) {
        for (unsigned y = 0; y < c.grid.y && ok; y++) {
            for (unsigned x = 0; x < c.grid.x && ok; x++) {
                blockIdx.x = x;
                blockIdx.y = y;
                blockIdx.z = z;
                if (straight) {
                    threadIdx = thread_of(0, c.block);
                    fn();
                } else {
                    ok = run_block_fibers(n);
                }
            }
        }
    }
    body = saved_body;
    if (!ok) {
        fail(cudaErrorLaunchFailure);
    }
}

} /* namespace ct_emu */

/* --- the runtime API --------------------------------------------------------------------------- */
namespace {
struct Block {
    size_t size;
    int device;
};
std::mutex memory_mutex;
std::map<void *, Block> device_blocks;
std::vector<size_t> in_use;

struct EmuStream {
    int device;
    int priority;
};
struct EmuEvent {
    double ms;
    bool recorded;
};
double now_ms()
{
    using namespace std::chrono;
    return duration<double, std::milli>(steady_clock::now().time_since_epoch()).count();
}
}

extern "C" {

EMU_EXPORT cudaError_t CUDARTAPI cudaGetDeviceCount(int *n)
{
    *n = num_devices();
    return *n > 0 ? cudaSuccess : fail(cudaErrorNoDevice);
}
EMU_EXPORT cudaError_t CUDARTAPI cudaGetDevice(int *d)
{
    *d = current_device;
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaSetDevice(int d)
{
    if (d < 0 || d >= num_devices()) {
        return fail(cudaErrorInvalidDevice);
    }
    current_device = d;
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaDriverGetVersion(int *v)
{
    *v = CUDART_VERSION;
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaRuntimeGetVersion(int *v)
{
    *v = CUDART_VERSION;
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaGetLastError(void)
{
    cudaError_t e = last_error;
    last_error = cudaSuccess;
    return e;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaPeekAtLastError(void) { return last_error; }

EMU_EXPORT const char *CUDARTAPI cudaGetErrorName(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorPeerAccessAlreadyEnabled: return "cudaErrorPeerAccessAlreadyEnabled";
    default: return "cudaErrorUnknown";
    }
}
EMU_EXPORT const char *CUDARTAPI cudaGetErrorString(cudaError_t e)
{
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorNotReady: return "device not ready";
    default: return "unknown error";
    }
}

EMU_EXPORT cudaError_t CUDARTAPI cudaGetDeviceProperties(struct cudaDeviceProp *p, int device)
{
    if (device < 0 || device >= num_devices()) {
        return fail(cudaErrorInvalidDevice);
    }
    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof(p->name), "ctorch CUDA emulator (CPU)");
    p->totalGlobalMem = capacity();
    p->major = 7;
    p->minor = 5;
    p->multiProcessorCount = 4;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = 1024;
    p->maxThreadsDim[1] = 1024;
    p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647;
    p->maxGridSize[1] = 65535;
    p->maxGridSize[2] = 65535;
    p->sharedMemPerBlock = 48 << 10;
    p->warpSize = 32;
    p->l2CacheSize = 4 << 20;
    p->maxThreadsPerMultiProcessor = 1024;
    p->regsPerBlock = 65536;
    p->pciBusID = device;
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaDeviceGetAttribute(int *value, enum cudaDeviceAttr attr, int device)
{
    if (device < 0 || device >= num_devices()) {
        return fail(cudaErrorInvalidDevice);
    }
    switch (attr) {
    case cudaDevAttrMultiProcessorCount: *value = 4; break;
    case cudaDevAttrComputeCapabilityMajor: *value = 7; break;
    case cudaDevAttrComputeCapabilityMinor: *value = 5; break;
    case cudaDevAttrMaxThreadsPerBlock: *value = 1024; break;
    case cudaDevAttrWarpSize: *value = 32; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = 48 << 10; break;
    default: *value = 0; break;
    }
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaFuncGetAttributes(struct cudaFuncAttributes *attr, const void *func)
{
    memset(attr, 0, sizeof(*attr));
    attr->binaryVersion = 75;
    attr->ptxVersion = 75;
    attr->maxThreadsPerBlock = 1024;
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaDeviceSynchronize(void)
{
    count_wait(&count_syncs, __func__);
    return cudaSuccess;
}

EMU_EXPORT cudaError_t CUDARTAPI cudaMalloc(void **p, size_t n)
{
    std::lock_guard<std::mutex> lock(memory_mutex);
    in_use.resize(num_devices(), 0);
    size_t rounded = (n + 255) / 256 * 256;
    if (rounded == 0) {
        rounded = 256;
    }
    if (in_use[current_device] + rounded > capacity()) {
        *p = nullptr;
        return fail(cudaErrorMemoryAllocation);
    }
    void *q = nullptr;
#if defined(__SANITIZE_ADDRESS__)
    /* the exact size: a kernel reading or writing past what was asked for is reported */
    if (posix_memalign(&q, 256, n ? n : 1) != 0) {
        q = nullptr;
    }
#else
    q = aligned_alloc(256, rounded);
#endif
    if (q == nullptr) {
        return fail(cudaErrorMemoryAllocation);
    }
    if (n <= (64u << 20)) {
        memset(q, 0xff, n); /* uninitialised device memory reads as NaN */
    }
    device_blocks[q] = Block{rounded, current_device};
    in_use[current_device] += rounded;
    *p = q;
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaFree(void *p)
{
    if (p == nullptr) {
        return cudaSuccess;
    }
    std::lock_guard<std::mutex> lock(memory_mutex);
    auto it = device_blocks.find(p);
    if (it == device_blocks.end()) {
        return fail(cudaErrorInvalidValue);
    }
    in_use[it->second.device] -= it->second.size;
    device_blocks.erase(it);
    free(p);
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaMemGetInfo(size_t *free_bytes, size_t *total)
{
    std::lock_guard<std::mutex> lock(memory_mutex);
    in_use.resize(num_devices(), 0);
    *total = capacity();
    *free_bytes = capacity() - in_use[current_device];
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaHostAlloc(void **p, size_t n, unsigned int flags)
{
    *p = malloc(n ? n : 1);
    return *p ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}
EMU_EXPORT cudaError_t CUDARTAPI cudaFreeHost(void *p)
{
    free(p);
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    if (kind == cudaMemcpyDeviceToHost) {
        count_wait(&count_d2h, "device-to-host copy");
    }
    memmove(dst, src, n);
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                                                 cudaStream_t s)
{
    if (kind == cudaMemcpyDeviceToHost) {
        count_wait(&count_d2h, "device-to-host copy");
    }
    memmove(dst, src, n);
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaMemcpyPeerAsync(void *dst, int dst_device, const void *src, int src_device,
                                                     size_t n, cudaStream_t s)
{
    memmove(dst, src, n);
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaMemsetAsync(void *dst, int value, size_t n, cudaStream_t s)
{
    count_launches++;
    if (tracing()) {
        fprintf(stderr, "cuda emulator: launch memset %zu bytes\n", n);
    }
    memset(dst, value, n);
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaDeviceCanAccessPeer(int *can, int device, int peer)
{
    *can = device != peer;
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaDeviceEnablePeerAccess(int peer, unsigned int flags) { return cudaSuccess; }

EMU_EXPORT cudaError_t CUDARTAPI cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    *least = 0;
    *greatest = -5;
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaStreamCreateWithPriority(cudaStream_t *s, unsigned int flags, int priority)
{
    *s = (cudaStream_t) new EmuStream{current_device, priority};
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaStreamGetPriority(cudaStream_t s, int *priority)
{
    *priority = s ? ((EmuStream *)s)->priority : 0;
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t s)
{
    count_wait(&count_syncs, __func__);
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaStreamQuery(cudaStream_t s) { return cudaSuccess; }
EMU_EXPORT cudaError_t CUDARTAPI cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int flags)
{
    return cudaSuccess;
}

EMU_EXPORT cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t *e, unsigned int flags)
{
    *e = (cudaEvent_t) new EmuEvent{0, false};
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    ((EmuEvent *)e)->ms = now_ms();
    ((EmuEvent *)e)->recorded = true;
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t e) { return cudaSuccess; }
EMU_EXPORT cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t e)
{
    count_wait(&count_syncs, __func__);
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)
{
    const EmuEvent *a = (const EmuEvent *)start, *b = (const EmuEvent *)end;
    if (!a->recorded || !b->recorded) {
        return fail(cudaErrorInvalidResourceHandle);
    }
    *ms = (float)(b->ms - a->ms);
    return cudaSuccess;
}
EMU_EXPORT cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t e)
{
    delete (EmuEvent *)e;
    return cudaSuccess;
}

} /* extern "C" */

/* --- cuBLAS -------------------------------------------------------------------------------------- */
namespace {
struct EmuHandle {
    cudaStream_t stream;
    void *workspace;
    cublasMath_t math;
    cublasPointerMode_t pointer_mode;
};

float tf32(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) {
        u = (u + 0x1000u) & ~0x1fffu; /* round to nearest on the 10 kept mantissa bits */
    }
    memcpy(&x, &u, 4);
    return x;
}

template <typename T>
double load(const void *base, long long i)
{
    if constexpr (std::is_same<T, __half>::value) {
        return __half2float(((const __half *)base)[i]);
    } else if constexpr (std::is_same<T, __nv_bfloat16>::value) {
        return __bfloat162float(((const __nv_bfloat16 *)base)[i]);
    } else {
        return (double)((const T *)base)[i];
    }
}
template <typename T>
void store(void *base, long long i, double v)
{
    if constexpr (std::is_same<T, __half>::value) {
        ((__half *)base)[i] = __float2half((float)v);
    } else if constexpr (std::is_same<T, __nv_bfloat16>::value) {
        ((__nv_bfloat16 *)base)[i] = __float2bfloat16((float)v);
    } else {
        ((T *)base)[i] = (T)v;
    }
}

template <typename T, typename S>
void gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const void *alpha, const void *A, int lda,
          long long sa, const void *B, int ldb, long long sb, const void *beta, void *C, int ldc, long long sc,
          int batch, bool round_tf32)
{
    const double al = *(const S *)alpha, be = *(const S *)beta;
    for (int b = 0; b < batch; b++) {
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < n; j++) {
                double acc = 0;
                for (int p = 0; p < k; p++) {
                    double x = load<T>(A, b * sa + (ta == CUBLAS_OP_N ? (long long)p * lda + i : (long long)i * lda + p));
                    double y = load<T>(B, b * sb + (tb == CUBLAS_OP_N ? (long long)j * ldb + p : (long long)p * ldb + j));
                    if (round_tf32) {
                        x = tf32((float)x);
                        y = tf32((float)y);
                    }
                    acc += x * y;
                }
                const long long at = b * sc + (long long)j * ldc + i;
                store<T>(C, at, al * acc + (be == 0 ? 0.0 : be * load<T>(C, at)));
            }
        }
    }
}
}

extern "C" {
EMU_EXPORT cublasStatus_t cublasCreate(cublasHandle_t *handle)
{
    *handle = (cublasHandle_t) new EmuHandle{0, nullptr, CUBLAS_DEFAULT_MATH, CUBLAS_POINTER_MODE_HOST};
    return CUBLAS_STATUS_SUCCESS;
}
EMU_EXPORT cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream)
{
    ((EmuHandle *)handle)->stream = stream;
    ((EmuHandle *)handle)->workspace = nullptr;
    return CUBLAS_STATUS_SUCCESS;
}
EMU_EXPORT cublasStatus_t cublasSetWorkspace(cublasHandle_t handle, void *workspace, size_t size)
{
    ((EmuHandle *)handle)->workspace = workspace;
    return CUBLAS_STATUS_SUCCESS;
}
EMU_EXPORT cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode)
{
    ((EmuHandle *)handle)->pointer_mode = mode;
    return CUBLAS_STATUS_SUCCESS;
}
EMU_EXPORT cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
{
    ((EmuHandle *)handle)->math = mode;
    return CUBLAS_STATUS_SUCCESS;
}
EMU_EXPORT const char *cublasGetStatusName(cublasStatus_t status)
{
    return status == CUBLAS_STATUS_SUCCESS ? "CUBLAS_STATUS_SUCCESS" : "CUBLAS_STATUS_INVALID_VALUE";
}
EMU_EXPORT const char *cublasGetStatusString(cublasStatus_t status)
{
    return status == CUBLAS_STATUS_SUCCESS ? "success" : "an invalid value was used as an argument";
}
EMU_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                                     cublasOperation_t transb, int m, int n, int k, const void *alpha,
                                                     const void *A, cudaDataType Atype, int lda, long long int strideA,
                                                     const void *B, cudaDataType Btype, int ldb, long long int strideB,
                                                     const void *beta, void *C, cudaDataType Ctype, int ldc,
                                                     long long int strideC, int batchCount,
                                                     cublasComputeType_t computeType, cublasGemmAlgo_t algo)
{
    count_launches++;
    if (tracing()) {
        fprintf(stderr, "cuda emulator: launch GEMM m %d n %d k %d batch %d\n", m, n, k, batchCount);
    }
    const EmuHandle *h = (const EmuHandle *)handle;
    const int rows_a = transa == CUBLAS_OP_N ? m : k;
    const int rows_b = transb == CUBLAS_OP_N ? k : n;
    if (m < 0 || n < 0 || k < 0 || batchCount < 0 || lda < std::max(rows_a, 1) || ldb < std::max(rows_b, 1) ||
        ldc < std::max(m, 1) || Atype != Btype || Atype != Ctype || h->pointer_mode != CUBLAS_POINTER_MODE_HOST) {
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    const bool tf = computeType == CUBLAS_COMPUTE_32F_FAST_TF32;
    switch (Atype) {
    case CUDA_R_32F:
        if (computeType != CUBLAS_COMPUTE_32F && !tf) {
            return CUBLAS_STATUS_NOT_SUPPORTED;
        }
        gemm<float, float>(transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC,
                           batchCount, tf);
        break;
    case CUDA_R_64F:
        if (computeType != CUBLAS_COMPUTE_64F) {
            return CUBLAS_STATUS_NOT_SUPPORTED;
        }
        gemm<double, double>(transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC,
                             batchCount, false);
        break;
    case CUDA_R_16F:
        if (computeType != CUBLAS_COMPUTE_32F) {
            return CUBLAS_STATUS_NOT_SUPPORTED;
        }
        gemm<__half, float>(transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc, strideC,
                            batchCount, false);
        break;
    case CUDA_R_16BF:
        if (computeType != CUBLAS_COMPUTE_32F) {
            return CUBLAS_STATUS_NOT_SUPPORTED;
        }
        gemm<__nv_bfloat16, float>(transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C, ldc,
                                   strideC, batchCount, false);
        break;
    default:
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return CUBLAS_STATUS_SUCCESS;
}
}
