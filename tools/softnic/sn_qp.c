/* softnic: RC queue pairs: create/modify/query/destroy, the state machine, post_send/post_recv,
 * completions and flushes, and the extended-QP work-request builders (ibv_wr_*). */
#include "sn.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------- completions ---------------- */
static enum ibv_wc_opcode wc_op(enum ibv_wr_opcode op)
{
    switch (op) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM: return IBV_WC_RDMA_WRITE;
    case IBV_WR_RDMA_READ: return IBV_WC_RDMA_READ;
    default: return IBV_WC_SEND;
    }
}

void sn_send_cqe(struct sn_qp *qp, struct sn_swr *w, enum ibv_wc_status st)
{
    if (st == IBV_WC_SUCCESS && !(w->flags & IBV_SEND_SIGNALED) && !qp->sq_sig_all) return;
    struct ibv_wc wc;
    memset(&wc, 0, sizeof wc);
    wc.wr_id = w->wr_id;
    wc.status = st;
    wc.opcode = wc_op(w->opcode);
    wc.byte_len = w->len;
    wc.qp_num = qp->ex.qp_base.qp_num;
    sn_cq_push((struct sn_cq *)qp->ex.qp_base.send_cq, &wc);
}

void sn_recv_cqe(struct sn_qp *qp, uint64_t wr_id, enum ibv_wc_status st, enum ibv_wc_opcode op, uint32_t len,
                 const struct sn_hdr *h)
{
    struct ibv_wc wc;
    memset(&wc, 0, sizeof wc);
    wc.wr_id = wr_id;
    wc.status = st;
    wc.opcode = op;
    wc.byte_len = len;
    wc.qp_num = qp->ex.qp_base.qp_num;
    if (h) {
        wc.src_qp = h->src_qpn;
        if (h->flags & SN_F_IMM) {
            wc.imm_data = h->imm;
            wc.wc_flags |= IBV_WC_WITH_IMM;
        }
    }
    wc.slid = sn_cfg()->link_eth ? 0 : 1;
    sn_cq_push((struct sn_cq *)qp->ex.qp_base.recv_cq, &wc);
}

/* drop queued requests of a QP (ctx lock held). Responses owed to the peer wait on their connection (sn_wire.c);
 * TX's job that writes them (SN_JOB_FLUSH) stays: it drops them itself once the QP is dead or the connection
 * closes */
static void tx_purge(struct sn_ctx *c, struct sn_qp *qp)
{
    struct sn_job **pp = &c->txq;
    c->txq_tail = NULL;
    while (*pp) {
        struct sn_job *j = *pp;
        if (j->qp == qp && j->type <= SN_REQ_READ) {
            *pp = j->next;
            free(j);
        } else {
            c->txq_tail = j;
            pp = &j->next;
        }
    }
}


/* Let the responses still owed to peers (conn->out: READ data, ACK/NAKs that RX handed to TX because the socket
 * was full) leave before a QP (qp) or the whole port (NULL) goes away. Most ACKs are written by RX before the
 * receive completion they acknowledge is posted (sn_wire.c) and owe nothing here. Bounded by progress, not by a
 * fixed time: on a loaded host the TX thread can wait for a CPU longer than any fixed bound that is short (0.5 s
 * was: the peer then saw "transport retry counter exceeded" for a message that had arrived). It gives up after
 * SN_DRAIN_STUCK_S seconds of 0.25 s slices in which TX finished no frame although this thread woke on
 * time (a peer that stopped reading its socket); slices this thread overslept (descheduled) do not count.
 * ctx lock held. */
