/* Drives librailscope.so's NCCL profiler plugin exactly as NCCL 2.27 (v4 table) or 2.28 (v5 table) does, or as
 * 2.23-2.26 (v1-v3 tables: init without a communicator, whose name and hash come with each Coll and P2p; v1's
 * function, datatype, algorithm and protocol as enum codes; ProxyOp states carrying the running transfer total
 * just before the step's SendWait / RecvFlushWait, which carry none; v1 one step event per slice step, two here):
 * the plugin library is opened the way NCCL opens it (dlopen of NCCL_PROFILER_PLUGIN with
 * RTLD_NOW|RTLD_LOCAL, or dlopen(NULL) for STATIC_PLUGIN), the table found with dlsym, init called once per
 * communicator, and for each collective: Group -> Coll (stopped at "enqueue") -> per channel a send and a
 * receive ProxyOp (started later, as on NCCL's proxy thread) -> ProxySteps with NCCL's state sequence and
 * transfer sizes -> one IB QP net-plugin event per step; KernelCh with GPU timer start/stop; a P2p send.
 * Only event types inside the mask the plugin returned are started, as NCCL does.
 *
 * The ABI is declared here independently of preload/nccl_profiler.c, from NCCL's public profiler_v1.h -
 * profiler_v5.h (github.com/NVIDIA/nccl, ext-profiler/example/nccl/ at tag v2.28.9-1); the legacy call sequence
 * from src/transport/net.cc and src/misc/profiler.cc (v2.23.4-1) / src/plugin/profiler.cc (v2.26.6-1). Descriptors are
 * pre-filled with 0xA5 so that a plugin reading padding (v4's type is one byte) or fields of the wrong
 * version would see garbage.
 *
 * usage: plugin_driver v1|v2|v3|v4|v5 NCOLL [NTHREADS]
 *   prints "mask=0x.." per communicator and "events=N failures=N" on stdout. With NTHREADS, that many
 *   threads each init their own communicator (hash 0x1000 + i) and run NCOLL collectives at once, as
 *   several communicators' user and proxy threads do (for the race detector). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>
#include <time.h>

enum {
    T_GROUPAPI = 1 << 8,
    T_COLLAPI = 1 << 9,
    T_KERNELLAUNCH = 1 << 11,
    T_GROUP = 1 << 0,
    T_COLL = 1 << 1,
    T_P2P = 1 << 2,
    T_PROXYOP = 1 << 3,
    T_PROXYSTEP = 1 << 4,
    T_KERNELCH = 1 << 6,
    T_NET = 1 << 7,
};
enum {
    S_OP_SEND_POSTED = 0, /* v1-v3 ProxyOp states */
    S_OP_SEND_REM_FIFO_WAIT = 1,
    S_OP_SEND_TRANSMITTED = 2,
    S_OP_SEND_DONE = 3,
    S_OP_RECV_POSTED = 4,
    S_OP_RECV_RECEIVED = 5,
    S_OP_RECV_TRANSMITTED = 6,
    S_OP_RECV_DONE = 7,
    S_OP_IN_PROGRESS = 19,
    S_SEND_GPU_WAIT = 8,
    S_SEND_PEER_WAIT = 20,
    S_SEND_WAIT = 9,
    S_RECV_WAIT = 10,
    S_RECV_FLUSH_WAIT = 11,
    S_RECV_GPU_WAIT = 12,
    S_KERNEL_CH_STOP = 22,
};

