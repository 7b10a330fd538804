/* allocator.cu: the caching allocators of the CUDA backend.
 *
 * Device memory follows the rules of PyTorch's CUDA caching allocator, so that
 * memory_allocated()/memory_reserved()/memory_stats() read the same as there:
 * - requests are rounded up to a multiple of 512 bytes (at least 512);
 * - rounded sizes up to 1 MiB come from the small pool, whose segments are 2 MiB; larger ones
 *   from the large pool, whose segments are 20 MiB for requests under 10 MiB and the request
 *   rounded up to 2 MiB otherwise;
 * - a request takes the smallest free block of its pool that belongs to the current stream and
 *   is large enough (best fit); the block is split when the rest is worth keeping (>= 512 bytes
 *   in the small pool, > 1 MiB in the large one);
 * - a freed block goes back to its pool and merges with free neighbours of its segment;
 * - blocks remember the stream they were allocated on and are only reused on it, so work queued
 *   on that stream before the free is ordered before any reuse (no events needed);
 * - Tensor.record_stream adds other streams to a block's uses: freeing it then records an event
 *   on each of them, and the block stays out of its pool (still "active", no longer "allocated")
 *   until they have all completed; the events are polled at each allocation, and empty_cache (and
 *   the OOM retry) waits for them;
 * - CTORCH_NO_CUDA_MEMORY_CACHING=1 (read when a device is first used; PyTorch's
 *   PYTORCH_NO_CUDA_MEMORY_CACHING) turns caching off: each request is its own cudaMalloc of
 *   exactly the bytes asked for, freed at once, so that compute-sanitizer sees every overrun;
 * - when cudaMalloc fails, every cached segment that is entirely free is released and the
 *   cudaMalloc retried once; if it fails again the error is PyTorch's out-of-memory message plus
 *   the largest live allocations. Nothing is lost: the allocator stays consistent.
 *
 * Pinned host memory: blocks from cudaHostAlloc rounded up to a power of two, kept in per-size
 * free lists. An asynchronous copy that uses a pinned block records an event; a freed block
 * with unfinished events waits in a pending list until they complete.
 *
 * State lives on the heap and is never destroyed: storages may be freed during interpreter
 * shutdown, after static destructors would have run. */
#include "allocator.cuh"
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <unordered_map>
#include <vector>

