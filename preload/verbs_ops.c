/* The patched ctx->ops data path: post_send, post_recv, post_srq_recv, poll_cq, req_notify_cq.
 *
 * Hot path rules: no lock, no allocation, no syscall, no formatting. Each wrapper finds the provider's
 * original in the context record (one hash probe on the context pointer), calls it, and records:
 *  - a post: one event per work request, stamped once per call (the call's start), with the provider's
 *    verdict per WR (0 before *bad_wr, the return value from *bad_wr on: those were not posted);
 *  - a poll that returned completions: one IBV_WC per completion, stamped once per poll, with the empty polls
 *    before it and their time in hdr.aux (vb_poll_found: no clock read of its own);
 *  - an empty poll: a counter per CQ, no event and no clock read (except on the first empty poll of a run,
 *    which stamps the run's start); the writer thread turns counters into IBV_POLL_EMPTY per interval.
 * The provider's return value, errno and *bad_wr reach the application untouched: after the provider
 * returns, the wrappers only read memory, read the vDSO clock and copy into the thread's ring, none of
 * which writes errno on success, so errno is not saved and restored here (two libc calls per wrapper).
 */
#include <errno.h>
#include <stddef.h>

#include "preload/verbs_int.h"

static inline uint32_t be32(uint32_t x) { return __builtin_bswap32(x); }

/* Opcode classes as bit masks (a switch compiles to an indirect jump on the hot path). */
#define OPB(op)    (1u << (op))
#define OPS_RDMA   (OPB(VB_WR_RDMA_WRITE) | OPB(VB_WR_RDMA_WRITE_WITH_IMM) | OPB(VB_WR_RDMA_READ))
#define OPS_ATOMIC (OPB(VB_WR_ATOMIC_CMP_AND_SWP) | OPB(VB_WR_ATOMIC_FETCH_AND_ADD))
#define OPS_IMM    (OPB(VB_WR_RDMA_WRITE_WITH_IMM) | OPB(VB_WR_SEND_WITH_IMM)) /* big-endian immediate */
#define OPS_INV    (OPB(VB_WR_SEND_WITH_INV) | OPB(VB_WR_LOCAL_INV))           /* invalidate_rkey, host order */
_Static_assert(offsetof(struct vb_send_wr, wr.rdma.remote_addr) == offsetof(struct vb_send_wr, wr.atomic.remote_addr),
               "rdma and atomic remote_addr share their offset");

/* Events are written in whole 8-byte words, each built in a register: rs_emit reads the event back as 8-byte
 * words right after it is filled, and a word written as two 4-byte halves cannot be forwarded from the store
 * buffer to that load (a store-forwarding stall of ~10-20 cycles per such word). EV_W(ev, f) is the word
 * that starts at field f; the static asserts check that f and the next field share it. */
typedef uint64_t vb_word __attribute__((may_alias));
#define EV_W(ev, f) (*(vb_word *)&(ev)->f)
#define EV_PAIR(T, f, g)                                                                                 \
    _Static_assert(offsetof(struct T, f) % 8 == 0 && offsetof(struct T, g) == offsetof(struct T, f) + 4, \
                   #T ": " #f " and " #g " share a word")
static inline uint64_t pk(uint32_t lo, uint32_t hi) { return (uint64_t)hi << 32 | lo; }
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "pk() puts lo at the lower address");
EV_PAIR(rs_ev_IBV_POST_SEND, qp_num, opcode);
EV_PAIR(rs_ev_IBV_POST_SEND, send_flags, num_sge);
EV_PAIR(rs_ev_IBV_POST_SEND, rkey, imm);
EV_PAIR(rs_ev_IBV_POST_SEND, mem, ret);
EV_PAIR(rs_ev_IBV_WC, qp_num, status);
EV_PAIR(rs_ev_IBV_WC, opcode, bytes);
EV_PAIR(rs_ev_IBV_WC, vendor_err, imm);
EV_PAIR(rs_ev_IBV_WC, wc_flags, src_qp);
EV_PAIR(rs_ev_IBV_POST_RECV, qp_num, srq);
EV_PAIR(rs_ev_IBV_POST_RECV, num_sge, mem);
EV_PAIR(rs_ev_IBV_POST_RECV, ret, pad);
_Static_assert(offsetof(struct rs_ev_hdr, kind) == 8 && offsetof(struct rs_ev_hdr, size) == 10 &&
                   offsetof(struct rs_ev_hdr, aux) == 12,
               "header word 1: kind, size, aux");