#define SN_DRAIN_SLICE_NS 250000000ull
#define SN_DRAIN_STUCK_S  5
void sn_tx_drain(struct sn_ctx *c, struct sn_qp *qp)
{
    uint64_t mark = c->tx_jobs, slice_end = sn_now() + SN_DRAIN_SLICE_NS;
    int idle = 0; /* slices in which TX finished nothing although this thread was running */
    for (;;) {
        int owed = qp ? qp->tx_inflight : c->tx_fd >= 0;
        for (struct sn_conn *cn = c->conns; cn && !owed; cn = cn->next) owed = (!qp || cn->qp == qp) && cn->out;
        if (!owed || c->stop) return;
        uint64_t now = sn_now();
        if (now >= slice_end) {
            if (c->tx_jobs != mark) idle = 0;
            else if (now - slice_end < SN_DRAIN_SLICE_NS / 2) idle++; /* woke on time: a slice really idle */
            if (idle >= (int)(SN_DRAIN_STUCK_S * 1000000000ull / SN_DRAIN_SLICE_NS)) return;
            mark = c->tx_jobs;
            slice_end = now + SN_DRAIN_SLICE_NS;
        }
        struct timespec until = {.tv_sec = (time_t)(slice_end / 1000000000ull),
                                 .tv_nsec = (long)(slice_end % 1000000000ull)};
        pthread_cond_timedwait(&c->cond, &c->lock, &until);
    }
}

void sn_qp_error(struct sn_qp *qp)
{
    struct sn_ctx *c = qp->ctx;
    sn_qp_unlost(qp);
    qp->ex.qp_base.state = IBV_QPS_ERR;
    qp->attr.qp_state = IBV_QPS_ERR;
    sn_out_cqes(qp); /* receive completions waiting for their ACK to leave come before the flush */
    tx_purge(c, qp);
    while (qp->sq_count) {
        sn_send_cqe(qp, &qp->sq[qp->sq_head], IBV_WC_WR_FLUSH_ERR);
        qp->sq_head = (qp->sq_head + 1) % qp->cap.max_send_wr;
        qp->sq_count--;
    }
    qp->sq_sent = 0;
    struct sn_rwr r;
    if (!qp->srq)
        while (!sn_rq_pop(&qp->rq, &r)) sn_recv_cqe(qp, r.wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, NULL);
}

/* ---------------- create / destroy ---------------- */
static struct ibv_qp *qp_create(struct ibv_context *ctx, struct ibv_pd *pd, struct ibv_qp_init_attr_ex *a)
{
    struct sn_ctx *c = sn_ctx_of(ctx);
    if (a->qp_type != IBV_QPT_RC) {
        errno = EOPNOTSUPP; /* a test device for RC traffic: UD/UC/XRC are not modelled */
        return NULL;
    }
    if (!a->send_cq || !a->recv_cq || a->cap.max_send_wr > SN_MAX_QP_WR || a->cap.max_recv_wr > SN_MAX_QP_WR ||
        a->cap.max_send_sge > SN_MAX_SGE || a->cap.max_recv_sge > SN_MAX_SGE ||
        a->cap.max_inline_data > SN_MAX_INLINE) {
        errno = EINVAL;
        return NULL;
    }
    struct sn_qp *qp = calloc(1, sizeof *qp);
    if (!qp) {
        errno = ENOMEM;
        return NULL;
    }
    qp->ctx = c;
    qp->cap = a->cap;
    if (!qp->cap.max_send_wr) qp->cap.max_send_wr = 1;
    if (!qp->cap.max_send_sge) qp->cap.max_send_sge = 1;
    if (!qp->cap.max_recv_sge) qp->cap.max_recv_sge = 1;
    qp->cap.max_inline_data = SN_MAX_INLINE;
    qp->sq_sig_all = a->sq_sig_all;
    qp->sq = calloc(qp->cap.max_send_wr, sizeof *qp->sq);
    qp->srq = (struct sn_srq *)a->srq;
    if (!qp->sq || (!qp->srq && sn_rq_init(&qp->rq, qp->cap.max_recv_wr, qp->cap.max_recv_sge))) {
        free(qp->sq);
        free(qp);
        errno = ENOMEM;
        return NULL;
    }
    if (qp->srq) qp->cap.max_recv_wr = qp->cap.max_recv_sge = 0;
    struct ibv_qp *b = &qp->ex.qp_base;
    b->context = ctx;
    b->qp_context = a->qp_context;
    b->pd = pd;
    b->send_cq = a->send_cq;
    b->recv_cq = a->recv_cq;
    b->srq = a->srq;
    b->state = IBV_QPS_RESET;
    b->qp_type = IBV_QPT_RC;
    pthread_mutex_init(&b->mutex, NULL);
    pthread_cond_init(&b->cond, NULL);
    qp->attr.qp_state = IBV_QPS_RESET;
    qp->attr.path_mtu = IBV_MTU_4096;
    qp->attr.port_num = 1;
    qp->attr.min_rnr_timer = 12;
    qp->attr.rnr_retry = 7;
    qp->attr.retry_cnt = 7;
    qp->attr.timeout = 14;
    sn_qp_init_ops(qp);
    if (sn_qp_listen(qp)) { /* also assigns the host-unique qp_num */
        free(qp->sq);
        free(qp->rq.ring);
        free(qp);
        errno = EAGAIN;
        return NULL;
    }
    sn_pd_use(pd, 1);
    b->handle = b->qp_num;
    pthread_mutex_lock(&c->lock);
    qp->next = c->qps;
    c->qps = qp;
    ((struct sn_cq *)a->send_cq)->nqp++;
    ((struct sn_cq *)a->recv_cq)->nqp++;
    pthread_mutex_unlock(&c->lock);
    return b;
}

