/* Internal state shared by the verbs interposer's files:
 *   verbs.c        exported control-path hooks (open/close device, PD, MR, CQ, QP) and registration
 *   verbs_ops.c    the patched ctx->ops data path (post_send/recv/srq_recv, poll_cq, req_notify_cq)
 *   verbs_ex.c     the extended API: verbs_context create_qp_ex/create_cq_ex, ibv_qp_ex wr_*, ibv_cq_ex polls
 *   verbs_mr.c     MR table (lkey -> memory kind) and memory-kind classification
 *   verbs_tables.c context/CQ/QP tables and the per-CQ empty-poll counters
 *
 * Tables are fixed-size open-addressing hashes in static storage: writers (control path) serialise on one
 * mutex; readers (data path) never lock, never allocate, never make a syscall.
 */
#ifndef RAILSCOPE_VERBS_INT_H
#define RAILSCOPE_VERBS_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "preload/ptrmap.h"
#include "preload/verbs_abi.h"
#include "tracer/rs_tracer.h"

/* One opened context: the provider's originals, saved before patching. */
struct vb_ctx_rec {
    struct vb_context *ctx;
    uint32_t id;      /* 1..VB_MAX_CTX: small id used in MR keys */
    uint32_t dev_str; /* interned device name */
    vb_post_send_fn post_send;
    vb_post_recv_fn post_recv;
    vb_post_srq_recv_fn post_srq_recv;
    vb_poll_cq_fn poll_cq;
    vb_req_notify_fn req_notify_cq;
    void *create_cq_ex; /* NULL when absent or not patched */
    void *create_qp_ex;
    void *create_srq_ex, *create_wq, *destroy_wq;
} __attribute__((aligned(64))); /* the data path's fields (ctx, id, the five entries) share one line */

/* One CQ: empty-poll accounting (written by the polling thread, read by the tick) and, for a cq_ex, the
 * provider's poll entries. Several threads polling one CQ may lose counts (no atomic RMW on the hot path).
 * The first line holds everything an empty poll touches: the context and the provider's poll_cq are copies
 * of c->ctx and c->poll_cq (vb_cq_bind), so that the check and the call need no load through c. */
struct vb_cq_rec {
    struct vb_context *ctx; /* c->ctx while bound; NULL = stale (its context was closed) */
    vb_poll_cq_fn poll_cq;  /* c->poll_cq */
    uint64_t empty;         /* empty polls so far */
    uint64_t run_start;     /* start of the current run of empty polls; 0 = none */
    uint64_t run_first;     /* value of `empty` at the run's first poll */
    uint64_t empty_ns;      /* time in finished runs of empty polls */
    struct vb_cq *cq;
    uint32_t wc_aux; /* the next completions' IBV_WC aux bits: RS_WC_AUX_SEEN, | RS_WC_AUX_ARMED after req_notify_cq */
    /* cold: the tick's and the control path's */
    struct vb_ctx_rec *c;
    uint64_t emitted_empty, emitted_ns, emitted_ts; /* what the last POLL_EMPTY covered */
    int flushing;                                   /* the tick thread and destroy_cq both flush: one at a time */
    int ex;
    uint64_t wc_flags;  /* cq_ex: which read_* are valid */
    uint32_t qp_single; /* the one QP using this CQ (0 none yet, UINT32_MAX several): the
                                        * qp_num of cq_ex completions created without IBV_WC_EX_WITH_QP_NUM */
    int (*start_poll)(struct vb_cq_ex *, void *);
    int (*next_poll)(struct vb_cq_ex *);
    void (*end_poll)(struct vb_cq_ex *);
    uint64_t batch_ts;  /* cq_ex: poll time of the current start_poll batch */
    uint32_t batch_aux; /* cq_ex: its completions' IBV_WC hdr.aux (vb_poll_found) */
} __attribute__((aligned(64)));
_Static_assert(__builtin_offsetof(struct vb_cq_rec, wc_aux) < 64, "an empty poll's and a found poll's fields share the "
                                                                  "record's first line");

