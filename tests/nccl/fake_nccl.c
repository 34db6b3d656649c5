/* A stand-in libnccl.so.2 for the CI tests (no GPU): exports the strong pncclX functions with weak ncclX
 * aliases, as NCCL's PROFAPI build does, and calls the profiler plugin's init from inside
 * pncclCommInitRank like NCCL (so the API wrapper can learn the comm hash): the v5 table, or with
 * FAKE_NCCL_PROFILER=v3 the v3 table as NCCL 2.26 (init without a communicator; then each AllReduce starts
 * and stops a v3 Coll carrying the hash); v3-thread: that init on a thread of its own, as 2.23-2.27 run the init
 * job of ncclCommInitRankConfig/Split (group.cc asyncJobLaunch). Collectives do nothing but count and return a
 * distinctive value; `fake_nccl_calls` lets the test check they really ran. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int ncclResult_t;
typedef struct {
    const char *name;
    int (*init)(void **, int *);
    int (*startEvent)(void *, void **, void *);
    int (*stopEvent)(void *);
} prof_v3_head;
struct fake_comm {
    int rank, nranks, dev;
    uint64_t hash, seq;
    void *prof_ctx;
    prof_v3_head *v3;
};
typedef struct fake_comm *ncclComm_t;
typedef struct {
    char internal[128];
} ncclUniqueId;

#define EXPORT   __attribute__((visibility("default")))
#define ALIAS(f) __attribute__((weak, alias("p" #f)))

EXPORT int fake_nccl_calls;

typedef struct {
    const char *name;
    int (*init)(void **, uint64_t, int *, const char *, int, int, int, void *);
} prof_v5_head;

static void *v3_init_thread(void *arg)
{
    struct fake_comm *c = arg;
    int mask = 0;
    c->v3->init(&c->prof_ctx, &mask);
    return NULL;
}

EXPORT ncclResult_t pncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    struct fake_comm *c = calloc(1, sizeof *c);
    c->rank = rank;
    c->nranks = nranks;
    c->dev = 0;
    memcpy(&c->hash, id.internal, sizeof c->hash); /* the test puts the hash in the id */
    const char *plugin = getenv("NCCL_PROFILER_PLUGIN");
    if (plugin) {
        void *h = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
        const char *v = getenv("FAKE_NCCL_PROFILER");
        int mask = 0;
        if (v && !strncmp(v, "v3", 2)) {
            c->v3 = h ? dlsym(h, "ncclProfiler_v3") : NULL;
            pthread_t t;
            if (c->v3 && !strcmp(v, "v3-thread") && !pthread_create(&t, NULL, v3_init_thread, c)) pthread_join(t, NULL);
            else if (c->v3) c->v3->init(&c->prof_ctx, &mask);
        } else {
            prof_v5_head *p = h ? dlsym(h, "ncclProfiler_v5") : NULL;
            if (p) p->init(&c->prof_ctx, c->hash, &mask, "fake", 1, nranks, rank, NULL);
        }
    }
    *comm = c;
    fake_nccl_calls++;
    return 0;
}
EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *, int, ncclUniqueId, int) ALIAS(ncclCommInitRank);

#define COLL(name, params)             \
    EXPORT ncclResult_t p##name params \
    {                                  \
        fake_nccl_calls++;             \
        return 0;                      \
    }                                  \
    EXPORT ncclResult_t name params ALIAS(name);
/* The v3 descriptor of a Coll (profiler_v3.h): a one-byte type, then name and hash first in the union. */
struct v3_coll_descr {
    uint8_t type;
    void *parentObj;
    int rank;
    struct {
        const char *name;
        uint64_t commHash, seqNumber;
        const char *func;
        const void *sendBuff;
        void *recvBuff;
        size_t count;
        int root;
        const char *datatype;
        uint8_t nMaxChannels, nWarps;
        const char *algo, *proto;
    } coll;
};
EXPORT ncclResult_t pncclAllReduce(const void *s, void *r, size_t n, int dt, int op, ncclComm_t c, void *st)
{
    (void)dt, (void)op, (void)st;
    fake_nccl_calls++;
    if (c && c->v3) {
        struct v3_coll_descr d = {
            2,
            NULL,
            c->rank,
            {"fake", c->hash, c->seq++, "AllReduce", s, r, n, 0, "ncclFloat32", 1, 8, "RING", "SIMPLE"}};
        void *h = NULL;
        c->v3->startEvent(c->prof_ctx, &h, &d);
        c->v3->stopEvent(h);
    }
    return 0;
}
EXPORT ncclResult_t ncclAllReduce(const void *, void *, size_t, int, int, ncclComm_t, void *) ALIAS(ncclAllReduce);
COLL(ncclAllGather, (const void *s, void *r, size_t n, int dt, ncclComm_t c, void *st))
COLL(ncclGather, (const void *s, void *r, size_t n, int dt, int root, ncclComm_t c, void *st))
COLL(ncclScatter, (const void *s, void *r, size_t n, int dt, int root, ncclComm_t c, void *st))
COLL(ncclSend, (const void *s, size_t n, int dt, int peer, ncclComm_t c, void *st))
COLL(ncclRecv, (void *r, size_t n, int dt, int peer, ncclComm_t c, void *st))
COLL(ncclGroupStart, (void))
COLL(ncclGroupEnd, (void))

EXPORT ncclResult_t pncclCommUserRank(ncclComm_t c, int *r)
{
    *r = c->rank;
    return 0;
}
EXPORT ncclResult_t ncclCommUserRank(ncclComm_t, int *) ALIAS(ncclCommUserRank);
EXPORT ncclResult_t pncclCommCount(ncclComm_t c, int *n)
{
    *n = c->nranks;
    return 0;
}
EXPORT ncclResult_t ncclCommCount(ncclComm_t, int *) ALIAS(ncclCommCount);
/* NCCL_VERSION_CODE of 2.28.9, or FAKE_NCCL_VERSION's */
EXPORT ncclResult_t pncclGetVersion(int *v)
{
    const char *e = getenv("FAKE_NCCL_VERSION");
    *v = e ? atoi(e) : 22809;
    return 0;
}
EXPORT ncclResult_t ncclGetVersion(int *) ALIAS(ncclGetVersion);
EXPORT ncclResult_t pncclCommCuDevice(ncclComm_t c, int *d)
{
    *d = c->dev;
    return 0;
}
EXPORT ncclResult_t ncclCommCuDevice(ncclComm_t, int *) ALIAS(ncclCommCuDevice);
/* A split child: color NCCL_SPLIT_NOCOLOR (-1) makes none; no profiler init (the wrapper derives the key) */
EXPORT ncclResult_t pncclCommSplit(ncclComm_t c, int color, int key, ncclComm_t *out, void *config)
{
    (void)key;
    (void)config;
    fake_nccl_calls++;
    if (color == -1) {
        *out = NULL;
        return 0;
    }
    struct fake_comm *n = calloc(1, sizeof *n);
    n->rank = c->rank % 2;
    n->nranks = 2;
    *out = n;
    return 0;
}
EXPORT ncclResult_t ncclCommSplit(ncclComm_t, int, int, ncclComm_t *, void *) ALIAS(ncclCommSplit);
EXPORT ncclResult_t pncclCommDestroy(ncclComm_t c)
{
    free(c);
    fake_nccl_calls++;
    return 0;
}
EXPORT ncclResult_t ncclCommDestroy(ncclComm_t) ALIAS(ncclCommDestroy);
