/* The exporter's translator: railscope events of one process at a time -> tracks, slices, instants,
 * counters and flows for a backend (export_int.h). State is bounded: per track a few lanes, per QP a ring
 * of outstanding work requests (capped), per counter one bin, small direct-mapped caches for NCCL/NVTX
 * handles. Nothing is kept per event.
 *
 * Lanes: viewers need the slices of one track to nest. Overlapping work (several WRs in flight on a QP,
 * NCCL proxy steps) goes to the first lane of the track where it fits; lanes are extra tracks named
 * "<track> #k". A slice is placed only where it starts no earlier than the lane's previous slice, so
 * every lane is also in time order in the output.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_int.h"

const char *const rs_xcat_names[RS_XCAT_COUNT] = {
#define RS_XCAT_NAME(n) #n,
    RS_XCATS(RS_XCAT_NAME)
#undef RS_XCAT_NAME
};
const char *const rs_xkey_names[RS_XK_COUNT] = {
#define RS_XKEY_NAME(id, s) s,
    RS_XKEYS(RS_XKEY_NAME)
#undef RS_XKEY_NAME
};

#define XSTACK 8            /* nesting depth tracked per lane */
#define XLANES_NEST 8       /* thread-like tracks (nesting allowed) */
#define XLANES_ASYNC 32     /* QPs, NCCL: overlapping work */
#define XFIFO_MAX (1u << 16)/* outstanding WRs remembered per queue */
#define XCACHE 4096         /* handle caches (NCCL proxy ops/steps, NVTX start/end ids) */
#define XNVTX_DEPTH 64

enum xgkind { XG_THREAD = 1, XG_CUDA, XG_NVTX, XG_STREAM, XG_CSYNC, XG_QP, XG_COMM, XG_PROXY, XG_STEPS, XG_STATES,
              XG_KCH, XG_NVTXASYNC, XG_CTR_QP, XG_CTR_LINK, XG_CTR_NVML, XG_RS };

struct xlane {
    struct rs_xtrack t;
    uint64_t last_start;
    int depth;
    uint64_t stack[XSTACK];
};

struct xgroup {
    uint32_t gk;             /* enum xgkind */
    uint64_t a, b;           /* key */
    uint32_t name;           /* nid */
    uint8_t nest, maxl, nlanes, counter;
    int64_t jpid, jtid0;     /* JSON placement of lane 0 */
    int32_t sort;
    struct xlane *lane[XLANES_ASYNC];
    /* NVTX push/pop stack (XG_NVTX); Kineto output keeps the pushes to write complete events at the pop */
    int nvtx_depth;
    struct xpush { uint64_t ts; uint32_t msg, dom; } *pushes;
};

struct xwr {
    uint64_t ts, wr_id, bytes, flow;
    uint32_t opcode, flags, tid, pad;
};
struct xfifo {
    struct xwr *v;
    uint32_t head, n, cap;
};
struct xbw {
    struct xgroup *g;
    uint64_t bin, bytes;
    int started;
};
struct xqp {
    uint32_t qp_num, used, is_srq, pad;
    uint64_t ctx;
    struct xgroup *g;
    struct xfifo sq, rq;
    struct xbw tx;
};
struct xctx {
    uint64_t ctx;
    uint32_t dev_nid;
    struct xbw tx;
};
struct xcache {
    uint64_t key;
    uint64_t ts;
    uint32_t v, v2;
};

struct xproc {
    uint64_t index, pid;
    int64_t rank;
    uint64_t off;            /* aligned = ts + off (mod 2^64: anchors are hostile input, no signed overflow) */
    uint64_t last_ts;        /* aligned, max seen */
    uint64_t base_flow;
    uint64_t flow_seq;
    int64_t next_jtid;
    int32_t next_sort;
    struct rs_xtrack ptrack;
    uint32_t *strmap;        /* trace string id -> nid */
    uint32_t nstr;
    struct xgroup **gtab;    /* open addressing on (gk, a, b) */
    struct xgroup *last_thread;
    uint32_t *corr;          /* see corr_started() */
    uint32_t gcap, gn;
    struct xqp *qps;         /* open addressing on qp_num (+srq bit) */
    uint32_t qcap, qn, last_qp;
    struct xctx ctxs[16];
    uint32_t nctx;
    struct xcache states[XCACHE];  /* proxy step handle -> last state, ts */
    struct xcache nvtxr[XCACHE];   /* NVTX start id -> message nid, ts */
};

struct rs_exp {
    struct rs_exp_opts o;
    const struct rs_xbackend *be;
    void *b;
    struct rs_xname *names;
    uint32_t nnames, capnames;
    uint32_t *nhash;
    uint32_t nhcap;
    uint64_t next_uuid;
    uint64_t nproc;
    int in_proc;
    struct xproc p;
    struct rs_exp_stats st;
    int findings_proc;
    char last_err[512];
    uint32_t nid_cache[64];   /* fixed names, see XN_* */
    /* per-event names built from numbers: cached so the hot path does not format or hash */
    uint32_t wr_nid[16];
    uint32_t memcpy_nid[11][8][8], memset_nid[8];
    struct { int32_t v[3]; uint32_t nid; } dim_cache[256];
    uint32_t state_nid[32], sync_nid[5], copy_nid[2][6];
    uint32_t api_link_cache[256];   /* nid << 1 | links-to-GPU-work */
};

void rs_xwarn(const struct rs_exp *x, const char *fmt, ...)
{
    if (x && x->o.quiet) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("railscope: warning: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---------------- names ---------------- */

static uint32_t hash_bytes(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h ? h : 1;
}

/* Copy s into a valid-UTF-8 string (bad bytes -> '?', controls -> ' '), cut at RS_XNAME_MAX. */
static size_t sanitize(char *d, const char *s, size_t n)
{
    size_t o = 0;
    if (n > RS_XNAME_MAX) n = RS_XNAME_MAX;
    for (size_t i = 0; i < n;) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            d[o++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
            i++;
            continue;
        }
        size_t len = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
        if (c >= 0xf5) len = 0;
        int ok = len && i + len <= n;
        for (size_t k = 1; ok && k < len; k++)
            if (((unsigned char)s[i + k] & 0xc0) != 0x80) ok = 0;
        if (ok) {
            memcpy(d + o, s + i, len);
            o += len;
            i += len;
        } else {
            d[o++] = '?';
            i++;
        }
    }
    d[o] = 0;
    return o;
}

static uint32_t name_n(struct rs_exp *x, const char *s, size_t n)
{
    char clean[RS_XNAME_MAX * 4 + 1];
    if (!s) s = "", n = 0;
    n = sanitize(clean, s, n);
    uint32_t h = hash_bytes(clean, n);
    if (x->nnames * 2 + 2 >= x->nhcap) {   /* grow + rehash */
        uint32_t nc = x->nhcap ? x->nhcap * 2 : 1024;
        uint32_t *nt = calloc(nc, sizeof *nt);
        if (!nt) return 0;
        for (uint32_t i = 1; i < x->nnames; i++) {
            uint32_t j = hash_bytes(x->names[i].s, x->names[i].len) & (nc - 1);
            while (nt[j]) j = (j + 1) & (nc - 1);
            nt[j] = i;
        }
        free(x->nhash);
        x->nhash = nt;
        x->nhcap = nc;
    }
    uint32_t j = h & (x->nhcap - 1);
    while (x->nhash[j]) {
        struct rs_xname *e = &x->names[x->nhash[j]];
        if (e->len == n && !memcmp(e->s, clean, n)) return x->nhash[j];
        j = (j + 1) & (x->nhcap - 1);
    }
    if (x->nnames >= x->capnames) {
        uint32_t nc = x->capnames ? x->capnames * 2 : 256;
        struct rs_xname *nn = realloc(x->names, nc * sizeof *nn);
        if (!nn) return 0;
        x->names = nn;
        x->capnames = nc;
    }
    /* one allocation: the plain string, then its JSON literal */
    char *mem = malloc(n + 1 + n * 6 + 3);
    if (!mem) return 0;
    memcpy(mem, clean, n + 1);
    char *js = mem + n + 1, *q = js;
    *q++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)clean[i];
        if (c == '"' || c == '\\') {
            *q++ = '\\';
            *q++ = (char)c;
        } else if (c == '<') {   /* keeps the JSON safe to embed in HTML too */
            memcpy(q, "\\u003c", 6);
            q += 6;
        } else
            *q++ = (char)c;
    }
    *q++ = '"';
    *q = 0;
    uint32_t id = x->nnames++;
    x->names[id] = (struct rs_xname){mem, js, (uint32_t)n, (uint32_t)(q - js)};
    x->nhash[j] = id;
    return id;
}
static uint32_t name_s(struct rs_exp *x, const char *s) { return name_n(x, s, s ? strlen(s) : 0); }
uint32_t rs_xname_intern(struct rs_exp *x, const char *s) { return name_s(x, s); }

