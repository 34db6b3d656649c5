/* cuGetProcAddress[_v2]: the driver's own function table, and the way past every exported wrapper. cuda-python
 * resolves each driver function with it, cudart fetches its driver table with it (cudaGetDriverEntryPoint
 * leads there too), and all of them find cuGetProcAddress itself with dlsym on libcuda's handle (redirected
 * here, below) or link it (the exported wrappers). A graph entry point fetched this way would be called unseen,
 * and a CUDA graph replayed after a CUPTI finalize can kill the application (graphs.c). So a successful look-up
 * of a graph entry point (graphs.c's names) hands back a trampoline instead: it tells the CUPTI side
 * (rs_cupti_graph_seen) and forwards six integer registers to the pointer the driver gave, like graphs.c's
 * wrappers; a look-up of "cuGetProcAddress" itself gets a trampoline that does this again. Everything else,
 * and every failed or empty look-up, comes back exactly as the driver left it; so does everything in a process
 * that will never detach (cupti.c rs_cupti_may_rewrite: RAILSCOPE_CUDA_DETACH=off, kernels `all` or `off`, CUPTI
 * copies or API/sync records).
 *
 * The driver's pointer depends on (symbol, version, flags), so trampolines are bound to pointers in a fixed pool,
 * lock-free (a slot is claimed by compare-and-swap, one already bound to the same pointer is reused; a pointer
 * is bound once and for all, the caller may keep it). When the pool is full the driver's pointer goes back
 * unchanged and the graph counts as seen at once: CUPTI then stays attached, which is always safe. That path takes
 * no lock (rs_cupti_graph_seen_nolock): CUPTI itself may look a function up in a call that cupti.c makes under its
 * attach_lock. No CUDA header: the prototypes (cuda.h, CUDA 11.3+ and 12.0+) are written out here. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "preload/dl.h"
#include "tracer/rs_tracer.h"

#if !defined(__x86_64__) && !defined(__aarch64__)
#error "procaddr.c forwards arguments in integer registers: x86-64 and AArch64 only"
#endif

void rs_cupti_graph_seen(const char *fn);
void rs_cupti_graph_seen_nolock(const char *fn);
int rs_cupti_may_rewrite(void);
const char *rs_cuda_graph_proc_name(const char *symbol);

#define CUDA_SUCCESS_ 0
#define CUDA_UNKNOWN_ 999 /* CUDA_ERROR_UNKNOWN: no driver to call */

typedef uintptr_t rs_a;
typedef int (*six_fn)(rs_a, rs_a, rs_a, rs_a, rs_a, rs_a);

/* CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags) (11.3) and
 * cuGetProcAddress_v2(..., CUdriverProcAddressQueryResult *symbolStatus) (12.0; cuda.h's cuGetProcAddress). */
RS_REAL(cuGetProcAddress, int, (const char *, void **, int, uint64_t), rs_dl_real("libcuda.so", "cuGetProcAddress"))
RS_REAL(cuGetProcAddress_v2, int, (const char *, void **, int, uint64_t, void *),
        rs_dl_real("libcuda.so", "cuGetProcAddress_v2"))
RS_REAL(cuDriverGetVersion, int, (int *), rs_dl_real("libcuda.so", "cuDriverGetVersion"))

/* ---- the trampoline pool ---- */
enum { SLOT_FREE, SLOT_BINDING, SLOT_GRAPH, SLOT_PROCADDR };
#define RS_PA_SLOTS 32
static struct {
    int state; /* SLOT_*: the kind once bound (release-stored after real and name) */
    void *real;
    const char *name;
} slots[RS_PA_SLOTS];

static int lookup(void *real, int five, const char *symbol, void **pfn, int version, uint64_t flags, void *status);

