/* NCCL profiler plugin, in librailscope.so itself: exports ncclProfiler_v1 (NCCL 2.23), _v2 (2.24), _v3
 * (2.25-2.26), _v4 (2.27), _v5 (2.28) and _v6 (2.29+, same callbacks as v5; CE events are not requested).
 * `railscope record` (or the library itself, preload/entry_env.c) sets NCCL_PROFILER_PLUGIN to this library;
 * NCCL picks the newest table it knows and calls init once per communicator.
 *
 * The ABI below is declared from NCCL's public profiler headers (github.com/NVIDIA/nccl):
 * ext-profiler/example/nccl/profiler_v1.h - profiler_v5.h, net_ib_v1.h and net_socket_v1.h at tag v2.28.9-1,
 * and src/include/plugin/profiler/profiler_v6.h at v2.29.2-1 (the example headers moved to
 * plugins/profiler/example/nccl/ in v2.30). No NCCL header is needed, so this file is always built;
 * docs/cuda-nccl.md lists what is recorded.
 *
 * v1-v3 (NCCL 2.23; 2.24 and 2.25 load v2, 2.26 v3) differ in three ways the code below bridges:
 *   - init gets no communicator. Its hash comes with each Coll and P2p; the context announces itself with
 *     NCCL_PROF_INIT on its first one, taking its size from the NCCL call in progress on that thread
 *     (rs_nccl_call_comm) or from the ncclCommInit wrapper the init ran inside (rs_nccl_prof_bind: plain
 *     ncclCommInitRank only; Config/Split/Scalable run init on a thread of NCCL's before 2.28).
 *   - v1 gives function, datatype, algorithm and protocol as enum codes, named here as 2.24+ names them.
 *   - a ProxyStep's state update carries no size. NCCL gives the step's ProxyOp a running total just before
 *     (SendTransmitted / RecvReceived); the step takes the difference. The total is never reset by NCCL (its proxy
 *     argument slots are pooled and `+=` only, src/transport/net.cc and src/proxy.cc at v2.23.4-1 - v2.26.6-1), so
 *     the op's first state (Send/RecvPosted) is its base. NCCL 2.23 adds a send step's size only after that
 *     step's SendTransmitted: there a send step carries its predecessor's bytes (the first 0, the last op step's
 *     bytes are lost; docs/cuda-nccl.md). The ProxyOps' own states (four per step; v4+ has one per op) are not
 *     recorded.
 *
 * Cost: NCCL calls these on its user and proxy threads for every collective and network step, so the
 * callbacks never allocate or lock. Each event gets a slot from a preallocated ring (claimed with one
 * atomic add + CAS), the slot holds the trace event being built, and stopEvent stamps `end` and emits it.
 * A slot is reused only after the ring wraps, so a child (ProxyOp started on the proxy thread after its
 * Coll was stopped at enqueue time) can still read its parent's handle. No free slot: the event is
 * dropped and counted (NCCL gets a NULL handle, which every callback here accepts).
 *
 * Mask (RAILSCOPE_NCCL_MASK): a number, or a comma list of group, coll, p2p, proxyop, proxystep, proxyctrl,
 * kernelch, net, groupapi, collapi, p2papi, kernellaunch, api (the four API kinds), default, all, none.
 * Default = group,coll,p2p,proxyop,proxystep,net. NCCL enables a requested event's ancestors itself. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include "preload/rs_gpu_common.h"
#include "tracer/rs_tracer.h"

/* ---- ABI (NCCL's profiler plugin interface) ---- */
typedef int rs_nccl_result; /* ncclResult_t: 0 ncclSuccess, 2 ncclSystemError */
typedef void (*rs_nccl_logger)(int level, unsigned long flags, const char *file, int line, const char *fmt, ...);

#define RS_NCCL_SUCCESS      0
#define RS_NCCL_SYSTEM_ERROR 2

/* Event type bits (nccl_profiler.h). */
/* clang-format off */
#define RS_NP_X(X)                                                                                        \
    X(group, 1u << 0)                                                                                     \
    X(coll, 1u << 1)                                                                                      \
    X(p2p, 1u << 2)                                                                                       \
    X(proxyop, 1u << 3)                                                                                   \
    X(proxystep, 1u << 4) X(proxyctrl, 1u << 5) X(kernelch, 1u << 6) X(net, 1u << 7) X(groupapi, 1u << 8) \
        X(collapi, 1u << 9) X(p2papi, 1u << 10) X(kernellaunch, 1u << 11)
/* clang-format on */
enum {
#define RS_NP_ENUM(name, bit) RS_NP_##name = bit,
    RS_NP_X(RS_NP_ENUM)
#undef RS_NP_ENUM
};
#define RS_NP_DEFAULT (RS_NP_group | RS_NP_coll | RS_NP_p2p | RS_NP_proxyop | RS_NP_proxystep | RS_NP_net)
#define RS_NP_API     (RS_NP_groupapi | RS_NP_collapi | RS_NP_p2papi | RS_NP_kernellaunch)

/* ncclProfilerEventState_t values used here. */
enum {
    RS_NS_OP_SEND_TRANSMITTED = 2, /* v1-v3 ProxyOp states with the op's running transfer total */
    RS_NS_OP_RECV_RECEIVED = 5,
    RS_NS_SEND_WAIT = 9,
    RS_NS_RECV_FLUSH_WAIT = 11,
    RS_NS_KERNEL_CH_STOP = 22,
};

/* Net plugin ids: type in the high 16 bits, descriptor version in the low 16. */
#define RS_NET_TYPE_MASK 0xFFFF0000u
#define RS_NET_TYPE_IB   (1u << 16)
#define RS_NET_TYPE_SOCK (2u << 16)

/* The event descriptor. v4's `type` is a uint8_t, v5/v6's a uint64_t; parentObj, rank and the union sit
 * at the same offsets in all three (8, 16, 24), and every union member's fields are laid out alike; v4
 * lacks coll.parentGroup / p2p.parentGroup and the API members, which are therefore only read for v5+. */
struct rs_nccl_descr {
    uint64_t type; /* v4: only the low byte is the type (little-endian), the rest is padding */
    void *parentObj;
    int rank;
    union {
        struct {
            bool graphCaptured;
            int groupDepth;
        } groupApi;
        struct {
            const char *func;
            size_t count;
            const char *datatype;
            int root;
            void *stream;
            bool graphCaptured;
        } collApi;
        struct {
            const char *func;
            size_t count;
            const char *datatype;
            void *stream;
            bool graphCaptured;
        } p2pApi;
        struct {
            void *stream;
        } kernelLaunch;
        struct {
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
            void *parentGroup; /* v5+ */
        } coll;
        struct {
            const char *func;
            void *buff;
            const char *datatype;
            size_t count;
            int peer;
            uint8_t nChannels;
            void *parentGroup; /* v5+ */
        } p2p;
        struct {
            pid_t pid;
            uint8_t channelId;
            int peer;
            int nSteps;
            int chunkSize;
            int isSend;
        } proxyOp;
        struct {
            int step;
        } proxyStep;
        struct {
            uint8_t channelId;
            uint64_t pTimer;
        } kernelCh;
        struct {
            int64_t id;
            void *data;
        } netPlugin;
    };
};
/* v1-v3's Coll and P2p members (the union at the same offset 24; ProxyOp, ProxyStep, KernelCh's channel and
 * NetPlugin are laid out as in v4). v2 and v3 differ only by coll.trafficBytes. */