SN_EXPORT struct ibv_qp *ibv_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *a)
{
    struct ibv_qp_init_attr_ex x;
    memset(&x, 0, sizeof x);
    x.qp_context = a->qp_context;
    x.send_cq = a->send_cq;
    x.recv_cq = a->recv_cq;
    x.srq = a->srq;
    x.cap = a->cap;
    x.qp_type = a->qp_type;
    x.sq_sig_all = a->sq_sig_all;
    x.comp_mask = IBV_QP_INIT_ATTR_PD;
    x.pd = pd;
    struct ibv_qp *qp = qp_create(pd->context, pd, &x);
    if (qp) a->cap = ((struct sn_qp *)qp)->cap;
    return qp;
}

struct ibv_qp *sn_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
    const uint64_t ops = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND |
                         IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ;
    if (!(a->comp_mask & IBV_QP_INIT_ATTR_PD) || !a->pd ||
        (a->comp_mask &
         ~(uint32_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS | IBV_QP_INIT_ATTR_CREATE_FLAGS)) ||
        ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) && (a->send_ops_flags & ~ops)) ||
        ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) && a->create_flags)) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    struct ibv_qp *qp = qp_create(ctx, a->pd, a);
    if (qp) a->cap = ((struct sn_qp *)qp)->cap;
    return qp;
}

SN_EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex(struct ibv_qp *qp) { return &((struct sn_qp *)qp)->ex; }

SN_EXPORT int ibv_destroy_qp(struct ibv_qp *ibqp)
{
    struct sn_qp *qp = (struct sn_qp *)ibqp;
    struct sn_ctx *c = qp->ctx;
    pthread_mutex_lock(&c->lock);
    if (qp->dead) {
        pthread_mutex_unlock(&c->lock);
        return EINVAL;
    }
    /* the QP takes no new request from now on (RX drops them as for a dead QP: the peer's retransmit timer ends
     * them), so a peer that keeps writing cannot hold the drain open, and nothing that arrives after this point is
     * acknowledged. Until session 19 RX kept applying and ACKing incoming WRITEs for as long as the drain waited */
    qp->destroying = 1;
    tx_purge(c, qp);
    sn_tx_drain(c, qp);
    qp->dead = 1;
    sn_qp_unlost(qp);
    ibqp->state = IBV_QPS_RESET;
    tx_purge(c, qp);
    qp->sq_count = 0;
    ((struct sn_cq *)ibqp->send_cq)->nqp--;
    ((struct sn_cq *)ibqp->recv_cq)->nqp--;
    sn_qp_detach(qp, 1); /* waits until neither thread touches the QP's sockets or memory */
    pthread_mutex_unlock(&c->lock);
    sn_pd_use(ibqp->pd, -1);
    return 0; /* memory is kept until close_device: late frames find a dead QP, not freed memory */
}

