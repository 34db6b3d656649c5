/* A stand-in libcuda.so.1 for the CI tests (no GPU): only cuDriverGetVersion, the driver function railscope
 * calls to get a driver API exit callback in which it may call cuptiFinalize (preload/cuda/cupti.c,
 * "detaching"). Like the real driver, it issues that callback through CUPTI: here the fake libcupti's
 * fake_cupti_driver_api_exit, when the fake libcupti is loaded. */
#include <dlfcn.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))

EXPORT int cuDriverGetVersion(int *version)
{
    if (!version) return 1; /* CUDA_ERROR_INVALID_VALUE */
    *version = 13000;
    void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (h) {
        void (*cb)(uint32_t) = (void (*)(uint32_t))dlsym(h, "fake_cupti_driver_api_exit");
        if (cb) cb(2); /* CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion */
        dlclose(h);
    }
    return 0;
}