static uint32_t name_f(struct rs_exp *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static uint32_t name_f(struct rs_exp *x, const char *fmt, ...)
{
    char b[RS_XNAME_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n > RS_XNAME_MAX) n = RS_XNAME_MAX;
    return name_n(x, b, (size_t)n);
}

const struct rs_xname *rs_xname_get(const struct rs_exp *x, uint32_t nid)
{
    return &x->names[nid < x->nnames ? nid : 0];
}

/* Fixed names used per event: interned once. */
#define XNAMES(X)                                                                                       \
    X(EMPTY, "") X(POST_SEND, "ibv_post_send") X(POST_RECV, "ibv_post_recv") X(WC, "ibv_poll_cq: completion") \
    X(WC_UNMATCHED, "ibv_poll_cq: completion (post not seen)") X(RECV, "RECV") X(REG_MR, "ibv_reg_mr")   \
    X(WARNING, "railscope warning") X(DROPS, "railscope: events lost") X(PARTIAL, "trace incomplete")    \
    X(MARK, "mark") X(NVTX, "nvtx") X(MEMSET, "Memset") X(SYNC, "cuda sync") X(NCCL_CALL, "nccl call")  \
    X(COPY_CALL, "cudaMemcpy") X(NOCOMP, "WR (no completion seen)") X(PROXY_OP, "ProxyOp")               \
    X(PROXY_STEP, "ProxyStep") X(KERNEL_CH, "KernelCh") X(GROUP, "ncclGroup") X(NET_IB, "NCCL net IB WR") \
    X(NET_SOCK, "NCCL net socket") X(COMM_INIT, "ncclCommInit") X(UNKNOWN, "?") X(CREATE_QP, "ibv_create_qp") \
    X(MODIFY_QP, "ibv_modify_qp") X(OPEN_DEVICE, "ibv_open_device") X(CUPTI_DROPPED, "CUPTI records lost") \
    X(FINDING, "finding") X(PROF_API, "nccl api")
enum {
#define XN_ENUM(id, s) XN_##id,
    XNAMES(XN_ENUM)
#undef XN_ENUM
    XN_COUNT
};
static const char *const xname_str[XN_COUNT] = {
#define XN_STR(id, s) s,
    XNAMES(XN_STR)
#undef XN_STR
};
#define NID(x, id) ((x)->nid_cache[XN_##id])

/* ---------------- tracks, lanes ---------------- */

static uint64_t mix64(uint64_t v)
{
    v ^= v >> 33;
    v *= 0xff51afd7ed558ccdull;
    v ^= v >> 33;
    v *= 0xc4ceb9fe1a85ec53ull;
    return v ^ (v >> 33);
}

const char rs_xdigits2[200] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                               "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                               "8081828384858687888990919293949596979899";

static void declare(struct rs_exp *x, struct rs_xtrack *t)
{
    if (!t->declared) {
        t->declared = 1;
        char *d = t->jpt;   /* "pid":P,"tid":T: at most 6+20+7+20 = 53 > 47 only for absurd ids */
        char tmp[64];
        size_t n = 0;
        memcpy(tmp, "\"pid\":", 6);
        n = 6 + rs_xfmt_i64(tmp + 6, t->jpid);
        memcpy(tmp + n, ",\"tid\":", 7);
        n += 7;
        n += rs_xfmt_i64(tmp + n, t->jtid);
        if (n > sizeof t->jpt) n = 0;   /* the backend formats it each time then */
        memcpy(d, tmp, n);
        t->jpt_len = (uint8_t)n;
        x->be->track(x->b, t);
    }
}

static int64_t synth_jtid(struct rs_exp *x) { return x->p.next_jtid++; }

/* Track uuids: a counter; the parts of a parallel export interleave theirs (k * stride + index + 1) so
 * they stay unique across parts and as small (short varints) as a serial export's. */
static uint64_t new_uuid(struct rs_exp *x)
{
    uint64_t k = ++x->next_uuid;
    return x->o.index_stride ? k * x->o.index_stride + x->o.index_base + 1 : k;
}

/* Multiplicative hash of a group key (one lookup per event: keep it cheap). */
static inline uint32_t ghash(uint32_t gk, uint64_t a, uint64_t b)
{
    uint64_t h = (a + gk) * 0x9e3779b97f4a7c15ull ^ (b + 1) * 0xc2b2ae3d27d4eb4full;
    return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

static struct xgroup *group_get(struct rs_exp *x, uint32_t gk, uint64_t a, uint64_t b)
{
    struct xproc *p = &x->p;
    if (p->gn * 2 + 2 >= p->gcap) {
        uint32_t nc = p->gcap ? p->gcap * 2 : 64;
        struct xgroup **nt = calloc(nc, sizeof *nt);
        if (!nt) return NULL;
        for (uint32_t i = 0; i < p->gcap; i++) {
            struct xgroup *g = p->gtab[i];
            if (!g) continue;
            uint32_t j = ghash(g->gk, g->a, g->b) & (nc - 1);
            while (nt[j]) j = (j + 1) & (nc - 1);
            nt[j] = g;
        }
        free(p->gtab);
        p->gtab = nt;
        p->gcap = nc;
    }
    uint32_t j = ghash(gk, a, b) & (p->gcap - 1);
    while (p->gtab[j]) {
        struct xgroup *g = p->gtab[j];
        if (g->gk == gk && g->a == a && g->b == b) return g;
        j = (j + 1) & (p->gcap - 1);
    }
    struct xgroup *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->gk = gk;
    g->a = a;
    g->b = b;
    g->jpid = p->ptrack.jpid;
    g->sort = p->next_sort++;
    p->gtab[j] = g;
    p->gn++;
    return g;
}

static struct xlane *lane_new(struct rs_exp *x, struct xgroup *g)
{
    struct xlane *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    int k = g->nlanes;
    l->t.uuid = new_uuid(x);
    l->t.parent_uuid = x->p.ptrack.uuid;
    l->t.kind = g->counter ? RS_XT_COUNTER : RS_XT_CHILD;
    l->t.name = k == 0 ? g->name : name_f(x, "%s #%d", rs_xname_get(x, g->name)->s, k + 1);
    l->t.jpid = g->jpid;
    l->t.jtid = k == 0 ? g->jtid0 : synth_jtid(x);
    int64_t sort = (int64_t)g->sort * 64 + k;   /* ids from the trace are hostile input: clamp */
    l->t.sort = sort > INT32_MAX ? INT32_MAX : sort < INT32_MIN ? INT32_MIN : (int32_t)sort;
    l->t.pid = x->p.pid;
    if (g->gk == XG_THREAD && k == 0) {
        l->t.kind = RS_XT_THREAD;
        l->t.tid = (uint32_t)g->a;
    }
    g->lane[g->nlanes++] = l;
    return l;
}

/* Lane for [s, e] in g (allocating lanes as needed); NULL when every lane is taken (see emit_slice). */
static struct xlane *lane_for(struct rs_exp *x, struct xgroup *g, uint64_t s, uint64_t e)
{
    for (int i = 0; i < g->nlanes; i++) {
        struct xlane *l = g->lane[i];
        if (s < l->last_start) continue;
        while (l->depth && l->stack[l->depth - 1] <= s) l->depth--;
        if (l->depth && (!g->nest || e > l->stack[l->depth - 1] || l->depth >= XSTACK)) continue;
        l->stack[l->depth++] = e;
        l->last_start = s;
        return l;
    }
    if (g->nlanes >= g->maxl) return NULL;
    struct xlane *l = lane_new(x, g);
    if (!l) return NULL;
    l->stack[l->depth++] = e;
    l->last_start = s;
    return l;
}

static void group_free(struct xgroup *g)
{
    free(g->pushes);
    for (int i = 0; i < g->nlanes; i++) free(g->lane[i]);
    free(g);
}

/* Named groups. */
static struct xgroup *thread_group(struct rs_exp *x, uint32_t tid)
{
    struct xgroup *g = x->p.last_thread;   /* most events come in runs of one thread */
    if (g && g->a == tid) return g;
    g = group_get(x, XG_THREAD, tid, 0);
    x->p.last_thread = g;
    if (g && !g->nlanes) {
        g->nest = 1;
        g->maxl = XLANES_NEST;
        g->name = tid ? name_f(x, "thread %u", tid) : name_s(x, "railscope (tracer)");
        g->jtid0 = tid;
        g->sort = tid ? g->sort : -1;
        lane_new(x, g);
    }
    return g;
}

/* Groups that share the thread's lane 0 (CUDA API calls arrive later in the file than the thread's own
 * events: a separate lane state keeps each in time order). */
static struct xgroup *thread_side_group(struct rs_exp *x, uint32_t gk, uint32_t tid, const char *what)
{
    struct xgroup *g = group_get(x, gk, tid, 0);
    if (g && !g->nlanes) {
        struct xgroup *tg = thread_group(x, tid);
        g->nest = 1;
        g->maxl = XLANES_NEST;
        /* Kineto: ranges (ProfilerStep#N for HTA) on the thread's own row; elsewhere a row of their own */
        g->jtid0 = gk == XG_NVTX && x->o.format != RS_EXP_KINETO ? synth_jtid(x) : tid;
        g->name = name_f(x, "thread %u %s", tid, what);
        struct xlane *l = lane_new(x, g);
        /* Same track as the thread: API calls nest under the thread's other slices; in Kineto output the
         * NVTX ranges too (HTA reads ProfilerStep#N on the thread's row, and a row has one name). */
        if (l && tg && tg->nlanes && (gk == XG_CUDA || x->o.format == RS_EXP_KINETO)) {
            declare(x, &tg->lane[0]->t);
            l->t = tg->lane[0]->t;
        }
    }
    return g;
}

/* The name is formatted only when the group is new: lookups stay cheap on the per-event path. */
static struct xgroup *async_group(struct rs_exp *x, uint32_t gk, uint64_t a, uint64_t b, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static struct xgroup *async_group(struct rs_exp *x, uint32_t gk, uint64_t a, uint64_t b, const char *fmt, ...)
{
    struct xgroup *g = group_get(x, gk, a, b);
    if (g && !g->nlanes) {
        char nm[RS_XNAME_MAX + 1];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(nm, sizeof nm, fmt, ap);
        va_end(ap);
        g->maxl = XLANES_ASYNC;
        g->name = name_n(x, nm, n < 0 ? 0 : (size_t)n < sizeof nm ? (size_t)n : sizeof nm - 1);
        g->jtid0 = synth_jtid(x);
        lane_new(x, g);
    }
    return g;
}

static struct xgroup *counter_group(struct rs_exp *x, uint32_t gk, uint64_t a, uint64_t b, uint32_t name)
{
    struct xgroup *g = group_get(x, gk, a, b);
    if (g && !g->nlanes) {
        g->counter = 1;
        g->maxl = 1;
        g->name = name;
        g->jtid0 = synth_jtid(x);
        lane_new(x, g);
    }
    return g;
}

/* ---------------- emitting ---------------- */

static inline uint64_t al(struct rs_exp *x, uint64_t ts)
{
    uint64_t r = ts + x->p.off;
    if (r >> 62) r = 0;   /* before the run's origin (wrapped below 0) or absurd: the origin */
    if (r > x->p.last_ts) x->p.last_ts = r;
    return r;
}

static inline void item_init(struct rs_xitem *it, uint64_t ts, uint64_t dur, uint32_t name, int cat)
{
    it->ts = ts;
    it->dur = dur;
    it->name = name;
    it->cat = (uint8_t)cat;
    it->nargs = 0;
    it->flow_out = it->flow_step = it->flow_in = 0;
}
static inline void arg_u(struct rs_xitem *it, int key, int type, uint64_t v)
{
    if (it->nargs >= RS_XARGS_MAX) return;
    struct rs_xarg *a = &it->args[it->nargs++];
    a->key = (uint8_t)key;
    a->type = (uint8_t)type;
    a->v.u = v;
}
static inline void arg_d(struct rs_xitem *it, int key, double v)
{
    if (it->nargs >= RS_XARGS_MAX) return;
    struct rs_xarg *a = &it->args[it->nargs++];
    a->key = (uint8_t)key;
    a->type = RS_XA_DBL;
    a->v.d = v;
}
static inline void arg_s(struct rs_xitem *it, int key, uint32_t nid)
{
    if (it->nargs >= RS_XARGS_MAX) return;
    struct rs_xarg *a = &it->args[it->nargs++];
    a->key = (uint8_t)key;
    a->type = RS_XA_STR;
    a->v.nid = nid;
}

static void emit_slice(struct rs_exp *x, struct xgroup *g, struct rs_xitem *it)
{
    if (!g) return;
    struct xlane *l = lane_for(x, g, it->ts, it->ts + it->dur);
    if (!l) {
        /* More overlap than lanes: show it as an instant where it ends (an instant nests anywhere) on the
         * first lane that is not ahead of that time. Its length stays in the arguments. */
        uint64_t e = it->ts + it->dur;
        for (int i = 0; i < g->nlanes && !l; i++)
            if (g->lane[i]->last_start <= e) l = g->lane[i];
        if (!l) return;
        while (l->depth && l->stack[l->depth - 1] <= e) l->depth--;
        l->last_start = e;
        arg_u(it, RS_XK_dur_ns, RS_XA_U64, it->dur);
        it->ts = e;
        it->dur = 0;
        x->st.lane_overflow++;
    }
    declare(x, &l->t);
    it->t = &l->t;
    x->be->slice(x->b, it);
    x->st.items_out++;
}

static void emit_instant(struct rs_exp *x, struct xgroup *g, struct rs_xitem *it)
{
    emit_slice(x, g, it);   /* a zero-length slice: flows bind to it in every viewer */
}

static void emit_counter(struct rs_exp *x, struct xgroup *g, uint64_t ts, double v)
{
    if (!g || !g->nlanes) return;
    declare(x, &g->lane[0]->t);
    x->be->counter(x->b, &g->lane[0]->t, ts, v);
    x->st.items_out++;
}

static uint64_t new_flow(struct rs_exp *x)
{
    if (x->o.no_flows) return 0;
    return x->p.base_flow | (++x->p.flow_seq & 0xffffffffffull);
}
/* CUDA flows use the correlation id (Kineto's ac2g ids): bit 39 keeps them apart from our own. */
static uint64_t corr_flow(struct rs_exp *x, uint32_t corr)
{
    if (x->o.no_flows || !corr) return 0;
    return x->p.base_flow | (1ull << 39) | corr;
}

/* ---------------- per-process strings ---------------- */

static uint32_t str_nid(struct rs_exp *x, uint32_t id)
{
    if (id && id < x->p.nstr && x->p.strmap[id]) return x->p.strmap[id];
    return id ? NID(x, UNKNOWN) : NID(x, EMPTY);
}

void rs_exp_string(struct rs_exp *x, uint32_t id, const char *s, size_t len)
{
    if (!x->in_proc || !id || id > (1u << 22)) return;   /* 4 M strings: far beyond real traces, bounded for hostile ones */
    if (id >= x->p.nstr) {
        uint32_t nc = x->p.nstr ? x->p.nstr : 256;
        while (nc <= id) nc *= 2;
        uint32_t *nm = realloc(x->p.strmap, nc * sizeof *nm);
        if (!nm) return;
        memset(nm + x->p.nstr, 0, (nc - x->p.nstr) * sizeof *nm);
        x->p.strmap = nm;
        x->p.nstr = nc;
    }
    x->p.strmap[id] = name_n(x, s, len);
}

/* ---------------- bandwidth counters ---------------- */

static void bw_flush(struct rs_exp *x, struct xbw *bw)
{
    uint64_t w = x->o.bw_bin_ns;
    emit_counter(x, bw->g, bw->bin * w, (double)bw->bytes / (double)w);  /* bytes/ns = GB/s */
}
static void bw_add(struct rs_exp *x, struct xbw *bw, uint64_t ts, uint64_t bytes)
{
    if (!bw->g) return;
    uint64_t bin = ts / x->o.bw_bin_ns;
    if (!bw->started) {
        bw->started = 1;
        bw->bin = bin;
        bw->bytes = 0;
    } else if (bin > bw->bin) {
        bw_flush(x, bw);
        if (bin > bw->bin + 1) emit_counter(x, bw->g, (bw->bin + 1) * x->o.bw_bin_ns, 0);
        bw->bin = bin;
        bw->bytes = 0;
    }
    bw->bytes += bytes;
}
static void bw_end(struct rs_exp *x, struct xbw *bw)
{
    if (!bw->started) return;
    bw_flush(x, bw);
    emit_counter(x, bw->g, (bw->bin + 1) * x->o.bw_bin_ns, 0);
    bw->started = 0;
}

/* ---------------- verbs ---------------- */

static const char *const wr_op_names[] = {"RDMA_WRITE", "RDMA_WRITE_WITH_IMM", "SEND", "SEND_WITH_IMM",
                                          "RDMA_READ", "ATOMIC_CMP_AND_SWP", "ATOMIC_FETCH_AND_ADD",
                                          "LOCAL_INV", "BIND_MW", "SEND_WITH_INV", "TSO"};
#define IBV_SEND_SIGNALED_BIT 2u
#define XQP_SRQ 0x80000000u

static struct xctx *ctx_get(struct rs_exp *x, uint64_t ctx)
{
    for (uint32_t i = 0; i < x->p.nctx; i++)
        if (x->p.ctxs[i].ctx == ctx) return &x->p.ctxs[i];
    if (x->p.nctx >= 16) return NULL;
    struct xctx *c = &x->p.ctxs[x->p.nctx++];
    memset(c, 0, sizeof *c);
    c->ctx = ctx;
    c->dev_nid = name_f(x, "ctx %#llx", (unsigned long long)ctx);
    return c;
}

static struct xqp *qp_get(struct rs_exp *x, uint32_t key)
{
    struct xproc *p = &x->p;
    if (p->qn * 2 + 2 >= p->qcap) {
        uint32_t nc = p->qcap ? p->qcap * 2 : 64;
        struct xqp *nt = calloc(nc, sizeof *nt);
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
        q->g = async_group(x, XG_QP, key, 0, "QP %u", key);
        q->tx.g = counter_group(x, XG_CTR_QP, key, 0, name_f(x, "QP %u tx GB/s", key));
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
    arg_u(&it, RS_XK_wr_id, RS_XA_HEX, w->wr_id);   /* (the QP is the track) */
    if (status) arg_u(&it, RS_XK_status, RS_XA_I64, (uint64_t)(int64_t)status);
    if (completed_by != UINT64_MAX) arg_u(&it, RS_XK_completed_by, RS_XA_HEX, completed_by);
    if (last) it.flow_step = w->flow;
    else it.flow_in = w->flow;
    /* receives get their own track: pre-posted receive queues (hundreds deep) would crowd out the sends */
    struct xgroup *g = w->opcode != 128 ? q->g
                     : q->is_srq ? async_group(x, XG_QP, q->qp_num, 2, "SRQ %u recv", q->qp_num & ~XQP_SRQ)
                                 : async_group(x, XG_QP, q->qp_num, 2, "QP %u recv", q->qp_num);
    emit_slice(x, g, &it);
}

static void fifo_push(struct rs_exp *x, struct xqp *q, struct xfifo *f, const struct xwr *w)
{
    if (f->n == f->cap) {
        if (f->cap >= XFIFO_MAX) {   /* never completed as far as we can tell: show it, forget it */
            struct xwr *old = fifo_at(f, 0);
            wr_emit(x, q, old, old->ts, NID(x, NOCOMP), 0, UINT64_MAX, 0);
            x->st.wr_no_completion++;
            f->head = (f->head + 1) & (f->cap - 1);
            f->n--;
        } else {
            uint32_t nc = f->cap ? f->cap * 2 : 64;
            struct xwr *nv = malloc(nc * sizeof *nv);
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
    emit_instant(x, thread_group(x, tid), &it);
}

static void on_post_send(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_POST_SEND *e)
{
    uint64_t ts = al(x, e->h.ts);
    int ok = e->ret == 0;
    uint64_t flow = ok ? new_flow(x) : 0;
    post_instant(x, tid, ts, NID(x, POST_SEND), e->qp_num, e->wr_id, e->bytes, e->ret, flow);
    if (!ok) return;
    struct xqp *q = qp_get(x, e->qp_num);
    if (!q) return;
    struct xwr w = {ts, e->wr_id, e->bytes, flow, e->opcode, e->send_flags, tid, 0};
    fifo_push(x, q, &q->sq, &w);
}

static void on_post_recv(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_POST_RECV *e)
{
    uint64_t ts = al(x, e->h.ts);
    int ok = e->ret == 0;
    uint64_t flow = ok ? new_flow(x) : 0;
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
    if (opcode < sizeof wr_op_names / sizeof wr_op_names[0]) {
        if (!x->wr_nid[opcode]) x->wr_nid[opcode] = name_s(x, wr_op_names[opcode]);
        return x->wr_nid[opcode];
    }
    return name_f(x, "WR opcode %u", opcode);
}

/* Find wr_id in f; -1 if absent. Receive queues may complete out of order (SRQ), so search; send queues
 * complete in order, so the match is normally at the head. */
static int64_t fifo_find(struct xfifo *f, uint64_t wr_id)
{
    for (uint32_t i = 0; i < f->n; i++)
        if (fifo_at(f, i)->wr_id == wr_id) return i;
    return -1;
}

static void on_wc(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_WC *e)
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
        if (k < 0 && recv) {   /* posted to a shared receive queue */
            for (uint32_t i = 0; i < x->p.qcap && k < 0; i++) {
                struct xqp *s = &x->p.qps[i];
                if (!s->used || !s->is_srq) continue;
                int64_t kk = fifo_find(&s->rq, e->wr_id);
                if (kk >= 0) {
                    f = &s->rq;
                    k = kk;
                }
            }
            q = qp_get(x, e->qp_num);   /* the table may have moved */
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
            for (int64_t i = 0; i < k; i++)
                wr_emit(x, owner, fifo_at(f, (uint32_t)i), ts, wr_name(x, fifo_at(f, (uint32_t)i)->opcode),
                        (int)e->status, e->wr_id, 0);
        }
        struct xwr w = *fifo_at(f, (uint32_t)k);
        wr_emit(x, owner, &w, ts, wr_name(x, recv ? 128 : w.opcode), (int)e->status, UINT64_MAX, 1);
        flow = w.flow;
        if (recv) {   /* remove entry k, keep order */
            for (int64_t i = k; i > 0; i--) *fifo_at(f, (uint32_t)i) = *fifo_at(f, (uint32_t)i - 1);
            f->head = (f->head + 1) & (f->cap - 1);
            f->n--;
        } else {
            f->head = (f->head + (uint32_t)k + 1) & (f->cap - 1);
            f->n -= (uint32_t)k + 1;
        }
        if (!recv && !e->status && owner) {
            bw_add(x, &owner->tx, ts, w.bytes);
            struct xctx *c = owner->ctx ? ctx_get(x, owner->ctx) : NULL;
            if (c) bw_add(x, &c->tx, ts, w.bytes);
        }
        item_init(&it, ts, 0, NID(x, WC), RS_XCAT_verbs);
    }
    arg_u(&it, RS_XK_qp, RS_XA_U64, e->qp_num);
    arg_u(&it, RS_XK_wr_id, RS_XA_HEX, e->wr_id);
    arg_u(&it, RS_XK_bytes, RS_XA_U64, e->bytes);
    if (e->status) arg_u(&it, RS_XK_status, RS_XA_I64, e->status);
    it.flow_in = flow;
    emit_instant(x, thread_group(x, tid), &it);
}

static void on_create_qp(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_CREATE_QP *e)
{
    struct xqp *q = qp_get(x, e->qp_num);
    struct xctx *c = ctx_get(x, e->ctx);
    if (q) {
        q->ctx = e->ctx;
        if (c && q->g) {
            /* name the QP with its device, unless its track is already out */
            if (!q->g->lane[0]->t.declared) {
                q->g->name = q->g->lane[0]->t.name =
                    name_f(x, "QP %u (%s)", e->qp_num, rs_xname_get(x, c->dev_nid)->s);
            }
        }
    }
    struct rs_xitem it;
    item_init(&it, al(x, e->h.ts), 0, NID(x, CREATE_QP), RS_XCAT_verbs);
    arg_u(&it, RS_XK_qp, RS_XA_U64, e->qp_num);
    emit_instant(x, thread_group(x, tid), &it);
}

static void on_open_device(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_OPEN_DEVICE *e)
{
    struct xctx *c = ctx_get(x, e->ctx);
    if (c) {
        c->dev_nid = str_nid(x, e->device);
        c->tx.g = counter_group(x, XG_CTR_LINK, e->ctx, 0,
                                name_f(x, "link %s tx GB/s", rs_xname_get(x, c->dev_nid)->s));
    }
    struct rs_xitem it;
    item_init(&it, al(x, e->h.ts), 0, NID(x, OPEN_DEVICE), RS_XCAT_verbs);
    emit_instant(x, thread_group(x, tid), &it);
}

static void on_reg_mr(struct rs_exp *x, uint32_t tid, const struct rs_ev_IBV_REG_MR *e)
{
    static const char *const mem[] = RS_MEM_NAMES;
    struct rs_xitem it;
    item_init(&it, al(x, e->h.ts), e->dur, NID(x, REG_MR), RS_XCAT_verbs);
    arg_u(&it, RS_XK_length, RS_XA_U64, e->length);
    arg_s(&it, RS_XK_mem, name_s(x, e->mem < 7 ? mem[e->mem] : "?"));
    if (e->err) arg_u(&it, RS_XK_ret, RS_XA_I64, (uint64_t)(int64_t)e->err);
    emit_slice(x, thread_group(x, tid), &it);
}

/* ---------------- CUDA ---------------- */

static const char *const memcpy_kind[] = {"", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD",
                                          "HtoH", "PtoP"};
static const char *const mem_kind[] = {"Unknown", "Pageable", "Pinned", "Device", "Array", "Managed",
                                       "Device", "Managed"};

static struct xgroup *stream_group(struct rs_exp *x, uint32_t dev, uint32_t stream)
{
    struct xgroup *g = group_get(x, XG_STREAM, dev, stream);
    if (g && !g->nlanes) {
        g->maxl = XLANES_ASYNC;
        g->name = name_f(x, "GPU %u stream %u", dev, stream);
        if (x->o.format == RS_EXP_KINETO) {   /* Kineto: pid = device, tid = stream */
            g->jpid = dev;
            g->jtid0 = stream;
        } else
            g->jtid0 = synth_jtid(x);
        g->sort = 1000000 + (int32_t)(dev % 1000) * 1000 + (int32_t)(stream % 1000);
        lane_new(x, g);
    }
    return g;
}

/* Correlation ids of runtime calls whose flow has started (direct-mapped, bounded): a GPU record ends a
 * flow only when its call was seen, so traces without API records (or with them dropped) get no
 * dangling arrows. CUPTI hands the call's record over before the GPU work's (the call returns first). */
#define XCORR (1u << 16)
static void corr_started(struct rs_exp *x, uint32_t corr)
{
    if (!x->p.corr && !(x->p.corr = calloc(XCORR, sizeof *x->p.corr))) return;
    x->p.corr[corr & (XCORR - 1)] = corr;
}
static int corr_take(struct rs_exp *x, uint32_t corr)
{
    if (!x->p.corr || !corr || x->p.corr[corr & (XCORR - 1)] != corr) return 0;
    x->p.corr[corr & (XCORR - 1)] = 0;
    return 1;
}

static void gpu_common(struct rs_exp *x, struct rs_xitem *it, uint32_t corr, uint32_t dev, uint32_t stream)
{
    arg_u(it, RS_XK_device, RS_XA_U64, dev);
    arg_u(it, RS_XK_stream, RS_XA_U64, stream);
    arg_u(it, RS_XK_correlation, RS_XA_U64, corr);
    if (corr_take(x, corr)) it->flow_in = corr_flow(x, corr);
}

/* "[x, y, z]" for grid/block arguments, cached by value. */
static uint32_t dim_nid(struct rs_exp *x, int32_t a, int32_t b, int32_t c)
{
    uint32_t h = (uint32_t)mix64((uint64_t)(uint32_t)a * 0x9e3779b1u ^ (uint64_t)(uint32_t)b << 20 ^ (uint64_t)(uint32_t)c << 40) & 255;
    if (x->dim_cache[h].nid && x->dim_cache[h].v[0] == a && x->dim_cache[h].v[1] == b && x->dim_cache[h].v[2] == c)
        return x->dim_cache[h].nid;
    uint32_t n = name_f(x, "[%d, %d, %d]", a, b, c);
    x->dim_cache[h].v[0] = a, x->dim_cache[h].v[1] = b, x->dim_cache[h].v[2] = c;
    x->dim_cache[h].nid = n;
    return n;
}

static void on_kernel(struct rs_exp *x, const struct rs_ev_CUDA_KERNEL *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, str_nid(x, e->name), RS_XCAT_kernel);
    gpu_common(x, &it, e->correlation, e->device, e->stream);
    arg_s(&it, RS_XK_grid, dim_nid(x, e->grid_x, e->grid_y, e->grid_z));
    arg_s(&it, RS_XK_block, dim_nid(x, e->block_x, e->block_y, e->block_z));
    emit_slice(x, stream_group(x, e->device, e->stream), &it);
}

static void on_memcpy(struct rs_exp *x, const struct rs_ev_CUDA_MEMCPY *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end), dur = end > ts ? end - ts : 0;
    uint32_t n, *c = e->copy_kind < 11 && e->src_kind < 8 && e->dst_kind < 8
                         ? &x->memcpy_nid[e->copy_kind][e->src_kind][e->dst_kind] : NULL;
    if (c && *c) n = *c;
    else {
        n = name_f(x, "Memcpy %s (%s -> %s)", e->copy_kind < 11 ? memcpy_kind[e->copy_kind] : "?",
                   e->src_kind < 8 ? mem_kind[e->src_kind] : "?", e->dst_kind < 8 ? mem_kind[e->dst_kind] : "?");
        if (c) *c = n;
    }
    item_init(&it, ts, dur, n, RS_XCAT_gpu_memcpy);
    gpu_common(x, &it, e->correlation, e->device, e->stream);
    arg_u(&it, RS_XK_bytes, RS_XA_U64, e->bytes);
    arg_d(&it, RS_XK_gbps, dur ? (double)e->bytes / (double)dur : 0);
    emit_slice(x, stream_group(x, e->device, e->stream), &it);
}

static void on_memset(struct rs_exp *x, const struct rs_ev_CUDA_MEMSET *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end), dur = end > ts ? end - ts : 0;
    uint32_t n;
    if (e->memory_kind < 8 && x->memset_nid[e->memory_kind]) n = x->memset_nid[e->memory_kind];
    else {
        n = name_f(x, "Memset (%s)", e->memory_kind < 8 ? mem_kind[e->memory_kind] : "?");
        if (e->memory_kind < 8) x->memset_nid[e->memory_kind] = n;
    }
    item_init(&it, ts, dur, n, RS_XCAT_gpu_memset);
    gpu_common(x, &it, e->correlation, e->device, e->stream);
    arg_u(&it, RS_XK_bytes, RS_XA_U64, e->bytes);
    arg_d(&it, RS_XK_gbps, dur ? (double)e->bytes / (double)dur : 0);
    emit_slice(x, stream_group(x, e->device, e->stream), &it);
}

static void on_sync(struct rs_exp *x, const struct rs_ev_CUDA_SYNC *e)
{
    static const char *const types[] = {"cuda sync", "Event Sync", "Stream Wait Event", "Stream Sync",
                                        "Context Sync"};
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    uint32_t ty = e->type < 5 ? e->type : 0;
    if (!x->sync_nid[ty]) x->sync_nid[ty] = name_s(x, types[ty]);
    item_init(&it, ts, end > ts ? end - ts : 0, x->sync_nid[ty], RS_XCAT_cuda_sync);
    arg_u(&it, RS_XK_correlation, RS_XA_U64, e->correlation);
    struct xgroup *g = group_get(x, XG_CSYNC, 0, 0);
    if (g && !g->nlanes) {
        g->maxl = XLANES_ASYNC;
        g->name = name_s(x, "CUDA synchronization");
        g->jtid0 = synth_jtid(x);
        lane_new(x, g);
    }
    emit_slice(x, g, &it);
}

/* Runtime calls that Kineto links to GPU work (launches, copies, memsets, syncs). */
static int api_links(const char *n)
{
    return strstr(n, "Launch") || strstr(n, "Memcpy") || strstr(n, "Memset") || strstr(n, "emcpy") ||
           strstr(n, "Synchronize") || strstr(n, "StreamWaitEvent");
}

static void on_api(struct rs_exp *x, uint32_t tid, const struct rs_ev_CUDA_API *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    uint32_t nid = str_nid(x, e->name);
    const char *n = rs_xname_get(x, nid)->s;
    int drv = n[0] == 'c' && n[1] == 'u' && n[2] != 'd';
    item_init(&it, ts, end > ts ? end - ts : 0, nid, drv ? RS_XCAT_cuda_driver : RS_XCAT_cuda_runtime);
    arg_u(&it, RS_XK_correlation, RS_XA_U64, e->correlation);
    arg_u(&it, RS_XK_cbid, RS_XA_U64, e->cbid);
    if (e->ret) arg_u(&it, RS_XK_ret, RS_XA_I64, e->ret);
    /* whether the call links to GPU work, cached per name (direct-mapped) */
    uint32_t *lc = &x->api_link_cache[nid & 255];
    if ((*lc >> 1) != nid) *lc = nid << 1 | (uint32_t)!!api_links(n);
    if ((*lc & 1) && (it.flow_out = corr_flow(x, e->correlation))) corr_started(x, e->correlation);
    uint32_t t = e->tid ? e->tid : tid;
    emit_slice(x, thread_side_group(x, XG_CUDA, t, "cuda"), &it);
}

static void on_copy_call(struct rs_exp *x, uint32_t tid, const struct rs_ev_CUDA_COPY_CALL *e)
{
    static const char *const k[] = {"HtoH", "HtoD", "DtoH", "DtoD", "Default"};
    struct rs_xitem it;
    uint32_t ck = e->copy_kind < 5 ? e->copy_kind : 5, *c = &x->copy_nid[!!e->async][ck];
    if (!*c) *c = name_f(x, "%s %s", e->async ? "cudaMemcpyAsync" : "cudaMemcpy", ck < 5 ? k[ck] : "?");
    item_init(&it, al(x, e->h.ts), e->dur, *c, RS_XCAT_cuda_runtime);
    arg_u(&it, RS_XK_bytes, RS_XA_U64, e->bytes);
    if (e->ret) arg_u(&it, RS_XK_ret, RS_XA_I64, (uint64_t)(int64_t)e->ret);
    emit_slice(x, thread_group(x, tid), &it);
}

/* NVTX push/pop: B/E on a per-thread NVTX track; depth is bounded, stray pops are ignored. Kineto's
 * readers (HTA) take complete events only, so there the push is kept (bounded stack) and the pop writes
 * an "X" event. */
static void nvtx_emit_x(struct rs_exp *x, struct xgroup *g, uint64_t end)
{
    struct xpush *p = &g->pushes[g->nvtx_depth];
    struct rs_xitem it;
    item_init(&it, p->ts, end > p->ts ? end - p->ts : 0, p->msg, RS_XCAT_user_annotation);
    if (p->dom) arg_s(&it, RS_XK_domain, p->dom);
    it.t = &g->lane[0]->t;
    x->be->slice(x->b, &it);
    x->st.items_out++;
}

static void on_nvtx_push(struct rs_exp *x, uint32_t tid, const struct rs_ev_NVTX_PUSH *e)
{
    struct xgroup *g = thread_side_group(x, XG_NVTX, tid, "nvtx");
    if (!g || !g->nlanes) return;
    uint64_t ts = al(x, e->h.ts);
    struct xlane *l = g->lane[0];
    if (ts < l->last_start) ts = l->last_start;   /* B/E must stay ordered on the track */
    if (g->nvtx_depth >= XNVTX_DEPTH) return;
    l->last_start = ts;
    declare(x, &l->t);
    if (x->o.format == RS_EXP_KINETO) {
        if (!g->pushes && !(g->pushes = malloc(XNVTX_DEPTH * sizeof *g->pushes))) return;
        g->pushes[g->nvtx_depth++] = (struct xpush){ts, str_nid(x, e->message), e->domain ? str_nid(x, e->domain) : 0};
        return;
    }
    g->nvtx_depth++;
    struct rs_xitem it;
    item_init(&it, ts, 0, str_nid(x, e->message), RS_XCAT_user_annotation);
    if (e->domain) arg_s(&it, RS_XK_domain, str_nid(x, e->domain));
    it.t = &l->t;
    x->be->begin(x->b, &it);
    x->st.items_out++;
}

static void on_nvtx_pop(struct rs_exp *x, uint32_t tid, const struct rs_ev_NVTX_POP *e)
{
    struct xgroup *g = thread_side_group(x, XG_NVTX, tid, "nvtx");
    if (!g || !g->nlanes || !g->nvtx_depth) return;
    uint64_t ts = al(x, e->h.ts);
    struct xlane *l = g->lane[0];
    if (ts < l->last_start) ts = l->last_start;
    l->last_start = ts;
    g->nvtx_depth--;
    if (g->pushes) nvtx_emit_x(x, g, ts);
    else x->be->end(x->b, &l->t, ts);
}

static struct xcache *cache_slot(struct xcache *c, uint64_t key) { return &c[mix64(key) & (XCACHE - 1)]; }

static void on_nvtx_start(struct rs_exp *x, const struct rs_ev_NVTX_START *e)
{
    struct xcache *s = cache_slot(x->p.nvtxr, e->id + 1);
    s->key = e->id + 1;
    s->ts = e->h.ts;
    s->v = str_nid(x, e->message);
}

static void on_nvtx_end(struct rs_exp *x, const struct rs_ev_NVTX_END *e)
{
    struct xcache *s = cache_slot(x->p.nvtxr, e->id + 1);
    if (s->key != e->id + 1) return;   /* start not seen (or evicted) */
    s->key = 0;
    struct rs_xitem it;
    uint64_t ts = al(x, s->ts), end = al(x, e->h.ts);
    item_init(&it, ts, end > ts ? end - ts : 0, s->v, RS_XCAT_user_annotation);
    emit_slice(x, async_group(x, XG_NVTXASYNC, 0, 0, "NVTX ranges"), &it);
}

static void on_nvtx_mark(struct rs_exp *x, uint32_t tid, const struct rs_ev_NVTX_MARK *e)
{
    struct rs_xitem it;
    item_init(&it, al(x, e->h.ts), 0, str_nid(x, e->message), RS_XCAT_user_annotation);
    emit_instant(x, thread_group(x, tid), &it);
}

static void on_nvml(struct rs_exp *x, const struct rs_ev_NVML_SAMPLE *e)
{
    uint64_t key = (uint64_t)e->field << 32 | e->scope;
    struct xgroup *g = group_get(x, XG_CTR_NVML, e->device, key);
    if (g && !g->nlanes) {
        const char *what = e->field == 138 ? "NVLink TX KiB" : e->field == 139 ? "NVLink RX KiB"
                         : e->field == 197 ? "PCIe TX bytes" : e->field == 198 ? "PCIe RX bytes" : NULL;
        char b[64];
        if (!what) {
            snprintf(b, sizeof b, "NVML field %u", e->field);
            what = b;
        }
        uint32_t n = e->scope == 0xffffffffu ? name_f(x, "GPU %u %s", e->device, what)
                                             : name_f(x, "GPU %u link %u %s", e->device, e->scope, what);
        g = counter_group(x, XG_CTR_NVML, e->device, key, n);
    }
    emit_counter(x, g, al(x, e->h.ts), (double)e->value);
}

/* ---------------- NCCL ---------------- */

static const char *const nccl_funcs[RS_NCCL_NFUNCS] = {
#define XF(n, name) [n] = "nccl" #name,
    RS_NCCL_FUNCS(XF)
#undef XF
};

static struct xgroup *comm_group(struct rs_exp *x, uint64_t hash)
{
    struct xgroup *g = group_get(x, XG_COMM, hash, 0);
    if (g && !g->nlanes) {
        g->maxl = XLANES_ASYNC;
        g->name = name_f(x, "NCCL comm %#llx", (unsigned long long)hash);
        g->jtid0 = synth_jtid(x);
        lane_new(x, g);
    }
    return g;
}

static void on_nccl_call(struct rs_exp *x, uint32_t tid, const struct rs_ev_NCCL_CALL *e)
{
    struct rs_xitem it;
    item_init(&it, al(x, e->h.ts), e->dur,
              e->func < RS_NCCL_NFUNCS ? name_s(x, nccl_funcs[e->func]) : NID(x, NCCL_CALL), RS_XCAT_nccl);
    arg_u(&it, RS_XK_count, RS_XA_U64, e->count);
    arg_u(&it, RS_XK_seq, RS_XA_U64, e->seq);
    arg_u(&it, RS_XK_comm, RS_XA_HEX, e->comm_hash ? e->comm_hash : e->comm);
    if (e->peer >= 0) arg_u(&it, RS_XK_peer, RS_XA_I64, (uint64_t)(int64_t)e->peer);
    if (e->ret) arg_u(&it, RS_XK_ret, RS_XA_I64, (uint64_t)(int64_t)e->ret);
    emit_slice(x, thread_group(x, tid), &it);
}

static void on_coll(struct rs_exp *x, const struct rs_ev_NCCL_COLL *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, str_nid(x, e->func), RS_XCAT_nccl);
    arg_u(&it, RS_XK_seq, RS_XA_U64, e->seq);
    arg_u(&it, RS_XK_count, RS_XA_U64, e->count);
    arg_s(&it, RS_XK_algo, str_nid(x, e->algo));
    arg_s(&it, RS_XK_proto, str_nid(x, e->proto));
    arg_u(&it, RS_XK_nchannels, RS_XA_U64, e->nchannels);
    emit_slice(x, comm_group(x, e->comm_hash), &it);
}

