/* An NVTX v3 client (header-only NVTX, as in libtorch and libnccl): default-domain push/pop, start/end and
 * marks like torch.cuda.nvtx, and an "NCCL" domain range with a registered message and an extended payload
 * like NCCL's collectives. Run with NVTX_INJECTION64_PATH=librailscope.so; prints the values NVTX returned.
 * `nvtx_app thread-exit`: a thread marks, then marks again from a thread-specific-data destructor that runs after
 * the tracer's own (its per-thread message cache is freed by then; session 13 review). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

struct nccl_allreduce_payload { /* NCCL's NcclNvtxParamsAllReduce: comm hash, bytes, reduction op */
    uint64_t comm;
    size_t bytes;
    int op;
};

static pthread_key_t late_key;

static void late_mark(void *v)
{
    (void)v;
    nvtxMarkA("at thread exit"); /* after the tracer's key destructor: its key was made first (lower index) */
}

static void *marker(void *arg)
{
    (void)arg;
    nvtxMarkA("in thread"); /* the tracer makes its cache key here, before ours */
    pthread_key_create(&late_key, late_mark);
    pthread_setspecific(late_key, &late_key);
    return NULL;
}

/* A /proc/self/status size in KiB (VmRSS: resident now, VmHWM: its peak), 0 when unknown. */
static long status_kib(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = 0;
    size_t n = strlen(key);
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, key, n)) kb = strtol(line + n, NULL, 10);
    if (f) fclose(f);
    return kb;
}
static long rss_kib(void) { return status_kib("VmRSS:"); }

/* `nvtx_app many N`: N steps named "step i", each with an op range named as torch's emit_nvtx names them (a
 * new op id every time), then messages at the edges of the numbers' rule; prints the resident set's growth
 * over the second half of the steps (the first half fills the tracer's buffer and caches). */
static int many(long n)
{
    char msg[96];
    long rss_half = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < n; i++) {
        if (i == n / 2) rss_half = rss_kib();
        snprintf(msg, sizeof msg, "step %ld", i);
        nvtxRangePushA(msg);
        snprintf(msg, sizeof msg, "aten::mul, seq = %ld, op_id = %ld", i / 3, 2 * i + 1);
        nvtxRangePushA(msg);
        nvtxRangePop();
        nvtxRangePop();
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    long grown = rss_kib() - rss_half;
    double ns =
        ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (2.0 * (double)(n ? n : 1));
    static const char *edge[] = {"step 007",
                                 "id 12345678901234567890",
                                 "a1b2c3d4e5f6g7h8i9",
                                 "tab\x1f 3",
                                 "ReluBackward0, seq = 118, op_id = 1914",
                                 "18446744073709551615"};
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) nvtxMarkA(edge[i]);
    printf("many: %ld steps, rss grew %ld KiB over the second half; ns_per_range=%.1f peak_kib=%ld\n", n, grown, ns,
           status_kib("VmHWM:"));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "many")) return many(strtol(argv[2], NULL, 10));
    if (argc > 1 && !strcmp(argv[1], "thread-exit")) {
        pthread_t t;
        if (pthread_create(&t, NULL, marker, NULL) || pthread_join(t, NULL)) return 1;
        puts("thread-exit done");
        return 0;
    }
    char msg[32];
    int levels = 0;
    for (int step = 0; step < 3; step++) {
        snprintf(msg, sizeof msg, "step %d", step); /* the same buffer, other bytes each time */
        levels += nvtxRangePushA(msg);
        levels += nvtxRangePushA("forward");
        levels += nvtxRangePop();
        levels += nvtxRangePop();
    }
    nvtxMarkA("checkpoint");
    nvtxRangeId_t id = nvtxRangeStartA("data wait");
    nvtxRangeEnd(id);

    nvtxDomainHandle_t d = nvtxDomainCreateA("NCCL");
    nvtxStringHandle_t s = nvtxDomainRegisterStringA(d, "ncclAllReduce");
    struct nccl_allreduce_payload pl;
    memset(&pl, 0, sizeof pl); /* the tracer keeps all 24 bytes: the padding after op must be defined */
    pl.comm = 0xabcdef12345ull;
    pl.bytes = 1048576 * 4;
    nvtxPayloadData_t pd = {NVTX_PAYLOAD_SCHEMA_ID_STATIC_START + 5, sizeof pl, &pl};
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = s;
    a.payloadType = NVTX_PAYLOAD_TYPE_EXT;
    a.reserved0 = 1;
    a.payload.ullValue = (uint64_t)(uintptr_t)&pd;
    int l1 = nvtxDomainRangePushEx(d, &a);
    int l2 = nvtxDomainRangePop(d);
    printf("levels=%d domain=%s l1=%d l2=%d id=%s\n", levels, d ? "set" : "null", l1, l2, id ? "set" : "zero");
    return 0;
}
