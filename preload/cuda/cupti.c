/* CUDA capture through CUPTI, entered via CUDA_INJECTION64_PATH: the driver loads librailscope.so during
 * cuInit and calls InitializeInjection, however the runtime is linked (dynamic cudart, static cudart inside
 * NCCL/cuBLAS, Triton). We then:
 *   - find libcupti with dlopen/dlsym only (no link-time dependency, the library must load in bash): the
 *     copy already loaded in the process (PyTorch's), else the one beside the loaded libcudart, else
 *     $CUDA_HOME (default /usr/local/cuda), else the loader's search path;
 *   - register a CLOCK_MONOTONIC timestamp callback before enabling anything, so GPU records are on the
 *     tracer clock (if CUPTI refuses, records are shifted by REALTIME - MONOTONIC measured at set-up);
 *   - enable GPU-side activity (CONCURRENT_KERNEL, MEMCPY, MEMCPY2, MEMSET, + launch API records with
 *     RAILSCOPE_CUDA_API=on) only inside sampling windows (RAILSCOPE_CUDA_KERNELS=sampled, the default), always
 *     (`all`) or never (`off`); outside windows nothing is enabled (kernel activity costs ~1.4 us a launch on
 *     the H200) and CUPTI is detached (left attached after a window it cost +5 % of a transformer step:
 *     bench/gpu/RESULTS.md, session 8; see "detaching between windows" below);
 *   - leave copies to the cudart wrappers (cudart.c: bytes, direction, pageable/pinned, stream, host time of
 *     every cudaMemcpy*) outside windows: CUPTI's MEMCPY activity alone costs several % of a step on a
 *     transformer that makes a few dozen device-to-device copies a step (bench/gpu/RESULTS.md, session 5).
 *     RAILSCOPE_CUDA_COPIES=cupti brings back MEMCPY/MEMSET records at all times (the pre-session-5 default);
 *   - convert delivered buffers on the writer thread (never in CUPTI's completion callback, see below), flush
 *     complete buffers every tracer tick while something is enabled, force-flush at exit, report drops.
 * We keep no CUPTI callback subscription (only while a detach is armed: from the arm to the program's next CUDA
 * call, or to the next window if it makes none): CUPTI allows one subscriber, and leaving it free lets
 * torch.profiler/Kineto or nsys start. When such a client registers its own activity buffers (we see the call:
 * cuptiActivityRegisterCallbacks is interposed) our pending records are flushed to us, we warn once, stop touching
 * CUPTI, and the cudart wrappers record every copy.
 *
 * RAILSCOPE_CUDA_API=on|off: runtime-API records (the host thread and time of each copy/launch call,
 * joined to GPU records by correlation id); RAILSCOPE_CUDA_SYNC=on|off: synchronisation records. Both
 * default to off: measured on the H200 they cost far more than the copy and kernel records.
 *
 * RAILSCOPE_CUDA_KERNEL_WINDOW = "on_ms/period_ms[/first_ms]", default 500/30000/3000: windows of on_ms every
 * period_ms, the first first_ms after CUDA's initialisation (with two fields the first opens at
 * initialisation). GPU activity is also enabled from initialisation to the first tick (CUPTI instruments
 * modules as they load, which is cheap then and slow when done late). CUDA_KERNEL_WINDOW events mark each
 * change; their flags say which copies are in CUDA_COPY_CALL (outside windows) and which in CUDA_MEMCPY. */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "preload/cuda/cuda_int.h"
#include "preload/dl.h"
#include "preload/rs_gpu_common.h"
#include "tracer/rs_tracer.h"

int rs_cupti_state = RS_CUPTI_UNAVAILABLE;
uint64_t rs_cuda_copy_calls;

/* ---- libcupti entry points (types from the installed headers) ---- */
#define RS_CUPTI_REQUIRED(X)          \
    X(cuptiActivityRegisterCallbacks) \
    X(cuptiActivityEnable) X(cuptiActivityDisable) X(cuptiActivityGetNextRecord) X(cuptiActivityFlushAll)
#define RS_CUPTI_OPTIONAL(X)                  \
    X(cuptiActivityRegisterTimestampCallback) \
    X(cuptiActivityGetNumDroppedRecords)      \
    X(cuptiActivityEnableRuntimeApi)          \
    X(cuptiSetThreadIdType)                   \
    X(cuptiGetCallbackName)                   \
    X(cuptiActivitySetAttribute) X(cuptiSubscribe) X(cuptiUnsubscribe) X(cuptiEnableDomain) X(cuptiFinalize)
#define RS_CUPTI_PTR(fn) static __typeof__(fn) *p_##fn;
RS_CUPTI_REQUIRED(RS_CUPTI_PTR)
RS_CUPTI_OPTIONAL(RS_CUPTI_PTR)
#undef RS_CUPTI_PTR

enum { RS_KMODE_OFF = 0, RS_KMODE_SAMPLED = 1, RS_KMODE_ALL = 2 };
static int kmode = RS_KMODE_SAMPLED;
static uint64_t win_on_ns = 500ull * 1000000, win_period_ns = 30000ull * 1000000, win_first_ns = 3000ull * 1000000;
static uint64_t t_init;
static int window_on;   /* GPU activity enabled (CUDA_KERNEL_WINDOW.on) */
static int flush_ticks; /* ticks left that flush CUPTI (while a window is on, and after) */
/* Ticks from the tick that closes a window to the one that arms the detach (RAILSCOPE_CUDA_DETACH): the window's
 * last kernels finish and come in meanwhile (a non-forced flush at the close, the arm's forced flush after). CUPTI
 * left attached with nothing enabled cost +5 % of a transformer step (session 8), so every tick here costs: 2 (~1
 * s at the 500 ms default) until session 20, 1 since (the trace marks each detach: the report measures the steps
 * in between). What it risks: a kernel of the window still running a tick after the close comes incomplete and
 * is counted untimed (a collective held up by a rank late by more); arming at the close itself would lose the
 * kernels of the step in flight every time. */
static int detach_delay_ticks = 1;
/* Since session 32 the arm does not wait for that tick when it need not: from the close on, the writer looks again
 * after 20, 60, 140 and 300 ms (rs_tick_soon) and arms as soon as CUPTI holds no buffer of this attachment (a
 * non-forced flush returns every buffer whose records are all complete, and only those: cupti_activity.h) and that
 * look brought no record the one before had not. A kernel still running keeps its buffer in CUPTI, so it is waited
 * for as before, up to the tick; the tail after a window (attached, nothing enabled: +1 to +12 % on its steps,
 * session 20) shrinks from a tick to the window's last kernels. RAILSCOPE_CUDA_ABLATE=tickarm: at the tick only. */
static int early_arm = 1;
#define RS_CLOSE_POLL_FIRST_NS (20ull * 1000000)
#define RS_CLOSE_POLL_LAST_NS  (160ull * 1000000) /* looks at 20, 60, 140, 300 ms; the default tick comes at 500 */
static int want_api = -1, want_sync = -1;         /* RAILSCOPE_CUDA_API, RAILSCOPE_CUDA_SYNC; -1 = by mode */
int rs_cuda_api_copies = 1;                       /* RAILSCOPE_CUDA_COPIES=api (default) | cupti */
int rs_cuda_copies_by_cupti;                      /* CUPTI records copies right now: the wrappers record none */
/* RAILSCOPE_CUDA_ABLATE; the first two also switched during a run by railscope_bench_cuda (atomic loads) */
static int abl_no_tick_flush, abl_no_convert, abl_no_init_window, abl_no_ts_callback;
static int bench_window_req = -1; /* railscope_bench_cuda's kinds: 0 off, 1 on, -1 nothing asked; the tick does it */
static int detach_mode = 1;       /* RAILSCOPE_CUDA_DETACH=on|off: leave CUPTI between windows (see "detaching") */
static char cupti_path[PATH_MAX + 64];

/* Runtime API callback ids we record, by class; names interned at set-up. */
#define RS_MAX_CBID 1024
static uint32_t api_name_id[RS_MAX_CBID];
static uint8_t api_class[RS_MAX_CBID]; /* 0 no, 1 copy/set/sync (always), 2 launch (with kernels) */

uint32_t rs_cupti_api_name(uint32_t cbid) { return cbid < RS_MAX_CBID ? api_name_id[cbid] : 0; }

/* ---- buffers ----
 * CUPTI asks for a buffer on application threads, rarely (one per 2 MiB of records), and hands full ones back
 * on its own worker thread (or inside cuptiActivityFlushAll, on the flushing thread) while holding its own
 * locks. Converting there and waiting for the writer to drain (bursts of 10^5 records overrun a ring) was a
 * lock-order inversion: the writer's tick waited in cuptiActivityFlushAll for the lock CUPTI's thread held
 * while that thread waited for the writer (5 s per 512 records, the 30-120 s exits with every kernel traced;
 * session 5, cuda-gdb backtraces in bench/gpu/RESULTS.md). So the completion callback only queues the buffer;
 * the writer's tick converts queued buffers (flushing its own ring inline, no waiting), and so do the exit
 * quiesce and the take-over, after their CUPTI call has returned. Each buffer carries a small header in front
 * of what CUPTI sees, which links it into the queue. */
#define RS_CUPTI_BUF    (2u << 20)
#define RS_CUPTI_SPARES 16
/* RAILSCOPE_CUDA_ABLATE=buf8m: the minimal injection's 8 MiB (bench/gpu/mincupti.c), a quarter of the buffers to
 * hand over; is full mode's cost above CUPTI's floor on ResNet the number of buffers? (session 18) */
