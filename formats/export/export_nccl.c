/* The exporter's NCCL translation: API calls on their thread; the profiler plugin's collectives, p2p and
 * groups per communicator, proxy ops per channel, proxy steps and their states (from one transition to
 * the next), kernel channels, net-plugin IB/socket events, API-level events.
 *
 * A collective's (or p2p's) own plugin event starts and stops on the host around NCCL's enqueue: a few
 * microseconds, however long the work takes. Its work shows in its children, written when they stop, later
 * in the file (or earlier: they come from other threads' buffers): ProxyOps (parent = the collective) and
 * KernelCh events. So a communicator's items are held back in arrival order (a ring of XPEND) and written
 * when the ring is full or the process ends; meanwhile each child that names a held collective moves its
 * end to the child's end when later. A child seen before its parent waits in a small cache (orphans). The
 * slice then spans enqueue -> the last child's end, and says where its end came from (end_from: "proxy",
 * "kernel_ch", or "enqueue only" when no child ended later), its enqueue time (enqueue_ns) and the children
 * counted (children). Nothing is invented: without children the slice is the enqueue, as NCCL gave it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_xlate.h"
#include "util/xalloc.h"

enum { END_ENQ, END_PROXY, END_KCH, END_FULL };

struct xpend {
    struct rs_xitem it; /* ready but for its length and the end arguments */
    struct xgroup *g;
    uint64_t handle; /* 0: a group (no children counted) */
    uint64_t end;    /* aligned: the latest end seen */
    uint32_t next;   /* hash chain: slot + 1, 0 = end */
    uint16_t from, kids;
};
struct xpending {
    struct xpend v[XPEND];
    uint32_t head, n;
    uint32_t bucket[XPEND];        /* handle -> slot + 1 (chained) */
    struct xcache orphans[XCACHE]; /* parent handle -> latest end (ts), END_* (v), children (v2) */
};

static struct xpending *pending(struct rs_exp *x)
{
    if (!x->p.pend) x->p.pend = rs_xcalloc(1, sizeof *x->p.pend, "export_nccl pending");
    return x->p.pend;
}

static uint32_t *pend_bucket(struct xpending *q, uint64_t h) { return &q->bucket[mix64(h) & (XPEND - 1)]; }

static void pend_write(struct rs_exp *x, struct xpend *p)
{
    struct rs_xitem *it = &p->it;
    if (p->handle) {
        uint64_t enq = it->dur;
        /* lengthened only where it gets a lane short of the last (more in flight than lanes, an all-to-all's
         * p2p: the rest keep their enqueue, as before, on the lane left free for them, not instants) */
        if (p->end <= it->ts + it->dur) p->from = END_ENQ;
        else if (xl_lane_fits(p->g, it->ts, p->end, p->g->maxl - 1)) it->dur = p->end - it->ts;
        else p->from = END_FULL;
        arg_s(it, RS_XK_end_from,
              p->from == END_PROXY  ? NID(x, END_PROXY)
              : p->from == END_KCH  ? NID(x, END_KCH)
              : p->from == END_FULL ? NID(x, END_FULL)
                                    : NID(x, END_ENQ));
        arg_u(it, RS_XK_enqueue_ns, RS_XA_U64, enq);
        arg_u(it, RS_XK_children, RS_XA_U64, p->kids);
    }
    xl_emit_slice(x, p->g, it);
}

/* Write the oldest held item. */
static void pend_pop(struct rs_exp *x, struct xpending *q)
{
    struct xpend *p = &q->v[q->head];
    if (p->handle) { /* unlink it from its hash chain */
        uint32_t *b = pend_bucket(q, p->handle), slot = q->head + 1;
        while (*b && *b != slot) b = &q->v[*b - 1].next;
        if (*b) *b = p->next;
    }
    q->head = (q->head + 1) % XPEND;
    q->n--;
    pend_write(x, p);
}

