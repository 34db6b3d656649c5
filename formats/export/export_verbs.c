/* The exporter's verbs translation: work requests from post to completion on per-QP tracks (send and
 * receive queues apart), matched by (qp_num, wr_id) -- a send queue retires in order, so a signaled
 * completion also retires the unsignaled sends before it; receives are found anywhere in their queue
 * (SRQs included) -- and the achieved-bandwidth counters per QP and per link. State per QP: a ring of
 * outstanding WRs (grown to the queue depth, capped) and one counter bin. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_xlate.h"
#include "rtrace_enums.h"
#include "util/xalloc.h"

/* ---------------- bandwidth counters ----------------
 * A WR's bytes are spread over the time it was being transferred, not put in the bin where it completed
 * (that showed 2-8x the link rate): a queue sends in order, so the WR's interval starts when it was posted
 * or when the previous WR of the same QP (or link) completed, whichever is later, and ends at its
 * completion; completions reaped by one poll share a time stamp, so a WR whose interval is empty shares the
 * previous WR's. Bins stay open for XBW_BINS bins (a link's QPs complete out of order); each closed bin is
 * one counter value in GB/s (bytes per ns), runs of empty bins one 0. */

static void bw_emit(struct rs_exp *x, struct xbw *bw)
{
    uint64_t w = x->o.bw_bin_ns;
    double v = bw->bytes[0] / (double)w;
    if (v > 0 || !bw->zero_out) xl_emit_counter(x, bw->g, bw->bin0 * w, v);
    bw->zero_out = !(v > 0);
    memmove(bw->bytes, bw->bytes + 1, (XBW_BINS - 1) * sizeof *bw->bytes);
    bw->bytes[XBW_BINS - 1] = 0;
    bw->bin0++;
}
/* Close bins until `bin` is inside the window; an empty window jumps. */
static void bw_advance(struct rs_exp *x, struct xbw *bw, uint64_t bin)
{
    while (bin >= bw->bin0 + XBW_BINS) {
        int empty = 1;
        for (int i = 0; i < XBW_BINS && empty; i++) empty = !(bw->bytes[i] > 0);
        if (empty) {
            if (!bw->zero_out) xl_emit_counter(x, bw->g, bw->bin0 * x->o.bw_bin_ns, 0);
            bw->zero_out = 1;
            bw->bin0 = bin - XBW_BINS + 1;
            return;
        }
        bw_emit(x, bw);
    }
}
static void bw_spread(struct rs_exp *x, struct xbw *bw, uint64_t post, uint64_t done, uint64_t bytes)
{
    if (!bw->g || done < post || !bytes) return;
    uint64_t w = x->o.bw_bin_ns;
    if (bytes <= 64 && bw->started) { /* control WRs (credits, acks): no wire time, no place in the order */
        if (done / w >= bw->bin0) {
            bw_advance(x, bw, done / w);
            bw->bytes[done / w - bw->bin0] += (double)bytes;
        }
        return;
    }
    uint64_t a = post > bw->last_done ? post : bw->last_done;
    if (a >= done && bw->started) a = bw->last_start < done ? bw->last_start : done; /* same poll */
    if (!bw->started) {
        bw->started = 1;
        bw->bin0 = a / w;
        bw->zero_out = 1;
    }
    bw->last_start = a;
    bw->last_done = done;
    bw_advance(x, bw, done / w);
    if (a < bw->bin0 * w) a = bw->bin0 * w; /* older than the window: into its first bin */
    if (done <= a) {
        bw->bytes[done / w - bw->bin0] += (double)bytes;
        return;
    }
    double per_ns = (double)bytes / (double)(done - a);
    for (uint64_t t = a; t < done;) {
        uint64_t bin = t / w, e = (bin + 1) * w < done ? (bin + 1) * w : done;
        bw->bytes[bin - bw->bin0] += per_ns * (double)(e - t);
        t = e;
    }
}
static void bw_end(struct rs_exp *x, struct xbw *bw)
{
    if (!bw->started) return;
    int last = XBW_BINS - 1;
    while (last >= 0 && !(bw->bytes[last] > 0)) last--;
    for (int i = 0; i <= last; i++) bw_emit(x, bw);
    if (!bw->zero_out) xl_emit_counter(x, bw->g, bw->bin0 * x->o.bw_bin_ns, 0);
    bw->started = 0;
}

