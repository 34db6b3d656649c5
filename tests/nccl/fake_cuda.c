/* A stand-in libcuda.so.1 for the CI tests (no GPU): cuDriverGetVersion and cuCtxGetCurrent (the test programs
 * call them). Like the real driver, each issues its API exit callback through CUPTI: here the fake libcupti's
 * fake_cupti_driver_api_exit, when the fake libcupti is loaded.
 *
 * And cuGetProcAddress[_v2] (session 9, tests/nccl/cuda_detach.t), handing out internal (not interposable)
 * pointers as the real driver does: graph entry points chosen by version and flags (cuStreamBeginCapture: v1
 * below 10010, _v2 from it, _v2_ptsz with CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM; cuGraphInstantiate: v1
 * below 12000, _v2 from it; cuStreamBeginCaptureToGraph from 12030 only, else success with NULL and
 * VERSION_NOT_SUFFICIENT; cuGraphCreate with flags bit 8 up: one of 48 distinct copies, flags >> 8 - 1, to fill a
 * pool), cuCtxGetCurrent / cuDriverGetVersion, and cuGetProcAddress itself (the 4-argument one below 12000, else
 * _v2). Each graph function takes six arguments, keeps them in fake_cuda_args and its name in fake_cuda_called
 * (thread-local),
 * issues its API exit callback and returns its sixth argument & 0xfff. A version above the driver's (13000):
 * CUDA_ERROR_INVALID_VALUE with 0x5a5a left in *pfn (a failed call's out-parameter must come back as it is);
 * an unknown symbol: success, NULL, SYMBOL_NOT_FOUND. fake_cuda_proc(symbol, version, flags): the same look-up,
 * not interposed, to compare with.
 * Built with -DFAKE_CUDA_NO_V2 (fakenov2/, session 10): a driver older than 12.0 (cuDriverGetVersion 11080), without
 * cuGetProcAddress_v2 (its look-up of cuGetProcAddress hands out the 4-argument one at every version), whose
 * cuGetProcAddress fails a version above 11080 as above (cuda.h: CUDA_ERROR_INVALID_VALUE "if the specified CUDA
 * version is greater than the driver version"). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
#ifdef FAKE_CUDA_NO_V2
#define DRIVER_VERSION 11080
#else
#define DRIVER_VERSION 13000
#endif

static void exit_callback(uint32_t cbid)
{
    void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (!h) return;
    void (*cb)(uint32_t) = (void (*)(uint32_t))dlsym(h, "fake_cupti_driver_api_exit");
    if (cb) cb(cbid);
    dlclose(h);
}

EXPORT int cuDriverGetVersion(int *version)
{
    if (!version) return 1; /* CUDA_ERROR_INVALID_VALUE */
    *version = DRIVER_VERSION;
    exit_callback(2); /* CUPTI_DRIVER_TRACE_CBID_cuDriverGetVersion */
    return 0;
}

EXPORT int cuCtxGetCurrent(void **ctx)
{
    if (!ctx) return 1;
    *ctx = NULL;
    exit_callback(304); /* CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent */
    return 0;
}

/* ---- cuGetProcAddress ---- */
typedef uintptr_t a_t;
EXPORT __thread a_t fake_cuda_args[6]; /* per thread: threads call at once (dlsym gives the caller's) */
EXPORT __thread const char *fake_cuda_called;