static void on_p2p(struct rs_exp *x, const struct rs_ev_NCCL_P2P *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, str_nid(x, e->func), RS_XCAT_nccl);
    arg_u(&it, RS_XK_count, RS_XA_U64, e->count);
    arg_u(&it, RS_XK_peer, RS_XA_I64, (uint64_t)(int64_t)e->peer);
    emit_slice(x, comm_group(x, e->comm_hash), &it);
}

static struct xgroup *proxy_group(struct rs_exp *x, uint32_t gk, uint32_t ch, uint32_t is_send)
{
    struct xgroup *g = group_get(x, gk, ch, is_send);
    if (g && !g->nlanes) {
        g->maxl = XLANES_ASYNC;
        g->name = ch == UINT32_MAX ? name_f(x, "NCCL proxy %s %s", is_send ? "send" : "recv",
                                            gk == XG_STATES ? "step states" : "steps")
                                   : name_f(x, "NCCL proxy ch %u %s%s", ch, is_send ? "send" : "recv",
                                            gk == XG_STATES ? " states" : "");
        g->jtid0 = synth_jtid(x);
        lane_new(x, g);
    }
    return g;
}

static void on_proxy_op(struct rs_exp *x, const struct rs_ev_NCCL_PROXY_OP *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, NID(x, PROXY_OP), RS_XCAT_nccl);
    arg_u(&it, RS_XK_channel, RS_XA_U64, e->channel);
    arg_u(&it, RS_XK_peer, RS_XA_I64, (uint64_t)(int64_t)e->peer);
    arg_u(&it, RS_XK_count, RS_XA_U64, e->nsteps);
    emit_slice(x, proxy_group(x, XG_PROXY, e->channel, e->is_send), &it);
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
        nid = n ? name_s(x, n) : name_f(x, "state %u", s->v);
        if (s->v < 32) x->state_nid[s->v] = nid;
    }
    item_init(&it, ts, end > ts ? end - ts : 0, nid, RS_XCAT_nccl);
    emit_slice(x, proxy_group(x, XG_STATES, UINT32_MAX, s->v2), &it);   /* one track per direction */
}

