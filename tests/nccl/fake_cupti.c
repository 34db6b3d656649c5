/* A stand-in libcupti.so.13 for the CI tests (no GPU): implements the entry points railscope's CUPTI
 * injection looks up, and hands the registered buffer callbacks synthetic activity records built with the
 * CUDA 13 header structs (Memcpy6 pageable/pinned, MemcpyPtoP4, Memset4, Kernel10, API, Synchronization2,
 * an untimed record and an unknown kind), a dropped-records count, and a last record at the forced flush.
 * fake_cupti_takeover() plays another CUPTI client registering its own buffer callbacks.
 * fake_cupti_worker_burst() plays CUPTI's worker thread: it hands buffers back while holding the lock that
 * cuptiActivityFlushAll takes too (as the real one does), which is what deadlocked the writer's tick against
 * a completion callback that waited for the writer (session 5).
 * Attachment (session 8): like the real one, any CUPTI call attaches CUPTI (counted), cuptiFinalize detaches it
 * and forgets every registration; a finalize made outside a driver/runtime API exit callback, or on the
 * tracer's writer thread (session 14), is counted as unsafe. One callback subscriber at a time
 * (FAKE_CUPTI_SUBSCRIBED=1: a profiler holds the slot all along);
 * the fake libcuda's functions (fake_cuda.c) and the fake libcudart's cudaMemcpy issue the API exit callbacks
 * of their domain when it (or that callback id) is enabled (FAKE_CUPTI_NO_DRIVER_CB=1: none ever comes).
 * fake_cupti_attach_stats() reports it all.
 * FAKE_CUPTI_LOOKUPS=N (session 10): the first cuptiSubscribe resolves N graph entry points through
 * cuGetProcAddress_v2 first (lookups_in_call).
 * FAKE_CUPTI_RENAME=1 (session 13): kernel records name their kernel from one buffer that every cuptiFinalize
 * rewrites ("kernel_gen<N>"): a name pointer of an earlier attachment may point at other bytes later.
 * FAKE_CUPTI_INFLIGHT_MS=N (session 32): disabling kernel activity leaves a kernel of the window running for N ms
 * more: its record sits incomplete (end 0) in a buffer CUPTI holds; a non-forced flush hands that buffer back only
 * once the kernel has ended (cupti_activity.h: buffers with an incomplete record stay), a forced one at once (the
 * record then untimed), a finalize drops it. Correlation ids 900, 901, ... in order. A comma list gives each
 * in-flight kernel its own time, in order (the last value repeats): "1000,60". FAKE_CUPTI_FORCED_KEEPS=1: a forced
 * flush keeps the buffer of a kernel still running too (only its end or a non-forced flush after it brings it; a
 * finalize drops it): a buffer of one attachment that never comes back (review, session 32). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#define EXPORT __attribute__((visibility("default")))
#define SLOT   512 /* every synthetic record sits in a 512-byte slot; GetNextRecord walks them */

static char kname_gen[64] = "kernel_gen0"; /* FAKE_CUPTI_RENAME */
static int kname_gens;
static CUpti_BuffersCallbackRequestFunc req;
static CUpti_BuffersCallbackCompleteFunc comp;
static CUpti_TimestampCallbackFunc tscb;
static int enabled[128], any_enabled, ts_after_enable, runtime_api[1024];
static size_t pending_dropped;
static int final_sent;
static uint8_t *inflight_buf; /* FAKE_CUPTI_INFLIGHT_MS: the held buffer, its size, when its kernel ends */
static size_t inflight_size;
static uint64_t inflight_due;
static int inflight_n;
/* FAKE_CUPTI_LAZY_INFLIGHT=1: a CUPTI that writes the running kernel's record into a buffer only when a flush
 * delivers it (none is held meanwhile): the record waits here */
static _Alignas(8) uint8_t lazy_rec[SLOT];
static int lazy_pending;

/* CUPTI's own lock: held while a buffer is handed back, taken by cuptiActivityFlushAll (and by a finalize, which
 * forgets the registration and what the buffers held). */
