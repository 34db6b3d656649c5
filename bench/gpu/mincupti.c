/* A minimal CUPTI injection: CUPTI's own cost floor for railscope's overhead measurements (bench/gpu/ablate.py).
 *
 *   gcc -O2 -shared -fPIC -I/usr/local/cuda/include -o mincupti.so bench/gpu/mincupti.c -ldl
 *   CUDA_INJECTION64_PATH=$PWD/mincupti.so MINCUPTI_KINDS=memcpy,kernel python3 train.py
 *
 * InitializeInjection finds the libcupti already in the process (PyTorch's), registers 8 MiB activity buffers,
 * enables the kinds named in MINCUPTI_KINDS (memcpy, memcpy2, memset, kernel = CONCURRENT_KERNEL, sync; `none`
 * or empty: buffers registered, nothing enabled) and counts the records it is handed, nothing else; at exit one
 * forced flush (timed, printed to stderr with the counts). No timestamp callback, no periodic flush (unless
 * MINCUPTI_ATTRS asks for CUPTI's own), no conversion: what is left is what CUPTI costs by itself.
 *
 * MINCUPTI_ATTRS (session 21): CUPTI's activity attributes set before anything is enabled, to ask whether a
 * setting lowers CUPTI's own per-kernel cost (none had been tried in sessions 5-20): a comma list of
 * devbuf=MiB (CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE), prealloc=N (DEVICE_BUFFER_PRE_ALLOCATE_VALUE),
 * poollimit=N (DEVICE_BUFFER_POOL_LIMIT), pinned=0|1 (MEM_ALLOCATION_TYPE_HOST_PINNED) and flushperiod=MS
 * (cuptiActivityFlushPeriod). Each attribute's value before and after is printed to stderr once. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cupti.h>

static __typeof__(cuptiActivityGetNextRecord) *p_next;
static __typeof__(cuptiActivityFlushAll) *p_flush;
static uint64_t nrec, nbuf;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

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
    uint64_t n = 0;
    while (valid && p_next(b, valid, &r) == CUPTI_SUCCESS) n++;
    __atomic_fetch_add(&nrec, n, __ATOMIC_RELAXED);
    __atomic_fetch_add(&nbuf, 1, __ATOMIC_RELAXED);
    free(b);
}

static void at_exit(void)
{
    double t0 = now_s();
    p_flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    fprintf(stderr, "mincupti: exit flush %.3f s, %llu records in %llu buffers\n", now_s() - t0,
            (unsigned long long)nrec, (unsigned long long)nbuf);
}

/* One attribute: name=value from MINCUPTI_ATTRS, read back and printed (the defaults on the device are a fact
 * worth having too). */