static size_t cupti_buf_size = RS_CUPTI_BUF;
struct bufhdr {
    struct bufhdr *next;
    size_t valid;
    uint32_t gen; /* the attachment that asked for it (buf_acct's high half) */
    uint32_t pad32;
    uint64_t pad[5]; /* 64 bytes: CUPTI's part stays 64-byte aligned */
};
_Static_assert(sizeof(struct bufhdr) == 64, "CUPTI's part of a buffer must stay 64-byte aligned");
static pthread_mutex_t buf_lock = PTHREAD_MUTEX_INITIALIZER;
static struct bufhdr *spares[RS_CUPTI_SPARES];
static int nspares;
static struct bufhdr *pend_head, *pend_tail; /* under buf_lock */
static pthread_mutex_t conv_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t buf_requests, buf_completions;
/* The attachment (attach() counts them) << 32 | how many of its buffers CUPTI holds: the early arm waits for 0. Each
 * buffer carries its attachment's number, and only one of this attachment counts back in: a buffer that an earlier
 * attachment's finalize kept (or dropped) never comes back, or comes back late, and counts for none. One word, so
 * that no late buffer can slip between the check of its number and the count (reviews, session 32). */
static uint64_t buf_acct;

static inline struct bufhdr *hdr_of(uint8_t *b) { return (struct bufhdr *)(void *)(b - sizeof(struct bufhdr)); }

static void CUPTIAPI buf_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
    struct bufhdr *h = NULL;
    pthread_mutex_lock(&buf_lock);
    if (nspares) h = spares[--nspares];
    pthread_mutex_unlock(&buf_lock);
    if (!h && posix_memalign((void **)&h, 64, sizeof *h + cupti_buf_size)) h = NULL;
    __atomic_fetch_add(&buf_requests, 1, __ATOMIC_RELAXED);
    if (h) h->gen = (uint32_t)(__atomic_fetch_add(&buf_acct, 1, __ATOMIC_RELAXED) >> 32);
    *buffer = h ? (uint8_t *)(h + 1) : NULL;
    *size = h ? cupti_buf_size : 0;
    *max_records = 0;
}

static void buf_release(struct bufhdr *h)
{
    pthread_mutex_lock(&buf_lock);
    if (nspares < RS_CUPTI_SPARES) {
        spares[nspares++] = h;
        h = NULL;
    }
    pthread_mutex_unlock(&buf_lock);
    free(h);
}

static uint64_t dropped_total;

