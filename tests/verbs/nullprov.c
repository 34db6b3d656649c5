/* A null verbs provider for the verbs capture's unit tests and benchmark: a stand-in libibverbs.so.1
 * (used through LD_LIBRARY_PATH, symbol versions as rdma-core's) whose contexts complete every work request
 * at once, in process. It is a test device, not a NIC: no wire, no remote side. Semantics:
 *  - two devices, "null0" and "null1"; contexts are extended (verbs_context, create_cq_ex/create_qp_ex);
 *  - post_send: each WR that is signaled (or on a sq_sig_all QP) puts a completion on the send CQ; a SEND
 *    also consumes a posted receive of the same QP (loopback) and completes it on the recv CQ;
 *    an opcode > IBV_WR_TSO fails the post with EINVAL and *bad_wr = that WR (the WRs before it are posted);
 *    an SGE whose lkey is NULLPROV_BAD_LKEY completes with IBV_WC_LOC_PROT_ERR;
 *  - ibv_qp_ex builders (send, rdma_write, set_sge, ...) buffer WRs until wr_complete; like mlx5, the
 *    provider installs a different wr_complete when the QP reaches RTS;
 *  - ibv_cq_ex start/next/end_poll iterate the same completion ring;
 *  - nullprov_open_untraced() opens a context behind the tracer's back (the benchmark's baseline);
 *  - NULLPROV_MINIMAL=1: contexts without post_srq_recv, req_notify_cq, create_cq_ex and create_qp_ex
 *    (NULL entries, which a tracer must leave NULL);
 *  - SRQs: receives posted to an SRQ are consumed by SENDs on any QP attached to it; ibv_create_srq and
 *    the verbs_context create_srq_ex (ibv_create_srq_ex with a non-basic mask) both create them;
 *  - WQs (verbs_context create_wq / destroy_wq): ibv_post_wq_recv queues receives (nothing consumes them);
 *    a WR with more than one SGE fails the post with EINVAL and *bad_wr = that WR;
 *  - nullprov_create_qp_ex_raw / nullprov_create_cq_ex_raw: the QP/CQ creation behind the verbs_context
 *    entries, for the stand-in libmlx5's mlx5dv_create_qp / mlx5dv_create_cq.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

#define NULLPROV_BAD_LKEY 0xdeadu
#define RING              4096
#define EXPORT            __attribute__((visibility("default")))

struct np_cq {
    struct ibv_cq_ex cq; /* an ibv_cq is the first member of ibv_cq_ex */
    struct ibv_wc ring[RING];
    unsigned head, tail;
    struct ibv_wc *cur; /* cq_ex iterator */
};

struct np_srq {
    struct ibv_srq srq;
    uint64_t wr_id[RING];
    unsigned head, tail;
};

struct np_wq {
    struct ibv_wq wq;
    uint64_t wr_id[RING];
    unsigned head, tail;
};

struct np_qp {
    union {
        struct ibv_qp qp;
        struct ibv_qp_ex qpx;
    };
    int sig_all;
    struct ibv_recv_wr rq[RING]; /* wr_id, byte budget in num_sge */
    uint32_t rq_len[RING];
    unsigned rq_head, rq_tail;
    /* builder state */
    uint64_t b_wr_id[64];
    unsigned b_flags[64], b_op[64], b_len[64], b_lkey[64];
    int nb;
};

static struct ibv_device devs[2];
static struct ibv_device *devlist[3];
static uint32_t next_key = 0x100, next_qpn = 0x11;

static void cq_push(struct np_cq *c, uint64_t wr_id, enum ibv_wc_status st, enum ibv_wc_opcode op, uint32_t len,
                    uint32_t qpn)
{
    if (c->tail - c->head >= RING) return; /* overrun: drop, like a CQ overflow */
    struct ibv_wc *w = &c->ring[c->tail++ % RING];
    memset(w, 0, sizeof *w);
    w->wr_id = wr_id;
    w->status = st;
    w->opcode = op;
    w->byte_len = len;
    w->qp_num = qpn;
}

