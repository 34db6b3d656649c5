/* Stands in for a program linked against libcuda (DT_NEEDED, as `nvcc -lcuda` or perftest make it): its
 * cuGetProcAddress calls go through the PLT and reach the preloaded wrappers, no dlsym involved
 * (tests/nccl/cupti_driver.c's "link" look-ups). */
#include <stdint.h>

int cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags);
int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status);

__attribute__((visibility("default"))) int fake_cuda_user_proc(const char *symbol, void **pfn, int version,
                                                               uint64_t flags, int *status)
{
    return cuGetProcAddress_v2(symbol, pfn, version, flags, status);
}
__attribute__((visibility("default"))) int fake_cuda_user_proc4(const char *symbol, void **pfn, int version,
                                                                uint64_t flags)
{
    return cuGetProcAddress(symbol, pfn, version, flags);
}