/* Hold it (the item's dur is the enqueue's). handle 0: not a parent of anything (a group). */
static void pend_push(struct rs_exp *x, struct xgroup *g, const struct rs_xitem *it, uint64_t handle)
{
    struct xpending *q = pending(x);
    if (!q) { /* no memory: written as NCCL gave it */
        struct rs_xitem c = *it;
        xl_emit_slice(x, g, &c);
        return;
    }
    if (q->n == XPEND) pend_pop(x, q);
    uint32_t slot = (q->head + q->n++) % XPEND;
    struct xpend *p = &q->v[slot];
    p->it = *it;
    p->g = g;
    p->handle = handle;
    p->end = it->ts + it->dur;
    p->from = END_ENQ;
    p->kids = 0;
    p->next = 0;
    if (!handle) return;
    uint32_t *b = pend_bucket(q, handle);
    /* a handle held twice (handles are process-unique: a damaged or crafted trace): the older one leaves the
     * chain (its children would go to the newer anyway), so that chains hold distinct handles and a pop's
     * unlink stays short (4096 steps per pop otherwise) */
    for (uint32_t *c = b; *c; c = &q->v[*c - 1].next)
        if (q->v[*c - 1].handle == handle) {
            *c = q->v[*c - 1].next;
            break;
        }
    p->next = *b;
    *b = slot + 1;
    struct xcache *o = cache_slot(q->orphans, handle);
    if (o->key == handle) { /* children written before it */
        o->key = 0;
        p->kids = (uint16_t)(o->v2 > UINT16_MAX ? UINT16_MAX : o->v2);
        if (o->ts > p->end) p->end = o->ts, p->from = (uint16_t)o->v;
    }
}

/* A child of `parent` ended at `end` (aligned). */
static void pend_child(struct rs_exp *x, uint64_t parent, uint64_t end, int from)
{
    struct xpending *q;
    if (!parent || !(q = pending(x))) return;
    for (uint32_t s = *pend_bucket(q, parent); s; s = q->v[s - 1].next) {
        struct xpend *p = &q->v[s - 1];
        if (p->handle != parent) continue;
        if (p->kids < UINT16_MAX) p->kids++;
        if (end > p->end) p->end = end, p->from = (uint16_t)from;
        return;
    }
    struct xcache *o = cache_slot(q->orphans, parent); /* its parent not seen yet (or already written) */
    if (o->key != parent) *o = (struct xcache){parent, end, (uint32_t)from, 1};
    else {
        o->v2++;
        if (end > o->ts) o->ts = end, o->v = (uint32_t)from;
    }
}

/* ---------------- NCCL ---------------- */

static const char *const nccl_funcs[RS_NCCL_NFUNCS] = {
#define XF(n, name) [n] = "nccl" #name,
    RS_NCCL_FUNCS(XF)
#undef XF
};

static struct xgroup *comm_group(struct rs_exp *x, uint64_t hash)
{
    struct xgroup *g = xl_group_get(x, XG_COMM, hash, 0);
    if (g && !g->nlanes) {
        g->maxl = XLANES_ASYNC;
        g->name = xl_name_f(x, "NCCL comm %#llx", (unsigned long long)hash);
        g->jtid0 = xl_synth_jtid(x);
        xl_lane_new(x, g);
    }
    return g;
}

void xl_on_nccl_call(struct rs_exp *x, uint32_t tid, const struct rs_ev_NCCL_CALL *e)
{
    struct rs_xitem it;
    item_init(&it, al(x, e->h.ts), e->dur,
              e->func < RS_NCCL_NFUNCS ? xl_name_s(x, nccl_funcs[e->func]) : NID(x, NCCL_CALL), RS_XCAT_nccl);
    arg_u(&it, RS_XK_count, RS_XA_U64, e->count);
    arg_u(&it, RS_XK_seq, RS_XA_U64, e->seq);
    arg_u(&it, RS_XK_comm, RS_XA_HEX, e->comm_hash ? e->comm_hash : e->comm);
    if (e->peer >= 0) arg_u(&it, RS_XK_peer, RS_XA_I64, (uint64_t)(int64_t)e->peer);
    if (e->ret) arg_u(&it, RS_XK_ret, RS_XA_I64, (uint64_t)(int64_t)e->ret);
    xl_emit_slice(x, xl_thread_group(x, tid), &it);
}