/* One post being built with the ibv_wr_* API, emitted at wr_complete. */
#define VB_WR_PENDING 32
struct vb_qp_rec {
    struct vb_qp *qp;
    struct vb_ctx_rec *c;
    int ex; /* qp_ex builders patched */
    /* the provider's builders */
    void (*wr_atomic_cmp_swp)(struct vb_qp_ex *, uint32_t, uint64_t, uint64_t, uint64_t);
    void (*wr_atomic_fetch_add)(struct vb_qp_ex *, uint32_t, uint64_t, uint64_t);
    void (*wr_bind_mw)(struct vb_qp_ex *, void *, uint32_t, const void *);
    void (*wr_local_inv)(struct vb_qp_ex *, uint32_t);
    void (*wr_rdma_read)(struct vb_qp_ex *, uint32_t, uint64_t);
    void (*wr_rdma_write)(struct vb_qp_ex *, uint32_t, uint64_t);
    void (*wr_rdma_write_imm)(struct vb_qp_ex *, uint32_t, uint64_t, uint32_t);
    void (*wr_send)(struct vb_qp_ex *);
    void (*wr_send_imm)(struct vb_qp_ex *, uint32_t);
    void (*wr_send_inv)(struct vb_qp_ex *, uint32_t);
    void (*wr_send_tso)(struct vb_qp_ex *, void *, uint16_t, uint16_t);
    void (*wr_set_inline_data)(struct vb_qp_ex *, void *, size_t);
    void (*wr_set_inline_data_list)(struct vb_qp_ex *, size_t, const void *);
    void (*wr_set_sge)(struct vb_qp_ex *, uint32_t, uint64_t, uint32_t);
    void (*wr_set_sge_list)(struct vb_qp_ex *, size_t, const struct vb_sge *);
    vb_wr_void_fn wr_start;
    vb_wr_complete_fn wr_complete;
    vb_wr_void_fn wr_abort;
    /* builder state (the application serialises a QP's builders, so one writer) */
    int cur_valid;
    int npending;
    struct rs_ev_IBV_POST_SEND cur;
    struct rs_ev_IBV_POST_SEND pending[VB_WR_PENDING];
};

/* Tables (verbs_tables.c), each a pointer-keyed table (preload/ptrmap.h): the find functions never lock
 * (inline below: they are the hot path); add and del take the control-path mutex. */
#define VB_MAX_CTX 64
#define VB_MAX_CQ  4096
#define VB_MAX_QP  4096
#define VB_TOMB    RS_PTRMAP_TOMB
static inline struct vb_ctx_rec *vb_ctx_find(const struct vb_context *ctx);
struct vb_ctx_rec *vb_ctx_add(struct vb_context *ctx); /* NULL when full */
void vb_ctx_del(struct vb_context *ctx);
static inline struct vb_cq_rec *vb_cq_find(const struct vb_cq *cq);
struct vb_cq_rec *vb_cq_add(struct vb_cq *cq, struct vb_ctx_rec *c);
/* Hot path, first sight of a CQ created behind our back: never blocks (trylock), may return NULL. */
struct vb_cq_rec *vb_cq_find_or_add(struct vb_cq *cq, struct vb_ctx_rec *c);
void vb_cq_del(struct vb_cq *cq);
/* Point a CQ record at its context (copies the hot fields); forget a closing context in every CQ record. */
void vb_cq_bind(struct vb_cq_rec *q, struct vb_ctx_rec *c);
void vb_cq_unbind_ctx(const struct vb_ctx_rec *c);
static inline struct vb_qp_rec *vb_qp_find(const struct vb_qp *qp);
struct vb_qp_rec *vb_qp_add(struct vb_qp *qp, struct vb_ctx_rec *c);
void vb_qp_del(struct vb_qp *qp);
/* SRQs: pointer -> id (what IBV_POST_RECV.srq carries); WQs: pointer -> the provider's post_recv. */
#define VB_MAX_SRQ     1024
#define VB_MAX_WQ      1024
#define VB_SRQ_UNKNOWN 1u /* an SRQ not seen created; ids of tracked ones start at 2 */
struct vb_wq_rec {
    struct vb_wq *wq;
    struct vb_ctx_rec *c;
    vb_wq_post_recv_fn post_recv;
};
/* id 0: assign the next id. Returns the id, 0 when the table is full. */
uint32_t vb_srq_add(struct vb_srq *srq, uint32_t id);
uint32_t vb_srq_del(struct vb_srq *srq); /* its id; VB_SRQ_UNKNOWN if it had none */
static inline uint32_t vb_srq_id(const struct vb_srq *srq);
struct vb_wq_rec *vb_wq_add(struct vb_wq *wq, struct vb_ctx_rec *c, vb_wq_post_recv_fn orig); /* NULL: full */
void vb_wq_del(struct vb_wq *wq);
static inline struct vb_wq_rec *vb_wq_find(const struct vb_wq *wq);
/* Emit POLL_EMPTY for counters that moved (all CQs, or one before its destruction). */
void vb_flush_empty_all(void);
void vb_empty_fork_child(void); /* atfork child: the parent's pending empty-poll counts are not ours */
void vb_flush_empty(struct vb_cq_rec *q, uint64_t now);

