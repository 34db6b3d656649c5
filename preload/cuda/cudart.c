/* cudaMemcpy* wrappers in the dynamic libcudart: by default (RAILSCOPE_CUDA_COPIES=api) the record of every
 * copy outside the sampling windows — bytes, direction, pageable/pinned per side, stream, host time of the
 * call — at a few hundred ns a copy, where CUPTI's MEMCPY activity cost several % of a transformer step
 * (bench/gpu/RESULTS.md); inside windows CUPTI records copies with their GPU times and the wrappers write
 * none (cupti.c set_window: a copy at a boundary may be in both). Also the fallback that keeps copies
 * visible when CUPTI is not delivering (no libcupti, injection not set, another CUPTI client took over).
 * They always count calls (the CUPTI take-over check needs evidence that copies are being issued).
 *
 * They see only what goes through the exported symbols of a dynamically linked libcudart (libtorch's own
 * copies; also the per-thread-default-stream names, _ptds/_ptsz); static-cudart libraries (NCCL, cuBLAS)
 * and kernel-based copies are CUPTI's job.
 *
 * Real symbols: RTLD_NEXT (libcudart is in the global scope under PyTorch, measured), then the
 * already-loaded libcudart (local scopes), and dlsym/dlvsym look-ups are redirected here too.
 *
 * Call stacks (preload/stack.h, RAILSCOPE_STACKS): a copy to or from pageable host memory stalls the host
 * thread, and where it comes from is what the user needs to pin. Its call site's stack is recorded once
 * (CALL_STACK), whoever records the copy itself: here (CUDA_COPY_CALL.stack names the site) or CUPTI
 * (which delivers the copy later, on its own thread: we record the site from here, at the call, since we
 * do not subscribe to CUPTI's runtime-API callbacks). That costs one pointer query per host-side copy
 * argument while CUPTI delivers, and one unwind per pageable copy — a copy that stages through a bounce
 * buffer and takes tens of microseconds or more.
 *
 * Every wrapper is the skeleton of preload/dl.h (RS_REAL, RS_WRAP_REAL, RS_WRAP_FORWARD_IF, RS_WRAP_CALL,
 * RS_WRAP_LEAVE) with the tracer's guard: it returns what the real call returned, with the errno it left; a
 * wrapper whose real function cannot be found returns cudaErrorUnknown (999); nothing ever calls NULL. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "preload/cuda/cuda_int.h"
#include "preload/dl.h"
#include "preload/stack.h"
#include "tracer/rs_tracer.h"

/* Types and prototypes come from cuda_runtime_api.h (pulled in by cupti.h). The skeleton's pieces for the
 * runtime: the real function as said at the top, cudaErrorUnknown when it is nowhere. */
