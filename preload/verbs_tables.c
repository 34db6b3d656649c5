/* Context, CQ, QP, SRQ and WQ tables of the verbs interposer, and the per-CQ empty-poll counters' emission.
 * Each table is a pointer-keyed table (preload/ptrmap.h) on the object pointer: keys apart from records (the
 * tick's scan of CQs touches only the keys), a record filled before its key is published, so a lock-free
 * reader that sees the key sees the record; removed keys become tombstones reused by later insertions.
 * Writers hold tab_lock. An object used after its destruction is the application's bug; we only promise not
 * to crash on the lookups themselves (static storage). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "preload/verbs_int.h"

#define TOMB VB_TOMB

static pthread_mutex_t tab_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- contexts: id = slot + 1 ---- */
uintptr_t vb_ctx_keys[VB_MAX_CTX];
struct vb_ctx_rec vb_ctx_recs[VB_MAX_CTX];

struct vb_ctx_rec *vb_ctx_add(struct vb_context *ctx)
{
    struct vb_ctx_rec *r = vb_ctx_find(ctx);
    if (r) return r;
    pthread_mutex_lock(&tab_lock);
    int found, s = rs_ptrmap_slot(vb_ctx_keys, VB_MAX_CTX, (uintptr_t)ctx, &found);
    if (s >= 0) {
        r = &vb_ctx_recs[s];
        if (!found) {
            memset(r, 0, sizeof *r);
            r->ctx = ctx;
            r->id = (uint32_t)s + 1;
            rs_ptrmap_publish(vb_ctx_keys, s, (uintptr_t)ctx);
        }
    }
    pthread_mutex_unlock(&tab_lock);
    return r;
}

void vb_ctx_del(struct vb_context *ctx)
{
    pthread_mutex_lock(&tab_lock);
    rs_ptrmap_remove(vb_ctx_keys, VB_MAX_CTX, (uintptr_t)ctx);
    pthread_mutex_unlock(&tab_lock);
}

/* The probe sequences after a first slot that held another key (vb_ctx_find / vb_cq_find inline). */
struct vb_ctx_rec *vb_ctx_find_more(const struct vb_context *ctx, unsigned s0)
{
    long s = rs_ptrmap_find_more(vb_ctx_keys, VB_MAX_CTX, (uintptr_t)ctx, s0);
    return s >= 0 ? &vb_ctx_recs[s] : NULL;
}

struct vb_cq_rec *vb_cq_find_more(const struct vb_cq *cq, unsigned s0)
{
    long s = rs_ptrmap_find_more(vb_cq_keys, VB_MAX_CQ, (uintptr_t)cq, s0);
    return s >= 0 ? &vb_cq_recs[s] : NULL;
}

/* ---- CQs: keys apart from records, so that the tick's scan touches only the keys ---- */
uintptr_t vb_cq_keys[VB_MAX_CQ];
struct vb_cq_rec vb_cq_recs[VB_MAX_CQ];
/* A CQ was ever added: until then the scans below skip the keys (32 KiB, 8 pages faulted in at every traced
 * program's exit, verbs or not) */
static int cq_ever;

static struct vb_cq_rec *cq_insert_locked(struct vb_cq *cq, struct vb_ctx_rec *c)
{
    int found, s = rs_ptrmap_slot(vb_cq_keys, VB_MAX_CQ, (uintptr_t)cq, &found);
    if (s < 0) {
        rs_warn_once("verbs: more than %d live CQs; further CQs are not counted", VB_MAX_CQ);
        return NULL;
    }
    struct vb_cq_rec *r = &vb_cq_recs[s];
    if (found) {
        vb_cq_bind(r, c);
        return r;
    }
    memset(r, 0, sizeof *r);
    r->cq = cq;
    r->wc_aux = RS_WC_AUX_SEEN;
    vb_cq_bind(r, c);
    r->emitted_ts = rs_now();
    rs_ptrmap_publish(vb_cq_keys, s, (uintptr_t)cq);
    __atomic_store_n(&cq_ever, 1, __ATOMIC_RELEASE); /* after the key: a scan that sees the flag sees the key */
    return r;
}

struct vb_cq_rec *vb_cq_add(struct vb_cq *cq, struct vb_ctx_rec *c)
{
    pthread_mutex_lock(&tab_lock);
    struct vb_cq_rec *r = cq_insert_locked(cq, c);
    pthread_mutex_unlock(&tab_lock);
    return r;
}