struct coll_v4 {
    uint64_t seqNumber;
    const char *func;
    const void *sendBuff;
    void *recvBuff;
    size_t count;
    int root;
    const char *datatype;
    uint8_t nChannels;
    uint8_t nWarps;
    const char *algo;
    const char *proto;
};
struct coll_v5 {
    uint64_t seqNumber;
    const char *func;
    const void *sendBuff;
    void *recvBuff;
    size_t count;
    int root;
    const char *datatype;
    uint8_t nChannels;
    uint8_t nWarps;
    const char *algo;
    const char *proto;
    void *parentGroup;
};
struct p2p_v5 {
    const char *func;
    void *buff;
    const char *datatype;
    size_t count;
    int peer;
    uint8_t nChannels;
    void *parentGroup;
};
struct coll_v3 {
    const char *name;
    uint64_t commHash;
    uint64_t seqNumber;
    const char *func;
    const void *sendBuff;
    void *recvBuff;
    size_t count;
    int root;
    const char *datatype;
    uint8_t nMaxChannels;
    uint8_t nWarps;
    const char *algo;
    const char *proto;
};
struct coll_v2 {
    const char *name;
    uint64_t commHash;
    uint64_t seqNumber;
    const char *func;
    const void *sendBuff;
    void *recvBuff;
    size_t count;
    int root;
    const char *datatype;
    size_t trafficBytes;
    uint8_t nMaxChannels;
    uint8_t nWarps;
    const char *algo;
    const char *proto;
};
struct coll_v1 {
    const char *name;
    uint64_t commHash;
    uint64_t seqNumber;
    uint8_t func;
    const void *sendBuff;
    void *recvBuff;
    size_t count;
    int root;
    uint8_t datatype;
    uint32_t op;
    size_t trafficBytes;
    uint8_t nMaxChannels;
    uint8_t nWarps;
    uint8_t algo;
    uint8_t proto;
    int isCollnet;
    int isNvls;
};
struct p2p_v3 {
    const char *name;
    uint64_t commHash;
    const char *func;
    void *buff;
    const char *datatype;
    size_t count;
    int peer;
};
struct p2p_v1 {
    const char *name;
    uint64_t commHash;
    uint8_t func;
    void *buff;
    uint8_t datatype;
    size_t count;
    int peer;
};
struct groupapi_v5 {
    bool graphCaptured;
    int groupDepth;
};
struct collapi_v5 {
    const char *func;
    size_t count;
    const char *datatype;
    int root;
    void *stream;
    bool graphCaptured;
};
struct proxyop {
    pid_t pid;
    uint8_t channelId;
    int peer;
    int nSteps;
    int chunkSize;
    int isSend;
};
struct kernelch {
    uint8_t channelId;
    uint64_t pTimer;
};
struct netplugin {
    int64_t id;
    void *data;
};

typedef struct {
    uint8_t type;
    void *parentObj;
    int rank;
    union {
        struct coll_v3 coll3;
        struct coll_v2 coll2;
        struct coll_v1 coll1;
        struct p2p_v3 p2p3; /* also v2 */
        struct p2p_v1 p2p1;
        struct proxyop proxyOp;
        struct {
            int step;
        } proxyStep;
        struct {
            uint8_t channelId;
        } kernelCh;
        struct netplugin netPlugin; /* v3 */
    };
} descr_v3;
typedef struct {
    uint8_t type;
    void *parentObj;
    int rank;
    union {
        struct coll_v4 coll;
        struct proxyop proxyOp;
        struct {
            int step;
        } proxyStep;
        struct kernelch kernelCh;
        struct netplugin netPlugin;
    };
} descr_v4;
typedef struct {
    uint64_t type;
    void *parentObj;
    int rank;
    union {
        struct groupapi_v5 groupApi;
        struct collapi_v5 collApi;
        struct {
            void *stream;
        } kernelLaunch;
        struct coll_v5 coll;
        struct p2p_v5 p2p;
        struct proxyop proxyOp;
        struct {
            int step;
        } proxyStep;
        struct kernelch kernelCh;
        struct netplugin netPlugin;
    };
} descr_v5;
typedef union {
    struct {
        size_t transSize;
    } proxyStep;
    struct {
        size_t transSize;
        int steps;
    } proxyOp; /* v1-v3 */
    struct {
        uint64_t pTimer;
    } kernelCh;
} state_args;

struct ib_descr_v1 {
    uint8_t type;
    union {
        struct {
            int device;
            uint64_t wr_id;
            int opcode;
            int qpNum;
            size_t length;
        } qp;
    };
};

