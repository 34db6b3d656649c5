/* The network side of the per-rank pass: verbs send queues (in-order completion, unsignaled WRs, bursts)
 * and NCCL proxy ops/steps (reduced per ProxyOp as they arrive). Called from analyze_load.c's event loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze_local.h"

/* ---- queue pairs ---- */
/* Not in qp_get's cache: the map, or a new QP. The cache keeps the two latest, the newest first. */
struct qpst *qp_get_slow(struct pass *p, uint32_t qp_num)
{
    uint64_t v;
    if (!hm_get(&p->qpmap, qp_num, &v)) {
        struct qpst *q = AN_PUSH(p->qps, p->nqps, p->qpcap);
        memset(q, 0, sizeof *q);
        q->acc.qp_num = qp_num;
        q->acc.peer_rank = -1;
        q->last_run = -1;
        q->last_msg = -1;
        v = p->nqps - 1;
        hm_put(&p->qpmap, qp_num, v);
    }
    p->qpc_key[1] = p->qpc_key[0];
    p->qpc_i[1] = p->qpc_i[0];
    p->qpc_key[0] = 1ull << 32 | qp_num;
    p->qpc_i[0] = v;
    return &p->qps[v];
}

/* pend[i] leaves the queue (completed or forgotten): when pendmap holds it, it is the oldest outstanding WR
 * of its (QP, wr_id) there (the queue is consumed in order), so the next of its chain, if any, becomes the
 * oldest. */
static void pend_unlink(struct pass *p, struct qpst *q, size_t i)
{
    if (q->base + i >= q->indexed) return; /* never indexed */
    const struct pendwr *w = &q->pend[i];
    if (w->next) {
        size_t n = i + w->next, tail = i + w->last;
        q->pend[n].last = (uint32_t)(tail - n);
        hm2_put(&p->pendmap, q->acc.qp_num, w->wr_id, q->base + n);
    } else hm2_del(&p->pendmap, q->acc.qp_num, w->wr_id);
}

void an_on_post_send(struct pass *p, const struct rs_ev_IBV_POST_SEND *e)
{
    if (e->ret != 0) return; /* not posted */
    struct qpst *q = qp_get(p, e->qp_num);
    unsigned mem = e->mem < RS_AN_MEMKINDS ? e->mem : 0;
    q->acc.posted[mem] += e->bytes;
    q->acc.send_wrs++;
    p->posted[mem] += e->bytes;
    p->posts++;
    if (q->npend - q->head >= AN_PEND_MAX) { /* never completed: forget the oldest */
        pend_unlink(p, q, q->head);
        q->head++;
        p->lost_wrs++;
    }
    if (q->head > 4096 && q->head * 2 > q->npend) {
        memmove(q->pend, q->pend + q->head, (q->npend - q->head) * sizeof *q->pend);
        q->npend -= q->head;
        q->base += q->head;
        q->head = 0;
    }
    if (e->bytes > AN_CTRL_BYTES) {
        if (e->h.ts >= p->last_dpost + 50000) *AN_PUSH(p->gposts, p->ngposts, p->gpostcap) = e->h.ts;
        p->last_dpost = e->h.ts;
    }
    struct pendwr *w = AN_PUSH(q->pend, q->npend, q->pendcap);
    w->post = e->h.ts;
    w->bytes = e->bytes;
    w->wr_id = e->wr_id;
    w->mem = mem;
    w->next = w->last = 0;
    /* RDMA_WRITE_WITH_IMM, SEND, SEND_WITH_IMM, SEND_WITH_INV (ibv_wr_opcode) */
    w->msg = e->opcode == 1 || e->opcode == 2 || e->opcode == 3 || e->opcode == 9;
}

/* Put the outstanding WRs not yet in pendmap there, in post order: each (QP, wr_id) maps to its oldest,
 * later ones with the same id are chained behind it. Each WR is indexed at most once. */
