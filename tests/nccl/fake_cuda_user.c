/* Stands in for a program linked against libcuda (DT_NEEDED, as `nvcc -lcuda` or perftest make it): its
 * cuGetProcAddress calls go through the PLT and reach the preloaded wrappers, no dlsym involved
 * (tests/nccl/cupti_driver.c's "link" look-ups).
 * Built with -DFAKE_CUDA_USER_PROBE (fakenov2/, session 10): a program built for CUDA 12 that may run on an older
 * driver: it probes for cuGetProcAddress_v2 with dlsym(RTLD_DEFAULT) and, when there is none, uses the 4-argument
 * function at a version that driver accepts (its own, cuDriverGetVersion, when lower than the one asked). */
#include <stdint.h>
#ifdef FAKE_CUDA_USER_PROBE
#include <dlfcn.h>
#endif

int cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags);
int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status);
int cuDriverGetVersion(int *version);

__attribute__((visibility("default"))) int fake_cuda_user_proc(const char *symbol, void **pfn, int version,
                                                               uint64_t flags, int *status)
{
#ifdef FAKE_CUDA_USER_PROBE
    int (*v2)(const char *, void **, int, uint64_t, int *) =
        (int (*)(const char *, void **, int, uint64_t, int *))dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2");
    if (v2) return v2(symbol, pfn, version, flags, status);
    int driver = 0;
    if (cuDriverGetVersion(&driver) == 0 && driver < version) version = driver;
    return cuGetProcAddress(symbol, pfn, version, flags);
#else
    return cuGetProcAddress_v2(symbol, pfn, version, flags, status);
#endif
}
__attribute__((visibility("default"))) int fake_cuda_user_proc4(const char *symbol, void **pfn, int version,
                                                                uint64_t flags)
{
    return cuGetProcAddress(symbol, pfn, version, flags);
}