/* The header: ts, then kind | size | aux as one word. */
#define EV_HDR(ev, KIND, tsv, auxv)                                                                             \
    do {                                                                                                        \
        (ev)->h.ts = (tsv);                                                                                     \
        EV_W(ev, h.kind) = RS_EV_##KIND | (uint64_t)sizeof(struct rs_ev_##KIND) << 16 | (uint64_t)(auxv) << 32; \
    } while (0)

/* The words of a post event after the header, from the WR and its SGE summary. */
static inline __attribute__((always_inline)) void fill_send_words(struct rs_ev_IBV_POST_SEND *ev, uint32_t qpn,
                                                                  const struct vb_send_wr *wr, int ret, uint64_t bytes,
                                                                  uint64_t laddr, uint32_t nsge, uint32_t mem)
{
    uint32_t op = wr->opcode;
    uint32_t bit = op < 32 ? OPB(op) : 0;
    uint64_t raddr = 0;
    uint32_t rkey = 0;
    if (bit & (OPS_RDMA | OPS_ATOMIC)) {
        raddr = wr->wr.rdma.remote_addr;
        rkey = (bit & OPS_ATOMIC) ? wr->wr.atomic.rkey : wr->wr.rdma.rkey;
    }
    uint32_t imm = (bit & OPS_IMM) ? be32(wr->imm_data) : (bit & OPS_INV) ? wr->imm_data : 0;
    ev->wr_id = wr->wr_id;
    ev->bytes = bytes;
    ev->remote_addr = raddr;
    ev->local_addr = laddr;
    EV_W(ev, qp_num) = pk(qpn, op);
    EV_W(ev, send_flags) = pk(wr->send_flags, nsge);
    EV_W(ev, rkey) = pk(rkey, imm);
    EV_W(ev, mem) = pk(mem, (uint32_t)ret);
}

/* The less common WRs: several SGEs, inline data, none. */
static __attribute__((noinline)) void fill_send_slow(struct rs_ev_IBV_POST_SEND *ev, const struct vb_ctx_rec *c,
                                                     uint32_t qpn, const struct vb_send_wr *wr, int ret)
{
    int n = wr->num_sge;
    const struct vb_sge *sg = wr->sg_list;
    uint64_t bytes = 0, laddr = 0;
    uint32_t mem = RS_MEM_UNKNOWN;
    if (n > 0 && sg) {
        laddr = sg[0].addr;
        if (!(wr->send_flags & VB_SEND_INLINE)) {
            mem = vb_sge_kind(c, sg, n, &bytes);
        } else {
            /* inline data is copied by the CPU at post time; the lkey is not used */
            for (int i = 0; i < n; i++) bytes += sg[i].length;
            mem = RS_MEM_HOST;
        }
    }
    fill_send_words(ev, qpn, wr, ret, bytes, laddr, n > 0 ? (uint32_t)n : 0, mem);
}

/* Fill a post event (all but the header) from an ibv_send_wr: one SGE from a registered MR inline, the rest
 * out of line. */
static inline __attribute__((always_inline)) void fill_send(struct rs_ev_IBV_POST_SEND *ev, const struct vb_ctx_rec *c,
                                                            uint32_t qpn, const struct vb_send_wr *wr, int ret)
{
    const struct vb_sge *sg = wr->sg_list;
    if (RS_LIKELY(wr->num_sge == 1 && sg && !(wr->send_flags & VB_SEND_INLINE)))
        fill_send_words(ev, qpn, wr, ret, sg->length, sg->addr, 1, vb_mr_kind(c, sg->lkey));
    else fill_send_slow(ev, c, qpn, wr, ret);
}

/* WRs of a call the provider refused at least partly: 0 before *bad_wr, its return value from there on
 * (no bad_wr at all: none counted as posted). */
static __attribute__((noinline)) void emit_sends_failed(const struct vb_ctx_rec *c, uint32_t qpn, uint64_t t0, int ret,
                                                        const struct vb_send_wr *wr, const struct vb_send_wr *badw)
{
    int verdict = badw ? 0 : ret;
    struct rs_ev_IBV_POST_SEND ev;
    EV_HDR(&ev, IBV_POST_SEND, t0, 0);
    for (const struct vb_send_wr *w = wr; w; w = w->next) {
        if (w == badw) verdict = ret;
        fill_send(&ev, c, qpn, w, verdict);
        rs_emit(&ev.h);
    }
}

