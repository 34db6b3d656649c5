/* A stand-in libcudart.so.13 for the CI tests: cudaMemcpy* that do nothing but count, and
 * cudaPointerGetAttributes saying 0x1000 is pinned host memory, 0x2000 device memory, 0x6000 invalid (it sets
 * the sticky last error, as the runtime does) and everything else pageable. */
#include <string.h>

#include <cuda_runtime_api.h>

#define EXPORT __attribute__((visibility("default")))
EXPORT int fake_cudart_copies;

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind k)
{
    (void)dst, (void)src, (void)n, (void)k;
    fake_cudart_copies++;
    return cudaSuccess;
}
EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind k, cudaStream_t s)
{
    (void)dst, (void)src, (void)n, (void)k, (void)s;
    fake_cudart_copies++;
    return cudaSuccess;
}
static cudaError_t last_err; /* the runtime's sticky "last error", as cudaGetLastError reports it */
EXPORT cudaError_t cudaPointerGetAttributes(struct cudaPointerAttributes *a, const void *p)
{
    if (p == (const void *)0x6000) return last_err = cudaErrorInvalidValue; /* a pointer CUDA rejects */
    memset(a, 0, sizeof *a);
    a->type = p == (const void *)0x1000   ? cudaMemoryTypeHost
              : p == (const void *)0x2000 ? cudaMemoryTypeDevice
                                          : cudaMemoryTypeUnregistered;
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
