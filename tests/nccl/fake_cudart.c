/* A stand-in libcudart.so.13 for the CI tests: cudaMemcpy* that do nothing but count, and
 * cudaPointerGetAttributes saying 0x1000 is pinned host memory, 0x2000 device memory, 0x6000 invalid (it sets
 * the sticky last error, as the runtime does) and everything else pageable — except pointers passed to
 * cudaHostRegister (pinned until cudaHostUnregister) and the one cudaHostAlloc/cudaMallocHost hand out
 * (0x7000, pinned until cudaFreeHost). fake_cudart_ptr_queries counts the attribute queries. */
#include <dlfcn.h>
#include <string.h>

#include <cuda_runtime_api.h>

#define EXPORT __attribute__((visibility("default")))
EXPORT int fake_cudart_copies;

/* The runtime API exit callback CUPTI issues for a subscriber (the fake libcupti's, when it is loaded). */
static void runtime_exit_callback(unsigned cbid)
{
    void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (!h) return;
    void (*cb)(unsigned) = (void (*)(unsigned))dlsym(h, "fake_cupti_runtime_api_exit");
    if (cb) cb(cbid);
    dlclose(h);
}

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind k)
{
    (void)dst, (void)src, (void)n, (void)k;
    fake_cudart_copies++;
    runtime_exit_callback(31); /* CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020 */
    return cudaSuccess;
}
/* CUDA graphs (the tracer never detaches CUPTI once a program uses them). */
EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t s, enum cudaStreamCaptureMode m)
{
    (void)s, (void)m;
    return cudaSuccess;
}
EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *x, cudaGraph_t g, unsigned long long f)
{
    (void)g, (void)f;
    *x = NULL;
    return cudaSuccess;
}
EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s)
{
    (void)dst, (void)src, (void)n, (void)k, (void)s;
    fake_cudart_copies++;
    return cudaSuccess;
}
/* The per-thread-default-stream names (no prototypes outside CUDA_API_PER_THREAD_DEFAULT_STREAM builds). */
EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t n, enum cudaMemcpyKind k);
EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s);
/* (they count on their own: a call to cudaMemcpy from here would go through the preloaded wrapper) */
EXPORT cudaError_t cudaMemcpy_ptds(void *dst, const void *src, size_t n, enum cudaMemcpyKind k)
{
    (void)dst, (void)src, (void)n, (void)k;
    fake_cudart_copies++;
    return cudaSuccess;
}
EXPORT cudaError_t cudaMemcpyAsync_ptsz(void *dst, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s)
{
    (void)dst, (void)src, (void)n, (void)k, (void)s;
    fake_cudart_copies++;
    return cudaSuccess;
}
static cudaError_t last_err; /* the runtime's sticky "last error", as cudaGetLastError reports it */
EXPORT int fake_cudart_ptr_queries;
static const void *registered[16];
static int is_registered(const void *p)
{
    for (int i = 0; i < 16; i++)
        if (p && registered[i] == p) return 1;
    return 0;
}
static void set_registered(const void *p, int on)
{
    for (int i = 0; i < 16; i++)
        if (on ? !registered[i] : registered[i] == p) {
            registered[i] = on ? p : NULL;
            return;
        }
}
EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *p)
{
    fake_cudart_ptr_queries++;
    if (p == (const void *)0x6000) return last_err = cudaErrorInvalidValue; /* a pointer CUDA rejects */
    memset(a, 0, sizeof *a);
    a->type = p == (const void *)0x1000 || is_registered(p) ? cudaMemoryTypeHost
              : p == (const void *)0x2000                   ? cudaMemoryTypeDevice
                                                            : cudaMemoryTypeUnregistered;
    return cudaSuccess;
}
EXPORT cudaError_t cudaHostRegister(void *p, size_t n, unsigned int flags)
{
    (void)n, (void)flags;
    set_registered(p, 1);
    return cudaSuccess;
}
EXPORT cudaError_t cudaHostUnregister(void *p)
{
    set_registered(p, 0);
    return cudaSuccess;
}
EXPORT cudaError_t cudaHostAlloc(void **p, size_t n, unsigned int flags)
{
    (void)n, (void)flags;
    *p = (void *)0x7000;
    set_registered(*p, 1);
    return cudaSuccess;
}
EXPORT cudaError_t cudaMallocHost(void **p, size_t n) { return cudaHostAlloc(p, n, 0); }
EXPORT cudaError_t cudaFreeHost(void *p)
{
    set_registered(p, 0);
    return cudaSuccess;
}
EXPORT cudaError_t cudaGetDevice(int *d)
{
    *d = 0;
    return cudaSuccess;
}
EXPORT cudaError_t cudaPeekAtLastError(void) { return last_err; }
EXPORT cudaError_t cudaGetLastError(void)
{
    cudaError_t e = last_err;
    last_err = cudaSuccess;
    return e;
}