typedef void (*logger_t)(int, unsigned long, const char *, int, const char *, ...);
typedef struct {
    const char *name;
    int (*init)(void **ctx, int *mask, const char *commName, uint64_t commHash, int nNodes, int nranks, int rank,
                logger_t);
    int (*startEvent)(void *ctx, void **h, void *descr);
    int (*stopEvent)(void *h);
    int (*recordEventState)(void *h, int state, state_args *a);
    int (*finalize)(void *ctx);
} prof_v4;
typedef struct {
    const char *name;
    int (*init)(void **ctx, uint64_t commId, int *mask, const char *commName, int nNodes, int nranks, int rank,
                logger_t);
    int (*startEvent)(void *ctx, void **h, void *descr);
    int (*stopEvent)(void *h);
    int (*recordEventState)(void *h, int state, state_args *a);
    int (*finalize)(void *ctx);
} prof_v5;
typedef struct {
    const char *name;
    int (*init)(void **ctx, int *mask);
    int (*startEvent)(void *ctx, void **h, void *descr);
    int (*stopEvent)(void *h);
    int (*recordEventState)(void *h, int state, state_args *a);
    int (*finalize)(void *ctx);
} prof_v3; /* also v1, v2 */

static int v4;
static int legacy; /* 1, 2 or 3: a v1-v3 table (the v4 descriptor rules apply too: a one-byte type) */
static prof_v3 *p3;
static const char *comm_name; /* v1-v3: the current communicator, for the descriptors */
static uint64_t comm_hash;
static prof_v4 *p4;
static prof_v5 *p5;
static int events, failures; /* updated atomically: threads share them */

static int (*start_fn)(void *, void **, void *);
static int (*stop_fn)(void *);
static int (*state_fn)(void *, int, state_args *);

static void check(int rc, const char *what)
{
    if (rc != 0) {
        fprintf(stderr, "plugin_driver: %s returned %d\n", what, rc);
        __atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
    }
}

/* One descriptor of either version, garbage-filled first. */
union any_descr {
    descr_v3 d3;
    descr_v4 d4;
    descr_v5 d5;
};
static void *start(void *ctx, int mask, uint64_t type, void *parent, int rank, void (*fill)(union any_descr *, void *),
                   void *arg)
{
    if (!(mask & (int)type)) return NULL;
    union any_descr d;
    memset(&d, 0xA5, sizeof d);
    if (v4) {
        d.d4.type = (uint8_t)type;
        d.d4.parentObj = parent;
        d.d4.rank = rank;
    } else {
        d.d5.type = type;
        d.d5.parentObj = parent;
        d.d5.rank = rank;
    }
    fill(&d, arg);
    void *h = (void *)1;
    check(start_fn(ctx, &h, &d), "startEvent");
    __atomic_fetch_add(&events, 1, __ATOMIC_RELAXED);
    return h;
}
static void stop(void *h)
{
    if (h) check(stop_fn(h), "stopEvent");
}
static void state(void *h, int s, size_t trans, uint64_t timer)
{
    if (!h) return;
    state_args a;
    memset(&a, 0xA5, sizeof a);
    if (s == S_KERNEL_CH_STOP) a.kernelCh.pTimer = timer;
    else a.proxyStep.transSize = trans;
    check(state_fn(h, s, &a), "recordEventState");
}
/* v1-v3: a ProxyStep's state carries no arguments; a ProxyOp's the running total and steps */
static void state_legacy(void *h, int s, size_t total, int steps)
{
    if (!h) return;
    state_args a;
    memset(&a, 0xA5, sizeof a);
    a.proxyOp.transSize = total;
    a.proxyOp.steps = steps;
    check(state_fn(h, s, s <= S_OP_RECV_DONE ? &a : NULL), "recordEventState");
}