/* Memory (verbs_mr.c). */
void vb_mr_add(const struct vb_ctx_rec *c, uint32_t lkey, uint8_t kind);
void vb_mr_del(const struct vb_ctx_rec *c, uint32_t lkey);
void vb_mr_purge(uint32_t ctx_id);
static inline uint8_t vb_mr_kind(const struct vb_ctx_rec *c, uint32_t lkey); /* RS_MEM_UNKNOWN if absent */
/* Classify [addr, addr+len) at registration time; *cuda_dev = device ordinal or -1. */
uint8_t vb_classify(uint64_t addr, uint64_t len, int *cuda_dev);

/* Data path (verbs_ops.c). */
void vb_patch_ops(struct vb_ctx_rec *c);   /* saves originals into c, installs wrappers */
void vb_unpatch_ops(struct vb_ctx_rec *c); /* restores them (close_device) */
int vb_w_wq_post_recv(struct vb_wq *wq, struct vb_recv_wr *wr, struct vb_recv_wr **bad); /* a WQ's post_recv */
static inline uint8_t vb_sge_kind(const struct vb_ctx_rec *c, const struct vb_sge *sg, int n, uint64_t *bytes);
static inline void vb_count_empty(struct vb_cq_rec *q);
static inline void vb_end_empty_run(struct vb_cq_rec *q, uint64_t now);
static inline uint32_t vb_poll_found(struct vb_cq_rec *q, uint64_t now); /* IBV_WC hdr.aux */

/* Extended API (verbs_ex.c). */
void vb_patch_vctx(struct vb_ctx_rec *c);
void vb_unpatch_vctx(struct vb_ctx_rec *c);
void vb_patch_qp_ex(struct vb_qp_rec *r); /* (re)installs wr_* wrappers, keeping new originals */
void vb_patch_cq_ex(struct vb_cq_rec *q);
/* Bookkeeping shared by ibv_create_qp and create_qp_ex / ibv_create_cq and create_cq_ex. */
/* rec: record the event (the calling wrapper holds the guard); the tables are kept either way. */
void vb_qp_created(int rec, struct vb_context *ctx, struct vb_qp *qp, const struct vb_qp_init_attr *a, int ex,
                   uint64_t t0, int err);
void vb_srq_created(int rec, struct vb_context *ctx, struct vb_pd *pd, struct vb_srq *srq, uint32_t max_wr, int ext,
                    uint64_t t0, int err);
void vb_cq_created(int rec, struct vb_context *ctx, struct vb_cq *cq, int cqe, int ex, uint64_t wc_flags, uint64_t t0,
                   int err);

/* ---- hot-path lookups (storage in verbs_tables.c and verbs_mr.c) ---- */
/* Hidden: addressed directly, not through the GOT. */
#define VB_HIDDEN __attribute__((visibility("hidden")))
extern VB_HIDDEN unsigned rs_enabled_mask; /* the core's (hidden in the library too): rs_on() without the GOT */
extern VB_HIDDEN uintptr_t vb_ctx_keys[VB_MAX_CTX];
extern VB_HIDDEN struct vb_ctx_rec vb_ctx_recs[VB_MAX_CTX];
extern VB_HIDDEN uintptr_t vb_cq_keys[VB_MAX_CQ];
extern VB_HIDDEN struct vb_cq_rec vb_cq_recs[VB_MAX_CQ];
extern VB_HIDDEN uintptr_t vb_qp_keys[VB_MAX_QP];
extern VB_HIDDEN struct vb_qp_rec *vb_qp_recs[VB_MAX_QP];

/* The two data-path tables return the record straight from the inline first probe, the rest of the probe
 * sequence out of line (vb_*_find_more, verbs_tables.c): with rs_ptrmap_find's slot number in between, the
 * compiler merges the two paths and w_post_send costs ~10 more instructions per post (callgrind,
 * docs/dev/journal/style.md). */