static enum ibv_wc_opcode wc_op(unsigned op)
{
    switch (op) {
    case IBV_WR_RDMA_WRITE:
    case IBV_WR_RDMA_WRITE_WITH_IMM: return IBV_WC_RDMA_WRITE;
    case IBV_WR_RDMA_READ: return IBV_WC_RDMA_READ;
    case IBV_WR_ATOMIC_CMP_AND_SWP: return IBV_WC_COMP_SWAP;
    case IBV_WR_ATOMIC_FETCH_AND_ADD: return IBV_WC_FETCH_ADD;
    default: return IBV_WC_SEND;
    }
}

/* One WR reaches the "wire". */
static void np_exec(struct np_qp *q, uint64_t wr_id, unsigned flags, unsigned op, uint32_t len, uint32_t lkey)
{
    enum ibv_wc_status st = lkey == NULLPROV_BAD_LKEY ? IBV_WC_LOC_PROT_ERR : IBV_WC_SUCCESS;
    if ((flags & IBV_SEND_SIGNALED) || q->sig_all || st != IBV_WC_SUCCESS)
        cq_push((struct np_cq *)q->qp.send_cq, wr_id, st, wc_op(op), len, q->qp.qp_num);
    int consumes =
        st == IBV_WC_SUCCESS && (op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM);
    struct np_srq *srq = (struct np_srq *)q->qp.srq;
    if (consumes && srq && srq->head != srq->tail) {
        cq_push((struct np_cq *)q->qp.recv_cq, srq->wr_id[srq->head++ % RING], IBV_WC_SUCCESS, IBV_WC_RECV, len,
                q->qp.qp_num);
    } else if (consumes && !srq && q->rq_head != q->rq_tail) {
        unsigned i = q->rq_head++ % RING;
        cq_push((struct np_cq *)q->qp.recv_cq, q->rq[i].wr_id, IBV_WC_SUCCESS,
                op == IBV_WR_RDMA_WRITE_WITH_IMM ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV, len, q->qp.qp_num);
    }
}

static int np_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
    struct np_qp *q = (struct np_qp *)qp;
    for (; wr; wr = wr->next) {
        if ((unsigned)wr->opcode > IBV_WR_TSO) {
            *bad = wr;
            errno = EINVAL;
            return EINVAL;
        }
        uint32_t len = 0, lkey = 0;
        for (int i = 0; i < wr->num_sge; i++) {
            len += wr->sg_list[i].length;
            if (wr->sg_list[i].lkey == NULLPROV_BAD_LKEY) lkey = NULLPROV_BAD_LKEY;
        }
        np_exec(q, wr->wr_id, wr->send_flags, wr->opcode, len, lkey);
    }
    return 0;
}

static int np_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    struct np_qp *q = (struct np_qp *)qp;
    for (; wr; wr = wr->next) {
        if (q->rq_tail - q->rq_head >= RING) {
            *bad = wr;
            return ENOMEM;
        }
        unsigned i = q->rq_tail++ % RING;
        q->rq[i].wr_id = wr->wr_id;
        q->rq_len[i] = wr->num_sge ? wr->sg_list[0].length : 0;
    }
    return 0;
}

static int np_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    struct np_srq *s = (struct np_srq *)srq;
    for (; wr; wr = wr->next) {
        if (s->tail - s->head >= RING) {
            *bad = wr;
            return ENOMEM;
        }
        s->wr_id[s->tail++ % RING] = wr->wr_id;
    }
    return 0;
}

static int np_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
    struct np_cq *c = (struct np_cq *)cq;
    int k = 0;
    while (k < n && c->head != c->tail) wc[k++] = c->ring[c->head++ % RING];
    return k;
}

static int np_req_notify(struct ibv_cq *cq, int solicited)
{
    (void)cq, (void)solicited;
    return 0;
}