/* ---------------- modify / query ---------------- */
static int transition_ok(enum ibv_qp_state from, enum ibv_qp_state to)
{
    if (to == IBV_QPS_RESET || to == IBV_QPS_ERR) return 1;
    switch (from) {
    case IBV_QPS_RESET: return to == IBV_QPS_INIT;
    case IBV_QPS_INIT: return to == IBV_QPS_INIT || to == IBV_QPS_RTR;
    case IBV_QPS_RTR: return to == IBV_QPS_RTS;
    case IBV_QPS_RTS: return to == IBV_QPS_RTS || to == IBV_QPS_SQD;
    case IBV_QPS_SQD: return to == IBV_QPS_RTS || to == IBV_QPS_SQD;
    case IBV_QPS_SQE: return to == IBV_QPS_RTS;
    default: return 0;
    }
}

SN_EXPORT int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *a, int mask)
{
    struct sn_qp *qp = (struct sn_qp *)ibqp;
    struct sn_ctx *c = qp->ctx;
    pthread_mutex_lock(&c->lock);
    enum ibv_qp_state cur = ibqp->state, to = cur;
    if (qp->dead || ((mask & IBV_QP_CUR_STATE) && a->cur_qp_state != cur)) {
        pthread_mutex_unlock(&c->lock);
        return EINVAL;
    }
    if (mask & IBV_QP_STATE) {
        to = a->qp_state;
        if (!transition_ok(cur, to) ||
            (to == IBV_QPS_RTR && cur == IBV_QPS_INIT && (!(mask & IBV_QP_DEST_QPN) || !(mask & IBV_QP_AV))) ||
            ((mask & IBV_QP_PORT) && a->port_num != 1)) {
            pthread_mutex_unlock(&c->lock);
            return EINVAL;
        }
    }
#define TAKE(bit, field) \
    if (mask & (bit)) qp->attr.field = a->field;
    TAKE(IBV_QP_ACCESS_FLAGS, qp_access_flags)
    TAKE(IBV_QP_PKEY_INDEX, pkey_index)
    TAKE(IBV_QP_PORT, port_num)
    TAKE(IBV_QP_QKEY, qkey)
    TAKE(IBV_QP_AV, ah_attr)
    TAKE(IBV_QP_PATH_MTU, path_mtu)
    TAKE(IBV_QP_TIMEOUT, timeout)
    TAKE(IBV_QP_RETRY_CNT, retry_cnt)
    TAKE(IBV_QP_RNR_RETRY, rnr_retry)
    TAKE(IBV_QP_RQ_PSN, rq_psn)
    TAKE(IBV_QP_MAX_QP_RD_ATOMIC, max_rd_atomic)
    TAKE(IBV_QP_MIN_RNR_TIMER, min_rnr_timer)
    TAKE(IBV_QP_SQ_PSN, sq_psn)
    TAKE(IBV_QP_MAX_DEST_RD_ATOMIC, max_dest_rd_atomic)
    TAKE(IBV_QP_DEST_QPN, dest_qp_num)
#undef TAKE
    if (mask & IBV_QP_DEST_QPN) qp->dest_qpn = a->dest_qp_num;
    if (to != cur || (mask & IBV_QP_STATE)) {
        if (to == IBV_QPS_ERR) {
            sn_qp_error(qp);
        } else if (to == IBV_QPS_RESET) {
            sn_out_cqes(qp);
            tx_purge(c, qp);
            sn_qp_unlost(qp);
            qp->sq_head = qp->sq_count = qp->sq_sent = 0;
            qp->rq.head = qp->rq.count = 0;
            qp->next_seq = 0;
            ibqp->state = IBV_QPS_RESET;
            qp->attr.qp_state = IBV_QPS_RESET;
            sn_qp_detach(qp, 0);
        } else {
            ibqp->state = to;
            qp->attr.qp_state = to;
        }
    }
    pthread_mutex_unlock(&c->lock);
    if (to == IBV_QPS_RTR || to == IBV_QPS_RTS) sn_rx_kick(c); /* requests that arrived early may now be applied */
    return 0;
}

