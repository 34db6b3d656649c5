/* The extended verbs API: verbs_context create_qp_ex / create_cq_ex entries, the ibv_qp_ex builders
 * (ibv_wr_start ... ibv_wr_complete) and the ibv_cq_ex iterator (ibv_start_poll / next_poll / end_poll).
 *
 * verbs_context members are read or written only when the context is extended (abi_compat), the running
 * library's struct is large enough to hold them (vctx->sz), and the original is non-NULL (a non-NULL entry
 * tells callers the operation is supported).
 *
 * Builders: the provider's errors surface at wr_complete, and wr_abort drops everything since wr_start, so
 * the WRs built in between are kept in the QP record and emitted at wr_complete with its verdict
 * (hdr.aux = 1 marks them as coming from the builders). mlx5 swaps wr_complete when the QP changes state,
 * so vb_patch_qp_ex runs again after each ibv_modify_qp and keeps whatever new original it finds.
 */
#include <errno.h>
#include <string.h>

#include "preload/dl.h"
#include "preload/verbs_int.h"

/* ---- verbs_context entries ---- */

static void **vctx_slot(struct vb_context *ctx, unsigned off)
{
    if (ctx->abi_compat != VB_ABI_EXTENDED) return NULL;
    size_t sz = *(size_t *)((char *)ctx - (VB_VCTX_CTX_OFF - VB_VCTX_SZ_OFF));
    if (sz < VB_VCTX_SIZE - off) return NULL;
    return (void **)((char *)ctx - (VB_VCTX_CTX_OFF - off));
}

/* The wrappers of the context's entries follow the skeleton of preload/dl.h, with rs_fn the provider's
 * original kept in the context record instead of a resolved symbol: RS_WRAP_ENTER (rs_rec: the verbs family
 * is on and this thread took the tracer's guard, held across the call so that a provider going through
 * ibv_create_cq & co. records once), RS_WRAP_CALL, tables, event if rs_rec, RS_WRAP_LEAVE. */
#define VB_ENTER_EX() RS_WRAP_ENTER(RS_FAM_verbs, rs_guard)

typedef struct vb_cq_ex *(*create_cq_ex_fn)(struct vb_context *, struct vb_cq_init_attr_ex *);
typedef struct vb_qp *(*create_qp_ex_fn)(struct vb_context *, struct vb_qp_init_attr_ex *);

static struct vb_cq_ex *w_create_cq_ex(struct vb_context *ctx, struct vb_cq_init_attr_ex *attr)
{
    struct vb_ctx_rec *c = vb_ctx_find(ctx);
    if (!c || !c->create_cq_ex) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    create_cq_ex_fn rs_fn = (create_cq_ex_fn)c->create_cq_ex;
    VB_ENTER_EX();
    RS_WRAP_CALL((ctx, attr));
    vb_cq_created(rs_rec, ctx, rs_ret ? &rs_ret->cq_base : NULL, attr ? (int)attr->cqe : 0, 1,
                  attr ? attr->wc_flags : 0, rs_t0, rs_ret ? 0 : rs_errno);
    RS_WRAP_LEAVE(rs_guard);
}

static struct vb_qp *w_create_qp_ex(struct vb_context *ctx, struct vb_qp_init_attr_ex *attr)
{
    struct vb_ctx_rec *c = vb_ctx_find(ctx);
    if (!c || !c->create_qp_ex) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    create_qp_ex_fn rs_fn = (create_qp_ex_fn)c->create_qp_ex;
    VB_ENTER_EX();
    RS_WRAP_CALL((ctx, attr));
    int ex = rs_ret && attr && (attr->comp_mask & VB_QP_INIT_ATTR_SEND_OPS_FLAGS) && attr->send_ops_flags;
    vb_qp_created(rs_rec, ctx, rs_ret, (const struct vb_qp_init_attr *)attr, ex ? 2 : 1, rs_t0, rs_ret ? 0 : rs_errno);
    RS_WRAP_LEAVE(rs_guard);
}

/* ---- SRQs and WQs ---- */

