/* The patched ctx->ops data path: post_send, post_recv, post_srq_recv, poll_cq, req_notify_cq.
 *
 * Hot path rules: no lock, no allocation, no syscall, no formatting. Each wrapper finds the provider's
 * original in the context record (one hash probe on the context pointer), calls it, and records:
 *  - a post: one event per work request, stamped once per call (the call's start), with the provider's
 *    verdict per WR (0 before *bad_wr, the return value from *bad_wr on: those were not posted);
 *  - a poll that returned completions: one IBV_WC per completion, stamped once per poll;
 *  - an empty poll: a counter per CQ, no event and no clock read (except on the first empty poll of a run,
 *    which stamps the run's start); the writer thread turns counters into IBV_POLL_EMPTY per interval.
 * The provider's return value, errno and *bad_wr reach the application untouched: after the provider
 * returns, the wrappers only read memory, read the vDSO clock and copy into the thread's ring, none of
 * which writes errno on success, so errno is not saved and restored here (two libc calls per wrapper).
 */
#include <errno.h>

#include "preload/verbs_int.h"

static inline uint32_t be32(uint32_t x) { return __builtin_bswap32(x); }

uint8_t vb_sge_kind(const struct vb_ctx_rec *c, const struct vb_sge *sg, int n, uint64_t *bytes)
{
    uint64_t b = 0;
    uint8_t kind = RS_MEM_UNKNOWN;
    for (int i = 0; i < n; i++) {
        b += sg[i].length;
        uint8_t k = vb_mr_kind(c, sg[i].lkey);
        kind = i == 0 ? k : (k == kind ? kind : RS_MEM_MIXED);
    }
    *bytes = b;
    return kind;
}

/* Fill a post event from an ibv_send_wr. */
static inline void fill_send(struct rs_ev_IBV_POST_SEND *ev, const struct vb_ctx_rec *c, uint32_t qpn,
                             const struct vb_send_wr *wr)
{
    uint32_t op = wr->opcode;
    int n = wr->num_sge > 0 ? wr->num_sge : 0;
    ev->wr_id = wr->wr_id;
    ev->qp_num = qpn;
    ev->opcode = op;
    ev->send_flags = wr->send_flags;
    ev->num_sge = (uint32_t)n;
    ev->local_addr = n && wr->sg_list ? wr->sg_list[0].addr : 0;
    if (!n || !wr->sg_list) {
        ev->bytes = 0;
        ev->mem = RS_MEM_UNKNOWN;
    } else if (wr->send_flags & VB_SEND_INLINE) {
        /* inline data is copied by the CPU at post time; the lkey is not used */
        uint64_t b = 0;
        for (int i = 0; i < n; i++) b += wr->sg_list[i].length;
        ev->bytes = b;
        ev->mem = RS_MEM_HOST;
    } else {
        ev->mem = vb_sge_kind(c, wr->sg_list, n, &ev->bytes);
    }
    ev->remote_addr = 0;
    ev->rkey = 0;
    ev->imm = 0;
    switch (op) {
    case VB_WR_RDMA_WRITE_WITH_IMM:
        ev->imm = be32(wr->imm_data);
        /* fall through */
    case VB_WR_RDMA_WRITE:
    case VB_WR_RDMA_READ:
        ev->remote_addr = wr->wr.rdma.remote_addr;
        ev->rkey = wr->wr.rdma.rkey;
        break;
    case VB_WR_ATOMIC_CMP_AND_SWP:
    case VB_WR_ATOMIC_FETCH_AND_ADD:
        ev->remote_addr = wr->wr.atomic.remote_addr;
        ev->rkey = wr->wr.atomic.rkey;
        break;
    case VB_WR_SEND_WITH_IMM:
        ev->imm = be32(wr->imm_data);
        break;
    case VB_WR_SEND_WITH_INV:
    case VB_WR_LOCAL_INV:
        ev->imm = wr->imm_data; /* invalidate_rkey, host order */
        break;
    default:
        break;
    }
}

static int w_post_send(struct vb_qp *qp, struct vb_send_wr *wr, struct vb_send_wr **bad)
{
    const struct vb_ctx_rec *c = vb_ctx_find(qp->context);
    if (RS_UNLIKELY(!c || !c->post_send)) return EINVAL; /* not our context (cannot happen): never call NULL */
    if (!rs_on(RS_FAM_verbs)) return c->post_send(qp, wr, bad);
    uint64_t t0 = rs_now();
    int ret = c->post_send(qp, wr, bad);
    const struct vb_send_wr *badw = ret && bad ? *bad : NULL;
    int verdict = 0;
    struct rs_ev_IBV_POST_SEND ev;
    RS_EV_INIT(&ev, IBV_POST_SEND, t0);
    for (const struct vb_send_wr *w = wr; w; w = w->next) {
        if (w == badw || (ret && !badw)) verdict = ret; /* no bad_wr on failure: count none as posted */
        fill_send(&ev, c, qp->qp_num, w);
        ev.ret = verdict;
        rs_emit(&ev.h);
    }
    return ret;
}

