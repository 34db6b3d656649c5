/* Optional NVML sampler: NVLink and PCIe byte counters of every GPU, read by a thread every
 * RAILSCOPE_NVML_MS milliseconds (off by default; 10..1000) into NVML_SAMPLE events. Started by the CUDA
 * injection (a process that never initialises CUDA gets no thread). libnvidia-ml.so.1 comes with the
 * driver and is dlopen'ed; the few NVML declarations below are written from NVIDIA's public nvml.h
 * (NVML_API_VERSION 12 and 13; the CUDA toolkit's cuda-nvml-dev package, republished as
 * https://github.com/NVIDIA/go-nvml/blob/main/gen/nvml/nvml.h) and the NVML API reference
 * (https://docs.nvidia.com/deploy/nvml-api/: nvmlDeviceGetFieldValues, nvmlFieldValue_t, NVML_FI_DEV_*),
 * so no NVML header is needed (this build host's CUDA 13.0 toolkit has none).
 *
 * Fields (cumulative counters, readers take deltas): 138/139 NVLink data TX/RX in KiB summed over links
 * (scope UINT_MAX), 197/198 PCIe TX/RX bytes. A field a device does not support is dropped for that device
 * after its first answer. Devices are NVML's indices (not CUDA's ordinals under CUDA_VISIBLE_DEVICES). */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "preload/rs_gpu_common.h"
#include "tracer/rs_tracer.h"

typedef int rs_nvmlReturn_t; /* 0 = NVML_SUCCESS */
typedef struct rs_nvmlDevice *rs_nvmlDevice_t;
typedef struct {
    unsigned fieldId;
    unsigned scopeId;
    long long timestamp; /* CPU µs since the epoch */
    long long latencyUsec;
    int valueType;
    rs_nvmlReturn_t nvmlReturn;
    union {
        double d;
        unsigned ui;
        unsigned long ul;
        unsigned long long ull;
        long long sll;
        int si;
    } value;
} rs_nvmlFieldValue_t;
_Static_assert(sizeof(rs_nvmlFieldValue_t) == 40, "nvmlFieldValue_t layout");

#define RS_NVML_FIELDS(X) X(138, 0xffffffffu) X(139, 0xffffffffu) X(197, 0) X(198, 0)
#define RS_NVML_NFIELDS   4
#define RS_NVML_MAXDEV    16

static struct {
    rs_nvmlReturn_t (*init)(void);
    rs_nvmlReturn_t (*count)(unsigned *);
    rs_nvmlReturn_t (*handle)(unsigned, rs_nvmlDevice_t *);
    rs_nvmlReturn_t (*fields)(rs_nvmlDevice_t, int, rs_nvmlFieldValue_t *);
} nv;
static rs_nvmlDevice_t devs[RS_NVML_MAXDEV];
static unsigned ndev;
static unsigned supported[RS_NVML_MAXDEV]; /* bit i: field i still asked for */
/* Who may call sample(): 0 nobody is (the sampler may start one), 1 the sampler is inside it, 2 stopped
 * (the exiting thread took it for the last reading). NVML's field queries and `supported` are not
 * shared between two threads at once. */
static int smp_state;
static unsigned period_ms;

static void sample(void)
{
    static const unsigned ids[RS_NVML_NFIELDS] = {
#define RS_NVML_ID(id, scope) id,
        RS_NVML_FIELDS(RS_NVML_ID)
#undef RS_NVML_ID
    };
    static const unsigned scopes[RS_NVML_NFIELDS] = {
#define RS_NVML_SCOPE(id, scope) scope,
        RS_NVML_FIELDS(RS_NVML_SCOPE)
#undef RS_NVML_SCOPE
    };
    for (unsigned d = 0; d < ndev; d++) {
        rs_nvmlFieldValue_t v[RS_NVML_NFIELDS];
        int idx[RS_NVML_NFIELDS], n = 0;
        memset(v, 0, sizeof v);
        for (int i = 0; i < RS_NVML_NFIELDS; i++)
            if (supported[d] & (1u << i)) {
                v[n].fieldId = ids[i];
                v[n].scopeId = scopes[i];
                idx[n++] = i;
            }
        if (!n || nv.fields(devs[d], n, v) != 0) continue;
        uint64_t now = rs_now();
        for (int k = 0; k < n; k++) {
            if (v[k].nvmlReturn != 0) { /* not supported here: stop asking */
                supported[d] &= ~(1u << idx[k]);
                continue;
            }
            struct rs_ev_NVML_SAMPLE ev;
            RS_EV_INIT(&ev, NVML_SAMPLE, now);
            ev.value = v[k].value.ull;
            ev.device = d;
            ev.field = v[k].fieldId;
            ev.scope = v[k].scopeId;
            ev.pad = 0;
            rs_emit(&ev.h);
        }
    }
}