static void pend_index(struct pass *p, struct qpst *q)
{
    size_t i = q->indexed > q->base + q->head ? (size_t)(q->indexed - q->base) : q->head;
    for (; i < q->npend; i++) {
        uint64_t s;
        if (hm2_get(&p->pendmap, q->acc.qp_num, q->pend[i].wr_id, &s)) { /* append to the id's chain */
            size_t h = (size_t)(s - q->base), t = h + q->pend[h].last;
            q->pend[t].next = (uint32_t)(i - t);
            q->pend[h].last = (uint32_t)(i - h);
        } else hm2_put(&p->pendmap, q->acc.qp_num, q->pend[i].wr_id, q->base + i);
    }
    q->indexed = q->base + q->npend;
}

/* The oldest outstanding WR with this wr_id, or npend. A completion usually names one of the first few (in
 * order, or after a few unsignaled WRs): a short scan. Past AN_PEND_SCAN, pendmap (indexed on demand): a
 * completion for an id never posted, or far down a long queue, no longer scans up to 64 k WRs. */
#define AN_PEND_SCAN 32
static size_t pend_find(struct pass *p, struct qpst *q, uint64_t wr_id)
{
    size_t end = q->npend - q->head > AN_PEND_SCAN ? q->head + AN_PEND_SCAN : q->npend;
    for (size_t k = q->head; k < end; k++)
        if (q->pend[k].wr_id == wr_id) return k;
    if (end == q->npend) return q->npend;
    pend_index(p, q);
    uint64_t s;
    if (!hm2_get(&p->pendmap, q->acc.qp_num, wr_id, &s)) return q->npend;
    size_t k = (size_t)(s - q->base);
    return k >= q->head && k < q->npend ? k : q->npend; /* (always: the map follows the queue) */
}

/* A send WR completed at `done`: extend the QP's current run or start a new one. */
static void complete(struct pass *p, struct qpst *q, const struct pendwr *w, uint64_t done)
{
    if (done < w->post) return;
    uint8_t ctrl = w->bytes <= AN_CTRL_BYTES;
    if (w->msg && !ctrl && q->acc.dest_qpn) { /* the QP's message runs (an_rank qsends), writes left out */
        struct an_rank *r = p->r;
        if (q->last_msg >= 0 && (size_t)q->last_msg < r->nqsends && w->post <= r->qsends[q->last_msg].done) {
            if (done > r->qsends[q->last_msg].done) r->qsends[q->last_msg].done = done;
        } else {
            *AN_PUSH(r->qsends, r->nqsends, p->qsendcap) =
                (struct an_qsend){w->post, done, q->acc.qp_num, q->acc.dest_qpn};
            q->last_msg = (long)r->nqsends - 1;
        }
    }
    if (ctrl) q->acc.ctrl_sends++;
    else if (done - w->post > q->acc.max_wait) q->acc.max_wait = done - w->post;
    if (q->last_run >= 0 && (size_t)q->last_run < p->nwrs) {
        struct wrrec *r = &p->wrs[q->last_run];
        if (w->post <= r->done && ctrl == r->ctrl && (uint8_t)w->mem == r->mem) {
            if (done > r->done) r->done = done;
            r->bytes += w->bytes;
            return;
        }
    }
    struct wrrec *r = AN_PUSH(p->wrs, p->nwrs, p->wrcap);
    r->post = w->post;
    r->done = done;
    r->bytes = w->bytes;
    r->wr_id = w->wr_id;
    r->qp = q->acc.qp_num;
    r->mem = (uint8_t)w->mem;
    r->bounce = 0;
    r->ctrl = ctrl;
    q->last_run = (long)p->nwrs - 1;
}