typedef struct vb_srq *(*create_srq_ex_fn)(struct vb_context *, struct vb_srq_init_attr_ex *);
typedef struct vb_wq *(*create_wq_fn)(struct vb_context *, struct vb_wq_init_attr *);
typedef int (*destroy_wq_fn)(struct vb_wq *);

void vb_srq_created(int rec, struct vb_context *ctx, struct vb_pd *pd, struct vb_srq *srq, uint32_t max_wr, int ext,
                    uint64_t t0, int err)
{
    uint32_t id = srq ? vb_srq_add(srq, 0) : 0;
    if (!rec) return;
    struct rs_ev_IBV_CREATE_SRQ ev;
    RS_EV_INIT(&ev, IBV_CREATE_SRQ, t0);
    ev.h.aux = srq ? 0 : (uint32_t)err;
    ev.srq = (uint64_t)(uintptr_t)srq;
    ev.ctx = (uint64_t)(uintptr_t)(srq ? srq->context : ctx);
    ev.pd = (uint64_t)(uintptr_t)(srq ? srq->pd : pd);
    ev.id = id;
    ev.max_wr = max_wr;
    ev.ext = (uint32_t)ext;
    ev.pad = 0;
    rs_emit(&ev.h);
}

static struct vb_srq *w_create_srq_ex(struct vb_context *ctx, struct vb_srq_init_attr_ex *attr)
{
    struct vb_ctx_rec *c = vb_ctx_find(ctx);
    if (!c || !c->create_srq_ex) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    create_srq_ex_fn rs_fn = (create_srq_ex_fn)c->create_srq_ex;
    VB_ENTER_EX();
    RS_WRAP_CALL((ctx, attr));
    vb_srq_created(rs_rec, ctx, attr && (attr->comp_mask & VB_SRQ_INIT_ATTR_PD) ? attr->pd : NULL, rs_ret,
                   attr ? attr->max_wr : 0, 1, rs_t0, rs_errno);
    RS_WRAP_LEAVE(rs_guard);
}

static struct vb_wq *w_create_wq(struct vb_context *ctx, struct vb_wq_init_attr *attr)
{
    struct vb_ctx_rec *c = vb_ctx_find(ctx);
    if (!c || !c->create_wq) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    create_wq_fn rs_fn = (create_wq_fn)c->create_wq;
    VB_ENTER_EX();
    RS_WRAP_CALL((ctx, attr));
    struct vb_wq *wq = rs_ret;
    if (wq && wq->post_recv && wq->post_recv != vb_w_wq_post_recv && vb_wq_add(wq, c, wq->post_recv))
        __atomic_store_n(&wq->post_recv, vb_w_wq_post_recv, __ATOMIC_RELEASE);
    if (rs_rec) {
        struct rs_ev_IBV_CREATE_WQ ev;
        RS_EV_INIT(&ev, IBV_CREATE_WQ, rs_t0);
        ev.h.aux = wq ? 0 : (uint32_t)rs_errno;
        ev.wq = (uint64_t)(uintptr_t)wq;
        ev.ctx = (uint64_t)(uintptr_t)ctx;
        ev.pd = (uint64_t)(uintptr_t)(wq ? wq->pd : attr ? attr->pd : NULL);
        ev.cq = (uint64_t)(uintptr_t)(wq ? wq->cq : attr ? attr->cq : NULL);
        ev.wq_num = wq ? wq->wq_num : 0;
        ev.wq_type = wq ? wq->wq_type : attr ? attr->wq_type : 0;
        ev.max_wr = attr ? attr->max_wr : 0;
        ev.pad = 0;
        rs_emit(&ev.h);
    }
    RS_WRAP_LEAVE(rs_guard);
}