struct vb_ctx_rec *vb_ctx_find_more(const struct vb_context *ctx, unsigned s0);
struct vb_cq_rec *vb_cq_find_more(const struct vb_cq *cq, unsigned s0);

static inline struct vb_ctx_rec *vb_ctx_find(const struct vb_context *ctx)
{
    unsigned s = (unsigned)rs_ptrmap_hash((uintptr_t)ctx) & (VB_MAX_CTX - 1);
    uintptr_t k = __atomic_load_n(&vb_ctx_keys[s], __ATOMIC_ACQUIRE);
    if (RS_LIKELY(k == (uintptr_t)ctx)) return &vb_ctx_recs[s];
    return k == RS_PTRMAP_EMPTY ? NULL : vb_ctx_find_more(ctx, s);
}

static inline struct vb_cq_rec *vb_cq_find(const struct vb_cq *cq)
{
    unsigned s = (unsigned)rs_ptrmap_hash((uintptr_t)cq) & (VB_MAX_CQ - 1);
    uintptr_t k = __atomic_load_n(&vb_cq_keys[s], __ATOMIC_ACQUIRE);
    if (RS_LIKELY(k == (uintptr_t)cq)) return &vb_cq_recs[s];
    return k == RS_PTRMAP_EMPTY ? NULL : vb_cq_find_more(cq, s);
}

static inline struct vb_qp_rec *vb_qp_find(const struct vb_qp *qp)
{
    long s = rs_ptrmap_find(vb_qp_keys, VB_MAX_QP, (uintptr_t)qp);
    return RS_LIKELY(s >= 0) ? vb_qp_recs[s] : NULL;
}

extern VB_HIDDEN uintptr_t vb_srq_keys[VB_MAX_SRQ];
extern VB_HIDDEN uint32_t vb_srq_ids[VB_MAX_SRQ];
extern VB_HIDDEN uintptr_t vb_wq_keys[VB_MAX_WQ];
extern VB_HIDDEN struct vb_wq_rec vb_wq_recs[VB_MAX_WQ];

static inline uint32_t vb_srq_id(const struct vb_srq *srq)
{
    long s = rs_ptrmap_find(vb_srq_keys, VB_MAX_SRQ, (uintptr_t)srq);
    return RS_LIKELY(s >= 0) ? vb_srq_ids[s] : VB_SRQ_UNKNOWN;
}

static inline struct vb_wq_rec *vb_wq_find(const struct vb_wq *wq)
{
    long s = rs_ptrmap_find(vb_wq_keys, VB_MAX_WQ, (uintptr_t)wq);
    return RS_LIKELY(s >= 0) ? &vb_wq_recs[s] : NULL;
}

/* MR table (verbs_mr.c): a pointer-keyed table (preload/ptrmap.h) whose keys are vb_mr_key(ctx id, lkey)
 * = [ctx id:24 | lkey:32] (never 0 or 1: context ids start at 1), hashed with vb_mr_hash (the keys
 * are not addresses); each slot's memory kind beside it. */
#define VB_MR_SLOTS     (1u << 16)
#define VB_MR_CTX_SHIFT 40
extern VB_HIDDEN uintptr_t vb_mr_keys[VB_MR_SLOTS];
extern VB_HIDDEN uint8_t vb_mr_kinds[VB_MR_SLOTS];
static inline uint32_t vb_mr_hash(uint32_t id, uint32_t lkey)
{
    uint32_t x = lkey * 0x9e3779b1u ^ id * 0x85ebca6bu;
    return (x ^ (x >> 16)) & (VB_MR_SLOTS - 1);
}
static inline uint64_t vb_mr_key(uint32_t id, uint32_t lkey) { return ((uint64_t)id << VB_MR_CTX_SHIFT) | lkey; }

/* A one-entry cache per thread in front of the table: a program posts from the same few MRs over and over.
 * vb_mr_gen moves with every change to the table, so an entry is only used while nothing was added,
 * removed or purged since it was filled. */
struct vb_mr_cache {
    uint64_t key; /* vb_mr_key(); 0 never matches (context ids start at 1) */
    uint32_t gen;
    uint8_t kind;
};
extern __thread struct vb_mr_cache vb_mr_last __attribute__((tls_model("initial-exec"), visibility("hidden")));
extern VB_HIDDEN uint32_t vb_mr_gen;
uint8_t vb_mr_kind_lookup(uint64_t want, uint32_t id, uint32_t lkey); /* the table; refills the cache */