/* ---------------- verbs ---------------- */

#define IBV_SEND_SIGNALED_BIT 2u
#define XQP_SRQ               0x80000000u

static struct xctx *ctx_get(struct rs_exp *x, uint64_t ctx)
{
    for (uint32_t i = 0; i < x->p.nctx; i++)
        if (x->p.ctxs[i].ctx == ctx) return &x->p.ctxs[i];
    if (x->p.nctx >= 16) return NULL;
    struct xctx *c = &x->p.ctxs[x->p.nctx++];
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->dev_nid = xl_name_f(x, "ctx %#llx", (unsigned long long)ctx);
    return c;
}

static struct xqp *qp_get(struct rs_exp *x, uint32_t key)
{
    struct xproc *p = &x->p;
    if (p->qn * 2 + 2 >= p->qcap) {
        uint32_t nc = p->qcap ? p->qcap * 2 : 64;
        struct xqp *nt = rs_xcalloc(nc, sizeof *nt, "export_verbs nt");
        if (!nt) return NULL;
        for (uint32_t i = 0; i < p->qcap; i++) {
            if (!p->qps[i].used) continue;
            uint32_t j = (uint32_t)mix64(p->qps[i].qp_num) & (nc - 1);
            while (nt[j].used) j = (j + 1) & (nc - 1);
            nt[j] = p->qps[i];
        }
        free(p->qps);
        p->qps = nt;
        p->qcap = nc;
    }
    if (p->last_qp < p->qcap && p->qps[p->last_qp].used && p->qps[p->last_qp].qp_num == key) return &p->qps[p->last_qp];
    uint32_t j = (uint32_t)mix64(key) & (p->qcap - 1);
    while (p->qps[j].used) {
        if (p->qps[j].qp_num == key) {
            p->last_qp = j;
            return &p->qps[j];
        }
        j = (j + 1) & (p->qcap - 1);
    }
    struct xqp *q = &p->qps[j];
    memset(q, 0, sizeof *q);
    q->used = 1;
    q->qp_num = key;
    q->is_srq = !!(key & XQP_SRQ);
    p->qn++;
    if (!q->is_srq) {
        /* group pointers stay valid across qps[] rehash: groups live in gtab */
        q->g = xl_async_group(x, XG_QP, key, 0, "QP %u", key);
        q->tx.g = xl_counter_group(x, XG_CTR_QP, key, 0, xl_name_f(x, "QP %u tx GB/s", key));
    }
    return q;
}

static struct xwr *fifo_at(struct xfifo *f, uint32_t i) { return &f->v[(f->head + i) & (f->cap - 1)]; }

static void wr_emit(struct rs_exp *x, struct xqp *q, const struct xwr *w, uint64_t end, uint32_t name, int status,
                    uint64_t completed_by, int last)
{
    struct rs_xitem it;
    item_init(&it, w->ts, end > w->ts ? end - w->ts : 0, name, RS_XCAT_rdma);
    arg_u(&it, RS_XK_bytes, RS_XA_U64, w->bytes);
    arg_u(&it, RS_XK_wr_id, RS_XA_HEX, w->wr_id); /* (the QP is the track) */
    if (status) arg_u(&it, RS_XK_status, RS_XA_I64, (uint64_t)(int64_t)status);
    if (completed_by != UINT64_MAX) arg_u(&it, RS_XK_completed_by, RS_XA_HEX, completed_by);
    if (last) it.flow_step = w->flow;
    else it.flow_in = w->flow;
    /* receives get their own track: pre-posted receive queues (hundreds deep) would crowd out the sends */
    struct xgroup *g = w->opcode != 128 ? q->g
                       : q->is_srq      ? xl_async_group(x, XG_QP, q->qp_num, 2, "SRQ %u recv", q->qp_num & ~XQP_SRQ)
                                        : xl_async_group(x, XG_QP, q->qp_num, 2, "QP %u recv", q->qp_num);
    xl_emit_slice(x, g, &it);
}

