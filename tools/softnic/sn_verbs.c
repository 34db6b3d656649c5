/* softnic: protection domains, memory regions, completion queues (plain and extended), completion
 * channels, shared receive queues. */
#include "sn.h"
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---------------- PD ---------------- */
SN_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx)
{
    struct sn_pd *p = calloc(1, sizeof *p);
    if (!p) {
        errno = ENOMEM;
        return NULL;
    }
    p->pd.context = ctx;
    return &p->pd;
}

SN_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
    if (__atomic_load_n(&((struct sn_pd *)pd)->users, __ATOMIC_RELAXED) > 0) return EBUSY;
    free(pd);
    return 0;
}

/* ---------------- MR ----------------
 * lkey == rkey == slot << 8 | generation: a stale key (after dereg) never matches a new MR. */
static uint32_t mr_gen;

static struct ibv_mr *mr_reg(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, unsigned access)
{
    struct sn_ctx *c = sn_ctx_of(pd->context);
    const unsigned known = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
                           IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED |
                           IBV_ACCESS_ON_DEMAND | IBV_ACCESS_HUGETLB | IBV_ACCESS_OPTIONAL_RANGE;
    if ((access & ~known) ||
        ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(access & IBV_ACCESS_LOCAL_WRITE)) ||
        (!addr && len) || len > (1ull << 40)) {
        errno = EINVAL;
        return NULL;
    }
    struct sn_mr *m = calloc(1, sizeof *m);
    if (!m) {
        errno = ENOMEM;
        return NULL;
    }
    pthread_mutex_lock(&c->lock);
    uint32_t slot = 1;
    while (slot < c->nmr && c->mrs[slot]) slot++;
    if (slot >= c->capmr) {
        uint32_t nc = c->capmr ? c->capmr * 2 : 64;
        struct sn_mr **n = realloc(c->mrs, nc * sizeof *n);
        if (!n || nc > (1u << 24)) {
            pthread_mutex_unlock(&c->lock);
            free(m);
            errno = ENOMEM;
            return NULL;
        }
        memset(n + c->capmr, 0, (nc - c->capmr) * sizeof *n);
        c->mrs = n;
        c->capmr = nc;
    }
    if (slot >= c->nmr) c->nmr = slot + 1;
    c->mrs[slot] = m;
    m->mr.context = pd->context;
    m->mr.pd = pd;
    m->mr.addr = addr;
    m->mr.length = len;
    m->mr.handle = slot;
    m->mr.lkey = m->mr.rkey = slot << 8 | (++mr_gen & 0xff);
    m->iova = iova;
    m->access = access;
    m->live = 1;
    sn_pd_use(pd, 1);
    pthread_mutex_unlock(&c->lock);
    return &m->mr;
}

#undef ibv_reg_mr
SN_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t len, int access)
{
    return mr_reg(pd, addr, len, (uintptr_t)addr, (unsigned)access);
}

#undef ibv_reg_mr_iova
SN_EXPORT struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, int access)
{
    return mr_reg(pd, addr, len, iova, (unsigned)access);
}

SN_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t len, uint64_t iova, unsigned int access)
{
    return mr_reg(pd, addr, len, iova, access);
}

/* No device memory behind a software NIC: say "not supported" the way a kernel without dma-buf does
 * (NCCL probes this with fd -1 and then uses host buffers). */
SN_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t len, uint64_t iova, int fd,
                                           int access)
{
    (void)pd, (void)offset, (void)len, (void)iova, (void)fd, (void)access;
    errno = EOPNOTSUPP;
    return NULL;
}

SN_EXPORT int ibv_rereg_mr(struct ibv_mr *mr, int flags, struct ibv_pd *pd, void *addr, size_t len, int access)
{
    struct sn_ctx *c = sn_ctx_of(mr->context);
    struct sn_mr *m = (struct sn_mr *)mr;
    pthread_mutex_lock(&c->lock);
    if (flags & IBV_REREG_MR_CHANGE_PD) {
        sn_pd_use(pd, 1);
        sn_pd_use(m->mr.pd, -1);
        m->mr.pd = pd;
    }
    if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
        m->mr.addr = addr;
        m->mr.length = len;
        m->iova = (uintptr_t)addr;
    }
    if (flags & IBV_REREG_MR_CHANGE_ACCESS) m->access = (unsigned)access;
    pthread_mutex_unlock(&c->lock);
    return 0;
}