SN_EXPORT int ibv_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *a, int mask, struct ibv_qp_init_attr *init)
{
    (void)mask;
    struct sn_qp *qp = (struct sn_qp *)ibqp;
    pthread_mutex_lock(&qp->ctx->lock);
    *a = qp->attr;
    a->qp_state = ibqp->state;
    a->cur_qp_state = ibqp->state;
    a->cap = qp->cap;
    if (init) {
        memset(init, 0, sizeof *init);
        init->qp_context = ibqp->qp_context;
        init->send_cq = ibqp->send_cq;
        init->recv_cq = ibqp->recv_cq;
        init->srq = ibqp->srq;
        init->cap = qp->cap;
        init->qp_type = IBV_QPT_RC;
        init->sq_sig_all = qp->sq_sig_all;
    }
    pthread_mutex_unlock(&qp->ctx->lock);
    return 0;
}

/* ---------------- posting ---------------- */
static void flush_send(struct sn_qp *qp, struct ibv_send_wr *wr)
{
    struct sn_swr w;
    memset(&w, 0, sizeof w);
    w.wr_id = wr->wr_id;
    w.opcode = wr->opcode;
    w.flags = wr->send_flags;
    sn_send_cqe(qp, &w, IBV_WC_WR_FLUSH_ERR);
}

int sn_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    struct sn_qp *qp = (struct sn_qp *)ibqp;
    struct sn_ctx *c = qp->ctx;
    int rc = 0, queued = 0;
    uint64_t now = sn_now();
    pthread_mutex_lock(&c->lock);
    for (; wr; wr = wr->next) {
        if (qp->dead || (ibqp->state != IBV_QPS_RTS && ibqp->state != IBV_QPS_ERR && ibqp->state != IBV_QPS_SQD)) {
            rc = EINVAL;
            break;
        }
        if (ibqp->state == IBV_QPS_ERR) { /* posting to an errored QP completes with a flush */
            flush_send(qp, wr);
            continue;
        }
        if (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_SEND_WITH_IMM && wr->opcode != IBV_WR_RDMA_WRITE &&
            wr->opcode != IBV_WR_RDMA_WRITE_WITH_IMM && wr->opcode != IBV_WR_RDMA_READ) {
            rc = EINVAL;
            break;
        }
        if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->cap.max_send_sge) {
            rc = EINVAL;
            break;
        }
        if (qp->sq_count >= qp->cap.max_send_wr) {
            rc = ENOMEM;
            break;
        }
        uint64_t len = 0;
        for (int i = 0; i < wr->num_sge; i++) len += wr->sg_list[i].length;
        int inl = (wr->send_flags & IBV_SEND_INLINE) && wr->opcode != IBV_WR_RDMA_READ;
        if (len > SN_MAX_MSG || (inl && len > SN_MAX_INLINE)) {
            rc = EINVAL;
            break;
        }
        struct sn_job *j = malloc(sizeof *j);
        if (!j) {
            rc = ENOMEM;
            break;
        }
        uint32_t idx = (qp->sq_head + qp->sq_count) % qp->cap.max_send_wr;
        struct sn_swr *w = &qp->sq[idx];
        w->wr_id = wr->wr_id;
        w->seq = qp->next_seq++;
        w->opcode = wr->opcode;
        w->flags = wr->send_flags | (inl ? IBV_SEND_INLINE : 0);
        w->imm = wr->imm_data;
        w->rkey = wr->wr.rdma.rkey;
        w->raddr = wr->wr.rdma.remote_addr;
        w->len = (uint32_t)len;
        w->post_ts = now;
        w->sent = 0;
        w->num_sge = wr->num_sge;
        if (wr->num_sge) memcpy(w->sge, wr->sg_list, (size_t)wr->num_sge * sizeof *w->sge);
        if (inl) { /* the caller may reuse inline buffers as soon as we return */
            uint32_t off = 0;
            for (int i = 0; i < wr->num_sge; i++) {
                memcpy(w->inl + off, (void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
                off += wr->sg_list[i].length;
            }
        }
        qp->sq_count++;
        memset(j, 0, sizeof *j);
        j->qp = qp;
        j->type = wr->opcode == IBV_WR_RDMA_READ                                      ? SN_REQ_READ
                  : (wr->opcode == IBV_WR_SEND || wr->opcode == IBV_WR_SEND_WITH_IMM) ? SN_REQ_SEND
                                                                                      : SN_REQ_WRITE;
        j->sq_idx = idx;
        j->seq = w->seq;
        j->ts = now;
        sn_tx_queue(c, j);
        queued = 1;
    }
    if (rc) *bad = wr;
    pthread_mutex_unlock(&c->lock);
    /* wake TX only now: woken inside the critical section, TX (short scheduler slice, sn_wire.c) preempts the
     * application thread at once and blocks on the lock that thread holds, which on a busy CPU may not run
     * again before the next scheduler tick (ms) */
    if (queued) pthread_cond_signal(&c->tx_cond);
    return rc;
}