static void fifo_push(struct rs_exp *x, struct xqp *q, struct xfifo *f, const struct xwr *w)
{
    if (f->n == f->cap) {
        if (f->cap >= XFIFO_MAX) { /* never completed as far as we can tell: show it, forget it */
            struct xwr *old = fifo_at(f, 0);
            wr_emit(x, q, old, old->ts, NID(x, NOCOMP), 0, UINT64_MAX, 0);
            x->st.wr_no_completion++;
            f->head = (f->head + 1) & (f->cap - 1);
            f->n--;
        } else {
            uint32_t nc = f->cap ? f->cap * 2 : 64;
            struct xwr *nv = rs_xmalloc(nc * sizeof *nv, "export_verbs nv");
            if (!nv) return;
            for (uint32_t i = 0; i < f->n; i++) nv[i] = *fifo_at(f, i);
            free(f->v);
            f->v = nv;
            f->cap = nc;
            f->head = 0;
        }
    }
    *fifo_at(f, f->n++) = *w;
}

static void post_instant(struct rs_exp *x, uint32_t tid, uint64_t ts, uint32_t name, uint32_t qp, uint64_t wr_id,
                         uint64_t bytes, int ret, uint64_t flow)
{
    struct rs_xitem it;
    item_init(&it, ts, 0, name, RS_XCAT_verbs);
    arg_u(&it, RS_XK_qp, RS_XA_U64, qp);
    arg_u(&it, RS_XK_wr_id, RS_XA_HEX, wr_id);
    arg_u(&it, RS_XK_bytes, RS_XA_U64, bytes);
    if (ret) arg_u(&it, RS_XK_ret, RS_XA_I64, (uint64_t)(int64_t)ret);
    it.flow_out = flow;
    xl_emit_instant(x, xl_thread_group(x, tid), &it);
}

void xl_on_post_send(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_POST_SEND *e)
{
    uint64_t ts = al(x, e->h.ts);
    int ok = e->ret == 0;
    uint64_t flow = ok ? xl_new_flow(x) : 0;
    post_instant(x, tid, ts, NID(x, POST_SEND), e->qp_num, e->wr_id, e->bytes, e->ret, flow);
    if (!ok) return;
    struct xqp *q = qp_get(x, e->qp_num);
    if (!q) return;
    struct xwr w = {ts, e->wr_id, e->bytes, flow, e->opcode, e->send_flags, tid, 0};
    fifo_push(x, q, &q->sq, &w);
}

void xl_on_post_recv(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_POST_RECV *e)
{
    uint64_t ts = al(x, e->h.ts);
    int ok = e->ret == 0;
    uint64_t flow = ok ? xl_new_flow(x) : 0;
    post_instant(x, tid, ts, NID(x, POST_RECV), e->qp_num, e->wr_id, e->bytes, e->ret, flow);
    if (!ok) return;
    struct xqp *q = qp_get(x, e->srq ? (e->qp_num | XQP_SRQ) : e->qp_num);
    if (!q) return;
    struct xwr w = {ts, e->wr_id, e->bytes, flow, 128, IBV_SEND_SIGNALED_BIT, tid, 0};
    fifo_push(x, q, &q->rq, &w);
}

static uint32_t wr_name(struct rs_exp *x, uint32_t opcode)
{
    if (opcode == 128) return NID(x, RECV);
    const char *nm = rs_enum_name(&(struct rs_enum){rs_enum_WR_OPCODE, RS_ENUM_N(WR_OPCODE)}, opcode);
    if (nm && opcode < sizeof x->wr_nid / sizeof x->wr_nid[0]) { /* names: formats/rtrace_enums.h */
        if (!x->wr_nid[opcode]) x->wr_nid[opcode] = xl_name_s(x, nm);
        return x->wr_nid[opcode];
    }
    return xl_name_f(x, "WR opcode %u", opcode);
}

/* Find wr_id in f; -1 if absent. Receive queues may complete out of order (SRQ), so search; send queues
 * complete in order, so the match is normally at the head. */
static int64_t fifo_find(struct xfifo *f, uint64_t wr_id)
{
    for (uint32_t i = 0; i < f->n; i++)
        if (fifo_at(f, i)->wr_id == wr_id) return i;
    return -1;
}