static int graph_call(const char *fn, uint32_t cbid, a_t a, a_t b, a_t c, a_t d, a_t e, a_t f)
{
    const a_t v[6] = {a, b, c, d, e, f};
    memcpy(fake_cuda_args, v, sizeof v);
    fake_cuda_called = fn;
    exit_callback(cbid);
    return (int)(f & 0xfff);
}
#define GRAPH_FN(fn, cbid) \
    static int fn(a_t a, a_t b, a_t c, a_t d, a_t e, a_t f) { return graph_call(#fn, cbid, a, b, c, d, e, f); }
GRAPH_FN(cuStreamBeginCapture, 495)
GRAPH_FN(cuStreamBeginCapture_v2, 539)
GRAPH_FN(cuStreamBeginCapture_v2_ptsz, 540)
GRAPH_FN(cuStreamBeginCaptureToGraph, 720)
GRAPH_FN(cuGraphInstantiate, 513)
GRAPH_FN(cuGraphInstantiate_v2, 643)
#define CREATE_FN(k)                                                       \
    static int cuGraphCreate_##k(a_t a, a_t b, a_t c, a_t d, a_t e, a_t f) \
    {                                                                      \
        return graph_call("cuGraphCreate#" #k, 501, a, b, c, d, e, f);     \
    }
#define CREATE_8(X, p) X(p##0) X(p##1) X(p##2) X(p##3) X(p##4) X(p##5) X(p##6) X(p##7)
#define CREATES(X)     CREATE_8(X, 1) CREATE_8(X, 2) CREATE_8(X, 3) CREATE_8(X, 4) CREATE_8(X, 5) CREATE_8(X, 6)
CREATES(CREATE_FN)
#define CREATE_ENTRY(k) (void *)cuGraphCreate_##k,
static void *const creates[] = {CREATES(CREATE_ENTRY)};

static int proc_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status);
static int proc_v1(const char *symbol, void **pfn, int version, uint64_t flags)
{
    return proc_v2(symbol, pfn, version, flags, NULL);
}

static void *proc_find(const char *s, int version, uint64_t flags, int *st)
{
    *st = 0; /* CU_GET_PROC_ADDRESS_SUCCESS */
    if (!strcmp(s, "cuStreamBeginCapture"))
        return version < 10010 ? (void *)cuStreamBeginCapture
               : flags & 2     ? (void *)cuStreamBeginCapture_v2_ptsz
                               : (void *)cuStreamBeginCapture_v2;
    if (!strcmp(s, "cuGraphInstantiate"))
        return version < 12000 ? (void *)cuGraphInstantiate : (void *)cuGraphInstantiate_v2;
    if (!strcmp(s, "cuStreamBeginCaptureToGraph")) {
        if (version >= 12030) return (void *)cuStreamBeginCaptureToGraph;
        *st = 2; /* CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT */
        return NULL;
    }
    if (!strcmp(s, "cuGraphCreate") && flags >> 8 >= 1 && flags >> 8 <= sizeof creates / sizeof creates[0])
        return creates[(flags >> 8) - 1];
    if (!strcmp(s, "cuCtxGetCurrent")) return (void *)cuCtxGetCurrent;
    if (!strcmp(s, "cuDriverGetVersion")) return (void *)cuDriverGetVersion;
#ifdef FAKE_CUDA_NO_V2
    if (!strcmp(s, "cuGetProcAddress")) return (void *)proc_v1;
#else
    if (!strcmp(s, "cuGetProcAddress")) return version < 12000 ? (void *)proc_v1 : (void *)proc_v2;
#endif
    *st = 1; /* CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND */
    return NULL;
}

static int proc_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status)
{
    if (!symbol || !pfn) return 1; /* CUDA_ERROR_INVALID_VALUE */
    if (version > DRIVER_VERSION) {
        *pfn = (void *)0x5a5a;
        return 1;
    }
    int st;
    *pfn = proc_find(symbol, version, flags, &st);
    if (status) *status = st;
    exit_callback(677); /* CUPTI_DRIVER_TRACE_CBID_cuGetProcAddress_v2 */
    return 0;
}

EXPORT int cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags)
{
    return proc_v1(symbol, pfn, version, flags);
}
#ifndef FAKE_CUDA_NO_V2
EXPORT int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, int *status)
{
    return proc_v2(symbol, pfn, version, flags, status);
}
#endif
EXPORT void *fake_cuda_proc(const char *symbol, int version, uint64_t flags)
{
    int st;
    return proc_find(symbol, version, flags, &st);
}