#define CUDART_REAL(fn, params) RS_REAL(fn, cudaError_t, params, rs_dl_real("libcudart.so", #fn))
#define CUDART_MISSING(fn)                                                                                \
    do {                                                                                                  \
        rs_warn_once("%s: the real CUDA runtime function is not found; returning cudaErrorUnknown", #fn); \
        return cudaErrorUnknown;                                                                          \
    } while (0)

CUDART_REAL(cudaPointerGetAttributes, (struct cudaPointerAttributes *, const void *))
CUDART_REAL(cudaPeekAtLastError, (void))
CUDART_REAL(cudaGetLastError, (void))

/* The pointer-kind cache: host pointers of copies repeat (a pinned staging buffer, a loader's batches), and a
 * query costs three runtime calls. 1024 direct-mapped slots, each one 64-bit word (lock-free: a torn entry
 * cannot exist) = pointer << 16 | epoch << 8 | generation << 3 | kind. An entry is good for the ~1.07 s epoch
 * of rs_now() >> 30 it was made in, and only while no host memory was allocated, freed, registered or
 * unregistered through the runtime (the wrappers below bump the generation): a freed pinned buffer's address
 * can come back as pageable memory. Driver-API host allocations (cuMemHostAlloc) are not seen: at worst one
 * epoch of stale kinds for such an address. Pointers above 2^48 (not user space on x86-64) are not cached. */
#define RS_PK_SLOTS 1024u
static uint64_t pk_cache[RS_PK_SLOTS];
static uint32_t pk_gen;

static inline uint64_t pk_tag(uint64_t now) { return ((now >> 30) & 0xff) << 8 | (uint64_t)(pk_gen & 0x1f) << 3; }
static inline unsigned pk_slot(uintptr_t p) { return (unsigned)(((p >> 4) * 0x9E3779B97F4A7C15ull) >> 54); }

/* cudaMemoryType of a pointer: 0 unregistered host (pageable), 1 host (pinned), 2 device, 3 managed.
 * A failed query would leave its error as the runtime's "last error", which the application reads after
 * its own calls (PyTorch checks it after every launch): we query only when no error is pending, and clear
 * the one our query caused. Out of line: mem_type's cache hit stays a leaf-like path. */
__attribute__((noinline)) static uint32_t mem_type_query(const void *p)
{
    cudaPointerGetAttributes_fn attr = rs_real_cudaPointerGetAttributes();
    cudaPeekAtLastError_fn peek = rs_real_cudaPeekAtLastError();
    cudaGetLastError_fn get_error = rs_real_cudaGetLastError();
    if (!attr || !peek || !get_error || peek() != cudaSuccess) return 0xffffffffu;
    struct cudaPointerAttributes a;
    memset(&a, 0, sizeof a);
    if (attr(&a, p) != cudaSuccess) {
        get_error();
        return 0xffffffffu;
    }
    return (uint32_t)a.type;
}

uint64_t rs_cuda_ptr_queries; /* cudaPointerGetAttributes calls made (tests: the cache works) */

static uint32_t mem_type(const void *p, uint64_t now)
{
    uintptr_t u = (uintptr_t)p;
    uint64_t tag = pk_tag(now), *slot = &pk_cache[pk_slot(u)];
    if (u < (1ull << 48)) {
        uint64_t w = __atomic_load_n(slot, __ATOMIC_RELAXED);
        if (w >> 16 == u && (w & 0xfff8) == tag) return (uint32_t)(w & 7);
    }
    __atomic_fetch_add(&rs_cuda_ptr_queries, 1, __ATOMIC_RELAXED);
    uint32_t k = mem_type_query(p);
    if (k <= 3 && u < (1ull << 48)) __atomic_store_n(slot, (uint64_t)u << 16 | tag | k, __ATOMIC_RELAXED);
    return k;
}

/* A copy that stalls the host on pageable memory: the host side (both sides for cudaMemcpyDefault) is
 * unregistered host memory. Synchronous copies, and async ones (the runtime stages pageable memory
 * synchronously), are stack candidates; host-to-host and device-to-device copies are not. */
static int pageable_copy(enum cudaMemcpyKind kind, uint32_t src_mem, uint32_t dst_mem)
{
    const uint32_t unreg = (uint32_t)cudaMemoryTypeUnregistered;
    if (kind == cudaMemcpyHostToDevice) return src_mem == unreg;
    if (kind == cudaMemcpyDeviceToHost) return dst_mem == unreg;
    if (kind == cudaMemcpyDefault) return src_mem == unreg || dst_mem == unreg;
    return 0;
}

/* CUPTI is delivering the copies: only the call site of a pageable copy is recorded here (its CUDA_MEMCPY
 * record arrives later from CUPTI, on another thread, where the caller's stack is long gone). */
static void stack_only(uint64_t t0, void *dst, const void *src, enum cudaMemcpyKind kind)
{
    uint32_t sm = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDefault ? mem_type(src, t0) : 0xffffffffu;
    uint32_t dm = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDefault ? mem_type(dst, t0) : 0xffffffffu;
    if (pageable_copy(kind, sm, dm)) rs_stack_site(RS_EV_CUDA_MEMCPY, t0);
}

static inline int stack_candidate(int stackable, enum cudaMemcpyKind kind)
{
    return stackable && rs_stacks_on() && rs_on(RS_FAM_cuda) &&
           (kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDefault);
}

static void record_copy(uint64_t t0, void *dst, const void *src, size_t bytes, enum cudaMemcpyKind kind, int async,
                        int stackable, cudaStream_t stream, cudaError_t ret)
{
    uint64_t t1 = rs_now();
    struct rs_ev_CUDA_COPY_CALL ev;
    RS_EV_INIT(&ev, CUDA_COPY_CALL, t0);
    ev.dur = t1 - t0;
    ev.bytes = bytes;
    ev.dst = (uint64_t)(uintptr_t)dst;
    ev.src = (uint64_t)(uintptr_t)src;
    ev.stream = (uint64_t)(uintptr_t)stream;
    ev.copy_kind = (uint32_t)kind;
    ev.async = (uint32_t)async;
    /* Pageable vs pinned is the point of these events: one attribute query per host-side pointer (the copy
     * kind says which side is the device; PyTorch issues hundreds of device-to-device copies a step, which
     * need none). */
    int src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    int dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    ev.src_mem = src_dev ? (uint32_t)cudaMemoryTypeDevice : mem_type(src, t1);
    ev.dst_mem = dst_dev ? (uint32_t)cudaMemoryTypeDevice : mem_type(dst, t1);
    ev.ret = ret;
    ev.stack = 0;
    if (stack_candidate(stackable, kind) && pageable_copy(kind, ev.src_mem, ev.dst_mem))
        ev.stack = rs_stack_site(RS_EV_CUDA_COPY_CALL, t0);
    rs_emit(&ev.h);
}

/* Device-to-device copies (explicit kind, peer copies) stay in the sampling windows, where CUPTI times them on
 * the GPU: outside windows the wrappers leave them alone while CUPTI is delivering. They tell nothing about
 * host memory, and a ResNet-50 DDP step on the H200 makes ~480 of them (~70 us a step at ~150 ns each). When
 * CUPTI is not delivering (none, or taken over) they are recorded, as every copy. */
static inline int d2d_in_windows_only(void)
{
    return __atomic_load_n(&rs_cupti_state, __ATOMIC_RELAXED) == RS_CUPTI_DELIVERING;
}

static inline int fallback_on(void)
{
    return rs_on(RS_FAM_cuda) && !__atomic_load_n(&rs_cuda_copies_by_cupti, __ATOMIC_RELAXED);
}

/* Every call is counted (the take-over check). Two skeletons, one per state of the capture: while CUPTI
 * records the copies, only the call site of a pageable copy (when stacks are on); otherwise the copy, but a
 * device-to-device one while CUPTI delivers. A call that records nothing is forwarded untouched (a tail call,
 * no clock read), one nested in another wrapper of this thread too. (Two paths rather than one with a mode
 * variable: the variable, live across the real call, cost 3-4 instructions a copy more.) */
#define CUDART_COPY_WRAPPER(fn, async, stackable, dst_, src_, bytes_, kind_, stream_, params, args)                 \
    CUDART_REAL(fn, params)                                                                                         \
    RS_EXPORT cudaError_t fn params                                                                                 \
    {                                                                                                               \
        RS_WRAP_REAL(fn, CUDART_MISSING(fn));                                                                       \
        __atomic_fetch_add(&rs_cuda_copy_calls, 1, __ATOMIC_RELAXED);                                               \
        if (RS_LIKELY(!fallback_on())) {                                                                            \
            RS_WRAP_FORWARD_IF(stack_candidate(stackable, kind_), rs_guard, args);                                  \
            RS_WRAP_CALL(args);                                                                                     \
            stack_only(rs_t0, (void *)(dst_), (const void *)(src_), kind_);                                         \
            RS_WRAP_LEAVE(rs_guard);                                                                                \
        }                                                                                                           \
        RS_WRAP_FORWARD_IF(!((kind_) == cudaMemcpyDeviceToDevice && d2d_in_windows_only()), rs_guard, args);        \
        RS_WRAP_CALL(args);                                                                                         \
        record_copy(rs_t0, (void *)(dst_), (const void *)(src_), bytes_, kind_, async, stackable, stream_, rs_ret); \
        RS_WRAP_LEAVE(rs_guard);                                                                                    \
    }

/* One line per signature; each is instantiated under its plain name and, below, its per-thread-default-stream
 * name. */
#define CUDART_MEMCPY(fn)                                                 \
    CUDART_COPY_WRAPPER(fn, 0, 1, dst, src, count, kind, (cudaStream_t)0, \
                        (void *dst, const void *src, size_t count, enum cudaMemcpyKind kind), (dst, src, count, kind))
#define CUDART_MEMCPY_ASYNC(fn)                                                                                    \
    CUDART_COPY_WRAPPER(fn, 1, 1, dst, src, count, kind, stream,                                                   \
                        (void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream), \
                        (dst, src, count, kind, stream))
#define CUDART_MEMCPY_2D(fn)                                                                                    \
    CUDART_COPY_WRAPPER(fn, 0, 1, dst, src, width *height, kind, (cudaStream_t)0,                               \
                        (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height, \
                         enum cudaMemcpyKind kind),                                                             \
                        (dst, dpitch, src, spitch, width, height, kind))
#define CUDART_MEMCPY_2D_ASYNC(fn)                                                                              \
    CUDART_COPY_WRAPPER(fn, 1, 1, dst, src, width *height, kind, stream,                                        \
                        (void *dst, size_t dpitch, const void *src, size_t spitch, size_t width, size_t height, \
                         enum cudaMemcpyKind kind, cudaStream_t stream),                                        \
                        (dst, dpitch, src, spitch, width, height, kind, stream))

CUDART_MEMCPY(cudaMemcpy)
CUDART_MEMCPY_ASYNC(cudaMemcpyAsync)
CUDART_MEMCPY_2D(cudaMemcpy2D)
CUDART_MEMCPY_2D_ASYNC(cudaMemcpy2DAsync)
CUDART_COPY_WRAPPER(cudaMemcpyPeer, 0, 0, dst, src, count, cudaMemcpyDeviceToDevice, (cudaStream_t)0,
                    (void *dst, int dstDevice, const void *src, int srcDevice, size_t count),
                    (dst, dstDevice, src, srcDevice, count))
CUDART_COPY_WRAPPER(cudaMemcpyPeerAsync, 1, 0, dst, src, count, cudaMemcpyDeviceToDevice, stream,
                    (void *dst, int dstDevice, const void *src, int srcDevice, size_t count, cudaStream_t stream),
                    (dst, dstDevice, src, srcDevice, count, stream))

/* The per-thread-default-stream entry points: a program built with `nvcc --default-stream per-thread` (or
 * CUDA_API_PER_THREAD_DEFAULT_STREAM) calls these names instead (cuda_runtime_api.h maps them by macro), so
 * without them its copies would be invisible outside the windows. Same records; stream 0 then means the calling
 * thread's default stream. */
CUDART_MEMCPY(cudaMemcpy_ptds)
CUDART_MEMCPY_ASYNC(cudaMemcpyAsync_ptsz)
CUDART_MEMCPY_2D(cudaMemcpy2D_ptds)
CUDART_MEMCPY_2D_ASYNC(cudaMemcpy2DAsync_ptsz)

/* Host memory changing kind: the pointer-kind cache starts over (pk_gen), after the call, whoever calls
 * (also from inside another wrapper: no guard, nothing is recorded). Otherwise pure pass-through. */
#define CUDART_HOSTMEM_WRAPPER(fn, params, args)            \
    CUDART_REAL(fn, params)                                 \
    RS_EXPORT cudaError_t fn params                         \
    {                                                       \
        RS_WRAP_REAL(fn, CUDART_MISSING(fn));               \
        cudaError_t ret = rs_fn args;                       \
        __atomic_fetch_add(&pk_gen, 1, __ATOMIC_RELAXED);   \
        return ret; /* errno: the call's (nothing since) */ \
    }
CUDART_HOSTMEM_WRAPPER(cudaFreeHost, (void *p), (p))
CUDART_HOSTMEM_WRAPPER(cudaHostUnregister, (void *p), (p))
CUDART_HOSTMEM_WRAPPER(cudaHostRegister, (void *p, size_t n, unsigned int flags), (p, n, flags))
CUDART_HOSTMEM_WRAPPER(cudaHostAlloc, (void **p, size_t n, unsigned int flags), (p, n, flags))
CUDART_HOSTMEM_WRAPPER(cudaMallocHost, (void **p, size_t n), (p, n))

/* Programs that look the entry points up with dlsym/dlvsym (on any handle) get the wrappers too; the slot
 * receives the function their look-up found. */
/* clang-format off */
#define CUDART_WRAPPED(X)                                                                                   \
    X(cudaMemcpy) X(cudaMemcpyAsync) X(cudaMemcpy2D) X(cudaMemcpy2DAsync) X(cudaMemcpyPeer)                 \
    X(cudaMemcpyPeerAsync) X(cudaMemcpy_ptds) X(cudaMemcpyAsync_ptsz) X(cudaMemcpy2D_ptds)                  \
    X(cudaMemcpy2DAsync_ptsz) X(cudaFreeHost) X(cudaHostUnregister) X(cudaHostRegister) X(cudaHostAlloc)   \
    X(cudaMallocHost)
/* clang-format on */
#define CUDART_REDIRECT(fn) RS_DL_REDIRECT(fn, NULL, fn),
__attribute__((constructor)) static void cudart_register(void)
{
    static const struct rs_dl_redirect redirects[] = {CUDART_WRAPPED(CUDART_REDIRECT)};
    rs_dl_register(redirects, (int)(sizeof redirects / sizeof redirects[0]));
}
