/* Private interface of the exporter's translator, shared by its files: export_xlate.c (names, tracks and
 * lanes, emitting, dispatch, lifecycle), export_verbs.c (work requests, bandwidth counters),
 * export_cuda.c (CUDA, NVTX, NVML) and export_nccl.c (NCCL). Backends do not include it. */
#ifndef RAILSCOPE_EXPORT_XLATE_H
#define RAILSCOPE_EXPORT_XLATE_H

#include <stdint.h>
#include <string.h>

#include "export_int.h"

#define XSTACK       8          /* nesting depth tracked per lane */
#define XLANES_NEST  8          /* thread-like tracks (nesting allowed) */
#define XLANES_ASYNC 32         /* QPs, NCCL: overlapping work */
#define XFIFO_MAX    (1u << 16) /* outstanding WRs remembered per queue */
#define XCACHE       4096       /* handle caches (NCCL proxy ops/steps, NVTX start/end ids) */
#define XNVTX_DEPTH  64
#define XROW_MAX     (1u << 16) /* slices remembered per source of a thread's row (export_row.c) */
#define XROW_ALONE   (1u << 17) /* ... by all the rows of a process whose thread made no CUDA call yet (3 MB) */
#define XPEND        4096       /* NCCL communicator items held until their children are in (export_nccl.c) */

enum xgkind {
    XG_THREAD = 1,
    XG_CUDA,
    XG_NVTX,
    XG_STREAM,
    XG_CSYNC,
    XG_QP,
    XG_COMM,
    XG_PROXY,
    XG_STEPS,
    XG_STATES,
    XG_KCH,
    XG_NVTXASYNC,
    XG_CTR_QP,
    XG_CTR_LINK,
    XG_CTR_NVML,
    XG_RS
};

struct xlane {
    struct rs_xtrack t;
    uint64_t last_start;
    int depth;
    uint64_t stack[XSTACK];
};

struct xgroup {
    uint32_t gk;   /* enum xgkind */
    uint64_t a, b; /* key */
    uint32_t name; /* nid */
    uint8_t nest, maxl, nlanes, counter;
    int64_t jpid, jtid0; /* JSON placement of lane 0 */
    int32_t sort;
    struct xlane *lane[XLANES_ASYNC];
    /* NVTX push/pop stack (XG_NVTX); Kineto output keeps the pushes to write complete events at the pop;
     * nvtx_lost: pushes past XNVTX_DEPTH not kept (their pops are skipped, so the others stay paired) */
    int nvtx_depth;
    uint32_t nvtx_lost;
    struct xpush {
        uint64_t ts;
        uint32_t msg, dom;
        /* Kineto (the range shares the thread's row): the earliest end of the row's other slices around the
         * push (starting at or before it, ending after it), and whether one of those may have been forgotten
         * (export_row.c xr_cross, then every slice placed while it is open) */
        uint64_t min_cross;
        uint32_t unsure;
    } * pushes;
    /* The thread row this group's lane 0 is part of (the thread's own group owns it), and which source of
     * it the group is (XR_T, XR_C, XR_N): export_row.c */
    struct xrow *row;
    uint8_t rsrc;
};

/* A thread's row, shared by the thread's calls, its CUDA calls and (Kineto) its NVTX ranges: each source's
 * slices placed there, a ring in placement order (export_row.c). */
enum { XR_T, XR_C, XR_N, XR_NSRC };
enum { XR_NONE, XR_FOUND, XR_UNSURE };
struct xiv {
    uint64_t p, q;
    uint32_t up;   /* parent: 0 none (yet), distance in placements (back for T/C, forward for N), XIV_LOST */
    uint32_t left; /* N: distance back to the previous root when placed (0 none); T/C: scratch (compaction) */
};
struct xivs {
    struct xiv *v;
    uint64_t base, n; /* kept: placements [base, n) */
    uint64_t lost_q;  /* the latest end of a slice forgotten: around earlier times the answer is unknown */
    uint64_t maxq;    /* the latest end of all it held */
    uint32_t cap;     /* a power of two, up to XROW_MAX */
    uint8_t by_end;   /* N: placed in end order */
};
struct xrow {
    struct xgroup *g[XR_NSRC];
    struct xivs s[XR_NSRC];
    int kineto;
    /* while the thread has no CUDA calls: the process's count of slices such rows hold (xproc.row_alone), and
     * this row's part of it (rings grown past their first 8) */
    uint64_t *alone;
    uint32_t alone_held;
};

struct xwr {
    uint64_t ts, wr_id, bytes, flow;
    uint32_t opcode, flags, tid, pad;
};
struct xfifo {
    struct xwr *v;
    uint32_t head, n, cap;
};
/* A bandwidth counter (export_verbs.c bw_*): each WR's bytes spread over its transfer interval into a window
 * of XBW_BINS open bins from bin0 (older bins are emitted); last_* = the previous WR's interval on this
 * QP/link (a queue transmits in order). */