void xl_on_coll(struct rs_exp *x, const struct rs_ev_NCCL_COLL *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, xl_str_nid(x, e->func), RS_XCAT_nccl);
    arg_u(&it, RS_XK_seq, RS_XA_U64, e->seq);
    arg_u(&it, RS_XK_count, RS_XA_U64, e->count);
    arg_s(&it, RS_XK_algo, xl_str_nid(x, e->algo));
    arg_s(&it, RS_XK_proto, xl_str_nid(x, e->proto));
    arg_u(&it, RS_XK_nchannels, RS_XA_U64, e->nchannels);
    pend_push(x, comm_group(x, e->comm_hash), &it, e->handle);
}

void xl_on_p2p(struct rs_exp *x, const struct rs_ev_NCCL_P2P *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, xl_str_nid(x, e->func), RS_XCAT_nccl);
    arg_u(&it, RS_XK_count, RS_XA_U64, e->count);
    arg_u(&it, RS_XK_peer, RS_XA_I64, (uint64_t)(int64_t)e->peer);
    pend_push(x, comm_group(x, e->comm_hash), &it, e->handle);
}

static struct xgroup *proxy_group(struct rs_exp *x, uint32_t gk, uint32_t ch, uint32_t is_send)
{
    struct xgroup *g = xl_group_get(x, gk, ch, is_send);
    if (g && !g->nlanes) {
        g->maxl = XLANES_ASYNC;
        g->name = ch == UINT32_MAX ? xl_name_f(x, "NCCL proxy %s %s", is_send ? "send" : "recv",
                                               gk == XG_STATES ? "step states" : "steps")
                                   : xl_name_f(x, "NCCL proxy ch %u %s%s", ch, is_send ? "send" : "recv",
                                               gk == XG_STATES ? " states" : "");
        g->jtid0 = xl_synth_jtid(x);
        xl_lane_new(x, g);
    }
    return g;
}

void xl_on_proxy_op(struct rs_exp *x, const struct rs_ev_NCCL_PROXY_OP *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, NID(x, PROXY_OP), RS_XCAT_nccl);
    arg_u(&it, RS_XK_channel, RS_XA_U64, e->channel);
    arg_u(&it, RS_XK_peer, RS_XA_I64, (uint64_t)(int64_t)e->peer);
    arg_u(&it, RS_XK_count, RS_XA_U64, e->nsteps);
    xl_emit_slice(x, proxy_group(x, XG_PROXY, e->channel, e->is_send), &it);
    pend_child(x, e->parent, end, END_PROXY);
}

static const char *proxy_state_name(uint32_t s)
{
    switch (s) {
    case 8: return "SendGPUWait";
    case 20: return "SendPeerWait";
    case 9: return "SendWait";
    case 10: return "RecvWait";
    case 11: return "RecvFlushWait";
    case 12: return "RecvGPUWait";
    case 19: return "ProxyOpInProgress";
    default: return NULL;
    }
}

/* State slices: a step's state lasts from its transition to the next one (or the step's end). */
static void state_close(struct rs_exp *x, struct xcache *s, uint64_t end_raw)
{
    const char *n = proxy_state_name(s->v);
    struct rs_xitem it;
    uint64_t ts = al(x, s->ts), end = al(x, end_raw);
    uint32_t nid;
    if (s->v < 32 && x->state_nid[s->v]) nid = x->state_nid[s->v];
    else {
        nid = n ? xl_name_s(x, n) : xl_name_f(x, "state %u", s->v);
        if (s->v < 32) x->state_nid[s->v] = nid;
    }
    item_init(&it, ts, end > ts ? end - ts : 0, nid, RS_XCAT_nccl);
    xl_emit_slice(x, proxy_group(x, XG_STATES, UINT32_MAX, s->v2), &it); /* one track per direction */
}

void xl_on_proxy_state(struct rs_exp *x, const struct rs_ev_NCCL_PROXY_STATE *e)
{
    if (e->state == 19) return; /* ProxyOp state: the op's slice shows it */
    struct xcache *s = cache_slot(x->p.states, e->handle);
    if (s->key == e->handle && e->h.ts >= s->ts) state_close(x, s, e->h.ts);
    s->key = e->handle;
    s->ts = e->h.ts;
    s->v = e->state;
    s->v2 = e->state == 8 || e->state == 9 || e->state == 20; /* the send-side states */
}