struct vb_cq_rec *vb_cq_find_or_add(struct vb_cq *cq, struct vb_ctx_rec *c)
{
    struct vb_cq_rec *r = vb_cq_find(cq);
    if (RS_LIKELY(r != NULL)) return r;
    if (pthread_mutex_trylock(&tab_lock)) return NULL; /* never block the data path; next poll retries */
    int e = errno;
    r = cq_insert_locked(cq, c);
    pthread_mutex_unlock(&tab_lock);
    errno = e;
    return r;
}

void vb_cq_bind(struct vb_cq_rec *q, struct vb_ctx_rec *c)
{
    /* poll_cq before ctx (release): a lock-free poller that sees the context sees its entry */
    __atomic_store_n(&q->poll_cq, c ? c->poll_cq : NULL, __ATOMIC_RELAXED);
    q->c = c;
    __atomic_store_n(&q->ctx, c ? c->ctx : NULL, __ATOMIC_RELEASE);
}

void vb_cq_unbind_ctx(const struct vb_ctx_rec *c)
{
    pthread_mutex_lock(&tab_lock);
    for (unsigned s = 0; s < VB_MAX_CQ; s++) {
        uintptr_t k = vb_cq_keys[s];
        if (k && k != TOMB && vb_cq_recs[s].c == c) __atomic_store_n(&vb_cq_recs[s].ctx, NULL, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&tab_lock);
}

void vb_cq_del(struct vb_cq *cq)
{
    pthread_mutex_lock(&tab_lock);
    rs_ptrmap_remove(vb_cq_keys, VB_MAX_CQ, (uintptr_t)cq);
    pthread_mutex_unlock(&tab_lock);
}

/* ---- QPs: records allocated at creation (they carry the wr_* builder buffer) ---- */
uintptr_t vb_qp_keys[VB_MAX_QP];
struct vb_qp_rec *vb_qp_recs[VB_MAX_QP];

struct vb_qp_rec *vb_qp_add(struct vb_qp *qp, struct vb_ctx_rec *c)
{
    struct vb_qp_rec *r = vb_qp_find(qp);
    if (r) return r;
    r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->qp = qp;
    r->c = c;
    pthread_mutex_lock(&tab_lock);
    int found, s = rs_ptrmap_slot(vb_qp_keys, VB_MAX_QP, (uintptr_t)qp, &found);
    struct vb_qp_rec *had = s >= 0 && found ? vb_qp_recs[s] : NULL;
    if (s >= 0 && !found) {
        vb_qp_recs[s] = r;
        rs_ptrmap_publish(vb_qp_keys, s, (uintptr_t)qp);
    }
    pthread_mutex_unlock(&tab_lock);
    if (s < 0) rs_warn_once("verbs: more than %d live QPs; further QPs' ibv_wr_* posts are not traced", VB_MAX_QP);
    if (s < 0 || had) {
        free(r);
        return had; /* another thread added it meanwhile */
    }
    return r;
}

void vb_qp_del(struct vb_qp *qp)
{
    struct vb_qp_rec *dead = NULL;
    pthread_mutex_lock(&tab_lock);
    int s = rs_ptrmap_remove(vb_qp_keys, VB_MAX_QP, (uintptr_t)qp);
    if (s >= 0) dead = vb_qp_recs[s];
    pthread_mutex_unlock(&tab_lock);
    free(dead);
}

/* ---- SRQs (id for IBV_POST_RECV.srq) and WQs (the provider's post_recv) ---- */
uintptr_t vb_srq_keys[VB_MAX_SRQ];
uint32_t vb_srq_ids[VB_MAX_SRQ];
static uint32_t srq_next_id = VB_SRQ_UNKNOWN + 1;

uint32_t vb_srq_add(struct vb_srq *srq, uint32_t id)
{
    uint32_t got = 0;
    pthread_mutex_lock(&tab_lock);
    /* A key still there was created again behind a missed destroy: a new SRQ, a new id. */
    int found, s = rs_ptrmap_slot(vb_srq_keys, VB_MAX_SRQ, (uintptr_t)srq, &found);
    if (s >= 0) {
        got = vb_srq_ids[s] = id ? id : srq_next_id++;
        if (!found) rs_ptrmap_publish(vb_srq_keys, s, (uintptr_t)srq);
    }
    pthread_mutex_unlock(&tab_lock);
    if (!got) rs_warn_once("verbs: more than %d live SRQs; posts to further SRQs show srq 1", VB_MAX_SRQ);
    return got;
}

uint32_t vb_srq_del(struct vb_srq *srq)
{
    pthread_mutex_lock(&tab_lock);
    int s = rs_ptrmap_remove(vb_srq_keys, VB_MAX_SRQ, (uintptr_t)srq);
    uint32_t id = s >= 0 ? vb_srq_ids[s] : VB_SRQ_UNKNOWN;
    pthread_mutex_unlock(&tab_lock);
    return id;
}

uintptr_t vb_wq_keys[VB_MAX_WQ];
struct vb_wq_rec vb_wq_recs[VB_MAX_WQ];

struct vb_wq_rec *vb_wq_add(struct vb_wq *wq, struct vb_ctx_rec *c, vb_wq_post_recv_fn orig)
{
    struct vb_wq_rec *r = NULL;
    pthread_mutex_lock(&tab_lock);
    int found, s = rs_ptrmap_slot(vb_wq_keys, VB_MAX_WQ, (uintptr_t)wq, &found);
    if (s >= 0) {
        r = &vb_wq_recs[s];
        r->wq = wq;
        r->c = c;
        __atomic_store_n(&r->post_recv, orig, __ATOMIC_RELAXED);
        if (!found) rs_ptrmap_publish(vb_wq_keys, s, (uintptr_t)wq);
    }
    pthread_mutex_unlock(&tab_lock);
    if (!r) rs_warn_once("verbs: more than %d live WQs; posts to further WQs are not traced", VB_MAX_WQ);
    return r;
}

void vb_wq_del(struct vb_wq *wq)
{
    pthread_mutex_lock(&tab_lock);
    rs_ptrmap_remove(vb_wq_keys, VB_MAX_WQ, (uintptr_t)wq);
    pthread_mutex_unlock(&tab_lock);
}

/* ---- empty-poll counters ---- */

void vb_run_begin(struct vb_cq_rec *q, uint64_t e)
{
    VB_ST(q->run_first, e);
    VB_ST(q->run_start, rs_now());
}

void vb_flush_empty(struct vb_cq_rec *q, uint64_t now)
{
    /* Whoever holds the flag emits; the other caller's interval is covered by that emission. */
    if (__atomic_exchange_n(&q->flushing, 1, __ATOMIC_ACQUIRE)) return;
    uint64_t e = __atomic_load_n(&q->empty, __ATOMIC_RELAXED);
    if (e == q->emitted_empty) {
        __atomic_store_n(&q->flushing, 0, __ATOMIC_RELEASE);
        return;
    }
    uint64_t ns = __atomic_load_n(&q->empty_ns, __ATOMIC_RELAXED);
    uint64_t rs = __atomic_load_n(&q->run_start, __ATOMIC_RELAXED);
    if (rs && now > rs && e > VB_LD(q->run_first)) ns += now - rs; /* a run still going on counts up to now */
    struct rs_ev_IBV_POLL_EMPTY ev;
    RS_EV_INIT(&ev, IBV_POLL_EMPTY, q->emitted_ts);
    ev.cq = (uint64_t)(uintptr_t)q->cq;
    ev.count = e - q->emitted_empty;
    ev.dur = ns > q->emitted_ns ? ns - q->emitted_ns : 0;
    rs_emit(&ev.h);
    q->emitted_empty = e;
    if (ns > q->emitted_ns) q->emitted_ns = ns;
    q->emitted_ts = now;
    __atomic_store_n(&q->flushing, 0, __ATOMIC_RELEASE);
}

/* Forked child: the counts so far are the parent's (it reports them); the child reports only its own.
 * Only the forking thread exists here, so a flush or a run of empty polls in progress was the parent's. */
void vb_empty_fork_child(void)
{
    if (!__atomic_load_n(&cq_ever, __ATOMIC_ACQUIRE)) return;
    uint64_t now = rs_now();
    for (unsigned s = 0; s < VB_MAX_CQ; s++) {
        /* a slot no CQ ever had: its record was never written, and reading it would fault its page in (the
         * records are 768 KiB: reading them all cost every fork ~4 ms before its child ran, verbs or not) */
        if (!__atomic_load_n(&vb_cq_keys[s], __ATOMIC_RELAXED)) continue;
        struct vb_cq_rec *q = &vb_cq_recs[s];
        /* write only records with something pending: every write copies a page in the child */
        if (q->emitted_empty == q->empty && !q->run_start && !q->flushing) continue;
        q->emitted_empty = q->empty;
        q->emitted_ns = q->empty_ns;
        q->emitted_ts = now;
        q->run_start = 0;
        q->flushing = 0;
    }
}

void vb_flush_empty_all(void)
{
    if (!rs_on(RS_FAM_verbs) || !__atomic_load_n(&cq_ever, __ATOMIC_ACQUIRE)) return;
    uint64_t now = rs_now();
    for (unsigned s = 0; s < VB_MAX_CQ; s++) {
        uintptr_t k = __atomic_load_n(&vb_cq_keys[s], __ATOMIC_ACQUIRE);
        if (k && k != TOMB) vb_flush_empty(&vb_cq_recs[s], now);
    }
}