namespace {

constexpr size_t kMinBlockSize = 512;       /* every block is a multiple of this */
constexpr size_t kSmallSize = 1048576;      /* largest request served by the small pool */
constexpr size_t kSmallBuffer = 2097152;    /* small pool segment size */
constexpr size_t kLargeBuffer = 20971520;   /* large pool segment for requests < kMinLargeAlloc */
constexpr size_t kMinLargeAlloc = 10485760; /* from here segments are the request itself ... */
constexpr size_t kRoundLarge = 2097152;     /* ... rounded up to this */
constexpr int kLargestReported = 5;         /* live allocations listed in an OOM message */

struct BlockPool;

struct Block {
    void *ptr;
    size_t size;      /* rounded */
    size_t requested; /* as asked for; 0 while free */
    cudaStream_t stream;
    bool allocated;
    Block *prev, *next; /* neighbours within the segment */
    BlockPool *pool;
    std::vector<cudaStream_t> stream_uses; /* other streams that used it (record_stream) */
    int event_count;                       /* events still pending since its free */
};

/* Free blocks ordered by (stream, size, address): lower_bound gives the best fit on a stream. */
struct BlockLess {
    bool operator()(const Block *a, const Block *b) const
    {
        if (a->stream != b->stream) {
            return (uintptr_t)a->stream < (uintptr_t)b->stream;
        }
        if (a->size != b->size) {
            return a->size < b->size;
        }
        return (uintptr_t)a->ptr < (uintptr_t)b->ptr;
    }
};

struct BlockPool {
    std::set<Block *, BlockLess> blocks;
    bool small;
};

struct DeviceAllocator {
    int device;
    bool caching; /* false under CTORCH_NO_CUDA_MEMORY_CACHING=1: one cudaMalloc per request */
    std::mutex mutex;
    BlockPool small_pool, large_pool;
    std::unordered_map<void *, Block *> live; /* allocated blocks by address */
    CtCudaMemoryStats stats;
    bool set_fraction;       /* set_per_process_memory_fraction was called */
    double fraction;         /* 1.0 until then */
    size_t allowed_maximum;  /* fraction * total memory: reserved bytes may not pass it */
    std::vector<std::pair<Block *, cudaEvent_t>> pending; /* freed blocks' events on their other streams */
    std::vector<cudaEvent_t> spare_events;
};

std::atomic<DeviceAllocator *> allocators[CT_CUDA_MAX_DEVICES];
std::mutex *allocators_mutex = new std::mutex();

DeviceAllocator *get_allocator(int device, bool create)
{
    if (device < 0 || device >= CT_CUDA_MAX_DEVICES) {
        return nullptr;
    }
    DeviceAllocator *a = allocators[device].load(std::memory_order_acquire);
    if (a != nullptr || !create) {
        return a;
    }
    std::lock_guard<std::mutex> lock(*allocators_mutex);
    a = allocators[device].load(std::memory_order_relaxed);
    if (a == nullptr) {
        a = new DeviceAllocator();
        a->device = device;
        const char *no_cache = getenv("CTORCH_NO_CUDA_MEMORY_CACHING");
        a->caching = !(no_cache != nullptr && no_cache[0] == '1');
        a->small_pool.small = true;
        a->large_pool.small = false;
        memset(&a->stats, 0, sizeof(a->stats));
        a->stats.max_split_size = -1;
        a->set_fraction = false;
        a->fraction = 1.0;
        a->allowed_maximum = 0;
        allocators[device].store(a, std::memory_order_release);
    }
    return a;
}

/* --- statistics ------------------------------------------------------------------------------ */
void stat_add(CtCudaStat &s, int64_t delta)
{
    s.current += delta;
    if (delta > 0) {
        s.allocated += delta;
    } else {
        s.freed -= delta;
    }
    if (s.current > s.peak) {
        s.peak = s.current;
    }
}

/* Updates the "all" entry and the entry of block's pool. */
void stat_add(CtCudaStat *family, const BlockPool *pool, int64_t delta)
{
    stat_add(family[CT_CUDA_STAT_ALL], delta);
    stat_add(family[pool->small ? CT_CUDA_STAT_SMALL_POOL : CT_CUDA_STAT_LARGE_POOL], delta);
}

template <typename F>
void for_each_stat(CtCudaMemoryStats &s, F f)
{
    CtCudaStat *families[] = {s.allocation,      s.segment,        s.active,
                              s.inactive_split,  s.allocated_bytes, s.reserved_bytes,
                              s.active_bytes,    s.inactive_split_bytes, s.requested_bytes};
    for (CtCudaStat *family : families) {
        for (int i = 0; i < CT_CUDA_STAT_NTYPES; i++) {
            f(family[i]);
        }
    }
    f(s.oversize_allocations);
    f(s.oversize_segments);
}

/* --- sizes ------------------------------------------------------------------------------------ */
size_t round_size(size_t n)
{
    if (n < kMinBlockSize) {
        return kMinBlockSize;
    }
    return (n + kMinBlockSize - 1) / kMinBlockSize * kMinBlockSize;
}

size_t segment_size(size_t rounded)
{
    if (rounded <= kSmallSize) {
        return kSmallBuffer;
    }
    if (rounded < kMinLargeAlloc) {
        return kLargeBuffer;
    }
    return (rounded + kRoundLarge - 1) / kRoundLarge * kRoundLarge;
}

bool is_split(const Block *b) { return b->prev != nullptr || b->next != nullptr; }

bool should_split(const Block *b, size_t size)
{
    size_t rest = b->size - size;
    return b->pool->small ? rest >= kMinBlockSize : rest > kSmallSize;
}

/* PyTorch's format_size: "512 bytes", "1.50 KiB", "20.00 MiB", "2.00 GiB". */
void format_size(char *buf, size_t n, uint64_t size)
{
    if (size <= 1024) {
        snprintf(buf, n, "%llu bytes", (unsigned long long)size);
    } else if (size <= 1048576) {
        snprintf(buf, n, "%.2f KiB", size / 1024.0);
    } else if (size <= 1073741824ull) {
        snprintf(buf, n, "%.2f MiB", size / 1048576.0);
    } else {
        snprintf(buf, n, "%.2f GiB", size / 1073741824.0);
    }
}

/* --- pools ------------------------------------------------------------------------------------ */
/* Releases every segment of pool that is entirely free (cudaFree synchronises the device, so
 * work still queued on any stream for these blocks finishes first). Caller holds the lock and
 * has made the device current. Keeps going after a failure and returns the first one. */
int release_free_segments(DeviceAllocator *a, BlockPool &pool)
{
    int status = CT_CUDA_OK;
    for (auto it = pool.blocks.begin(); it != pool.blocks.end();) {
        Block *b = *it;
        if (is_split(b)) {
            ++it;
            continue;
        }
        cudaError_t err = cudaFree(b->ptr);
        if (err != cudaSuccess && status == CT_CUDA_OK) {
            status = ct_cuda_record_error(err, "cudaFree(block)", __func__, __FILE__, __LINE__);
        }
        stat_add(a->stats.segment, &pool, -1);
        stat_add(a->stats.reserved_bytes, &pool, -(int64_t)b->size);
        a->stats.num_device_free++;
        it = pool.blocks.erase(it);
        delete b;
    }
    return status;
}

int release_cached(DeviceAllocator *a)
{
    int s1 = release_free_segments(a, a->small_pool);
    int s2 = release_free_segments(a, a->large_pool);
    return s1 != CT_CUDA_OK ? s1 : s2;
}

/* cudaMalloc of a segment, refused as out of memory where it would take the reserved bytes
 * past the memory fraction's cap (as PyTorch's allocator does). Lock held, device current. */
cudaError_t segment_malloc(DeviceAllocator *a, void **p, size_t size)
{
    if (a->set_fraction &&
        (size_t)a->stats.reserved_bytes[CT_CUDA_STAT_ALL].current + size > a->allowed_maximum) {
        return cudaErrorMemoryAllocation;
    }
    return cudaMalloc(p, size);
}

/* Writes PyTorch's out-of-memory message, plus the largest live allocations, as the error. */
int out_of_memory(DeviceAllocator *a, size_t requested)
{
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) {
        (void)cudaGetLastError();
    }
    a->stats.num_ooms++;
    int64_t allocated = a->stats.allocated_bytes[CT_CUDA_STAT_ALL].current;
    int64_t reserved = a->stats.reserved_bytes[CT_CUDA_STAT_ALL].current;