static void on_proxy_state(struct rs_exp *x, const struct rs_ev_NCCL_PROXY_STATE *e)
{
    if (e->state == 19) return;   /* ProxyOp state: the op's slice shows it */
    struct xcache *s = cache_slot(x->p.states, e->handle);
    if (s->key == e->handle && e->h.ts >= s->ts) state_close(x, s, e->h.ts);
    s->key = e->handle;
    s->ts = e->h.ts;
    s->v = e->state;
    s->v2 = e->state == 8 || e->state == 9 || e->state == 20;   /* the send-side states */
}

static void on_proxy_step(struct rs_exp *x, const struct rs_ev_NCCL_PROXY_STEP *e)
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
    emit_slice(x, proxy_group(x, XG_STEPS, UINT32_MAX, e->is_send), &it);
}

static void on_kernel_ch(struct rs_exp *x, const struct rs_ev_NCCL_KERNEL_CH *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, NID(x, KERNEL_CH), RS_XCAT_nccl);
    arg_u(&it, RS_XK_channel, RS_XA_U64, e->channel);
    struct xgroup *g = group_get(x, XG_KCH, e->channel, 0);
    if (g && !g->nlanes) {
        g->maxl = XLANES_ASYNC;
        g->name = name_f(x, "NCCL kernel ch %u", e->channel);
        g->jtid0 = synth_jtid(x);
        lane_new(x, g);
    }
    emit_slice(x, g, &it);
}

