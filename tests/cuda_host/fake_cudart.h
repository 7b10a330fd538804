/* fake_cudart.h: the knobs and counters of the fake CUDA runtime (fake_cudart.cpp). */
#ifndef FAKE_CUDART_H
#define FAKE_CUDART_H
#include <cuda_runtime_api.h>
#include <map>
#include <string>
#include <stddef.h>
#include <vector>

extern size_t capacity, in_use;
extern int malloc_calls, free_calls, failed_mallocs, host_allocs;
extern std::map<void *, int> event_pending; /* event -> 1 while its work is "in flight" */
extern int memcpy_calls;

struct FakeLaunch {
    const void *func;
    long long threads; /* grid size x block size */
    dim3 grid, block;
    size_t shared;
};
extern std::vector<std::string> api_log; /* event records, stream waits and peer copies, in order */
extern int peer_enabled;                   /* cudaDeviceEnablePeerAccess calls */
extern int invalid_launches; /* launches a GPU would refuse (fake_cudart.cpp's launch_problem) */
extern std::vector<FakeLaunch> launches;
#endif