static int pa_call(int i, rs_a a, rs_a b, rs_a c, rs_a d, rs_a e, rs_a f)
{
    int kind = __atomic_load_n(&slots[i].state, __ATOMIC_ACQUIRE);
    if (kind == SLOT_GRAPH) {
        rs_cupti_graph_seen(slots[i].name);
        return ((six_fn)slots[i].real)(a, b, c, d, e, f);
    }
    /* A cuGetProcAddress from cuGetProcAddress: 4 or 5 arguments depending on the version asked; the fifth
     * register is passed on either way (a 4-argument callee ignores it, as without railscope). */
    if (kind == SLOT_PROCADDR)
        return lookup(slots[i].real, 1, (const char *)a, (void **)b, (int)c, (uint64_t)d, (void *)e);
    return CUDA_UNKNOWN_; /* never handed out unbound */
}

/* clang-format off */
#define PA_SLOTS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) \
    X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)
#define PA_TRAMPOLINE(i) \
    static int pa_tramp_##i(rs_a a, rs_a b, rs_a c, rs_a d, rs_a e, rs_a f) { return pa_call(i, a, b, c, d, e, f); }
#define PA_ENTRY(i) pa_tramp_##i,
/* clang-format on */
PA_SLOTS(PA_TRAMPOLINE)
static const six_fn trampolines[RS_PA_SLOTS] = {PA_SLOTS(PA_ENTRY)};

