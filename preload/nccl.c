/* NCCL API wrappers (ncclGather/ncclScatter exist from NCCL 2.28): which collective/p2p call, on which communicator,
 * how many elements, which stream,
 * the per-(communicator, function) sequence number, and the time spent in the call (enqueue, not GPU).
 *
 * Getting in: libtorch_cuda.so calls ncclAllReduce through its PLT, so a definition in the preloaded
 * librailscope.so is found first. The real function is NCCL's strong `pncclX` alias, looked up through
 * RTLD_NEXT and, because PyTorch's libnccl sits in a local scope where RTLD_NEXT cannot see it (measured on
 * the H200 host), through the already-loaded object (preload/dl.h). Look-ups through dlsym/dlvsym are
 * redirected here too. A call whose real function cannot be found returns ncclInternalError; nothing
 * ever calls NULL.
 *
 * Every wrapper is the skeleton of preload/dl.h (RS_REAL, RS_WRAP_REAL, RS_WRAP_FORWARD, RS_WRAP_CALL,
 * RS_WRAP_LEAVE). Its guard is not the tracer's: NCCL registers memory and posts verbs work inside these
 * calls, and the verbs wrappers must see it. nccl_guard, a per-thread flag, keeps NCCL's own nested API
 * calls from being recorded twice. */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "preload/dl.h"
#include "preload/ptrmap.h"
#include "preload/rs_gpu_common.h"
#include "tracer/rs_tracer.h"

typedef int ncclResult_t;
typedef struct rs_ncclComm *ncclComm_t;
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
typedef struct rs_cudaStream *cudaStream_t;
typedef struct {
    char internal[128];
} ncclUniqueId; /* NCCL_UNIQUE_ID_BYTES, passed by value */
typedef struct rs_ncclConfig ncclConfig_t;

#define RS_NCCL_INTERNAL_ERROR 3

__thread struct rs_nccl_init_tls rs_nccl_init_tls;
static __thread int nccl_depth;
static inline bool nccl_guard_enter(void)
{
    if (nccl_depth) return false;
    nccl_depth = 1;
    return true;
}
static inline void nccl_guard_exit(void) { nccl_depth = 0; }

enum {
#define RS_NF_ENUM(id, name) RS_NF_##name = id,
    RS_NCCL_FUNCS(RS_NF_ENUM)
#undef RS_NF_ENUM
};

/* ---- per-communicator state: a pointer-keyed table (preload/ptrmap.h) on the ncclComm_t, claimed
 * lock-free (communicators are never removed: a destroyed one's address reused by a new one starts fresh
 * at its init) ---- */
#define RS_COMM_SLOTS 1024u
struct rs_comm_state {
    uint64_t hash;
    int32_t rank, nranks; /* -2 = not asked yet */
    uint32_t splits;      /* ncclCommSplit calls on it so far (every rank makes the same ones: a collective call) */
    uint64_t seq[RS_NCCL_NFUNCS];
};
static uintptr_t comm_keys[RS_COMM_SLOTS];
static struct rs_comm_state comms[RS_COMM_SLOTS];

typedef ncclResult_t (*comm_int_fn)(ncclComm_t, int *);
static comm_int_fn real_user_rank, real_count, real_cu_device;

static void *nccl_sym(const char *pname)
{
    void *p = rs_dl_real("libnccl.so", pname);
    if (!p) p = rs_dl_real("libnccl.so", pname + 1); /* "pncclX" -> "ncclX" */
    return p;
}

static struct rs_comm_state *comm_state(ncclComm_t comm, bool fresh)
{
    if (!comm) return NULL;
    int claimed, slot = rs_ptrmap_claim(comm_keys, RS_COMM_SLOTS, (uintptr_t)comm, &claimed);
    if (slot < 0) return NULL; /* table full: calls are still recorded, without rank or sequence */
    struct rs_comm_state *s = &comms[slot];
    if (fresh && !claimed) {
        for (int f = 0; f < RS_NCCL_NFUNCS; f++) __atomic_store_n(&s->seq[f], 0, __ATOMIC_RELAXED);
        s->hash = 0;
        __atomic_store_n(&s->splits, 0, __ATOMIC_RELAXED);
    }
    if (fresh || claimed) s->rank = s->nranks = -2;
    return s;
}