void an_on_post_recv(struct pass *p, const struct rs_ev_IBV_POST_RECV *e)
{
    if (e->ret != 0) return;
    unsigned mem = e->mem < RS_AN_MEMKINDS ? e->mem : 0;
    struct qpst *q = qp_get(p, e->qp_num);
    q->acc.posted[mem] += e->bytes;
    q->acc.recv_wrs++; /* the GPUDirect evidence's WR count says sends and receives apart */
    p->posted[mem] += e->bytes;
    p->posts++;
}

/* The CQ's record (cqpoll), made on first sight. */
static struct cqpoll *cqpoll_of(struct pass *p, uint64_t cq)
{
    struct cqpoll *c;
    uint64_t i;
    if (p->cqp_last && p->cqp[p->cqp_last - 1].cq == cq) c = &p->cqp[p->cqp_last - 1];
    else if (hm_get(&p->cqpmap, cq, &i)) c = &p->cqp[i];
    else {
        c = AN_PUSH(p->cqp, p->ncqp, p->cqpcap);
        *c = (struct cqpoll){cq, 0, UINT64_MAX, 0, 0, 0, 0};
        hm_put(&p->cqpmap, cq, p->ncqp - 1);
    }
    p->cqp_last = (size_t)(c - p->cqp) + 1;
    return c;
}

/* The longest a call made with its event there already takes (a read of the descriptor): longer, it blocked. */
#define CQEV_PENDING_MAX_NS 1000000u

/* A wait for a CQ's event that returned it: the latest one's end and flags (the polls after it, wc_polls). */
void an_on_cq_event(struct pass *p, const struct rs_ev_IBV_GET_CQ_EVENT *e)
{
    if (e->ret || !e->cq) return;
    struct cqpoll *c = cqpoll_of(p, e->cq);
    if (e->h.ts + e->dur < c->wake) return; /* (another thread's, read out of order) */
    c->wake = e->h.ts + e->dur;
    c->wstart = e->h.ts;
    c->wflags = e->flags;
    /* An event there when it called is the one the call returns only with one thread per channel: another thread
     * can take it first, and this one then blocks until the next. A blocking call longer than a read of the
     * descriptor can take (microseconds) blocked: taken as one. */
    if ((e->flags & (RS_CQEV_PENDING | RS_CQEV_NONBLOCK)) == RS_CQEV_PENDING && e->dur > CQEV_PENDING_MAX_NS)
        c->wflags &= ~RS_CQEV_PENDING;
}

/* The polls before a completion (IBV_WC hdr.aux, formats/events_verbs.h RS_WC_AUX_*), with the time the tracer leaves
 * to the trace filled in: found with no empty poll, the time since the CQ's previous poll that returned completions,
 * the latest earlier time among its IBV_WC (all ones: none, or this one out of order, from another thread's chunk).
 * A CQ armed since its previous completions (RS_WC_AUX_ARMED: the program may have waited for its event instead of
 * polling) whose event a thread took since then (IBV_GET_CQ_EVENT on it, ended before this poll) says how it waited:
 *  - blocked in the call until the event came (no event there when it called, or a blocking call longer than
 *    CQEV_PENDING_MAX_NS: an_on_cq_event): it was waiting for the completion, and found it on its first look that
 *    long after it woke (class 0, the time since the wake: analyze_join.c polled_for counts it as polling within the
 *    lateness threshold of its landing); but a run of two or more empty polls started after the wake (the event's
 *    completion was taken before it woke, by another thread or a drain-poll, and it polled on for this one) is its
 *    polling: the polls' record decides, as below;
 *  - the event was there already (RS_CQEV_PENDING, a blocking descriptor): the call was a look that found it, as a
 *    poll would have: the polls' record decides, as if the CQ had not been armed;
 *  - a non-blocking descriptor (the program waited in poll/epoll before the call, not traced) or flags unknown, or no
 *    wait taken since the previous completions (or one read out of order, from another thread's chunk): not known,
 *    the record stays armed (the rule before session 21).
 * Every recorded completion moves its CQ's state; older traces (no record) cost nothing here. *blocked: the start of
 * the wait the rank was blocked in (the first case, class 0 from the wake), for the answer rule's reference (it was
 * waiting since then: analyze_join.c answers()), left alone otherwise. */