struct coll_arg {
    uint64_t seq;
    void *group;
    void *collapi;
};
static void fill_groupapi(union any_descr *d, void *arg)
{
    (void)arg;
    d->d5.groupApi = (struct groupapi_v5){false, 1};
}
static void fill_collapi(union any_descr *d, void *arg)
{
    (void)arg;
    d->d5.collApi = (struct collapi_v5){"AllReduce", 1048576, "ncclFloat32", -1, (void *)0x99, false};
}
static void fill_launch(union any_descr *d, void *arg)
{
    (void)arg;
    d->d5.kernelLaunch.stream = (void *)0x99;
}
static void fill_group(union any_descr *d, void *arg)
{
    (void)d;
    (void)arg;
}
static void fill_coll(union any_descr *d, void *arg)
{
    struct coll_arg *c = arg;
    if (legacy == 1) { /* ncclFuncAllReduce 4, ncclFloat32 7, NCCL_ALGO_RING 1, NCCL_PROTO_SIMPLE 2 */
        d->d3.coll1 = (struct coll_v1){
            comm_name, comm_hash, c->seq, 4, (void *)0x1000, (void *)0x2000, 1048576, 0, 7, 0, 4194304, 2, 16,
            1,         2,         0,      0};
    } else if (legacy == 2) {
        d->d3.coll2 =
            (struct coll_v2){comm_name,     comm_hash, c->seq, "AllReduce", (void *)0x1000, (void *)0x2000, 1048576, 0,
                             "ncclFloat32", 4194304,   2,      16,          "RING",         "SIMPLE"};
    } else if (legacy == 3) {
        d->d3.coll3 =
            (struct coll_v3){comm_name, comm_hash,     c->seq, "AllReduce", (void *)0x1000, (void *)0x2000, 1048576,
                             0,         "ncclFloat32", 2,      16,          "RING",         "SIMPLE"};
    } else if (v4) {
        d->d4.coll = (struct coll_v4){c->seq, "AllReduce", (void *)0x1000, (void *)0x2000, 1048576, 0, "ncclFloat32",
                                      2,      16,          "RING",         "SIMPLE"};
    } else {
        d->d5.parentObj = c->collapi; /* the CollApi event when enabled, else NULL (then parentGroup) */
        d->d5.coll = (struct coll_v5){c->seq, "AllReduce", (void *)0x1000, (void *)0x2000, 1048576, 0, "ncclFloat32",
                                      2,      16,          "RING",         "SIMPLE",       c->group};
    }
}
static void fill_p2p(union any_descr *d, void *arg)
{
    if (legacy == 1) { /* ncclFuncSend 6, ncclBfloat16 9; the parent is the Group */
        d->d3.p2p1 = (struct p2p_v1){comm_name, comm_hash, 6, (void *)0x3000, 9, 4096, 1};
        return;
    }
    if (legacy) {
        d->d3.p2p3 = (struct p2p_v3){comm_name, comm_hash, "Send", (void *)0x3000, "ncclBfloat16", 4096, 1};
        return;
    }
    d->d5.parentObj = NULL;
    d->d5.p2p = (struct p2p_v5){"Send", (void *)0x3000, "ncclBfloat16", 4096, 1, 1, arg};
}
struct op_arg {
    int channel, is_send;
};
static void fill_op(union any_descr *d, void *arg)
{
    struct op_arg *o = arg;
    struct proxyop p = {4242, (uint8_t)o->channel, o->is_send ? 1 : 3, 4, 4194304, o->is_send};
    if (v4) d->d4.proxyOp = p;
    else d->d5.proxyOp = p;
}
static void fill_step(union any_descr *d, void *arg)
{
    int step = (int)(intptr_t)arg;
    if (v4) d->d4.proxyStep.step = step;
    else d->d5.proxyStep.step = step;
}
static void fill_net(union any_descr *d, void *arg)
{
    struct netplugin n = {(int64_t)((1u << 16) | 1u), arg};
    if (v4) d->d4.netPlugin = n;
    else d->d5.netPlugin = n;
}
static void fill_kch(union any_descr *d, void *arg)
{
    if (legacy) { /* v3: the channel only, no GPU timer */
        d->d3.kernelCh.channelId = (uint8_t)(intptr_t)arg;
        return;
    }
    struct kernelch k = {(uint8_t)(intptr_t)arg, 1000 + (uint64_t)(intptr_t)arg};
    if (v4) d->d4.kernelCh = k;
    else d->d5.kernelCh = k;
}