static pthread_mutex_t cupti_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- attachment ---- */
static int f_attached, f_attaches, f_finalizes, f_unsafe;
static __thread int in_exit_cb; /* this thread is inside an API exit callback */
/* The subscription: set by the tracer's writer (arm), read at every API exit on the program's threads, cleared by a
 * finalize inside one of them; sub_lock keeps TSan runs of the tests clean (a real CUPTI locks its own). */
static pthread_mutex_t sub_lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_CallbackFunc sub_cb;
static void *sub_ud;
static int drv_cb_on[512], domain_on[8];
static void att(void)
{
    if (__atomic_exchange_n(&f_attached, 1, __ATOMIC_SEQ_CST)) return;
    __atomic_fetch_add(&f_attaches, 1, __ATOMIC_SEQ_CST);
    static const char m[] = "fake_cupti: attached\n"; /* counted by the tests, also during exit */
    if (write(2, m, sizeof m - 1) < 0) return;
}
#define ATT() att()

EXPORT CUptiResult cuptiFinalize(void)
{
    ATT();
    if (!__atomic_load_n(&in_exit_cb, __ATOMIC_SEQ_CST)) __atomic_fetch_add(&f_unsafe, 1, __ATOMIC_SEQ_CST);
    /* the tracer's own thread: its calls are not the application's (session 14, see cuda_detach.t) */
    char name[16] = "";
    pthread_getname_np(pthread_self(), name, sizeof name);
    if (!strncmp(name, "railscope-wr", 12)) __atomic_fetch_add(&f_unsafe, 1, __ATOMIC_SEQ_CST);
    pthread_mutex_lock(&cupti_lock);
    req = NULL;
    comp = NULL;
    tscb = NULL;
    final_sent = 0; /* the next attachment's first forced flush brings its own 777-byte record */
    inflight_buf = NULL;
    lazy_pending = 0;
    pthread_mutex_unlock(&cupti_lock);
    for (int i = 0; i < 128; i++) __atomic_store_n(&enabled[i], 0, __ATOMIC_RELAXED);
    memset(runtime_api, 0, sizeof runtime_api);
    any_enabled = ts_after_enable = 0;
    if (getenv("FAKE_CUPTI_RENAME")) snprintf(kname_gen, sizeof kname_gen, "kernel_gen%d", ++kname_gens);
    pthread_mutex_lock(&sub_lock);
    sub_cb = NULL;
    memset(drv_cb_on, 0, sizeof drv_cb_on);
    memset(domain_on, 0, sizeof domain_on);
    pthread_mutex_unlock(&sub_lock);
    __atomic_fetch_add(&f_finalizes, 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&f_attached, 0, __ATOMIC_SEQ_CST);
    return CUPTI_SUCCESS;
}
/* Stands for any driver look-up that CUPTI makes inside a call railscope issues under its attach_lock (arm_detach
 * subscribes under it; the real CUPTI resolves driver functions as it sets itself up): N of the fake libcuda's
 * distinct cuGraphCreate copies (flags k << 8) through cuGetProcAddress_v2 found on libcuda's handle, as cudart
 * finds it. N above railscope's trampoline pool (32) takes its pool-full path inside the call (cuda_detach.t,
 * review H_REVIEW9 L3). */