static uint32_t wc_polls(struct pass *p, const struct rs_ev_IBV_WC *e, uint64_t *blocked, uint32_t *evwait)
{
    uint32_t aux = e->h.aux;
    if (!(aux & RS_WC_AUX_SEEN)) return aux;
    struct cqpoll *c = cqpoll_of(p, e->cq);
    uint64_t gap = c->gap;
    if (e->h.ts > c->ts) {
        gap = c->ts ? e->h.ts - c->ts : UINT64_MAX;
        c->gap = gap;
        c->prev = c->ts;
        c->ts = e->h.ts;
    } else if (e->h.ts < c->ts) gap = UINT64_MAX;
    if ((aux & RS_WC_AUX_ARMED) && e->h.ts == c->ts && c->wake > c->prev && c->wake <= c->ts &&
        !(c->wflags & (RS_CQEV_NONBLOCK | RS_CQEV_UNKNOWN))) {
        *evwait = 1; /* it came through a wait for its CQ's event (blocked or not) */
        /* blocked, unless it polled the CQ empty twice or more after it woke (its run started after the wake: the
         * event's completion was taken before, by another thread or a drain-poll): then its polls decide */
        if (!(c->wflags & RS_CQEV_PENDING) &&
            !(rs_wc_aux_polls(aux) >= 2 && rs_wc_aux_wait_ns(aux) <= c->ts - c->wake)) {
            uint64_t away = (c->ts - c->wake) >> RS_WC_AUX_WAIT_SHIFT;
            *blocked = c->wstart;
            return RS_WC_AUX_SEEN | (away < RS_WC_AUX_WAIT_MASK ? (uint32_t)away : RS_WC_AUX_WAIT_MASK);
        }
        aux &= ~RS_WC_AUX_ARMED;
    }
    if (rs_wc_aux_polls(aux)) return aux;
    gap >>= RS_WC_AUX_WAIT_SHIFT;
    return aux | (gap < RS_WC_AUX_WAIT_MASK ? (uint32_t)gap : RS_WC_AUX_WAIT_MASK);
}

void an_on_wc(struct pass *p, const struct rs_ev_IBV_WC *e)
{
    uint64_t blocked = 0;
    uint32_t evwait = 0;
    uint32_t aux = wc_polls(p, e, &blocked, &evwait);
    if (e->status == 0 && (e->opcode & 128)) { /* receive side (the opcode is only valid on success) */
        struct tsb *t = AN_PUSH(p->rwc, p->nrwc, p->rwccap);
        t->ts = e->h.ts;
        t->bytes = e->bytes;
        t->qp = e->qp_num;
        t->aux = aux;
        t->blocked = blocked;
        t->evwait = evwait;
        return;
    }
    struct qpst *q = qp_get(p, e->qp_num);
    /* RC send queues complete in order: a completion also completes every earlier unsignaled WR. The WR it
     * names is the oldest outstanding one with its wr_id. */
    size_t k = pend_find(p, q, e->wr_id);
    if (k == q->npend) return; /* a completion for a WR we did not see posted (or a receive in error) */
    for (size_t i = q->head; i <= k; i++) pend_unlink(p, q, i);
    if (e->status) {
        /* An error completion: the WRs before it completed; this one moved no data. Its outstanding time
         * (retries, timeouts) is the error's cost; a flushed WR (the QP was already in error) costs
         * nothing more and is dropped. */
        for (size_t i = q->head; i < k; i++) complete(p, q, &q->pend[i], e->h.ts);
        if (e->status != 5 && e->h.ts > q->pend[k].post) p->r->out.verrs.cost_s += (e->h.ts - q->pend[k].post) * 1e-9;
    } else
        for (size_t i = q->head; i <= k; i++) complete(p, q, &q->pend[i], e->h.ts);
    q->head = k + 1;
    if (q->head == q->npend) {
        q->base += q->npend;
        q->head = q->npend = 0;
    }
}

