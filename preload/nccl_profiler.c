/* NCCL profiler plugin, in librailscope.so itself: exports ncclProfiler_v4 (NCCL 2.27), ncclProfiler_v5
 * (2.28) and ncclProfiler_v6 (2.29+, same callbacks; CE events are not requested). `railscope record`
 * sets NCCL_PROFILER_PLUGIN to this library; NCCL picks the newest table it knows and calls init once
 * per communicator.
 *
 * The ABI below is declared from the facts in reference/nccl.md (profiler_v4.h / v5.h / v6.h of NCCL
 * 2.27.7 / 2.28.9 / 2.30): no NCCL header is needed, so this file is always built.
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
};

struct rs_slot {
    uint64_t id;      /* handle in the trace */
    uint32_t busy;    /* 1 while NCCL holds the handle */
    uint16_t kind;    /* RS_EV_* being built */
    uint16_t is_send; /* ProxyOp/ProxyStep */
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
    struct rs_slot *expect = NULL;
    if (!__atomic_compare_exchange_n(&r->slots, &expect, s, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        free(s); /* another communicator's init won */
    r->mask = n - 1;
    return 0;
}

static struct rs_slot *claim(struct rs_ring *r)
{
    struct rs_slot *base = __atomic_load_n(&r->slots, __ATOMIC_ACQUIRE);
    if (RS_UNLIKELY(!base)) return NULL;
    for (int tries = 0; tries < 8; tries++) {
        uint64_t n = __atomic_fetch_add(&r->next, 1, __ATOMIC_RELAXED);
        struct rs_slot *s = &base[n & r->mask];
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

static int version_of(void *ctx) { return ctx ? ((struct rs_nccl_ctx *)ctx)->version : 5; }

/* ---- callbacks ---- */
static rs_nccl_result init_common(void **context, int version, uint64_t hash, int *mask, const char *name, int nnodes,
                                  int nranks, int rank)
{
    rs_core_start();
    *context = NULL;
    if (__atomic_load_n(&prof_mask, __ATOMIC_RELAXED) < 0)
        __atomic_store_n(&prof_mask, parse_mask(getenv("RAILSCOPE_NCCL_MASK")), __ATOMIC_RELAXED);
    if (rs_nccl_init_tls.active) { /* inside our ncclCommInit* wrapper on this thread */
        rs_nccl_init_tls.seen = 1;
        rs_nccl_init_tls.comm_hash = hash;
    }
    int want = rs_on(RS_FAM_nccl) ? prof_mask : 0;
    if (want && (ring_init(&host_ring, RS_HOST_SLOTS) || ring_init(&proxy_ring, RS_PROXY_SLOTS))) {
        rs_warn("NCCL profiler plugin: out of memory for event slots; NCCL profiling disabled");
        want = 0;
    }
    struct rs_nccl_ctx *c = calloc(1, sizeof *c); /* once per communicator; never freed (late events) */
    if (!c) want = 0;
    else {
        c->comm_hash = hash;
        c->rank = rank;
        c->nranks = nranks;
        c->nnodes = nnodes;
        c->version = version;
    }
    if (version < 5) want &= 0xff; /* no API events before v5 */
    *mask = want;
    *context = c;
    if (rs_on(RS_FAM_nccl)) { /* no reentrancy guard in the plugin: NCCL calls it, never the core */
        struct rs_ev_NCCL_PROF_INIT ev;
        RS_EV_INIT(&ev, NCCL_PROF_INIT, rs_now());
        ev.comm_hash = hash;
        ev.context = (uint64_t)(uintptr_t)c;
        ev.rank = rank;
        ev.nranks = nranks;
        ev.mask = (uint32_t)want;
        ev.version = (uint32_t)version;
        ev.comm_name = name ? rs_intern(name) : 0;
        ev.nnodes = nnodes;
        rs_emit(&ev.h);
    }
    return RS_NCCL_SUCCESS;
}

static uint32_t sid(const char *s) { return rs_ptrcache_id(&nccl_strs, s); }

static rs_nccl_result start_event(void *context, void **eHandle, struct rs_nccl_descr *d)
{
    *eHandle = NULL;
    if (!rs_on(RS_FAM_nccl) || !d) return RS_NCCL_SUCCESS;
    struct rs_nccl_ctx *c = context;
    int version = version_of(c);
    uint64_t type = version < 5 ? *(const uint8_t *)d : d->type;
    uint64_t now = rs_now();
    struct rs_slot *s;
    switch (type) {
    case RS_NP_group:
        if (!(s = claim(&host_ring))) return RS_NCCL_SUCCESS;
        RS_EV_INIT(&s->ev.group, NCCL_GROUP, now);
        s->ev.group.handle = s->id;
        s->ev.group.comm_hash = c ? c->comm_hash : 0;
        break;
    case RS_NP_coll: {
        if (!(s = claim(&host_ring))) return RS_NCCL_SUCCESS;
        struct rs_ev_NCCL_COLL *e = &s->ev.coll;
        RS_EV_INIT(e, NCCL_COLL, now);
        e->handle = s->id;
        e->comm_hash = c ? c->comm_hash : 0;
        e->seq = d->coll.seqNumber;
        e->count = d->coll.count;
        e->parent = handle_of(d->parentObj ? d->parentObj : (version >= 5 ? d->coll.parentGroup : NULL));
        e->func = sid(d->coll.func);
        e->algo = sid(d->coll.algo);
        e->proto = sid(d->coll.proto);
        e->nchannels = d->coll.nChannels;
        e->nwarps = d->coll.nWarps;
        e->datatype = sid(d->coll.datatype);
        e->rank = d->rank;
        e->root = d->coll.root;
        break;
    }
    case RS_NP_p2p: {
        if (!(s = claim(&host_ring))) return RS_NCCL_SUCCESS;
        struct rs_ev_NCCL_P2P *e = &s->ev.p2p;
        RS_EV_INIT(e, NCCL_P2P, now);
        e->handle = s->id;
        e->comm_hash = c ? c->comm_hash : 0;
        e->count = d->p2p.count;
        e->parent = handle_of(d->parentObj ? d->parentObj : (version >= 5 ? d->p2p.parentGroup : NULL));
        e->func = sid(d->p2p.func);
        e->peer = d->p2p.peer;
        e->datatype = sid(d->p2p.datatype);
        e->nchannels = d->p2p.nChannels;
        e->rank = d->rank;
        e->pad = 0;
        break;
    }
    case RS_NP_proxyop: {
        if (!(s = claim(&proxy_ring))) return RS_NCCL_SUCCESS;
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
        break;
    }
    case RS_NP_proxystep: {
        if (!(s = claim(&proxy_ring))) return RS_NCCL_SUCCESS;
        struct rs_ev_NCCL_PROXY_STEP *e = &s->ev.step;
        RS_EV_INIT(e, NCCL_PROXY_STEP, now);
        e->handle = s->id;
        e->parent = handle_of(d->parentObj);
        e->trans_size = 0;
        e->step = (uint32_t)d->proxyStep.step;
        e->is_send =
            d->parentObj ? __atomic_load_n(&((const struct rs_slot *)d->parentObj)->is_send, __ATOMIC_RELAXED) : 0;
        s->is_send = (uint16_t)e->is_send;
        break;
    }
    case RS_NP_kernelch: {
        if (!(s = claim(&proxy_ring))) return RS_NCCL_SUCCESS;
        struct rs_ev_NCCL_KERNEL_CH *e = &s->ev.kch;
        RS_EV_INIT(e, NCCL_KERNEL_CH, now);
        e->parent = handle_of(d->parentObj);
        e->gpu_start = d->kernelCh.pTimer;
        e->gpu_stop = 0;
        e->channel = d->kernelCh.channelId;
        e->pad = 0;
        break;
    }
    case RS_NP_net: {
        uint32_t id = (uint32_t)d->netPlugin.id;
        const void *data = d->netPlugin.data;
        if (!data || (id & 0xffffu) != 1) return RS_NCCL_SUCCESS; /* unknown descriptor version */
        if ((id & RS_NET_TYPE_MASK) == RS_NET_TYPE_IB) {
            const struct rs_nccl_net_ib_v1 *ib = data;
            if (!(s = claim(&proxy_ring))) return RS_NCCL_SUCCESS;
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
            if (!(s = claim(&proxy_ring))) return RS_NCCL_SUCCESS;
            struct rs_ev_NCCL_NET_SOCK *e = &s->ev.sock;
            RS_EV_INIT(e, NCCL_NET_SOCK, now);
            e->parent = handle_of(d->parentObj);
            e->length = so->sock.length;
            e->fd = so->sock.fd;
            e->op = so->sock.op;
        } else {
            return RS_NCCL_SUCCESS;
        }
        break;
    }
    case RS_NP_groupapi:
    case RS_NP_collapi:
    case RS_NP_p2papi:
    case RS_NP_kernellaunch: {
        if (version < 5 || !(s = claim(&host_ring))) return RS_NCCL_SUCCESS;
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
        break;
    }
    default: return RS_NCCL_SUCCESS; /* ProxyCtrl, CE events: not requested */
    }
    s->kind = s->ev.h.kind;
    *eHandle = s;
    return RS_NCCL_SUCCESS;
}

static rs_nccl_result stop_event(void *eHandle)
{
    struct rs_slot *s = eHandle;
    if (!s) return RS_NCCL_SUCCESS;
    uint64_t now = rs_now();
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
    case RS_EV_NCCL_PROXY_STEP:
    case RS_EV_NCCL_PROXY_OP: {
        struct rs_ev_NCCL_PROXY_STATE ev;
        RS_EV_INIT(&ev, NCCL_PROXY_STATE, rs_now());
        ev.handle = s->id;
        ev.trans_size = 0;
        /* NCCL fills transSize for these two states only; elsewhere the args may be stale. */
        if (a && (state == RS_NS_SEND_WAIT || state == RS_NS_RECV_FLUSH_WAIT)) {
            ev.trans_size = a->proxyStep.transSize;
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

RS_EXPORT struct rs_nccl_profiler_v4 ncclProfiler_v4 = {"railscope", init_v4,      start_event,
                                                        stop_event,  record_state, finalize};
RS_EXPORT struct rs_nccl_profiler_v5 ncclProfiler_v5 = {"railscope", init_v5,      start_event,
                                                        stop_event,  record_state, finalize};
RS_EXPORT struct rs_nccl_profiler_v5 ncclProfiler_v6 = {"railscope", init_v6,      start_event,
                                                        stop_event,  record_state, finalize};