int sn_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    struct sn_qp *qp = (struct sn_qp *)ibqp;
    struct sn_ctx *c = qp->ctx;
    int rc = 0, kick;
    pthread_mutex_lock(&c->lock);
    for (; wr; wr = wr->next) {
        if (qp->srq || qp->dead || ibqp->state == IBV_QPS_RESET) {
            rc = EINVAL;
            break;
        }
        if (ibqp->state == IBV_QPS_ERR) {
            sn_recv_cqe(qp, wr->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, 0, NULL);
            continue;
        }
        if ((rc = sn_rq_push(&qp->rq, wr))) break;
    }
    if (rc) *bad = wr;
    kick = c->nparked > 0;
    pthread_mutex_unlock(&c->lock);
    if (kick) sn_rx_kick(c);
    return rc;
}

/* ---------------- extended QP: ibv_wr_* builders ----------------
 * The builders collect ordinary ibv_send_wr's and wr_complete posts them as one chain, so both APIs
 * share one send path.  Inline data is copied at the call, as the API allows the buffer's reuse. */
static struct ibv_send_wr *bld_new(struct ibv_qp_ex *x, enum ibv_wr_opcode op)
{
    struct sn_qp *qp = (struct sn_qp *)x;
    if (qp->bld_n == qp->bld_cap) {
        int nc = qp->bld_cap ? qp->bld_cap * 2 : 16;
        struct ibv_send_wr *w = realloc(qp->bld, (size_t)nc * sizeof *w);
        if (w) qp->bld = w;
        struct ibv_sge *s = realloc(qp->bld_sge, (size_t)nc * SN_MAX_SGE * sizeof *s);
        if (s) qp->bld_sge = s;
        uint8_t *in = realloc(qp->bld_inl, (size_t)nc * SN_MAX_INLINE);
        if (in) qp->bld_inl = in;
        if (!w || !s || !in) {
            qp->bld_err = ENOMEM;
            return NULL;
        }
        qp->bld_cap = nc;
    }
    struct ibv_send_wr *w = &qp->bld[qp->bld_n++];
    memset(w, 0, sizeof *w);
    w->wr_id = x->wr_id;
    w->send_flags = x->wr_flags;
    w->opcode = op;
    return w;
}