static int w_destroy_wq(struct vb_wq *wq)
{
    struct vb_ctx_rec *c = wq ? vb_ctx_find(wq->context) : NULL;
    if (!c || !c->destroy_wq) return EOPNOTSUPP;
    destroy_wq_fn rs_fn = (destroy_wq_fn)c->destroy_wq;
    VB_ENTER_EX();
    uint32_t wqn = wq->wq_num;
    /* The WQ's memory goes with the call: forget it first, give it back its own post_recv if it stays. */
    struct vb_wq_rec *r = vb_wq_find(wq);
    vb_wq_post_recv_fn orig = r ? r->post_recv : NULL;
    if (r) vb_wq_del(wq);
    RS_WRAP_CALL((wq));
    if (rs_ret && orig && !vb_wq_add(wq, c, orig)) wq->post_recv = orig;
    if (rs_rec) {
        struct rs_ev_IBV_DESTROY_WQ ev;
        RS_EV_INIT(&ev, IBV_DESTROY_WQ, rs_t0);
        ev.wq = (uint64_t)(uintptr_t)wq;
        ev.wq_num = wqn;
        ev.ret = rs_ret;
        rs_emit(&ev.h);
    }
    RS_WRAP_LEAVE(rs_guard);
}

/* vctx entries wrapped: offset, where the original is kept, the wrapper */
#define VB_VCTX_ENTRIES(X)                                   \
    X(VB_VCTX_CREATE_CQ_EX, create_cq_ex, w_create_cq_ex)    \
    X(VB_VCTX_CREATE_QP_EX, create_qp_ex, w_create_qp_ex)    \
    X(VB_VCTX_CREATE_SRQ_EX, create_srq_ex, w_create_srq_ex) \
    X(VB_VCTX_CREATE_WQ, create_wq, w_create_wq)             \
    X(VB_VCTX_DESTROY_WQ, destroy_wq, w_destroy_wq)

void vb_patch_vctx(struct vb_ctx_rec *c)
{
#define VPATCH(off, f, w)                  \
    {                                      \
        void **s = vctx_slot(c->ctx, off); \
        if (s && *s && *s != (void *)w) {  \
            c->f = *s;                     \
            *s = (void *)w;                \
        }                                  \
    }
    VB_VCTX_ENTRIES(VPATCH)
#undef VPATCH
}

void vb_unpatch_vctx(struct vb_ctx_rec *c)
{
#define VUNPATCH(off, f, w)                          \
    {                                                \
        void **s = vctx_slot(c->ctx, off);           \
        if (s && *s == (void *)w && c->f) *s = c->f; \
    }
    VB_VCTX_ENTRIES(VUNPATCH)
#undef VUNPATCH
}

/* ---- ibv_qp_ex builders ---- */

static inline struct vb_qp_rec *qrec(struct vb_qp_ex *qx) { return vb_qp_find(&qx->qp_base); }

/* Close the WR being built (if any) into the pending list; emit early when the list is full. */
static void push_cur(struct vb_qp_rec *r)
{
    if (!r->cur_valid) return;
    r->cur_valid = 0;
    if (r->npending == VB_WR_PENDING) {
        /* more WRs than we buffer between wr_start and wr_complete: emit the oldest now, verdict unknown (0) */
        if (rs_on(RS_FAM_verbs)) rs_emit(&r->pending[0].h);
        memmove(&r->pending[0], &r->pending[1], sizeof r->pending[0] * (VB_WR_PENDING - 1));
        r->npending--;
    }
    r->pending[r->npending++] = r->cur;
}

static void begin_wr(struct vb_qp_rec *r, struct vb_qp_ex *qx, uint32_t op, uint64_t raddr, uint32_t rkey, uint32_t imm)
{
    push_cur(r);
    struct rs_ev_IBV_POST_SEND *e = &r->cur;
    memset(e, 0, sizeof *e);
    RS_EV_INIT(e, IBV_POST_SEND, 0);
    e->h.aux = 1;
    e->wr_id = qx->wr_id;
    e->send_flags = qx->wr_flags;
    e->qp_num = qx->qp_base.qp_num;
    e->opcode = op;
    e->remote_addr = raddr;
    e->rkey = rkey;
    e->imm = imm;
    e->mem = RS_MEM_UNKNOWN;
    r->cur_valid = 1;
}