static void CUPTIAPI buf_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)size;
    __atomic_fetch_add(&buf_completions, 1, __ATOMIC_RELAXED);
    if (!buffer) return;
    struct bufhdr *h = hdr_of(buffer);
    uint64_t w = __atomic_load_n(&buf_acct, __ATOMIC_RELAXED);
    while (w >> 32 == h->gen && (uint32_t)w &&
           !__atomic_compare_exchange_n(&buf_acct, &w, w - 1, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
    size_t dropped = 0;
    if (p_cuptiActivityGetNumDroppedRecords &&
        p_cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped) {
        __atomic_fetch_add(&dropped_total, dropped, __ATOMIC_RELAXED);
        if (rs_on(RS_FAM_cuda)) {
            struct rs_ev_CUPTI_DROPPED ev;
            RS_EV_INIT(&ev, CUPTI_DROPPED, rs_now());
            ev.count = dropped;
            ev.device = 0xffffffffu;
            ev.pad = 0;
            rs_emit_as(0, &ev.h);
        }
    }
    if (!valid) {
        buf_release(h);
        return;
    }
    h->valid = valid;
    h->next = NULL;
    pthread_mutex_lock(&buf_lock);
    if (pend_tail) pend_tail->next = h;
    else pend_head = h;
    pend_tail = h;
    pthread_mutex_unlock(&buf_lock);
}

/* Convert the queued buffers into trace events. wait = 0 (the writer's tick): skip if another thread is
 * converting; that thread may be waiting for the writer to drain, so the writer must never wait for it. */
static unsigned names_gen, names_seen; /* attachments made, and the one whose kernel names the cache holds */
static void convert_pending(int wait)
{
    if (wait) pthread_mutex_lock(&conv_lock);
    else if (pthread_mutex_trylock(&conv_lock)) return;
    /* A re-attached CUPTI names kernels anew; a name's address from the attachment before may now hold another
     * name (session 13; tests/nccl/cuda_detach.t). What that attachment delivered was converted before its
     * finalize (arm_detach), so the cache is forgotten before this attachment's first record. */
    unsigned g = __atomic_load_n(&names_gen, __ATOMIC_ACQUIRE);
    if (g != names_seen) {
        rs_cupti_names_forget();
        names_seen = g;
    }
    for (;;) {
        pthread_mutex_lock(&buf_lock);
        struct bufhdr *h = pend_head;
        if (h && !(pend_head = h->next)) pend_tail = NULL;
        pthread_mutex_unlock(&buf_lock);
        if (!h) break;
        uint8_t *b = (uint8_t *)(h + 1);
        CUpti_Activity *rec = NULL;
        if (__atomic_load_n(&abl_no_convert, __ATOMIC_RELAXED)) {
            while (p_cuptiActivityGetNextRecord(b, h->valid, &rec) == CUPTI_SUCCESS)
                __atomic_fetch_add(&rs_cupti_counts.other, 1, __ATOMIC_RELAXED);
        } else if (rs_on(RS_FAM_cuda)) {
            /* A buffer holds up to ~15k records: hand them to the file as we go (on the writer thread this
             * drains in place; elsewhere it asks the writer, which never waits on us or on CUPTI). */
            unsigned n = 0;
            while (p_cuptiActivityGetNextRecord(b, h->valid, &rec) == CUPTI_SUCCESS) {
                rs_cupti_convert(rec);
                if (++n % 512 == 0) rs_core_flush();
            }
        }
        buf_release(h);
    }
    pthread_mutex_unlock(&conv_lock);
}

static uint64_t CUPTIAPI ts_callback(void) { return rs_now(); }

/* Thread ids and the clock of GPU records, set before anything is enabled (at set-up and at every re-attach:
 * cuptiFinalize forgets them). Returns 1 when CUPTI refused the timestamp callback: records are then
 * converted from CLOCK_REALTIME (all records of an earlier attachment were converted before it ended). */
static int register_clock(void)
{
    if (p_cuptiSetThreadIdType) p_cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    if (!abl_no_ts_callback && p_cuptiActivityRegisterTimestampCallback &&
        p_cuptiActivityRegisterTimestampCallback(ts_callback) == CUPTI_SUCCESS) {
        __atomic_store_n(&rs_cupti_ts_offset, 0, __ATOMIC_RELAXED);
        return 0;
    }
    struct timespec rt, mono;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    __atomic_store_n(&rs_cupti_ts_offset,
                     ((int64_t)rt.tv_sec - (int64_t)mono.tv_sec) * 1000000000ll +
                         ((int64_t)rt.tv_nsec - (int64_t)mono.tv_nsec),
                     __ATOMIC_RELAXED);
    rs_debug("CUPTI: timestamp callback refused; GPU times converted from CLOCK_REALTIME");
    return 1;
}

/* ---- finding libcupti ---- */
static void *open_path(const char *path, int flags)
{
    void *h = dlopen(path, flags);
    if (h) snprintf(cupti_path, sizeof cupti_path, "%s", path);
    return h;
}

static void *open_beside(const char *lib, const char *sym, const char *const *names)
{
    void *p = rs_dl_loaded(lib, sym);
    Dl_info di;
    if (!p || !dladdr(p, &di) || !di.dli_fname) return NULL;
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", di.dli_fname);
    char *slash = strrchr(dir, '/');
    if (!slash) return NULL;
    *slash = 0;
    for (; *names; names++) {
        char path[PATH_MAX + 64];
        snprintf(path, sizeof path, "%s/%s", dir, *names);
        void *h = open_path(path, RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
    }
    return NULL;
}

static void *find_cupti(void)
{
    static const char *const names[] = {"libcupti.so.13", "libcupti.so.12", "libcupti.so", NULL};
    /* 1. already loaded (PyTorch links it): the same copy, so one CUPTI per process. */
    void *p = rs_dl_loaded("libcupti.so", "cuptiActivityEnable");
    Dl_info di;
    if (p && dladdr(p, &di) && di.dli_fname) {
        void *h = open_path(di.dli_fname, RTLD_NOW | RTLD_NOLOAD);
        if (h) return h;
    }
    /* 2. beside the loaded runtime (pip wheels put both in nvidia/cu13/lib). */
    void *h = open_beside("libcudart.so", "cudaGetDevice", names);
    if (h) return h;
    /* 3. the toolkit. */
    const char *home = getenv("CUDA_HOME");
    if (!home || !*home) home = "/usr/local/cuda";
    static const char *const subdirs[] = {"lib64", "extras/CUPTI/lib64", "lib", NULL};
    for (const char *const *s = subdirs; *s; s++)
        for (const char *const *n = names; *n; n++) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/%s/%s", home, *s, *n);
            if ((h = open_path(path, RTLD_NOW | RTLD_LOCAL))) return h;
        }
    /* 4. the loader's search path. */
    for (const char *const *n = names; *n; n++)
        if ((h = open_path(*n, RTLD_NOW | RTLD_LOCAL))) return h;
    return NULL;
}

static void *cupti_handle; /* the libcupti we drive */

static int load_cupti(void)
{
    void *h = find_cupti();
    cupti_handle = h;
    if (!h) return -1;
    int ok = 1;
#define RS_CUPTI_LOAD_REQ(fn) \
    if (!(p_##fn = (__typeof__(fn) *)rs_dl_sym(h, #fn))) ok = 0;
#define RS_CUPTI_LOAD_OPT(fn) p_##fn = (__typeof__(fn) *)rs_dl_sym(h, #fn);
    RS_CUPTI_REQUIRED(RS_CUPTI_LOAD_REQ)
    RS_CUPTI_OPTIONAL(RS_CUPTI_LOAD_OPT)
#undef RS_CUPTI_LOAD_REQ
#undef RS_CUPTI_LOAD_OPT
    return ok ? 0 : -1;
}

/* ---- modes and windows ---- */
/* extra: RS_KWIN_DETACHED with ts = when the finalize ran (the writer's tick learns it afterwards) */
static void emit_window_at(uint64_t ts, uint32_t extra)
{
    if (!rs_on(RS_FAM_cuda)) return;
    struct rs_ev_CUDA_KERNEL_WINDOW ev;
    RS_EV_INIT(&ev, CUDA_KERNEL_WINDOW, ts);
    ev.on = (uint32_t)window_on;
    ev.mode = (uint32_t)kmode;
    ev.state = (uint32_t)__atomic_load_n(&rs_cupti_state, __ATOMIC_RELAXED);
    ev.flags = (rs_cuda_api_copies ? RS_KWIN_API_COPIES : 0) | extra;
    rs_emit(&ev.h);
}

static void emit_window(void) { emit_window_at(rs_now(), 0); }

/* Who records copies: CUPTI while it delivers and copy activity is enabled, else the cudart wrappers. */
static void set_copy_owner(void)
{
    int by_cupti =
        __atomic_load_n(&rs_cupti_state, __ATOMIC_RELAXED) == RS_CUPTI_DELIVERING && (!rs_cuda_api_copies || window_on);
    __atomic_store_n(&rs_cuda_copies_by_cupti, by_cupti, __ATOMIC_RELEASE);
}

static void set_launch_api(int on)
{
    if (!p_cuptiActivityEnableRuntimeApi) return;
    for (uint32_t i = 0; i < RS_MAX_CBID; i++)
        if (api_class[i] == 2) p_cuptiActivityEnableRuntimeApi(i, (uint8_t)on);
}

static const CUpti_ActivityKind copy_kinds[] = {CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
                                                CUPTI_ACTIVITY_KIND_MEMSET};

/* Open or close a window: kernel activity (+ launch API records), and with API-level copies the copy
 * kinds too. Copies move between the wrappers and CUPTI so that a copy at the boundary may be recorded
 * twice but never lost: CUPTI's kinds are enabled before the wrappers stop, and the wrappers start before
 * the kinds are disabled. */
static void set_window(int on)
{
    if (on == window_on) return;
    CUptiResult r = on ? p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
                       : p_cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (r != CUPTI_SUCCESS) {
        rs_warn_once("CUPTI: could not %s kernel activity (error %d)", on ? "enable" : "disable", (int)r);
        return;
    }
    if (on) {
        if (rs_cuda_api_copies)
            for (size_t i = 0; i < sizeof copy_kinds / sizeof copy_kinds[0]; i++) p_cuptiActivityEnable(copy_kinds[i]);
        __atomic_store_n(&window_on, 1, __ATOMIC_RELAXED); /* read by railscope_bench_cuda_window's thread */
        set_copy_owner();
    } else {
        __atomic_store_n(&window_on, 0, __ATOMIC_RELAXED);
        set_copy_owner();
        if (rs_cuda_api_copies)
            for (size_t i = 0; i < sizeof copy_kinds / sizeof copy_kinds[0]; i++) p_cuptiActivityDisable(copy_kinds[i]);
    }
    set_launch_api(on);
    emit_window();
}

static int in_window(uint64_t now)
{
    uint64_t t = now - t_init;
    return t >= win_first_ns && (t - win_first_ns) % win_period_ns < win_on_ns;
}

static int env_off(const char *v) { return !strcmp(v, "off") || !strcmp(v, "0"); }

/* on/1 or off/0; any other value gets one warning and the default, as every variable does (a typo turned the
 * API records on, at ~30 % of a step, without a word). */
static int env_onoff(const char *name, const char *v, int dflt)
{
    if (!strcmp(v, "on") || !strcmp(v, "1")) return 1;
    if (env_off(v)) return 0;
    rs_warn("%s='%s' unknown (on|off); using %s", name, v, dflt ? "on" : "off");
    return dflt;
}

static void parse_modes(void)
{
    const char *v = getenv("RAILSCOPE_CUDA_KERNELS");
    if (!v || !*v || !strcmp(v, "sampled")) kmode = RS_KMODE_SAMPLED;
    else if (!strcmp(v, "all") || !strcmp(v, "full")) kmode = RS_KMODE_ALL;
    else if (env_off(v)) kmode = RS_KMODE_OFF;
    else {
        rs_warn("RAILSCOPE_CUDA_KERNELS='%s' unknown (sampled|all|off); using sampled", v);
        kmode = RS_KMODE_SAMPLED;
    }
    if ((v = getenv("RAILSCOPE_CUDA_API")) && *v) want_api = env_onoff("RAILSCOPE_CUDA_API", v, 0);
    if ((v = getenv("RAILSCOPE_CUDA_SYNC")) && *v) want_sync = env_onoff("RAILSCOPE_CUDA_SYNC", v, 0);
    /* Runtime-API and synchronisation records cost about 30 % of a ResNet-50 DDP step on the H200 (CUPTI
     * then intercepts every runtime call PyTorch makes; bench/gpu/RESULTS.md): off unless asked for. */
    if (want_api < 0) want_api = 0;
    if (want_sync < 0) want_sync = 0;
    if ((v = getenv("RAILSCOPE_CUDA_COPIES")) && *v) {
        if (!strcmp(v, "api")) rs_cuda_api_copies = 1;
        else if (!strcmp(v, "cupti")) rs_cuda_api_copies = 0;
        else rs_warn("RAILSCOPE_CUDA_COPIES='%s' unknown (api|cupti); using api", v);
    }
    if ((v = getenv("RAILSCOPE_CUDA_DETACH")) && *v) {
        if (env_off(v)) detach_mode = 0;
        else if (!strcmp(v, "on") || !strcmp(v, "1")) detach_mode = 1;
        else rs_warn("RAILSCOPE_CUDA_DETACH='%s' unknown (on|off); using on", v);
    }
    if ((v = getenv("RAILSCOPE_CUDA_ABLATE")) && *v) {
        abl_no_tick_flush = strstr(v, "notickflush") != NULL;
        abl_no_convert = strstr(v, "noconvert") != NULL;
        abl_no_init_window = strstr(v, "noinitwindow") != NULL; /* kernels enabled in the timed windows only */
        abl_no_ts_callback = strstr(v, "notscallback") != NULL; /* GPU times converted from CLOCK_REALTIME */
        if (strstr(v, "buf8m")) cupti_buf_size = 8u << 20;
        if (strstr(v, "detach2")) detach_delay_ticks = 2;                /* the arm as before session 20 */
        if (strstr(v, "detach2") || strstr(v, "tickarm")) early_arm = 0; /* at the tick, as sessions 20-31 */
    }
    if ((v = getenv("RAILSCOPE_CUDA_KERNEL_WINDOW")) && *v) {
        unsigned long on = 0, period = 0, first = 0;
        int n = sscanf(v, "%lu/%lu/%lu", &on, &period, &first);
        if (n >= 2 && on > 0 && period >= on) {
            win_on_ns = on * 1000000ull;
            win_period_ns = period * 1000000ull;
            win_first_ns = n == 3 ? first * 1000000ull : 0;
        } else {
            rs_warn("RAILSCOPE_CUDA_KERNEL_WINDOW='%s' not on_ms/period_ms[/first_ms]; using 500/30000/3000", v);
        }
    }
}

/* Runtime API records: copies, memsets and synchronisations always; launches only with kernels. */
static void select_api(void)
{
    if (!want_api || !p_cuptiActivityEnableRuntimeApi || !p_cuptiGetCallbackName) return;
    static const char *const always[] = {
        "cudaMemcpy",          "cudaMemset", "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
        "cudaStreamWaitEvent", NULL};
    static const char *const launch[] = {"cudaLaunch", "__cudaLaunch", "cudaGraphLaunch", NULL};
    for (uint32_t cbid = 1; cbid < RS_MAX_CBID && cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; cbid++) {
        const char *name = NULL;
        if (p_cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) != CUPTI_SUCCESS || !name) continue;
        for (const char *const *a = always; *a; a++)
            if (!strncmp(name, *a, strlen(*a))) api_class[cbid] = 1;
        for (const char *const *a = launch; *a; a++)
            if (!strncmp(name, *a, strlen(*a))) api_class[cbid] = 2;
        if (api_class[cbid]) api_name_id[cbid] = rs_intern(name);
        if (api_class[cbid] == 1) p_cuptiActivityEnableRuntimeApi(cbid, 1);
    }
}

/* Set when another client registered CUPTI buffer callbacks (seen by the interposer below). */
static int foreign_client;
/* Set when another client subscribed to CUPTI callbacks (cuptiSubscribe, interposed below): from then on
 * railscope never detaches CUPTI (cuptiFinalize would end the other client's subscription). */
static int foreign_subscriber;

/* ---- detaching between windows ----
 * Outside sampling windows the default capture needs nothing from CUPTI (the cudart wrappers record copies), yet
 * CUPTI attached with nothing enabled is not free: Kineto detaches after every torch.profiler session for the
 * throughput lost otherwise (pytorch/kineto#1264, #1539), and a kernel window leaves module instrumentation
 * behind. So when a window has closed and its records are in, the writer arms a detach (at a look between ticks that
 * finds CUPTI holding none of the window's buffers, see early_arm, else at the tick after the close: flush_ticks) and
 * the next window re-attaches CUPTI (RAILSCOPE_CUDA_DETACH=off keeps it attached):
 *   - arm: force-flush and convert what CUPTI holds, subscribe to the driver and runtime API callbacks; the
 *     first API exit on an application thread calls cuptiFinalize, the place cupti_activity.h recommends (CUPTI
 *     then synchronises with the other threads' CUDA calls itself; Kineto tears down the same way). Never on the
 *     writer's thread: until session 13 the writer called cuCtxGetCurrent / cuDeviceGetCount /
 *     cuDriverGetVersion once armed, so that an idle program detached too, and nearly every finalize came from
 *     them; on the H200 (session 14, 8 ResNet processes on 3 CPUs, windows 30x as often as the default) one in
 *     ~600 such finalizes killed the process: SIGSEGV inside libcupti under another thread's cuMemcpyDtoDAsync,
 *     in the same millisecond; 1647 finalizes on application threads under the same load did not. An
 *     observation, not an explanation: the writer has no context and no CUPTI thread state of its own, and
 *     those calls are trivial (with one callback id enabled they issue no callback at all), but application
 *     threads finalize inside trivial calls too (cudaGetLastError); the debug line names the call. An idle
 *     program stays armed until its next CUDA call or the next window (which cancels the arm), holding CUPTI's
 *     one subscriber slot meanwhile. Finalizing takes a few ms inside that CUDA call of the program (up to
 *     ~110 ms with 8 processes on 3 CPUs), once per window; until then the callback costs a branch per call.
 *   - a window due while armed cancels the detach (compare-and-swap against the callback: whichever wins);
 *     while the callback finalizes, nobody else calls CUPTI.
 *   - attach: thread-id type, timestamp callback, buffer callbacks, then the window's kinds (~7-10 ms on the
 *     H200, bench/gpu/RESULTS.md session 7; a detach ~2-5 ms: ~0.05 % at one window per 30 s).
 * Only while attached (DS_ATTACHED) does anyone call CUPTI (any call attaches it again). Never detached: with
 * kinds enabled outside windows (RAILSCOPE_CUDA_COPIES=cupti, RAILSCOPE_CUDA_API/SYNC=on, kernels `all`), once
 * another client subscribed or registered buffers, when CUPTI refuses the subscription, where a CUDA graph could be
 * made unseen, and from the first graph on (graphs.c, procaddr.c; debug log says why).
 * attach_lock keeps the other client's registration or subscription out of an arm, cancel or attach. */
enum { DS_ATTACHED, DS_ARMED, DS_FINALIZING, DS_DETACHED };
static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER;
static int dstate = DS_ATTACHED;
static int detach_off; /* gave up detaching for this run (reason in the debug log) */
static CUpti_SubscriberHandle dsub;
/* Armed detaches cancelled (disarm's `why`): by a window due, by a graph or another client (they stop detaching for
 * good), at exit. */
enum { CANCEL_WINDOW, CANCEL_FOR_GOOD, CANCEL_EXIT };
static uint64_t n_cancel[3];
static uint64_t n_detach, n_attach, ns_detach, ns_attach, ns_detach_max, ns_attach_max, ns_finalize_max;
static uint64_t t_armed, t_finalized;
/* The window's close (the writer's tick that closed it; 0 once armed), and the arms from it: early (a look between
 * ticks found everything in) or at a tick, with the time from the close. */
static uint64_t t_closed, n_arm_early, n_arm_tick, ns_close_arm, ns_close_arm_max;

static int cupti_attached(void) { return __atomic_load_n(&dstate, __ATOMIC_ACQUIRE) == DS_ATTACHED; }
static int graphs_seen; /* rs_cupti_graph_seen: never finalize again */

static void give_up_detach(const char *why)
{
    __atomic_store_n(&detach_off, 1, __ATOMIC_RELEASE);
    rs_debug("CUPTI stays attached between windows: %s", why);
}

/* Detaching is safe only where a CUDA graph would be seen before it is made (graphs.c); asked once, at the first
 * detach (the process's libcudart is loaded by then), and said in the debug log. */
static int graphs_watched(void)
{
    static int w = -1;
    if (w < 0) {
        w = rs_cuda_graphs_watched();
        if (!w)
            give_up_detach("CUDA graphs would not be seen here (no shared libcudart, or the library is not "
                           "preloaded): a finalize with a graph alive can break its replays");
    }
    return w;
}

static int can_detach(void)
{
    return detach_mode && !detach_off && !__atomic_load_n(&graphs_seen, __ATOMIC_ACQUIRE) && graphs_watched() &&
           kmode != RS_KMODE_ALL && rs_cuda_api_copies && !want_api && !want_sync &&
           !__atomic_load_n(&foreign_client, __ATOMIC_RELAXED) &&
           !__atomic_load_n(&foreign_subscriber, __ATOMIC_RELAXED) && p_cuptiSubscribe && p_cuptiUnsubscribe &&
           p_cuptiEnableDomain && p_cuptiFinalize;
}

static void time_switch(uint64_t d, uint64_t *n, uint64_t *ns, uint64_t *max)
{
    (*n)++;
    *ns += d;
    if (d > *max) *max = d;
}

/* The thread that runs the tick (and arms). A safeguard: while armed it makes no CUDA or CUPTI call today, but a
 * callback on it must never finalize (see above). */
static __thread int on_writer;
static __thread int in_finalize; /* this thread's callback claimed the finalize (rs_cupti_graph_seen_nolock) */

static void CUPTIAPI detach_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                     const void *data)
{
    (void)userdata;
    (void)cbid;
    const CUpti_CallbackData *cb = data;
    if ((domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API) || !cb ||
        cb->callbackSite != CUPTI_API_EXIT || on_writer)
        return;
    /* Once a graph is seen the detach never happens (the writer's tick cancels it): every later API exit of every
     * thread returns here, without a read-modify-write, and without making the state FINALIZING for a moment (a
     * cancel that meets it has to wait it out: settle). */
    if (__atomic_load_n(&graphs_seen, __ATOMIC_RELAXED)) return;
    int armed = DS_ARMED;
    if (!__atomic_compare_exchange_n(&dstate, &armed, DS_FINALIZING, 0, __ATOMIC_SEQ_CST, __ATOMIC_ACQUIRE)) return;
    /* A graph entry point handed out unseen since the arm (rs_cupti_graph_seen_nolock, which could not disarm):
     * back to armed, the writer's tick cancels it. Sequentially consistent with that function's store and load:
     * either this sees the flag, or it sees this finalize under way and waits for it. */
    if (__atomic_load_n(&graphs_seen, __ATOMIC_SEQ_CST)) {
        __atomic_store_n(&dstate, DS_ARMED, __ATOMIC_RELEASE);
        return;
    }
    in_finalize = 1;
    int saved_errno = errno; /* the application's CUDA call returns right after this */
    uint64_t t0 = rs_now();
    CUptiResult r = p_cuptiFinalize(); /* also ends our subscription */
    t_finalized = rs_now();
    if (t_finalized - t0 > ns_finalize_max) ns_finalize_max = t_finalized - t0;
    /* Refused: CUPTI is still attached and still calls us; DS_ATTACHED makes the callback return at once and the
     * writer's next tick unsubscribes (detach_off says it must). */
    if (r != CUPTI_SUCCESS) __atomic_store_n(&detach_off, 2, __ATOMIC_RELEASE);
    uint64_t armed_at = t_armed, fin_at = t_finalized; /* the writer's tick reads, clears them once published */
    __atomic_store_n(&dstate, r == CUPTI_SUCCESS ? DS_DETACHED : DS_ATTACHED, __ATOMIC_RELEASE);
    in_finalize = 0;
    /* one line per transition (debug log): a process that dies mid-run has no exit summary, its stderr says which
     * transition came last and on which thread (session 13's crash) */
    rs_debug("CUPTI: %s at %.3f s on thread %ld, %.2f ms after the arm, in %.2f ms, at the exit of %s",
             r == CUPTI_SUCCESS ? "finalized" : "finalize refused", (double)(fin_at - t_init) * 1e-9,
             (long)syscall(SYS_gettid), (double)(fin_at - armed_at) * 1e-6, (double)(fin_at - t0) * 1e-6,
             cb->functionName ? cb->functionName : "?");
    errno = saved_errno;
}

/* Cancel an armed detach (caller holds attach_lock; `why`: CANCEL_*). Returns 1 when CUPTI is attached and ours to
 * call again, 0 while a finalize is under way or done (then nobody may call CUPTI until it is re-attached). */
static int disarm(int why)
{
    int armed = DS_ARMED;
    if (__atomic_compare_exchange_n(&dstate, &armed, DS_ATTACHED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        p_cuptiEnableDomain(0, dsub, CUPTI_CB_DOMAIN_DRIVER_API);
        p_cuptiEnableDomain(0, dsub, CUPTI_CB_DOMAIN_RUNTIME_API);
        p_cuptiUnsubscribe(dsub);
        n_cancel[why]++;
        return 1;
    }
    return cupti_attached();
}

/* The callback's finalize was refused: CUPTI is attached and our subscription still live; drop it. */
static void drop_refused(void)
{
    pthread_mutex_lock(&attach_lock);
    if (__atomic_load_n(&detach_off, __ATOMIC_ACQUIRE) == 2 && cupti_attached()) {
        p_cuptiEnableDomain(0, dsub, CUPTI_CB_DOMAIN_DRIVER_API);
        p_cuptiEnableDomain(0, dsub, CUPTI_CB_DOMAIN_RUNTIME_API);
        p_cuptiUnsubscribe(dsub);
        give_up_detach("cuptiFinalize refused");
    }
    pthread_mutex_unlock(&attach_lock);
}

/* Wait (bounded) for a finalize under way on another thread; caller holds attach_lock (or must not take it). */
static void wait_finalizing(void)
{
    for (int i = 0; i < 2000 && __atomic_load_n(&dstate, __ATOMIC_ACQUIRE) == DS_FINALIZING; i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

/* Cancel an armed detach, or wait out a finalize under way (caller holds attach_lock). A callback that claimed the
 * finalize and then saw a graph backs off to ARMED (review H_REVIEW10 L2): that is cancelled too, so that the
 * caller finds CUPTI attached (exit flush, another client's subscription) or detached, never still armed. Returns
 * disarm's answer: 1 when CUPTI is attached and ours to call. The finalizing thread does not wait for itself. */
static int settle(int why)
{
    int att = disarm(why);
    for (int i = 0; i < 4 && !att && !in_finalize && __atomic_load_n(&dstate, __ATOMIC_ACQUIRE) == DS_FINALIZING; i++) {
        wait_finalizing();
        att = disarm(why);
    }
    return att;
}

/* procaddr.c asks before it hands out a trampoline: 0 where this process will never detach, so that pointer
 * rewriting (not yet run on a GPU) reaches only the processes it protects. From the environment, not parse_modes:
 * cudart (NCCL's static one too) fetches its driver table before InitializeInjection; only settings that rule out
 * can_detach for the whole run count (an unknown value falls back to the default, which may detach). Not the
 * run's latches (a graph seen, detaching given up): a pointer handed out keeps its trampoline either way, and
 * one rule for every look-up keeps a symbol's pointers alike. */
int rs_cupti_may_rewrite(void)
{
    static int by_env = -1;
    if (__atomic_load_n(&by_env, __ATOMIC_RELAXED) < 0) {
        const char *k = getenv("RAILSCOPE_CUDA_KERNELS"), *d = getenv("RAILSCOPE_CUDA_DETACH");
        const char *a = getenv("RAILSCOPE_CUDA_API"), *y = getenv("RAILSCOPE_CUDA_SYNC");
        const char *c = getenv("RAILSCOPE_CUDA_COPIES");
        /* kernels off: never detached either (CUPTI is not attached at all, or attached with something enabled) */
        int never = (d && env_off(d)) || (k && (!strcmp(k, "all") || !strcmp(k, "full") || env_off(k))) ||
                    (a && *a && !env_off(a)) || (y && *y && !env_off(y)) || (c && !strcmp(c, "cupti"));
        __atomic_store_n(&by_env, !never, __ATOMIC_RELAXED);
    }
    return __atomic_load_n(&by_env, __ATOMIC_RELAXED);
}

/* A finalize under way on another thread is waited for (bounded): the graph call that asks is made after it, while
 * detached, which holds nothing of CUPTI. Every graph call waits so, not only the first (review H_REVIEW10 L1);
 * not the finalizing thread itself (CUPTI's own look-ups inside cuptiFinalize). Sequentially consistent loads:
 * a flag read here was set after the claim of any finalize that did not back off, so the state read next shows
 * that finalize. */
static void wait_foreign_finalize(void)
{
    if (!in_finalize && __atomic_load_n(&dstate, __ATOMIC_SEQ_CST) == DS_FINALIZING) wait_finalizing();
}

void rs_cupti_graph_seen(const char *fn)
{
    if (!__atomic_load_n(&graphs_seen, __ATOMIC_SEQ_CST)) {
        pthread_mutex_lock(&attach_lock);
        /* an exchange: rs_cupti_graph_seen_nolock sets the flag without the lock */
        if (!__atomic_exchange_n(&graphs_seen, 1, __ATOMIC_SEQ_CST)) {
            settle(CANCEL_FOR_GOOD);
            if (detach_mode) rs_debug("CUPTI stays attached from now on: the program uses CUDA graphs (%s)", fn);
        }
        pthread_mutex_unlock(&attach_lock);
    }
    wait_foreign_finalize();
}

/* The same from procaddr.c's full trampoline pool, inside a cuGetProcAddress look-up: CUPTI may make that look-up
 * itself in a call we issue under attach_lock (review H_REVIEW9 L3), so no lock here. The flag alone keeps CUPTI
 * attached: can_detach never arms again, the detach callback backs off an armed detach (the writer's tick then
 * cancels it), and a finalize already under way is waited for as above. */
void rs_cupti_graph_seen_nolock(const char *fn)
{
    if (!__atomic_load_n(&graphs_seen, __ATOMIC_SEQ_CST) && !__atomic_exchange_n(&graphs_seen, 1, __ATOMIC_SEQ_CST) &&
        detach_mode)
        rs_debug("CUPTI stays attached from now on: the program uses CUDA graphs (%s)", fn);
    wait_foreign_finalize();
}

/* Writer's tick, window closed, its records flushed: arm the detach. early: from a look between ticks. */
static void arm_detach(int early)
{
    pthread_mutex_lock(&attach_lock);
    if (!can_detach() || !cupti_attached()) goto out; /* another client arrived meanwhile */
    uint64_t untimed0 = __atomic_load_n(&rs_cupti_counts.untimed, __ATOMIC_RELAXED);
    p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    convert_pending(0);
    /* The early arm trusts CUPTI to hold a running kernel's record in a buffer it keeps (so that a look finds one
     * out): true of the H100's CUPTI 13 (tests/gpu/inflight_check.py). A CUPTI that writes such a record only when
     * a flush delivers it shows here, as records without an end: from then on the arm waits for the tick. */
    if (early && early_arm && __atomic_load_n(&rs_cupti_counts.untimed, __ATOMIC_RELAXED) != untimed0) {
        early_arm = 0;
        rs_debug("CUPTI: records of a window came without their end at an early arm: arming at the tick after "
                 "each close from now on");
    }
    pthread_mutex_lock(&buf_lock);
    int left = pend_head != NULL;
    pthread_mutex_unlock(&buf_lock);
    if (left) goto out; /* another thread converts right now: try at the next tick (records need CUPTI) */
    CUptiResult r = p_cuptiSubscribe(&dsub, detach_callback, NULL);
    if (r != CUPTI_SUCCESS) {
        give_up_detach(r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? "another CUPTI subscriber (a profiler)"
                                                                           : "cuptiSubscribe failed");
        goto out;
    }
    /* Callbacks on before the state says armed: one that comes in between sees DS_ATTACHED and returns, and no
     * application thread can finalize while this thread still calls CUPTI (review, session 8). */
    if (p_cuptiEnableDomain(1, dsub, CUPTI_CB_DOMAIN_DRIVER_API) != CUPTI_SUCCESS ||
        p_cuptiEnableDomain(1, dsub, CUPTI_CB_DOMAIN_RUNTIME_API) != CUPTI_SUCCESS) {
        p_cuptiUnsubscribe(dsub);
        give_up_detach("cuptiEnableDomain failed");
        goto out;
    }
    t_armed = rs_now();
    if (t_closed) {
        time_switch(t_armed - t_closed, early ? &n_arm_early : &n_arm_tick, &ns_close_arm, &ns_close_arm_max);
        rs_debug("CUPTI: detach armed at %.3f s, %.1f ms after the window's close (%s)",
                 (double)(t_armed - t_init) * 1e-9, (double)(t_armed - t_closed) * 1e-6,
                 early ? "its records in" : "at the tick");
    } else rs_debug("CUPTI: detach armed at %.3f s", (double)(t_armed - t_init) * 1e-9);
    t_closed = 0;
    __atomic_store_n(&dstate, DS_ARMED, __ATOMIC_RELEASE);
out:
    pthread_mutex_unlock(&attach_lock);
}

/* Writer's tick, a window is due and CUPTI was detached: set it up as InitializeInjection did. Returns 0 when
 * attached; otherwise windows end for this run (copies stay with the wrappers). */
static int attach(void)
{
    uint64_t t0 = rs_now();
    int rc = -1;
    pthread_mutex_lock(&attach_lock);
    if (__atomic_load_n(&foreign_client, __ATOMIC_RELAXED)) goto out; /* it owns CUPTI now: take_over ran */
    register_clock();
    /* a new attachment for the buffers before CUPTI can ask for one (the window's kinds, after this) */
    __atomic_store_n(&buf_acct, ((__atomic_load_n(&buf_acct, __ATOMIC_RELAXED) >> 32) + 1) << 32, __ATOMIC_RELAXED);
    CUptiResult r = p_cuptiActivityRegisterCallbacks(buf_request, buf_complete);
    if (r != CUPTI_SUCCESS) {
        rs_warn_once("CUPTI: re-attaching for a kernel window failed (error %d); no more windows in this run", (int)r);
        kmode = RS_KMODE_OFF;
        goto out;
    }
    __atomic_fetch_add(&names_gen, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&dstate, DS_ATTACHED, __ATOMIC_RELEASE);
    time_switch(rs_now() - t0, &n_attach, &ns_attach, &ns_attach_max);
    rs_debug("CUPTI: re-attached at %.3f s in %.2f ms", (double)(t0 - t_init) * 1e-9, (double)(rs_now() - t0) * 1e-6);
    rc = 0;
out:
    pthread_mutex_unlock(&attach_lock);
    return rc;
}

/* The callback finalized since the last look (st read with acquire after its release store): count it, and mark
 * it in the trace too: the report measures the steps CUPTI stayed attached after the window (analyzer,
 * analyze_sampling.c), the part of a window's cost that comes after it. */
static void note_finalized(int st)
{
    if (st != DS_DETACHED || !t_armed) return;
    time_switch(t_finalized - t_armed, &n_detach, &ns_detach, &ns_detach_max);
    emit_window_at(t_finalized, RS_KWIN_DETACHED);
    t_armed = 0;
}

/* The writer's tick for the detach state. Returns 1 when CUPTI is attached and the tick may call it. */
static int detach_tick(int want_window)
{
    int st = __atomic_load_n(&dstate, __ATOMIC_ACQUIRE);
    if (st == DS_ATTACHED && __atomic_load_n(&detach_off, __ATOMIC_ACQUIRE) == 2) drop_refused();
    note_finalized(st);
    int seen = __atomic_load_n(&graphs_seen, __ATOMIC_ACQUIRE); /* set without the lock: this cancels for it */
    if (st == DS_ARMED && (want_window || seen)) {
        pthread_mutex_lock(&attach_lock);
        disarm(seen ? CANCEL_FOR_GOOD : CANCEL_WINDOW);
        pthread_mutex_unlock(&attach_lock);
        st = __atomic_load_n(&dstate, __ATOMIC_ACQUIRE);
        note_finalized(st); /* finalized between the first look and the cancel: re-attached below */
    }
    if (st == DS_DETACHED && want_window && attach() == 0) st = DS_ATTACHED;
    return st == DS_ATTACHED;
}

/* ---- tick: windows and periodic flush ---- */
static uint64_t records_seen(void)
{
    return __atomic_load_n(&rs_cupti_counts.memcpy, __ATOMIC_RELAXED) +
           __atomic_load_n(&rs_cupti_counts.memset, __ATOMIC_RELAXED) +
           __atomic_load_n(&rs_cupti_counts.kernel, __ATOMIC_RELAXED) +
           __atomic_load_n(&rs_cupti_counts.api, __ATOMIC_RELAXED) +
           __atomic_load_n(&rs_cupti_counts.sync, __ATOMIC_RELAXED) +
           __atomic_load_n(&rs_cupti_counts.untimed, __ATOMIC_RELAXED);
}

/* GPU-side records (copies, kernels) sit in CUPTI's device buffers until one fills or a forced flush, so
 * they arrive in bursts (seconds apart) and in full at exit; the default flush here delivers what is
 * complete. A gap in delivery therefore says nothing about another client: that is detected where it
 * happens, in cuptiActivityRegisterCallbacks below. */
/* Process exit: CUDA's own exit handlers tear CUPTI down while our writer thread may be calling it (the
 * tick's flush and window switching). So CUPTI is quiesced from an exit handler that runs before CUDA's
 * (atexit is last-in first-out: it is registered at CUDA's initialisation and again at the first tick,
 * after the CUDA runtime registered its own): it waits for a tick in progress, flushes once (CUDA still
 * intact), converts what that delivered, and from then on nothing calls CUPTI. */
static int quiesced;
static int ticking;
static int exit_hook_ticked;

static void cupti_exit_quiesce(void)
{
    if (__atomic_exchange_n(&quiesced, 1, __ATOMIC_SEQ_CST)) return;
    for (int i = 0; i < 2000 && __atomic_load_n(&ticking, __ATOMIC_SEQ_CST); i++) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL); /* a tick runs against a live CUDA, and waits for nobody: it ends */
    }
    pthread_mutex_lock(&attach_lock);
    settle(CANCEL_EXIT); /* exit while a detach is armed or under way */
    pthread_mutex_unlock(&attach_lock);
    note_finalized(__atomic_load_n(&dstate, __ATOMIC_ACQUIRE)); /* finalized after the last tick */
    if (__atomic_load_n(&rs_cupti_state, __ATOMIC_RELAXED) == RS_CUPTI_DELIVERING && cupti_attached()) {
        uint64_t t0 = rs_now(), n0 = records_seen();
        p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        uint64_t t1 = rs_now();
        convert_pending(1);
        rs_debug("CUPTI exit flush: %.3f s, conversion %.3f s, %llu records", (double)(t1 - t0) * 1e-9,
                 (double)(rs_now() - t1) * 1e-9, (unsigned long long)(records_seen() - n0));
    }
}

/* A fork child cannot use its parent's CUDA or CUPTI: nothing there calls CUPTI (no tick, no exit flush). */
static void cupti_fork_child(void)
{
    __atomic_store_n(&quiesced, 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&ticking, 0, __ATOMIC_SEQ_CST);
    pthread_mutex_init(&conv_lock, NULL);
    pthread_mutex_init(&buf_lock, NULL);
    pthread_mutex_init(&attach_lock, NULL); /* the writer may have held it at fork(); it is not in the child */
    /* An armed detach (it lasts until the parent's next CUDA call) must not finalize in the child, where CUPTI's
     * locks may be held by threads that did not come along; DETACHED is inert (the callback's claim fails, no
     * wait waits on it). Review, session 14. */
    __atomic_store_n(&dstate, DS_DETACHED, __ATOMIC_RELEASE);
    pend_head = pend_tail = NULL; /* the parent's records: the parent writes them */
}

/* How often the tick flushes CUPTI while it records all along (every kernel traced, or copies by CUPTI). On ResNet-50
 * DDP with every kernel traced (H200, session 17, 16 lock-step groups) full mode was 1.015x CUPTI's own floor, and
 * 1.007x without the tick's non-forced cuptiActivityFlushAll every 500 ms; the direct ratio (0.992, [0.980, 1.005])
 * does not show that flush's ~0.8 points at 95 %. With this policy (session 18, 7 groups) full was 1.021x the floor
 * and full-notick/full again 0.992 [0.976, 1.008]: no change seen, and whether CUPTI on the H200 hands buffers back
 * without a flush (so that this rule flushes rarely) is not known yet (n_tick_flush, in the exit summary, says).
 * CUPTI's worker hands buffers back as they fill anyway (a 2 MiB buffer holds ~10 k kernel records: under a second at
 * 25 k kernels/s). So the flush only brings in what sits in buffers that are not filling: it runs once no buffer has
 * come back for RS_FLUSH_QUIET_TICKS ticks (2-2.5 s at the default RAILSCOPE_FLUSH_MS of 500), and at least every
 * RS_FLUSH_MAX_TICKS ticks (10 s) for a thread whose own buffer fills slowly while others' come back. A sampling
 * window with copies by API (the default) flushes every tick, as before: it is short and its records must be in before
 * CUPTI is detached. What this costs: a process that dies without running its exit handlers (SIGKILL, a crash) loses
 * up to RS_FLUSH_MAX_TICKS ticks of such records instead of one; an exit, a SIGTERM/SIGINT or an abort loses nothing
 * (the forced flush at exit). */
#define RS_FLUSH_QUIET_TICKS 4
#define RS_FLUSH_MAX_TICKS   20
static uint64_t flush_seen_completions, n_tick_flush; /* n_tick_flush: in the exit summary (debug log) */
static unsigned flush_quiet, flush_since;

static int tick_flush_due(void)
{
    if (kmode != RS_KMODE_ALL && rs_cuda_api_copies) return 1; /* a sampling window: every tick */
    uint64_t n = __atomic_load_n(&buf_completions, __ATOMIC_RELAXED);
    if (n != flush_seen_completions) {
        flush_seen_completions = n;
        flush_quiet = 0;
    } else flush_quiet++;
    flush_since++;
    return flush_quiet >= RS_FLUSH_QUIET_TICKS || flush_since >= RS_FLUSH_MAX_TICKS;
}

/* The buffers the flush brought back are not news of buffers filling. */
static void tick_flushed(void)
{
    flush_seen_completions = __atomic_load_n(&buf_completions, __ATOMIC_RELAXED);
    flush_quiet = flush_since = 0;
    n_tick_flush++;
}

static void close_poll(void);
/* n_close_polls: the looks that flushed (exit summary); not the tick's flushes, whose count says how often the tick
 * flushed while records flowed (tick_flush_due) */
static uint64_t close_poll_gap, close_poll_records, n_close_polls;

static void cupti_tick(void)
{
    on_writer = 1; /* the thread that ticks never finalizes */
    __atomic_store_n(&ticking, 1, __ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&quiesced, __ATOMIC_SEQ_CST) &&
        __atomic_load_n(&rs_cupti_state, __ATOMIC_RELAXED) == RS_CUPTI_DELIVERING) {
        if (!exit_hook_ticked) {
            exit_hook_ticked = 1;
            atexit(cupti_exit_quiesce);
        }
        int want = kmode == RS_KMODE_SAMPLED && in_window(rs_now());
        if (detach_tick(want)) {
            int was_on = window_on;
            if (kmode == RS_KMODE_SAMPLED) set_window(want);
            if (window_on) t_closed = 0; /* a close not armed after (a graph, another client) is no arm's close */
            /* Nothing enabled, nothing to flush: CUPTI is left alone between windows (copies recorded by
             * CUPTI, RAILSCOPE_CUDA_COPIES=cupti, keep it busy all the time). */
            /* + 2: this tick's flush counts down too, and so does the close's tick */
            if (window_on || !rs_cuda_api_copies) flush_ticks = detach_delay_ticks + 2;
            /* a window no tick saw open (the one at CUDA init, closed by the first tick): the same delay */
            else if (was_on && flush_ticks < detach_delay_ticks + 1) flush_ticks = detach_delay_ticks + 1;
            int req = __atomic_exchange_n(&bench_window_req, -1, __ATOMIC_ACQ_REL);
            if (req >= 0 && kmode == RS_KMODE_ALL) set_window(req);
            if (flush_ticks > 0 && !__atomic_load_n(&abl_no_tick_flush, __ATOMIC_RELAXED) && tick_flush_due()) {
                flush_ticks--;
                p_cuptiActivityFlushAll(0);
                tick_flushed();
            }
            convert_pending(0);
            if (!window_on && flush_ticks == 0 && can_detach()) arm_detach(0);
            else if (was_on && !window_on && can_detach()) {
                t_closed = rs_now();
                /* No looks when the next tick opens a window again: as before session 32, CUPTI then stays attached
                 * across the short gap (arming early there cost a finalize and an attach, ~12 ms on a GPU, every
                 * window: review, session 32). */
                if (early_arm && !in_window(t_closed + rs_tick_period_ns())) {
                    close_poll_gap = RS_CLOSE_POLL_FIRST_NS;
                    close_poll_records = records_seen();
                    rs_tick_soon(close_poll, t_closed + close_poll_gap);
                }
            }
        }
    }
    __atomic_store_n(&ticking, 0, __ATOMIC_RELEASE);
}

/* Between ticks after a window's close (rs_tick_soon, the writer's thread): arm the detach as soon as CUPTI holds
 * no buffer of this attachment and this look found no record the last one had not (see early_arm); else look
 * again after twice the wait, up to the fourth look (a tick that comes first arms as before, and the looks then
 * find CUPTI armed and do nothing). */
static void close_poll(void)
{
    on_writer = 1; /* as cupti_tick: the writer's thread never finalizes */
    __atomic_store_n(&ticking, 1, __ATOMIC_SEQ_CST);
    /* RAILSCOPE_CUDA_ABLATE=notickflush: the looks flush as the tick does, so they are off too */
    if (t_closed && !__atomic_load_n(&abl_no_tick_flush, __ATOMIC_RELAXED) &&
        !__atomic_load_n(&quiesced, __ATOMIC_SEQ_CST) &&
        __atomic_load_n(&rs_cupti_state, __ATOMIC_RELAXED) == RS_CUPTI_DELIVERING && !window_on && flush_ticks > 0 &&
        __atomic_load_n(&dstate, __ATOMIC_ACQUIRE) == DS_ATTACHED && can_detach()) {
        p_cuptiActivityFlushAll(0);
        n_close_polls++;
        convert_pending(0);
        uint64_t seen = records_seen(), now = rs_now();
        if (!(uint32_t)__atomic_load_n(&buf_acct, __ATOMIC_RELAXED) && seen == close_poll_records) {
            flush_ticks = 0;
            arm_detach(1); /* if it cannot (a conversion under way elsewhere), the next tick does */
        } else if (close_poll_gap < RS_CLOSE_POLL_LAST_NS) {
            close_poll_gap *= 2;
            close_poll_records = seen;
            rs_tick_soon(close_poll, now + close_poll_gap);
        }
    }
    __atomic_store_n(&ticking, 0, __ATOMIC_RELEASE);
}

/* Bench only (bench/gpu/parttoggle.py, RAILSCOPE_BENCH_HOOKS=1): the tick's flush and the records' conversion
 * off (1) or on (0), and in full mode CUPTI's kernel and copy kinds off (kinds 0) or on (1), -1 leaving them; the
 * kinds change at the next tick, on the thread that opens and closes windows (railscope_bench_cuda_window says
 * when). Returns 0, or -1 when the hooks are off. */
RS_EXPORT int railscope_bench_cuda(int notick, int noconvert, int kinds)
{
    if (!rs_bench_hooks_on()) return -1;
    __atomic_store_n(&abl_no_tick_flush, !!notick, __ATOMIC_RELAXED);
    __atomic_store_n(&abl_no_convert, !!noconvert, __ATOMIC_RELAXED);
    if (kinds >= 0) __atomic_store_n(&bench_window_req, !!kinds, __ATOMIC_RELEASE);
    return 0;
}

/* 1 while kernel activity is enabled, 0 while not; -1 while a change asked for is pending or the hooks are off. */
RS_EXPORT int railscope_bench_cuda_window(void)
{
    if (!rs_bench_hooks_on() || __atomic_load_n(&bench_window_req, __ATOMIC_ACQUIRE) >= 0) return -1;
    return __atomic_load_n(&window_on, __ATOMIC_RELAXED);
}

/* Another CUPTI client (torch.profiler's Kineto links libcupti dynamically, so its call comes through the
 * preloaded library first) registers its own activity buffers: CUPTI then hands every buffer, ours
 * included, to it. Before letting it, force-flush so what CUPTI holds for us comes to us and let the cudart
 * wrappers record copies from here on (always: the state must follow CUPTI's); then, recording (the
 * skeleton's rs_rec), warn once and mark the trace. The client's call is forwarded unchanged, with its
 * return value and errno: torch.profiler works as without railscope. */
static void take_over(int rec)
{
    if (cupti_attached()) { /* detached: nothing of ours in CUPTI */
        p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        convert_pending(1);
    }
    __atomic_store_n(&rs_cupti_state, RS_CUPTI_TAKEN_OVER, __ATOMIC_RELAXED);
    set_copy_owner();
    if (!rec) return;
    rs_warn("another CUPTI client (torch.profiler/Kineto, Nsight) registered its own activity buffers: GPU "
            "activity records go to it from now on; railscope keeps recording API-level events (cudaMemcpy "
            "calls, NCCL, NVTX) without GPU timings");
    emit_window();
}

/* The libcupti behind a wrapper: the one we drive, else the next in the look-up order (a client that calls
 * before the driver initialised us); dlsym look-ups of these names get the wrappers too (registered below), and
 * then the slot holds what the client's own look-up found. */
static void *cupti_real(const char *name)
{
    return p_cuptiActivityEnable && cupti_handle ? rs_dl_sym(cupti_handle, name) : rs_dl_real("libcupti.so", name);
}
RS_REAL(cuptiActivityRegisterCallbacks, CUptiResult,
        (CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc),
        cupti_real("cuptiActivityRegisterCallbacks"))
RS_REAL(cuptiSubscribe, CUptiResult, (CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *),
        cupti_real("cuptiSubscribe"))

RS_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
                                                     CUpti_BuffersCallbackCompleteFunc done)
{
    RS_WRAP_REAL(cuptiActivityRegisterCallbacks, return CUPTI_ERROR_NOT_INITIALIZED);
    RS_WRAP_ENTER(RS_FAM_cuda, rs_guard);
    (void)rs_t0; /* a moment, no duration */
    if (req != buf_request) {
        /* Out of our detach or attach in progress, and no more of them (foreign_client); the flush and conversion
         * come after the lock: they can wait for the writer, whose tick may want the lock. */
        pthread_mutex_lock(&attach_lock);
        __atomic_store_n(&foreign_client, 1, __ATOMIC_RELAXED);
        int ours = __atomic_load_n(&rs_cupti_state, __ATOMIC_RELAXED) == RS_CUPTI_DELIVERING;
        if (ours) settle(CANCEL_FOR_GOOD);
        pthread_mutex_unlock(&attach_lock);
        if (ours) take_over(rs_rec);
    }
    RS_WRAP_CALL((req, done));
    RS_WRAP_LEAVE(rs_guard);
}