static inline void emit_recvs(const struct vb_ctx_rec *c, uint32_t qpn, uint32_t srq, uint64_t t0, int ret,
                              const struct vb_recv_wr *wr, const struct vb_recv_wr *badw)
{
    int verdict = 0;
    struct rs_ev_IBV_POST_RECV ev;
    RS_EV_INIT(&ev, IBV_POST_RECV, t0);
    ev.qp_num = qpn;
    ev.srq = srq;
    ev.pad = 0;
    for (const struct vb_recv_wr *w = wr; w; w = w->next) {
        if (w == badw || (ret && !badw)) verdict = ret;
        int n = w->num_sge > 0 ? w->num_sge : 0;
        ev.wr_id = w->wr_id;
        ev.num_sge = (uint32_t)n;
        ev.local_addr = n && w->sg_list ? w->sg_list[0].addr : 0;
        if (n && w->sg_list) ev.mem = vb_sge_kind(c, w->sg_list, n, &ev.bytes);
        else ev.mem = RS_MEM_UNKNOWN, ev.bytes = 0;
        ev.ret = verdict;
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
    emit_recvs(c, qp->qp_num, 0, t0, ret, wr, ret && bad ? *bad : NULL);
    return ret;
}

static int w_post_srq_recv(struct vb_srq *srq, struct vb_recv_wr *wr, struct vb_recv_wr **bad)
{
    const struct vb_ctx_rec *c = vb_ctx_find(srq->context);
    if (RS_UNLIKELY(!c || !c->post_srq_recv)) return EINVAL;
    if (!rs_on(RS_FAM_verbs)) return c->post_srq_recv(srq, wr, bad);
    uint64_t t0 = rs_now();
    int ret = c->post_srq_recv(srq, wr, bad);
    emit_recvs(c, 0, 1, t0, ret, wr, ret && bad ? *bad : NULL);
    return ret;
}

/* Completions found: stamp and record them (out of line, so that the empty-poll path stays small). */
static __attribute__((noinline)) int poll_record(struct vb_cq *cq, struct vb_cq_rec *q, int ret,
                                                 const struct vb_wc *wc)
{
    uint64_t now = rs_now();
    if (q) vb_end_empty_run(q, now);
    struct rs_ev_IBV_WC ev;
    RS_EV_INIT(&ev, IBV_WC, now);
    ev.cq = (uint64_t)(uintptr_t)cq;
    for (int i = 0; i < ret; i++) {
        const struct vb_wc *w = &wc[i];
        ev.wr_id = w->wr_id;
        ev.qp_num = w->qp_num;
        ev.status = w->status;
        ev.opcode = w->opcode;
        ev.bytes = w->byte_len;
        ev.vendor_err = w->vendor_err;
        ev.imm = (w->wc_flags & VB_WC_WITH_IMM) ? be32(w->imm_data) : 0;
        ev.wc_flags = w->wc_flags;
        ev.src_qp = w->src_qp;
        rs_emit(&ev.h);
    }
    return ret;
}

/* A CQ we have no (valid) record of — created behind our back, e.g. mlx5dv_create_cq: poll through the
 * context, add a record when the table lock is free. */
static __attribute__((noinline)) int poll_unknown(struct vb_cq *cq, int n, struct vb_wc *wc)
{
    struct vb_ctx_rec *c = vb_ctx_find(cq->context);
    if (!c || !c->poll_cq) return -EINVAL; /* not our context (cannot happen): never call NULL */
    int ret = c->poll_cq(cq, n, wc);
    if (!rs_on(RS_FAM_verbs)) return ret;
    struct vb_cq_rec *q = vb_cq_find(cq);
    if (q) q->c = c; /* a stale record (CQ freed behind our back, address reused): now this CQ's */
    else q = vb_cq_find_or_add(cq, c);
    if (ret == 0) {
        if (q) vb_count_empty(q);
        return 0;
    }
    return ret < 0 ? ret : poll_record(cq, q, ret, wc);
}

static int w_poll_cq(struct vb_cq *cq, int n, struct vb_wc *wc)
{
    struct vb_cq_rec *q = vb_cq_find(cq);
    if (RS_UNLIKELY(!q || !q->c || q->c->ctx != cq->context || !q->c->poll_cq)) return poll_unknown(cq, n, wc);
    int ret = q->c->poll_cq(cq, n, wc);
    if (ret == 0) {
        if (rs_on(RS_FAM_verbs)) vb_count_empty(q);
        return 0;
    }
    if (ret < 0 || !rs_on(RS_FAM_verbs)) return ret;
    return poll_record(cq, q, ret, wc);
}

static int w_req_notify_cq(struct vb_cq *cq, int solicited)
{
    const struct vb_ctx_rec *c = vb_ctx_find(cq->context);
    if (RS_UNLIKELY(!c || !c->req_notify_cq)) return EINVAL;
    if (!rs_on(RS_FAM_verbs)) return c->req_notify_cq(cq, solicited);
    uint64_t t0 = rs_now();
    /* Arming the CQ means the program stops busy-polling it (it will wait for the event): a run of empty
     * polls ends here, so the wait is not counted as time spent polling empty. */
    struct vb_cq_rec *q = vb_cq_find(cq);
    if (q) vb_end_empty_run(q, t0);
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
#define SAVE(f)                                             \
    if (o->f && o->f != w_##f) {                            \
        c->f = o->f;                                        \
        __atomic_store_n(&o->f, w_##f, __ATOMIC_RELEASE);   \
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