/* A list of WRs (or none): one clock read for the call, events filled after the provider has seen the list. */
static __attribute__((noinline)) int post_send_list(const struct vb_ctx_rec *c, struct vb_qp *qp, struct vb_send_wr *wr,
                                                    struct vb_send_wr **bad)
{
    uint64_t t0 = rs_now();
    int ret = c->post_send(qp, wr, bad);
    if (RS_UNLIKELY(ret)) {
        emit_sends_failed(c, qp->qp_num, t0, ret, wr, bad ? *bad : NULL);
        return ret;
    }
    struct rs_ev_IBV_POST_SEND ev;
    EV_HDR(&ev, IBV_POST_SEND, t0, 0);
    for (const struct vb_send_wr *w = wr; w; w = w->next) {
        fill_send(&ev, c, qp->qp_num, w, 0);
        rs_emit(&ev.h);
    }
    return 0;
}

/* A single WR failed: its verdict is the return value unless *bad_wr names another WR (then the provider
 * says this one was posted), as emit_sends_failed decides for lists. */
static __attribute__((noinline, cold)) int post_send_failed1(struct rs_ev_IBV_POST_SEND *ev, int ret,
                                                             const struct vb_send_wr *wr, struct vb_send_wr **bad)
{
    const struct vb_send_wr *badw = bad ? *bad : NULL;
    ev->ret = !badw || badw == wr ? ret : 0; /* (a split word: a stall on this cold path only) */
    rs_emit(&ev->h);
    return ret;
}

/* The common case is one WR per call: its event is stamped and filled before the provider call (the WR is
 * the application's, read-only to the provider), so that after the call only the copy is left and nothing
 * but the event (on the stack) and wr/bad (for a failure) live across the call. */
static int w_post_send(struct vb_qp *qp, struct vb_send_wr *wr, struct vb_send_wr **bad)
{
    const struct vb_ctx_rec *c = vb_ctx_find(qp->context);
    if (RS_UNLIKELY(!c || !c->post_send)) return EINVAL; /* not our context (cannot happen): never call NULL */
    if (RS_UNLIKELY(!rs_on(RS_FAM_verbs))) return c->post_send(qp, wr, bad);
    if (RS_UNLIKELY(!wr || wr->next)) return post_send_list(c, qp, wr, bad);
    struct rs_ev_IBV_POST_SEND ev;
    EV_HDR(&ev, IBV_POST_SEND, rs_now(), 0);
    fill_send(&ev, c, qp->qp_num, wr, 0); /* ret 0 unless the provider refuses it */
    int ret = c->post_send(qp, wr, bad);
    if (RS_UNLIKELY(ret)) return post_send_failed1(&ev, ret, wr, bad);
    rs_emit(&ev.h);
    return 0;
}

static inline void emit_recvs(const struct vb_ctx_rec *c, uint32_t qpn, uint32_t srq, uint32_t aux, uint64_t t0,
                              int ret, const struct vb_recv_wr *wr, const struct vb_recv_wr *badw)
{
    int verdict = 0;
    struct rs_ev_IBV_POST_RECV ev;
    EV_HDR(&ev, IBV_POST_RECV, t0, aux);
    EV_W(&ev, qp_num) = pk(qpn, srq);
    for (const struct vb_recv_wr *w = wr; w; w = w->next) {
        if (w == badw || (ret && !badw)) verdict = ret;
        int n = w->num_sge > 0 ? w->num_sge : 0;
        uint64_t bytes = 0, laddr = 0;
        uint32_t mem = RS_MEM_UNKNOWN;
        if (n && w->sg_list) {
            laddr = w->sg_list[0].addr;
            mem = vb_sge_kind(c, w->sg_list, n, &bytes);
        }
        ev.wr_id = w->wr_id;
        ev.bytes = bytes;
        ev.local_addr = laddr;
        EV_W(&ev, num_sge) = pk((uint32_t)n, mem);
        EV_W(&ev, ret) = pk((uint32_t)verdict, 0);
        rs_emit(&ev.h);
    }
}

static int w_post_recv(struct vb_qp *qp, struct vb_recv_wr *wr, struct vb_recv_wr **bad)
{
    const struct vb_ctx_rec *c = vb_ctx_find(qp->context);
    if (RS_UNLIKELY(!c || !c->post_recv)) return EINVAL;
    if (!rs_on(RS_FAM_verbs)) return c->post_recv(qp, wr, bad);
    uint64_t t0 = rs_now();
    int ret = c->post_recv(qp, wr, bad);
    emit_recvs(c, qp->qp_num, 0, 0, t0, ret, wr, ret && bad ? *bad : NULL);
    return ret;
}