SN_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
    if (!mr) return EINVAL;
    struct sn_ctx *c = sn_ctx_of(mr->context);
    pthread_mutex_lock(&c->lock);
    uint32_t slot = mr->handle;
    if (slot < c->nmr && c->mrs[slot] == (struct sn_mr *)mr) c->mrs[slot] = NULL;
    pthread_mutex_unlock(&c->lock);
    sn_pd_use(mr->pd, -1);
    free(mr);
    return 0;
}

struct sn_mr *sn_mr_find(struct sn_ctx *c, uint32_t key, int remote)
{
    (void)remote;
    uint32_t slot = key >> 8;
    if (slot == 0 || slot >= c->nmr || !c->mrs[slot]) return NULL;
    struct sn_mr *m = c->mrs[slot];
    return m->live && m->mr.lkey == key ? m : NULL;
}

void *sn_mr_ptr(struct sn_mr *m, uint64_t addr, uint64_t len)
{
    if (addr < m->iova || len > m->mr.length || addr - m->iova > m->mr.length - len) return NULL;
    return (char *)m->mr.addr + (addr - m->iova);
}

/* ---------------- completion channels ---------------- */
struct sn_chan {
    struct ibv_comp_channel ch;
    int wfd; /* the CQ writes its own pointer here when an armed CQ gets a completion */
};

SN_EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *ctx)
{
    struct sn_chan *ch = calloc(1, sizeof *ch);
    int p[2];
    if (!ch || pipe2(p, O_CLOEXEC)) {
        free(ch);
        return NULL;
    }
    fcntl(p[1], F_SETFL, O_NONBLOCK);
    ch->ch.context = ctx;
    ch->ch.fd = p[0];
    ch->wfd = p[1];
    return &ch->ch;
}

SN_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
    struct sn_chan *ch = (struct sn_chan *)channel;
    if (ch->ch.refcnt) return EBUSY;
    close(ch->ch.fd);
    close(ch->wfd);
    free(ch);
    return 0;
}

SN_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
    struct ibv_cq *p;
    for (;;) {
        ssize_t n = read(channel->fd, &p, sizeof p);
        if (n == (ssize_t)sizeof p) break;
        if (n < 0 && errno == EINTR) continue;
        return -1;
    }
    *cq = p;
    *cq_context = p->cq_context;
    return 0;
}

SN_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int n)
{
    pthread_mutex_lock(&cq->mutex);
    cq->comp_events_completed += n;
    pthread_mutex_unlock(&cq->mutex);
}

/* ---------------- CQ ---------------- */
static void cq_fire(struct sn_cq *cq) /* cq->lock held */
{
    cq->armed = 0;
    struct sn_chan *ch = (struct sn_chan *)cq->ex.channel;
    struct ibv_cq *p = (struct ibv_cq *)&cq->ex;
    if (ch && write(ch->wfd, &p, sizeof p) < 0) {
        /* pipe full: thousands of unread events; the application will find the CQ non-empty */
    }
}

int sn_cq_push(struct sn_cq *cq, const struct ibv_wc *wc)
{
    pthread_mutex_lock(&cq->lock);
    if (cq->count == cq->cap) { /* grow rather than overflow: a test device should not lose CQEs */
        uint32_t nc = cq->cap * 2;
        struct sn_cqe *n = malloc(nc * sizeof *n);
        if (!n) {
            pthread_mutex_unlock(&cq->lock);
            return -1;
        }
        for (uint32_t i = 0; i < cq->count; i++) n[i] = cq->ring[(cq->head + i) % cq->cap];
        free(cq->ring);
        cq->ring = n;
        cq->cap = nc;
        cq->head = 0;
    }
    struct sn_cqe *e = &cq->ring[(cq->head + cq->count) % cq->cap];
    e->wc = *wc;
    e->ts = sn_now();
    cq->count++;
    if (cq->armed && (!cq->solicited_only || (wc->opcode & IBV_WC_RECV))) cq_fire(cq);
    pthread_mutex_unlock(&cq->lock);
    return 0;
}