static void comm_fill(struct rs_comm_state *s, ncclComm_t comm)
{
    if (s->rank != -2) return;
    int r = -1, n = -1;
    if (!real_user_rank) real_user_rank = (comm_int_fn)nccl_sym("pncclCommUserRank");
    if (!real_count) real_count = (comm_int_fn)nccl_sym("pncclCommCount");
    if (!real_user_rank || real_user_rank(comm, &r) != 0) r = -1;
    if (!real_count || real_count(comm, &n) != 0) n = -1;
    s->nranks = n;
    s->rank = r;
}

/* ---- recording ---- */
static void record_call(uint64_t t0, unsigned func, ncclComm_t comm, size_t count, ncclDataType_t dt, ncclRedOp_t op,
                        int peer, cudaStream_t stream, ncclResult_t ret)
{
    uint64_t t1 = rs_now();
    struct rs_ev_NCCL_CALL ev;
    RS_EV_INIT(&ev, NCCL_CALL, t0);
    ev.dur = t1 - t0;
    ev.comm = (uint64_t)(uintptr_t)comm;
    ev.count = count;
    ev.stream = (uint64_t)(uintptr_t)stream;
    ev.seq = 0;
    ev.comm_hash = 0;
    ev.func = func;
    ev.datatype = (uint32_t)dt;
    ev.op = (uint32_t)op;
    ev.peer = peer;
    ev.rank = -1;
    ev.nranks = -1;
    ev.ret = ret;
    ev.pad = 0;
    struct rs_comm_state *s = comm_state(comm, false);
    if (s) {
        comm_fill(s, comm);
        ev.seq = __atomic_fetch_add(&s->seq[func], 1, __ATOMIC_RELAXED);
        ev.comm_hash = __atomic_load_n(&s->hash, __ATOMIC_RELAXED);
        ev.rank = s->rank;
        ev.nranks = s->nranks;
    }
    rs_emit(&ev.h);
}

/* The skeleton's pieces for NCCL: the real function is NCCL's pncclX (else ncclX); a missing one fails the
 * call with ncclInternalError; not recording (family off, or nested in another NCCL call) forwards. */