    /* The largest live blocks, by the size their owners asked for (one pass; OOM is rare, so
     * nothing is maintained on the allocation path for this). */
    size_t largest[kLargestReported] = {0};
    int nlargest = 0;
    for (const auto &kv : a->live) {
        size_t s = kv.second->requested;
        if (nlargest < kLargestReported) {
            largest[nlargest++] = s;
        } else if (s > largest[kLargestReported - 1]) {
            largest[kLargestReported - 1] = s;
        } else {
            continue;
        }
        for (int i = nlargest - 1; i > 0 && largest[i] > largest[i - 1]; i--) {
            size_t t = largest[i];
            largest[i] = largest[i - 1];
            largest[i - 1] = t;
        }
    }
    char req[32], total[32], freeb[32], used[32], alloc[32], unalloc[32], allowed[64] = "";
    if (a->set_fraction) {
        format_size(allowed, sizeof(allowed) - 10, a->allowed_maximum);
        strcat(allowed, " allowed; ");
    }
    format_size(req, sizeof(req), requested);
    format_size(total, sizeof(total), total_bytes);
    format_size(freeb, sizeof(freeb), free_bytes);
    format_size(used, sizeof(used), total_bytes - free_bytes);
    format_size(alloc, sizeof(alloc), (uint64_t)allocated);
    format_size(unalloc, sizeof(unalloc), (uint64_t)(reserved - allocated));
    char live[512] = "";
    if (nlargest > 0) {
        size_t pos = 0;
        pos += snprintf(live + pos, sizeof(live) - pos, " The largest live tensors are ");
        for (int i = 0; i < nlargest && pos < sizeof(live); i++) {
            char s[32];
            format_size(s, sizeof(s), largest[i]);
            const char *sep = i == 0 ? "" : (i == nlargest - 1 ? " and " : ", ");
            pos += snprintf(live + pos, sizeof(live) - pos, "%s%s", sep, s);
        }
        if (pos < sizeof(live)) {
            snprintf(live + pos, sizeof(live) - pos, " (%zu live in total).", a->live.size());
        }
    }
    return ct_cuda_set_error(
        CT_CUDA_OUT_OF_MEMORY,
        "CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %s of which %s is free. "
        "Including non-ctorch memory, %s is in use on this GPU. %sOf the allocated memory %s is allocated by ctorch, "
        "and %s is reserved by ctorch but unallocated.%s Free tensors that are no longer needed (del), or use "
        "smaller sizes.",
        req, a->device, total, freeb, used, allowed, alloc, unalloc, live);
}

/* --- pinned host memory ------------------------------------------------------------------------ */
struct HostBlock {
    void *ptr;
    size_t size;
    bool allocated;
    std::vector<std::pair<int, cudaEvent_t>> events; /* (device, event) of async copies in flight */
};

struct HostAllocator {
    std::mutex mutex;
    std::map<uintptr_t, HostBlock *> blocks;              /* every block, by address */
    std::map<size_t, std::vector<HostBlock *>> free_list; /* reusable blocks by size */
    std::vector<HostBlock *> pending;                     /* freed, copies still in flight */
    std::vector<cudaEvent_t> spare_events[CT_CUDA_MAX_DEVICES];
    CtCudaHostStats stats;
};

HostAllocator *host_allocator = new HostAllocator();

/* A block handed out (+1) or reusable again (-1). Lock held. */
void host_stat_active(HostAllocator *h, const HostBlock *b, int sign)
{
    stat_add(h->stats.active_requests, sign);
    stat_add(h->stats.active_bytes, sign * (int64_t)b->size);
}