void xl_on_wc(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_WC *e)
{
    uint64_t ts = al(x, e->h.ts);
    struct xqp *q = qp_get(x, e->qp_num);
    int recv = (e->opcode & 128) != 0;
    struct xfifo *f = NULL;
    int64_t k = -1;
    struct xqp *owner = q;
    if (q) {
        f = recv ? &q->rq : &q->sq;
        k = fifo_find(f, e->wr_id);
        if (k < 0 && recv) { /* posted to a shared receive queue */
            for (uint32_t i = 0; i < x->p.qcap && k < 0; i++) {
                struct xqp *s = &x->p.qps[i];
                if (!s->used || !s->is_srq) continue;
                int64_t kk = fifo_find(&s->rq, e->wr_id);
                if (kk >= 0) {
                    f = &s->rq;
                    k = kk;
                }
            }
            q = qp_get(x, e->qp_num); /* the table may have moved */
            owner = q;
        }
    }
    struct rs_xitem it;
    uint64_t flow = 0;
    if (k < 0) {
        x->st.wr_unmatched_wc++;
        item_init(&it, ts, 0, NID(x, WC_UNMATCHED), RS_XCAT_verbs);
    } else {
        x->st.wr_matched++;
        if (!recv) {
            /* Unsignaled sends before this one completed with it. */
            for (int64_t i = 0; i < k; i++) {
                const struct xwr *u = fifo_at(f, (uint32_t)i);
                wr_emit(x, owner, u, ts, wr_name(x, u->opcode), (int)e->status, e->wr_id, 0);
                if (!e->status && owner) { /* their bytes moved too (they were left out of the counters) */
                    bw_spread(x, &owner->tx, u->ts, ts, u->bytes);
                    struct xctx *c = owner->ctx ? ctx_get(x, owner->ctx) : NULL;
                    if (c) bw_spread(x, &c->tx, u->ts, ts, u->bytes);
                }
            }
        }
        struct xwr w = *fifo_at(f, (uint32_t)k);
        wr_emit(x, owner, &w, ts, wr_name(x, recv ? 128 : w.opcode), (int)e->status, UINT64_MAX, 1);
        flow = w.flow;
        if (recv) { /* remove entry k, keep order */
            for (int64_t i = k; i > 0; i--) *fifo_at(f, (uint32_t)i) = *fifo_at(f, (uint32_t)i - 1);
            f->head = (f->head + 1) & (f->cap - 1);
            f->n--;
        } else {
            f->head = (f->head + (uint32_t)k + 1) & (f->cap - 1);
            f->n -= (uint32_t)k + 1;
        }
        if (!recv && !e->status && owner) {
            bw_spread(x, &owner->tx, w.ts, ts, w.bytes);
            struct xctx *c = owner->ctx ? ctx_get(x, owner->ctx) : NULL;
            if (c) bw_spread(x, &c->tx, w.ts, ts, w.bytes);
        }
        item_init(&it, ts, 0, NID(x, WC), RS_XCAT_verbs);
    }
    arg_u(&it, RS_XK_qp, RS_XA_U64, e->qp_num);
    arg_u(&it, RS_XK_wr_id, RS_XA_HEX, e->wr_id);
    arg_u(&it, RS_XK_bytes, RS_XA_U64, e->bytes);
    if (e->status) arg_u(&it, RS_XK_status, RS_XA_I64, e->status);
    it.flow_in = flow;
    xl_emit_instant(x, xl_thread_group(x, tid), &it);
}

void xl_on_create_qp(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_CREATE_QP *e)
{
    struct xqp *q = qp_get(x, e->qp_num);
    struct xctx *c = ctx_get(x, e->ctx);
    if (q) {
        q->ctx = e->ctx;
        if (c && q->g) {
            /* name the QP with its device, unless its track is already out */
            if (!q->g->lane[0]->t.declared) {
                q->g->name = q->g->lane[0]->t.name =
                    xl_name_f(x, "QP %u (%s)", e->qp_num, rs_xname_get(x, c->dev_nid)->s);
            }
        }
    }
    struct rs_xitem it;
    item_init(&it, al(x, e->h.ts), 0, NID(x, CREATE_QP), RS_XCAT_verbs);
    arg_u(&it, RS_XK_qp, RS_XA_U64, e->qp_num);
    xl_emit_instant(x, xl_thread_group(x, tid), &it);
}