/* Another client's callback subscription (Kineto subscribes for its own callbacks, Nsight tools too): cancel an
 * armed detach or wait for a finalize under way (our subscription holds the only slot), and never detach again. The
 * call is forwarded unchanged. */
static void foreign_subscribe(CUpti_CallbackFunc cb)
{
    if (cb == detach_callback) return;
    pthread_mutex_lock(&attach_lock);
    __atomic_store_n(&foreign_subscriber, 1, __ATOMIC_RELAXED);
    settle(CANCEL_FOR_GOOD); /* our armed subscription holds the only slot: free it first */
    if (cupti_attached() && __atomic_load_n(&detach_off, __ATOMIC_ACQUIRE) == 2) {
        pthread_mutex_unlock(&attach_lock);
        drop_refused();
        return;
    }
    pthread_mutex_unlock(&attach_lock);
}

RS_EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata)
{
    RS_WRAP_REAL(cuptiSubscribe, return CUPTI_ERROR_NOT_INITIALIZED);
    RS_WRAP_ENTER(RS_FAM_cuda, rs_guard);
    (void)rs_t0;
    foreign_subscribe(callback);
    RS_WRAP_CALL((subscriber, callback, userdata));
    RS_WRAP_LEAVE(rs_guard);
}

#ifdef CUpti_SubscriberParams_STRUCT_SIZE
RS_REAL(cuptiSubscribe_v2, CUptiResult,
        (CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *, CUpti_SubscriberParams *),
        cupti_real("cuptiSubscribe_v2"))