#define XBW_BINS 64
struct xbw {
    struct xgroup *g;
    uint64_t bin0, last_start, last_done;
    double bytes[XBW_BINS];
    int started, zero_out;
};
struct xqp {
    uint32_t qp_num, used, is_srq, pad;
    uint64_t ctx;
    struct xgroup *g;
    struct xfifo sq, rq;
    struct xbw tx;
};
struct xctx {
    uint64_t ctx;
    uint32_t dev_nid;
    struct xbw tx;
};
struct xcache {
    uint64_t key;
    uint64_t ts;
    uint32_t v, v2;
};

struct xproc {
    uint64_t index, pid;
    int64_t rank;
    uint64_t off;     /* aligned = ts + off (mod 2^64: anchors are hostile input, no signed overflow) */
    uint64_t last_ts; /* aligned, max seen */
    uint64_t base_flow;
    uint64_t flow_seq;
    uint64_t next_uuid; /* the process's track counter (opts.index_stride set) */
    int64_t next_jtid;
    int32_t next_sort;
    struct rs_xtrack ptrack;
    uint32_t *strmap; /* trace string id -> nid */
    uint32_t nstr;
    uint32_t *jmap; /* joined NVTX message id - RS_NVTX_JOINED_ID -> nid */
    uint32_t njmap;
    struct xgroup **gtab; /* open addressing on (gk, a, b) */
    struct xgroup *last_thread;
    uint32_t *corr; /* see corr_started() */
    uint32_t gcap, gn;
    struct xqp *qps; /* open addressing on qp_num (+srq bit) */
    uint32_t qcap, qn, last_qp;
    struct xctx ctxs[16];
    uint32_t nctx;
    struct xcache states[XCACHE]; /* proxy step handle -> last state, ts */
    struct xcache nvtxr[XCACHE];  /* NVTX start id -> message nid, ts */
    struct xpending *pend;        /* NCCL communicator items held back (export_nccl.c), allocated on first use */
    uint64_t row_alone;           /* ring slots of the rows without CUDA calls, up to XROW_ALONE (export_row.c) */
};

struct rs_exp {
    struct rs_exp_opts o;
    const struct rs_xbackend *be;
    void *b;
    struct rs_xname *names;
    uint32_t nnames, capnames;
    uint32_t *nhash;
    uint32_t nhcap;
    uint64_t next_uuid;
    uint64_t nproc;
    int in_proc;
    struct xproc p;
    struct rs_exp_stats st;
    int findings_proc;
    char last_err[512];
    uint32_t nid_cache[64]; /* fixed names, see XN_* */
    /* per-event names built from numbers: cached so the hot path does not format or hash */
    uint32_t wr_nid[16];
    uint32_t memcpy_nid[11][8][8], memset_nid[8];
    struct {
        int32_t v[3];
        uint32_t nid;
    } dim_cache[256];
    uint32_t state_nid[32], sync_nid[5], copy_nid[2][6];
    uint32_t cqev_nid[8];         /* ibv_get_cq_event's flags as words, by RS_CQEV_* bits */
    uint32_t api_link_cache[256]; /* nid << 1 | links-to-GPU-work */
};

/* Fixed names used per event: interned once. */
/* clang-format off */
#define XNAMES(X)                                                                                               \
    X(EMPTY, "")                                                                                                \
    X(POST_SEND, "ibv_post_send")                                                                               \
    X(POST_RECV, "ibv_post_recv")                                                                               \
    X(WC, "ibv_poll_cq: completion")                                                                            \
    X(WC_UNMATCHED, "ibv_poll_cq: completion (post not seen)") X(RECV, "RECV") X(REG_MR, "ibv_reg_mr")          \
        X(WARNING, "railscope warning") X(DROPS, "railscope: events lost") X(PARTIAL, "trace incomplete")       \
            X(MARK, "mark") X(NVTX, "nvtx") X(MEMSET, "Memset") X(SYNC, "cuda sync") X(NCCL_CALL, "nccl call")  \
                X(COPY_CALL, "cudaMemcpy") X(NOCOMP, "WR (no completion seen)") X(PROXY_OP, "ProxyOp")          \
                    X(PROXY_STEP, "ProxyStep") X(KERNEL_CH, "KernelCh") X(GROUP, "ncclGroup")                   \
                        X(NET_IB, "NCCL net IB WR") X(NET_SOCK, "NCCL net socket") X(COMM_INIT, "ncclCommInit") \
                            X(UNKNOWN, "?") X(CREATE_QP, "ibv_create_qp") X(MODIFY_QP, "ibv_modify_qp")         \
                                X(OPEN_DEVICE, "ibv_open_device") X(CUPTI_DROPPED, "CUPTI records lost")        \
                                    X(FINDING, "finding") X(PROF_API, "nccl api") X(END_PROXY, "proxy")         \
                                        X(END_KCH, "kernel_ch") X(END_ENQ, "enqueue only")              \
                                            X(END_FULL, "enqueue (lanes full)")                         \
                                                X(GET_CQ_EVENT, "ibv_get_cq_event")