/* NCCL 2.23-2.26's proxy thread for one Coll: per channel a send and a receive op, four transmissions of 512 KiB
 * each; the op's state (running total) just before the step's; v1 starts one step event per slice step (two). The
 * running total lives in NCCL's pooled proxy argument slot and is never reset (src/proxy.cc: the memset is commented
 * out; net.cc `transSize += size`): here one pool slot per (channel, direction), carried over from op to op. NCCL
 * 2.23 (v1) records a send's SendTransmitted before adding that step's size (net.cc:1135-1138 at v2.23.4-1). */
static __thread size_t pool_total[4];
static void legacy_proxy(void *ctx, int mask, int rank, void *c)
{
    const size_t bytes = 524288;
    int per = legacy == 1 ? 2 : 1;
    for (int ch = 0; ch < 2; ch++) {
        for (int is_send = 1; is_send >= 0; is_send--) {
            struct op_arg oa = {ch, is_send};
            void *op = start(ctx, mask, T_PROXYOP, c, rank, fill_op, &oa);
            size_t total = pool_total[ch * 2 + is_send];
            for (int t = 0; t < 4; t++) {
                void *st[2] = {NULL, NULL};
                for (int k = 0; k < per; k++)
                    st[k] = start(ctx, mask, T_PROXYSTEP, op, rank, fill_step, (void *)(intptr_t)(t * per + k));
                if (is_send) {
                    state_legacy(op, S_OP_SEND_POSTED, total, t);
                    for (int k = 0; k < per; k++) state_legacy(st[k], S_SEND_GPU_WAIT, 0, 0);
                    state_legacy(op, S_OP_SEND_REM_FIFO_WAIT, total, t);
                    if (legacy >= 2) total += bytes;
                    state_legacy(op, S_OP_SEND_TRANSMITTED, total, t + 1);
                    for (int k = 0; k < per; k++) state_legacy(st[k], S_SEND_WAIT, 0, 0);
                    if (legacy == 1) total += bytes;
                    state_legacy(op, S_OP_SEND_DONE, total, t + 1);
                } else {
                    state_legacy(op, S_OP_RECV_POSTED, total, t);
                    for (int k = 0; k < per; k++) state_legacy(st[k], S_RECV_WAIT, 0, 0);
                    total += bytes;
                    state_legacy(op, S_OP_RECV_RECEIVED, total, t + 1);
                    for (int k = 0; k < per; k++) state_legacy(st[k], S_RECV_FLUSH_WAIT, 0, 0);
                    state_legacy(op, S_OP_RECV_TRANSMITTED, total, t + 1);
                    for (int k = 0; k < per; k++) state_legacy(st[k], S_RECV_GPU_WAIT, 0, 0);
                    state_legacy(op, S_OP_RECV_DONE, total, t + 1);
                }
                for (int k = 0; k < per; k++) {
                    struct ib_descr_v1 ib;
                    memset(&ib, 0, sizeof ib);
                    ib.type = 1;
                    ib.qp.wr_id = 0x100 + (uint64_t)t;
                    ib.qp.opcode = is_send ? 4 : 128;
                    ib.qp.qpNum = 0x77;
                    ib.qp.length = bytes;
                    void *n = start(ctx, mask, T_NET, st[k], rank, fill_net, &ib);
                    stop(n);
                    stop(st[k]);
                }
            }
            stop(op);
            pool_total[ch * 2 + is_send] = total;
        }
        void *k = start(ctx, mask, T_KERNELCH, c, rank, fill_kch, (void *)(intptr_t)ch);
        stop(k);
    }
}