static void on_group(struct rs_exp *x, const struct rs_ev_NCCL_GROUP *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, NID(x, GROUP), RS_XCAT_nccl);
    emit_slice(x, comm_group(x, e->comm_hash), &it);
}

static void on_net_ib(struct rs_exp *x, const struct rs_ev_NCCL_NET_IB *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, NID(x, NET_IB), RS_XCAT_nccl);
    arg_u(&it, RS_XK_qp, RS_XA_U64, e->qp_num);
    arg_u(&it, RS_XK_wr_id, RS_XA_HEX, e->wr_id);
    arg_u(&it, RS_XK_bytes, RS_XA_U64, e->length);
    emit_slice(x, async_group(x, XG_QP, e->qp_num, 1, "QP %u (NCCL net plugin)", e->qp_num), &it);
}

static void on_net_sock(struct rs_exp *x, const struct rs_ev_NCCL_NET_SOCK *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, NID(x, NET_SOCK), RS_XCAT_nccl);
    arg_u(&it, RS_XK_bytes, RS_XA_U64, e->length);
    arg_u(&it, RS_XK_opcode, RS_XA_I64, (uint64_t)(int64_t)e->op);
    emit_slice(x, async_group(x, XG_QP, 0, 3, "NCCL net socket"), &it);
}