/* ---- cq_ex ---- */
static int np_start_poll(struct ibv_cq_ex *cq, struct ibv_poll_cq_attr *attr)
{
    (void)attr;
    struct np_cq *c = (struct np_cq *)cq;
    if (c->head == c->tail) return ENOENT;
    c->cur = &c->ring[c->head++ % RING];
    cq->wr_id = c->cur->wr_id;
    cq->status = c->cur->status;
    return 0;
}
static int np_next_poll(struct ibv_cq_ex *cq)
{
    struct np_cq *c = (struct np_cq *)cq;
    if (c->head == c->tail) return ENOENT;
    c->cur = &c->ring[c->head++ % RING];
    cq->wr_id = c->cur->wr_id;
    cq->status = c->cur->status;
    return 0;
}
static void np_end_poll(struct ibv_cq_ex *cq) { ((struct np_cq *)cq)->cur = NULL; }
static enum ibv_wc_opcode np_read_opcode(struct ibv_cq_ex *cq) { return ((struct np_cq *)cq)->cur->opcode; }
static uint32_t np_read_vendor_err(struct ibv_cq_ex *cq) { return ((struct np_cq *)cq)->cur->vendor_err; }
static uint32_t np_read_byte_len(struct ibv_cq_ex *cq) { return ((struct np_cq *)cq)->cur->byte_len; }
static uint32_t np_read_qp_num(struct ibv_cq_ex *cq) { return ((struct np_cq *)cq)->cur->qp_num; }
static unsigned int np_read_wc_flags(struct ibv_cq_ex *cq) { return ((struct np_cq *)cq)->cur->wc_flags; }

static struct np_cq *np_cq_new(struct ibv_context *ctx, int cqe)
{
    struct np_cq *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->cq.context = ctx;
    c->cq.cqe = cqe;
    c->cq.start_poll = np_start_poll;
    c->cq.next_poll = np_next_poll;
    c->cq.end_poll = np_end_poll;
    c->cq.read_opcode = np_read_opcode;
    c->cq.read_vendor_err = np_read_vendor_err;
    c->cq.read_byte_len = np_read_byte_len;
    c->cq.read_qp_num = np_read_qp_num;
    c->cq.read_wc_flags = np_read_wc_flags;
    return c;
}

static struct ibv_cq_ex *np_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *a)
{
    struct np_cq *c = np_cq_new(ctx, (int)a->cqe);
    return c ? &c->cq : NULL;
}

/* ---- qp_ex builders ---- */
static void b_add(struct ibv_qp_ex *qx, unsigned op)
{
    struct np_qp *q = (struct np_qp *)qx;
    if (q->nb >= 64) return;
    q->b_wr_id[q->nb] = qx->wr_id;
    q->b_flags[q->nb] = qx->wr_flags;
    q->b_op[q->nb] = op;
    q->b_len[q->nb] = 0;
    q->b_lkey[q->nb] = 0;
    q->nb++;
}
static void b_start(struct ibv_qp_ex *qx) { ((struct np_qp *)qx)->nb = 0; }
static void b_send(struct ibv_qp_ex *qx) { b_add(qx, IBV_WR_SEND); }
static void b_rdma_write(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t ra)
{
    (void)rkey, (void)ra;
    b_add(qx, IBV_WR_RDMA_WRITE);
}
static void b_set_sge(struct ibv_qp_ex *qx, uint32_t lkey, uint64_t addr, uint32_t len)
{
    (void)addr;
    struct np_qp *q = (struct np_qp *)qx;
    if (!q->nb) return;
    q->b_len[q->nb - 1] = len;
    q->b_lkey[q->nb - 1] = lkey;
}
static int b_complete_common(struct ibv_qp_ex *qx)
{
    struct np_qp *q = (struct np_qp *)qx;
    for (int i = 0; i < q->nb; i++) np_exec(q, q->b_wr_id[i], q->b_flags[i], q->b_op[i], q->b_len[i], q->b_lkey[i]);
    q->nb = 0;
    return 0;
}
static int b_complete_init(struct ibv_qp_ex *qx) { return b_complete_common(qx); }
static int b_complete_rts(struct ibv_qp_ex *qx) { return b_complete_common(qx); }
static void b_abort(struct ibv_qp_ex *qx) { ((struct np_qp *)qx)->nb = 0; }