template <typename F>
void for_each_host_stat(CtCudaHostStats &s, F f)
{
    f(s.allocations);
    f(s.allocated_bytes);
    f(s.active_requests);
    f(s.active_bytes);
}

/* Drops the events of b that have completed; true when none is left. Lock held. */
bool host_block_idle(HostAllocator *h, HostBlock *b)
{
    size_t kept = 0;
    for (size_t i = 0; i < b->events.size(); i++) {
        cudaError_t err = cudaEventQuery(b->events[i].second);
        if (err == cudaErrorNotReady) {
            (void)cudaGetLastError();
            b->events[kept++] = b->events[i];
            continue;
        }
        if (err != cudaSuccess) { /* a failed copy: the block is no longer in use either way */
            (void)cudaGetLastError();
        }
        h->spare_events[b->events[i].first].push_back(b->events[i].second);
    }
    b->events.resize(kept);
    return kept == 0;
}

void host_process_pending(HostAllocator *h)
{
    size_t kept = 0;
    for (size_t i = 0; i < h->pending.size(); i++) {
        HostBlock *b = h->pending[i];
        if (host_block_idle(h, b)) {
            host_stat_active(h, b, -1);
            h->free_list[b->size].push_back(b);
        } else {
            h->pending[kept++] = b;
        }
    }
    h->pending.resize(kept);
}

int host_release_free(HostAllocator *h)
{
    int status = CT_CUDA_OK;
    for (auto &kv : h->free_list) {
        for (HostBlock *b : kv.second) {
            cudaError_t err = cudaFreeHost(b->ptr);
            if (err != cudaSuccess && status == CT_CUDA_OK) {
                status = ct_cuda_record_error(err, "cudaFreeHost(block)", __func__, __FILE__, __LINE__);
            }
            stat_add(h->stats.allocations, -1);
            stat_add(h->stats.allocated_bytes, -(int64_t)b->size);
            h->stats.num_host_free++;
            h->blocks.erase((uintptr_t)b->ptr);
            delete b;
        }
    }
    h->free_list.clear();
    return status;
}

size_t next_power_of_two(size_t n)
{
    size_t p = 512;
    while (p < n && p != 0) {
        p <<= 1;
    }
    return p == 0 ? n : p;
}

/* --- blocks freed while other streams may still use them (record_stream) ------------------------ */
/* b, no longer allocated, back into its pool, merged with its free neighbours. Lock held. */
void free_block(DeviceAllocator *a, Block *b)
{
    BlockPool &pool = *b->pool;
    /* Merge with free neighbours (each was an inactive split block of this segment). */
    Block *neighbours[2] = {b->prev, b->next};
    for (Block *n : neighbours) {
        if (n == nullptr || n->allocated) {
            continue;
        }
        pool.blocks.erase(n);
        stat_add(a->stats.inactive_split, &pool, -1);
        stat_add(a->stats.inactive_split_bytes, &pool, -(int64_t)n->size);
        if (n == b->prev) {
            b->ptr = n->ptr;
            b->prev = n->prev;
            if (b->prev != nullptr) {
                b->prev->next = b;
            }
        } else {
            b->next = n->next;
            if (b->next != nullptr) {
                b->next->prev = b;
            }
        }
        b->size += n->size;
        delete n;
    }
    if (is_split(b)) {
        stat_add(a->stats.inactive_split, &pool, 1);
        stat_add(a->stats.inactive_split_bytes, &pool, (int64_t)b->size);
    }
    pool.blocks.insert(b);
}

/* The last of a recorded block's events has completed: it stops being active and goes back. */
void release_recorded_block(DeviceAllocator *a, Block *b)
{
    BlockPool &pool = *b->pool;
    stat_add(a->stats.active, &pool, -1);
    stat_add(a->stats.active_bytes, &pool, -(int64_t)b->size);
    stat_add(a->stats.requested_bytes, &pool, -(int64_t)b->requested);
    b->allocated = false;
    b->requested = 0;
    free_block(a, b);
}

/* Frees b (out of `live`, its allocation counted off) once the work queued so far on each stream of
 * its stream_uses is done: one event per stream. Lock held, device current. */
int record_free_events(DeviceAllocator *a, Block *b)
{
    int status = CT_CUDA_OK;
    for (cudaStream_t s : b->stream_uses) {
        cudaEvent_t e = nullptr;
        cudaError_t err = cudaSuccess;
        if (!a->spare_events.empty()) {
            e = a->spare_events.back();
            a->spare_events.pop_back();
        } else {
            err = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
        }
        if (err == cudaSuccess) {
            err = cudaEventRecord(e, s);
            if (err != cudaSuccess) {
                a->spare_events.push_back(e);
            }
        }
        if (err != cudaSuccess) { /* no event: wait for the stream instead */
            (void)cudaGetLastError();
            err = cudaStreamSynchronize(s);
            if (err != cudaSuccess && status == CT_CUDA_OK) {
                status = ct_cuda_record_error(err, "cudaStreamSynchronize(stream)", __func__, __FILE__, __LINE__);
            }
            continue;
        }
        b->event_count++;
        a->pending.push_back(std::make_pair(b, e));
    }
    b->stream_uses.clear();
    if (b->event_count == 0) {
        release_recorded_block(a, b);
    }
    return status;
}