/* v5 API-level plugin events (off by default: the API wrappers record the same calls). */
static void on_prof_api(struct rs_exp *x, const struct rs_ev_NCCL_PROF_API *e)
{
    struct rs_xitem it;
    uint64_t ts = al(x, e->h.ts), end = al(x, e->end);
    item_init(&it, ts, end > ts ? end - ts : 0, e->func ? str_nid(x, e->func) : NID(x, PROF_API), RS_XCAT_nccl);
    arg_u(&it, RS_XK_count, RS_XA_U64, e->count);
    arg_u(&it, RS_XK_stream, RS_XA_HEX, e->stream);
    emit_slice(x, async_group(x, XG_COMM, 0, 1, "NCCL API (profiler plugin)"), &it);
}

static void on_prof_init(struct rs_exp *x, const struct rs_ev_NCCL_PROF_INIT *e)
{
    struct xgroup *g = comm_group(x, e->comm_hash);
    if (g && e->comm_name && !g->lane[0]->t.declared)
        g->name = g->lane[0]->t.name = name_f(x, "NCCL comm %s (%#llx)", rs_xname_get(x, str_nid(x, e->comm_name))->s,
                                              (unsigned long long)e->comm_hash);
}

/* ---------------- core ---------------- */

static void rs_instant(struct rs_exp *x, uint64_t ts, uint32_t name, int key, uint32_t msg, uint64_t n)
{
    struct xgroup *g = group_get(x, XG_RS, 0, 0);
    if (g && !g->nlanes) {
        g->nest = 1;
        g->maxl = XLANES_NEST;
        g->name = name_s(x, "railscope");
        g->jtid0 = synth_jtid(x);
        g->sort = -2;
        lane_new(x, g);
    }
    struct rs_xitem it;
    item_init(&it, ts, 0, name, RS_XCAT_railscope);
    if (msg) arg_s(&it, key, msg);
    else arg_u(&it, key, RS_XA_U64, n);
    emit_instant(x, g, &it);
}