static struct ibv_qp *np_qp_new(struct ibv_pd *pd, struct ibv_qp_init_attr *a, int ex)
{
    struct np_qp *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->qp.context = pd->context;
    q->qp.pd = pd;
    q->qp.send_cq = a->send_cq;
    q->qp.recv_cq = a->recv_cq;
    q->qp.srq = a->srq;
    q->qp.qp_num = next_qpn++;
    q->qp.qp_type = a->qp_type;
    q->qp.state = IBV_QPS_RESET;
    q->sig_all = a->sq_sig_all;
    if (ex) {
        q->qpx.wr_start = b_start;
        q->qpx.wr_send = b_send;
        q->qpx.wr_rdma_write = b_rdma_write;
        q->qpx.wr_set_sge = b_set_sge;
        q->qpx.wr_complete = b_complete_init;
        q->qpx.wr_abort = b_abort;
    }
    return &q->qp;
}

static struct ibv_qp *np_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
    struct ibv_pd *pd = a->pd;
    if (!pd || pd->context != ctx) {
        errno = EINVAL;
        return NULL;
    }
    struct ibv_qp_init_attr b = {.qp_context = a->qp_context,
                                 .send_cq = a->send_cq,
                                 .recv_cq = a->recv_cq,
                                 .srq = a->srq,
                                 .cap = a->cap,
                                 .qp_type = a->qp_type,
                                 .sq_sig_all = a->sq_sig_all};
    int ex = (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) && a->send_ops_flags;
    return np_qp_new(pd, &b, ex);
}

/* ---- SRQs and WQs ---- */
static struct ibv_srq *np_srq_new(struct ibv_context *ctx, struct ibv_pd *pd)
{
    struct np_srq *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->srq.context = ctx;
    s->srq.pd = pd;
    return &s->srq;
}