RS_EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata,
                                        CUpti_SubscriberParams *params)
{
    RS_WRAP_REAL(cuptiSubscribe_v2, return CUPTI_ERROR_NOT_INITIALIZED);
    RS_WRAP_ENTER(RS_FAM_cuda, rs_guard);
    (void)rs_t0;
    foreign_subscribe(callback);
    RS_WRAP_CALL((subscriber, callback, userdata, params));
    RS_WRAP_LEAVE(rs_guard);
}
#define RS_CUPTI_SUBSCRIBE_V2_REDIRECT RS_DL_REDIRECT(cuptiSubscribe_v2, NULL, cuptiSubscribe_v2),
#else
#define RS_CUPTI_SUBSCRIBE_V2_REDIRECT
#endif

/* Clients that load libcupti with dlopen and look its functions up with dlsym (TensorFlow/XLA's CUPTI stubs) go
 * past LD_PRELOAD: their look-ups return the wrappers too. */
__attribute__((constructor)) static void cupti_register(void)
{
    static const struct rs_dl_redirect redirects[] = {
        RS_DL_REDIRECT(cuptiActivityRegisterCallbacks, NULL, cuptiActivityRegisterCallbacks),
        RS_DL_REDIRECT(cuptiSubscribe, NULL, cuptiSubscribe), RS_CUPTI_SUBSCRIBE_V2_REDIRECT};
    rs_dl_register(redirects, (int)(sizeof redirects / sizeof redirects[0]));
}