/* ---- NCCL proxy ops and steps ---- */
static struct opacc *acc_get(struct pass *p, uint64_t op)
{
    uint64_t i;
    if (p->acc_last_valid && p->acc_last_op == op) return &p->accs[p->acc_last_i];
    if (hm_get(&p->accmap, op, &i)) {
        p->acc_last_op = op;
        p->acc_last_i = i;
        p->acc_last_valid = 1;
        return &p->accs[i];
    }
    if (p->nfreeacc) i = p->freeacc[--p->nfreeacc];
    else {
        struct opacc *x = AN_PUSH(p->accs, p->naccs, p->acccap);
        memset(x, 0, sizeof *x);
        i = p->naccs - 1;
    }
    struct opacc *x = &p->accs[i];
    x->parent = op;
    x->used = 1;
    x->nruns = x->nends = 0;
    x->max_wait = 0;
    hm_put(&p->accmap, op, i);
    p->acc_last_op = op;
    p->acc_last_i = i;
    p->acc_last_valid = 1;
    return x;
}

static void acc_release(struct pass *p, struct opacc *x)
{
    p->acc_last_valid = 0;
    hm_del(&p->accmap, x->parent);
    x->used = 0;
    *AN_PUSH(p->freeacc, p->nfreeacc, p->freecap) = (size_t)(x - p->accs);
}

/* The op's bursts become stand-in work requests of a pseudo QP (channel, peer); used when the trace has
 * no verbs capture. wr_id carries the longest single step (for max_wait). */
static void acc_to_runs(struct pass *p, const struct opacc *x, uint32_t pseudo)
{
    for (size_t k = 0; k < x->nruns; k++) {
        struct wrrec *w = AN_PUSH(p->pruns, p->npruns, p->pruncap);
        *w = x->runs[k];
        w->qp = pseudo;
        w->wr_id = x->max_wait;
        w->ctrl = w->bytes <= AN_CTRL_BYTES;
    }
}

void an_on_proxy_step(struct pass *p, const struct rs_ev_NCCL_PROXY_STEP *e)
{
    uint64_t a = e->h.ts, sw;
    if (p->sw_valid && p->sw_h == e->handle) { /* SendWait: the isend was posted */
        a = p->sw_ts;
        p->sw_valid = 0;
        if (p->sendwait.n || p->sendwait.zero_used)
            hm_del(&p->sendwait, e->handle); /* an older state of the same handle */
    } else if (hm_get(&p->sendwait, e->handle, &sw)) {
        a = sw;
        hm_del(&p->sendwait, e->handle);
    }
    if (!e->is_send || e->end < a) return; /* receive steps: the sender's side measures the network */
    struct opacc *x = acc_get(p, e->parent);
    if (e->end - a > x->max_wait) x->max_wait = e->end - a;
    struct wrrec *r = x->nruns ? &x->runs[x->nruns - 1] : NULL;
    if (r && a <= r->done) {
        if (e->end > r->done) r->done = e->end;
        r->bytes += e->trans_size;
    } else {
        r = AN_PUSH(x->runs, x->nruns, x->runcap);
        memset(r, 0, sizeof *r);
        r->post = a;
        r->done = e->end;
        r->bytes = e->trans_size;
    }
    *AN_PUSH(x->ends, x->nends, x->endcap) = e->end;
    size_t ns = x->nends - 1;
    *AN_PUSH(x->sidx, ns, x->sidxcap) = e->step;
}

/* NCCL_PROXY_STATE SendWait (the isend is posted: network time starts) of step `handle` at ts. */
void an_on_proxy_state_sendwait(struct pass *p, uint64_t handle, uint64_t ts)
{
    if (p->sw_valid && p->sw_h != handle) hm_put(&p->sendwait, p->sw_h, p->sw_ts);
    p->sw_h = handle;
    p->sw_ts = ts;
    p->sw_valid = 1;
}