/* clang-format on */
enum {
#define XN_ENUM(id, s) XN_##id,
    XNAMES(XN_ENUM)
#undef XN_ENUM
        XN_COUNT
};
#define NID(x, id) ((x)->nid_cache[XN_##id])

/* names (export_xlate.c) */
uint32_t xl_name_n(struct rs_exp *x, const char *s, size_t n);
uint32_t xl_name_s(struct rs_exp *x, const char *s);
uint32_t xl_name_f(struct rs_exp *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint32_t xl_str_nid(struct rs_exp *x, uint32_t id); /* trace string id of the current process */

/* tracks and lanes (export_xlate.c) */
void xl_declare(struct rs_exp *x, struct rs_xtrack *t);
int64_t xl_synth_jtid(struct rs_exp *x);
struct xgroup *xl_group_get(struct rs_exp *x, uint32_t gk, uint64_t a, uint64_t b);
struct xgroup *xl_group_find(struct rs_exp *x, uint32_t gk, uint64_t a, uint64_t b); /* NULL: none yet */
struct xlane *xl_lane_new(struct rs_exp *x, struct xgroup *g);
int xl_lane_fits(const struct xgroup *g, uint64_t s, uint64_t e, int maxl);
struct xgroup *xl_thread_group(struct rs_exp *x, uint32_t tid);
struct xgroup *xl_thread_side_group(struct rs_exp *x, uint32_t gk, uint32_t tid, const char *what);
struct xgroup *xl_async_group(struct rs_exp *x, uint32_t gk, uint64_t a, uint64_t b, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
struct xgroup *xl_counter_group(struct rs_exp *x, uint32_t gk, uint64_t a, uint64_t b, uint32_t name);

/* emitting (export_xlate.c) */
void xl_emit_slice(struct rs_exp *x, struct xgroup *g, struct rs_xitem *it);
void xl_emit_instant(struct rs_exp *x, struct xgroup *g, struct rs_xitem *it);
void xl_emit_counter(struct rs_exp *x, struct xgroup *g, uint64_t ts, double v);
uint64_t xl_new_flow(struct rs_exp *x);
uint64_t xl_corr_flow(struct rs_exp *x, uint32_t corr);

/* event handlers and end-of-process work of the families */
void xl_on_open_device(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_OPEN_DEVICE *e);
void xl_on_reg_mr(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_REG_MR *e);
void xl_on_create_qp(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_CREATE_QP *e);
void xl_on_post_send(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_POST_SEND *e);
void xl_on_post_recv(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_POST_RECV *e);
void xl_on_wc(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_WC *e);
void xl_on_get_cq_event(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_GET_CQ_EVENT *e);
void xl_verbs_end(struct rs_exp *x); /* outstanding WRs, last bandwidth bins */
void xl_on_kernel(struct rs_exp *x, const struct rs_ev_CUDA_KERNEL *e);
void xl_on_memcpy(struct rs_exp *x, const struct rs_ev_CUDA_MEMCPY *e);
void xl_on_memset(struct rs_exp *x, const struct rs_ev_CUDA_MEMSET *e);
void xl_on_sync(struct rs_exp *x, const struct rs_ev_CUDA_SYNC *e);
void xl_on_api(struct rs_exp *x, uint32_t tid, const struct rs_ev_CUDA_API *e);
void xl_on_copy_call(struct rs_exp *x, uint32_t tid, const struct rs_ev_CUDA_COPY_CALL *e);
void xl_on_nvtx_push(struct rs_exp *x, uint32_t tid, const struct rs_ev_NVTX_PUSH *e);
void xl_on_nvtx_pop(struct rs_exp *x, uint32_t tid, const struct rs_ev_NVTX_POP *e);
void xl_on_nvtx_start(struct rs_exp *x, const struct rs_ev_NVTX_START *e);
void xl_on_nvtx_end(struct rs_exp *x, const struct rs_ev_NVTX_END *e);
void xl_on_nvtx_mark(struct rs_exp *x, uint32_t tid, const struct rs_ev_NVTX_MARK *e);
void xl_on_nvml(struct rs_exp *x, const struct rs_ev_NVML_SAMPLE *e);
void xl_cuda_end(struct rs_exp *x); /* NVTX ranges left open */
void xl_on_nccl_call(struct rs_exp *x, uint32_t tid, const struct rs_ev_NCCL_CALL *e);
void xl_on_prof_init(struct rs_exp *x, const struct rs_ev_NCCL_PROF_INIT *e);
void xl_on_coll(struct rs_exp *x, const struct rs_ev_NCCL_COLL *e);
void xl_on_p2p(struct rs_exp *x, const struct rs_ev_NCCL_P2P *e);
void xl_on_proxy_op(struct rs_exp *x, const struct rs_ev_NCCL_PROXY_OP *e);
void xl_on_proxy_step(struct rs_exp *x, const struct rs_ev_NCCL_PROXY_STEP *e);
void xl_on_proxy_state(struct rs_exp *x, const struct rs_ev_NCCL_PROXY_STATE *e);
void xl_on_kernel_ch(struct rs_exp *x, const struct rs_ev_NCCL_KERNEL_CH *e);
void xl_on_group(struct rs_exp *x, const struct rs_ev_NCCL_GROUP *e);
void xl_on_net_ib(struct rs_exp *x, const struct rs_ev_NCCL_NET_IB *e);
void xl_on_net_sock(struct rs_exp *x, const struct rs_ev_NCCL_NET_SOCK *e);
void xl_on_prof_api(struct rs_exp *x, const struct rs_ev_NCCL_PROF_API *e);
void xl_nccl_end(struct rs_exp *x); /* held communicator items, step states never closed by their step */

/* the row guard (export_row.c) */
struct xrow *xr_new(struct rs_exp *x, struct xgroup *tg); /* the thread group tg's row */
void xr_free(struct xrow *r);
void xr_join(struct xrow *r, int src, struct xgroup *g); /* g, a side group of the thread, is source src of row r */
/* Would [s, e], placed by source src, partially overlap another source's slice on the row? 0 no, 1 yes, 2 not
 * known (forgotten). at_start 0: leave out the slices around s (a range's pop: its push knows them). */
int xr_check(const struct xrow *r, int src, uint64_t s, uint64_t e, int at_start);
void xr_add(struct xrow *r, int src, uint64_t s, uint64_t e); /* [s, e] (e > s) placed on the row */
/* g's lane 0 (a thread's or its CUDA calls' group) took [s, e] (e > s): the row and the open NVTX ranges learn it */
void xr_place(struct rs_exp *x, struct xgroup *g, uint64_t s, uint64_t e);
/* The earliest end among the T and C slices around t (start <= t < end); *unsure = 1 if one may be forgotten */
uint64_t xr_cross(const struct xrow *r, uint64_t t, int *unsure);

/* small inline helpers */
static inline uint64_t mix64(uint64_t v)
{
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdull;
    v ^= v >> 33;
    v *= 0xc4ceb9fe1a85ec53ull;
    return v ^ (v >> 33);
}

static inline uint64_t al(struct rs_exp *x, uint64_t ts)
{
    uint64_t r = ts + x->p.off;
    if (r >> 62) r = 0; /* before the run's origin (wrapped below 0) or absurd: the origin */
    if (r > x->p.last_ts) x->p.last_ts = r;
    return r;
}

static inline void item_init(struct rs_xitem *it, uint64_t ts, uint64_t dur, uint32_t name, int cat)
{
    it->ts = ts;
    it->dur = dur;
    it->name = name;
    it->cat = (uint8_t)cat;
    it->nargs = 0;
    it->flow_out = it->flow_step = it->flow_in = 0;
}

static inline void arg_u(struct rs_xitem *it, int key, int type, uint64_t v)
{
    if (it->nargs >= RS_XARGS_MAX) return;
    struct rs_xarg *a = &it->args[it->nargs++];
    a->key = (uint8_t)key;
    a->type = (uint8_t)type;
    a->v.u = v;
}

static inline void arg_d(struct rs_xitem *it, int key, double v)
{
    if (it->nargs >= RS_XARGS_MAX) return;
    struct rs_xarg *a = &it->args[it->nargs++];
    a->key = (uint8_t)key;
    a->type = RS_XA_DBL;
    a->v.d = v;
}

static inline void arg_s(struct rs_xitem *it, int key, uint32_t nid)
{
    if (it->nargs >= RS_XARGS_MAX) return;
    struct rs_xarg *a = &it->args[it->nargs++];
    a->key = (uint8_t)key;
    a->type = RS_XA_STR;
    a->v.nid = nid;
}

static inline struct xcache *cache_slot(struct xcache *c, uint64_t key) { return &c[mix64(key) & (XCACHE - 1)]; }

#endif
