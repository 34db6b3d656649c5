/* A stand-in libcuda.so.1 for the CI tests (no GPU): only the cheap driver functions railscope calls to get a
 * driver API exit callback in which it may call cuptiFinalize (preload/cuda/cupti.c, "detaching"). Like the real
 * driver, each issues that callback through CUPTI: here the fake libcupti's fake_cupti_driver_api_exit, when the
 * fake libcupti is loaded. FAKE_CUDA_CB_ONLY=N: only the function of callback id N calls back (on the H200's
 * driver 580 cuDriverGetVersion issues none). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

static void exit_callback(uint32_t cbid)
{
    const char *only = getenv("FAKE_CUDA_CB_ONLY");
    if (only && *only && (uint32_t)atoi(only) != cbid) return;
    void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (!h) return;
    void (*cb)(uint32_t) = (void (*)(uint32_t))dlsym(h, "fake_cupti_driver_api_exit");
    if (cb) cb(cbid);
    dlclose(h);
}

EXPORT int cuDriverGetVersion(int *version)
{
    if (!version) return 1; /* CUDA_ERROR_INVALID_VALUE */
    *version = 13000;
    exit_callback(2); /* CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion */
    return 0;
}

EXPORT int cuDeviceGetCount(int *count)
{
    if (!count) return 1;
    *count = 1;
    exit_callback(4); /* CUPTI_DRIVER_TRACE_CBID_cuDeviceGetCount */
    return 0;
}

EXPORT int cuCtxGetCurrent(void **ctx)
{
    if (!ctx) return 1;
    *ctx = NULL;
    exit_callback(304); /* CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent */
    return 0;
}