/* Releases the blocks whose events have all completed (waiting for every event when wait). Lock held. */
int process_events(DeviceAllocator *a, bool wait)
{
    int status = CT_CUDA_OK;
    size_t kept = 0;
    for (size_t i = 0; i < a->pending.size(); i++) {
        Block *b = a->pending[i].first;
        cudaEvent_t e = a->pending[i].second;
        cudaError_t err = wait ? cudaEventSynchronize(e) : cudaEventQuery(e);
        if (err == cudaErrorNotReady) {
            (void)cudaGetLastError();
            a->pending[kept++] = a->pending[i];
            continue;
        }
        if (err != cudaSuccess) { /* a failed stream: the block is not in use either way */
            (void)cudaGetLastError();
            if (status == CT_CUDA_OK) {
                status = ct_cuda_set_error(CT_CUDA_ERROR, "CUDA error: an event of a recorded stream failed");
            }
        }
        a->spare_events.push_back(e);
        if (--b->event_count == 0) {
            release_recorded_block(a, b);
        }
    }
    a->pending.resize(kept);
    return status;
}

} /* namespace */

/* --- device memory: the backend entries -------------------------------------------------------- */
int ct_cuda_caching_malloc(int device, size_t nbytes, void **ptr)
{
    DeviceAllocator *a = get_allocator(device, true);
    if (a == nullptr) {
        return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "CUDA error: invalid device ordinal %d", device);
    }
    if (nbytes == 0) { /* never cudaMalloc(0): an empty buffer is the null pointer, as in PyTorch */
        *ptr = nullptr;
        return CT_CUDA_OK;
    }
    if (nbytes > ((size_t)1 << 60)) {
        a->stats.num_ooms++;
        return ct_cuda_set_error(CT_CUDA_OUT_OF_MEMORY, "CUDA out of memory. Tried to allocate more than 1EB memory.");
    }
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    cudaStream_t stream = ct_cuda_stream(device);
    std::lock_guard<std::mutex> lock(a->mutex);
    (void)process_events(a, false);
    size_t size = round_size(nbytes);
    BlockPool &pool = size <= kSmallSize ? a->small_pool : a->large_pool;

    Block key;
    key.ptr = nullptr;
    key.size = size;
    key.stream = stream;
    Block *b = nullptr;
    auto it = a->caching ? pool.blocks.lower_bound(&key) : pool.blocks.end();
    if (it != pool.blocks.end() && (*it)->stream == stream) {
        b = *it;
        pool.blocks.erase(it);
        if (is_split(b)) {
            stat_add(a->stats.inactive_split, &pool, -1);
            stat_add(a->stats.inactive_split_bytes, &pool, -(int64_t)b->size);
        }
    } else {
        /* Without caching, the exact request: compute-sanitizer's memcheck then sees any access
         * past the end of a tensor (inside a cached segment it could not). */
        size_t seg = a->caching ? segment_size(size) : nbytes;
        void *p = nullptr;
        cudaError_t err = segment_malloc(a, &p, seg);
        if (err == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();
            a->stats.num_alloc_retries++;
            (void)process_events(a, true);
            release_cached(a); /* a failure here leaves the error text, which OOM overwrites */
            err = segment_malloc(a, &p, seg);
        }
        if (err == cudaErrorMemoryAllocation) {
            (void)cudaGetLastError();
            return out_of_memory(a, nbytes);
        }
        if (err != cudaSuccess) {
            return ct_cuda_record_error(err, "cudaMalloc(&ptr, segment_size)", __func__, __FILE__, __LINE__);
        }
        b = new Block();
        b->ptr = p;
        b->size = seg;
        b->requested = 0;
        b->stream = stream;
        b->allocated = false;
        b->prev = b->next = nullptr;
        b->pool = &pool;
        stat_add(a->stats.segment, &pool, 1);
        stat_add(a->stats.reserved_bytes, &pool, (int64_t)seg);
        a->stats.num_device_alloc++;
    }
    if (a->caching && should_split(b, size)) {
        Block *rest = new Block();
        rest->ptr = (char *)b->ptr + size;
        rest->size = b->size - size;
        rest->requested = 0;
        rest->stream = stream;
        rest->allocated = false;
        rest->prev = b;
        rest->next = b->next;
        rest->pool = &pool;
        if (b->next != nullptr) {
            b->next->prev = rest;
        }
        b->next = rest;
        b->size = size;
        pool.blocks.insert(rest);
        stat_add(a->stats.inactive_split, &pool, 1);
        stat_add(a->stats.inactive_split_bytes, &pool, (int64_t)rest->size);
    }
    b->allocated = true;
    b->requested = nbytes;
    a->live[b->ptr] = b;
    stat_add(a->stats.allocation, &pool, 1);
    stat_add(a->stats.active, &pool, 1);
    stat_add(a->stats.allocated_bytes, &pool, (int64_t)b->size);
    stat_add(a->stats.active_bytes, &pool, (int64_t)b->size);
    stat_add(a->stats.requested_bytes, &pool, (int64_t)nbytes);
    *ptr = b->ptr;
    return CT_CUDA_OK;
}