void an_on_proxy_op(struct pass *p, const struct rs_ev_NCCL_PROXY_OP *e)
{
    uint64_t ci, ai;
    struct an_lcoll *c = NULL;
    if (hm_get(&p->collmap, e->parent, &ci) && ci < p->ncolls) {
        c = &p->colls[ci];
        if (e->end > c->kend) c->kend = e->end; /* the enqueue end is not completion: the proxy op ends later */
        c->timed = 1;
        c->nproxy++;
    }
    if (c && !strcasecmp(c->algo, "tree")) {
        struct treeop *t = AN_PUSH(p->treeops, p->ntreeops, p->treeopcap);
        t->ci = ci;
        t->channel = e->channel;
        t->peer = e->peer;
        t->is_send = e->is_send != 0;
        t->end = e->end;
    }
    if (!hm_get(&p->accmap, e->handle, &ai)) return;
    struct opacc *x = &p->accs[ai];
    if (c && e->is_send && e->nsteps >= 2 && strcasestr(c->algo, "ring")) /* ring: end of reduce-scatter */
        for (size_t k = 0; k < x->nends; k++)
            if (x->sidx[k] == e->nsteps / 2 - 1 && x->ends[k] > c->rs_end) c->rs_end = x->ends[k];
    acc_to_runs(p, x, 0x80000000u | (e->channel & 0xff) << 16 | ((uint32_t)e->peer & 0xffff));
    acc_release(p, x);
}

void an_proxy_flush(struct pass *p)
{
    for (size_t i = 0; i < p->naccs; i++)
        if (p->accs[i].used) {
            acc_to_runs(p, &p->accs[i], 0x80ff0000u | (uint32_t)(p->accs[i].parent & 0xffff));
            acc_release(p, &p->accs[i]);
        }
}


/* ---- tree AllReduce: reduce (up) and broadcast (down) phases ----
 * NCCL's tree AllReduce (runTreeUpDown) posts, per channel, a send to the parent and a receive from each
 * child for the reduce, and a receive from the parent and a send to each child for the broadcast; the
 * trace does not say which peer is the parent. The data does: with the parent, what we send (our partial
 * sums, up) ends before what we receive (the result, down); with a child, what we receive (its partial
 * sums) ends before what we send (the result). So per (channel, peer) with both directions, the earlier
 * end belongs to the reduce, and the rank's reduce phase ends with the latest of those. Keyed by channel
 * too: the second tree of NCCL's double binary tree may reverse a pair's roles. */
static int cmp_treeop(const void *a, const void *b)
{
    const struct treeop *x = a, *y = b;
    if (x->ci != y->ci) return x->ci < y->ci ? -1 : 1;
    if (x->channel != y->channel) return x->channel < y->channel ? -1 : 1;
    return x->peer < y->peer ? -1 : x->peer > y->peer;
}

void an_tree_phases(struct pass *p)
{
    if (!p->ntreeops) return;
    qsort(p->treeops, p->ntreeops, sizeof *p->treeops, cmp_treeop);
    for (size_t i = 0, j; i < p->ntreeops; i = j) {
        uint64_t send = 0, recv = 0;
        for (j = i; j < p->ntreeops && !cmp_treeop(&p->treeops[i], &p->treeops[j]); j++) {
            uint64_t *x = p->treeops[j].is_send ? &send : &recv;
            if (p->treeops[j].end > *x) *x = p->treeops[j].end;
        }
        struct an_lcoll *c = p->treeops[i].ci < p->ncolls ? &p->colls[p->treeops[i].ci] : NULL;
        uint64_t up = send < recv ? send : recv;
        if (c && send && recv && up > c->up_end) c->up_end = up;
    }
}