void xl_on_open_device(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_OPEN_DEVICE *e)
{
    struct xctx *c = ctx_get(x, e->ctx);
    if (c) {
        c->dev_nid = xl_str_nid(x, e->device);
        c->tx.g = xl_counter_group(x, XG_CTR_LINK, e->ctx, 0,
                                   xl_name_f(x, "link %s tx GB/s", rs_xname_get(x, c->dev_nid)->s));
    }
    struct rs_xitem it;
    item_init(&it, al(x, e->h.ts), 0, NID(x, OPEN_DEVICE), RS_XCAT_verbs);
    xl_emit_instant(x, xl_thread_group(x, tid), &it);
}

void xl_on_reg_mr(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_REG_MR *e)
{
    static const char *const mem[] = RS_MEM_NAMES;
    struct rs_xitem it;
    item_init(&it, al(x, e->h.ts), e->dur, NID(x, REG_MR), RS_XCAT_verbs);
    arg_u(&it, RS_XK_length, RS_XA_U64, e->length);
    arg_s(&it, RS_XK_mem, xl_name_s(x, e->mem < 7 ? mem[e->mem] : "?"));
    if (e->err) arg_u(&it, RS_XK_ret, RS_XA_I64, (uint64_t)(int64_t)e->err);
    xl_emit_slice(x, xl_thread_group(x, tid), &it);
}

/* RS_CQEV_* as words ("none": the thread looked and no event was there, so a call that returned one blocked until
 * it came); bits no tracer writes are shown in hex after them. */
static uint32_t cqev_flags_nid(struct rs_exp *x, uint32_t flags)
{
    static const char *const bit[3] = {"nonblock", "pending", "unknown"};
    _Static_assert(RS_CQEV_NONBLOCK == 1 && RS_CQEV_PENDING == 2 && RS_CQEV_UNKNOWN == 4, "cqev bit names");
    uint32_t known = flags & 7u, *c = &x->cqev_nid[known];
    if (*c && known == flags) return *c;
    char s[96];
    size_t n = 0;
    for (int b = 0; b < 3; b++)
        if (known >> b & 1) n += (size_t)snprintf(s + n, sizeof s - n, "%s%s", n ? "|" : "", bit[b]);
    if (!known) n = (size_t)snprintf(s, sizeof s, "none");
    if (known != flags) {
        snprintf(s + n, sizeof s - n, "|%#x", flags & ~7u);
        return xl_name_s(x, s);
    }
    return *c = xl_name_s(x, s);
}

/* One wait in ibv_get_cq_event: a slice on the calling thread's row (through its row guard, as every call of the
 * thread), so a thread that slept for its completions shows where it slept, next to its polls. */
void xl_on_get_cq_event(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_GET_CQ_EVENT *e)
{
    struct rs_xitem it;
    item_init(&it, al(x, e->h.ts), e->dur, NID(x, GET_CQ_EVENT), RS_XCAT_verbs);
    arg_u(&it, RS_XK_cq, RS_XA_HEX, e->cq);
    arg_u(&it, RS_XK_comp_channel, RS_XA_HEX, e->channel);
    arg_s(&it, RS_XK_flags, cqev_flags_nid(x, e->flags));
    arg_u(&it, RS_XK_ret, RS_XA_I64, (uint64_t)(int64_t)e->ret);
    if (e->ret) arg_u(&it, RS_XK_err, RS_XA_I64, e->h.aux);
    xl_emit_slice(x, xl_thread_group(x, tid), &it);
}

void xl_verbs_end(struct rs_exp *x)
{
    struct xproc *p = &x->p;
    uint64_t end = p->last_ts;
    /* Work requests still outstanding: shown up to the end of the trace. */
    for (uint32_t i = 0; i < p->qcap; i++) {
        struct xqp *q = &p->qps[i];
        if (!q->used) continue;
        struct xfifo *fs[2] = {&q->sq, &q->rq};
        for (int k = 0; k < 2; k++) {
            for (uint32_t j = 0; j < fs[k]->n; j++) {
                struct xwr *w = fifo_at(fs[k], j);
                x->st.wr_no_completion++;
                wr_emit(x, q, w, end, NID(x, NOCOMP), 0, UINT64_MAX, 0);
            }
            free(fs[k]->v);
        }
        bw_end(x, &q->tx);
    }
    for (uint32_t i = 0; i < p->nctx; i++) bw_end(x, &p->ctxs[i].tx);
}