int ct_cuda_caching_free(int device, void *ptr)
{
    if (ptr == nullptr) { /* from a 0-byte request */
        return CT_CUDA_OK;
    }
    DeviceAllocator *a = get_allocator(device, false);
    if (a == nullptr) {
        return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "invalid device pointer %p on cuda:%d", ptr, device);
    }
    std::lock_guard<std::mutex> lock(a->mutex);
    auto it = a->live.find(ptr);
    if (it == a->live.end()) {
        return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "invalid device pointer %p on cuda:%d", ptr, device);
    }
    Block *b = it->second;
    a->live.erase(it);
    BlockPool &pool = *b->pool;
    stat_add(a->stats.allocation, &pool, -1);
    stat_add(a->stats.allocated_bytes, &pool, -(int64_t)b->size);
    if (a->caching && !b->stream_uses.empty()) {
        CT_CUDA_TRY(ct_cuda_device_guard(device));
        return record_free_events(a, b);
    }
    stat_add(a->stats.active, &pool, -1);
    stat_add(a->stats.active_bytes, &pool, -(int64_t)b->size);
    stat_add(a->stats.requested_bytes, &pool, -(int64_t)b->requested);
    b->allocated = false;
    b->requested = 0;
    if (!a->caching) { /* the segment goes back at once (cudaFree waits for the device) */
        CT_CUDA_TRY(ct_cuda_device_guard(device));
        cudaError_t err = cudaFree(b->ptr);
        stat_add(a->stats.segment, &pool, -1);
        stat_add(a->stats.reserved_bytes, &pool, -(int64_t)b->size);
        a->stats.num_device_free++;
        delete b;
        CT_CUDA_CHECK(err);
        return CT_CUDA_OK;
    }
    free_block(a, b);
    return CT_CUDA_OK;
}

int ct_cuda_caching_empty_cache(void)
{
    int status = CT_CUDA_OK;
    for (int d = 0; d < CT_CUDA_MAX_DEVICES; d++) {
        DeviceAllocator *a = get_allocator(d, false);
        if (a == nullptr) {
            continue;
        }
        int st = ct_cuda_device_guard(d);
        if (st == CT_CUDA_OK) {
            std::lock_guard<std::mutex> lock(a->mutex);
            st = process_events(a, true);
            int rel = release_cached(a);
            st = st != CT_CUDA_OK ? st : rel;
        }
        if (st != CT_CUDA_OK && status == CT_CUDA_OK) {
            status = st;
        }
    }
    return status;
}

int ct_cuda_caching_record_stream(int device, void *ptr, cudaStream_t stream)
{
    DeviceAllocator *a = get_allocator(device, false);
    if (a == nullptr || ptr == nullptr) { /* nothing of ours (an empty tensor's NULL) */
        return CT_CUDA_OK;
    }
    std::lock_guard<std::mutex> lock(a->mutex);
    auto it = a->live.find(ptr);
    if (it == a->live.end()) { /* memory the allocator does not own (from_blob, DLPack): nothing to do */
        return CT_CUDA_OK;
    }
    Block *b = it->second;
    if (stream != b->stream &&
        std::find(b->stream_uses.begin(), b->stream_uses.end(), stream) == b->stream_uses.end()) {
        b->stream_uses.push_back(stream);
    }
    return CT_CUDA_OK;
}

int ct_cuda_caching_memory_stats(int device, CtCudaMemoryStats *out)
{
    DeviceAllocator *a = get_allocator(device, false);
    if (a == nullptr) {
        memset(out, 0, sizeof(*out));
        out->max_split_size = -1;
        return CT_CUDA_OK;
    }
    std::lock_guard<std::mutex> lock(a->mutex);
    *out = a->stats;
    return CT_CUDA_OK;
}

int ct_cuda_caching_reset_peak_stats(int device)
{
    DeviceAllocator *a = get_allocator(device, false);
    if (a != nullptr) {
        std::lock_guard<std::mutex> lock(a->mutex);
        for_each_stat(a->stats, [](CtCudaStat &s) { s.peak = s.current; });
    }
    return CT_CUDA_OK;
}

