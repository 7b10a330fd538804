/* ctorch_cuda.h: the C ABI between ctorch._C and the CUDA backend ctorch/_C_cuda.so.
 *
 * _C never links CUDA: on first CUDA use cuda_loader.c dlopen()s _C_cuda.so and calls its one
 * exported symbol, ct_cuda_backend_init(), which returns a CtCudaBackend (a table of function
 * pointers). Both sides include this header; it uses plain C types only, so C files never see
 * CUDA headers and the .so never needs Python.
 *
 * Conventions:
 * - Functions returning int return a CtCudaStatus; on failure the text of the error (the CUDA
 *   call, function, file and line) is in last_error() of the calling thread. The C side turns
 *   it into a Python exception.
 * - Kernel-family tables (elementwise, ...) follow the C side's convention instead: 0, or -1
 *   with a Python exception set, which the .so raises through CtCudaHost.raise.
 * - Streams and events travel as uintptr_t (a cudaStream_t / cudaEvent_t); stream 0 is the
 *   legacy default stream.
 * - Every function with a `device` argument runs on that device whatever the thread's current
 *   device is, and leaves it current. */
#ifndef CTORCH_CUDA_H
#define CTORCH_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a struct below changes; both sides must agree. */
#define CT_CUDA_ABI_VERSION 27
#define CT_CUDA_MAX_DEVICES 64
#define CT_CUDA_ENTRY_POINT "ct_cuda_backend_init"

typedef enum {
    CT_CUDA_OK = 0,
    CT_CUDA_ERROR = 1,           /* a CUDA or cuBLAS call failed: ctorch.AcceleratorError */
    CT_CUDA_OUT_OF_MEMORY = 2,   /* ctorch.cuda.OutOfMemoryError */
    CT_CUDA_NO_DRIVER = 3,       /* libcuda could not be loaded */
    CT_CUDA_DRIVER_TOO_OLD = 4,  /* the driver is older than the runtime ctorch was built with */
    CT_CUDA_NO_DEVICE = 5,       /* driver fine, no GPU visible */
    CT_CUDA_VALUE_ERROR = 6,     /* a bad argument: ValueError */
    CT_CUDA_TYPE_ERROR = 7,      /* TypeError */
    CT_CUDA_INDEX_ERROR = 8,     /* IndexError */
    CT_CUDA_NOT_IMPLEMENTED = 9, /* NotImplementedError */
    CT_CUDA_RUNTIME_ERROR = 10   /* a user error reported as RuntimeError (not a CUDA failure) */
} CtCudaStatus;

typedef enum { CT_CUDA_H2D = 1, CT_CUDA_D2H = 2, CT_CUDA_D2D = 3 } CtCudaCopyKind;

/* Event flags (combine with |). */
#define CT_CUDA_EVENT_TIMING 1
#define CT_CUDA_EVENT_BLOCKING 2
#define CT_CUDA_EVENT_INTERPROCESS 4

typedef struct {
    char name[256];
    char uuid[48]; /* "GPU-xxxxxxxx-xxxx-..." */
    uint64_t total_memory;
    int major, minor;
    int multi_processor_count;
    int max_threads_per_multi_processor;
    int warp_size;
    int regs_per_multiprocessor;
    int l2_cache_size;
    int is_integrated;
    int is_multi_gpu_board;
    int pci_bus_id, pci_device_id, pci_domain_id;
} CtCudaDeviceProps;

/* One statistic, as PyTorch's: the current value, its peak since the last reset, and the sums
 * of all increases and decreases. */
typedef struct {
    int64_t current, peak, allocated, freed;
} CtCudaStat;

/* Index of the pool a CtCudaStat array entry describes. */
enum { CT_CUDA_STAT_ALL = 0, CT_CUDA_STAT_SMALL_POOL = 1, CT_CUDA_STAT_LARGE_POOL = 2, CT_CUDA_STAT_NTYPES = 3 };

/* The caching allocator's statistics for one device (PyTorch's memory_stats() families). */
typedef struct {
    CtCudaStat allocation[CT_CUDA_STAT_NTYPES];     /* live blocks handed out */
    CtCudaStat segment[CT_CUDA_STAT_NTYPES];        /* cudaMalloc'd segments */
    CtCudaStat active[CT_CUDA_STAT_NTYPES];         /* blocks in use (= allocation here) */
    CtCudaStat inactive_split[CT_CUDA_STAT_NTYPES]; /* free blocks that are parts of a split segment */
    CtCudaStat allocated_bytes[CT_CUDA_STAT_NTYPES];
    CtCudaStat reserved_bytes[CT_CUDA_STAT_NTYPES];
    CtCudaStat active_bytes[CT_CUDA_STAT_NTYPES];
    CtCudaStat inactive_split_bytes[CT_CUDA_STAT_NTYPES];
    CtCudaStat requested_bytes[CT_CUDA_STAT_NTYPES]; /* sizes as asked for, before rounding */
    CtCudaStat oversize_allocations;
    CtCudaStat oversize_segments;
    int64_t num_alloc_retries; /* cudaMalloc failed and the cache was flushed to retry */
    int64_t num_ooms;          /* out-of-memory errors raised */
    int64_t num_sync_all_streams;
    int64_t num_device_alloc; /* cudaMalloc calls */
    int64_t num_device_free;  /* cudaFree calls */
    int64_t max_split_size;   /* -1: no limit */
} CtCudaMemoryStats;