#define NCCL_REAL(fn, params) RS_REAL(fn, ncclResult_t, params, nccl_sym("p" #fn))
#define NCCL_MISSING(fn)                                                                           \
    do {                                                                                           \
        rs_warn_once("%s: the real NCCL function is not found; returning ncclInternalError", #fn); \
        return RS_NCCL_INTERNAL_ERROR;                                                             \
    } while (0)
#define NCCL_ENTER(fn, args)            \
    RS_WRAP_REAL(fn, NCCL_MISSING(fn)); \
    RS_WRAP_FORWARD(RS_FAM_nccl, nccl_guard, args)
/* The calls that start NCCL (it reads NCCL_DEBUG then): the NCCL log's echo is decided here first, before anything
 * of ours may skip the rest (no real function, the guard, the family off). */
#define NCCL_INIT_ENTER(fn, args) \
    rs_nlog_decide_echo();        \
    NCCL_ENTER(fn, args)

/* The communicator of the NCCL call in progress on this thread, for a v1-v3 profiler context that announces itself
 * inside it (its init had no communicator; NCCL starts a Coll's event in the call, or in the ncclGroupEnd of its
 * group). In a group: the calls' communicator while they name one, none once they name two. */
static __thread ncclComm_t call_comm;
static __thread int call_comm_mixed, group_depth;
static void call_begin(unsigned func, ncclComm_t comm)
{
    if (func == RS_NF_GroupStart) {
        group_depth++;
        return;
    }
    if (func == RS_NF_GroupEnd) return;
    if (!group_depth || !call_comm) call_comm = comm;
    else if (call_comm != comm) call_comm_mixed = 1;
}
static void call_end(unsigned func)
{
    if (func == RS_NF_GroupStart) return;
    if (func == RS_NF_GroupEnd && group_depth > 0) group_depth--;
    if (!group_depth) {
        call_comm = NULL;
        call_comm_mixed = 0;
    }
}
int rs_nccl_call_learn(uint64_t hash)
{
    struct rs_comm_state *s = call_comm && !call_comm_mixed ? comm_state(call_comm, false) : NULL;
    if (!s || !hash) return 0;
    __atomic_store_n(&s->hash, hash, __ATOMIC_RELAXED);
    return 1;
}
int rs_nccl_call_comm(int *rank, int *nranks)
{
    struct rs_comm_state *s = call_comm && !call_comm_mixed ? comm_state(call_comm, false) : NULL;
    if (!s) return 0;
    comm_fill(s, call_comm);
    *rank = s->rank;
    *nranks = s->nranks;
    return 1;
}

#define RS_NCCL_COLL_WRAPPER(fn, func, count_, dt_, op_, peer_, comm_, stream_, params, args) \
    NCCL_REAL(fn, params)                                                                     \
    RS_EXPORT ncclResult_t fn params                                                          \
    {                                                                                         \
        NCCL_ENTER(fn, args);                                                                 \
        call_begin(func, comm_);                                                              \
        RS_WRAP_CALL(args);                                                                   \
        call_end(func);                                                                       \
        record_call(rs_t0, func, comm_, count_, dt_, op_, peer_, stream_, rs_ret);            \
        RS_WRAP_LEAVE(nccl_guard);                                                            \
    }

RS_NCCL_COLL_WRAPPER(ncclAllReduce, RS_NF_AllReduce, count, dt, op, -1, comm, stream,
                     (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t dt, ncclRedOp_t op,
                      ncclComm_t comm, cudaStream_t stream),
                     (sendbuff, recvbuff, count, dt, op, comm, stream))
RS_NCCL_COLL_WRAPPER(ncclReduceScatter, RS_NF_ReduceScatter, count, dt, op, -1, comm, stream,
                     (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t dt, ncclRedOp_t op,
                      ncclComm_t comm, cudaStream_t stream),
                     (sendbuff, recvbuff, count, dt, op, comm, stream))
RS_NCCL_COLL_WRAPPER(ncclAllGather, RS_NF_AllGather, count, dt, -1, -1, comm, stream,
                     (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t dt, ncclComm_t comm,
                      cudaStream_t stream),
                     (sendbuff, recvbuff, count, dt, comm, stream))
RS_NCCL_COLL_WRAPPER(ncclBroadcast, RS_NF_Broadcast, count, dt, -1, root, comm, stream,
                     (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t dt, int root, ncclComm_t comm,
                      cudaStream_t stream),
                     (sendbuff, recvbuff, count, dt, root, comm, stream))
RS_NCCL_COLL_WRAPPER(ncclBcast, RS_NF_Broadcast, count, dt, -1, root, comm, stream,
                     (void *buff, size_t count, ncclDataType_t dt, int root, ncclComm_t comm, cudaStream_t stream),
                     (buff, count, dt, root, comm, stream))
RS_NCCL_COLL_WRAPPER(ncclReduce, RS_NF_Reduce, count, dt, op, root, comm, stream,
                     (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t dt, ncclRedOp_t op, int root,
                      ncclComm_t comm, cudaStream_t stream),
                     (sendbuff, recvbuff, count, dt, op, root, comm, stream))
RS_NCCL_COLL_WRAPPER(ncclAlltoAll, RS_NF_AlltoAll, count, dt, -1, -1, comm, stream,
                     (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t dt, ncclComm_t comm,
                      cudaStream_t stream),
                     (sendbuff, recvbuff, count, dt, comm, stream))
RS_NCCL_COLL_WRAPPER(ncclGather, RS_NF_Gather, count, dt, -1, root, comm, stream,
                     (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t dt, int root, ncclComm_t comm,
                      cudaStream_t stream),
                     (sendbuff, recvbuff, count, dt, root, comm, stream))
RS_NCCL_COLL_WRAPPER(ncclScatter, RS_NF_Scatter, count, dt, -1, root, comm, stream,
                     (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t dt, int root, ncclComm_t comm,
                      cudaStream_t stream),
                     (sendbuff, recvbuff, count, dt, root, comm, stream))
RS_NCCL_COLL_WRAPPER(ncclSend, RS_NF_Send, count, dt, -1, peer, comm, stream,
                     (const void *sendbuff, size_t count, ncclDataType_t dt, int peer, ncclComm_t comm,
                      cudaStream_t stream),
                     (sendbuff, count, dt, peer, comm, stream))
RS_NCCL_COLL_WRAPPER(ncclRecv, RS_NF_Recv, count, dt, -1, peer, comm, stream,
                     (void *recvbuff, size_t count, ncclDataType_t dt, int peer, ncclComm_t comm, cudaStream_t stream),
                     (recvbuff, count, dt, peer, comm, stream))
RS_NCCL_COLL_WRAPPER(ncclGroupStart, RS_NF_GroupStart, 0, 0, -1, -1, (ncclComm_t)0, (cudaStream_t)0, (void), ())
RS_NCCL_COLL_WRAPPER(ncclGroupEnd, RS_NF_GroupEnd, 0, 0, -1, -1, (ncclComm_t)0, (cudaStream_t)0, (void), ())

/* ---- communicator life cycle ---- */
/* NCCL's version, once per process, as the host fact nccl/version ("2.28.9"): a rank without profiler records
 * whose NCCL predates the plugin tables this library exports (ncclProfiler_v1, NCCL 2.23) is explained by it
 * in the report. NCCL_VERSION_CODE is X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z from 2.9 (nccl.h). */
static void record_version(uint64_t t)
{
    static int done;
    if (!rs_on(RS_FAM_host) || __atomic_exchange_n(&done, 1, __ATOMIC_RELAXED)) return;
    ncclResult_t (*get)(int *) = (ncclResult_t(*)(int *))nccl_sym("pncclGetVersion");
    int v = 0;
    if (!get || get(&v) != 0 || v <= 0) return;
    char val[40];
    if (v < 10000) snprintf(val, sizeof val, "%d.%d.%d", v / 1000, v / 100 % 10, v % 100);
    else snprintf(val, sizeof val, "%d.%d.%d", v / 10000, v / 100 % 100, v % 100);
    struct rs_ev_HOST_FACT f;
    RS_EV_INIT(&f, HOST_FACT, t);
    f.key = rs_intern("nccl/version");
    f.value = rs_intern(val);
    rs_emit(&f.h);
}

static void record_init(uint64_t t0, ncclComm_t comm, int rank, int nranks, unsigned how, ncclResult_t ret,
                        uint64_t hash)
{
    uint64_t t1 = rs_now();
    if (ret == 0) record_version(t1);
    int dev = -1;
    if (ret == 0 && comm) {
        if (!real_cu_device) real_cu_device = (comm_int_fn)nccl_sym("pncclCommCuDevice");
        if (!real_cu_device || real_cu_device(comm, &dev) != 0) dev = -1;
        struct rs_comm_state *s = comm_state(comm, true);
        if (s) {
            s->hash = hash;
            if (rank >= 0) s->rank = rank;
            if (nranks >= 0) s->nranks = nranks;
        }
    }
    struct rs_ev_NCCL_COMM_INIT ev;
    RS_EV_INIT(&ev, NCCL_COMM_INIT, t0);
    ev.comm = (uint64_t)(uintptr_t)comm;
    ev.comm_hash = hash;
    ev.dur = t1 - t0;
    ev.rank = rank;
    ev.nranks = nranks;
    ev.cuda_device = dev;
    ev.how = how;
    ev.ret = ret;
    ev.pad = 0;
    rs_emit(&ev.h);
}

/* Around an init call: the plugin's init (same thread, inside the call) leaves the hash in the TLS. */
static void init_begin(void)
{
    rs_nccl_init_tls.active = 1;
    rs_nccl_init_tls.seen = 0;
    rs_nccl_init_tls.comm_hash = 0;
    rs_nccl_init_tls.ctx = NULL;
}
/* The hash a v4+ plugin init left, else 0; a v1-v3 plugin context learns its rank and size (-1: ask NCCL). */
static uint64_t init_end(ncclResult_t ret, ncclComm_t comm, int rank, int nranks)
{
    rs_nccl_init_tls.active = 0;
    if (rs_nccl_init_tls.ctx && ret == 0 && comm) {
        if (rank < 0 || nranks < 0) {
            struct rs_comm_state tmp = {.rank = -2};
            comm_fill(&tmp, comm);
            rank = tmp.rank;
            nranks = tmp.nranks;
        }
        rs_nccl_prof_bind(rs_nccl_init_tls.ctx, rank, nranks);
    }
    rs_nccl_init_tls.ctx = NULL;
    return rs_nccl_init_tls.seen ? rs_nccl_init_tls.comm_hash : 0;
}

/* A communicator's key when NCCL's profiler plugin gave no hash (an NCCL before 2.27, whose v1-v3 plugin init has
 * none: its events carry NCCL's hash; NCCL_PROFILER_PLUGIN=none or another plugin): the same on every rank of the
 * communicator, so the analyzer joins its collectives per communicator (with 0 it joined on (function, sequence)
 * alone, and mixed a job's data- and tensor-parallel communicators). It is railscope's, not NCCL's commHash (whose
 * hash function changed between NCCL versions): FNV-1a over the ncclUniqueId every rank passes; for ncclCommSplit,
 * over the parent's key, the parent's split count and the color (what NCCL 2.28 derives its own hash from,
 * src/init.cc). Never 0. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    for (const unsigned char *b = p; n--; b++) h = (h ^ *b) * 0x100000001b3ull;
    return h;
}
#define FNV_BASIS 0xcbf29ce484222325ull
static uint64_t key_from_id(const ncclUniqueId *id)
{
    uint64_t h = id ? fnv1a(FNV_BASIS, id->internal, sizeof id->internal) : 0;
    return h ? h : 1;
}

NCCL_REAL(ncclCommInitRank, (ncclComm_t *, int, ncclUniqueId, int))
RS_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    NCCL_INIT_ENTER(ncclCommInitRank, (comm, nranks, id, rank));
    init_begin();
    RS_WRAP_CALL((comm, nranks, id, rank));
    uint64_t hash = init_end(rs_ret, comm ? *comm : NULL, rank, nranks);
    if (!hash) hash = key_from_id(&id);
    record_init(rs_t0, comm ? *comm : NULL, rank, nranks, 0, rs_ret, hash);
    RS_WRAP_LEAVE(nccl_guard);
}

NCCL_REAL(ncclCommInitRankConfig, (ncclComm_t *, int, ncclUniqueId, int, ncclConfig_t *))
RS_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                              ncclConfig_t *config)
{
    NCCL_INIT_ENTER(ncclCommInitRankConfig, (comm, nranks, id, rank, config));
    init_begin();
    RS_WRAP_CALL((comm, nranks, id, rank, config));
    uint64_t hash = init_end(rs_ret, comm ? *comm : NULL, rank, nranks);
    if (!hash) hash = key_from_id(&id);
    record_init(rs_t0, comm ? *comm : NULL, rank, nranks, 1, rs_ret, hash);
    RS_WRAP_LEAVE(nccl_guard);
}

NCCL_REAL(ncclCommInitAll, (ncclComm_t *, int, const int *))
RS_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comms_out, int ndev, const int *devlist)
{
    NCCL_INIT_ENTER(ncclCommInitAll, (comms_out, ndev, devlist));
    RS_WRAP_CALL((comms_out, ndev, devlist));
    for (int i = 0; comms_out && i < ndev; i++)
        record_init(rs_t0, rs_ret == 0 ? comms_out[i] : NULL, i, ndev, 2, rs_ret, 0);
    RS_WRAP_LEAVE(nccl_guard);
}

NCCL_REAL(ncclCommSplit, (ncclComm_t, int, int, ncclComm_t *, ncclConfig_t *))
RS_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config)
{
    NCCL_INIT_ENTER(ncclCommSplit, (comm, color, key, newcomm, config));
    struct rs_comm_state *parent = comm_state(comm, false);
    uint64_t pkey = parent ? parent->hash : 0;
    uint32_t nsplit = parent ? __atomic_fetch_add(&parent->splits, 1, __ATOMIC_RELAXED) : 0;
    init_begin();
    RS_WRAP_CALL((comm, color, key, newcomm, config));
    ncclComm_t nc = (rs_ret == 0 && newcomm) ? *newcomm : NULL;
    uint64_t hash = init_end(rs_ret, nc, -1, -1);
    if (!hash && pkey) { /* the children of one split with one color: one key (see key_from_id) */
        hash = fnv1a(fnv1a(fnv1a(FNV_BASIS, &pkey, sizeof pkey), &nsplit, sizeof nsplit), &color, sizeof color);
        if (!hash) hash = 1;
    }
    record_init(rs_t0, nc, -1, -1, 3, rs_ret, hash); /* rank/nranks asked from NCCL on first use */
    if (nc) {
        struct rs_comm_state *s = comm_state(nc, false);
        if (s) s->rank = s->nranks = -2;
    }
    RS_WRAP_LEAVE(nccl_guard);
}

