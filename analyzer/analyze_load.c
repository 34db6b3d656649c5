/* The per-rank streaming pass of `railscope report`: one read of one trace file, keeping only what the
 * attribution needs (merged GPU intervals, collectives, work requests, step markers, anchors, facts).
 * The event loop is a switch on the kind with no allocation per event beyond amortised array growth.
 * analyze_local.c then reduces this to the rank's summary and frees the rest. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze_local.h"
#include "util/xalloc.h"

/* ---- names ---- */
/* How step-like an NVTX range or mark name is, with its counter and the hash of its name without the
 * counter (the "stem": ranges of one stem repeat once per step). 3: "ProfilerStep#12"; 2: a step word with
 * a counter ("step 3", "Step#4", "iteration 12", "iter12", "train_step_7", "batch 5"); 1: a step word alone
 * ("train_step") or any name with a trailing counter ("fwd_bwd 3"); 0: not a step name. */
static int step_word(const char *w, size_t n)
{
    static const char *const words[] = {"step", "iteration", "iter", "itr", "it", "batch"};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (n == strlen(words[i]) && !strncasecmp(w, words[i], n)) return 1;
    return 0;
}
static int is_sep(char c) { return c == ' ' || c == '#' || c == '_' || c == ':' || c == '=' || c == '-' || c == '.'; }
static int is_digit(char c) { return c >= '0' && c <= '9'; }
/* The length of a name without PyTorch's emit_nvtx() tails: it appends ", op_id = N", ", seq = N",
 * ", sizes = [...]" to every range name ("ProfilerStep#3, op_id = 187"); the name is what comes before. */
static size_t name_len(const char *s)
{
    size_t n = strlen(s);
    static const char *const tails[] = {", op_id = ", ", seq = ", ", sizes = "};
    for (size_t i = 0; i < sizeof tails / sizeof *tails; i++) {
        const char *t = strstr(s, tails[i]);
        if (t && (size_t)(t - s) < n) n = (size_t)(t - s);
    }
    return n;
}
/* Where the counter of s[0, n) ends: before a "/total" tail ("step 5/30", tqdm's and Hugging Face's
 * style; only digits on both sides, so "fwd/3" keeps its counter 3) */
static size_t counter_end(const char *s, size_t n)
{
    size_t t = n;
    while (t && is_digit(s[t - 1])) t--;
    return t < n && t >= 2 && s[t - 1] == '/' && is_digit(s[t - 2]) ? t - 1 : n;
}
/* an_step_name, and *end: the stem's length in s (s[0, *end) is the name cut at its counter and separators). */
static int step_name(const char *s, int64_t *id, uint64_t *stem, size_t *end)
{
    *end = 0;
    if (!s || !*s) return 0;
    size_t n = strlen(s), e;
    const size_t cut = name_len(s);
    char buf[256];
    if (cut < n) { /* parse the cut name (strtoll below needs its end) */
        n = cut;
        if (n >= sizeof buf) n = sizeof buf - 1;
        memcpy(buf, s, n);
        buf[n] = 0;
        s = buf;
    }
    /* The counter: trailing digits, possibly followed by "/total" and in brackets ("step(5)", "step [5/30]");
     * without the brackets' opener before the digits a closer is part of the name. Otherwise each step's
     * name would be a stem of its own ("step 5/", "step(5)") and no name would repeat. */
    size_t d = 0, digits = 0; /* the counter is s[digits, d) */
    int bracket = 0;
    if (n && (s[n - 1] == ')' || s[n - 1] == ']')) {
        d = counter_end(s, n - 1);
        for (digits = d; digits && is_digit(s[digits - 1]);) digits--;
        bracket = digits < d && digits && s[digits - 1] == (s[n - 1] == ')' ? '(' : '[');
    }
    if (!bracket) {
        d = counter_end(s, n);
        for (digits = d; digits && is_digit(s[digits - 1]);) digits--;
    }
    e = digits;
    int has_num = e < d && d - e <= 18;
    *id = has_num ? strtoll(s + e, NULL, 10) : -1;
    if (bracket) e--; /* the opener */
    while (e && is_sep(s[e - 1])) e--;
    if (!e) return 0;
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the lower-case stem */
    int letters = 0;
    for (size_t i = 0; i < e; i++) {
        char c = s[i] >= 'A' && s[i] <= 'Z' ? (char)(s[i] + 32) : s[i];
        letters |= c >= 'a' && c <= 'z';
        h = (h ^ (uint8_t)c) * 1099511628211ull;
    }
    *stem = h;
    *end = e;
    if (!letters) return 0;
    if (e == 12 && !strncasecmp(s, "profilerstep", 12)) return has_num ? 3 : 1;
    /* an optional "train"/"training" prefix, then the step word */
    size_t w = 0;
    if (!strncasecmp(s, "training", 8) && e > 8 && is_sep(s[8])) w = 9;
    else if (!strncasecmp(s, "train", 5) && e > 5 && is_sep(s[5])) w = 6;
    if (step_word(s + w, e - w)) return has_num ? 2 : 1;
    if (!strncasecmp(s, "train", 5) && step_word(s + 5, e - 5)) return has_num ? 2 : 1; /* "trainstep" */
    return has_num ? 1 : 0;
}
int an_step_name(const char *s, int64_t *id, uint64_t *stem)
{
    size_t e;
    return step_name(s, id, stem, &e);
}
size_t an_step_stem_len(const char *s)
{
    int64_t id;
    uint64_t stem;
    size_t e;
    step_name(s, &id, &stem, &e);
    return e;
}
static int is_nccl_kernel(const char *name)
{
    return name && (!strncmp(name, "nccl", 4) || strstr(name, "ncclKernel") || strstr(name, "ncclDevKernel"));
}