static struct ibv_send_wr *bld_last(struct ibv_qp_ex *x)
{
    struct sn_qp *qp = (struct sn_qp *)x;
    if (!qp->bld_n) {
        qp->bld_err = EINVAL;
        return NULL;
    }
    return &qp->bld[qp->bld_n - 1];
}

static void wr_start(struct ibv_qp_ex *x)
{
    struct sn_qp *qp = (struct sn_qp *)x;
    qp->bld_n = 0;
    qp->bld_err = 0;
}

static int wr_complete(struct ibv_qp_ex *x)
{
    struct sn_qp *qp = (struct sn_qp *)x;
    int n = qp->bld_n, rc = qp->bld_err;
    qp->bld_n = 0;
    qp->bld_err = 0;
    if (rc || !n) return rc;
    for (int i = 0; i < n; i++) {
        qp->bld[i].sg_list = &qp->bld_sge[(size_t)i * SN_MAX_SGE];
        qp->bld[i].next = i + 1 < n ? &qp->bld[i + 1] : NULL;
    }
    struct ibv_send_wr *bad;
    return sn_post_send(&x->qp_base, qp->bld, &bad);
}

static void wr_abort(struct ibv_qp_ex *x) { wr_start(x); }

static void wr_send(struct ibv_qp_ex *x) { bld_new(x, IBV_WR_SEND); }

static void wr_send_imm(struct ibv_qp_ex *x, __be32 imm)
{
    struct ibv_send_wr *w = bld_new(x, IBV_WR_SEND_WITH_IMM);
    if (w) w->imm_data = imm;
}

static void wr_rdma(struct ibv_qp_ex *x, enum ibv_wr_opcode op, uint32_t rkey, uint64_t raddr, __be32 imm)
{
    struct ibv_send_wr *w = bld_new(x, op);
    if (w) {
        w->wr.rdma.rkey = rkey;
        w->wr.rdma.remote_addr = raddr;
        w->imm_data = imm;
    }
}

static void wr_rdma_write(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr)
{
    wr_rdma(x, IBV_WR_RDMA_WRITE, rkey, raddr, 0);
}

static void wr_rdma_write_imm(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr, __be32 imm)
{
    wr_rdma(x, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, raddr, imm);
}

static void wr_rdma_read(struct ibv_qp_ex *x, uint32_t rkey, uint64_t raddr)
{
    wr_rdma(x, IBV_WR_RDMA_READ, rkey, raddr, 0);
}

static void wr_set_sge(struct ibv_qp_ex *x, uint32_t lkey, uint64_t addr, uint32_t length)
{
    struct sn_qp *qp = (struct sn_qp *)x;
    struct ibv_send_wr *w = bld_last(x);
    if (!w) return;
    struct ibv_sge *s = &qp->bld_sge[(size_t)(qp->bld_n - 1) * SN_MAX_SGE];
    s->lkey = lkey;
    s->addr = addr;
    s->length = length;
    w->num_sge = 1;
}

static void wr_set_sge_list(struct ibv_qp_ex *x, size_t n, const struct ibv_sge *list)
{
    struct sn_qp *qp = (struct sn_qp *)x;
    struct ibv_send_wr *w = bld_last(x);
    if (!w) return;
    if (n > SN_MAX_SGE) {
        qp->bld_err = EINVAL;
        return;
    }
    memcpy(&qp->bld_sge[(size_t)(qp->bld_n - 1) * SN_MAX_SGE], list, n * sizeof *list);
    w->num_sge = (int)n;
}