#define REC_OR_FORWARD(fn, ...)            \
    struct vb_qp_rec *r = qrec(qx);        \
    if (RS_UNLIKELY(!r || !r->fn)) return; \
    r->fn(qx, ##__VA_ARGS__)

static void w_wr_start(struct vb_qp_ex *qx)
{
    struct vb_qp_rec *r = qrec(qx);
    if (RS_UNLIKELY(!r || !r->wr_start)) return;
    r->cur_valid = 0;
    r->npending = 0;
    r->wr_start(qx);
}

static int w_wr_complete(struct vb_qp_ex *qx)
{
    struct vb_qp_rec *r = qrec(qx);
    if (RS_UNLIKELY(!r || !r->wr_complete)) return EINVAL;
    push_cur(r);
    uint64_t t0 = rs_now();
    int ret = r->wr_complete(qx);
    int saved = errno;
    if (rs_on(RS_FAM_verbs))
        for (int i = 0; i < r->npending; i++) {
            r->pending[i].h.ts = t0;
            r->pending[i].ret = ret;
            rs_emit(&r->pending[i].h);
        }
    r->npending = 0;
    errno = saved;
    return ret;
}

static void w_wr_abort(struct vb_qp_ex *qx)
{
    struct vb_qp_rec *r = qrec(qx);
    if (RS_UNLIKELY(!r || !r->wr_abort)) return;
    r->cur_valid = 0;
    r->npending = 0;
    r->wr_abort(qx);
}

static void w_wr_send(struct vb_qp_ex *qx)
{
    REC_OR_FORWARD(wr_send);
    begin_wr(r, qx, VB_WR_SEND, 0, 0, 0);
}
static void w_wr_send_imm(struct vb_qp_ex *qx, uint32_t imm)
{
    REC_OR_FORWARD(wr_send_imm, imm);
    begin_wr(r, qx, VB_WR_SEND_WITH_IMM, 0, 0, __builtin_bswap32(imm));
}
static void w_wr_send_inv(struct vb_qp_ex *qx, uint32_t inv)
{
    REC_OR_FORWARD(wr_send_inv, inv);
    begin_wr(r, qx, VB_WR_SEND_WITH_INV, 0, 0, inv);
}
static void w_wr_send_tso(struct vb_qp_ex *qx, void *hdr, uint16_t hsz, uint16_t mss)
{
    REC_OR_FORWARD(wr_send_tso, hdr, hsz, mss);
    begin_wr(r, qx, VB_WR_TSO, 0, 0, 0);
}
static void w_wr_rdma_write(struct vb_qp_ex *qx, uint32_t rkey, uint64_t raddr)
{
    REC_OR_FORWARD(wr_rdma_write, rkey, raddr);
    begin_wr(r, qx, VB_WR_RDMA_WRITE, raddr, rkey, 0);
}
static void w_wr_rdma_write_imm(struct vb_qp_ex *qx, uint32_t rkey, uint64_t raddr, uint32_t imm)
{
    REC_OR_FORWARD(wr_rdma_write_imm, rkey, raddr, imm);
    begin_wr(r, qx, VB_WR_RDMA_WRITE_WITH_IMM, raddr, rkey, __builtin_bswap32(imm));
}
static void w_wr_rdma_read(struct vb_qp_ex *qx, uint32_t rkey, uint64_t raddr)
{
    REC_OR_FORWARD(wr_rdma_read, rkey, raddr);
    begin_wr(r, qx, VB_WR_RDMA_READ, raddr, rkey, 0);
}
static void w_wr_atomic_cmp_swp(struct vb_qp_ex *qx, uint32_t rkey, uint64_t raddr, uint64_t cmp, uint64_t swp)
{
    REC_OR_FORWARD(wr_atomic_cmp_swp, rkey, raddr, cmp, swp);
    begin_wr(r, qx, VB_WR_ATOMIC_CMP_AND_SWP, raddr, rkey, 0);
    r->cur.bytes = 8;
}
static void w_wr_atomic_fetch_add(struct vb_qp_ex *qx, uint32_t rkey, uint64_t raddr, uint64_t add)
{
    REC_OR_FORWARD(wr_atomic_fetch_add, rkey, raddr, add);
    begin_wr(r, qx, VB_WR_ATOMIC_FETCH_AND_ADD, raddr, rkey, 0);
    r->cur.bytes = 8;
}
static void w_wr_local_inv(struct vb_qp_ex *qx, uint32_t inv)
{
    REC_OR_FORWARD(wr_local_inv, inv);
    begin_wr(r, qx, VB_WR_LOCAL_INV, 0, 0, inv);
}
static void w_wr_bind_mw(struct vb_qp_ex *qx, void *mw, uint32_t rkey, const void *info)
{
    REC_OR_FORWARD(wr_bind_mw, mw, rkey, info);
    begin_wr(r, qx, VB_WR_BIND_MW, 0, rkey, 0);
}

static void set_data(struct vb_qp_rec *r, uint64_t addr, uint64_t bytes, uint32_t nsge, uint8_t kind)
{
    if (!r->cur_valid) return; /* data setter without an opcode builder: the provider will complain */
    r->cur.local_addr = addr;
    r->cur.bytes = bytes;
    r->cur.num_sge = nsge;
    r->cur.mem = kind;
}

static void w_wr_set_sge(struct vb_qp_ex *qx, uint32_t lkey, uint64_t addr, uint32_t len)
{
    REC_OR_FORWARD(wr_set_sge, lkey, addr, len);
    set_data(r, addr, len, 1, vb_mr_kind(r->c, lkey));
}
static void w_wr_set_sge_list(struct vb_qp_ex *qx, size_t n, const struct vb_sge *sg)
{
    REC_OR_FORWARD(wr_set_sge_list, n, sg);
    uint64_t bytes = 0;
    uint8_t kind = sg && n ? vb_sge_kind(r->c, sg, (int)n, &bytes) : RS_MEM_UNKNOWN;
    set_data(r, sg && n ? sg[0].addr : 0, bytes, (uint32_t)n, kind);
}
static void w_wr_set_inline_data(struct vb_qp_ex *qx, void *addr, size_t len)
{
    REC_OR_FORWARD(wr_set_inline_data, addr, len);
    set_data(r, (uint64_t)(uintptr_t)addr, len, 1, RS_MEM_HOST);
    if (r->cur_valid) r->cur.send_flags |= VB_SEND_INLINE;
}
static void w_wr_set_inline_data_list(struct vb_qp_ex *qx, size_t n, const void *list)
{
    REC_OR_FORWARD(wr_set_inline_data_list, n, list);
    const struct vb_data_buf *b = list;
    uint64_t bytes = 0;
    for (size_t i = 0; b && i < n; i++) bytes += b[i].length;
    set_data(r, b && n ? (uint64_t)(uintptr_t)b[0].addr : 0, bytes, (uint32_t)n, RS_MEM_HOST);
    if (r->cur_valid) r->cur.send_flags |= VB_SEND_INLINE;
}

/* clang-format off */
#define VB_WR_FNS(X)                                                                                                 \
    X(wr_atomic_cmp_swp)                                                                                             \
    X(wr_atomic_fetch_add)                                                                                           \
    X(wr_bind_mw)                                                                                                    \
    X(wr_local_inv)                                                                                                  \
    X(wr_rdma_read) X(wr_rdma_write) X(wr_rdma_write_imm) X(wr_send) X(wr_send_imm) X(wr_send_inv) X(wr_send_tso)    \
        X(wr_set_inline_data) X(wr_set_inline_data_list) X(wr_set_sge) X(wr_set_sge_list) X(wr_start) X(wr_complete) \
            X(wr_abort)
/* clang-format on */

void vb_patch_qp_ex(struct vb_qp_rec *r)
{
    struct vb_qp_ex *qx = (struct vb_qp_ex *)r->qp;
    /* A builder the provider (re)installed since last time becomes the new original. */
#define PATCH(f)                                           \
    if (qx->f && qx->f != w_##f) {                         \
        r->f = qx->f;                                      \
        __atomic_store_n(&qx->f, w_##f, __ATOMIC_RELEASE); \
    }
    VB_WR_FNS(PATCH)
#undef PATCH
    r->ex = 1;
}

/* ---- ibv_cq_ex iterator ---- */

static void emit_cq_ex(struct vb_cq_rec *q, struct vb_cq_ex *cq)
{
    struct rs_ev_IBV_WC ev;
    RS_EV_INIT(&ev, IBV_WC, q->batch_ts);
    ev.h.aux = q->batch_aux;
    ev.cq = (uint64_t)(uintptr_t)cq;
    ev.wr_id = cq->wr_id;
    ev.status = cq->status;
    ev.opcode = cq->read_opcode ? cq->read_opcode(cq) : 0;
    ev.vendor_err = cq->status && cq->read_vendor_err ? cq->read_vendor_err(cq) : 0;
    ev.bytes = (q->wc_flags & VB_WC_EX_WITH_BYTE_LEN) && cq->read_byte_len ? cq->read_byte_len(cq) : 0;
    /* without IBV_WC_EX_WITH_QP_NUM, a CQ serving a single QP still tells which QP completed */
    ev.qp_num = (q->wc_flags & VB_WC_EX_WITH_QP_NUM) && cq->read_qp_num ? cq->read_qp_num(cq)
                : q->qp_single != UINT32_MAX                            ? q->qp_single
                                                                        : 0;
    ev.src_qp = (q->wc_flags & VB_WC_EX_WITH_SRC_QP) && cq->read_src_qp ? cq->read_src_qp(cq) : 0;
    ev.wc_flags = cq->read_wc_flags ? cq->read_wc_flags(cq) : 0;
    ev.imm = (q->wc_flags & VB_WC_EX_WITH_IMM) && (ev.wc_flags & VB_WC_WITH_IMM) && cq->read_imm_data
                 ? __builtin_bswap32(cq->read_imm_data(cq))
                 : 0;
    rs_emit(&ev.h);
}

static int w_start_poll(struct vb_cq_ex *cq, void *attr)
{
    struct vb_cq_rec *q = vb_cq_find(&cq->cq_base);
    if (RS_UNLIKELY(!q || !q->start_poll)) return EINVAL;
    int ret = q->start_poll(cq, attr);
    if (!rs_on(RS_FAM_verbs)) return ret;
    if (ret == ENOENT) {
        vb_count_empty(q);
        return ret;
    }
    if (ret) return ret;
    int saved = errno;
    q->batch_ts = rs_now();
    q->batch_aux = vb_poll_found(q, q->batch_ts);
    emit_cq_ex(q, cq);
    errno = saved;
    return 0;
}

static int w_next_poll(struct vb_cq_ex *cq)
{
    struct vb_cq_rec *q = vb_cq_find(&cq->cq_base);
    if (RS_UNLIKELY(!q || !q->next_poll)) return EINVAL;
    int ret = q->next_poll(cq);
    if (ret || !rs_on(RS_FAM_verbs)) return ret;
    int saved = errno;
    emit_cq_ex(q, cq);
    errno = saved;
    return 0;
}

static void w_end_poll(struct vb_cq_ex *cq)
{
    struct vb_cq_rec *q = vb_cq_find(&cq->cq_base);
    if (RS_UNLIKELY(!q || !q->end_poll)) return;
    q->end_poll(cq);
}

void vb_patch_cq_ex(struct vb_cq_rec *q)
{
    struct vb_cq_ex *cq = (struct vb_cq_ex *)q->cq;
#define PATCH(f)                                           \
    if (cq->f && cq->f != w_##f) {                         \
        q->f = cq->f;                                      \
        __atomic_store_n(&cq->f, w_##f, __ATOMIC_RELEASE); \
    }
    PATCH(start_poll)
    PATCH(next_poll)
    PATCH(end_poll)
#undef PATCH
    q->ex = 1;
}