int sn_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
    struct sn_cq *cq = (struct sn_cq *)ibcq;
    int got = 0;
    if (n <= 0) return 0;
    pthread_mutex_lock(&cq->lock);
    while (got < n && cq->count) {
        wc[got++] = cq->ring[cq->head].wc;
        cq->head = (cq->head + 1) % cq->cap;
        cq->count--;
    }
    pthread_mutex_unlock(&cq->lock);
    if (!got) /* applications spin on empty CQs: give the progress threads the CPU (2-core hosts) */
        sched_yield();
    return got;
}

/* Arming a CQ that already holds completions fires at once: a spurious event is harmless, a missed
 * one hangs programs that arm, poll a bounded number, then sleep on the channel. */
int sn_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
    struct sn_cq *cq = (struct sn_cq *)ibcq;
    pthread_mutex_lock(&cq->lock);
    cq->armed = 1;
    cq->solicited_only = solicited_only;
    if (cq->count) cq_fire(cq);
    pthread_mutex_unlock(&cq->lock);
    return 0;
}

/* extended CQ: start_poll takes the lock and makes the head current; end_poll drops it */
static int cqx_start(struct ibv_cq_ex *x, struct ibv_poll_cq_attr *attr)
{
    (void)attr;
    struct sn_cq *cq = (struct sn_cq *)x;
    pthread_mutex_lock(&cq->lock);
    if (!cq->count) {
        pthread_mutex_unlock(&cq->lock);
        sched_yield();
        return ENOENT;
    }
    cq->cur = cq->ring[cq->head];
    cq->head = (cq->head + 1) % cq->cap;
    cq->count--;
    x->wr_id = cq->cur.wc.wr_id;
    x->status = cq->cur.wc.status;
    return 0;
}

static int cqx_next(struct ibv_cq_ex *x)
{
    struct sn_cq *cq = (struct sn_cq *)x;
    if (!cq->count) return ENOENT;
    cq->cur = cq->ring[cq->head];
    cq->head = (cq->head + 1) % cq->cap;
    cq->count--;
    x->wr_id = cq->cur.wc.wr_id;
    x->status = cq->cur.wc.status;
    return 0;
}

static void cqx_end(struct ibv_cq_ex *x) { pthread_mutex_unlock(&((struct sn_cq *)x)->lock); }

#define CUR(x) (((struct sn_cq *)(x))->cur)
static enum ibv_wc_opcode cqx_opcode(struct ibv_cq_ex *x) { return CUR(x).wc.opcode; }
static uint32_t cqx_vendor_err(struct ibv_cq_ex *x) { return CUR(x).wc.vendor_err; }
static uint32_t cqx_byte_len(struct ibv_cq_ex *x) { return CUR(x).wc.byte_len; }
static __be32 cqx_imm(struct ibv_cq_ex *x) { return CUR(x).wc.imm_data; }
static uint32_t cqx_qp_num(struct ibv_cq_ex *x) { return CUR(x).wc.qp_num; }
static uint32_t cqx_src_qp(struct ibv_cq_ex *x) { return CUR(x).wc.src_qp; }
static unsigned int cqx_wc_flags(struct ibv_cq_ex *x) { return CUR(x).wc.wc_flags; }
static uint32_t cqx_slid(struct ibv_cq_ex *x) { return CUR(x).wc.slid; }
static uint8_t cqx_sl(struct ibv_cq_ex *x) { return CUR(x).wc.sl; }
static uint8_t cqx_dlid_path_bits(struct ibv_cq_ex *x) { return CUR(x).wc.dlid_path_bits; }
static uint64_t cqx_ts(struct ibv_cq_ex *x) { return CUR(x).ts; }
static uint16_t cqx_cvlan(struct ibv_cq_ex *x)
{
    (void)x;
    return 0;
}
static uint32_t cqx_flow_tag(struct ibv_cq_ex *x)
{
    (void)x;
    return 0;
}
static void cqx_tm_info(struct ibv_cq_ex *x, struct ibv_wc_tm_info *t)
{
    (void)x;
    memset(t, 0, sizeof *t);
}
static uint64_t cqx_wallclock(struct ibv_cq_ex *x)
{
    struct timespec r;
    clock_gettime(CLOCK_REALTIME, &r);
    uint64_t now_rt = (uint64_t)r.tv_sec * 1000000000ull + (uint64_t)r.tv_nsec;
    return now_rt - (sn_now() - CUR(x).ts);
}