static inline uint8_t vb_mr_kind(const struct vb_ctx_rec *c, uint32_t lkey)
{
    uint64_t want = vb_mr_key(c->id, lkey);
    if (RS_LIKELY(vb_mr_last.key == want && vb_mr_last.gen == __atomic_load_n(&vb_mr_gen, __ATOMIC_ACQUIRE)))
        return vb_mr_last.kind;
    return vb_mr_kind_lookup(want, c->id, lkey);
}

/* Memory kind and total length of an SGE list (n >= 1): MIXED when the SGEs' kinds differ. */
static inline uint8_t vb_sge_kind(const struct vb_ctx_rec *c, const struct vb_sge *sg, int n, uint64_t *bytes)
{
    uint64_t b = sg[0].length;
    uint8_t kind = vb_mr_kind(c, sg[0].lkey);
    for (int i = 1; i < n; i++) {
        b += sg[i].length;
        if (vb_mr_kind(c, sg[i].lkey) != kind) kind = RS_MEM_MIXED;
    }
    *bytes = b;
    return kind;
}

/* Empty-poll accounting: a plain counter bump; the first empty poll of a run stamps its start.
 * Time spent polling empty = from a run's first empty poll to the poll that finds a completion (or to
 * req_notify_cq, when the program stops polling to wait for an event). A run of a single empty poll counts
 * no time: that is a program draining a CQ before it waits, not one spinning on it. */
/* Fields are read and written with relaxed atomics: several threads may poll one CQ, and a lost increment
 * between them is acceptable (counts are statistics) where a lock or an RMW on every empty poll is not.
 * On x86 these are plain loads and stores. */
#define VB_LD(x)    __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define VB_ST(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
/* The first empty poll of a run: out of line, so that the clock read's frame is not the empty path's. */
__attribute__((noinline, cold)) void vb_run_begin(struct vb_cq_rec *q, uint64_t e);
static inline void vb_count_empty(struct vb_cq_rec *q)
{
    uint64_t e = VB_LD(q->empty) + 1;
    VB_ST(q->empty, e);
    if (RS_UNLIKELY(!VB_LD(q->run_start))) vb_run_begin(q, e);
}

static inline void vb_end_empty_run(struct vb_cq_rec *q, uint64_t now)
{
    uint64_t rs = VB_LD(q->run_start);
    if (rs) {
        if (VB_LD(q->empty) > VB_LD(q->run_first) && now > rs) VB_ST(q->empty_ns, VB_LD(q->empty_ns) + (now - rs));
        VB_ST(q->run_start, 0);
    }
}

/* A poll that returned completions at `now` (the clock read their events share): ends the run of empty polls
 * (as vb_end_empty_run) and returns the completions' IBV_WC hdr.aux (formats/events_verbs.h RS_WC_AUX_*): the
 * bits ibv_req_notify_cq left (wc_aux, written back only then) and, when a run of empty polls ends here, their
 * number's class and the time since the first (run_start, run_first: no clock read of its own). Found with no
 * empty poll before it, nothing more: the time since the CQ's previous completions is in the trace (their
 * IBV_WC's time), and recording it here cost ~4 ns more per completion (a clock-dependent chain before the
 * event's header; vb_bench, session 20). */
static inline uint32_t vb_poll_found(struct vb_cq_rec *q, uint64_t now)
{
    uint64_t rs = VB_LD(q->run_start);
    uint32_t a = VB_LD(q->wc_aux);
    if (RS_UNLIKELY(a != RS_WC_AUX_SEEN)) VB_ST(q->wc_aux, RS_WC_AUX_SEEN);
    if (rs) {
        uint64_t e = VB_LD(q->empty), rf = VB_LD(q->run_first);
        if (e > rf && now > rs) VB_ST(q->empty_ns, VB_LD(q->empty_ns) + (now - rs));
        VB_ST(q->run_start, 0);
        /* (several pollers may lose counts; a run start later than `now` is another poller's: no time) */
        a |= rs_wc_aux_run(e >= rf ? e - rf + 1 : 1, now > rs ? now - rs : 0);
    }
    return a;
}

#endif