static void *sampler(void *arg)
{
    (void)arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* the application's signals are not ours to take */
    rs_own_thread_enter();
    for (;;) {
        int idle = 0;
        if (!rs_on(RS_FAM_nvml) ||
            !__atomic_compare_exchange_n(&smp_state, &idle, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            break; /* stopped */
        sample();
        __atomic_store_n(&smp_state, 0, __ATOMIC_RELEASE);
        struct timespec ts = {(time_t)(period_ms / 1000), (long)(period_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* A last reading, so deltas cover the whole run: taken once the sampler is outside sample() (one round of
 * NVML queries); the wait is bounded (200 ms), after it the run ends without that reading. */
static void nvml_stop(void)
{
    for (int i = 0; i < 200; i++) {
        int idle = 0;
        if (__atomic_compare_exchange_n(&smp_state, &idle, 2, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            if (ndev) sample();
            return;
        }
        if (idle == 2) return;
        struct timespec ms = {0, 1000000L};
        nanosleep(&ms, NULL);
    }
    __atomic_store_n(&smp_state, 2, __ATOMIC_RELEASE);
}

/* A child forked while the sampler was inside sample() has no sampler thread: nobody is sampling. */
static void nvml_fork_child(void) { __atomic_store_n(&smp_state, 0, __ATOMIC_RELAXED); }

/* Called once by the CUDA injection; does nothing unless RAILSCOPE_NVML_MS is set. */
void rs_nvml_start(void)
{
    static int started;
    if (__atomic_exchange_n(&started, 1, __ATOMIC_ACQ_REL) || !rs_on(RS_FAM_nvml)) return;
    const char *v = getenv("RAILSCOPE_NVML_MS");
    if (!v || !*v) return;
    long ms = strtol(v, NULL, 10);
    if (ms < 10 || ms > 1000) {
        rs_warn("RAILSCOPE_NVML_MS=%s out of 10..1000; NVML sampler off", v);
        return;
    }
    period_ms = (unsigned)ms;
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        rs_warn("NVML sampler off: libnvidia-ml.so.1 not found");
        return;
    }
    nv.init = (rs_nvmlReturn_t(*)(void))dlsym(h, "nvmlInit_v2");
    nv.count = (rs_nvmlReturn_t(*)(unsigned *))dlsym(h, "nvmlDeviceGetCount_v2");
    nv.handle = (rs_nvmlReturn_t(*)(unsigned, rs_nvmlDevice_t *))dlsym(h, "nvmlDeviceGetHandleByIndex_v2");
    nv.fields = (rs_nvmlReturn_t(*)(rs_nvmlDevice_t, int, rs_nvmlFieldValue_t *))dlsym(h, "nvmlDeviceGetFieldValues");
    unsigned n = 0;
    if (!nv.init || !nv.count || !nv.handle || !nv.fields || nv.init() != 0 || nv.count(&n) != 0) {
        rs_warn("NVML sampler off: NVML did not initialise");
        return;
    }
    for (unsigned i = 0; i < n && ndev < RS_NVML_MAXDEV; i++)
        if (nv.handle(i, &devs[ndev]) == 0) supported[ndev++] = (1u << RS_NVML_NFIELDS) - 1;
    if (!ndev) return;
    sample();
    pthread_t t;
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &a, sampler, NULL) != 0) rs_warn("NVML sampler: no thread");
    else pthread_setname_np(t, "railscope-nvml");
    pthread_attr_destroy(&a);
    rs_at_shutdown(nvml_stop);
    rs_at_fork_child(nvml_fork_child);
}