static void cupti_shutdown(void)
{
    rs_debug(
        "CUPTI: detached %llu times (armed to finalized %.2f ms mean, %.2f max; finalize %.2f ms max; "
        "%llu cancelled by a window, %llu by a graph or another client, %llu at exit), "
        "re-attached %llu times (%.2f ms mean, %.2f max); armed %llu times once the window's records were in "
        "and %llu at a tick (%.1f ms after the close mean, %.1f max); "
        "buffers requested %llu, returned %llu; the tick flushed %llu times, the looks after a window's close %llu",
        (unsigned long long)n_detach, n_detach ? (double)ns_detach / (double)n_detach * 1e-6 : 0.0,
        (double)ns_detach_max * 1e-6, (double)ns_finalize_max * 1e-6, (unsigned long long)n_cancel[CANCEL_WINDOW],
        (unsigned long long)n_cancel[CANCEL_FOR_GOOD], (unsigned long long)n_cancel[CANCEL_EXIT],
        (unsigned long long)n_attach, n_attach ? (double)ns_attach / (double)n_attach * 1e-6 : 0.0,
        (double)ns_attach_max * 1e-6, (unsigned long long)n_arm_early, (unsigned long long)n_arm_tick,
        n_arm_early + n_arm_tick ? (double)ns_close_arm / (double)(n_arm_early + n_arm_tick) * 1e-6 : 0.0,
        (double)ns_close_arm_max * 1e-6, (unsigned long long)__atomic_load_n(&buf_requests, __ATOMIC_RELAXED),
        (unsigned long long)__atomic_load_n(&buf_completions, __ATOMIC_RELAXED), (unsigned long long)n_tick_flush,
        (unsigned long long)n_close_polls);
    if (__atomic_load_n(&rs_cupti_state, __ATOMIC_RELAXED) != RS_CUPTI_DELIVERING) return;
    /* At exit the quiesce handler has flushed already, with CUDA intact; CUPTI may be gone by now. */
    if (!__atomic_load_n(&quiesced, __ATOMIC_ACQUIRE) && cupti_attached())
        p_cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    convert_pending(1);
    uint64_t calls = __atomic_load_n(&rs_cuda_copy_calls, __ATOMIC_RELAXED);
    if (!records_seen() && calls && (!rs_cuda_api_copies || kmode == RS_KMODE_ALL))
        rs_warn("CUPTI delivered no activity records although the program made %llu cudaMemcpy calls: another "
                "CUPTI client may have taken CUPTI over without going through the preloaded library",
                (unsigned long long)calls);
    uint64_t untimed = __atomic_load_n(&rs_cupti_counts.untimed, __ATOMIC_RELAXED);
    if (untimed) rs_warn("CUPTI: %llu activity records without timestamps were skipped", (unsigned long long)untimed);
    uint64_t d = __atomic_load_n(&dropped_total, __ATOMIC_RELAXED);
    if (d) rs_warn("CUPTI dropped %llu activity records (recorded as CUPTI_DROPPED)", (unsigned long long)d);
}