static void wr_set_inline_data_list(struct ibv_qp_ex *x, size_t n, const struct ibv_data_buf *bufs)
{
    struct sn_qp *qp = (struct sn_qp *)x;
    struct ibv_send_wr *w = bld_last(x);
    if (!w) return;
    uint8_t *dst = &qp->bld_inl[(size_t)(qp->bld_n - 1) * SN_MAX_INLINE];
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        if (off + bufs[i].length > SN_MAX_INLINE) {
            qp->bld_err = EINVAL;
            return;
        }
        memcpy(dst + off, bufs[i].addr, bufs[i].length);
        off += bufs[i].length;
    }
    /* the buffer pointer is fixed up at post time through the copy in the SQ entry */
    struct ibv_sge *s = &qp->bld_sge[(size_t)(qp->bld_n - 1) * SN_MAX_SGE];
    s->addr = (uintptr_t)dst;
    s->length = (uint32_t)off;
    s->lkey = 0;
    w->num_sge = 1;
    w->send_flags |= IBV_SEND_INLINE;
}

static void wr_set_inline_data(struct ibv_qp_ex *x, void *addr, size_t length)
{
    struct ibv_data_buf b = {.addr = addr, .length = length};
    wr_set_inline_data_list(x, 1, &b);
}

static void wr_unsupported(struct ibv_qp_ex *x) { ((struct sn_qp *)x)->bld_err = EOPNOTSUPP; }
static void wr_atomic_cas(struct ibv_qp_ex *x, uint32_t r, uint64_t a, uint64_t c, uint64_t s)
{
    (void)r, (void)a, (void)c, (void)s;
    wr_unsupported(x);
}
static void wr_atomic_fa(struct ibv_qp_ex *x, uint32_t r, uint64_t a, uint64_t add)
{
    (void)r, (void)a, (void)add;
    wr_unsupported(x);
}
static void wr_bind_mw(struct ibv_qp_ex *x, struct ibv_mw *mw, uint32_t r, const struct ibv_mw_bind_info *i)
{
    (void)mw, (void)r, (void)i;
    wr_unsupported(x);
}
static void wr_local_inv(struct ibv_qp_ex *x, uint32_t r)
{
    (void)r;
    wr_unsupported(x);
}
static void wr_send_tso(struct ibv_qp_ex *x, void *h, uint16_t hs, uint16_t mss)
{
    (void)h, (void)hs, (void)mss;
    wr_unsupported(x);
}
static void wr_set_ud_addr(struct ibv_qp_ex *x, struct ibv_ah *ah, uint32_t qpn, uint32_t qkey)
{
    (void)ah, (void)qpn, (void)qkey;
    wr_unsupported(x);
}
static void wr_set_xrc_srqn(struct ibv_qp_ex *x, uint32_t n)
{
    (void)n;
    wr_unsupported(x);
}
static void wr_atomic_write(struct ibv_qp_ex *x, uint32_t r, uint64_t a, const void *w)
{
    (void)r, (void)a, (void)w;
    wr_unsupported(x);
}

void sn_qp_init_ops(struct sn_qp *qp)
{
    struct ibv_qp_ex *x = &qp->ex;
    x->wr_start = wr_start;
    x->wr_complete = wr_complete;
    x->wr_abort = wr_abort;
    x->wr_send = wr_send;
    x->wr_send_imm = wr_send_imm;
    x->wr_rdma_write = wr_rdma_write;
    x->wr_rdma_write_imm = wr_rdma_write_imm;
    x->wr_rdma_read = wr_rdma_read;
    x->wr_set_sge = wr_set_sge;
    x->wr_set_sge_list = wr_set_sge_list;
    x->wr_set_inline_data = wr_set_inline_data;
    x->wr_set_inline_data_list = wr_set_inline_data_list;
    x->wr_atomic_cmp_swp = wr_atomic_cas;
    x->wr_atomic_fetch_add = wr_atomic_fa;
    x->wr_bind_mw = wr_bind_mw;
    x->wr_local_inv = wr_local_inv;
    x->wr_send_inv = wr_local_inv;
    x->wr_send_tso = wr_send_tso;
    x->wr_set_ud_addr = wr_set_ud_addr;
    x->wr_set_xrc_srqn = wr_set_xrc_srqn;
    x->wr_atomic_write = wr_atomic_write;
}
