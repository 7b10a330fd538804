/* allocator_harness.cu: runs csrc/cuda/allocator.cu on the host against a fake CUDA runtime, so
 * that the caching allocator's rules (rounding, pools, splitting, merging, stream awareness,
 * statistics, the OOM retry and message, the pinned-memory cache) are checked where there is no
 * GPU. Built by tests/test_cuda_allocator_host.py with nvcc -cudart none; fake_cudart.cpp stands
 * in for the CUDA runtime. */
#include "allocator.cuh"
#include "fake_cudart.h"
#include <map>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string>

/* --- what runtime.cu provides to the allocator --------------------------------------------------- */
static char error_text[4096];
static cudaStream_t current_stream = 0;
int ct_cuda_set_error(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_text, sizeof(error_text), fmt, ap);
    va_end(ap);
    return status;
}
int ct_cuda_record_error(cudaError_t err, const char *expr, const char *func, const char *file, int line)
{
    return ct_cuda_set_error(err == cudaErrorMemoryAllocation ? CT_CUDA_OUT_OF_MEMORY : CT_CUDA_ERROR,
                             "CUDA error in %s", expr);
}
cudaStream_t ct_cuda_stream(int device) { return current_stream; }

/* --- checks ------------------------------------------------------------------------------------ */
static int failures = 0;
#define CHECK_EQ(a, b)                                                                                   \
    do {                                                                                                 \
        long long va_ = (long long)(a), vb_ = (long long)(b);                                            \
        if (va_ != vb_) {                                                                                \
            printf("FAIL %s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a, va_, #b, vb_); \
            failures++;                                                                                  \
        }                                                                                                \
    } while (0)
#define CHECK(c)                                                    \
    do {                                                            \
        if (!(c)) {                                                 \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);     \
            failures++;                                             \
        }                                                           \
    } while (0)

static CtCudaMemoryStats stats(void)
{
    CtCudaMemoryStats s;
    ct_cuda_caching_memory_stats(0, &s);
    return s;
}
static void *alloc(size_t n)
{
    void *p = nullptr;
    int st = ct_cuda_caching_malloc(0, n, &p);
    CHECK_EQ(st, CT_CUDA_OK);
    return p;
}

static const int64_t MiB = 1 << 20;

int main()
{
    /* 0 bytes: NULL without touching the device or the statistics; free(NULL) is a no-op */
    {
        void *z = (void *)&failures;
        CHECK_EQ(ct_cuda_caching_malloc(0, 0, &z), CT_CUDA_OK);
        CHECK(z == nullptr);
        CHECK_EQ(malloc_calls, 0);
        CHECK_EQ(ct_cuda_caching_free(0, nullptr), CT_CUDA_OK);
        CtCudaMemoryStats s0 = stats();
        CHECK_EQ(s0.allocation[CT_CUDA_STAT_ALL].allocated, 0);
        CHECK_EQ(s0.requested_bytes[CT_CUDA_STAT_ALL].allocated, 0);
    }
    /* small pool: 512-byte rounding, one 2 MiB segment shared by splits */
    void *a = alloc(1);
    CtCudaMemoryStats s = stats();
    CHECK_EQ(s.allocated_bytes[CT_CUDA_STAT_ALL].current, 512);
    CHECK_EQ(s.allocated_bytes[CT_CUDA_STAT_SMALL_POOL].current, 512);
    CHECK_EQ(s.requested_bytes[CT_CUDA_STAT_ALL].current, 1);
    CHECK_EQ(s.reserved_bytes[CT_CUDA_STAT_ALL].current, 2 * MiB);
    CHECK_EQ(s.segment[CT_CUDA_STAT_SMALL_POOL].current, 1);
    CHECK_EQ(s.inactive_split[CT_CUDA_STAT_ALL].current, 1);
    CHECK_EQ(s.inactive_split_bytes[CT_CUDA_STAT_ALL].current, 2 * MiB - 512);
    void *b = alloc(1000);
    CHECK(b == (char *)a + 512);
    s = stats();
    CHECK_EQ(s.allocated_bytes[CT_CUDA_STAT_ALL].current, 512 + 1024);
    CHECK_EQ(s.reserved_bytes[CT_CUDA_STAT_ALL].current, 2 * MiB);
    CHECK_EQ(s.num_device_alloc, 1);
    CHECK_EQ(s.allocation[CT_CUDA_STAT_ALL].current, 2);
    /* free a: a free split block before b; free b: both merge with the rest into one block */
    CHECK_EQ(ct_cuda_caching_free(0, a), CT_CUDA_OK);
    s = stats();
    CHECK_EQ(s.inactive_split[CT_CUDA_STAT_ALL].current, 2);
    CHECK_EQ(ct_cuda_caching_free(0, b), CT_CUDA_OK);
    s = stats();
    CHECK_EQ(s.allocated_bytes[CT_CUDA_STAT_ALL].current, 0);
    CHECK_EQ(s.allocated_bytes[CT_CUDA_STAT_ALL].peak, 1536);
    CHECK_EQ(s.inactive_split[CT_CUDA_STAT_ALL].current, 0);
    CHECK_EQ(s.inactive_split_bytes[CT_CUDA_STAT_ALL].current, 0);
    CHECK_EQ(s.reserved_bytes[CT_CUDA_STAT_ALL].current, 2 * MiB);
    /* the cached block is reused (best fit), no new cudaMalloc */
    void *c = alloc(2048);
    CHECK(c == a);
    CHECK_EQ(stats().num_device_alloc, 1);
    CHECK_EQ(ct_cuda_caching_free(0, c), CT_CUDA_OK);
    /* an unknown pointer is an error, not a crash */
    CHECK_EQ(ct_cuda_caching_free(0, (char *)c + 512), CT_CUDA_RUNTIME_ERROR);
    CHECK_EQ(ct_cuda_caching_empty_cache(), CT_CUDA_OK);
    s = stats();
    CHECK_EQ(s.reserved_bytes[CT_CUDA_STAT_ALL].current, 0);
    CHECK_EQ(s.segment[CT_CUDA_STAT_ALL].current, 0);
    CHECK_EQ(s.num_device_free, 1);
    CHECK_EQ(in_use, 0);

    /* large pool: requests over 1 MiB; 20 MiB segments under 10 MiB, else rounded to 2 MiB */
    void *l1 = alloc(1 * MiB + 1);
    s = stats();
    CHECK_EQ(s.allocated_bytes[CT_CUDA_STAT_LARGE_POOL].current, 1 * MiB + 512);
    CHECK_EQ(s.reserved_bytes[CT_CUDA_STAT_LARGE_POOL].current, 20 * MiB);
    void *l2 = alloc(3 * MiB);
    CHECK(l2 == (char *)l1 + MiB + 512);
    CHECK_EQ(stats().reserved_bytes[CT_CUDA_STAT_ALL].current, 20 * MiB);
    /* 15 MiB still fits the first segment's rest (best fit, no cudaMalloc), whose last
     * 1 MiB - 1024 is not worth a split: the block keeps it */
    void *l3 = alloc(15 * MiB + 7);
    CHECK(l3 == (char *)l2 + 3 * MiB);
    s = stats();
    CHECK_EQ(s.reserved_bytes[CT_CUDA_STAT_ALL].current, 20 * MiB);
    CHECK_EQ(s.allocated_bytes[CT_CUDA_STAT_ALL].current, 20 * MiB);
    CHECK_EQ(s.inactive_split[CT_CUDA_STAT_ALL].current, 0);
    /* 25 MiB needs a segment of its own: rounded up to 26 MiB, the rest not split either */
    void *l4 = alloc(25 * MiB);
    s = stats();
    CHECK_EQ(s.reserved_bytes[CT_CUDA_STAT_ALL].current, 20 * MiB + 26 * MiB);
    CHECK_EQ(s.allocated_bytes[CT_CUDA_STAT_ALL].current, 20 * MiB + 26 * MiB);
    CHECK_EQ(s.requested_bytes[CT_CUDA_STAT_ALL].current, (1 * MiB + 1) + 3 * MiB + (15 * MiB + 7) + 25 * MiB);
    CHECK_EQ(ct_cuda_caching_free(0, l4), CT_CUDA_OK);
    CHECK_EQ(ct_cuda_caching_free(0, l1), CT_CUDA_OK);
    CHECK_EQ(ct_cuda_caching_free(0, l2), CT_CUDA_OK);
    CHECK_EQ(ct_cuda_caching_free(0, l3), CT_CUDA_OK);
    s = stats();
    CHECK_EQ(s.allocated_bytes[CT_CUDA_STAT_ALL].current, 0);
    CHECK_EQ(s.inactive_split[CT_CUDA_STAT_ALL].current, 0);

    /* stream awareness: a block freed on stream 0 is not handed to another stream */
    current_stream = (cudaStream_t)0x1234;
    void *st = alloc(3 * MiB);
    CHECK(st != l1);
    CHECK_EQ(stats().reserved_bytes[CT_CUDA_STAT_ALL].current, 20 * MiB + 26 * MiB + 20 * MiB);
    CHECK_EQ(ct_cuda_caching_free(0, st), CT_CUDA_OK);
    current_stream = 0;
    void *again = alloc(3 * MiB);
    CHECK(again == l1);
    CHECK_EQ(ct_cuda_caching_free(0, again), CT_CUDA_OK);

    /* out of memory: 66 MiB cached of 100; 60 MiB needs the cache flushed and one retry */
    ct_cuda_caching_reset_peak_stats(0);
    CHECK_EQ(stats().reserved_bytes[CT_CUDA_STAT_ALL].peak, 66 * MiB);
    void *big = alloc(60 * MiB);
    s = stats();
    CHECK_EQ(s.num_alloc_retries, 1);
    CHECK_EQ(s.num_ooms, 0);
    CHECK_EQ(s.reserved_bytes[CT_CUDA_STAT_ALL].current, 60 * MiB);
    void *keep = alloc(20 * MiB);
    void *p = nullptr;
    int status = ct_cuda_caching_malloc(0, 30 * MiB, &p);
    CHECK_EQ(status, CT_CUDA_OUT_OF_MEMORY);
    CHECK(p == nullptr);
    std::string msg = error_text;
    printf("OOM message: %s\n", error_text);
    CHECK(msg.find("CUDA out of memory. Tried to allocate 30.00 MiB. GPU 0 has a total capacity of 100.00 MiB "
                   "of which 20.00 MiB is free.") == 0);
    CHECK(msg.find("Of the allocated memory 80.00 MiB is allocated by ctorch, and 0 bytes is reserved by ctorch "
                   "but unallocated.") != std::string::npos);
    CHECK(msg.find("The largest live tensors are 60.00 MiB and 20.00 MiB (2 live in total).") != std::string::npos);
    s = stats();
    CHECK_EQ(s.num_ooms, 1);
    CHECK_EQ(s.num_alloc_retries, 2);
    /* and everything still works afterwards */
    CHECK_EQ(ct_cuda_caching_free(0, big), CT_CUDA_OK);
    void *after = alloc(30 * MiB);
    CHECK_EQ(stats().allocated_bytes[CT_CUDA_STAT_ALL].current, 50 * MiB);
    CHECK_EQ(ct_cuda_caching_free(0, after), CT_CUDA_OK);
    CHECK_EQ(ct_cuda_caching_free(0, keep), CT_CUDA_OK);
    CHECK_EQ(stats().requested_bytes[CT_CUDA_STAT_ALL].current, 0);
    ct_cuda_caching_reset_accumulated_stats(0);
    s = stats();
    CHECK_EQ(s.num_ooms, 0);
    CHECK_EQ(s.allocated_bytes[CT_CUDA_STAT_ALL].allocated, 0);
    CHECK_EQ(ct_cuda_caching_empty_cache(), CT_CUDA_OK);
    CHECK_EQ(in_use, 0);

    /* record_stream: a block freed while other streams may still use it stays out of the pool
     * (no longer allocated, still active) until an event recorded on each of them completes */
    {
        auto in_flight = []() {
            int n = 0;
            for (auto &kv : event_pending) {
                n += kv.second;
            }
            return n;
        };
        cudaStream_t other = (cudaStream_t)0x5678, third = (cudaStream_t)0x9abc;
        void *r1 = alloc(4096);
        CHECK_EQ(ct_cuda_caching_record_stream(0, r1, 0), CT_CUDA_OK); /* its own stream: nothing */
        CHECK_EQ(ct_cuda_caching_record_stream(0, r1, other), CT_CUDA_OK);
        CHECK_EQ(ct_cuda_caching_record_stream(0, r1, other), CT_CUDA_OK);             /* once per stream */
        CHECK_EQ(ct_cuda_caching_record_stream(0, (char *)r1 + 512, other), CT_CUDA_OK); /* not a block: ignored */
        CHECK_EQ(ct_cuda_caching_record_stream(0, r1, third), CT_CUDA_OK);
        int before = in_flight();
        CHECK_EQ(ct_cuda_caching_free(0, r1), CT_CUDA_OK);
        CHECK_EQ(in_flight(), before + 2); /* one event per recorded stream */
        s = stats();
        CHECK_EQ(s.allocated_bytes[CT_CUDA_STAT_ALL].current, 0);
        CHECK_EQ(s.allocation[CT_CUDA_STAT_ALL].current, 0);
        CHECK_EQ(s.active_bytes[CT_CUDA_STAT_ALL].current, 4096);
        CHECK_EQ(s.active[CT_CUDA_STAT_ALL].current, 1);
        CHECK_EQ(ct_cuda_caching_free(0, r1), CT_CUDA_RUNTIME_ERROR); /* a second free is still an error */
        void *r2 = alloc(4096);
        CHECK(r2 != r1); /* the events are pending: not reused */
        int n = 0;
        for (auto &kv : event_pending) { /* one stream's work completes: still held */
            if (kv.second && n++ == 0) {
                kv.second = 0;
            }
        }
        CHECK_EQ(ct_cuda_caching_free(0, r2), CT_CUDA_OK);
        void *r3 = alloc(4096);
        CHECK(r3 != r1);
        CHECK_EQ(stats().active_bytes[CT_CUDA_STAT_ALL].current, 2 * 4096);
        for (auto &kv : event_pending) {
            kv.second = 0; /* and the other's */
        }
        CHECK_EQ(ct_cuda_caching_free(0, r3), CT_CUDA_OK);
        void *r4 = alloc(4096); /* the allocation polls the events first: r1's block is back and merged */
        CHECK(r4 == r1);
        s = stats();
        CHECK_EQ(s.active_bytes[CT_CUDA_STAT_ALL].current, 4096);
        CHECK_EQ(s.inactive_split[CT_CUDA_STAT_ALL].current, 1);
        /* empty_cache waits for the events, then releases the segment */
        CHECK_EQ(ct_cuda_caching_record_stream(0, r4, other), CT_CUDA_OK);
        CHECK_EQ(ct_cuda_caching_free(0, r4), CT_CUDA_OK);
        CHECK_EQ(stats().active_bytes[CT_CUDA_STAT_ALL].current, 4096);
        CHECK_EQ(ct_cuda_caching_empty_cache(), CT_CUDA_OK);
        s = stats();
        CHECK_EQ(s.active_bytes[CT_CUDA_STAT_ALL].current, 0);
        CHECK_EQ(s.requested_bytes[CT_CUDA_STAT_ALL].current, 0);
        CHECK_EQ(s.reserved_bytes[CT_CUDA_STAT_ALL].current, 0);
        CHECK_EQ(in_flight(), 0);
        CHECK_EQ(in_use, 0);
    }

    /* pinned host memory: power-of-two blocks, reuse, and no reuse while a copy is in flight */
    void *h1 = nullptr, *h2 = nullptr, *h3 = nullptr;
    CHECK_EQ(ct_cuda_host_malloc(0, 1000, &h1), CT_CUDA_OK);
    CtCudaHostStats hs;
    ct_cuda_host_stats(&hs);
    CHECK_EQ(hs.allocated_bytes.current, 1024);
    CHECK_EQ(hs.active_bytes.current, 1024);
    CHECK_EQ(ct_cuda_host_free(h1), CT_CUDA_OK);
    CHECK_EQ(ct_cuda_host_malloc(0, 600, &h2), CT_CUDA_OK);
    CHECK(h2 == h1);
    CHECK_EQ(host_allocs, 1);
    CHECK_EQ(ct_cuda_host_record_use((char *)h2 + 100, 0, 0), CT_CUDA_OK); /* an async copy from inside */
    CHECK_EQ(ct_cuda_host_free(h2), CT_CUDA_OK);
    CHECK_EQ(ct_cuda_host_malloc(0, 1024, &h3), CT_CUDA_OK);
    CHECK(h3 != h2); /* the copy has not finished: a new block */
    CHECK_EQ(host_allocs, 2);
    for (auto &kv : event_pending) {
        kv.second = 0; /* the copy completes */
    }
    void *h4 = nullptr;
    CHECK_EQ(ct_cuda_host_malloc(0, 1024, &h4), CT_CUDA_OK);
    CHECK(h4 == h2);
    CHECK_EQ(ct_cuda_host_free(h3), CT_CUDA_OK);
    CHECK_EQ(ct_cuda_host_free(h4), CT_CUDA_OK);
    CHECK_EQ(ct_cuda_host_free(h4), CT_CUDA_RUNTIME_ERROR); /* double free is reported */
    CHECK_EQ(ct_cuda_host_empty_cache(), CT_CUDA_OK);
    ct_cuda_host_stats(&hs);
    CHECK_EQ(hs.allocated_bytes.current, 0);
    CHECK_EQ(hs.allocated_bytes.peak, 2048); /* h2 (1024) and h3 (1024) at once */
    CHECK_EQ(hs.allocations.current, 0);
    CHECK_EQ(hs.active_requests.current, 0);
    CHECK_EQ(hs.active_bytes.freed, 1024 + 1024 + 1024 + 1024); /* h1, h2 (once its copy ended), h3, h4 */
    CHECK_EQ(hs.num_host_free, 2);
    ct_cuda_host_reset_peak_stats();
    ct_cuda_host_reset_accumulated_stats();
    ct_cuda_host_stats(&hs);
    CHECK_EQ(hs.allocated_bytes.peak, 0);
    CHECK_EQ(hs.active_bytes.freed, 0);
    CHECK_EQ(hs.num_host_free, 0);

    /* CTORCH_NO_CUDA_MEMORY_CACHING=1 (read at a device's first use): exact cudaMalloc / cudaFree */
    {
        setenv("CTORCH_NO_CUDA_MEMORY_CACHING", "1", 1);
        int m0 = malloc_calls, f0 = free_calls;
        size_t used0 = in_use;
        void *p = nullptr, *q = nullptr;
        CHECK_EQ(ct_cuda_caching_malloc(1, 1000, &p), CT_CUDA_OK);
        CHECK_EQ(ct_cuda_caching_malloc(1, 3, &q), CT_CUDA_OK);
        CHECK_EQ(malloc_calls, m0 + 2);
        CHECK_EQ(in_use, used0 + 1003); /* the bytes asked for, no rounding, no segment */
        CtCudaMemoryStats s1;
        ct_cuda_caching_memory_stats(1, &s1);
        CHECK_EQ(s1.segment[CT_CUDA_STAT_ALL].current, 2);
        CHECK_EQ(ct_cuda_caching_free(1, p), CT_CUDA_OK);
        CHECK_EQ(ct_cuda_caching_free(1, q), CT_CUDA_OK);
        CHECK_EQ(free_calls, f0 + 2);
        CHECK_EQ(in_use, used0);
        ct_cuda_caching_memory_stats(1, &s1);
        CHECK_EQ(s1.segment[CT_CUDA_STAT_ALL].current, 0);
        CHECK_EQ(s1.reserved_bytes[CT_CUDA_STAT_ALL].current, 0);
        CHECK_EQ(s1.allocated_bytes[CT_CUDA_STAT_ALL].current, 0);
        unsetenv("CTORCH_NO_CUDA_MEMORY_CACHING");
    }

    printf(failures ? "%d FAILURES\n" : "all allocator checks passed\n", failures);
    return failures ? 1 : 0;
}