NCCL_REAL(ncclCommInitRankScalable, (ncclComm_t *, int, int, int, ncclUniqueId *, ncclConfig_t *))
RS_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int nid, ncclUniqueId *ids,
                                                ncclConfig_t *config)
{
    NCCL_INIT_ENTER(ncclCommInitRankScalable, (comm, nranks, rank, nid, ids, config));
    init_begin();
    RS_WRAP_CALL((comm, nranks, rank, nid, ids, config));
    uint64_t hash = init_end(rs_ret, comm ? *comm : NULL, rank, nranks);
    if (!hash && ids && nid > 0) hash = key_from_id(&ids[0]); /* NCCL hashes the first one too */
    record_init(rs_t0, comm ? *comm : NULL, rank, nranks, 4, rs_ret, hash);
    RS_WRAP_LEAVE(nccl_guard);
}

static void record_end(uint64_t t0, ncclComm_t comm, unsigned how, ncclResult_t ret)
{
    struct rs_ev_NCCL_COMM_END ev;
    RS_EV_INIT(&ev, NCCL_COMM_END, t0);
    ev.comm = (uint64_t)(uintptr_t)comm;
    ev.abort = how;
    ev.ret = ret;
    rs_emit(&ev.h);
}

#define RS_NCCL_END_WRAPPER(fn, how)           \
    NCCL_REAL(fn, (ncclComm_t))                \
    RS_EXPORT ncclResult_t fn(ncclComm_t comm) \
    {                                          \
        NCCL_ENTER(fn, (comm));                \
        RS_WRAP_CALL((comm));                  \
        record_end(rs_t0, comm, how, rs_ret);  \
        RS_WRAP_LEAVE(nccl_guard);             \
    }