static struct ibv_srq *np_create_srq_ex(struct ibv_context *ctx, struct ibv_srq_init_attr_ex *a)
{
    if (!(a->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !a->pd || a->pd->context != ctx) {
        errno = EINVAL;
        return NULL;
    }
    return np_srq_new(ctx, a->pd);
}

static int np_wq_post_recv(struct ibv_wq *wq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    struct np_wq *w = (struct np_wq *)wq;
    for (; wr; wr = wr->next) {
        if (wr->num_sge > 1 || w->tail - w->head >= RING) {
            *bad = wr;
            return wr->num_sge > 1 ? EINVAL : ENOMEM;
        }
        w->wr_id[w->tail++ % RING] = wr->wr_id;
    }
    return 0;
}

static struct ibv_wq *np_create_wq(struct ibv_context *ctx, struct ibv_wq_init_attr *a)
{
    if (!a->pd || !a->cq || a->pd->context != ctx) {
        errno = EINVAL;
        return NULL;
    }
    struct np_wq *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->wq.context = ctx;
    w->wq.pd = a->pd;
    w->wq.cq = a->cq;
    w->wq.wq_num = next_qpn++;
    w->wq.wq_type = a->wq_type;
    w->wq.state = IBV_WQS_RESET;
    w->wq.post_recv = np_wq_post_recv;
    return &w->wq;
}

static int np_destroy_wq(struct ibv_wq *wq)
{
    free(wq);
    return 0;
}

/* ---- exported API ---- */
#define V(name, ver) __asm__(".symver " #name "_impl, " #name "@@" ver)

EXPORT struct ibv_device **ibv_get_device_list_impl(int *n)
{
    for (int i = 0; i < 2; i++) {
        devs[i].node_type = IBV_NODE_CA;
        devs[i].transport_type = IBV_TRANSPORT_IB;
        strcpy(devs[i].name, i ? "null1" : "null0");
        strcpy(devs[i].dev_name, i ? "uverbs1" : "uverbs0");
        devlist[i] = &devs[i];
    }
    devlist[2] = NULL;
    if (n) *n = 2;
    return devlist;
}
V(ibv_get_device_list, "IBVERBS_1.1");

EXPORT void ibv_free_device_list_impl(struct ibv_device **l) { (void)l; }
V(ibv_free_device_list, "IBVERBS_1.1");

EXPORT const char *ibv_get_device_name_impl(struct ibv_device *d) { return d->name; }
V(ibv_get_device_name, "IBVERBS_1.1");

EXPORT struct ibv_context *ibv_open_device_impl(struct ibv_device *dev)
{
    struct verbs_context *v = calloc(1, sizeof *v);
    if (!v) return NULL;
    v->sz = sizeof *v;
    v->context.abi_compat = __VERBS_ABI_IS_EXTENDED;
    v->context.device = dev;
    v->context.cmd_fd = -1;
    v->context.async_fd = -1;
    const char *m = getenv("NULLPROV_MINIMAL");
    int minimal = m && *m == '1';
    v->context.ops.post_send = np_post_send;
    v->context.ops.post_recv = np_post_recv;
    v->context.ops.post_srq_recv = minimal ? NULL : np_post_srq_recv;
    v->context.ops.poll_cq = np_poll_cq;
    v->context.ops.req_notify_cq = minimal ? NULL : np_req_notify;
    v->create_cq_ex = minimal ? NULL : np_create_cq_ex;
    v->create_qp_ex = minimal ? NULL : np_create_qp_ex;
    v->create_srq_ex = minimal ? NULL : np_create_srq_ex;
    v->create_wq = minimal ? NULL : np_create_wq;
    v->destroy_wq = minimal ? NULL : np_destroy_wq;
    return &v->context;
}
V(ibv_open_device, "IBVERBS_1.1");

/* The benchmark's baseline: a context the tracer never sees (not reached through ibv_open_device). */
EXPORT struct ibv_context *nullprov_open_untraced(struct ibv_device *dev) { return ibv_open_device_impl(dev); }

/* What mlx5dv_create_qp / mlx5dv_create_cq do: create without the verbs_context entries. */
EXPORT struct ibv_qp *nullprov_create_qp_ex_raw(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a)
{
    return np_create_qp_ex(ctx, a);
}
EXPORT struct ibv_cq_ex *nullprov_create_cq_ex_raw(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *a)
{
    return np_create_cq_ex(ctx, a);
}

EXPORT int ibv_close_device_impl(struct ibv_context *ctx)
{
    free((char *)ctx - offsetof(struct verbs_context, context));
    return 0;
}
V(ibv_close_device, "IBVERBS_1.1");

EXPORT int ibv_query_device_impl(struct ibv_context *ctx, struct ibv_device_attr *a)
{
    (void)ctx;
    memset(a, 0, sizeof *a);
    a->max_qp_wr = RING;
    a->max_cqe = RING;
    return 0;
}
V(ibv_query_device, "IBVERBS_1.1");

EXPORT struct ibv_pd *ibv_alloc_pd_impl(struct ibv_context *ctx)
{
    struct ibv_pd *pd = calloc(1, sizeof *pd);
    if (pd) pd->context = ctx;
    return pd;
}
V(ibv_alloc_pd, "IBVERBS_1.1");

EXPORT int ibv_dealloc_pd_impl(struct ibv_pd *pd)
{
    free(pd);
    return 0;
}
V(ibv_dealloc_pd, "IBVERBS_1.1");

static struct ibv_mr *mr_new(struct ibv_pd *pd, void *addr, size_t len)
{
    if (!pd) {
        errno = EINVAL;
        return NULL;
    }
    struct ibv_mr *mr = calloc(1, sizeof *mr);
    if (!mr) return NULL;
    mr->context = pd->context;
    mr->pd = pd;
    mr->addr = addr;
    mr->length = len;
    mr->lkey = next_key++;
    mr->rkey = next_key++;
    return mr;
}

/* For the stand-in libmlx5 (nullmlx5.c): an MR made without the exported registration functions. */
EXPORT struct ibv_mr *nullprov_mr_new(struct ibv_pd *pd, void *addr, size_t len) { return mr_new(pd, addr, len); }

EXPORT struct ibv_mr *ibv_reg_mr_impl(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    (void)access;
    return mr_new(pd, addr, len);
}
V(ibv_reg_mr, "IBVERBS_1.1");

EXPORT struct ibv_mr *ibv_reg_mr_iova_impl(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, int access)
{
    (void)iova, (void)access;
    return mr_new(pd, addr, len);
}
V(ibv_reg_mr_iova, "IBVERBS_1.7");

EXPORT struct ibv_mr *ibv_reg_mr_iova2_impl(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, unsigned access)
{
    (void)iova, (void)access;
    return mr_new(pd, addr, len);
}
V(ibv_reg_mr_iova2, "IBVERBS_1.8");

EXPORT struct ibv_mr *ibv_reg_dmabuf_mr_impl(struct ibv_pd *pd, uint64_t off, size_t len, uint64_t iova, int fd,
                                             int access)
{
    (void)iova, (void)access;
    if (fd < 0) {
        errno = EBADF;
        return NULL;
    }
    return mr_new(pd, (void *)(uintptr_t)off, len);
}
V(ibv_reg_dmabuf_mr, "IBVERBS_1.12");

EXPORT int ibv_rereg_mr_impl(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t len, int access)
{
    (void)access;
    if (flags & IBV_REREG_MR_CHANGE_PD) mr->pd = pd;
    if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
        mr->addr = addr;
        mr->length = len;
        mr->lkey = next_key++; /* keys change, as with real providers */
        mr->rkey = next_key++;
    }
    return 0;
}
V(ibv_rereg_mr, "IBVERBS_1.1");