static int w_post_srq_recv(struct vb_srq *srq, struct vb_recv_wr *wr, struct vb_recv_wr **bad)
{
    const struct vb_ctx_rec *c = vb_ctx_find(srq->context);
    if (RS_UNLIKELY(!c || !c->post_srq_recv)) return EINVAL;
    if (!rs_on(RS_FAM_verbs)) return c->post_srq_recv(srq, wr, bad);
    uint64_t t0 = rs_now();
    int ret = c->post_srq_recv(srq, wr, bad);
    emit_recvs(c, 0, vb_srq_id(srq), 0, t0, ret, wr, ret && bad ? *bad : NULL);
    return ret;
}

/* ibv_post_wq_recv calls the WQ's own post_recv: patched per WQ at creation (verbs_ex.c). */
int vb_w_wq_post_recv(struct vb_wq *wq, struct vb_recv_wr *wr, struct vb_recv_wr **bad)
{
    const struct vb_wq_rec *r = vb_wq_find(wq);
    vb_wq_post_recv_fn real = r ? __atomic_load_n(&r->post_recv, __ATOMIC_RELAXED) : NULL;
    if (RS_UNLIKELY(!real)) return EINVAL; /* a WQ we never patched (cannot happen): never call NULL */
    if (!rs_on(RS_FAM_verbs)) return real(wq, wr, bad);
    uint64_t t0 = rs_now();
    int ret = real(wq, wr, bad);
    emit_recvs(r->c, wq->wq_num, 0, 2, t0, ret, wr, ret && bad ? *bad : NULL);
    return ret;
}

static inline __attribute__((always_inline)) void fill_wc(struct rs_ev_IBV_WC *ev, const struct vb_wc *w)
{
    uint32_t f = w->wc_flags;
    ev->wr_id = w->wr_id;
    EV_W(ev, qp_num) = pk(w->qp_num, w->status);
    EV_W(ev, opcode) = pk(w->opcode, w->byte_len);
    EV_W(ev, vendor_err) = pk(w->vendor_err, (f & VB_WC_WITH_IMM) ? be32(w->imm_data) : 0);
    EV_W(ev, wc_flags) = pk(f, w->src_qp);
}

/* Completions found: stamp them all with one clock read and record them (out of line, so that the
 * empty-poll path needs no stack frame for the event). */
static __attribute__((noinline)) int poll_record(struct vb_cq *cq, struct vb_cq_rec *q, int ret, const struct vb_wc *wc)
{
    /* (cq is q->cq for a bound record; poll_unknown may pass a record still being bound, or none) */
    uint64_t now = rs_now();
    uint32_t aux = q ? vb_poll_found(q, now) : 0;
    struct rs_ev_IBV_WC ev;
    EV_HDR(&ev, IBV_WC, now, aux);
    ev.cq = (uint64_t)(uintptr_t)cq;
    const struct vb_wc *end = wc + ret;
    for (const struct vb_wc *w = wc; w < end; w++) {
        fill_wc(&ev, w);
        rs_emit(&ev.h);
    }
    return ret;
}

/* One completion (a poll for one, or a CQ drained one at a time): nothing but the event lives across the
 * copy, so no saved registers. */
static __attribute__((noinline)) int poll_record1(struct vb_cq_rec *q, const struct vb_wc *wc)
{
    uint64_t now = rs_now();
    struct rs_ev_IBV_WC ev;
    EV_HDR(&ev, IBV_WC, now, vb_poll_found(q, now));
    ev.cq = (uint64_t)(uintptr_t)q->cq;
    fill_wc(&ev, wc);
    rs_emit(&ev.h);
    return 1;
}

/* Everything but a first-slot hit on a bound record: a CQ further down its probe sequence, or one we have no
 * (valid) record of — created behind our back, e.g. by a provider's own path, or one whose context was closed
 * and reopened: poll through the context, (re)bind or add a record when the table lock is free. */