int ct_cuda_caching_reset_accumulated_stats(int device)
{
    DeviceAllocator *a = get_allocator(device, false);
    if (a != nullptr) {
        std::lock_guard<std::mutex> lock(a->mutex);
        for_each_stat(a->stats, [](CtCudaStat &s) { s.allocated = s.freed = 0; });
        a->stats.num_alloc_retries = 0;
        a->stats.num_ooms = 0;
        a->stats.num_sync_all_streams = 0;
        a->stats.num_device_alloc = 0;
        a->stats.num_device_free = 0;
    }
    return CT_CUDA_OK;
}

/* --- memory fraction, snapshot, owners ------------------------------------------------------- */
int ct_cuda_caching_set_memory_fraction(int device, double fraction)
{
    DeviceAllocator *a = get_allocator(device, true);
    if (a == nullptr) {
        return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "CUDA error: invalid device ordinal %d", device);
    }
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    size_t free_bytes = 0, total_bytes = 0;
    CT_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    std::lock_guard<std::mutex> lock(a->mutex);
    a->set_fraction = true;
    a->fraction = fraction;
    a->allowed_maximum = (size_t)(fraction * (double)total_bytes);
    return CT_CUDA_OK;
}

int ct_cuda_caching_get_memory_fraction(int device, double *fraction)
{
    DeviceAllocator *a = get_allocator(device, false);
    *fraction = 1.0;
    if (a != nullptr) {
        std::lock_guard<std::mutex> lock(a->mutex);
        *fraction = a->fraction;
    }
    return CT_CUDA_OK;
}

int ct_cuda_caching_snapshot(CtCudaBlockInfo **out, size_t *count)
{
    std::vector<CtCudaBlockInfo> blocks;
    for (int d = 0; d < CT_CUDA_MAX_DEVICES; d++) {
        DeviceAllocator *a = get_allocator(d, false);
        if (a == nullptr) {
            continue;
        }
        std::lock_guard<std::mutex> lock(a->mutex);
        std::map<uintptr_t, const Block *> heads; /* segments by address */
        for (const BlockPool *pool : {&a->small_pool, &a->large_pool}) {
            for (const Block *b : pool->blocks) {
                if (b->prev == nullptr) {
                    heads[(uintptr_t)b->ptr] = b;
                }
            }
        }
        for (const auto &kv : a->live) {
            if (kv.second->prev == nullptr) {
                heads[(uintptr_t)kv.second->ptr] = kv.second;
            }
        }
        for (const auto &p : a->pending) { /* a segment may hold only blocks waiting for events */
            const Block *h = p.first;
            while (h->prev != nullptr) {
                h = h->prev;
            }
            heads[(uintptr_t)h->ptr] = h;
        }
        for (const auto &kv : heads) {
            for (const Block *b = kv.second; b != nullptr; b = b->next) {
                CtCudaBlockInfo info;
                info.address = (uintptr_t)b->ptr;
                info.size = b->size;
                info.requested = b->requested;
                info.stream = (uintptr_t)b->stream;
                info.device = d;
                info.small_pool = b->pool->small ? 1 : 0;
                info.allocated = b->event_count > 0 ? 2 : b->allocated ? 1 : 0; /* pending: still marked allocated */
                info.segment_head = b == kv.second ? 1 : 0;
                blocks.push_back(info);
            }
        }
    }
    *count = blocks.size();
    *out = nullptr;
    if (blocks.empty()) {
        return CT_CUDA_OK;
    }
    *out = (CtCudaBlockInfo *)malloc(blocks.size() * sizeof(CtCudaBlockInfo));
    if (*out == nullptr) {
        return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "memory_snapshot: out of host memory");
    }
    memcpy(*out, blocks.data(), blocks.size() * sizeof(CtCudaBlockInfo));
    return CT_CUDA_OK;
}

int ct_cuda_caching_pointer_device(const void *ptr, int *device)
{
    for (int d = 0; d < CT_CUDA_MAX_DEVICES; d++) {
        DeviceAllocator *a = get_allocator(d, false);
        if (a == nullptr) {
            continue;
        }
        std::lock_guard<std::mutex> lock(a->mutex);
        if (a->live.count(const_cast<void *>(ptr)) != 0) {
            *device = d;
            return CT_CUDA_OK;
        }
    }
    return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "invalid device pointer: %p", ptr);
}