EXPORT int ibv_dereg_mr_impl(struct ibv_mr *mr)
{
    free(mr);
    return 0;
}
V(ibv_dereg_mr, "IBVERBS_1.1");

EXPORT struct ibv_cq *ibv_create_cq_impl(struct ibv_context *ctx, int cqe, void *cq_ctx, struct ibv_comp_channel *ch,
                                         int vec)
{
    (void)ch, (void)vec;
    struct np_cq *c = np_cq_new(ctx, cqe);
    if (!c) return NULL;
    c->cq.cq_context = cq_ctx;
    return ibv_cq_ex_to_cq(&c->cq);
}
V(ibv_create_cq, "IBVERBS_1.1");

EXPORT int ibv_destroy_cq_impl(struct ibv_cq *cq)
{
    free(cq);
    return 0;
}
V(ibv_destroy_cq, "IBVERBS_1.1");

EXPORT struct ibv_srq *ibv_create_srq_impl(struct ibv_pd *pd, struct ibv_srq_init_attr *a)
{
    (void)a;
    return np_srq_new(pd->context, pd);
}
V(ibv_create_srq, "IBVERBS_1.1");

EXPORT int ibv_destroy_srq_impl(struct ibv_srq *srq)
{
    free(srq);
    return 0;
}
V(ibv_destroy_srq, "IBVERBS_1.1");

EXPORT struct ibv_qp *ibv_create_qp_impl(struct ibv_pd *pd, struct ibv_qp_init_attr *a) { return np_qp_new(pd, a, 0); }
V(ibv_create_qp, "IBVERBS_1.1");

EXPORT struct ibv_qp_ex *ibv_qp_to_qp_ex_impl(struct ibv_qp *qp) { return &((struct np_qp *)qp)->qpx; }
V(ibv_qp_to_qp_ex, "IBVERBS_1.6");

EXPORT int ibv_modify_qp_impl(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
    struct np_qp *q = (struct np_qp *)qp;
    if (mask & IBV_QP_STATE) {
        qp->state = attr->qp_state;
        /* like mlx5: the builders' completion entry changes with the state */
        if (q->qpx.wr_complete) q->qpx.wr_complete = attr->qp_state == IBV_QPS_RTS ? b_complete_rts : b_complete_init;
    }
    return 0;
}
V(ibv_modify_qp, "IBVERBS_1.1");

EXPORT int ibv_destroy_qp_impl(struct ibv_qp *qp)
{
    free(qp);
    return 0;
}
V(ibv_destroy_qp, "IBVERBS_1.1");

EXPORT const char *ibv_wc_status_str_impl(enum ibv_wc_status s)
{
    return s == IBV_WC_SUCCESS ? "success" : s == IBV_WC_LOC_PROT_ERR ? "local protection error" : "error";
}
V(ibv_wc_status_str, "IBVERBS_1.1");