void rs_exp_event(struct rs_exp *x, uint32_t tid, const struct rs_ev_hdr *h)
{
    if (!x->in_proc) return;
    x->st.events_in++;
    unsigned k = h->kind;
    if (k == RS_EV_NONE || k >= RS_EV_COUNT || h->size < rs_kinds[k].size) return;
    switch (k) {
    case RS_EV_STRING: {
        const struct rs_ev_STRING *e = (const void *)h;
        if (sizeof *e + e->len <= h->size) rs_exp_string(x, e->id, (const char *)(e + 1), e->len);
        break;
    }
    case RS_EV_CLOCK: {
        const struct rs_ev_CLOCK *e = (const void *)h;
        if (e->realtime_ns) x->p.off = e->realtime_ns - x->o.base_realtime_ns - e->mono_ns;
        break;
    }
    case RS_EV_THREAD_START: {
        const struct rs_ev_THREAD_START *e = (const void *)h;
        struct xgroup *g = thread_group(x, tid);
        if (g && e->name) {
            uint32_t n = name_f(x, "%s (%u)", rs_xname_get(x, str_nid(x, e->name))->s, tid);
            g->name = n;
            struct rs_xtrack *t = &g->lane[0]->t;
            t->name = n;
            if (t->declared) x->be->track(x->b, t);   /* rename */
        }
        break;
    }
    case RS_EV_DROPS: {
        const struct rs_ev_DROPS *e = (const void *)h;
        rs_instant(x, al(x, h->ts), NID(x, DROPS), RS_XK_events, 0, e->events);
        break;
    }
    case RS_EV_WARNING: {
        const struct rs_ev_WARNING *e = (const void *)h;
        rs_instant(x, al(x, h->ts), NID(x, WARNING), RS_XK_message, str_nid(x, e->message), 0);
        break;
    }
    case RS_EV_PARTIAL: {
        const struct rs_ev_PARTIAL *e = (const void *)h;
        rs_instant(x, al(x, h->ts), NID(x, PARTIAL), RS_XK_message, str_nid(x, e->why), 0);
        break;
    }
    case RS_EV_MARK: {
        const struct rs_ev_MARK *e = (const void *)h;
        struct rs_xitem it;
        item_init(&it, al(x, h->ts), 0, e->name ? str_nid(x, e->name) : NID(x, MARK), RS_XCAT_user_annotation);
        arg_u(&it, RS_XK_value, RS_XA_U64, e->value);
        emit_instant(x, thread_group(x, tid), &it);
        break;
    }
    case RS_EV_IBV_OPEN_DEVICE: on_open_device(x, tid, (const void *)h); break;
    case RS_EV_IBV_REG_MR: on_reg_mr(x, tid, (const void *)h); break;
    case RS_EV_IBV_CREATE_QP: on_create_qp(x, tid, (const void *)h); break;
    case RS_EV_IBV_POST_SEND: on_post_send(x, tid, (const void *)h); break;
    case RS_EV_IBV_POST_RECV: on_post_recv(x, tid, (const void *)h); break;
    case RS_EV_IBV_WC: on_wc(x, tid, (const void *)h); break;
    case RS_EV_CUDA_KERNEL: on_kernel(x, (const void *)h); break;
    case RS_EV_CUDA_MEMCPY: on_memcpy(x, (const void *)h); break;
    case RS_EV_CUDA_MEMSET: on_memset(x, (const void *)h); break;
    case RS_EV_CUDA_SYNC: on_sync(x, (const void *)h); break;
    case RS_EV_CUDA_API: on_api(x, tid, (const void *)h); break;
    case RS_EV_CUDA_COPY_CALL: on_copy_call(x, tid, (const void *)h); break;
    case RS_EV_CUPTI_DROPPED: {
        const struct rs_ev_CUPTI_DROPPED *e = (const void *)h;
        rs_instant(x, al(x, h->ts), NID(x, CUPTI_DROPPED), RS_XK_events, 0, e->count);
        break;
    }
    case RS_EV_NVTX_PUSH: on_nvtx_push(x, tid, (const void *)h); break;
    case RS_EV_NVTX_POP: on_nvtx_pop(x, tid, (const void *)h); break;
    case RS_EV_NVTX_START: on_nvtx_start(x, (const void *)h); break;
    case RS_EV_NVTX_END: on_nvtx_end(x, (const void *)h); break;
    case RS_EV_NVTX_MARK: on_nvtx_mark(x, tid, (const void *)h); break;
    case RS_EV_NVML_SAMPLE: on_nvml(x, (const void *)h); break;
    case RS_EV_NCCL_CALL: on_nccl_call(x, tid, (const void *)h); break;
    case RS_EV_NCCL_PROF_INIT: on_prof_init(x, (const void *)h); break;
    case RS_EV_NCCL_COLL: on_coll(x, (const void *)h); break;
    case RS_EV_NCCL_P2P: on_p2p(x, (const void *)h); break;
    case RS_EV_NCCL_PROXY_OP: on_proxy_op(x, (const void *)h); break;
    case RS_EV_NCCL_PROXY_STEP: on_proxy_step(x, (const void *)h); break;
    case RS_EV_NCCL_PROXY_STATE: on_proxy_state(x, (const void *)h); break;
    case RS_EV_NCCL_KERNEL_CH: on_kernel_ch(x, (const void *)h); break;
    case RS_EV_NCCL_GROUP: on_group(x, (const void *)h); break;
    case RS_EV_NCCL_NET_IB: on_net_ib(x, (const void *)h); break;
    case RS_EV_NCCL_NET_SOCK: on_net_sock(x, (const void *)h); break;
    case RS_EV_NCCL_PROF_API: on_prof_api(x, (const void *)h); break;
    case RS_EV_NCCL_COMM_INIT: {
        const struct rs_ev_NCCL_COMM_INIT *e = (const void *)h;
        struct rs_xitem it;
        item_init(&it, al(x, h->ts), e->dur, NID(x, COMM_INIT), RS_XCAT_nccl);
        arg_u(&it, RS_XK_comm, RS_XA_HEX, e->comm_hash ? e->comm_hash : e->comm);
        arg_u(&it, RS_XK_rank, RS_XA_I64, (uint64_t)(int64_t)e->rank);
        emit_slice(x, thread_group(x, tid), &it);
        break;
    }
    default: break;   /* not shown: HOST_FACT, MODULE, STACK, lifecycle, ... */
    }
}