/* --- pinned host memory: the backend entries --------------------------------------------------- */
int ct_cuda_host_malloc(int device, size_t nbytes, void **ptr)
{
    HostAllocator *h = host_allocator;
    size_t size = next_power_of_two(nbytes);
    std::lock_guard<std::mutex> lock(h->mutex);
    host_process_pending(h);
    auto fl = h->free_list.find(size);
    if (fl != h->free_list.end() && !fl->second.empty()) {
        HostBlock *b = fl->second.back();
        fl->second.pop_back();
        b->allocated = true;
        host_stat_active(h, b, 1);
        *ptr = b->ptr;
        return CT_CUDA_OK;
    }
    /* cudaHostAlloc needs a context; portable memory serves every device. */
    CT_CUDA_TRY(ct_cuda_device_guard(device));
    void *p = nullptr;
    cudaError_t err = cudaHostAlloc(&p, size, cudaHostAllocPortable);
    if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        host_release_free(h);
        err = cudaHostAlloc(&p, size, cudaHostAllocPortable);
    }
    if (err != cudaSuccess) {
        int st = ct_cuda_record_error(err, "cudaHostAlloc(&ptr, size, cudaHostAllocPortable)", __func__, __FILE__,
                                      __LINE__);
        if (st == CT_CUDA_OUT_OF_MEMORY) {
            char req[32];
            format_size(req, sizeof(req), size);
            return ct_cuda_set_error(CT_CUDA_OUT_OF_MEMORY,
                                     "CUDA out of memory. Tried to allocate %s of pinned host memory.", req);
        }
        return st;
    }
    HostBlock *b = new HostBlock();
    b->ptr = p;
    b->size = size;
    b->allocated = true;
    h->blocks[(uintptr_t)p] = b;
    stat_add(h->stats.allocations, 1);
    stat_add(h->stats.allocated_bytes, (int64_t)size);
    host_stat_active(h, b, 1);
    h->stats.num_host_alloc++;
    *ptr = p;
    return CT_CUDA_OK;
}

int ct_cuda_host_free(void *ptr)
{
    HostAllocator *h = host_allocator;
    std::lock_guard<std::mutex> lock(h->mutex);
    auto it = h->blocks.find((uintptr_t)ptr);
    if (it == h->blocks.end() || !it->second->allocated) {
        return ct_cuda_set_error(CT_CUDA_RUNTIME_ERROR, "invalid pinned host pointer %p", ptr);
    }
    HostBlock *b = it->second;
    b->allocated = false;
    if (host_block_idle(h, b)) {
        host_stat_active(h, b, -1);
        h->free_list[b->size].push_back(b);
    } else {
        h->pending.push_back(b);
    }
    return CT_CUDA_OK;
}

int ct_cuda_host_record_use(const void *ptr, int device, cudaStream_t stream)
{
    HostAllocator *h = host_allocator;
    std::lock_guard<std::mutex> lock(h->mutex);
    auto it = h->blocks.upper_bound((uintptr_t)ptr);
    if (it == h->blocks.begin()) {
        return CT_CUDA_OK;
    }
    --it;
    HostBlock *b = it->second;
    if ((uintptr_t)ptr >= (uintptr_t)b->ptr + b->size || !b->allocated) {
        return CT_CUDA_OK; /* not pinned by us: the copy was synchronous anyway */
    }
    host_block_idle(h, b); /* keeps the event list short for blocks copied again and again */
    cudaEvent_t e;
    std::vector<cudaEvent_t> &spare = h->spare_events[device];
    if (!spare.empty()) {
        e = spare.back();
        spare.pop_back();
    } else {
        CT_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    }
    cudaError_t err = cudaEventRecord(e, stream);
    if (err != cudaSuccess) {
        spare.push_back(e);
        return ct_cuda_record_error(err, "cudaEventRecord(event, stream)", __func__, __FILE__, __LINE__);
    }
    b->events.push_back(std::make_pair(device, e));
    return CT_CUDA_OK;
}

int ct_cuda_host_empty_cache(void)
{
    HostAllocator *h = host_allocator;
    std::lock_guard<std::mutex> lock(h->mutex);
    host_process_pending(h);
    return host_release_free(h);
}

int ct_cuda_host_stats(CtCudaHostStats *out)
{
    HostAllocator *h = host_allocator;
    std::lock_guard<std::mutex> lock(h->mutex);
    *out = h->stats;
    return CT_CUDA_OK;
}

int ct_cuda_host_reset_peak_stats(void)
{
    HostAllocator *h = host_allocator;
    std::lock_guard<std::mutex> lock(h->mutex);
    for_each_host_stat(h->stats, [](CtCudaStat &s) { s.peak = s.current; });
    return CT_CUDA_OK;
}

int ct_cuda_host_reset_accumulated_stats(void)
{
    HostAllocator *h = host_allocator;
    std::lock_guard<std::mutex> lock(h->mutex);
    for_each_host_stat(h->stats, [](CtCudaStat &s) { s.allocated = s.freed = 0; });
    h->stats.num_host_alloc = 0;
    h->stats.num_host_free = 0;
    return CT_CUDA_OK;
}