/* The slot bound to `real` (of this kind), else a free one bound now; -1 when all are taken. */
static int bind(void *real, const char *name, int kind)
{
    for (int i = 0; i < RS_PA_SLOTS; i++) {
        int st = __atomic_load_n(&slots[i].state, __ATOMIC_ACQUIRE);
        if (st == SLOT_FREE) break; /* claimed in order: nothing bound beyond */
        if (st == kind && slots[i].real == real) return i;
    }
    for (int i = 0; i < RS_PA_SLOTS; i++) {
        int st = SLOT_FREE;
        if (!__atomic_compare_exchange_n(&slots[i].state, &st, SLOT_BINDING, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            continue;
        slots[i].real = real;
        slots[i].name = name;
        __atomic_store_n(&slots[i].state, kind, __ATOMIC_RELEASE);
        return i;
    }
    return -1;
}

/* A successful look-up's pointer: a trampoline where the symbol is a graph entry point or cuGetProcAddress. */
static void rewrite(const char *symbol, void **pfn)
{
    void *real = *pfn;
    if (rs_dl_is_self(real)) return;     /* one of our wrappers already */
    if (!rs_cupti_may_rewrite()) return; /* this process never detaches: nothing to protect */
    int kind = SLOT_GRAPH;
    const char *name = rs_cuda_graph_proc_name(symbol);
    if (!name && (!strcmp(symbol, "cuGetProcAddress") || !strcmp(symbol, "cuGetProcAddress_v2")))
        kind = SLOT_PROCADDR, name = "cuGetProcAddress";
    if (!name) return;
    int i = bind(real, name, kind);
    if (i < 0) {
        rs_cupti_graph_seen_nolock("cuGetProcAddress handed out more graph entry points than railscope can watch");
        return;
    }
    *pfn = (void *)trampolines[i];
}

static __thread int pa_depth; /* inside our own look-up (another interposer calling back): leave it alone */

static int lookup(void *real, int five, const char *symbol, void **pfn, int version, uint64_t flags, void *status)
{
    if (pa_depth)
        return five ? ((cuGetProcAddress_v2_fn)real)(symbol, pfn, version, flags, status)
                    : ((cuGetProcAddress_fn)real)(symbol, pfn, version, flags);
    pa_depth++;
    int rc = five ? ((cuGetProcAddress_v2_fn)real)(symbol, pfn, version, flags, status)
                  : ((cuGetProcAddress_fn)real)(symbol, pfn, version, flags);
    int saved_errno = errno;
    pa_depth--;
    if (rc == CUDA_SUCCESS_ && symbol && pfn && *pfn) rewrite(symbol, pfn);
    errno = saved_errno;
    return rc;
}

RS_EXPORT int cuGetProcAddress(const char *symbol, void **pfn, int version, uint64_t flags)
{
    RS_WRAP_REAL(cuGetProcAddress, return CUDA_UNKNOWN_);
    return lookup((void *)rs_fn, 0, symbol, pfn, version, flags, NULL);
}

/* A driver before 12.0 has no cuGetProcAddress_v2, yet a program that binds it through its PLT finds ours (review
 * H_REVIEW9 L6; a dlsym(RTLD_DEFAULT) probe gets NULL, v2_absent below). Without railscope such a program would not
 * even load; the look-up goes to the 4-argument function, and the program gets the pointers and result that
 * function gives (an error for a version above the driver's, as cuda.h says). An error instead would
 * fail every look-up of a program that works without railscope. symbolStatus says what a 12.0 driver would:
 * SUCCESS with a pointer; with none, VERSION_NOT_SUFFICIENT where the driver's own version finds the symbol, else
 * SYMBOL_NOT_FOUND; untouched when the call failed. */
enum { PA_FOUND, PA_NOT_FOUND, PA_VERSION_LOW }; /* CUdriverProcAddressQueryResult */

static int status_v1(cuGetProcAddress_fn v1, const char *symbol, void *found, uint64_t flags)
{
    if (found) return PA_FOUND;
    cuDriverGetVersion_fn driver_version = rs_real_cuDriverGetVersion();
    int v = 0;
    void *later = NULL;
    return driver_version && driver_version(&v) == CUDA_SUCCESS_ && v1(symbol, &later, v, flags) == CUDA_SUCCESS_ &&
                   later
               ? PA_VERSION_LOW
               : PA_NOT_FOUND;
}

/* The driver's _v2, NULL without one. A missing one is remembered once libcuda is known loaded (review H_REVIEW10
 * L3: no dlsym and object scan on each call); the 4-argument function is looked up first, so that a libcuda loaded
 * between the two look-ups does not count as one without _v2. */
static int v2_missing;
static cuGetProcAddress_v2_fn real_v2(void)
{
    if (__atomic_load_n(&v2_missing, __ATOMIC_RELAXED)) return NULL;
    cuGetProcAddress_fn v1 = rs_real_cuGetProcAddress();
    cuGetProcAddress_v2_fn v2 = rs_real_cuGetProcAddress_v2();
    if (!v2 && v1) __atomic_store_n(&v2_missing, 1, __ATOMIC_RELAXED);
    return v2;
}

/* dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2") finds our export first: NULL where the driver has none, as the probing
 * program would see untraced (review H_REVIEW10 M2): it then takes its 4-argument branch with a version that
 * function accepts, where ours would be handed its 12.x version and fail (CUDA_ERROR_INVALID_VALUE). */
static int v2_absent(void) { return !real_v2(); }

RS_EXPORT int cuGetProcAddress_v2(const char *symbol, void **pfn, int version, uint64_t flags, void *status)
{
    cuGetProcAddress_v2_fn v2 = real_v2();
    if (v2) return lookup((void *)v2, 1, symbol, pfn, version, flags, status);
    RS_WRAP_REAL(cuGetProcAddress, return CUDA_UNKNOWN_);
    int rc = lookup((void *)rs_fn, 0, symbol, pfn, version, flags, NULL);
    if (rc == CUDA_SUCCESS_ && pfn && status) {
        int saved_errno = errno;
        *(int *)status = status_v1(rs_fn, symbol, *pfn, flags);
        errno = saved_errno;
    }
    return rc;
}

/* cudart and cuda-python find it with dlsym on libcuda's handle. */
__attribute__((constructor)) static void procaddr_register(void)
{
    static const struct rs_dl_redirect redirects[] = {
        RS_DL_REDIRECT(cuGetProcAddress, NULL, cuGetProcAddress),
        RS_DL_REDIRECT_ABSENT(cuGetProcAddress_v2, NULL, cuGetProcAddress_v2, v2_absent)};
    rs_dl_register(redirects, (int)(sizeof redirects / sizeof redirects[0]));
}