static __attribute__((noinline)) int poll_slow(struct vb_cq *cq, int n, struct vb_wc *wc)
{
    struct vb_cq_rec *q = vb_cq_find(cq);
    if (q && __atomic_load_n(&q->ctx, __ATOMIC_ACQUIRE) == cq->context && q->poll_cq) {
        int ret = q->poll_cq(cq, n, wc);
        if (ret < 0 || !rs_on(RS_FAM_verbs)) return ret;
        if (ret == 0) {
            vb_count_empty(q);
            return 0;
        }
        return poll_record(cq, q, ret, wc);
    }
    struct vb_ctx_rec *c = vb_ctx_find(cq->context);
    if (!c || !c->poll_cq) return -EINVAL; /* not our context (cannot happen): never call NULL */
    int ret = c->poll_cq(cq, n, wc);
    if (!rs_on(RS_FAM_verbs)) return ret;
    if (q) vb_cq_bind(q, c); /* a stale record (CQ freed behind our back, address reused): now this CQ's */
    else q = vb_cq_find_or_add(cq, c);
    if (ret == 0) {
        if (q) vb_count_empty(q);
        return 0;
    }
    return ret < 0 ? ret : poll_record(cq, q, ret, wc);
}

/* The empty poll is the path to keep short: the first slot of the CQ's probe sequence, one check of the
 * record's first line, the call, a counter bump. Anything else goes to poll_slow as a tail call, so that
 * nothing but q and wc has to live across the provider call. */
static int w_poll_cq(struct vb_cq *cq, int n, struct vb_wc *wc)
{
    uintptr_t key = (uintptr_t)cq;
    unsigned s = (unsigned)rs_ptrmap_hash(key) & (VB_MAX_CQ - 1); /* the first slot of its probe sequence */
    struct vb_cq_rec *q = &vb_cq_recs[s];
    if (RS_UNLIKELY(__atomic_load_n(&vb_cq_keys[s], __ATOMIC_ACQUIRE) != key ||
                    __atomic_load_n(&q->ctx, __ATOMIC_ACQUIRE) != cq->context || !q->poll_cq))
        return poll_slow(cq, n, wc);
    int ret = q->poll_cq(cq, n, wc);
    /* Keep only q and wc live across the call (the compiler would otherwise keep the table base, the slot
     * and cq in saved registers to rebuild q): fewer registers to save and restore on every poll. */
    __asm__("" : "+r"(q));
    if (RS_LIKELY(ret == 0)) {
        if (rs_on(RS_FAM_verbs)) vb_count_empty(q);
        return 0;
    }
    if (ret < 0 || !rs_on(RS_FAM_verbs)) return ret;
    if (ret == 1) return poll_record1(q, wc);
    return poll_record(q->cq, q, ret, wc);
}

static int w_req_notify_cq(struct vb_cq *cq, int solicited)
{
    const struct vb_ctx_rec *c = vb_ctx_find(cq->context);
    if (RS_UNLIKELY(!c || !c->req_notify_cq)) return EINVAL;
    if (!rs_on(RS_FAM_verbs)) return c->req_notify_cq(cq, solicited);
    uint64_t t0 = rs_now();
    /* Arming the CQ means the program stops busy-polling it (it will wait for the event): a run of empty
     * polls ends here, so the wait is not counted as time spent polling empty; the CQ's next completions say
     * that it was armed (RS_WC_AUX_ARMED: their wait may have been in ibv_get_cq_event). */
    struct vb_cq_rec *q = vb_cq_find(cq);
    if (q) {
        vb_end_empty_run(q, t0);
        VB_ST(q->wc_aux, RS_WC_AUX_SEEN | RS_WC_AUX_ARMED);
    }
    int ret = c->req_notify_cq(cq, solicited);
    int saved = errno;
    struct rs_ev_IBV_REQ_NOTIFY ev;
    RS_EV_INIT(&ev, IBV_REQ_NOTIFY, t0);
    ev.cq = (uint64_t)(uintptr_t)cq;
    ev.solicited = (uint32_t)solicited;
    ev.ret = ret;
    rs_emit(&ev.h);
    errno = saved;
    return ret;
}

/* Install our wrappers where the provider has an entry (a NULL entry stays NULL: callers may test it). */
#define VB_OPS(X) X(post_send) X(post_recv) X(post_srq_recv) X(poll_cq) X(req_notify_cq)

void vb_patch_ops(struct vb_ctx_rec *c)
{
    struct vb_context_ops *o = &c->ctx->ops;
#define SAVE(f)                                           \
    if (o->f && o->f != w_##f) {                          \
        c->f = o->f;                                      \
        __atomic_store_n(&o->f, w_##f, __ATOMIC_RELEASE); \
    }
    VB_OPS(SAVE)
#undef SAVE
}

void vb_unpatch_ops(struct vb_ctx_rec *c)
{
    struct vb_context_ops *o = &c->ctx->ops;
#define RESTORE(f) \
    if (o->f == w_##f && c->f) o->f = c->f;
    VB_OPS(RESTORE)
#undef RESTORE
}