/* ---------------- lifecycle ---------------- */

struct rs_exp *rs_exp_open(const struct rs_exp_opts *o, char *err, size_t errlen)
{
    return rs_exp_open_with(o, o->format == RS_EXP_PERFETTO ? &rs_xbackend_perfetto
                               : o->format == RS_EXP_CHROME ? &rs_xbackend_chrome
                                                            : &rs_xbackend_kineto,
                            err, errlen);
}

struct rs_exp *rs_exp_open_with(const struct rs_exp_opts *o, const struct rs_xbackend *be, char *err, size_t errlen)
{
    struct rs_exp *x = calloc(1, sizeof *x);
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    x->o = *o;
    if (!x->o.bw_bin_ns) x->o.bw_bin_ns = 1000000;
    if (!x->o.split_bytes) x->o.split_bytes = 500ull << 20;
    x->be = be;
    x->nproc = o->index_base;
    for (int i = 0; i < XN_COUNT; i++) x->nid_cache[i] = name_s(x, xname_str[i]);
    x->b = x->be->open(x, &x->o, err, errlen);
    if (!x->b) {
        for (uint32_t i = 0; i < x->nnames; i++) free((void *)x->names[i].s);
        free(x->names);
        free(x->nhash);
        free(x);
        return NULL;
    }
    return x;
}

int rs_exp_begin_process(struct rs_exp *x, const struct rs_exp_proc *pi)
{
    if (x->in_proc) rs_exp_end_process(x);
    struct xproc *p = &x->p;
    memset(p, 0, sizeof *p);
    p->index = x->nproc++;
    p->pid = pi->pid;
    p->rank = pi->rank;
    p->off = pi->start_realtime - x->o.base_realtime_ns - pi->start_mono;
    p->base_flow = (p->index + 1) << 40;
    p->next_jtid = 1000000000;  /* synthetic JSON tids stay clear of real ones */
    x->in_proc = 1;
    struct rs_xtrack *t = &p->ptrack;
    t->uuid = new_uuid(x);
    t->kind = RS_XT_PROCESS;
    t->pid = pi->pid;
    t->jpid = x->o.format == RS_EXP_KINETO ? (int64_t)pi->pid : (int64_t)p->index + 1;
    t->sort = pi->rank >= 0 ? (int32_t)pi->rank : (int32_t)(100000 + p->index);
    char host[128];
    snprintf(host, sizeof host, "%s", pi->host ? pi->host : "?");
    if (pi->rank < 0 && pi->pid == 0)
        t->name = name_f(x, "%s", host);
    else if (pi->rank >= 0)
        t->name = name_f(x, "rank %lld (%s pid %llu)%s%s", (long long)pi->rank, host, (unsigned long long)pi->pid,
                         pi->label ? " " : "", pi->label ? pi->label : "");
    else
        t->name = name_f(x, "%s pid %llu%s%s", host, (unsigned long long)pi->pid, pi->label ? " " : "",
                         pi->label ? pi->label : "");
    struct rs_xproc_out po = {p->index, pi->pid, pi->rank, pi->world_size, pi->host, t};
    if (x->be->begin_process(x->b, &po, x->last_err, sizeof x->last_err)) {
        x->in_proc = 0;
        return -1;
    }
    declare(x, t);
    return 0;
}

int rs_exp_end_process(struct rs_exp *x)
{
    if (!x->in_proc) return 0;
    struct xproc *p = &x->p;
    uint64_t end = p->last_ts;
    /* Work requests still outstanding: shown up to the end of the trace. */
    for (uint32_t i = 0; i < p->qcap; i++) {
        struct xqp *q = &p->qps[i];
        if (!q->used) continue;
        struct xqp *owner = q;
        struct xfifo *fs[2] = {&q->sq, &q->rq};
        for (int k = 0; k < 2; k++) {
            for (uint32_t j = 0; j < fs[k]->n; j++) {
                struct xwr *w = fifo_at(fs[k], j);
                x->st.wr_no_completion++;
                if (owner) wr_emit(x, owner, w, end, NID(x, NOCOMP), 0, UINT64_MAX, 0);
            }
            free(fs[k]->v);
        }
        bw_end(x, &q->tx);
    }
    for (uint32_t i = 0; i < p->nctx; i++) bw_end(x, &p->ctxs[i].tx);
    /* close NVTX ranges left open */
    for (uint32_t i = 0; i < p->gcap; i++) {
        struct xgroup *g = p->gtab[i];
        if (g && g->gk == XG_NVTX && g->nlanes) {
            uint64_t ts = end > g->lane[0]->last_start ? end : g->lane[0]->last_start;
            while (g->nvtx_depth) {
                g->nvtx_depth--;
                if (g->pushes) nvtx_emit_x(x, g, ts);
                else x->be->end(x->b, &g->lane[0]->t, ts);
            }
        }
    }
    for (uint32_t i = 0; i < XCACHE; i++) {   /* proxy states never closed by their step */
        struct xcache *s = &p->states[i];
        if (s->key) state_close(x, s, s->ts);
    }
    x->be->end_process(x->b);
    for (uint32_t i = 0; i < p->gcap; i++)
        if (p->gtab[i]) group_free(p->gtab[i]);
    free(p->gtab);
    free(p->qps);
    free(p->strmap);
    free(p->corr);
    x->in_proc = 0;
    return 0;
}

const char *rs_exp_last_error(const struct rs_exp *x) { return x->last_err; }

void rs_exp_annotation(struct rs_exp *x, uint64_t ts_ns, const char *title, const char *text)
{
    if (x->o.format == RS_EXP_KINETO) return;   /* HTA would take an extra file for a rank */
    if (!x->findings_proc) {   /* a pseudo-process after the real ones: "railscope analysis" */
        if (x->in_proc) rs_exp_end_process(x);
        struct rs_exp_proc pi = {.host = "railscope analysis", .pid = 0, .rank = -1, .label = NULL};
        pi.start_realtime = x->o.base_realtime_ns;
        if (rs_exp_begin_process(x, &pi)) return;
        x->findings_proc = 1;
    }
    if (!x->in_proc) return;
    struct rs_xitem it;
    item_init(&it, ts_ns, 0, name_s(x, title ? title : "finding"), RS_XCAT_railscope);
    if (text) arg_s(&it, RS_XK_message, name_s(x, text));
    emit_instant(x, async_group(x, XG_RS, 1, 0, "findings"), &it);
}

int rs_exp_close(struct rs_exp *x, struct rs_exp_stats *st, char *err, size_t errlen)
{
    if (x->in_proc) rs_exp_end_process(x);
    struct rs_exp_stats s = x->st;
    int rc = x->be->close(x->b, &s, err, errlen);
    if (st) *st = s;
    for (uint32_t i = 0; i < x->nnames; i++) free((void *)x->names[i].s);
    free(x->names);
    free(x->nhash);
    free(x);
    return rc;
}