static int unavailable(const char *why)
{
    __atomic_store_n(&rs_cupti_state, RS_CUPTI_UNAVAILABLE, __ATOMIC_RELAXED);
    set_copy_owner();
    rs_warn("CUDA activity capture off: %s; cudaMemcpy* calls are still recorded by the cudart wrappers", why);
    emit_window();
    return 1; /* never make the driver's initialisation fail */
}

RS_EXPORT int InitializeInjection(void)
{
    rs_core_start();
    static int done;
    if (__atomic_exchange_n(&done, 1, __ATOMIC_ACQ_REL)) return 1;
    rs_nvml_start(); /* only with RAILSCOPE_NVML_MS */
    if (!rs_on(RS_FAM_cuda)) return 1;
    parse_modes();
    if (__atomic_load_n(&foreign_client, __ATOMIC_RELAXED)) {
        /* A client registered before the driver called us: taking CUPTI's buffers from it would silently
         * empty its profile. Leave CUPTI to it; the API-level wrappers record copies. */
        __atomic_store_n(&rs_cupti_state, RS_CUPTI_TAKEN_OVER, __ATOMIC_RELAXED);
        rs_warn("another CUPTI client registered activity buffers before CUDA initialised: railscope leaves CUPTI "
                "to it and records copies through the cudart wrappers");
        emit_window();
        return 1;
    }
    if (kmode == RS_KMODE_OFF && rs_cuda_api_copies && !want_api && !want_sync) {
        /* Nothing to ask of CUPTI (no kernels, copies by the cudart wrappers, no API or synchronisation records):
         * it is not attached at all. Until session 31 it was, with nothing enabled, and finalized at the first
         * tick inside one of the program's CUDA calls, which cost that call a finalize; both open files in the
         * program's descriptor table (not the only such opens with the CUDA family on: docs/cuda-nccl.md). The
         * state is the one between windows: CUPTI detached, copies to the wrappers. */
        __atomic_store_n(&dstate, DS_DETACHED, __ATOMIC_RELEASE);
        __atomic_store_n(&rs_cupti_state, RS_CUPTI_DELIVERING, __ATOMIC_RELAXED);
        t_init = rs_now();
        set_copy_owner();
        emit_window();
        rs_at_shutdown(cupti_shutdown);
        rs_at_fork_child(cupti_fork_child);
        rs_debug("CUPTI not attached: kernels off, copies by the cudart wrappers");
        return 1;
    }
    if (load_cupti() != 0)
        return unavailable("libcupti not found (looked in the process, beside libcudart, "
                           "in CUDA_HOME and on the library path)");
    int ts_refused = register_clock();
    CUptiResult r = p_cuptiActivityRegisterCallbacks(buf_request, buf_complete);
    if (r != CUPTI_SUCCESS) {
        char why[96];
        snprintf(why, sizeof why, "cuptiActivityRegisterCallbacks failed (error %d)", (int)r);
        return unavailable(why);
    }
    /* Enabled now: synchronisation records (opt-in) and, with RAILSCOPE_CUDA_COPIES=cupti, the copy kinds for
     * the whole run. Kernels (and API-level copies' GPU side) follow the windows, opened here in every mode
     * but `off`: CUPTI instruments modules as they load, which is cheap now and slow when enabled late. */
    CUptiResult err = CUPTI_SUCCESS;
    int failed = 0;
    if (want_sync && (err = p_cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION)) != CUPTI_SUCCESS) failed++;
    if (!rs_cuda_api_copies)
        for (size_t i = 0; i < sizeof copy_kinds / sizeof copy_kinds[0]; i++) {
            CUptiResult e = p_cuptiActivityEnable(copy_kinds[i]);
            if (e != CUPTI_SUCCESS) {
                err = e;
                failed++;
                rs_debug("CUPTI: activity kind %d not enabled (error %d)", (int)copy_kinds[i], (int)e);
            }
        }
    if (ts_refused && !abl_no_ts_callback)
        rs_warn("CUPTI refused our timestamp callback: GPU times are converted from CLOCK_REALTIME");
    select_api();
    __atomic_store_n(&rs_cupti_state, RS_CUPTI_DELIVERING, __ATOMIC_RELAXED);
    t_init = rs_now();
    if (kmode != RS_KMODE_OFF && !(abl_no_init_window && kmode == RS_KMODE_SAMPLED)) {
        set_window(1);
        if (!window_on) {
            char why[PATH_MAX + 160];
            snprintf(why, sizeof why, "CUPTI (%s) could not enable kernel activity", cupti_path);
            if (rs_cuda_api_copies || failed == (int)(sizeof copy_kinds / sizeof copy_kinds[0]))
                return unavailable(why);
        }
    } else {
        set_copy_owner();
        emit_window();
    }
    if (failed) rs_warn("CUPTI: some activity kinds not enabled (error %d)", (int)err);
    rs_at_tick(cupti_tick);
    rs_at_shutdown(cupti_shutdown);
    rs_at_fork_child(cupti_fork_child);
    atexit(cupti_exit_quiesce);
    rs_debug("CUPTI from %s, kernels %s", cupti_path,
             kmode == RS_KMODE_ALL   ? "all"
             : kmode == RS_KMODE_OFF ? "off"
                                     : "sampled");
    return 1;
}