static void set_attrs(void *h)
{
    __typeof__(cuptiActivitySetAttribute) *set = (__typeof__(set))dlsym(h, "cuptiActivitySetAttribute");
    __typeof__(cuptiActivityGetAttribute) *get = (__typeof__(get))dlsym(h, "cuptiActivityGetAttribute");
    __typeof__(cuptiActivityFlushPeriod) *period = (__typeof__(period))dlsym(h, "cuptiActivityFlushPeriod");
    static const struct {
        const char *name;
        CUpti_ActivityAttribute attr;
        int is_u8;
        size_t scale;
    } attrs[] = {{"devbuf", CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, 0, 1u << 20},
                 {"prealloc", CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_PRE_ALLOCATE_VALUE, 0, 1},
                 {"poollimit", CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_POOL_LIMIT, 0, 1},
                 {"pinned", CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, 1, 1}};
    const char *v = getenv("MINCUPTI_ATTRS");
    if (!set || !get) {
        fprintf(stderr, "mincupti: no cuptiActivitySetAttribute\n");
        return;
    }
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        size_t before = 0, after = 0, sz = attrs[i].is_u8 ? 1 : sizeof(size_t);
        uint8_t b8 = 0;
        if (get(attrs[i].attr, &sz, attrs[i].is_u8 ? (void *)&b8 : (void *)&before) != CUPTI_SUCCESS) {
            fprintf(stderr, "mincupti: attribute %s not readable\n", attrs[i].name);
            continue; /* a failed read would print as a default of 0 */
        }
        if (attrs[i].is_u8) before = b8;
        const char *p = v ? strstr(v, attrs[i].name) : NULL;
        size_t n = strlen(attrs[i].name);
        while (p && ((p != v && p[-1] != ',') || p[n] != '=')) p = strstr(p + 1, attrs[i].name);
        if (p) {
            size_t want = (size_t)strtoull(p + n + 1, NULL, 10) * attrs[i].scale;
            uint8_t w8 = (uint8_t)want;
            sz = attrs[i].is_u8 ? 1 : sizeof(size_t);
            CUptiResult r = set(attrs[i].attr, &sz, attrs[i].is_u8 ? (void *)&w8 : (void *)&want);
            if (r != CUPTI_SUCCESS) fprintf(stderr, "mincupti: %s not set (error %d)\n", attrs[i].name, (int)r);
        }
        sz = attrs[i].is_u8 ? 1 : sizeof(size_t);
        if (get(attrs[i].attr, &sz, attrs[i].is_u8 ? (void *)&b8 : (void *)&after) != CUPTI_SUCCESS) continue;
        if (attrs[i].is_u8) after = b8;
        fprintf(stderr, "mincupti: attribute %s %zu -> %zu\n", attrs[i].name, before, after);
    }
    const char *fp = v ? strstr(v, "flushperiod=") : NULL;
    if (fp && period) {
        CUptiResult r = period((uint32_t)strtoul(fp + 12, NULL, 10));
        fprintf(stderr, "mincupti: flush period %s (%d)\n", fp + 12, (int)r);
    }
}

int InitializeInjection(void)
{
    static int once;
    if (once++) return 1;
    void *h = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen("libcupti.so.13", RTLD_NOW);
    if (!h) h = dlopen("libcupti.so", RTLD_NOW);
    if (!h) {
        fprintf(stderr, "mincupti: no libcupti\n");
        return 1;
    }
    __typeof__(cuptiActivityRegisterCallbacks) *reg = (__typeof__(reg))dlsym(h, "cuptiActivityRegisterCallbacks");
    __typeof__(cuptiActivityEnable) *en = (__typeof__(en))dlsym(h, "cuptiActivityEnable");
    p_next = (__typeof__(p_next))dlsym(h, "cuptiActivityGetNextRecord");
    p_flush = (__typeof__(p_flush))dlsym(h, "cuptiActivityFlushAll");
    if (!reg || !en || !p_next || !p_flush || reg(req, done) != CUPTI_SUCCESS) {
        fprintf(stderr, "mincupti: CUPTI set-up failed\n");
        return 1;
    }
    set_attrs(h);
    const char *k = getenv("MINCUPTI_KINDS");
    static const struct {
        const char *name;
        CUpti_ActivityKind kind;
    } kinds[] = {{"memcpy", CUPTI_ACTIVITY_KIND_MEMCPY},
                 {"memcpy2", CUPTI_ACTIVITY_KIND_MEMCPY2},
                 {"memset", CUPTI_ACTIVITY_KIND_MEMSET},
                 {"kernel", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL},
                 {"sync", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION}};
    for (size_t i = 0; k && i < sizeof kinds / sizeof kinds[0]; i++) {
        const char *p = strstr(k, kinds[i].name);
        size_t n = strlen(kinds[i].name);
        while (p && ((p != k && p[-1] != ',') || (p[n] && p[n] != ','))) p = strstr(p + 1, kinds[i].name);
        if (p && en(kinds[i].kind) != CUPTI_SUCCESS) fprintf(stderr, "mincupti: %s not enabled\n", kinds[i].name);
    }
    atexit(at_exit);
    return 1;
}