RS_NCCL_END_WRAPPER(ncclCommDestroy, 0)
RS_NCCL_END_WRAPPER(ncclCommAbort, 1)
RS_NCCL_END_WRAPPER(ncclCommFinalize, 2)

/* Programs that dlopen libnccl and look the entry points up with dlsym get the wrappers too; the slot
 * receives the function their look-up found. */
#define RS_NCCL_REDIRECT(fn) RS_DL_REDIRECT(fn, NULL, fn),
/* clang-format off */
#define RS_NCCL_WRAPPED(X)                                                                                            \
    X(ncclAllReduce)                                                                                                  \
    X(ncclReduceScatter)                                                                                              \
    X(ncclAllGather)                                                                                                  \
    X(ncclBroadcast)                                                                                                  \
    X(ncclBcast) X(ncclReduce) X(ncclAlltoAll) X(ncclGather) X(ncclScatter) X(ncclSend) X(ncclRecv) X(ncclGroupStart) \
        X(ncclGroupEnd) X(ncclCommInitRank) X(ncclCommInitRankConfig) X(ncclCommInitAll) X(ncclCommSplit)             \
            X(ncclCommInitRankScalable) X(ncclCommDestroy) X(ncclCommAbort) X(ncclCommFinalize)
/* clang-format on */

__attribute__((constructor)) static void nccl_register(void)
{
    static const struct rs_dl_redirect redirects[] = {RS_NCCL_WRAPPED(RS_NCCL_REDIRECT)};
    rs_dl_register(redirects, (int)(sizeof redirects / sizeof redirects[0]));
}