/* The pinned host allocator's statistics, PyTorch's host_memory_stats() families. */
typedef struct {
    CtCudaStat allocations;     /* cudaHostAlloc'd blocks the cache owns (handed out + cached) */
    CtCudaStat allocated_bytes; /* their bytes (rounded sizes) */
    CtCudaStat active_requests; /* blocks handed out (until reusable: their copies ended) */
    CtCudaStat active_bytes;    /* their bytes */
    int64_t num_host_alloc;     /* cudaHostAlloc calls */
    int64_t num_host_free;      /* cudaFreeHost calls */
} CtCudaHostStats;

/* Settings that live in _C (set from Python) and are read by the .so at run time. */
typedef struct {
    int float32_matmul_precision;                  /* 0 'highest', 1 'high', 2 'medium' (TF32 if > 0) */
    int allow_fp16_reduced_precision_reduction;    /* default 1 */
    int allow_bf16_reduced_precision_reduction;    /* default 1 */
    uint64_t seed[CT_CUDA_MAX_DEVICES];            /* each device's default generator */
    uint64_t offset[CT_CUDA_MAX_DEVICES];          /* counter-based generator position */
    int sync_debug_mode;                           /* set_sync_debug_mode: 0 default, 1 warn, 2 error */
} CtCudaSettings;

/* One block of the device caching allocator, for memory_snapshot(). */
typedef struct {
    uintptr_t address;
    uint64_t size;      /* rounded */
    uint64_t requested; /* as asked for; 0 when free */
    uintptr_t stream;   /* the stream the segment was allocated on */
    int device;
    int small_pool;
    int allocated;    /* 1 allocated, 2 freed but waiting for record_stream events, 0 free */
    int segment_head; /* 1 for the first block of a segment (its address is the segment's) */
} CtCudaBlockInfo;

/* The services _C gives the backend. */
typedef struct {
    int abi_version;
    /* Sets the Python exception for status (CtCudaStatus) with message; returns -1. Call only
     * where the C side's convention is "-1 with an exception set" (kernel-family tables): the
     * GIL is held there. */
    int (*raise)(int status, const char *message);
    CtCudaSettings *settings;
    /* A new contiguous tensor of dtype (a CtDType) on cuda:device, for kernels whose output size
     * is known only after a pass on the GPU (nonzero, masked_select): returns the tensor (a
     * CtTensorObject *, new reference) and its memory in *data, or NULL with a Python exception
     * set. GIL held, as for raise. */
    void *(*empty)(int ndim, const int64_t *sizes, int dtype, int device, void **data);
    /* Drops a tensor from empty() (when a later step fails). */
    void (*release)(void *tensor);
    /* Issues a UserWarning with message (takes the GIL itself); -1 when the warning was turned
     * into an exception (that exception is cleared). */
    int (*warn)(const char *message);
} CtCudaHost;

struct CtElementwiseKernels;
struct CtReduceKernels;
struct CtIndexKernels;
struct CtBlasKernels;
struct CtRandomKernels;
struct CtNNKernels;
struct CtOptimKernels;

