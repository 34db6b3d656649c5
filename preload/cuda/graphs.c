/* CUDA graph entry points, watched for one thing: CUPTI must not be finalized once a graph may hold its
 * instrumentation (on the H200 a graph captured while kernel activity was on, replayed after a finalize and
 * re-attach, failed with "unspecified launch failure", session 8; PyTorch turns Kineto's teardown off with graphs
 * for the same reason). The first capture, creation or instantiation tells the CUPTI side before the call goes on
 * (cupti.c rs_cupti_graph_seen: cancels an armed detach, never detaches again); otherwise pure pass-through.
 *
 * Runtime names (PyTorch's torch.cuda.CUDAGraph, through the shared libcudart) and driver names (programs that
 * link or dlsym libcuda: XLA's command buffers) alike, every versioned and per-thread-stream spelling. Their
 * signatures differ between CUDA versions (cudaGraphInstantiate took 5 arguments in CUDA 11, 3 since 12), so the
 * wrappers take and forward six integer-class arguments: on x86-64 and AArch64 every one of these functions
 * passes only pointers and integers, in registers, and a callee ignores the registers it does not read. This
 * file therefore includes no CUDA header. Driver entry points fetched with cuGetProcAddress[_v2] (cuda-python,
 * cudaGetDriverEntryPoint, cudart's own driver table) go past these wrappers: procaddr.c hands back trampolines
 * for the names below that do the same (rs_cuda_graph_proc_name). cupti.c still detaches only where the library
 * is preloaded and the process uses a shared libcudart (rs_cuda_graphs_watched). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "preload/dl.h"
#include "tracer/rs_tracer.h"

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "graphs.c forwards arguments in integer registers: x86-64 and AArch64 only"
#endif

void rs_cupti_graph_seen(const char *fn);

typedef uintptr_t rs_a;
#define GRAPH_WRAPPER(fn, lib)                                                                     \
    RS_REAL(fn, int, (rs_a, rs_a, rs_a, rs_a, rs_a, rs_a), rs_dl_real(lib, #fn))                   \
    RS_EXPORT int fn(rs_a a, rs_a b, rs_a c, rs_a d, rs_a e, rs_a f)                               \
    {                                                                                              \
        RS_WRAP_REAL(fn, return 999 /* cudaErrorUnknown / CUDA_ERROR_UNKNOWN: nothing to call */); \
        rs_cupti_graph_seen(#fn);                                                                  \
        return rs_fn(a, b, c, d, e, f);                                                            \
    }
#define RT(fn)  GRAPH_WRAPPER(fn, "libcudart.so")
#define DRV(fn) GRAPH_WRAPPER(fn, "libcuda.so")

/* clang-format off */
#define GRAPH_RUNTIME(X) \
    X(cudaStreamBeginCapture) X(cudaStreamBeginCapture_ptsz) X(cudaStreamBeginCaptureToGraph) \
    X(cudaStreamBeginCaptureToGraph_ptsz) X(cudaGraphCreate) X(cudaGraphInstantiate) \
    X(cudaGraphInstantiateWithFlags) X(cudaGraphInstantiateWithParams) X(cudaGraphInstantiateWithParams_ptsz)
#define GRAPH_DRIVER(X) \
    X(cuStreamBeginCapture) X(cuStreamBeginCapture_ptsz) X(cuStreamBeginCapture_v2) \
    X(cuStreamBeginCapture_v2_ptsz) X(cuStreamBeginCaptureToGraph) X(cuStreamBeginCaptureToGraph_ptsz) \
    X(cuGraphCreate) X(cuGraphInstantiate) X(cuGraphInstantiate_v2) X(cuGraphInstantiateWithFlags) \
    X(cuGraphInstantiateWithParams) X(cuGraphInstantiateWithParams_ptsz)
/* clang-format on */
GRAPH_RUNTIME(RT)
GRAPH_DRIVER(DRV)

/* procaddr.c: for a cuGetProcAddress look-up of `symbol` (a base name such as "cuStreamBeginCapture"; the
 * versioned and per-thread spellings are matched too, at no cost), the name its trampoline reports, else NULL. */
#define GRAPH_PROC_NAME(fn) {#fn, #fn " via cuGetProcAddress"},
const char *rs_cuda_graph_proc_name(const char *symbol)
{
    static const char *const names[][2] = {GRAPH_DRIVER(GRAPH_PROC_NAME)};
    for (size_t i = 0; symbol && i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(symbol, names[i][0])) return names[i][1];
    return NULL;
}

/* Whether this library interposes globally (LD_PRELOAD names it), noted at load: loaded only as the CUDA
 * injection (CUDA_INJECTION64_PATH without LD_PRELOAD), its wrappers see nothing. */
static int preloaded;

/* Programs that look the entry points up with dlsym/dlvsym (on any handle) get the wrappers too. */
#define GRAPH_REDIRECT(fn) RS_DL_REDIRECT(fn, NULL, fn),
__attribute__((constructor)) static void graphs_register(void)
{
    static const struct rs_dl_redirect redirects[] = {GRAPH_RUNTIME(GRAPH_REDIRECT) GRAPH_DRIVER(GRAPH_REDIRECT)};
    rs_dl_register(redirects, (int)(sizeof redirects / sizeof redirects[0]));
    char self[16];
    preloaded = rs_dl_self_preloaded(self, sizeof self);
}

/* 1 when graphs made by this process are seen before they are made: the library is preloaded and the process
 * uses a shared libcudart (PyTorch, JAX's runtime calls). Driver graph functions from cuGetProcAddress are seen
 * too (procaddr.c: exported and dlsym'd), checked against the fakes only; a static cudart, which reaches the
 * driver that way, stays excluded until a device run shows its graphs seen. */
int rs_cuda_graphs_watched(void) { return preloaded && rs_dl_loaded("libcudart.so", "cudaStreamBeginCapture") != NULL; }
