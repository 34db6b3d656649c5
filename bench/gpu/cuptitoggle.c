/* CUPTI attached and detached inside one process, for bench/gpu/cuptitoggle.py: what CUPTI's presence costs a
 * launch, measured without the several % that separate one process from another on the H200 host.
 *
 *   gcc -O2 -shared -fPIC -I/usr/local/cuda/include -o cuptitoggle.so bench/gpu/cuptitoggle.c -ldl
 *
 * tg_attach(flags): register activity buffers (as railscope and the minimal injection do); flags: 1 = also a
 * CLOCK_MONOTONIC timestamp callback and system thread ids (as railscope does at set-up), 2 = also enable
 * CONCURRENT_KERNEL (a sampling window). tg_detach(): disable, force-flush, cuptiFinalize (CUPTI leaves the
 * process; the next CUPTI call attaches it again). Each returns the first CUPTI error (0 = success). Records
 * delivered are counted (tg_records) and dropped, nothing else: CUPTI's own cost, not railscope's. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cupti.h>

static __typeof__(cuptiActivityRegisterCallbacks) *p_reg;
static __typeof__(cuptiActivityRegisterTimestampCallback) *p_ts;
static __typeof__(cuptiSetThreadIdType) *p_tid;
static __typeof__(cuptiActivityEnable) *p_en;
static __typeof__(cuptiActivityDisable) *p_dis;
static __typeof__(cuptiActivityFlushAll) *p_flush;
static __typeof__(cuptiActivityGetNextRecord) *p_next;
static __typeof__(cuptiFinalize) *p_fin;
static uint64_t nrec;
static int kernels_on;

static void CUPTIAPI req(uint8_t **b, size_t *size, size_t *max)
{
    *b = aligned_alloc(8, 8u << 20);
    *size = *b ? 8u << 20 : 0;
    *max = 0;
}

static void CUPTIAPI done(CUcontext c, uint32_t s, uint8_t *b, size_t size, size_t valid)
{
    (void)c, (void)s, (void)size;
    CUpti_Activity *r = NULL;
    while (valid && p_next(b, valid, &r) == CUPTI_SUCCESS) __atomic_fetch_add(&nrec, 1, __ATOMIC_RELAXED);
    free(b);
}

static uint64_t CUPTIAPI ts(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int tg_load(void)
{
    void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen("libcupti.so.13", RTLD_NOW);
    if (!h) return -1;
    p_reg = (__typeof__(p_reg))dlsym(h, "cuptiActivityRegisterCallbacks");
    p_ts = (__typeof__(p_ts))dlsym(h, "cuptiActivityRegisterTimestampCallback");
    p_tid = (__typeof__(p_tid))dlsym(h, "cuptiSetThreadIdType");
    p_en = (__typeof__(p_en))dlsym(h, "cuptiActivityEnable");
    p_dis = (__typeof__(p_dis))dlsym(h, "cuptiActivityDisable");
    p_flush = (__typeof__(p_flush))dlsym(h, "cuptiActivityFlushAll");
    p_next = (__typeof__(p_next))dlsym(h, "cuptiActivityGetNextRecord");
    p_fin = (__typeof__(p_fin))dlsym(h, "cuptiFinalize");
    return p_reg && p_ts && p_tid && p_en && p_dis && p_flush && p_next && p_fin ? 0 : -2;
}

int tg_attach(int flags)
{
    int e = 0, r;
    if (flags & 1) {
        if ((r = p_tid(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)) && !e) e = r;
        if ((r = p_ts(ts)) && !e) e = r;
    }
    if ((r = p_reg(req, done)) && !e) e = r;
    if (flags & 2) {
        if ((r = p_en(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) && !e) e = r;
        kernels_on = !r;
    }
    return e;
}

int tg_detach(void)
{
    int e = 0, r;
    if (kernels_on && (r = p_dis(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))) e = r;
    kernels_on = 0;
    if ((r = p_flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)) && !e) e = r;
    if ((r = p_fin()) && !e) e = r;
    return e;
}

uint64_t tg_records(void) { return __atomic_load_n(&nrec, __ATOMIC_RELAXED); }