typedef struct CtCudaBackend {
    int abi_version;
    size_t struct_size;
    int runtime_version_built; /* CUDART_VERSION at build time, e.g. 13000 */
    const char *arch_list;     /* SASS targets, e.g. "75;80;86;89;90" */
    const char *ptx_arch;      /* PTX target, e.g. "90" ("" when none) */

    /* The message of this thread's last failure. */
    const char *(*last_error)(void);

    /* --- devices --------------------------------------------------------------------------- */
    /* Classifies failure: CT_CUDA_NO_DRIVER, CT_CUDA_DRIVER_TOO_OLD, CT_CUDA_NO_DEVICE, ... */
    int (*device_count)(int *count);
    int (*driver_version)(int *version); /* 0 when no driver is installed */
    int (*runtime_version)(int *version);
    int (*get_device_properties)(int device, CtCudaDeviceProps *out);
    int (*set_device)(int device);
    int (*synchronize)(int device);
    int (*mem_get_info)(int device, size_t *free_bytes, size_t *total_bytes);
    /* CT_CUDA_OK when the .so holds code this GPU can run (creates the device's context). */
    int (*probe_kernel_image)(int device);

    /* --- streams and events ---------------------------------------------------------------- */
    int (*stream_priority_range)(int device, int *least, int *greatest);
    /* A stream from the device's pool for priority (clamped to the device's range). */
    int (*stream_from_pool)(int device, int priority, uintptr_t *stream, int *actual_priority);
    int (*stream_priority)(int device, uintptr_t stream, int *priority);
    uintptr_t (*current_stream)(int device); /* this thread's */
    void (*set_current_stream)(int device, uintptr_t stream);
    int (*stream_query)(int device, uintptr_t stream, int *done);
    int (*stream_synchronize)(int device, uintptr_t stream);
    int (*stream_wait_event)(int device, uintptr_t stream, uintptr_t event);
    int (*event_create)(int device, int flags, uintptr_t *event);
    int (*event_destroy)(int device, uintptr_t event);
    int (*event_record)(int device, uintptr_t event, uintptr_t stream);
    int (*event_query)(int device, uintptr_t event, int *done);
    int (*event_synchronize)(int device, uintptr_t event);
    int (*event_elapsed_time)(int device, uintptr_t start, uintptr_t end, float *ms);

    /* --- device memory: the caching allocator ---------------------------------------------- */
    /* The block belongs to the device's current stream. nbytes == 0 gives NULL without any CUDA
     * call (free(NULL) is a no-op). CT_CUDA_OUT_OF_MEMORY with PyTorch's message (plus the
     * largest live blocks) when even a flushed cache cannot help. */
    int (*malloc)(int device, size_t nbytes, void **ptr);
    int (*free)(int device, void *ptr);
    int (*empty_cache)(void);
    int (*memory_stats)(int device, CtCudaMemoryStats *out);
    int (*reset_peak_stats)(int device);
    int (*reset_accumulated_stats)(int device);
    /* Tensor.record_stream: the block at ptr (allocated by malloc) is also used by stream; when
     * freed it is not reused before the work queued on stream by then is done. */
    int (*record_stream)(int device, void *ptr, uintptr_t stream);

    /* --- pinned host memory: a cache of cudaHostAlloc blocks ------------------------------- */
    int (*host_malloc)(int device, size_t nbytes, void **ptr);
    int (*host_free)(void *ptr);
    int (*host_empty_cache)(void);
    int (*host_stats)(CtCudaHostStats *out);

    /* --- copies, on the current stream of device ------------------------------------------- */
    /* Blocking unless non_blocking; non-blocking copies with pinned host memory are fully
     * asynchronous (the pinned block is not reused before the copy ends). */
    int (*memcpy)(void *dst, const void *src, size_t nbytes, int kind, int device, int non_blocking);
    int (*memset)(void *dst, int value, size_t nbytes, int device);
    /* nbytes from src on src_device to dst on dst_device (different GPUs), ordered after the work
     * queued so far on both devices' current streams and before any work queued on them later
     * (cudaMemcpyPeerAsync on the source's stream with events both ways; without peer access
     * the driver stages through the host). Asynchronous to the host. */
    int (*memcpy_peer)(void *dst, int dst_device, const void *src, int src_device, size_t nbytes);

    /* --- kernel families (NULL until written; same structs as the CPU's) --------------------- */
    const struct CtElementwiseKernels *elementwise;
    const struct CtReduceKernels *reduce;
    const struct CtIndexKernels *index;
    const struct CtBlasKernels *blas;
    const struct CtRandomKernels *random;
    const struct CtNNKernels *nn;
    const struct CtOptimKernels *optim;

    /* --- more of torch.cuda: allocator controls and device queries ------------------------- */
    /* Caps the device's reserved memory at fraction * its total memory (cudaMalloc past it is
     * an out-of-memory error); 1.0 and never set mean no cap. */
    int (*set_memory_fraction)(int device, double fraction);
    int (*get_memory_fraction)(int device, double *fraction);
    /* Every block of every device's segments, segments by (device, address), blocks in address
     * order within each; *out is malloc()ed (free() it), NULL when there are none. */
    int (*memory_snapshot)(CtCudaBlockInfo **out, size_t *count);
    /* The device of a live allocation (CT_CUDA_RUNTIME_ERROR when ptr is not one). */
    int (*pointer_device)(const void *ptr, int *device);
    int (*can_access_peer)(int device, int peer, int *can);
    /* The device's cuBLAS handle, bound to its current stream. */
    int (*blas_handle)(int device, uintptr_t *handle);
    /* The pinned cache's peaks := current values; its allocated/freed sums := 0. */
    int (*host_reset_peak_stats)(void);
    int (*host_reset_accumulated_stats)(void);
} CtCudaBackend;

/* The one symbol _C_cuda.so exports. Makes no CUDA call. NULL when host's ABI differs. */
typedef const CtCudaBackend *(*CtCudaBackendInitFn)(const CtCudaHost *host);

#ifdef __cplusplus
}
#endif

#endif /* CTORCH_CUDA_H */