void xl_on_proxy_step(struct rs_exp *x, const struct rs_ev_NCCL_PROXY_STEP *e)
{
    struct xcache *s = cache_slot(x->p.states, e->handle);
    if (s->key == e->handle) {
        if (e->end >= s->ts) state_close(x, s, e->end);
        s->key = 0;
    }
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, NID(x, PROXY_STEP), RS_XCAT_nccl);
    arg_u(&it, RS_XK_step, RS_XA_U64, e->step);
    arg_u(&it, RS_XK_bytes, RS_XA_U64, e->trans_size);
    /* steps end before their op does, so the op (and its channel) is not known yet: one track per direction */
    xl_emit_slice(x, proxy_group(x, XG_STEPS, UINT32_MAX, e->is_send), &it);
}

void xl_on_kernel_ch(struct rs_exp *x, const struct rs_ev_NCCL_KERNEL_CH *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, NID(x, KERNEL_CH), RS_XCAT_nccl);
    arg_u(&it, RS_XK_channel, RS_XA_U64, e->channel);
    struct xgroup *g = xl_group_get(x, XG_KCH, e->channel, 0);
    if (g && !g->nlanes) {
        g->maxl = XLANES_ASYNC;
        g->name = xl_name_f(x, "NCCL kernel ch %u", e->channel);
        g->jtid0 = xl_synth_jtid(x);
        xl_lane_new(x, g);
    }
    xl_emit_slice(x, g, &it);
    pend_child(x, e->parent, end, END_KCH);
}

/* Held back with the collectives of its communicator (one order on its track), not lengthened. */
void xl_on_group(struct rs_exp *x, const struct rs_ev_NCCL_GROUP *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, NID(x, GROUP), RS_XCAT_nccl);
    pend_push(x, comm_group(x, e->comm_hash), &it, 0);
}

void xl_on_net_ib(struct rs_exp *x, const struct rs_ev_NCCL_NET_IB *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, NID(x, NET_IB), RS_XCAT_nccl);
    arg_u(&it, RS_XK_qp, RS_XA_U64, e->qp_num);
    arg_u(&it, RS_XK_wr_id, RS_XA_HEX, e->wr_id);
    arg_u(&it, RS_XK_bytes, RS_XA_U64, e->length);
    xl_emit_slice(x, xl_async_group(x, XG_QP, e->qp_num, 1, "QP %u (NCCL net plugin)", e->qp_num), &it);
}

void xl_on_net_sock(struct rs_exp *x, const struct rs_ev_NCCL_NET_SOCK *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, NID(x, NET_SOCK), RS_XCAT_nccl);
    arg_u(&it, RS_XK_bytes, RS_XA_U64, e->length);
    arg_u(&it, RS_XK_opcode, RS_XA_I64, (uint64_t)(int64_t)e->op);
    xl_emit_slice(x, xl_async_group(x, XG_QP, 0, 3, "NCCL net socket"), &it);
}

/* v5 API-level plugin events (off by default: the API wrappers record the same calls). */
void xl_on_prof_api(struct rs_exp *x, const struct rs_ev_NCCL_PROF_API *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, e->func ? xl_str_nid(x, e->func) : NID(x, PROF_API), RS_XCAT_nccl);
    arg_u(&it, RS_XK_count, RS_XA_U64, e->count);
    arg_u(&it, RS_XK_stream, RS_XA_HEX, e->stream);
    xl_emit_slice(x, xl_async_group(x, XG_COMM, 0, 1, "NCCL API (profiler plugin)"), &it);
}

void xl_on_prof_init(struct rs_exp *x, const struct rs_ev_NCCL_PROF_INIT *e)
{
    struct xgroup *g = comm_group(x, e->comm_hash);
    if (g && e->comm_name && !g->lane[0]->t.declared)
        g->name = g->lane[0]->t.name =
            xl_name_f(x, "NCCL comm %s (%#llx)", rs_xname_get(x, xl_str_nid(x, e->comm_name))->s,
                      (unsigned long long)e->comm_hash);
}

void xl_nccl_end(struct rs_exp *x)
{
    struct xpending *q = x->p.pend;
    if (q) {
        while (q->n) pend_pop(x, q);
        free(q);
        x->p.pend = NULL;
    }
    for (uint32_t i = 0; i < XCACHE; i++) { /* proxy states never closed by their step */
        struct xcache *s = &x->p.states[i];
        if (s->key) state_close(x, s, s->ts);
    }
}