struct rs_nccl_coll_v3 {
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
struct rs_nccl_coll_v2 {
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
struct rs_nccl_coll_v1 {
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
struct rs_nccl_p2p_v3 { /* also v2 */
    const char *name;
    uint64_t commHash;
    const char *func;
    void *buff;
    const char *datatype;
    size_t count;
    int peer;
};
struct rs_nccl_p2p_v1 {
    const char *name;
    uint64_t commHash;
    uint8_t func;
    void *buff;
    uint8_t datatype;
    size_t count;
    int peer;
};
_Static_assert(offsetof(struct rs_nccl_descr, parentObj) == 8, "descr layout");
_Static_assert(offsetof(struct rs_nccl_descr, rank) == 16, "descr layout");
_Static_assert(offsetof(struct rs_nccl_descr, coll) == 24, "descr layout");
_Static_assert(offsetof(struct rs_nccl_descr, coll.parentGroup) == 24 + 80, "descr layout");

union rs_nccl_state_args {
    struct {
        size_t transSize;
    } proxyStep;
    struct {
        int appendedProxyOps;
    } proxyCtrl;
    struct {
        void *data;
    } netPlugin;
    struct {
        uint64_t pTimer;
    } kernelCh;
};

/* NET_IB descriptor v1 and socket descriptor v1 (net_ib_v1.h / net_socket_v1.h). */
struct rs_nccl_net_ib_v1 {
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
struct rs_nccl_net_sock_v1 {
    uint8_t type;
    union {
        struct {
            int fd;
            int op;
            size_t length;
        } sock;
    };
};

typedef rs_nccl_result (*rs_start_fn)(void *ctx, void **eHandle, struct rs_nccl_descr *d);
typedef rs_nccl_result (*rs_stop_fn)(void *eHandle);
typedef rs_nccl_result (*rs_state_fn)(void *eHandle, int eState, union rs_nccl_state_args *a);
typedef rs_nccl_result (*rs_fini_fn)(void *ctx);

struct rs_nccl_profiler_v4 {
    const char *name;
    rs_nccl_result (*init)(void **ctx, int *mask, const char *commName, uint64_t commHash, int nNodes, int nranks,
                           int rank, rs_nccl_logger logfn);
    rs_start_fn startEvent;
    rs_stop_fn stopEvent;
    rs_state_fn recordEventState;
    rs_fini_fn finalize;
};
struct rs_nccl_profiler_v3 { /* also v1, v2 */
    const char *name;
    rs_nccl_result (*init)(void **ctx, int *mask);
    rs_start_fn startEvent;
    rs_stop_fn stopEvent;
    rs_state_fn recordEventState;
    rs_fini_fn finalize;
};
struct rs_nccl_profiler_v5 { /* also v6 */
    const char *name;
    rs_nccl_result (*init)(void **ctx, uint64_t commId, int *mask, const char *commName, int nNodes, int nranks,
                           int rank, rs_nccl_logger logfn);
    rs_start_fn startEvent;
    rs_stop_fn stopEvent;
    rs_state_fn recordEventState;
    rs_fini_fn finalize;
};

/* ---- state ---- */
struct rs_nccl_ctx {
    uint64_t comm_hash;
    int rank, nranks, nnodes, version;
    int mask;      /* what init returned */
    int announced; /* v1-v3: NCCL_PROF_INIT emitted (on the first Coll or P2p, which carries the hash) */
    int told;      /* the API wrapper of a call this communicator's Coll started in has its hash */
};

struct rs_slot {
    uint64_t id;        /* handle in the trace */
    uint32_t busy;      /* 1 while NCCL holds the handle */
    uint16_t kind;      /* RS_EV_* being built */
    uint16_t is_send;   /* ProxyOp/ProxyStep */
    uint32_t legacy;    /* a v1-v3 ProxyOp: 1, then 2 once its base total is known */
    union {             /* v1-v3 (see the top of this file) */
        uint64_t total; /* ProxyOp: the running total NCCL gave last */
        const void *op; /* ProxyStep: its ProxyOp's slot */
        void *ctx;      /* Group: its context, whose hash may come after the Group started */
    } lg;
    uint64_t lg_step; /* ProxyOp: the newest step's bytes, until a step takes them */
    union {
        struct rs_ev_hdr h;
        struct rs_ev_NCCL_GROUP group;
        struct rs_ev_NCCL_COLL coll;
        struct rs_ev_NCCL_P2P p2p;
        struct rs_ev_NCCL_PROXY_OP op;
        struct rs_ev_NCCL_PROXY_STEP step;
        struct rs_ev_NCCL_KERNEL_CH kch;
        struct rs_ev_NCCL_NET_IB ib;
        struct rs_ev_NCCL_NET_SOCK sock;
        struct rs_ev_NCCL_PROF_API api;
    } ev;
};

struct rs_ring {
    struct rs_slot *slots;
    uint64_t mask;
    uint64_t next;
};

#define RS_HOST_SLOTS  4096u  /* group/coll/p2p/API events: long-lived parents */
#define RS_PROXY_SLOTS 16384u /* proxy ops/steps, kernel channels, net events */

static struct rs_ring host_ring, proxy_ring;
static uint64_t next_handle;
static uint64_t slot_drops;
static int prof_mask = -1;
static struct rs_ptrcache nccl_strs;

static int parse_mask(const char *v)
{
    if (!v || !*v) return RS_NP_DEFAULT;
    char *end;
    unsigned long n = strtoul(v, &end, 0);
    if (end != v && *end == 0) return (int)n;
    int mask = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (!strcasecmp(t, "default")) mask |= RS_NP_DEFAULT;
        else if (!strcasecmp(t, "all")) mask |= 0xfff;
        else if (!strcasecmp(t, "none")) mask |= 0;
        else if (!strcasecmp(t, "api")) mask |= RS_NP_API;
#define RS_NP_NAME(name, bit) else if (!strcasecmp(t, #name)) mask |= (int)(bit);
        RS_NP_X(RS_NP_NAME)
#undef RS_NP_NAME
        else rs_warn("RAILSCOPE_NCCL_MASK: unknown event '%s' ignored", t); }
    return mask;
}

static int ring_init(struct rs_ring *r, unsigned n)
{
    struct rs_slot *s = __atomic_load_n(&r->slots, __ATOMIC_ACQUIRE);
    if (s) return 0;
    s = calloc(n, sizeof *s);
    if (!s) return -1;
    /* The mask before the slots are published: a claim that sees the slots sees their mask (stored after them, a
     * claim on another thread could index with mask 0). Every init stores the same value; atomic, as two
     * communicators initialised on two threads at once store it together (TSan, session 32). */
    __atomic_store_n(&r->mask, (uint64_t)n - 1, __ATOMIC_RELAXED);
    struct rs_slot *expect = NULL;
    if (!__atomic_compare_exchange_n(&r->slots, &expect, s, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        free(s); /* another communicator's init won */
    return 0;
}

static struct rs_slot *claim(struct rs_ring *r)
{
    struct rs_slot *base = __atomic_load_n(&r->slots, __ATOMIC_ACQUIRE);
    if (RS_UNLIKELY(!base)) return NULL;
    for (int tries = 0; tries < 8; tries++) {
        uint64_t n = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED);
        struct rs_slot *s = &base[n & __atomic_load_n(&r->mask, __ATOMIC_RELAXED)];
        uint32_t expect = 0;
        if (__atomic_compare_exchange_n(&s->busy, &expect, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
            /* Children on other threads read a parent's id while its slot may be recycled: atomic, so
             * they see the old or the new id, never a torn one. */
            __atomic_store_n(&s->id, __atomic_add_fetch(&next_handle, 1, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
            return s;
        }
    }
    __atomic_fetch_add(&slot_drops, 1, __ATOMIC_RELAXED);
    return NULL;
}

/* Handle of a parent object NCCL hands back to us (one of our slots), 0 for none. */
static inline uint64_t handle_of(const void *p)
{
    return p ? __atomic_load_n(&((const struct rs_slot *)p)->id, __ATOMIC_RELAXED) : 0;
}


/* ---- callbacks ---- */
static void emit_prof_init(const struct rs_nccl_ctx *c, const char *name, uint64_t ts)
{
    struct rs_ev_NCCL_PROF_INIT ev;
    RS_EV_INIT(&ev, NCCL_PROF_INIT, ts);
    ev.comm_hash = c->comm_hash;
    ev.context = (uint64_t)(uintptr_t)c;
    ev.rank = c->rank;
    ev.nranks = c->nranks;
    ev.mask = (uint32_t)c->mask;
    ev.version = (uint32_t)c->version;
    ev.comm_name = name ? rs_intern(name) : 0;
    ev.nnodes = c->nnodes;
    rs_emit(&ev.h);
}

static rs_nccl_result init_common(void **context, int version, uint64_t hash, int *mask, const char *name, int nnodes,
                                  int nranks, int rank)
{
    rs_core_start();
    rs_nlog_decide_echo();
    *context = NULL;
    if (__atomic_load_n(&prof_mask, __ATOMIC_RELAXED) < 0)
        __atomic_store_n(&prof_mask, parse_mask(getenv("RAILSCOPE_NCCL_MASK")), __ATOMIC_RELAXED);
    struct rs_nccl_ctx *c = calloc(1, sizeof *c); /* once per communicator; never freed (late events) */
    if (rs_nccl_init_tls.active) {                /* inside our ncclCommInit* wrapper on this thread */
        if (version >= 4) {
            rs_nccl_init_tls.seen = 1;
            rs_nccl_init_tls.comm_hash = hash;
        } else {
            rs_nccl_init_tls.ctx = c; /* no hash yet: the wrapper binds rank and size */
        }
    }
    int want = rs_on(RS_FAM_nccl) ? prof_mask : 0;
    if (want && (ring_init(&host_ring, RS_HOST_SLOTS) || ring_init(&proxy_ring, RS_PROXY_SLOTS))) {
        rs_warn("NCCL profiler plugin: out of memory for event slots; NCCL profiling disabled");
        want = 0;
    }
    if (!c) want = 0;
    else {
        c->comm_hash = hash;
        c->rank = rank;
        c->nranks = nranks;
        c->nnodes = nnodes;
        c->version = version;
    }
    if (version < 5) want &= 0xff; /* no API events before v5 */
    if (version < 3) want &= 0x3f; /* no KernelCh or NetPlugin before v3 */
    if (c) c->mask = want;
    *mask = want;
    *context = c;
    /* no reentrancy guard in the plugin: NCCL calls it, never the core */
    if (c && version >= 4 && rs_on(RS_FAM_nccl)) emit_prof_init(c, name, rs_now());
    return RS_NCCL_SUCCESS;
}

void rs_nccl_prof_bind(void *ctx, int rank, int nranks)
{
    struct rs_nccl_ctx *c = ctx;
    if (!c || __atomic_load_n(&c->announced, __ATOMIC_ACQUIRE)) return;
    if (rank >= 0) __atomic_store_n(&c->rank, rank, __ATOMIC_RELAXED);
    if (nranks > 0) __atomic_store_n(&c->nranks, nranks, __ATOMIC_RELAXED);
}

/* v1-v3: the communicator's hash arrives with its first Coll or P2p; announce the context once, stamped with that
 * event's start (so that it precedes the event in time as in the file). */
static void legacy_announce(struct rs_nccl_ctx *c, uint64_t hash, int rank, const char *name, uint64_t ts)
{
    int expect = 0;
    if (!c || __atomic_load_n(&c->announced, __ATOMIC_ACQUIRE) ||
        !__atomic_compare_exchange_n(&c->announced, &expect, 1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
        return;
    int r = -1, n = -1;
    if (c->nranks <= 0 && rs_nccl_call_comm(&r, &n) && n > 0) __atomic_store_n(&c->nranks, n, __ATOMIC_RELAXED);
    if (c->rank < 0) __atomic_store_n(&c->rank, rank, __ATOMIC_RELAXED);
    __atomic_store_n(&c->comm_hash, hash, __ATOMIC_RELEASE);
    if (rs_on(RS_FAM_nccl)) emit_prof_init(c, name, ts);
}

static uint32_t sid(const char *s) { return rs_ptrcache_id(&nccl_strs, s); }

/* v1's enum codes (NCCL 2.23's src/include/nccl_common.h, nccl.h), named as 2.24+ names them (src/collectives.cc;
 * except ncclUint8, which it calls "Unknown"). */
static const char *v1_name(const char *const *names, unsigned n, unsigned code)
{
    return code < n ? names[code] : "Unknown";
}
static const char *const v1_funcs[] = {"Broadcast", "Reduce",   "AllGather", "ReduceScatter",
                                       "AllReduce", "SendRecv", "Send",      "Recv"};
static const char *const v1_types[] = {"ncclInt8",   "ncclUint8",   "ncclInt32",   "ncclUint32",  "ncclInt64",
                                       "ncclUint64", "ncclFloat16", "ncclFloat32", "ncclFloat64", "ncclBfloat16"};
static const char *const v1_algos[] = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
static const char *const v1_protos[] = {"LL", "LL128", "SIMPLE"};
#define V1_NAME(tab, code) v1_name(tab, sizeof tab / sizeof tab[0], code)

/* A Coll's or P2p's fields, whichever table version NCCL called. */
struct host_fields {
    uint64_t hash, seq;
    size_t count;
    const char *func, *datatype, *algo, *proto, *name;
    int root, peer;
    uint8_t nchannels, nwarps;
    const void *group; /* v5+: parentGroup */
};

static void coll_fields(const struct rs_nccl_ctx *c, int version, const struct rs_nccl_descr *d, struct host_fields *f)
{
    memset(f, 0, sizeof *f);
    f->peer = -1;
    if (version >= 4) {
        f->hash = c ? __atomic_load_n(&c->comm_hash, __ATOMIC_RELAXED) : 0;
        f->seq = d->coll.seqNumber;
        f->count = d->coll.count;
        f->func = d->coll.func;
        f->datatype = d->coll.datatype;
        f->algo = d->coll.algo;
        f->proto = d->coll.proto;
        f->root = d->coll.root;
        f->nchannels = d->coll.nChannels;
        f->nwarps = d->coll.nWarps;
        f->group = version >= 5 ? d->coll.parentGroup : NULL;
    } else if (version >= 2) {
        const struct rs_nccl_coll_v3 *v3 = (const void *)&d->coll;
        const struct rs_nccl_coll_v2 *v2 = (const void *)&d->coll;
        f->hash = v3->commHash;
        f->name = v3->name;
        f->seq = v3->seqNumber;
        f->count = v3->count;
        f->func = v3->func;
        f->datatype = v3->datatype;
        f->root = v3->root;
        f->nchannels = version == 3 ? v3->nMaxChannels : v2->nMaxChannels;
        f->nwarps = version == 3 ? v3->nWarps : v2->nWarps;
        f->algo = version == 3 ? v3->algo : v2->algo;
        f->proto = version == 3 ? v3->proto : v2->proto;
    } else {
        const struct rs_nccl_coll_v1 *v1 = (const void *)&d->coll;
        f->hash = v1->commHash;
        f->name = v1->name;
        f->seq = v1->seqNumber;
        f->count = v1->count;
        f->func = V1_NAME(v1_funcs, v1->func);
        f->datatype = V1_NAME(v1_types, v1->datatype);
        f->root = v1->root;
        f->nchannels = v1->nMaxChannels;
        f->nwarps = v1->nWarps;
        f->algo = V1_NAME(v1_algos, v1->algo);
        f->proto = V1_NAME(v1_protos, v1->proto);
    }
}

static void p2p_fields(const struct rs_nccl_ctx *c, int version, const struct rs_nccl_descr *d, struct host_fields *f)
{
    memset(f, 0, sizeof *f);
    f->root = -1;
    if (version >= 4) {
        f->hash = c ? __atomic_load_n(&c->comm_hash, __ATOMIC_RELAXED) : 0;
        f->count = d->p2p.count;
        f->func = d->p2p.func;
        f->datatype = d->p2p.datatype;
        f->peer = d->p2p.peer;
        f->nchannels = d->p2p.nChannels;
        f->group = version >= 5 ? d->p2p.parentGroup : NULL;
    } else if (version >= 2) {
        const struct rs_nccl_p2p_v3 *v3 = (const void *)&d->p2p;
        f->hash = v3->commHash;
        f->name = v3->name;
        f->count = v3->count;
        f->func = v3->func;
        f->datatype = v3->datatype;
        f->peer = v3->peer;
    } else {
        const struct rs_nccl_p2p_v1 *v1 = (const void *)&d->p2p;
        f->hash = v1->commHash;
        f->name = v1->name;
        f->count = v1->count;
        f->func = V1_NAME(v1_funcs, v1->func);
        f->datatype = V1_NAME(v1_types, v1->datatype);
        f->peer = v1->peer;
    }
}

/* startEvent's phases, one per event family: each claims a slot from its ring and fills the event being
 * built; NULL = no event (no free slot, unknown descriptor, API kinds before v5). */
static struct rs_slot *start_host(struct rs_nccl_ctx *c, int version, uint64_t type, const struct rs_nccl_descr *d,
                                  uint64_t now)
{
    struct rs_slot *s;
    struct host_fields f;
    if (type == RS_NP_coll) coll_fields(c, version, d, &f);
    else if (type == RS_NP_p2p) p2p_fields(c, version, d, &f);
    if (version < 4 && type != RS_NP_group) legacy_announce(c, f.hash, d->rank, f.name, now);
    if (type != RS_NP_group && !__atomic_load_n(&c->told, __ATOMIC_RELAXED) && rs_nccl_call_learn(f.hash))
        __atomic_store_n(&c->told, 1, __ATOMIC_RELAXED); /* once per communicator */
    if (!(s = claim(&host_ring))) return NULL;
    if (type == RS_NP_group) {
        RS_EV_INIT(&s->ev.group, NCCL_GROUP, now);
        s->ev.group.handle = s->id;
        s->ev.group.comm_hash = c ? __atomic_load_n(&c->comm_hash, __ATOMIC_ACQUIRE) : 0;
        s->lg.ctx = version < 4 ? c : NULL; /* v1-v3: the hash may come with this Group's first Coll */
    } else if (type == RS_NP_coll) {
        struct rs_ev_NCCL_COLL *e = &s->ev.coll;
        RS_EV_INIT(e, NCCL_COLL, now);
        e->handle = s->id;
        e->comm_hash = f.hash;
        e->seq = f.seq;
        e->count = f.count;
        e->parent = handle_of(d->parentObj ? d->parentObj : f.group);
        e->func = sid(f.func);
        e->algo = sid(f.algo);
        e->proto = sid(f.proto);
        e->nchannels = f.nchannels;
        e->nwarps = f.nwarps;
        e->datatype = sid(f.datatype);
        e->rank = d->rank;
        e->root = f.root;
    } else { /* RS_NP_p2p */
        struct rs_ev_NCCL_P2P *e = &s->ev.p2p;
        RS_EV_INIT(e, NCCL_P2P, now);
        e->handle = s->id;
        e->comm_hash = f.hash;
        e->count = f.count;
        e->parent = handle_of(d->parentObj ? d->parentObj : f.group);
        e->func = sid(f.func);
        e->peer = f.peer;
        e->datatype = sid(f.datatype);
        e->nchannels = f.nchannels;
        e->rank = d->rank;
        e->pad = 0;
    }
    return s;
}

static struct rs_slot *start_proxy(int version, uint64_t type, const struct rs_nccl_descr *d, uint64_t now)
{
    struct rs_slot *s;
    if (!(s = claim(&proxy_ring))) return NULL;
    if (type == RS_NP_proxyop) {
        struct rs_ev_NCCL_PROXY_OP *e = &s->ev.op;
        RS_EV_INIT(e, NCCL_PROXY_OP, now);
        e->handle = s->id;
        e->parent = handle_of(d->parentObj);
        e->chunk_size = (uint64_t)(int64_t)d->proxyOp.chunkSize;
        e->channel = d->proxyOp.channelId;
        e->peer = d->proxyOp.peer;
        e->nsteps = (uint32_t)d->proxyOp.nSteps;
        e->is_send = d->proxyOp.isSend ? 1 : 0;
        s->is_send = (uint16_t)e->is_send;
        s->legacy = version < 4; /* base total unknown until the op's first state */
        s->lg.total = 0;
        __atomic_store_n(&s->lg_step, 0, __ATOMIC_RELAXED);
    } else if (type == RS_NP_proxystep) {
        struct rs_ev_NCCL_PROXY_STEP *e = &s->ev.step;
        RS_EV_INIT(e, NCCL_PROXY_STEP, now);
        e->handle = s->id;
        e->parent = handle_of(d->parentObj);
        e->trans_size = 0;
        e->step = (uint32_t)d->proxyStep.step;
        e->is_send =
            d->parentObj ? __atomic_load_n(&((const struct rs_slot *)d->parentObj)->is_send, __ATOMIC_RELAXED) : 0;
        s->is_send = (uint16_t)e->is_send;
        s->lg.op = version < 4 ? d->parentObj : NULL;
    } else { /* RS_NP_kernelch */
        struct rs_ev_NCCL_KERNEL_CH *e = &s->ev.kch;
        RS_EV_INIT(e, NCCL_KERNEL_CH, now);
        e->parent = handle_of(d->parentObj);
        e->gpu_start = version >= 4 ? d->kernelCh.pTimer : 0; /* v3 has no GPU timer */
        e->gpu_stop = 0;
        e->channel = d->kernelCh.channelId;
        e->pad = 0;
    }
    return s;
}

static struct rs_slot *start_net(const struct rs_nccl_descr *d, uint64_t now)
{
    uint32_t id = (uint32_t)d->netPlugin.id;
    const void *data = d->netPlugin.data;
    struct rs_slot *s;
    if (!data || (id & 0xffffu) != 1) return NULL; /* unknown descriptor version */
    if ((id & RS_NET_TYPE_MASK) == RS_NET_TYPE_IB) {
        const struct rs_nccl_net_ib_v1 *ib = data;
        if (!(s = claim(&proxy_ring))) return NULL;
        struct rs_ev_NCCL_NET_IB *e = &s->ev.ib;
        RS_EV_INIT(e, NCCL_NET_IB, now);
        e->parent = handle_of(d->parentObj);
        e->wr_id = ib->qp.wr_id;
        e->length = ib->qp.length;
        e->qp_num = (uint32_t)ib->qp.qpNum;
        e->opcode = (uint32_t)ib->qp.opcode;
        e->device = (uint32_t)ib->qp.device;
        e->pad = 0;
    } else if ((id & RS_NET_TYPE_MASK) == RS_NET_TYPE_SOCK) {
        const struct rs_nccl_net_sock_v1 *so = data;
        if (!(s = claim(&proxy_ring))) return NULL;
        struct rs_ev_NCCL_NET_SOCK *e = &s->ev.sock;
        RS_EV_INIT(e, NCCL_NET_SOCK, now);
        e->parent = handle_of(d->parentObj);
        e->length = so->sock.length;
        e->fd = so->sock.fd;
        e->op = so->sock.op;
    } else {
        return NULL;
    }
    return s;
}

static struct rs_slot *start_api(int version, uint64_t type, const struct rs_nccl_descr *d, uint64_t now)
{
    struct rs_slot *s;
    if (version < 5 || !(s = claim(&host_ring))) return NULL;
    struct rs_ev_NCCL_PROF_API *e = &s->ev.api;
    RS_EV_INIT(e, NCCL_PROF_API, now);
    e->handle = s->id;
    e->parent = handle_of(d->parentObj);
    e->type = (uint32_t)type;
    e->count = 0;
    e->stream = 0;
    e->func = 0;
    e->root = -1;
    e->graph = 0;
    if (type == RS_NP_groupapi) {
        e->root = d->groupApi.groupDepth;
        e->graph = d->groupApi.graphCaptured;
    } else if (type == RS_NP_collapi) {
        e->func = sid(d->collApi.func);
        e->count = d->collApi.count;
        e->root = d->collApi.root;
        e->stream = (uint64_t)(uintptr_t)d->collApi.stream;
        e->graph = d->collApi.graphCaptured;
    } else if (type == RS_NP_p2papi) {
        e->func = sid(d->p2pApi.func);
        e->count = d->p2pApi.count;
        e->stream = (uint64_t)(uintptr_t)d->p2pApi.stream;
        e->graph = d->p2pApi.graphCaptured;
    } else {
        e->stream = (uint64_t)(uintptr_t)d->kernelLaunch.stream;
    }
    return s;
}

static rs_nccl_result start_event(void *context, void **eHandle, struct rs_nccl_descr *d)
{
    *eHandle = NULL;
    if (!rs_on(RS_FAM_nccl) || !d) return RS_NCCL_SUCCESS;
    struct rs_nccl_ctx *c = context;
    if (!c) return RS_NCCL_SUCCESS; /* its init failed: the descriptor's version is unknown */
    int version = c->version;
    uint64_t type = version < 5 ? *(const uint8_t *)d : d->type;
    uint64_t now = rs_now();
    struct rs_slot *s;
    switch (type) {
    case RS_NP_group:
    case RS_NP_coll:
    case RS_NP_p2p: s = start_host(c, version, type, d, now); break;
    case RS_NP_proxyop:
    case RS_NP_proxystep:
    case RS_NP_kernelch: s = start_proxy(version, type, d, now); break;
    case RS_NP_net: s = start_net(d, now); break;
    case RS_NP_groupapi:
    case RS_NP_collapi:
    case RS_NP_p2papi:
    case RS_NP_kernellaunch: s = start_api(version, type, d, now); break;
    default: return RS_NCCL_SUCCESS; /* ProxyCtrl, CE events: not requested */
    }
    if (!s) return RS_NCCL_SUCCESS;
    s->kind = s->ev.h.kind;
    *eHandle = s;
    return RS_NCCL_SUCCESS;
}

static rs_nccl_result stop_event(void *eHandle)
{
    struct rs_slot *s = eHandle;
    if (!s) return RS_NCCL_SUCCESS;
    uint64_t now = rs_now();
    if (s->kind == RS_EV_NCCL_GROUP && !s->ev.group.comm_hash && s->lg.ctx) /* v1-v3: learnt meanwhile */
        s->ev.group.comm_hash = __atomic_load_n(&((struct rs_nccl_ctx *)s->lg.ctx)->comm_hash, __ATOMIC_ACQUIRE);
    /* `end` is the first field after the header in every kind a slot holds. */
    ((struct rs_ev_NCCL_GROUP *)&s->ev)->end = now;
    if (rs_on(RS_FAM_nccl)) rs_emit(&s->ev.h);
    __atomic_store_n(&s->busy, 0, __ATOMIC_RELEASE);
    return RS_NCCL_SUCCESS;
}
_Static_assert(offsetof(struct rs_ev_NCCL_COLL, end) == offsetof(struct rs_ev_NCCL_GROUP, end), "end first");
_Static_assert(offsetof(struct rs_ev_NCCL_P2P, end) == offsetof(struct rs_ev_NCCL_GROUP, end), "end first");
_Static_assert(offsetof(struct rs_ev_NCCL_PROXY_OP, end) == offsetof(struct rs_ev_NCCL_GROUP, end), "end first");
_Static_assert(offsetof(struct rs_ev_NCCL_PROXY_STEP, end) == offsetof(struct rs_ev_NCCL_GROUP, end), "end first");
_Static_assert(offsetof(struct rs_ev_NCCL_KERNEL_CH, end) == offsetof(struct rs_ev_NCCL_GROUP, end), "end first");
_Static_assert(offsetof(struct rs_ev_NCCL_NET_IB, end) == offsetof(struct rs_ev_NCCL_GROUP, end), "end first");
_Static_assert(offsetof(struct rs_ev_NCCL_NET_SOCK, end) == offsetof(struct rs_ev_NCCL_GROUP, end), "end first");
_Static_assert(offsetof(struct rs_ev_NCCL_PROF_API, end) == offsetof(struct rs_ev_NCCL_GROUP, end), "end first");

static rs_nccl_result record_state(void *eHandle, int state, union rs_nccl_state_args *a)
{
    struct rs_slot *s = eHandle;
    if (!s || !rs_on(RS_FAM_nccl)) return RS_NCCL_SUCCESS;
    switch (s->kind) {
    case RS_EV_NCCL_PROXY_OP:
        if (s->legacy) { /* v1-v3: keep the step's share of the running total; the state is not recorded */
            if (!a) break;
            uint64_t total = a->proxyStep.transSize;
            if (s->legacy == 1) { /* the op's first state: what NCCL's pooled slot carried before */
                s->legacy = 2;
                s->lg.total = total;
            }
            if (state == RS_NS_OP_SEND_TRANSMITTED || state == RS_NS_OP_RECV_RECEIVED) {
                __atomic_store_n(&s->lg_step, total >= s->lg.total ? total - s->lg.total : 0, __ATOMIC_RELAXED);
                s->lg.total = total;
            }
            break;
        }
        /* fall through */
    case RS_EV_NCCL_PROXY_STEP: {
        struct rs_ev_NCCL_PROXY_STATE ev;
        RS_EV_INIT(&ev, NCCL_PROXY_STATE, rs_now());
        ev.handle = s->id;
        ev.trans_size = 0;
        /* NCCL fills transSize for these two states only; elsewhere the args may be stale. */
        if (state == RS_NS_SEND_WAIT || state == RS_NS_RECV_FLUSH_WAIT) {
            if (s->lg.op && s->kind == RS_EV_NCCL_PROXY_STEP) /* v1-v3: what the op was just given (once) */
                ev.trans_size = __atomic_exchange_n(&((struct rs_slot *)s->lg.op)->lg_step, 0, __ATOMIC_RELAXED);
            else if (a) ev.trans_size = a->proxyStep.transSize;
            if (s->kind == RS_EV_NCCL_PROXY_STEP) s->ev.step.trans_size = ev.trans_size;
        }
        ev.state = (uint32_t)state;
        ev.pad = 0;
        rs_emit(&ev.h);
        break;
    }
    case RS_EV_NCCL_KERNEL_CH:
        if (a && state == RS_NS_KERNEL_CH_STOP) s->ev.kch.gpu_stop = a->kernelCh.pTimer;
        break;
    default: break; /* GroupApi states, net updates: nothing kept */
    }
    return RS_NCCL_SUCCESS;
}

static rs_nccl_result finalize(void *context)
{
    (void)context; /* the context stays allocated: a late stopEvent may still name it */
    uint64_t d = __atomic_exchange_n(&slot_drops, 0, __ATOMIC_RELAXED);
    if (d)
        rs_warn("NCCL profiler plugin: %llu events dropped (more events in flight than slots)", (unsigned long long)d);
    return RS_NCCL_SUCCESS;
}

static rs_nccl_result init_v1(void **ctx, int *mask) { return init_common(ctx, 1, 0, mask, NULL, 0, -1, -1); }
static rs_nccl_result init_v2(void **ctx, int *mask) { return init_common(ctx, 2, 0, mask, NULL, 0, -1, -1); }
static rs_nccl_result init_v3(void **ctx, int *mask) { return init_common(ctx, 3, 0, mask, NULL, 0, -1, -1); }
static rs_nccl_result init_v4(void **ctx, int *mask, const char *name, uint64_t hash, int nnodes, int nranks, int rank,
                              rs_nccl_logger logfn)
{
    (void)logfn;
    return init_common(ctx, 4, hash, mask, name, nnodes, nranks, rank);
}
static rs_nccl_result init_v5(void **ctx, uint64_t id, int *mask, const char *name, int nnodes, int nranks, int rank,
                              rs_nccl_logger logfn)
{
    (void)logfn;
    return init_common(ctx, 5, id, mask, name, nnodes, nranks, rank);
}
static rs_nccl_result init_v6(void **ctx, uint64_t id, int *mask, const char *name, int nnodes, int nranks, int rank,
                              rs_nccl_logger logfn)
{
    (void)logfn;
    return init_common(ctx, 6, id, mask, name, nnodes, nranks, rank);
}

RS_EXPORT struct rs_nccl_profiler_v3 ncclProfiler_v1 = {"railscope", init_v1,      start_event,
                                                        stop_event,  record_state, finalize};
RS_EXPORT struct rs_nccl_profiler_v3 ncclProfiler_v2 = {"railscope", init_v2,      start_event,
                                                        stop_event,  record_state, finalize};
RS_EXPORT struct rs_nccl_profiler_v3 ncclProfiler_v3 = {"railscope", init_v3,      start_event,
                                                        stop_event,  record_state, finalize};
RS_EXPORT struct rs_nccl_profiler_v4 ncclProfiler_v4 = {"railscope", init_v4,      start_event,
                                                        stop_event,  record_state, finalize};
RS_EXPORT struct rs_nccl_profiler_v5 ncclProfiler_v5 = {"railscope", init_v5,      start_event,
                                                        stop_event,  record_state, finalize};
RS_EXPORT struct rs_nccl_profiler_v5 ncclProfiler_v6 = {"railscope", init_v6,      start_event,
                                                        stop_event,  record_state, finalize};

/* ---- the transport NCCL chose, from NCCL's own INFO log ----
 * NCCL tells which transport each connection uses ("Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0",
 * "... via P2P/CUMEM/read", "Using network IB") only in its INFO log; the profiler plugin shows NET hops
 * (ProxyOps) but not which network, and nothing for P2P/SHM. ncclDebugLog is not exported by libnccl, so
 * it cannot be interposed. Instead, when the user has not set NCCL_DEBUG (nor NCCL_DEBUG_FILE) and
 * RAILSCOPE_NCCL_LOG is not "off", the constructor below sets NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,NET
 * and NCCL_DEBUG_FILE=<trace dir>/.nccl-%p.log (NCCL expands %p: one file per process, forked or exec'd
 * children included; a dot file, which trace readers skip), so the application's output does not change;
 * the writer thread's tick reads the process's file, turns connection lines into NCCL_TRANSPORT events and
 * forgets the rest; shutdown reads the remainder and removes the file (a process killed before that leaves
 * it in the trace dir). If the program sets NCCL_DEBUG
 * itself later (os.environ before init), the lines read are echoed to stdout, where NCCL would have
 * written them. RAILSCOPE_NCCL_LOG_DIR (set here, inherited by children) marks the variables as ours.
 * When the user set NCCL_DEBUG and NCCL_DEBUG_FILE, railscope reads that file (never removes it); when
 * NCCL_DEBUG is set without a file (the log goes to stdout), no NCCL_TRANSPORT events are recorded. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

static char nlog_dir[512];         /* ours: the trace directory the log files go to; empty when the log is the user's */
static char nlog_tmpl[600];        /* NCCL_DEBUG_FILE as NCCL expands it (%h host, %p pid) */
static const char *nlog_debug_env; /* getenv("NCCL_DEBUG") right after we set it */
static off_t nlog_off;             /* bytes of the log read so far */
/* Whether the program set NCCL_DEBUG itself after our constructor (it then expects NCCL's log on stdout: what
 * we read is echoed there); -1 until decided. Decided once, on an application thread as NCCL starts
 * (rs_nlog_decide_echo) or at exit, and never in the writer's tick: a getenv there races the program's own
 * setenv/putenv (Python's os.environ), and glibc before 2.40 frees the environment array that a setenv
 * replaces while another thread may be walking it (session 13's crash review). Undecided, the tick leaves the
 * log file unread (it keeps; the next tick or the exit reads on). */
static int nlog_echo = -1;

void rs_nlog_decide_echo(void)
{
    if (!nlog_tmpl[0] || __atomic_load_n(&nlog_echo, __ATOMIC_ACQUIRE) >= 0) return;
    __atomic_store_n(&nlog_echo, nlog_dir[0] && getenv("NCCL_DEBUG") != nlog_debug_env, __ATOMIC_RELEASE);
}
static char nlog_part[2048];
static size_t nlog_part_n;
static uint64_t nlog_last_hash;
static struct {
    uint32_t tid;
    uint64_t hash;
} nlog_tid_comm[16];

static uint32_t nlog_kind(const char *via)
{
    if (!strncmp(via, "NET/IB", 6)) return 3;
    if (!strncmp(via, "NET/Socket", 10)) return 4;
    if (!strncmp(via, "NET/", 4)) return 5;
    if (!strncmp(via, "P2P", 3)) return 1;
    if (!strncmp(via, "SHM", 3)) return 2;
    if (!strncasecmp(via, "CollNet", 7) || !strncmp(via, "COLLNET", 7)) return 6;
    if (!strncasecmp(via, "NVLS", 4)) return 7;
    return 0;
}

static uint64_t nlog_comm_of(uint32_t tid)
{
    for (unsigned i = 0; i < sizeof nlog_tid_comm / sizeof nlog_tid_comm[0]; i++)
        if (nlog_tid_comm[i].tid == tid && tid) return nlog_tid_comm[i].hash;
    return nlog_last_hash;
}

/* "Using network X" comes before the communicator's "commId 0x..." line: held until that line names it. */
static char nlog_pending_net[80];
static uint32_t nlog_pending_tid;

static void nlog_emit(uint64_t hash, int ch, int conn, int src, int dst, uint32_t dir, const char *via, uint32_t tid)
{
    struct rs_ev_NCCL_TRANSPORT ev;
    RS_EV_INIT(&ev, NCCL_TRANSPORT, rs_now());
    ev.comm_hash = hash;
    ev.channel = ch;
    ev.conn = conn;
    ev.src = src;
    ev.dst = dst;
    ev.dir = dir;
    ev.transport = nlog_kind(via);
    ev.via = rs_intern(via);
    ev.nccl_tid = tid;
    rs_emit(&ev.h);
}

static void nlog_set_comm(uint32_t tid, uint64_t hash)
{
    unsigned n = sizeof nlog_tid_comm / sizeof nlog_tid_comm[0], free_i = n;
    nlog_last_hash = hash;
    if (nlog_pending_net[0]) {
        nlog_emit(hash, -1, 0, -1, -1, 2, nlog_pending_net, nlog_pending_tid);
        nlog_pending_net[0] = 0;
    }
    for (unsigned i = 0; i < n; i++) {
        if (nlog_tid_comm[i].tid == tid) {
            nlog_tid_comm[i].hash = hash;
            return;
        }
        if (!nlog_tid_comm[i].tid && free_i == n) free_i = i;
    }
    if (free_i == n) free_i = tid % n; /* full: overwrite one */
    nlog_tid_comm[free_i].tid = tid;
    nlog_tid_comm[free_i].hash = hash;
}

/* One line of NCCL's log: "host:pid:tid [dev] NCCL INFO message". Exposed for tests/nccl (through the
 * fake NCCL, which writes such lines). */
static void nlog_line(char *line)
{
    char *info = strstr(line, " NCCL INFO ");
    if (!info) return;
    uint32_t tid = 0;
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (c2 && c2 < info) tid = (uint32_t)strtoul(c2 + 1, NULL, 10);
    char *msg = info + 11, *p;
    if ((p = strstr(msg, "commId 0x"))) nlog_set_comm(tid, strtoull(p + 9, NULL, 16));
    int ch, conn, src, dst, n = 0;
    if (sscanf(msg, "Channel %d/%d : %d[%*[^]]] -> %d[%*[^]]]%n", &ch, &conn, &src, &dst, &n) == 4 && n > 0) {
        char *rest = msg + n;
        uint32_t dir = !strncmp(rest, " [send]", 7) ? 0 : !strncmp(rest, " [receive]", 10) ? 1 : 2;
        char *via = strstr(rest, " via ");
        if (!via) return;
        via += 5;
        via[strcspn(via, " \t\r\n")] = 0;
        nlog_emit(nlog_comm_of(tid), ch, conn, src, dst, dir, via, tid);
    } else if ((p = strstr(msg, "Using network "))) {
        if (nlog_pending_net[0]) nlog_emit(nlog_comm_of(nlog_pending_tid), -1, 0, -1, -1, 2, nlog_pending_net, tid);
        snprintf(nlog_pending_net, sizeof nlog_pending_net, "NET/%.*s", (int)strcspn(p + 14, " \t\r\n"), p + 14);
        nlog_pending_tid = tid;
    }
}

/* NCCL_DEBUG_FILE's name for this process: %h = host name up to the first '.', %p = pid (NCCL's rules). */
static void nlog_path(char *out, size_t n)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    host[strcspn(host, ".")] = 0;
    size_t o = 0;
    for (const char *t = nlog_tmpl; *t && o + 1 < n; t++) {
        if (t[0] == '%' && (t[1] == 'h' || t[1] == 'p')) {
            int w = t[1] == 'h' ? snprintf(out + o, n - o, "%s", host) : snprintf(out + o, n - o, "%d", (int)getpid());
            o += w > 0 ? (size_t)w : 0;
            if (o >= n) o = n - 1;
            t++;
        } else out[o++] = *t;
    }
    out[o] = 0;
}

/* The writer thread's tick and the exit path's shutdown hook both read the file (TSan saw them overlap):
 * one reader at a time; a tick that finds the lock taken skips (the next one, or shutdown, reads on). */
static pthread_mutex_t nlog_lock = PTHREAD_MUTEX_INITIALIZER;

/* The log's new bytes from nlog_off, into buf. On the writer's tick they are read on a descriptor table of its own
 * (tracer/private_fds.c: an open() in the program's table races its close() + dup2() onto the number), and only
 * when the file has grown (stat() takes no descriptor: a failed open() of a file not there yet still does); at
 * exit, on the exiting thread. */
static ssize_t nlog_chunk(const char *path, char *buf, size_t n, int tick)
{
    struct stat st; /* a regular file only: a FIFO named by the user's NCCL_DEBUG_FILE would block a read */
    if (tick && (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= nlog_off)) return 0;
    return tick ? rs_private_pread(path, buf, n, nlog_off) : rs_pread_file(path, buf, n, nlog_off);
}

static void nlog_read_locked(int tick)
{
    int echo = __atomic_load_n(&nlog_echo, __ATOMIC_ACQUIRE);
    if (echo < 0) return;
    static char buf[65536]; /* under nlog_lock; not on the stack: the exit path may run on a small one */
    char path[700];
    nlog_path(path, sizeof path);
    for (int chunks = 0; chunks < 64; chunks++) { /* 4 MiB a tick at most: the rest at the next */
        ssize_t r = nlog_chunk(path, buf, sizeof buf, tick);
        if (r <= 0) break;
        nlog_off += r;
        if (echo) {
            ssize_t w = write(1, buf, (size_t)r);
            (void)w;
        }
        for (ssize_t i = 0; i < r; i++) {
            if (buf[i] == '\n' || nlog_part_n == sizeof nlog_part - 1) {
                nlog_part[nlog_part_n] = 0;
                if (rs_on(RS_FAM_nccl)) nlog_line(nlog_part);
                nlog_part_n = 0;
                if (buf[i] == '\n') continue;
            }
            nlog_part[nlog_part_n++] = buf[i];
        }
        if ((size_t)r < sizeof buf) break;
    }
}

static void nlog_read(void) /* tick */
{
    if (!nlog_tmpl[0] || pthread_mutex_trylock(&nlog_lock)) return;
    nlog_read_locked(1);
    pthread_mutex_unlock(&nlog_lock);
}

static void nlog_shutdown(void)
{
    if (!nlog_tmpl[0]) return;
    rs_nlog_decide_echo(); /* NCCL started without our wrappers or plugin (if at all): the exiting thread decides */
    pthread_mutex_lock(&nlog_lock);
    nlog_read_locked(0); /* at the end, on whichever thread ends the trace: no thread created (a crashed thread may
                          * hold the allocator's lock, which pthread_create needs) */
    if (nlog_pending_net[0] && rs_on(RS_FAM_nccl)) { /* no communicator line followed */
        nlog_emit(nlog_last_hash, -1, 0, -1, -1, 2, nlog_pending_net, nlog_pending_tid);
        nlog_pending_net[0] = 0;
    }
    pthread_mutex_unlock(&nlog_lock);
    if (!nlog_dir[0]) return; /* the user's own log file stays */
    char path[700];
    nlog_path(path, sizeof path);
    unlink(path);
}

static void nlog_fork_child(void) /* async-signal-safe: the child's NCCL writes its own <pid>.log */
{
    /* the parent's writer thread may have held the lock at fork(): the child starts with a fresh one */
    static const pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&nlog_lock, &fresh, sizeof fresh);
    nlog_off = 0;
    nlog_part_n = 0;
}

/* The trace directory (RAILSCOPE_OUT as the core reads it: absolute against the working directory),
 * created if missing (NCCL falls back to stdout when it cannot open its file). The log files in it are
 * hidden (".nccl-<pid>.log"): readers skip dot files. 0, or -1 when there is none to use. */
static int nlog_outdir(char *out, size_t n)
{
    const char *o = getenv("RAILSCOPE_OUT");
    if (!o || !*o) o = "railscope-out";
    char cwd[256] = "";
    if (o[0] != '/' && !getcwd(cwd, sizeof cwd)) return -1;
    int w = snprintf(out, n, "%s%s%s", cwd, cwd[0] ? "/" : "", o);
    if (w <= 0 || (size_t)w >= n || strchr(out, '%')) return -1; /* NCCL would expand a '%' */
    for (char *p = out + 1;; p++) { /* mkdir -p, 0755 as the core does; a concurrent creator is fine */
        if (*p == '/' || !*p) {
            char c = *p;
            *p = 0;
            if (mkdir(out, 0755) != 0 && errno != EEXIST) return -1;
            *p = c;
            if (!c) break;
        }
    }
    return 0;
}

__attribute__((constructor)) static void nlog_setup(void)
{
    const char *m = getenv("RAILSCOPE_NCCL_LOG");
    if (m && !strcasecmp(m, "off")) return;
    if (m && *m && strcasecmp(m, "auto")) { /* one warning and the default, as for every variable */
        rs_core_start();                    /* the log level; nothing said where the tracer is off */
        if (rs_on(RS_FAM_nccl)) rs_warn("RAILSCOPE_NCCL_LOG='%s' unknown (auto|off); using auto", m);
    }
    const char *ours = getenv("RAILSCOPE_NCCL_LOG_DIR"), *dbg = getenv("NCCL_DEBUG"), *f = getenv("NCCL_DEBUG_FILE");
    if (ours && *ours) { /* a traced parent set the variables: keep them, read our own <pid>.log */
        if (strlen(ours) >= sizeof nlog_dir) return;
        snprintf(nlog_dir, sizeof nlog_dir, "%s", ours);
        snprintf(nlog_tmpl, sizeof nlog_tmpl, "%s/.nccl-%%p.log", nlog_dir);
    } else if (dbg || f) {
        /* The user's log: leave the variables alone; read the file when NCCL writes to one (what it holds
         * depends on the user's NCCL_DEBUG_SUBSYS: INIT or NET give the connection lines). */
        if (!dbg || !f || !*f || strlen(f) >= sizeof nlog_tmpl) return;
        snprintf(nlog_tmpl, sizeof nlog_tmpl, "%s", f);
    } else {
        rs_core_start();
        if (!rs_on(RS_FAM_nccl) || nlog_outdir(nlog_dir, sizeof nlog_dir)) {
            nlog_dir[0] = 0;
            return;
        }
        snprintf(nlog_tmpl, sizeof nlog_tmpl, "%s/.nccl-%%p.log", nlog_dir);
        setenv("RAILSCOPE_NCCL_LOG_DIR", nlog_dir, 1);
        setenv("NCCL_DEBUG_SUBSYS", "INIT,NET", 0); /* a user's own choice stays (it may lack the lines) */
        setenv("NCCL_DEBUG_FILE", nlog_tmpl, 1);
        /* putenv of our own string, not setenv: glibc's setenv hands out a string it allocated before for the same
         * NAME=VALUE, so a program's later setenv("NCCL_DEBUG", "INFO") would get our pointer back and look like
         * ours (translog.t 18); the string is static, as putenv needs. */
        static char nccl_debug_info[] = "NCCL_DEBUG=INFO";
        putenv(nccl_debug_info);
    }
    nlog_debug_env = getenv("NCCL_DEBUG");
    rs_at_tick(nlog_read);
    rs_at_shutdown(nlog_shutdown);
    rs_at_fork_child(nlog_fork_child);
}