/* Kernel-name class per string id: 0 unknown yet, 1 compute, 2 NCCL. */
static int kclass(struct pass *p, uint32_t id)
{
    if (id < p->kcls_n && p->kcls[id]) return p->kcls[id];
    if (id >= (1u << 20)) { /* ids are dense from 1: a huge one is damage; classify without a cache */
        const char *s = rs_reader_string(p->rd, id, NULL);
        return is_nccl_kernel(s) ? 2 : 1;
    }
    if (id >= p->kcls_n) {
        size_t nn = p->kcls_n ? p->kcls_n : 256;
        while (nn <= id) nn *= 2;
        p->kcls = rs_xrealloc(p->kcls, nn, "analyze_load kcls");
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

/* snprintf(dst, n, "%s", s) without printf (n > 0). */
static void cpy(char *dst, size_t n, const char *s)
{
    size_t l = strnlen(s, n - 1);
    memcpy(dst, s, l);
    dst[l] = 0;
}

static void cpystr(struct pass *p, char *dst, size_t n, uint32_t id)
{
    const char *s = rs_reader_string(p->rd, id, NULL);
    cpy(dst, n, s ? s : "");
}

static void on_fact(struct pass *p, const struct rs_ev_HOST_FACT *e)
{
    const char *k = rs_reader_string(p->rd, e->key, NULL), *v = rs_reader_string(p->rd, e->value, NULL);
    if (!k || !v) return;
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
    } else if ((!strcmp(k, "env/NCCL_NET") && !strcasecmp(v, "Socket")) ||
               (!strcmp(k, "env/NCCL_IB_DISABLE") && atoi(v) == 1)) {
        p->env_socket = 1;
    } else if (!strcmp(k, "gpudirect/nvidia_peermem") || !strcmp(k, "gpudirect/nv_peer_mem")) {
        if (!strcmp(v, "loaded")) p->r->peermem = 1;
        else if (p->r->peermem < 0) p->r->peermem = 0;
    }
}

/* A thread's NVTX stack: the last one used, else by tid in a hash map (a scan of every thread's stack
 * was quadratic in threads: 100 k threads with one range each took 6.8 s). */
static struct nvstack *nv_stack(struct pass *p, uint32_t tid)
{
    uint64_t i;
    if (p->nnv && p->nv_last < p->nnv && p->nv[p->nv_last].tid == tid) return &p->nv[p->nv_last];
    if (!hm_get(&p->nvmap, tid, &i)) {
        struct nvstack *s = AN_PUSH(p->nv, p->nnv, p->nvcap);
        memset(s, 0, sizeof *s);
        s->tid = tid;
        i = p->nnv - 1;
        hm_put(&p->nvmap, tid, i);
    }
    p->nv_last = (size_t)i;
    return &p->nv[i];
}

/* A range or mark name: its step priority (0: not a step), counter and stem. With --step-marker NAME only
 * names that are NAME, in any case like automatic detection, then optionally separators (is_sep, or the
 * opener of a bracketed counter) and a counter, count (priority 4): "step 5", "Step#5", "step(5)",
 * "step 5/30", but not "step_log 5" or "steps_total" (a plain prefix took those, and --step-marker step
 * then gave twice the steps at half their length). The counter is parsed after the same separators as in
 * automatic detection ("iteration:5" is step 5). */
static int name_is_step(struct pass *p, const char *s, int64_t *id, uint64_t *stem)
{
    if (!s) return 0;
    if (p->o->step_marker) {
        const size_t ml = strlen(p->o->step_marker), n = name_len(s);
        if (n < ml || strncasecmp(s, p->o->step_marker, ml)) return 0;
        size_t q = ml;
        while (q < n && (is_sep(s[q]) || s[q] == '(' || s[q] == '[')) q++;
        if (q < n && !is_digit(s[q])) return 0; /* another word: "step_log 5", "steps_total" */
        /* a counter of at most 18 digits (the rest of a longer one would overflow) */
        size_t k = q;
        while (k < n && is_digit(s[k])) k++;
        *id = q < k && k - q <= 18 ? strtoll(s + q, NULL, 10) : -1;
        *stem = 4;
        return 4;
    }
    return an_step_name(s, id, stem);
}

static void add_range(struct pass *p, uint64_t a, uint64_t b, const struct nvent *x)
{
    struct srange *s = AN_PUSH(p->ranges, p->nranges, p->rangecap);
    s->a = a;
    s->b = b;
    s->id = x->id;
    s->stem = x->stem;
    s->prio = x->is_step;
    s->msg = x->msg;
}

/* name_is_step of a message by its string id, remembered: a name is read in full (its length, the tails that cut it)
 * at every range or mark otherwise, and a message may be 4 KiB long (900k marks naming one took seconds). An id
 * whose text is not read yet (its STRING in a later chunk) is not remembered. */
static int msg_is_step(struct pass *p, uint32_t msg, int64_t *id, uint64_t *stem)
{
    struct step_memo *m = &p->step_memo[msg % AN_STEP_MEMO];
    if (!m->known || m->msg != msg) {
        const char *s = rs_reader_string(p->rd, msg, NULL);
        m->id = -1;
        m->stem = 0;
        m->prio = (uint8_t)name_is_step(p, s, &m->id, &m->stem);
        m->msg = msg;
        m->known = s != NULL;
    }
    *id = m->id;
    *stem = m->stem;
    return m->prio;
}

static void on_mark(struct pass *p, uint64_t ts, uint32_t name, int64_t value)
{
    int64_t id = -1;
    uint64_t stem = 0;
    int prio = msg_is_step(p, name, &id, &stem);
    if (!prio) return;
    struct srange *m = AN_PUSH(p->marks, p->nmarks, p->markcap);
    m->a = m->b = ts;
    m->id = id >= 0 ? id : value;
    m->stem = stem;
    m->prio = prio;
    m->msg = name;
}

/* ---- verbs failures ---- */
static const char *wc_status_name(unsigned st)
{
    static const char *const n[] = {"SUCCESS",          "LOC_LEN_ERR",       "LOC_QP_OP_ERR",     "LOC_EEC_OP_ERR",
                                    "LOC_PROT_ERR",     "WR_FLUSH_ERR",      "MW_BIND_ERR",       "BAD_RESP_ERR",
                                    "LOC_ACCESS_ERR",   "REM_INV_REQ_ERR",   "REM_ACCESS_ERR",    "REM_OP_ERR",
                                    "RETRY_EXC_ERR",    "RNR_RETRY_EXC_ERR", "LOC_RDD_VIOL_ERR",  "REM_INV_RD_REQ_ERR",
                                    "REM_ABORT_ERR",    "INV_EECN_ERR",      "INV_EEC_STATE_ERR", "FATAL_ERR",
                                    "RESP_TIMEOUT_ERR", "GENERAL_ERR"};
    return st < sizeof n / sizeof *n ? n[st] : "unknown status";
}

void an_verr(struct pass *p, uint64_t ts, const char *fmt, ...)
{
    (void)ts;
    struct rs_an_verrs *v = &p->r->out.verrs;
    size_t l = strlen(v->first);
    if (l + 8 >= sizeof v->first) return;
    if (l) {
        memcpy(v->first + l, "; ", 3);
        l += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->first + l, sizeof v->first - l, fmt, ap);
    va_end(ap);
}

static void create_failed(struct pass *p, const struct rs_ev_hdr *h, const char *call)
{
    p->r->out.verrs.create_fail++;
    p->r->has_verbs = 1;
    if (p->r->out.verrs.create_fail <= 3)
        an_verr(p, h->ts, "%s failed (errno %u: %s)", call, h->aux, h->aux ? strerror((int)h->aux) : "?");
}

/* Creation events carry errno in hdr.aux and a zero object when the call failed. */
static void on_verbs_create(struct pass *p, const struct rs_ev_hdr *h)
{
    switch (h->kind) {
    case RS_EV_IBV_OPEN_DEVICE:
        if (!((const struct rs_ev_IBV_OPEN_DEVICE *)h)->ctx) create_failed(p, h, "ibv_open_device");
        break;
    case RS_EV_IBV_ALLOC_PD:
        if (!((const struct rs_ev_IBV_ALLOC_PD *)h)->pd) create_failed(p, h, "ibv_alloc_pd");
        break;
    case RS_EV_IBV_CREATE_CQ:
        if (!((const struct rs_ev_IBV_CREATE_CQ *)h)->cq) create_failed(p, h, "ibv_create_cq");
        break;
    case RS_EV_IBV_CREATE_QP:
        if (!((const struct rs_ev_IBV_CREATE_QP *)h)->qp) create_failed(p, h, "ibv_create_qp");
        break;
    case RS_EV_IBV_CREATE_SRQ:
        if (!((const struct rs_ev_IBV_CREATE_SRQ *)h)->srq) create_failed(p, h, "ibv_create_srq");
        break;
    case RS_EV_IBV_CREATE_WQ:
        if (!((const struct rs_ev_IBV_CREATE_WQ *)h)->wq) create_failed(p, h, "ibv_create_wq");
        break;
    default: break;
    }
}

static void on_wc(struct pass *p, const struct rs_ev_IBV_WC *e)
{
    if (e->status) {
        struct rs_an_verrs *v = &p->r->out.verrs;
        p->r->has_verbs = 1;
        if (e->status == 5) v->wc_flush++;
        else if (++v->wc_err <= 2)
            an_verr(p, e->h.ts, "QP 0x%x: completion %s (vendor_err 0x%x)", e->qp_num, wc_status_name(e->status),
                    e->vendor_err);
    }
    an_on_wc(p, e);
}

/* ---- CUDA ---- */
static void on_cuda(struct pass *p, const struct rs_ev_hdr *h)
{
    switch (h->kind) {
    case RS_EV_CUDA_KERNEL_WINDOW: {
        /* kernel records are sampled in windows: GPU idle is only known inside them */
        const struct rs_ev_CUDA_KERNEL_WINDOW *e = (const void *)h;
        p->kwin_seen = 1;
        if (e->mode == 2) p->kwin_all = 1;
        p->r->has_cuda = 1;
        if (e->flags & RS_KWIN_DETACHED) {
            /* a detach mark never opens or closes a window; it ends the tail of a closed one (hostile or
             * misordered marks: one inside a window, a second one, one on a full-capture rank, are passed over) */
            if (!e->on && !p->kwin_open && p->kwin_closed && h->ts > p->kwin_closed)
                iv_add(&p->ktail, p->kwin_closed, h->ts);
            p->kwin_closed = 0;
        } else if (e->on && !p->kwin_open) {
            p->kwin_open = h->ts ? h->ts : 1;
            p->kwin_closed = 0; /* a window due while armed cancels the detach: no tail for the last one */
        } else if (!e->on && p->kwin_open) {
            iv_add(&p->kwin, p->kwin_open, h->ts);
            p->kwin_open = 0;
            p->kwin_closed = h->ts ? h->ts : 1;
        }
        break;
    }
    case RS_EV_CUDA_MEMCPY: {
        const struct rs_ev_CUDA_MEMCPY *e = (const void *)h;
        p->r->has_gpu = 1;
        if (e->end <= h->ts) break;
        if (e->copy_kind == 1) {
            iv_add(&p->h2d, h->ts, e->end);
            if (e->src_kind == 1) {
                p->r->out.h2d_pageable_bytes += e->bytes;
                p->r->out.h2d_pageable_s += (e->end - h->ts) * 1e-9;
            } else {
                p->r->out.h2d_pinned_bytes += e->bytes;
                p->r->out.h2d_pinned_s += (e->end - h->ts) * 1e-9;
            }
        } else iv_add(&p->other, h->ts, e->end);
        if (e->copy_kind == 1 || e->copy_kind == 2) {
            struct copyrec *c = AN_PUSH(p->copies, p->ncopies, p->copycap);
            c->a = h->ts;
            c->b = e->end;
            c->bytes = e->bytes;
            c->d2h = e->copy_kind == 2;
            c->used = 0; /* AN_PUSH does not clear (this was read uninitialised before: bounce counts varied) */
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
        p->r->has_cuda = 1;
        p->r->has_copy_calls = 1;
        if (e->copy_kind == 1) {
            iv_add(&p->h2d, h->ts, h->ts + e->dur);
            if (e->src_mem == 0) {
                p->r->out.h2d_pageable_bytes += e->bytes;
                p->r->out.h2d_pageable_s += e->dur * 1e-9;
            } else {
                p->r->out.h2d_pinned_bytes += e->bytes;
                p->r->out.h2d_pinned_s += e->dur * 1e-9;
            }
        }
        break;
    }
    default: break;
    }
}

/* ---- NCCL ---- */
static void on_nccl_coll(struct pass *p, const struct rs_ev_NCCL_COLL *e)
{
    p->r->has_nccl = 1;
    struct an_lcoll *c = AN_PUSH(p->colls, p->ncolls, p->collcap);
    memset(c, 0, sizeof *c);
    c->comm_hash = e->comm_hash;
    c->seq = e->seq;
    c->handle = e->handle;
    c->host_ts = e->h.ts;
    c->kstart = e->h.ts;
    c->kend = e->end > e->h.ts ? e->end : e->h.ts;
    c->step = -1;
    cpystr(p, c->func, sizeof c->func, e->func);
    cpystr(p, c->algo, sizeof c->algo, e->algo);
    const char *dt = rs_reader_string(p->rd, e->datatype, NULL);
    unsigned dsz = 4;
    if (dt && (strstr(dt, "64") || strstr(dt, "Double"))) dsz = 8;
    else if (dt && (strstr(dt, "16") || strstr(dt, "Half"))) dsz = 2;
    else if (dt && (strstr(dt, "8") || strstr(dt, "Char"))) dsz = 1;
    c->bytes = e->count * dsz;
    c->nranks = p->nranks;
    uint64_t ci; /* the communicator's latest init: its nNodes, its latest known size */
    if (hm_get(&p->commmap, e->comm_hash, &ci)) {
        c->nnodes = p->comms[ci].nnodes;
        if (p->comms[ci].nranks_pos > 0) c->nranks = p->comms[ci].nranks_pos;
    }
    hm_put(&p->collmap, e->handle, p->ncolls - 1);
}

/* API-level record: stands in for the plugin's NCCL_COLL when that is absent (analyze_local.c) */
static void on_nccl_call(struct pass *p, const struct rs_ev_NCCL_CALL *e)
{
    static const char *const fn[] = {
#define RS_FN(id, name) [id] = #name,
        RS_NCCL_FUNCS(RS_FN)
#undef RS_FN
    };
    /* ncclDataType_t: int8 uint8 int32 uint32 int64 uint64 f16 f32 f64 bf16 f8e4m3 f8e5m2 */
    static const uint8_t dsz[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
    p->r->has_nccl = 1;
    if (e->func > 5 || e->ret != 0) /* collectives only (Send/Recv/Group are not joined) */
        return;
    struct an_lcoll *c = AN_PUSH(p->calls, p->ncalls, p->callcap);
    memset(c, 0, sizeof *c);
    c->comm_hash = e->comm_hash;
    c->seq = e->seq;
    c->handle = 0;
    c->host_ts = e->h.ts;
    c->kstart = e->h.ts;
    c->kend = e->h.ts + e->dur;
    c->step = -1;
    cpy(c->func, sizeof c->func, fn[e->func]);
    c->bytes = e->count * (e->datatype < sizeof dsz ? dsz[e->datatype] : 4);
    c->nranks = e->nranks > 0 ? e->nranks : p->nranks;
}

static void on_nccl(struct pass *p, const struct rs_ev_hdr *h)
{
    switch (h->kind) {
    case RS_EV_NCCL_COLL: on_nccl_coll(p, (const void *)h); break;
    case RS_EV_NCCL_CALL: on_nccl_call(p, (const void *)h); break;
    case RS_EV_NCCL_COMM_INIT: {
        const struct rs_ev_NCCL_COMM_INIT *e = (const void *)h;
        if (e->nranks > 0) p->nranks = e->nranks;
        break;
    }
    case RS_EV_NCCL_PROF_INIT: {
        const struct rs_ev_NCCL_PROF_INIT *e = (const void *)h;
        if (e->nranks > 0) p->nranks = e->nranks;
        p->prof_mask |= e->mask;
        uint64_t prev;
        int32_t pos = hm_get(&p->commmap, e->comm_hash, &prev) ? p->comms[prev].nranks_pos : 0;
        struct an_comm *c = AN_PUSH(p->comms, p->ncomms, p->commcap);
        c->hash = e->comm_hash;
        c->nnodes = e->nnodes;
        c->nranks = e->nranks;
        c->nranks_pos = e->nranks > 0 ? e->nranks : pos;
        c->pad = 0;
        hm_put(&p->commmap, e->comm_hash, p->ncomms - 1);
        break;
    }
    case RS_EV_NCCL_PROXY_OP:
        p->proxy_ops++;
        an_on_proxy_op(p, (const void *)h);
        break;
    case RS_EV_NCCL_PROXY_STEP:
        p->proxy_steps++;
        an_on_proxy_step(p, (const void *)h);
        break;
    case RS_EV_NCCL_PROXY_STATE: {
        const struct rs_ev_NCCL_PROXY_STATE *e = (const void *)h;
        if (e->state == 9) /* SendWait: the isend is posted: network time starts */
            an_on_proxy_state_sendwait(p, e->handle, h->ts);
        break;
    }
    case RS_EV_NCCL_TRANSPORT: {
        const struct rs_ev_NCCL_TRANSPORT *e = (const void *)h;
        if (e->channel < 0 || e->transport > 7) break; /* "Using network X": no connection */
        const char *via = rs_reader_string(p->rd, e->via, NULL);
        p->conn_mask |= 1u << e->transport;
        uint64_t ci;
        if (!hm_get(&p->connmap, e->comm_hash, &ci)) {
            *AN_PUSH(p->connlog, p->nconnlog, p->connlogcap) = (struct an_connlog){e->comm_hash, 0};
            ci = p->nconnlog - 1;
            hm_put(&p->connmap, e->comm_hash, ci);
        }
        p->connlog[ci].mask |= 1u << e->transport;
        p->nconn++;
        if (e->transport == 3) {
            p->ib_conn++;
            if (via && strstr(via, "/GDRDMA")) p->gdr_conn++;
        }
        if (via && e->transport >= 3 && e->transport <= 5 && !p->conn_via[0]) cpy(p->conn_via, sizeof p->conn_via, via);
        break;
    }
    case RS_EV_NCCL_NET_IB: p->net_ib_ev++; break;
    case RS_EV_NCCL_NET_SOCK: p->net_sock_ev++; break;
    default: break;
    }
}

/* ---- verbs ---- */
static void on_verbs(struct pass *p, const struct rs_ev_hdr *h)
{
    switch (h->kind) {
    case RS_EV_IBV_POST_SEND: {
        const struct rs_ev_IBV_POST_SEND *e = (const void *)h;
        p->r->has_verbs = 1;
        if (e->ret && ++p->r->out.verrs.post_fail <= 2)
            an_verr(p, h->ts, "ibv_post_send on QP 0x%x refused a WR (%d: %s)", e->qp_num, e->ret,
                    strerror(e->ret < 0 ? -e->ret : e->ret));
        an_on_post_send(p, e);
        break;
    }
    case RS_EV_IBV_POST_RECV: {
        const struct rs_ev_IBV_POST_RECV *e = (const void *)h;
        p->r->has_verbs = 1;
        if (e->ret && ++p->r->out.verrs.post_fail <= 2)
            an_verr(p, h->ts, "ibv_post_recv on QP 0x%x refused a WR (%d: %s)", e->qp_num, e->ret,
                    strerror(e->ret < 0 ? -e->ret : e->ret));
        an_on_post_recv(p, e);
        break;
    }
    case RS_EV_IBV_WC: on_wc(p, (const void *)h); break;
    case RS_EV_IBV_GET_CQ_EVENT: an_on_cq_event(p, (const void *)h); break;
    case RS_EV_IBV_REG_MR: {
        const struct rs_ev_IBV_REG_MR *e = (const void *)h;
        p->r->has_verbs = 1;
        if (e->err && e->length == 0 && !h->aux) { /* a probe: nothing was to be registered (not a rereg) */
            p->r->out.verrs.probes++;
            break;
        }
        if (e->err) {
            if (++p->r->out.verrs.create_fail <= 3)
                an_verr(p, h->ts, "ibv_reg_mr of %llu B failed (%d: %s)", (unsigned long long)e->length, e->err,
                        strerror(e->err < 0 ? -e->err : e->err));
            break;
        }
        unsigned mem = e->mem < RS_AN_MEMKINDS ? e->mem : 0;
        p->mr_bytes[mem] += e->length;
        if (e->dmabuf_fd >= 0 || mem == RS_MEM_DMABUF) p->dmabuf_mrs++;
        break;
    }
    case RS_EV_IBV_MODIFY_QP: {
        const struct rs_ev_IBV_MODIFY_QP *e = (const void *)h;
        if (e->ret == 0 && e->dest_qpn) qp_get(p, e->qp_num)->acc.dest_qpn = e->dest_qpn;
        else if (e->ret && ++p->r->out.verrs.create_fail <= 3)
            an_verr(p, h->ts, "ibv_modify_qp of QP 0x%x to state %u failed (%d: %s)", e->qp_num, e->state, e->ret,
                    strerror(e->ret < 0 ? -e->ret : e->ret));
        break;
    }
    default: on_verbs_create(p, h); break;
    }
}

/* ---- NVTX ranges and marks ---- */
/* Open start/end ranges: p->nvstart maps a range id to NV_NONSTEP (a Start whose name is no step: nothing
 * kept but the id) or to its slot in p->starts: a step Start (is_step = its priority) or an End read before
 * its Start (NV_END_FIRST, ts = the End's). A paired range's id leaves the map and its slot goes on a free
 * list (a free slot: is_step 0, id = the next free slot + 1), so what is held is what is open, within the
 * pass's budget like every array and map (an_grow, hm_grow). */
#define NV_NONSTEP   UINT64_MAX
#define NV_END_FIRST 0xff
static __thread size_t nv_free; /* the first free slot of this thread's pass + 1, 0 none */
static uint64_t nv_slot(struct pass *p, const struct nvent *x)
{
    size_t i;
    if (nv_free && nv_free <= p->nstarts) {
        i = nv_free - 1;
        nv_free = (size_t)p->starts[i].id;
    } else {
        AN_PUSH(p->starts, p->nstarts, p->startcap);
        i = p->nstarts - 1;
    }
    p->starts[i] = *x;
    return i;
}
static void nv_release(struct pass *p, uint64_t id, uint64_t i)
{
    hm_del(&p->nvstart, id);
    if (i >= p->nstarts || !p->starts[i].is_step) return; /* NV_NONSTEP, or damage */
    p->starts[i].is_step = 0;
    p->starts[i].id = (int64_t)nv_free;
    nv_free = (size_t)i + 1;
}

static void on_nvtx(struct pass *p, const struct rs_ev_hdr *h, uint32_t tid)
{
    switch (h->kind) {
    case RS_EV_NVTX_PUSH: {
        const struct rs_ev_NVTX_PUSH *e = (const void *)h;
        struct nvstack *s = nv_stack(p, tid);
        struct nvent *x = AN_PUSH(s->v, s->n, s->cap);
        x->ts = h->ts;
        x->id = -1;
        x->stem = 0;
        x->msg = e->message;
        x->is_step = (uint8_t)msg_is_step(p, e->message, &x->id, &x->stem);
        break;
    }
    case RS_EV_NVTX_POP: {
        struct nvstack *s = nv_stack(p, tid);
        if (!s->n) break;
        struct nvent x = s->v[--s->n];
        if (x.is_step) add_range(p, x.ts, h->ts, &x);
        break;
    }
    case RS_EV_NVTX_START: {
        const struct rs_ev_NVTX_START *e = (const void *)h;
        struct nvent x = {h->ts, -1, 0, 0, e->message};
        x.is_step = (uint8_t)msg_is_step(p, e->message, &x.id, &x.stem);
        uint64_t i;
        if (hm_get(&p->nvstart, e->id, &i)) {
            const int end_first = i < p->nstarts && p->starts[i].is_step == NV_END_FIRST;
            /* its End came first (read from the ending thread's buffer), or an id used again (damage) */
            if (end_first && x.is_step && p->starts[i].ts >= x.ts) add_range(p, x.ts, p->starts[i].ts, &x);
            nv_release(p, e->id, i);
            if (end_first) break;
        }
        if (x.is_step) hm_put(&p->nvstart, e->id, nv_slot(p, &x));
        else hm_put(&p->nvstart, e->id, NV_NONSTEP);
        break;
    }
    case RS_EV_NVTX_END: {
        const struct rs_ev_NVTX_END *e = (const void *)h;
        uint64_t i;
        if (!hm_get(&p->nvstart, e->id, &i)) {
            /* Its Start is not read yet: events come in per-thread-buffer order, and a range started on one
             * thread may end on another (NVTX allows it: async work, callbacks), whose buffer can be read
             * first. Kept until its Start comes; one whose Start never comes is dropped at the end. */
            const struct nvent x = {h->ts, -1, 0, NV_END_FIRST, 0};
            hm_put(&p->nvstart, e->id, nv_slot(p, &x));
            break;
        }
        if (i < p->nstarts && p->starts[i].is_step == NV_END_FIRST) break; /* a second End (damage): the first counts */
        if (i < p->nstarts && p->starts[i].is_step && p->starts[i].ts <= h->ts)
            add_range(p, p->starts[i].ts, h->ts, &p->starts[i]);
        nv_release(p, e->id, i);
        break;
    }
    case RS_EV_NVTX_MARK: {
        const struct rs_ev_NVTX_MARK *e = (const void *)h;
        on_mark(p, h->ts, e->message, (int64_t)e->payload);
        break;
    }
    default: break;
    }
}

static inline void on_event(struct pass *p, const struct rs_ev_hdr *h, uint32_t tid)
{
    /* Kernel records are most of a trace and come in long runs: a predictable branch before the family
     * dispatch. */
    if (__builtin_expect(h->kind == RS_EV_CUDA_KERNEL, 1)) {
        const struct rs_ev_CUDA_KERNEL *e = (const void *)h;
        p->r->has_gpu = 1;
        if (e->end <= h->ts) return;
        if (kclass(p, e->name) == 2) /* one entry per collective kernel: never merged */
            *AN_PUSH(p->nk.v, p->nk.n, p->nk.cap) = (struct iv){h->ts, e->end};
        else iv_add(&p->compute, h->ts, e->end);
        return;
    }
    switch (h->kind) {
    case RS_EV_CLOCK: {
        const struct rs_ev_CLOCK *e = (const void *)h;
        *AN_PUSH(p->anchors, p->nanchors, p->anchorcap) = (int64_t)(e->realtime_ns - e->mono_ns);
        break;
    }
    case RS_EV_HOST_FACT: on_fact(p, (const void *)h); break;
    case RS_EV_PROC_END: p->proc_end_ts = h->ts > p->proc_end_ts ? h->ts : p->proc_end_ts; break;
    case RS_EV_MARK: {
        const struct rs_ev_MARK *e = (const void *)h;
        on_mark(p, h->ts, e->name, (int64_t)e->value);
        break;
    }
    case RS_EV_CUDA_KERNEL_WINDOW:
    case RS_EV_CUDA_MEMCPY:
    case RS_EV_CUDA_MEMSET:
    case RS_EV_CUDA_COPY_CALL: on_cuda(p, h); break;
    case RS_EV_NCCL_COLL:
    case RS_EV_NCCL_CALL:
    case RS_EV_NCCL_COMM_INIT:
    case RS_EV_NCCL_PROF_INIT:
    case RS_EV_NCCL_PROXY_OP:
    case RS_EV_NCCL_PROXY_STEP:
    case RS_EV_NCCL_PROXY_STATE:
    case RS_EV_NCCL_NET_IB:
    case RS_EV_NCCL_NET_SOCK:
    case RS_EV_NCCL_TRANSPORT: on_nccl(p, h); break;
    case RS_EV_IBV_OPEN_DEVICE:
    case RS_EV_IBV_ALLOC_PD:
    case RS_EV_IBV_CREATE_CQ:
    case RS_EV_IBV_CREATE_QP:
    case RS_EV_IBV_CREATE_SRQ:
    case RS_EV_IBV_CREATE_WQ:
    case RS_EV_IBV_POST_SEND:
    case RS_EV_IBV_POST_RECV:
    case RS_EV_IBV_WC:
    case RS_EV_IBV_GET_CQ_EVENT:
    case RS_EV_IBV_REG_MR:
    case RS_EV_IBV_MODIFY_QP: on_verbs(p, h); break;
    case RS_EV_NVTX_PUSH:
    case RS_EV_NVTX_POP:
    case RS_EV_NVTX_START:
    case RS_EV_NVTX_END:
    case RS_EV_NVTX_MARK: on_nvtx(p, h, tid); break;
    default: break;
    }
}

/* Kinds whose stamps make the trace's span, for the whole-trace step: activity only (setup records may
 * carry odd stamps): every known kind of every family but core and host, i.e. the kinds above the core
 * range (HOST_FACT is in it). A byte per kind: the per-event test is one load. */
static uint8_t span_kind[256];
static pthread_once_t known_once = PTHREAD_ONCE_INIT;
static void known_init(void)
{
    for (unsigned k = 0; k < 256; k++) span_kind[k] = (uint8_t)(rs_kind_known(k) && k > RS_EV_VERBS_BASE_);
}

/* Whether the header's event list ("all", "all,-verbs", "nccl,cuda", ...) records family fam. */
static int family_on(const char *ev, const char *fam)
{
    if (!ev || !*ev) return 1;
    int on = 0;
    size_t fl = strlen(fam);
    for (const char *q = ev; *q;) {
        size_t l = strcspn(q, ",");
        int neg = *q == '-';
        const char *w = q + neg;
        size_t wl = l - (size_t)neg;
        if ((wl == 3 && !strncmp(w, "all", 3)) || (wl == fl && !strncmp(w, fam, fl))) on = !neg;
        q += l + (q[l] == ',');
    }
    return on;
}

/* r->err for a damaged file: the reader's reason, less its status word where the report's input word,
 * printed before it, stands for it ("truncated" for truncated and incomplete, "corrupt"): no "X: truncated:
 * truncated: ..." (issue s17). "partial: ..." and "io-error: ..." keep theirs, which say more. */
static void input_why(struct an_rank *r, const struct rs_read_stats *st)
{
    const char *why = st->reason, *name = rs_read_status_name(st->status);
    size_t nl = strlen(name);
    int same = st->status == RS_READ_TRUNCATED || st->status == RS_READ_CORRUPT || st->status == RS_READ_NO_END;
    if (same && !strncmp(why, name, nl) && !strncmp(why + nl, ": ", 2)) why += nl + 2;
    snprintf(r->err, sizeof r->err, "%s", why);
}

/* Whether the pass holds more than its budget: its arrays and maps, plus what each step candidate (a mark
 * or range: its copy and its step) and each collective cost later in the analysis. With more rank files
 * than passes at once (AN_MAX_THREADS) what the file keeps for the join (collectives, steps) has its own,
 * smaller share; otherwise the pass's budget is the share and already counts it. */
static int over_budget(const struct pass *p)
{
    uint64_t later =
        (p->nmarks + p->nranges) * (sizeof(struct srange) + AN_STEP_BYTES) + (p->ncolls + p->ncalls) * AN_COLL_BYTES;
    if (an_held + later > an_budget) return 1;
    const uint64_t share = p->r->share;
    return share < an_budget && later + (p->ncolls + p->ncalls) * sizeof(struct an_lcoll) > share;
}

/* Each worker thread keeps its pass between files (an_pass_recycle), freed by an_load_done(). */
static __thread struct pass *tl_pass;

void an_load_rank(const char *path, const struct rs_report_opts *o, double link_gbps_hint, struct an_rank *r,
                  volatile uint64_t *events_progress, uint64_t pass_cap, uint64_t share)
{
    memset(r, 0, sizeof *r);
    r->peermem = -1;
    r->out.rank = -1;
    snprintf(r->out.path, sizeof r->out.path, "%s", path);
    pthread_once(&known_once, known_init);
    char err[256];
    struct rs_reader *rd = rs_reader_open(path, err, sizeof err);
    if (!rd) {
        r->out.input = RS_AN_UNREADABLE;
        /* The reader's open errors start with the path; r->err is only the reason, like the read-status
         * reasons below, because every message that shows it already names r->out.path. */
        size_t pl = strlen(path);
        const char *why = !strncmp(err, path, pl) && !strncmp(err + pl, ": ", 2) ? err + pl + 2 : err;
        snprintf(r->err, sizeof r->err, "%s", why);
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
    struct pass *p = tl_pass; /* the worker's pass of its previous file, recycled */
    const int recycled = p != NULL;
    tl_pass = NULL;
    if (!p && !(p = rs_xcalloc(1, sizeof *p, "analyze_load p"))) {
        fprintf(stderr, "railscope: out of memory\n");
        exit(2);
    }
    p->rd = rd;
    p->r = r;
    p->o = o;
    nv_free = 0; /* a recycled pass's starts are emptied */
    p->first_ts = UINT64_MAX;
    rs_facts_init(&p->facts);
    p->verbs_captured = family_on(hi->events, "verbs");
    r->verbs_off = !p->verbs_captured; /* the GPUDirect verdict: no verbs recorded proves nothing then */
    p->nranks = hi->world_size > 0 && hi->world_size < (1 << 30) ? (int32_t)hi->world_size : 0;
    struct rs_chunk c;
    uint64_t n = 0, told = 0;
    uint64_t first = UINT64_MAX, last = 0;
    /* The memory budget (docs/report.md, "Memory"): checked every 256 events; once reached, the rest of
     * the file is read and counted but not analysed (the analysis covers the trace up to the cut). */
    r->budget = pass_cap;
    r->share = share < pass_cap ? share : pass_cap;
    an_held = 0;
    an_budget = r->budget;
    int cut = 0;
    while (rs_reader_next_chunk(rd, &c) > 0) {
        if (cut) {
            r->cut_events += c.n;
            n += c.n;
            continue;
        }
        /* Kinds this reader does not know reach no case of on_event's switch (its cases are the known
         * kinds, whose fixed fields the reader has checked). */
        uint64_t k = 0;
        for (const struct rs_ev_hdr *h = c.ev; h != c.end; h = rs_ev_next(h)) {
            const unsigned kind = h->kind;
            const uint64_t ts = h->ts;
            on_event(p, h, c.tid);
            if (kind < 256 && span_kind[kind]) {
                last = ts > last ? ts : last;
                first = ts < first ? ts : first;
            }
            if (!(++k & 255) && over_budget(p)) break;
        }
        if (over_budget(p)) {
            cut = 1;
            r->cut_events += c.n - k;
            if (recycled) break; /* read again on a fresh pass below: counting the rest first would be wasted */
        }
        n += c.n;
        if (n - told >= 0x10000) {
            __atomic_add_fetch(events_progress, n - told, __ATOMIC_RELAXED);
            told = n;
        }
    }
    __atomic_add_fetch(events_progress, n - told, __ATOMIC_RELAXED);
    if (cut && recycled) {
        /* A recycled pass's arrays grew for an earlier file, uncounted here: the cut would depend on which
         * files this worker read before. Read the file again on a fresh pass (only files past the budget). */
        __atomic_sub_fetch(events_progress, n, __ATOMIC_RELAXED);
        if (an_debug)
            fprintf(stderr, "railscope: report: %s: cut on a recycled pass, read again on a fresh one\n", path);
        rs_reader_close(rd);
        an_pass_free(p);
        free(p);
        an_load_rank(path, o, link_gbps_hint, r, events_progress, pass_cap, share);
        return;
    }
    p->first_ts = first;
    /* The rank's activity ends where its last copy or kernel ends, not where it starts: ended at the last event's
     * start, a run's last step lost its final copy (audit s18: a 1.6 ms pinned copy, the run's copy time -3 %;
     * -9 % a step on a pinned-only run). */
    const struct ivec *const spans[] = {&p->h2d, &p->other, &p->compute, &p->nk};
    for (size_t j = 0; first != UINT64_MAX && j < sizeof spans / sizeof spans[0]; j++)
        for (size_t i = 0; i < spans[j]->n; i++)
            if (spans[j]->v[i].b > last) last = spans[j]->v[i].b;
    p->last_ts = last;
    if (an_debug) { /* range Ends whose Start never came (on_nvtx): dropped */
        size_t lost = 0;
        for (size_t i = 0; i < p->nstarts; i++) lost += p->starts[i].is_step == NV_END_FIRST;
        if (lost) fprintf(stderr, "railscope: report: %s: %zu NVTX range ends without a start, dropped\n", path, lost);
    }
    const struct rs_read_stats *st = rs_reader_stats(rd);
    r->out.events = n;
    r->out.drops = st->drop_events;
    switch (st->status) {
    case RS_READ_OK: r->out.input = RS_AN_COMPLETE; break;
    /* no PROC_END (killed, crashed, still running): what came after its last flush is missing */
    case RS_READ_NO_END:
    case RS_READ_PARTIAL:
    case RS_READ_TRUNCATED: r->out.input = RS_AN_TRUNCATED; break;
    default: r->out.input = RS_AN_CORRUPT; break;
    }
    if (r->out.input != RS_AN_COMPLETE) input_why(r, st);
    an_budget = 0; /* the rest grows by doubling; steps are capped to what is left (an_local) */
    an_tree_phases(p);
    an_local(p, link_gbps_hint);
    rs_reader_close(rd);
    /* A large pass is not kept for the next file (at most 1.25 budgets), nor a cut file's: the next file, if
     * cut too, would have to be read again on a fresh pass (above); its arrays are near the budget anyway. */
    if (cut || an_held > r->budget / 4) {
        an_pass_free(p);
        free(p);
        return;
    }
    an_pass_recycle(p);
    tl_pass = p;
}

void an_load_done(void)
{
    if (tl_pass) {
        an_pass_free(tl_pass);
        free(tl_pass);
        tl_pass = NULL;
    }
}
