/* The per-rank streaming pass of `railscope report`: one read of one trace file, keeping only what the
 * attribution needs (merged GPU intervals, collectives, work requests, step markers, anchors, facts).
 * The event loop is a switch on the kind with no allocation per event beyond amortised array growth.
 * analyze_local.c then reduces this to the rank's summary and frees the rest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze_local.h"

/* ---- small hash: u64 key -> u64 value (open addressing, power-of-two capacity, no deletion) ---- */
void hm_put(struct hmap *m, uint64_t k, uint64_t v)
{
    if ((m->n + 1) * 2 > m->cap) {
        struct hmap o = *m;
        m->cap = o.cap ? o.cap * 2 : 64;
        m->k = calloc(m->cap, sizeof *m->k);
        m->v = calloc(m->cap, sizeof *m->v);
        m->used = calloc(m->cap, 1);
        if (!m->k || !m->v || !m->used) {
            fprintf(stderr, "railscope: out of memory\n");
            exit(2);
        }
        m->n = 0;
        for (size_t i = 0; i < o.cap; i++)
            if (o.used[i])
                hm_put(m, o.k[i], o.v[i]);
        free(o.k);
        free(o.v);
        free(o.used);
    }
    size_t i = (size_t)(k * 0x9e3779b97f4a7c15ull >> 20) & (m->cap - 1);
    while (m->used[i] && m->k[i] != k)
        i = (i + 1) & (m->cap - 1);
    if (!m->used[i])
        m->n++;
    m->used[i] = 1;
    m->k[i] = k;
    m->v[i] = v;
}

int hm_get(const struct hmap *m, uint64_t k, uint64_t *v)
{
    if (!m->cap)
        return 0;
    size_t i = (size_t)(k * 0x9e3779b97f4a7c15ull >> 20) & (m->cap - 1);
    while (m->used[i]) {
        if (m->k[i] == k) {
            *v = m->v[i];
            return 1;
        }
        i = (i + 1) & (m->cap - 1);
    }
    return 0;
}

/* Remove k (backward-shift deletion keeps probe chains intact without tombstones). */
void hm_del(struct hmap *m, uint64_t k)
{
    if (!m->cap)
        return;
    size_t mask = m->cap - 1, i = (size_t)(k * 0x9e3779b97f4a7c15ull >> 20) & mask;
    while (m->used[i] && m->k[i] != k)
        i = (i + 1) & mask;
    if (!m->used[i])
        return;
    m->used[i] = 0;
    m->n--;
    for (size_t j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask) {
        size_t home = (size_t)(m->k[j] * 0x9e3779b97f4a7c15ull >> 20) & mask;
        /* move j back into the hole i if its home is not in (i, j] cyclically */
        int between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            m->k[i] = m->k[j];
            m->v[i] = m->v[j];
            m->used[i] = 1;
            m->used[j] = 0;
            i = j;
        }
    }
}

void hm_free(struct hmap *m)
{
    free(m->k);
    free(m->v);
    free(m->used);
    memset(m, 0, sizeof *m);
}

/* ---- names ---- */
/* "ProfilerStep#12", "step 3", "train_step_7", "Step#4": a step range; *id = its number or -1. */
int an_is_step_name(const char *s, int64_t *id)
{
    if (!s)
        return 0;
    const char *p = strcasestr(s, "step");
    if (!p)
        return 0;
    /* prefix: nothing, "Profiler", "train_", "training_" */
    size_t pre = (size_t)(p - s);
    if (pre && strncasecmp(s, "profiler", pre) && strncasecmp(s, "train_", pre) && strncasecmp(s, "training_", pre) &&
        strncasecmp(s, "train ", pre))
        return 0;
    p += 4;
    while (*p == '#' || *p == ' ' || *p == '_' || *p == ':' || *p == '=')
        p++;
    if (!*p) {
        *id = -1;
        return 1;
    }
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p || *end)
        return 0;
    *id = v;
    return 1;
}