static void one_collective(void *ctx, int mask, int rank, uint64_t seq)
{
    /* v5 API events (user thread, at call time): GroupApi -> CollApi, then KernelLaunch at group end. */
    void *ga = v4 ? NULL : start(ctx, mask, T_GROUPAPI, NULL, rank, fill_groupapi, NULL);
    void *capi = v4 ? NULL : start(ctx, mask, T_COLLAPI, ga, rank, fill_collapi, NULL);
    stop(capi);
    void *kl = v4 ? NULL : start(ctx, mask, T_KERNELLAUNCH, ga, rank, fill_launch, NULL);
    stop(kl);
    stop(ga);
    void *g = start(ctx, mask, T_GROUP, NULL, rank, fill_group, NULL);
    struct coll_arg ca = {seq, g, capi};
    void *c = start(ctx, mask, T_COLL, v4 ? g : NULL, rank, fill_coll, &ca);
    stop(c); /* enqueued */
    void *p = !v4      ? start(ctx, mask, T_P2P, NULL, rank, fill_p2p, g)
              : legacy ? start(ctx, mask, T_P2P, g, rank, fill_p2p, NULL)
                       : NULL;
    stop(p);
    stop(g);
    if (legacy) {
        legacy_proxy(ctx, mask, rank, c);
        return;
    }
    /* Proxy thread, later: the Coll handle is still the parent. */
    for (int ch = 0; ch < 2; ch++) {
        for (int is_send = 1; is_send >= 0; is_send--) {
            struct op_arg oa = {ch, is_send};
            void *op = start(ctx, mask, T_PROXYOP, c, rank, fill_op, &oa);
            state(op, S_OP_IN_PROGRESS, 0, 0);
            for (int s = 0; s < 4; s++) {
                void *st = start(ctx, mask, T_PROXYSTEP, op, rank, fill_step, (void *)(intptr_t)s);
                size_t bytes = 524288;
                if (is_send) {
                    state(st, S_SEND_GPU_WAIT, 0, 0);
                    state(st, S_SEND_PEER_WAIT, 0, 0);
                    state(st, S_SEND_WAIT, bytes, 0);
                } else {
                    state(st, S_RECV_WAIT, 0, 0);
                    state(st, S_RECV_FLUSH_WAIT, bytes, 0);
                    state(st, S_RECV_GPU_WAIT, 0, 0);
                }
                struct ib_descr_v1 ib;
                memset(&ib, 0, sizeof ib);
                ib.type = 1;
                ib.qp.device = 0;
                ib.qp.wr_id = 0x100 + (uint64_t)s;
                ib.qp.opcode = is_send ? 4 : 128;
                ib.qp.qpNum = 0x77;
                ib.qp.length = bytes;
                void *n = start(ctx, mask, T_NET, st, rank, fill_net, &ib);
                stop(n);
                stop(st);
            }
            stop(op);
        }
        void *k = start(ctx, mask, T_KERNELCH, c, rank, fill_kch, (void *)(intptr_t)ch);
        state(k, S_KERNEL_CH_STOP, 0, 2000 + (uint64_t)ch);
        stop(k);
    }
}