static struct sn_cq *cq_new(struct ibv_context *ctx, int cqe, void *cq_context, struct ibv_comp_channel *channel)
{
    if (cqe <= 0 || cqe > SN_MAX_CQE) {
        errno = EINVAL;
        return NULL;
    }
    struct sn_cq *cq = calloc(1, sizeof *cq);
    if (!cq) {
        errno = ENOMEM;
        return NULL;
    }
    cq->cap = (uint32_t)cqe < 16 ? 16 : (uint32_t)cqe;
    cq->ring = calloc(cq->cap, sizeof *cq->ring);
    if (!cq->ring) {
        free(cq);
        errno = ENOMEM;
        return NULL;
    }
    cq->ctx = sn_ctx_of(ctx);
    pthread_mutex_init(&cq->lock, NULL);
    struct ibv_cq_ex *x = &cq->ex;
    x->context = ctx;
    x->channel = channel;
    x->cq_context = cq_context;
    x->cqe = cqe;
    pthread_mutex_init(&x->mutex, NULL);
    pthread_cond_init(&x->cond, NULL);
    if (channel) __atomic_add_fetch(&channel->refcnt, 1, __ATOMIC_RELAXED);
    x->start_poll = cqx_start;
    x->next_poll = cqx_next;
    x->end_poll = cqx_end;
    x->read_opcode = cqx_opcode;
    x->read_vendor_err = cqx_vendor_err;
    x->read_byte_len = cqx_byte_len;
    x->read_imm_data = cqx_imm;
    x->read_qp_num = cqx_qp_num;
    x->read_src_qp = cqx_src_qp;
    x->read_wc_flags = cqx_wc_flags;
    x->read_slid = cqx_slid;
    x->read_sl = cqx_sl;
    x->read_dlid_path_bits = cqx_dlid_path_bits;
    x->read_completion_ts = cqx_ts;
    x->read_cvlan = cqx_cvlan;
    x->read_flow_tag = cqx_flow_tag;
    x->read_tm_info = cqx_tm_info;
    x->read_completion_wallclock_ns = cqx_wallclock;
    return cq;
}

SN_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
                                       struct ibv_comp_channel *channel, int comp_vector)
{
    (void)comp_vector;
    struct sn_cq *cq = cq_new(ctx, cqe, cq_context, channel);
    return cq ? (struct ibv_cq *)&cq->ex : NULL;
}

struct ibv_cq_ex *sn_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *a)
{
    const uint64_t ok = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
                        IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | IBV_WC_EX_WITH_DLID_PATH_BITS |
                        IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
    if (a->wc_flags & ~ok) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    struct sn_cq *cq = cq_new(ctx, (int)a->cqe, a->cq_context, a->channel);
    if (!cq) return NULL;
    cq->wc_flags = a->wc_flags;
    return &cq->ex;
}

SN_EXPORT int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
    struct sn_cq *cq = (struct sn_cq *)ibcq;
    if (cqe <= 0 || cqe > SN_MAX_CQE) return EINVAL;
    pthread_mutex_lock(&cq->lock);
    if ((uint32_t)cqe < cq->count) {
        pthread_mutex_unlock(&cq->lock);
        return EINVAL;
    }
    cq->ex.cqe = cqe; /* the ring grows on demand; nothing else to do */
    pthread_mutex_unlock(&cq->lock);
    return 0;
}

SN_EXPORT int ibv_destroy_cq(struct ibv_cq *ibcq)
{
    struct sn_cq *cq = (struct sn_cq *)ibcq;
    struct sn_ctx *c = cq->ctx;
    pthread_mutex_lock(&c->lock);
    if (cq->nqp) {
        pthread_mutex_unlock(&c->lock);
        return EBUSY;
    }
    pthread_mutex_unlock(&c->lock);
    if (cq->ex.channel) __atomic_sub_fetch(&cq->ex.channel->refcnt, 1, __ATOMIC_RELAXED);
    free(cq->ring);
    free(cq);
    return 0;
}

/* ---------------- receive queues and SRQ ---------------- */
int sn_rq_init(struct sn_rq *rq, uint32_t max_wr, uint32_t max_sge)
{
    rq->cap = max_wr ? max_wr : 1;
    rq->max_sge = max_sge;
    rq->head = rq->count = 0;
    rq->ring = calloc(rq->cap, sizeof *rq->ring);
    return rq->ring ? 0 : ENOMEM;
}