static int is_nccl_kernel(const char *name)
{
    return name && (!strncmp(name, "nccl", 4) || strstr(name, "ncclKernel") || strstr(name, "ncclDevKernel"));
}

/* Kernel-name class per string id: 0 unknown yet, 1 compute, 2 NCCL. */
static int kclass(struct pass *p, uint32_t id)
{
    if (id < p->kcls_n && p->kcls[id])
        return p->kcls[id];
    if (id >= (1u << 20)) { /* ids are dense from 1: a huge one is damage; classify without a cache */
        const char *s = rs_reader_string(p->rd, id, NULL);
        return is_nccl_kernel(s) ? 2 : 1;
    }
    if (id >= p->kcls_n) {
        size_t nn = p->kcls_n ? p->kcls_n : 256;
        while (nn <= id)
            nn *= 2;
        p->kcls = realloc(p->kcls, nn);
        if (!p->kcls) {
            fprintf(stderr, "railscope: out of memory\n");
            exit(2);
        }
        memset(p->kcls + p->kcls_n, 0, nn - p->kcls_n);
        p->kcls_n = nn;
    }
    const char *s = rs_reader_string(p->rd, id, NULL);
    int c = is_nccl_kernel(s) ? 2 : 1;
    if (s) /* an id not defined yet is not cached: it may be defined later */
        p->kcls[id] = (uint8_t)c;
    return c;
}

static void cpystr(struct pass *p, char *dst, size_t n, uint32_t id)
{
    const char *s = rs_reader_string(p->rd, id, NULL);
    snprintf(dst, n, "%s", s ? s : "");
}

/* ---- queue pairs ---- */
struct qpst *qp_get(struct pass *p, uint32_t qp_num)
{
    uint64_t v;
    if (hm_get(&p->qpmap, qp_num, &v))
        return &p->qps[v];
    struct qpst *q = AN_PUSH(p->qps, p->nqps, p->qpcap);
    memset(q, 0, sizeof *q);
    q->acc.qp_num = qp_num;
    q->acc.peer_rank = -1;
    q->last_run = -1;
    hm_put(&p->qpmap, qp_num, p->nqps - 1);
    return q;
}

static void on_post_send(struct pass *p, const struct rs_ev_IBV_POST_SEND *e)
{
    if (e->ret != 0)
        return; /* not posted */
    struct qpst *q = qp_get(p, e->qp_num);
    unsigned mem = e->mem < RS_AN_MEMKINDS ? e->mem : 0;
    q->acc.posted[mem] += e->bytes;
    p->posted[mem] += e->bytes;
    p->posts++;
    if (q->npend - q->head >= AN_PEND_MAX) { /* never completed: forget the oldest */
        q->head++;
        p->lost_wrs++;
    }
    if (q->head > 4096 && q->head * 2 > q->npend) {
        memmove(q->pend, q->pend + q->head, (q->npend - q->head) * sizeof *q->pend);
        q->npend -= q->head;
        q->head = 0;
    }
    struct pendwr *w = AN_PUSH(q->pend, q->npend, q->pendcap);
    w->post = e->h.ts;
    w->bytes = e->bytes;
    w->wr_id = e->wr_id;
    w->mem = mem;
}