struct thr {
    int i, ncoll;
};
static void *thread_main(void *arg)
{
    struct thr *t = arg;
    void *ctx;
    int mask = 0;
    uint64_t hash = 0x1000 + (uint64_t)t->i;
    if (legacy) {
        fprintf(stderr, "plugin_driver: threads with v1-v3 are not supported\n");
        exit(2);
    }
    check(v4 ? p4->init(&ctx, &mask, "thr", hash, 1, 8, t->i, NULL)
             : p5->init(&ctx, hash, &mask, "thr", 1, 8, t->i, NULL),
          "init");
    for (int n = 0; n < t->ncoll; n++) one_collective(ctx, mask, t->i, (uint64_t)n);
    check(v4 ? p4->finalize(ctx) : p5->finalize(ctx), "finalize");
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: plugin_driver v1|v2|v3|v4|v5 NCOLL [NTHREADS]\n");
        return 2;
    }
    if (argv[1][0] == 'v' && argv[1][1] >= '1' && argv[1][1] <= '3' && !argv[1][2]) legacy = argv[1][1] - '0';
    v4 = legacy || !strcmp(argv[1], "v4");
    int ncoll = atoi(argv[2]);
    const char *name = getenv("NCCL_PROFILER_PLUGIN");
    void *lib = NULL;
    if (name && !strncasecmp(name, "STATIC_PLUGIN", strlen(name))) lib = dlopen(NULL, RTLD_NOW | RTLD_LOCAL);
    else if (name) lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "plugin_driver: cannot open the plugin: %s\n", dlerror());
        return 1;
    }
    if (legacy) {
        char sym[32];
        snprintf(sym, sizeof sym, "ncclProfiler_v%d", legacy);
        p3 = dlsym(lib, sym);
        if (!p3) return fprintf(stderr, "no %s\n", sym), 1;
        start_fn = p3->startEvent, stop_fn = p3->stopEvent, state_fn = p3->recordEventState;
    } else if (v4) {
        p4 = dlsym(lib, "ncclProfiler_v4");
        if (!p4) return fprintf(stderr, "no ncclProfiler_v4\n"), 1;
        start_fn = p4->startEvent, stop_fn = p4->stopEvent, state_fn = p4->recordEventState;
    } else {
        p5 = dlsym(lib, "ncclProfiler_v5");
        if (!p5) return fprintf(stderr, "no ncclProfiler_v5\n"), 1;
        start_fn = p5->startEvent, stop_fn = p5->stopEvent, state_fn = p5->recordEventState;
    }
    if (argc > 3) {
        int nt = atoi(argv[3]);
        pthread_t th[64];
        struct thr args[64];
        if (nt < 1 || nt > 64) return 2;
        for (int i = 0; i < nt; i++) {
            args[i] = (struct thr){i, ncoll};
            pthread_create(&th[i], NULL, thread_main, &args[i]);
        }
        for (int i = 0; i < nt; i++) pthread_join(th[i], NULL);
        printf("events=%d failures=%d\n", events, failures);
        return failures ? 1 : 0;
    }
    const struct {
        uint64_t hash;
        int rank, nranks;
        const char *name;
    } comms[2] = {{0x1111, 0, 2, "world"}, {0x2222, 1, 4, "split"}};
    void *ctx[2];
    int mask[2];
    for (int i = 0; i < 2; i++) {
        mask[i] = 0x5a5a;
        int rc =
            legacy ? p3->init(&ctx[i], &mask[i])
            : v4   ? p4->init(&ctx[i], &mask[i], comms[i].name, comms[i].hash, 1, comms[i].nranks, comms[i].rank, NULL)
                   : p5->init(&ctx[i], comms[i].hash, &mask[i], comms[i].name, 1, comms[i].nranks, comms[i].rank, NULL);
        check(rc, "init");
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int n = 0; n < ncoll; n++)
        for (int i = 0; i < 2; i++) {
            comm_name = comms[i].name;
            comm_hash = comms[i].hash;
            one_collective(ctx[i], mask[i], comms[i].rank, (uint64_t)n);
        }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ns = (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec);
    int calls = events * 2 + events; /* start + stop per event, and about one state update per event */
    if (getenv("PLUGIN_BENCH"))
        fprintf(stderr, "plugin_driver: %d events in %.3f ms: %.0f ns per event (~%.0f ns per callback)\n", events,
                ns / 1e6, ns / events, ns / calls);
    for (int i = 0; i < 2; i++) {
        check(legacy ? p3->finalize(ctx[i]) : v4 ? p4->finalize(ctx[i]) : p5->finalize(ctx[i]), "finalize");
        printf("comm %d mask=0x%x\n", i, mask[i]);
    }
    /* NULL handles (a plugin that dropped an event) must be accepted by every callback. */
    check(stop_fn(NULL), "stopEvent(NULL)");
    check(state_fn(NULL, S_SEND_WAIT, NULL), "recordEventState(NULL)");
    printf("events=%d failures=%d\n", events, failures);
    return failures ? 1 : 0;
}
