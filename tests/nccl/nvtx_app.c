/* An NVTX v3 client (header-only NVTX, as in libtorch and libnccl): default-domain push/pop, start/end and
 * marks like torch.cuda.nvtx, and an "NCCL" domain range with a registered message and an extended payload
 * like NCCL's collectives. Run with NVTX_INJECTION64_PATH=librailscope.so; prints the values NVTX returned.
 * `nvtx_app thread-exit`: a thread marks, then marks again from a thread-specific-data destructor that runs after
 * the tracer's own (its per-thread message cache is freed by then; session 13 review). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

int main(int argc, char **argv)
{
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