/* A send WR completed at `done`: extend the QP's current run or start a new one. */
static void complete(struct pass *p, struct qpst *q, const struct pendwr *w, uint64_t done)
{
    if (done < w->post)
        return;
    if (done - w->post > q->acc.max_wait)
        q->acc.max_wait = done - w->post;
    if (q->last_run >= 0 && (size_t)q->last_run < p->nwrs) {
        struct wrrec *r = &p->wrs[q->last_run];
        if (w->post <= r->done && (w->bytes > 0) == (r->bytes > 0) && (uint8_t)w->mem == r->mem) {
            if (done > r->done)
                r->done = done;
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
    q->last_run = (long)p->nwrs - 1;
}

static void on_post_recv(struct pass *p, const struct rs_ev_IBV_POST_RECV *e)
{
    if (e->ret != 0)
        return;
    unsigned mem = e->mem < RS_AN_MEMKINDS ? e->mem : 0;
    struct qpst *q = qp_get(p, e->qp_num);
    q->acc.posted[mem] += e->bytes;
    p->posted[mem] += e->bytes;
    p->posts++;
}

static void on_wc(struct pass *p, const struct rs_ev_IBV_WC *e)
{
    if (e->opcode & 128) { /* receive side */
        struct tsb *t = AN_PUSH(p->rwc, p->nrwc, p->rwccap);
        t->ts = e->h.ts;
        t->bytes = e->bytes;
        t->qp = e->qp_num;
        return;
    }
    struct qpst *q = qp_get(p, e->qp_num);
    /* RC send queues complete in order: a completion also completes every earlier unsignaled WR. */
    size_t k = q->head;
    while (k < q->npend && q->pend[k].wr_id != e->wr_id)
        k++;
    if (k == q->npend)
        return; /* a completion for a WR we did not see posted */
    for (size_t i = q->head; i <= k; i++)
        complete(p, q, &q->pend[i], e->h.ts);
    q->head = k + 1;
    if (q->head == q->npend)
        q->head = q->npend = 0;
}

/* ---- NCCL proxy ops and steps ---- */
static struct opacc *acc_get(struct pass *p, uint64_t op)
{
    uint64_t i;
    if (hm_get(&p->accmap, op, &i))
        return &p->accs[i];
    if (p->nfreeacc)
        i = p->freeacc[--p->nfreeacc];
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
    return x;
}

static void acc_release(struct pass *p, struct opacc *x)
{
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
    }
}

static void on_proxy_step(struct pass *p, const struct rs_ev_NCCL_PROXY_STEP *e)
{
    uint64_t a = e->h.ts, sw;
    if (hm_get(&p->sendwait, e->handle, &sw)) { /* SendWait: the isend was posted */
        a = sw;
        hm_del(&p->sendwait, e->handle);
    }
    if (!e->is_send || e->end < a)
        return; /* receive steps: the sender's side measures the network */
    struct opacc *x = acc_get(p, e->parent);
    if (e->end - a > x->max_wait)
        x->max_wait = e->end - a;
    struct wrrec *r = x->nruns ? &x->runs[x->nruns - 1] : NULL;
    if (r && a <= r->done) {
        if (e->end > r->done)
            r->done = e->end;
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

static void on_proxy_op(struct pass *p, const struct rs_ev_NCCL_PROXY_OP *e)
{
    uint64_t ci, ai;
    struct an_lcoll *c = NULL;
    if (hm_get(&p->collmap, e->parent, &ci) && ci < p->ncolls) {
        c = &p->colls[ci];
        if (e->end > c->kend)
            c->kend = e->end; /* the enqueue end is not completion: the proxy op ends later */
        c->timed = 1;
    }
    if (!hm_get(&p->accmap, e->handle, &ai))
        return;
    struct opacc *x = &p->accs[ai];
    if (c && e->is_send && e->nsteps >= 2 && strcasestr(c->algo, "ring")) /* ring: end of reduce-scatter */
        for (size_t k = 0; k < x->nends; k++)
            if (x->sidx[k] == e->nsteps / 2 - 1 && x->ends[k] > c->rs_end)
                c->rs_end = x->ends[k];
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

static void on_fact(struct pass *p, const struct rs_ev_HOST_FACT *e)
{
    const char *k = rs_reader_string(p->rd, e->key, NULL), *v = rs_reader_string(p->rd, e->value, NULL);
    if (!k || !v)
        return;
    if (p->facts.n < 4096) /* a snapshot is a few hundred facts; more is damage */
        rs_facts_add(&p->facts, k, v);
    size_t kl = strlen(k);
    if (!strncmp(k, "ib/", 3) && kl > 5 && !strcmp(k + kl - 5, "/rate") && strstr(k, "/port/")) {
        double g = atof(v); /* "200 Gb/sec (4X HDR)" */
        if (g > 0 && g > p->r->link_gbps) {
            p->r->link_gbps = g;
            snprintf(p->r->link_fact, sizeof p->r->link_fact, "host fact %.36s", k);
        }
    } else if (!strcmp(k, "softnic/rate_gbps") || !strcmp(k, "env/SOFTNIC_RATE_GBPS")) {
        double g = atof(v);
        if (g > 0 && !p->r->link_gbps) {
            p->r->link_gbps = g;
            snprintf(p->r->link_fact, sizeof p->r->link_fact, "softnic %s", k);
        }
    } else if (!strcmp(k, "gpudirect/nvidia_peermem") || !strcmp(k, "gpudirect/nv_peer_mem")) {
        if (!strcmp(v, "loaded"))
            p->r->peermem = 1;
        else if (p->r->peermem < 0)
            p->r->peermem = 0;
    }
}

static struct nvstack *nv_stack(struct pass *p, uint32_t tid)
{
    for (size_t i = 0; i < p->nnv; i++)
        if (p->nv[i].tid == tid)
            return &p->nv[i];
    struct nvstack *s = AN_PUSH(p->nv, p->nnv, p->nvcap);
    memset(s, 0, sizeof *s);
    s->tid = tid;
    return s;
}

/* A range opened by push/start: is it a step range? */
static int range_is_step(struct pass *p, uint32_t msg, int64_t *id)
{
    const char *s = rs_reader_string(p->rd, msg, NULL);
    if (!s)
        return 0;
    if (p->o->step_marker) {
        size_t ml = strlen(p->o->step_marker);
        if (strncmp(s, p->o->step_marker, ml))
            return 0;
        *id = -1;
        const char *q = s + ml;
        while (*q == '#' || *q == ' ' || *q == '_')
            q++;
        if (*q)
            *id = strtoll(q, NULL, 10);
        return 1;
    }
    return an_is_step_name(s, id);
}

static void add_range(struct pass *p, uint64_t a, uint64_t b, int64_t id)
{
    struct srange *s = AN_PUSH(p->ranges, p->nranges, p->rangecap);
    s->a = a;
    s->b = b;
    s->id = id;
}

static void on_mark(struct pass *p, uint64_t ts, uint32_t name, int64_t value)
{
    const char *s = rs_reader_string(p->rd, name, NULL);
    if (!s)
        return;
    int64_t id = value;
    if (p->o->step_marker ? strncmp(s, p->o->step_marker, strlen(p->o->step_marker)) : !an_is_step_name(s, &id))
        return;
    struct srange *m = AN_PUSH(p->marks, p->nmarks, p->markcap);
    m->a = m->b = ts;
    m->id = id;
}

static void on_event(struct pass *p, const struct rs_event *ev)
{
    const struct rs_ev_hdr *h = ev->ev;
    switch (h->kind) {
    case RS_EV_CLOCK: {
        const struct rs_ev_CLOCK *e = (const void *)h;
        int64_t *o = AN_PUSH(p->anchors, p->nanchors, p->anchorcap);
        *o = (int64_t)(e->realtime_ns - e->mono_ns);
        break;
    }
    case RS_EV_CUDA_KERNEL: {
        const struct rs_ev_CUDA_KERNEL *e = (const void *)h;
        p->r->has_gpu = 1;
        if (e->end <= h->ts)
            break;
        if (kclass(p, e->name) == 2) /* one entry per collective kernel: never merged */
            *AN_PUSH(p->nk.v, p->nk.n, p->nk.cap) = (struct iv){h->ts, e->end};
        else
            iv_add(&p->compute, h->ts, e->end);
        break;
    }
    case RS_EV_CUDA_KERNEL_WINDOW: {
        /* kernel records are sampled in windows: GPU idle is only known inside them */
        const struct rs_ev_CUDA_KERNEL_WINDOW *e = (const void *)h;
        p->kwin_seen = 1;
        if (e->on && !p->kwin_open)
            p->kwin_open = h->ts ? h->ts : 1;
        else if (!e->on && p->kwin_open) {
            iv_add(&p->kwin, p->kwin_open, h->ts);
            p->kwin_open = 0;
        }
        break;
    }
    case RS_EV_CUDA_MEMCPY: {
        const struct rs_ev_CUDA_MEMCPY *e = (const void *)h;
        p->r->has_gpu = 1;
        if (e->end <= h->ts)
            break;
        if (e->copy_kind == 1) {
            iv_add(&p->h2d, h->ts, e->end);
            if (e->src_kind == 1)
                p->r->out.h2d_pageable_bytes += e->bytes;
            else
                p->r->out.h2d_pinned_bytes += e->bytes;
        } else
            iv_add(&p->other, h->ts, e->end);
        if (e->copy_kind == 1 || e->copy_kind == 2) {
            struct copyrec *c = AN_PUSH(p->copies, p->ncopies, p->copycap);
            c->a = h->ts;
            c->b = e->end;
            c->bytes = e->bytes;
            c->d2h = e->copy_kind == 2;
        }
        break;
    }
    case RS_EV_CUDA_MEMSET: {
        const struct rs_ev_CUDA_MEMSET *e = (const void *)h;
        p->r->has_gpu = 1;
        iv_add(&p->other, h->ts, e->end);
        break;
    }
    case RS_EV_CUDA_COPY_CALL: {
        const struct rs_ev_CUDA_COPY_CALL *e = (const void *)h;
        if (e->copy_kind == 1) {
            iv_add(&p->h2d, h->ts, h->ts + e->dur);
            if (e->src_mem == 0)
                p->r->out.h2d_pageable_bytes += e->bytes;
            else
                p->r->out.h2d_pinned_bytes += e->bytes;
        }
        break;
    }
    case RS_EV_NCCL_COLL: {
        const struct rs_ev_NCCL_COLL *e = (const void *)h;
        p->r->has_nccl = 1;
        struct an_lcoll *c = AN_PUSH(p->colls, p->ncolls, p->collcap);
        memset(c, 0, sizeof *c);
        c->comm_hash = e->comm_hash;
        c->seq = e->seq;
        c->handle = e->handle;
        c->host_ts = h->ts;
        c->kstart = h->ts;
        c->kend = e->end > h->ts ? e->end : h->ts;
        c->step = -1;
        cpystr(p, c->func, sizeof c->func, e->func);
        cpystr(p, c->algo, sizeof c->algo, e->algo);
        const char *dt = rs_reader_string(p->rd, e->datatype, NULL);
        unsigned dsz = 4;
        if (dt && (strstr(dt, "64") || strstr(dt, "Double")))
            dsz = 8;
        else if (dt && (strstr(dt, "16") || strstr(dt, "Half")))
            dsz = 2;
        else if (dt && (strstr(dt, "8") || strstr(dt, "Char")))
            dsz = 1;
        c->bytes = e->count * dsz;
        c->nranks = p->nranks;
        hm_put(&p->collmap, e->handle, p->ncolls - 1);
        break;
    }
    case RS_EV_NCCL_CALL: {
        /* API-level record: stands in for the plugin's NCCL_COLL when that is absent (analyze_local.c) */
        const struct rs_ev_NCCL_CALL *e = (const void *)h;
        static const char *const fn[] = {
#define RS_FN(id, name) [id] = #name,
            RS_NCCL_FUNCS(RS_FN)
#undef RS_FN
        };
        /* ncclDataType_t: int8 uint8 int32 uint32 int64 uint64 f16 f32 f64 bf16 f8e4m3 f8e5m2 */
        static const uint8_t dsz[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
        p->r->has_nccl = 1;
        if (e->func > 5 || e->ret != 0) /* collectives only (Send/Recv/Group are not joined) */
            break;
        struct an_lcoll *c = AN_PUSH(p->calls, p->ncalls, p->callcap);
        memset(c, 0, sizeof *c);
        c->comm_hash = e->comm_hash;
        c->seq = e->seq;
        c->handle = 0;
        c->host_ts = h->ts;
        c->kstart = h->ts;
        c->kend = h->ts + e->dur;
        c->step = -1;
        snprintf(c->func, sizeof c->func, "%s", fn[e->func]);
        c->bytes = e->count * (e->datatype < sizeof dsz ? dsz[e->datatype] : 4);
        c->nranks = e->nranks > 0 ? e->nranks : p->nranks;
        break;
    }
    case RS_EV_NCCL_COMM_INIT: {
        const struct rs_ev_NCCL_COMM_INIT *e = (const void *)h;
        if (e->nranks > 0)
            p->nranks = e->nranks;
        break;
    }
    case RS_EV_NCCL_PROF_INIT: {
        const struct rs_ev_NCCL_PROF_INIT *e = (const void *)h;
        if (e->nranks > 0)
            p->nranks = e->nranks;
        break;
    }
    case RS_EV_NCCL_PROXY_OP:
        on_proxy_op(p, (const void *)h);
        break;
    case RS_EV_NCCL_PROXY_STEP:
        on_proxy_step(p, (const void *)h);
        break;
    case RS_EV_NCCL_PROXY_STATE: {
        const struct rs_ev_NCCL_PROXY_STATE *e = (const void *)h;
        if (e->state == 9) /* SendWait: the isend is posted: network time starts */
            hm_put(&p->sendwait, e->handle, h->ts);
        break;
    }
    case RS_EV_IBV_POST_SEND:
        p->r->has_verbs = 1;
        on_post_send(p, (const void *)h);
        break;
    case RS_EV_IBV_POST_RECV:
        p->r->has_verbs = 1;
        on_post_recv(p, (const void *)h);
        break;
    case RS_EV_IBV_WC:
        on_wc(p, (const void *)h);
        break;
    case RS_EV_IBV_REG_MR: {
        const struct rs_ev_IBV_REG_MR *e = (const void *)h;
        p->r->has_verbs = 1;
        if (e->err)
            break;
        unsigned mem = e->mem < RS_AN_MEMKINDS ? e->mem : 0;
        p->mr_bytes[mem] += e->length;
        if (e->dmabuf_fd >= 0 || mem == RS_MEM_DMABUF)
            p->dmabuf_mrs++;
        break;
    }
    case RS_EV_IBV_MODIFY_QP: {
        const struct rs_ev_IBV_MODIFY_QP *e = (const void *)h;
        if (e->ret == 0 && e->dest_qpn)
            qp_get(p, e->qp_num)->acc.dest_qpn = e->dest_qpn;
        break;
    }
    case RS_EV_HOST_FACT:
        on_fact(p, (const void *)h);
        break;
    case RS_EV_NVTX_PUSH: {
        const struct rs_ev_NVTX_PUSH *e = (const void *)h;
        struct nvstack *s = nv_stack(p, ev->tid);
        struct nvent *x = AN_PUSH(s->v, s->n, s->cap);
        x->ts = h->ts;
        x->id = -1;
        x->is_step = (uint8_t)range_is_step(p, e->message, &x->id);
        break;
    }
    case RS_EV_NVTX_POP: {
        struct nvstack *s = nv_stack(p, ev->tid);
        if (!s->n)
            break;
        struct nvent x = s->v[--s->n];
        if (x.is_step)
            add_range(p, x.ts, h->ts, x.id);
        break;
    }
    case RS_EV_NVTX_START: {
        const struct rs_ev_NVTX_START *e = (const void *)h;
        int64_t id = -1;
        if (range_is_step(p, e->message, &id)) {
            hm_put(&p->nvstart, e->id, (uint64_t)p->nstarts);
            struct nvent *x = AN_PUSH(p->starts, p->nstarts, p->startcap);
            x->ts = h->ts;
            x->id = id;
            x->is_step = 1;
        }
        break;
    }
    case RS_EV_NVTX_END: {
        const struct rs_ev_NVTX_END *e = (const void *)h;
        uint64_t i;
        if (hm_get(&p->nvstart, e->id, &i) && i < p->nstarts && p->starts[i].is_step) {
            add_range(p, p->starts[i].ts, h->ts, p->starts[i].id);
            p->starts[i].is_step = 0;
        }
        break;
    }
    case RS_EV_NVTX_MARK: {
        const struct rs_ev_NVTX_MARK *e = (const void *)h;
        on_mark(p, h->ts, e->message, (int64_t)e->payload);
        break;
    }
    case RS_EV_MARK: {
        const struct rs_ev_MARK *e = (const void *)h;
        on_mark(p, h->ts, e->name, (int64_t)e->value);
        break;
    }
    default:
        break;
    }
    /* the trace's span, for the whole-trace step: activity only (setup records may carry odd stamps) */
    if (rs_kinds[h->kind].family != RS_FAM_core && rs_kinds[h->kind].family != RS_FAM_host) {
        if (h->ts > p->last_ts)
            p->last_ts = h->ts;
        if (h->ts < p->first_ts)
            p->first_ts = h->ts;
    }
}

void an_load_rank(const char *path, const struct rs_report_opts *o, double link_gbps_hint, struct an_rank *r,
                  volatile uint64_t *events_progress)
{
    memset(r, 0, sizeof *r);
    r->peermem = -1;
    r->out.rank = -1;
    snprintf(r->out.path, sizeof r->out.path, "%s", path);
    char err[256];
    struct rs_reader *rd = rs_reader_open(path, err, sizeof err);
    if (!rd) {
        r->out.input = RS_AN_UNREADABLE;
        snprintf(r->err, sizeof r->err, "%s", err);
        return;
    }
    const struct rs_header_info *hi = rs_reader_header(rd);
    r->out.rank = hi->rank >= 0 && hi->rank < (1ll << 30) ? (int32_t)hi->rank : -1;
    r->out.pid = hi->pid;
    snprintf(r->out.host, sizeof r->out.host, "%s", hi->host ? hi->host : "?");
    snprintf(r->boot_id, sizeof r->boot_id, "%s", hi->boot_id ? hi->boot_id : "");
    if (hi->start_realtime != (uint64_t)-1 && hi->start_mono != (uint64_t)-1 && hi->start_realtime) {
        r->anchor_offset = (int64_t)(hi->start_realtime - hi->start_mono);
        r->have_anchor = 1;
    }
    struct pass *p = calloc(1, sizeof *p);
    if (!p) {
        fprintf(stderr, "railscope: out of memory\n");
        exit(2);
    }
    p->rd = rd;
    p->r = r;
    p->o = o;
    p->first_ts = UINT64_MAX;
    rs_facts_init(&p->facts);
    p->nranks = hi->world_size > 0 && hi->world_size < (1 << 30) ? (int32_t)hi->world_size : 0;
    struct rs_event ev;
    uint64_t n = 0;
    while (rs_reader_next(rd, &ev) > 0) {
        if (ev.known)
            on_event(p, &ev);
        if ((++n & 0xffff) == 0)
            __atomic_add_fetch(events_progress, 0x10000, __ATOMIC_RELAXED);
    }
    __atomic_add_fetch(events_progress, n & 0xffff, __ATOMIC_RELAXED);
    const struct rs_read_stats *st = rs_reader_stats(rd);
    r->out.events = n;
    r->out.drops = st->drop_events;
    switch (st->status) {
    case RS_READ_OK: r->out.input = RS_AN_COMPLETE; break;
    case RS_READ_PARTIAL:
    case RS_READ_TRUNCATED: r->out.input = RS_AN_TRUNCATED; break;
    default: r->out.input = RS_AN_CORRUPT; break;
    }
    if (r->out.input != RS_AN_COMPLETE)
        snprintf(r->err, sizeof r->err, "%s", st->reason);
    an_local(p, link_gbps_hint);
    rs_reader_close(rd);
    an_pass_free(p);
    free(p);
}