static void lookups_in_call(void)
{
    static int done;
    const char *n = getenv("FAKE_CUPTI_LOOKUPS");
    if (!n || __atomic_exchange_n(&done, 1, __ATOMIC_SEQ_CST)) return;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    typedef int (*pa_fn)(const char *, void **, int, unsigned long long, int *);
    pa_fn pa = h ? (pa_fn)dlsym(h, "cuGetProcAddress_v2") : NULL;
    for (int k = 1; pa && k <= atoi(n); k++) {
        void *p = NULL;
        int st = -1;
        pa("cuGraphCreate", &p, 12000, (unsigned long long)k << 8, &st);
    }
    if (h) dlclose(h);
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *ud)
{
    ATT();
    lookups_in_call();
    pthread_mutex_lock(&sub_lock);
    int taken = sub_cb || getenv("FAKE_CUPTI_SUBSCRIBED");
    if (!taken) {
        sub_cb = cb;
        sub_ud = ud;
        *s = (CUpti_SubscriberHandle)(void *)&sub_cb;
    }
    pthread_mutex_unlock(&sub_lock);
    return taken ? CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED : CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
    ATT();
    (void)s;
    pthread_mutex_lock(&sub_lock);
    sub_cb = NULL;
    memset(drv_cb_on, 0, sizeof drv_cb_on);
    memset(domain_on, 0, sizeof domain_on);
    pthread_mutex_unlock(&sub_lock);
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiEnableDomain(uint32_t en, CUpti_SubscriberHandle s, CUpti_CallbackDomain d)
{
    ATT();
    (void)s;
    pthread_mutex_lock(&sub_lock);
    if ((unsigned)d < 8) domain_on[d] = (int)en;
    pthread_mutex_unlock(&sub_lock);
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiEnableCallback(uint32_t en, CUpti_SubscriberHandle s, CUpti_CallbackDomain d,
                                       CUpti_CallbackId id)
{
    ATT();
    (void)s;
    pthread_mutex_lock(&sub_lock);
    if (d == CUPTI_CB_DOMAIN_DRIVER_API && id < 512) drv_cb_on[id] = (int)en;
    pthread_mutex_unlock(&sub_lock);
    return CUPTI_SUCCESS;
}
/* Called by the fake libcuda / libcudart at the exit of a driver / runtime API function. */
static int no_cb = -1; /* FAKE_CUPTI_NO_DRIVER_CB, or fake_cupti_set_no_cb() */
EXPORT void fake_cupti_set_no_cb(int on) { __atomic_store_n(&no_cb, on, __ATOMIC_SEQ_CST); }
static void api_exit(CUpti_CallbackDomain domain, uint32_t cbid)
{
    pthread_mutex_lock(&sub_lock);
    CUpti_CallbackFunc f = sub_cb;
    void *ud = sub_ud;
    int on = domain_on[domain] || (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid < 512 && drv_cb_on[cbid]);
    pthread_mutex_unlock(&sub_lock);
    int quiet = __atomic_load_n(&no_cb, __ATOMIC_SEQ_CST);
    if (quiet < 0) quiet = getenv("FAKE_CUPTI_NO_DRIVER_CB") != NULL;
    if (!f || quiet || !on) return;
    CUpti_CallbackData d;
    memset(&d, 0, sizeof d);
    d.callbackSite = CUPTI_API_EXIT;
    d.functionName = "a driver function";
    __atomic_store_n(&in_exit_cb, 1, __ATOMIC_SEQ_CST);
    f(ud, domain, cbid, &d);
    __atomic_store_n(&in_exit_cb, 0, __ATOMIC_SEQ_CST);
}
EXPORT void fake_cupti_driver_api_exit(uint32_t cbid) { api_exit(CUPTI_CB_DOMAIN_DRIVER_API, cbid); }
EXPORT void fake_cupti_runtime_api_exit(uint32_t cbid) { api_exit(CUPTI_CB_DOMAIN_RUNTIME_API, cbid); }
EXPORT int fake_cupti_subscribed(void)
{
    pthread_mutex_lock(&sub_lock);
    int on = sub_cb != NULL;
    pthread_mutex_unlock(&sub_lock);
    return on;
}
EXPORT void fake_cupti_attach_stats(int *attached, int *attaches, int *finalizes, int *unsafe)
{
    *attached = __atomic_load_n(&f_attached, __ATOMIC_SEQ_CST);
    *attaches = __atomic_load_n(&f_attaches, __ATOMIC_SEQ_CST);
    *finalizes = __atomic_load_n(&f_finalizes, __ATOMIC_SEQ_CST);
    *unsafe = __atomic_load_n(&f_unsafe, __ATOMIC_SEQ_CST);
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
                                                  CUpti_BuffersCallbackCompleteFunc c)
{
    ATT();
    req = r;
    comp = c;
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
    ATT();
    if (any_enabled) { /* CUPTI requires it before any kind is enabled */
        ts_after_enable = 1;
        return CUPTI_ERROR_INVALID_OPERATION;
    }
    tscb = f;
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
    ATT();
    if ((unsigned)k >= 128) return CUPTI_ERROR_INVALID_KIND;
    __atomic_store_n(&enabled[k], 1, __ATOMIC_RELAXED); /* read by the program's threads (fake_cupti_enabled) */
    any_enabled = 1;
    return CUPTI_SUCCESS;
}
static void inflight_kernel(void);
EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
    ATT();
    if ((unsigned)k >= 128) return CUPTI_ERROR_INVALID_KIND;
    if (k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && __atomic_load_n(&enabled[k], __ATOMIC_RELAXED) &&
        getenv("FAKE_CUPTI_INFLIGHT_MS"))
        inflight_kernel();
    __atomic_store_n(&enabled[k], 0, __ATOMIC_RELAXED);
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
    ATT();
    uint8_t *next = *rec ? (uint8_t *)*rec + SLOT : buf;
    if (next + SLOT > buf + valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *rec = (CUpti_Activity *)next;
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *dropped)
{
    ATT();
    (void)ctx;
    (void)stream;
    *dropped = pending_dropped;
    pending_dropped = 0;
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t en)
{
    ATT();
    if (cbid < 1024) runtime_api[cbid] = en;
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType t)
{
    ATT();
    (void)t;
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiActivitySetAttribute(CUpti_ActivityAttribute a, size_t *s, void *v)
{
    ATT();
    (void)a, (void)s, (void)v;
    return CUPTI_SUCCESS;
}
EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t cbid, const char **name)
{
    ATT();
    if (d != CUPTI_CB_DOMAIN_RUNTIME_API) return CUPTI_ERROR_INVALID_PARAMETER;
    switch (cbid) {
    case 3: *name = "cudaGetDevice_v3020"; return CUPTI_SUCCESS;
    case 31: *name = "cudaMemcpy_v3020"; return CUPTI_SUCCESS;
    case 41: *name = "cudaMemcpyAsync_v3020"; return CUPTI_SUCCESS;
    case 131: *name = "cudaStreamSynchronize_v3020"; return CUPTI_SUCCESS;
    case 211: *name = "cudaLaunchKernel_v7000"; return CUPTI_SUCCESS;
    default: return CUPTI_ERROR_INVALID_PARAMETER;
    }
}

static uint64_t now(void)
{
    if (tscb) return tscb();
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char kname[] = "_Z40ncclDevKernel_AllReduce_Sum_bf16_RING_LL24ncclDevKernelArgsStorageILm4096EE";

static uint8_t *memcpy_rec(uint8_t *p, uint64_t t, uint8_t copy, uint8_t src, uint8_t dst, uint64_t bytes,
                           uint32_t corr)
{
    CUpti_ActivityMemcpy6 *m = (void *)p;
    m->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m->copyKind = copy;
    m->srcKind = src;
    m->dstKind = dst;
    m->flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
    m->bytes = bytes;
    m->start = t;
    m->end = t ? t + 1000 : 0;
    m->deviceId = 0;
    m->contextId = 1;
    m->streamId = 7;
    m->correlationId = corr;
    m->runtimeCorrelationId = corr + 100;
    return p + SLOT;
}

/* One buffer of synthetic records; returns the number of records written. */
static int fill(uint8_t *b, size_t size, size_t *valid)
{
    memset(b, 0, size);
    uint8_t *p = b;
    uint64_t t = now();
    p = memcpy_rec(p, t, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
                   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 38535168, 10);
    p = memcpy_rec(p, t + 2000, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 512, 11);
    p = memcpy_rec(p, t + 4000, CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                   CUPTI_ACTIVITY_MEMORY_KIND_PINNED, 4, 12);
    p = memcpy_rec(p, 0, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE,
                   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 99, 13); /* untimed: must be skipped */
    CUpti_ActivityMemcpyPtoP4 *pp = (void *)p;
    pp->kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
    pp->copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
    pp->srcKind = pp->dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    pp->bytes = 4096;
    pp->start = t + 5000;
    pp->end = t + 6000;
    pp->deviceId = 0;
    pp->streamId = 9;
    pp->srcDeviceId = 0;
    pp->dstDeviceId = 1;
    pp->correlationId = 14;
    p += SLOT;
    CUpti_ActivityMemset4 *ms = (void *)p;
    ms->kind = CUPTI_ACTIVITY_KIND_MEMSET;
    ms->value = 0;
    ms->bytes = 1024;
    ms->start = t + 7000;
    ms->end = t + 7100;
    ms->streamId = 7;
    ms->correlationId = 15;
    ms->memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
    p += SLOT;
    for (int i = 0; i < 2 && __atomic_load_n(&enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL], __ATOMIC_RELAXED); i++) {
        CUpti_ActivityKernel10 *k = (void *)p;
        k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k->start = t + 8000 + (uint64_t)i * 1000;
        k->end = k->start + 500;
        k->deviceId = 0;
        k->streamId = 7;
        k->gridX = 2, k->gridY = 1, k->gridZ = 1;
        k->blockX = 512, k->blockY = 1, k->blockZ = 1;
        k->correlationId = 16 + (uint32_t)i;
        k->name = getenv("FAKE_CUPTI_RENAME") ? kname_gen : kname;
        p += SLOT;
    }
    CUpti_ActivityAPI *a = (void *)p;
    a->kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a->cbid = 41;
    a->start = t - 500;
    a->end = t - 100;
    a->processId = 1;
    a->threadId = 1234;
    a->correlationId = 110;
    a->returnValue = 0;
    p += SLOT;
    CUpti_ActivitySynchronization2 *s = (void *)p;
    s->kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    s->type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    s->start = t + 10000;
    s->end = t + 20000;
    s->correlationId = 18;
    s->streamId = 7;
    p += SLOT;
    ((CUpti_Activity *)p)->kind = CUPTI_ACTIVITY_KIND_OVERHEAD; /* a kind railscope does not keep */
    p += SLOT;
    *valid = (size_t)(p - b);
    return (int)(*valid / SLOT);
}

/* Deliver one buffer of records through the registered callbacks. Returns 0, or 1 when the timestamp
 * callback was registered too late (after an enable) or never, 2 without callbacks. */
EXPORT int fake_cupti_deliver(void)
{
    if (!req || !comp) return 2;
    uint8_t *b = NULL;
    size_t size = 0, maxrec = 0, valid = 0;
    req(&b, &size, &maxrec);
    if (!b || size < 16 * SLOT) return 2;
    fill(b, size, &valid);
    pending_dropped = 5;
    comp(NULL, 0, b, size, valid);
    return (!tscb || ts_after_enable) ? 1 : 0;
}

/* One buffer holding n pinned HtoD copy records (as many as fit), bytes and correlation ids base + i, handed
 * back. Returns how many were written, -1 without callbacks or a buffer. */
static int htod_buffer(int n, uint64_t base)
{
    if (!req || !comp) return -1;
    uint8_t *b = NULL;
    size_t size = 0, maxrec = 0;
    req(&b, &size, &maxrec);
    if (!b) return -1;
    int i = 0;
    uint64_t t = now();
    for (; i < n && (size_t)(i + 1) * SLOT <= size; i++)
        memcpy_rec(b + (size_t)i * SLOT, t + (uint64_t)i * 10, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD,
                   CUPTI_ACTIVITY_MEMORY_KIND_PINNED, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, base + (uint64_t)i,
                   (uint32_t)(base + (uint64_t)i));
    comp(NULL, 0, b, size, (size_t)i * SLOT);
    return i;
}

/* A burst like a device buffer or the forced flush at exit delivers. */
EXPORT int fake_cupti_deliver_many(int n) { return htod_buffer(n, 1000); }

EXPORT int fake_cupti_enabled(int kind)
{
    return kind >= 0 && kind < 128 ? __atomic_load_n(&enabled[kind], __ATOMIC_RELAXED) : 0;
}
EXPORT int fake_cupti_runtime_api(int cbid) { return cbid >= 0 && cbid < 1024 ? runtime_api[cbid] : 0; }

/* Another client's buffer callbacks (the test registers them through the global symbol, as Kineto does). */
EXPORT void CUPTIAPI fake_other_req(uint8_t **b, size_t *s, size_t *m) { *b = NULL, *s = 0, *m = 0; }
EXPORT void CUPTIAPI fake_other_comp(CUcontext c, uint32_t st, uint8_t *b, size_t s, size_t v)
{
    (void)c, (void)st, (void)b, (void)s, (void)v;
}
EXPORT int fake_cupti_owner_is_other(void) { return req == fake_other_req; }

/* FAKE_CUPTI_EXIT_TEARDOWN=1 plays CUDA's exit handlers, which run before the tracer's (registered
 * later: at this library's load) and tear CUPTI down; a flush after that is what hung real ranks. */
static int torn_down;
static void fake_teardown(void) { torn_down = 1; }
__attribute__((constructor)) static void fake_cupti_load(void)
{
    if (getenv("FAKE_CUPTI_EXIT_TEARDOWN")) atexit(fake_teardown);
}

static CUptiResult flush_locked(uint32_t flag);


/* The worker's burst: burst_n records collected, burst_done of them handed back (both under cupti_lock). */
static int burst_n, burst_done;
static uint64_t burst_t0;

/* Hand back the burst's next buffer, cupti_lock held. Returns the records in it (0: none left or no buffer). */
static int burst_buffer_locked(void)
{
    if (burst_done >= burst_n) return 0;
    uint8_t *b = NULL;
    size_t size = 0, maxrec = 0;
    req(&b, &size, &maxrec);
    if (!b) return 0;
    int i = 0;
    for (; burst_done + i < burst_n && (size_t)(i + 1) * SLOT <= size; i++)
        memcpy_rec(b + (size_t)i * SLOT, burst_t0 + (uint64_t)(burst_done + i) * 10, CUPTI_ACTIVITY_MEMCPY_KIND_DTOD,
                   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
                   100000 + (uint64_t)(burst_done + i), 100000 + (uint32_t)(burst_done + i));
    comp(NULL, 0, b, size, (size_t)i * SLOT);
    burst_done += i;
    return i;
}

static void *burst_thread(void *arg)
{
    (void)arg;
    for (int more = 1; more;) {
        pthread_mutex_lock(&cupti_lock);
        more = burst_buffer_locked() > 0;
        pthread_mutex_unlock(&cupti_lock);
    }
    return NULL;
}

/* Start a thread that delivers n DtoD copy records (bytes 100000 + i) in full buffers, each handed back under
 * CUPTI's lock. The records count as collected from the start: a forced flush hands back what the thread has
 * not yet (as the real one delivers every record it holds), so a program that exits during the burst loses
 * none to the fake's pace, only to the tracer. Returns 0 when started. fake_cupti_burst_join() waits for it. */
static pthread_t burst_tid;
EXPORT int fake_cupti_worker_burst(int n)
{
    if (!req || !comp) return -1;
    pthread_mutex_lock(&cupti_lock);
    burst_n = n, burst_done = 0, burst_t0 = now();
    pthread_mutex_unlock(&cupti_lock);
    return pthread_create(&burst_tid, NULL, burst_thread, NULL);
}
EXPORT void fake_cupti_burst_join(void) { pthread_join(burst_tid, NULL); }

/* Records CUPTI holds in a buffer that is not filling (session 17): only a flush hands them back, forced or not.
 * The tests count the non-forced flushes (the writer's tick) and see when the held records came back. */
static int held_n, held_given, nonforced_flushes;
EXPORT void fake_cupti_hold(int n)
{
    pthread_mutex_lock(&cupti_lock);
    held_n = n, held_given = 0;
    pthread_mutex_unlock(&cupti_lock);
}
EXPORT int fake_cupti_held_given(void) { return __atomic_load_n(&held_given, __ATOMIC_SEQ_CST); }
EXPORT int fake_cupti_nonforced_flushes(void) { return __atomic_load_n(&nonforced_flushes, __ATOMIC_SEQ_CST); }

static void held_buffer_locked(void)
{
    int i = htod_buffer(held_n, 555000);
    held_n = 0;
    if (i >= 0) __atomic_store_n(&held_given, i, __ATOMIC_SEQ_CST);
}

/* FAKE_CUPTI_INFLIGHT_MS's n-th value (from 0); past the list's end its last */
static uint64_t inflight_ms(int n)
{
    const char *v = getenv("FAKE_CUPTI_INFLIGHT_MS");
    unsigned long ms = 0;
    for (int i = 0; v && *v; i++) {
        char *e = NULL;
        ms = strtoul(v, &e, 10);
        if (i == n || *e != ',') break;
        v = e + 1;
    }
    return ms;
}

/* FAKE_CUPTI_INFLIGHT_MS: a kernel of the window still running as its kind is disabled */
static void inflight_kernel(void)
{
    pthread_mutex_lock(&cupti_lock);
    int lazy = getenv("FAKE_CUPTI_LAZY_INFLIGHT") != NULL;
    if (req && comp && !inflight_buf && !lazy_pending) {
        uint8_t *b = lazy ? lazy_rec : NULL;
        size_t size = lazy ? SLOT : 0, maxrec = 0;
        if (!lazy) req(&b, &size, &maxrec);
        if (b && size >= SLOT) {
            memset(b, 0, SLOT);
            CUpti_ActivityKernel10 *k = (void *)b;
            k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
            k->start = now();
            k->end = 0;
            k->streamId = 7;
            k->gridX = k->gridY = k->gridZ = k->blockX = k->blockY = k->blockZ = 1;
            k->correlationId = 900 + (uint32_t)inflight_n;
            k->name = kname;
            if (lazy) lazy_pending = 1;
            else inflight_buf = b, inflight_size = size;
            inflight_due = k->start + inflight_ms(inflight_n++) * 1000000ull;
        }
    }
    pthread_mutex_unlock(&cupti_lock);
}

/* The forced flush at exit delivers one last HtoD copy of 777 bytes. */
EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    ATT();
    pthread_mutex_lock(&cupti_lock);
    CUptiResult r = flush_locked(flag);
    pthread_mutex_unlock(&cupti_lock);
    return r;
}

static CUptiResult flush_locked(uint32_t flag)
{
    if (torn_down) {
        static const char m[] = "fake_cupti: cuptiActivityFlushAll after CUPTI's exit teardown\n";
        if (write(2, m, sizeof m - 1) < 0) return CUPTI_ERROR_NOT_INITIALIZED;
        return CUPTI_ERROR_NOT_INITIALIZED;
    }
    if (!(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)) __atomic_fetch_add(&nonforced_flushes, 1, __ATOMIC_SEQ_CST);
    if (held_n && req && comp) held_buffer_locked();
    if (inflight_buf && comp) {
        int ended = now() >= inflight_due;
        if (ended || ((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) && !getenv("FAKE_CUPTI_FORCED_KEEPS"))) {
            if (ended) ((CUpti_ActivityKernel10 *)(void *)inflight_buf)->end = inflight_due;
            uint8_t *b = inflight_buf;
            inflight_buf = NULL;
            comp(NULL, 0, b, inflight_size, SLOT);
        }
    }
    if (lazy_pending && req && comp) {
        int ended = now() >= inflight_due;
        uint8_t *b = NULL;
        size_t size = 0, maxrec = 0;
        if (ended || (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)) req(&b, &size, &maxrec);
        if (b && size >= SLOT) {
            memcpy(b, lazy_rec, SLOT);
            if (ended) ((CUpti_ActivityKernel10 *)(void *)b)->end = inflight_due;
            lazy_pending = 0;
            comp(NULL, 0, b, size, SLOT);
        }
    }
    if ((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) && req && comp)
        while (burst_buffer_locked() > 0) {}
    if ((flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) && !final_sent && req && comp) {
        final_sent = 1;
        uint8_t *b = NULL;
        size_t size = 0, maxrec = 0;
        req(&b, &size, &maxrec);
        if (!b) return CUPTI_SUCCESS;
        memset(b, 0, 2 * SLOT);
        uint64_t t = now();
        memcpy_rec(b, t, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED,
                   CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, 777, 50);
        size_t valid = SLOT;
        /* FAKE_CUPTI_RENAME: a kernel of the window still in CUPTI's buffer, named by this attachment */
        if (getenv("FAKE_CUPTI_RENAME")) {
            CUpti_ActivityKernel10 *k = (void *)(b + SLOT);
            k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
            k->start = t + 100;
            k->end = t + 600;
            k->streamId = 7;
            k->gridX = k->gridY = k->gridZ = k->blockX = k->blockY = k->blockZ = 1;
            k->correlationId = 51;
            k->name = kname_gen;
            valid += SLOT;
        }
        comp(NULL, 0, b, size, valid);
    }
    return CUPTI_SUCCESS;
}