int sn_rq_push(struct sn_rq *rq, const struct ibv_recv_wr *wr)
{
    if (wr->num_sge < 0 || (uint32_t)wr->num_sge > rq->max_sge) return EINVAL;
    if (rq->count == rq->cap) return ENOMEM;
    struct sn_rwr *r = &rq->ring[(rq->head + rq->count) % rq->cap];
    r->wr_id = wr->wr_id;
    r->num_sge = wr->num_sge;
    if (wr->num_sge) memcpy(r->sge, wr->sg_list, (size_t)wr->num_sge * sizeof *r->sge);
    rq->count++;
    return 0;
}

int sn_rq_pop(struct sn_rq *rq, struct sn_rwr *out)
{
    if (!rq->count) return -1;
    *out = rq->ring[rq->head];
    rq->head = (rq->head + 1) % rq->cap;
    rq->count--;
    return 0;
}

SN_EXPORT struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *a)
{
    if (!a->attr.max_wr || a->attr.max_wr > SN_MAX_QP_WR || a->attr.max_sge > SN_MAX_SGE) {
        errno = EINVAL;
        return NULL;
    }
    struct sn_srq *s = calloc(1, sizeof *s);
    if (!s || sn_rq_init(&s->rq, a->attr.max_wr, a->attr.max_sge ? a->attr.max_sge : 1)) {
        free(s);
        errno = ENOMEM;
        return NULL;
    }
    s->srq.context = pd->context;
    s->srq.srq_context = a->srq_context;
    s->srq.pd = pd;
    sn_pd_use(pd, 1);
    s->limit = a->attr.srq_limit;
    pthread_mutex_init(&s->srq.mutex, NULL);
    pthread_cond_init(&s->srq.cond, NULL);
    return &s->srq;
}

SN_EXPORT int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *a, int mask)
{
    struct sn_srq *s = (struct sn_srq *)srq;
    struct sn_ctx *c = sn_ctx_of(srq->context);
    int rc = 0;
    pthread_mutex_lock(&c->lock);
    if (mask & IBV_SRQ_MAX_WR) {
        if (a->max_wr < s->rq.count || a->max_wr > SN_MAX_QP_WR) {
            rc = EINVAL;
        } else if (a->max_wr > s->rq.cap) {
            struct sn_rwr *n = calloc(a->max_wr, sizeof *n);
            if (!n) {
                rc = ENOMEM;
            } else {
                for (uint32_t i = 0; i < s->rq.count; i++) n[i] = s->rq.ring[(s->rq.head + i) % s->rq.cap];
                free(s->rq.ring);
                s->rq.ring = n;
                s->rq.cap = a->max_wr;
                s->rq.head = 0;
            }
        }
    }
    if (!rc && (mask & IBV_SRQ_LIMIT)) s->limit = a->srq_limit;
    pthread_mutex_unlock(&c->lock);
    return rc;
}

SN_EXPORT int ibv_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *a)
{
    struct sn_srq *s = (struct sn_srq *)srq;
    a->max_wr = s->rq.cap;
    a->max_sge = s->rq.max_sge;
    a->srq_limit = s->limit;
    return 0;
}

SN_EXPORT int ibv_destroy_srq(struct ibv_srq *srq)
{
    struct sn_srq *s = (struct sn_srq *)srq;
    struct sn_ctx *c = sn_ctx_of(srq->context);
    pthread_mutex_lock(&c->lock);
    for (struct sn_qp *q = c->qps; q; q = q->next)
        if (!q->dead && q->srq == s) {
            pthread_mutex_unlock(&c->lock);
            return EBUSY;
        }
    pthread_mutex_unlock(&c->lock);
    sn_pd_use(srq->pd, -1);
    free(s->rq.ring);
    free(s);
    return 0;
}

int sn_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
    struct sn_srq *s = (struct sn_srq *)srq;
    struct sn_ctx *c = sn_ctx_of(srq->context);
    int rc = 0;
    pthread_mutex_lock(&c->lock);
    for (; wr; wr = wr->next)
        if ((rc = sn_rq_push(&s->rq, wr))) {
            *bad = wr;
            break;
        }
    pthread_mutex_unlock(&c->lock);
    sn_rx_kick(c);
    return rc;
}
