/* The exporter's translator: railscope events of one process at a time -> tracks, slices, instants,
 * counters and flows for a backend (export_int.h). State is bounded: per track a few lanes, per QP a ring
 * of outstanding work requests (capped), per counter one bin, small direct-mapped caches for NCCL/NVTX
 * handles. Nothing is kept per event.
 *
 * Lanes: viewers need the slices of one track to nest. Overlapping work (several WRs in flight on a QP,
 * NCCL proxy steps) goes to the first lane of the track where it fits; lanes are extra tracks named
 * "<track> #k". A slice is placed only where it starts no earlier than the lane's previous slice, so
 * every lane is also in time order in the output.
 *
 * This file: names, tracks and lanes, emitting, the dispatch by kind and the lifecycle. The families'
 * translations: export_verbs.c, export_cuda.c, export_nccl.c (shared declarations: export_xlate.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export_xlate.h"
#include "formats/nvtx_msg.h"
#include "util/utf8.h"
#include "util/xalloc.h"

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

/* Copy s into a well-formed UTF-8 string, cut at RS_XNAME_MAX input bytes: controls -> ' ', ill-formed
 * sequences (invalid bytes, encoded surrogates, overlong forms, > U+10FFFF) -> U+FFFD (util/utf8.h), so
 * every JSON and protobuf string the exporters write is valid UTF-8 (issue 17 D9). d needs 3 * n + 1. */
static size_t sanitize(char *d, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t o = 0;
    if (n > RS_XNAME_MAX) n = RS_XNAME_MAX;
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        if (c < 0x80) {
            d[o++] = c < 0x20 || c == 0x7f ? ' ' : (char)c;
            i++;
            continue;
        }
        size_t bad, len = rs_utf8_seq(p + i, n - i, &bad);
        if (len) {
            memcpy(d + o, s + i, len);
            o += len;
            i += len;
        } else {
            memcpy(d + o, RS_UTF8_REPLACEMENT, 3);
            o += 3;
            i += bad;
        }
    }
    d[o] = 0;
    return o;
}

uint32_t xl_name_n(struct rs_exp *x, const char *s, size_t n)
{
    char clean[RS_XNAME_MAX * 4 + 1];
    if (!s) s = "", n = 0;
    n = sanitize(clean, s, n);
    uint32_t h = hash_bytes(clean, n);
    if (x->nnames * 2 + 2 >= x->nhcap) { /* grow + rehash */
        uint32_t nc = x->nhcap ? x->nhcap * 2 : 1024;
        uint32_t *nt = rs_xcalloc(nc, sizeof *nt, "export_xlate nt");
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
        struct rs_xname *nn = rs_xrealloc(x->names, nc * sizeof *nn, "export_xlate nn");
        if (!nn) return 0;
        x->names = nn;
        x->capnames = nc;
    }
    /* one allocation: the plain string, then its JSON literal */
    char *mem = rs_xmalloc(n + 1 + n * 6 + 3, "export_xlate mem");
    if (!mem) return 0;
    memcpy(mem, clean, n + 1);
    char *js = mem + n + 1, *q = js;
    *q++ = '"';
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)clean[i];
        if (c == '"' || c == '\\') {
            *q++ = '\\';
            *q++ = (char)c;
        } else if (c == '<') { /* keeps the JSON safe to embed in HTML too */
            memcpy(q, "\\u003c", 6);
            q += 6;
        } else *q++ = (char)c;
    }
    *q++ = '"';
    *q = 0;
    uint32_t id = x->nnames++;
    x->names[id] = (struct rs_xname){mem, js, (uint32_t)n, (uint32_t)(q - js)};
    x->nhash[j] = id;
    return id;
}
uint32_t xl_name_s(struct rs_exp *x, const char *s) { return xl_name_n(x, s, s ? strlen(s) : 0); }
uint32_t rs_xname_intern(struct rs_exp *x, const char *s) { return xl_name_s(x, s); }

uint32_t xl_name_f(struct rs_exp *x, const char *fmt, ...)
{
    char b[RS_XNAME_MAX + 1];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (n < 0) n = 0;
    if ((size_t)n > RS_XNAME_MAX) n = RS_XNAME_MAX;
    return xl_name_n(x, b, (size_t)n);
}

const struct rs_xname *rs_xname_get(const struct rs_exp *x, uint32_t nid)
{
    return &x->names[nid < x->nnames ? nid : 0];
}

static const char *const xname_str[XN_COUNT] = {
#define XN_STR(id, s) s,
    XNAMES(XN_STR)
#undef XN_STR
};

/* ---------------- tracks, lanes ---------------- */


const char rs_xdigits2[200] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                              "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                              "8081828384858687888990919293949596979899";

void xl_declare(struct rs_exp *x, struct rs_xtrack *t)
{
    if (!t->declared) {
        t->declared = 1;
        char *d = t->jpt; /* "pid":P,"tid":T: at most 6+20+7+20 = 53 > 47 only for absurd ids */
        char tmp[64];
        size_t n = 0;
        memcpy(tmp, "\"pid\":", 6);
        n = 6 + rs_xfmt_i64(tmp + 6, t->jpid);
        memcpy(tmp + n, ",\"tid\":", 7);
        n += 7;
        n += rs_xfmt_i64(tmp + n, t->jtid);
        if (n > sizeof t->jpt) n = 0; /* the backend formats it each time then */
        memcpy(d, tmp, n);
        t->jpt_len = (uint8_t)n;
        x->be->track(x->b, t);
    }
}

int64_t xl_synth_jtid(struct rs_exp *x) { return x->p.next_jtid++; }

/* Track uuids: a counter. With several processes (index_stride: how many) each process counts its own
 * tracks and interleaves them with the others' (k * stride + index + 1): unique, as small (short varints) as
 * one counter's, and the same whether one exporter writes every process or each its own part (-j). */
static uint64_t new_uuid(struct rs_exp *x)
{
    if (!x->o.index_stride) return ++x->next_uuid;
    return ++x->p.next_uuid * x->o.index_stride + x->p.index + 1;
}

/* Multiplicative hash of a group key (one lookup per event: keep it cheap). */
static inline uint32_t ghash(uint32_t gk, uint64_t a, uint64_t b)
{
    uint64_t h = (a + gk) * 0x9e3779b97f4a7c15ull ^ (b + 1) * 0xc2b2ae3d27d4eb4full;
    return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

struct xgroup *xl_group_find(struct rs_exp *x, uint32_t gk, uint64_t a, uint64_t b)
{
    struct xproc *p = &x->p;
    if (!p->gcap) return NULL;
    for (uint32_t j = ghash(gk, a, b) & (p->gcap - 1); p->gtab[j]; j = (j + 1) & (p->gcap - 1))
        if (p->gtab[j]->gk == gk && p->gtab[j]->a == a && p->gtab[j]->b == b) return p->gtab[j];
    return NULL;
}

struct xgroup *xl_group_get(struct rs_exp *x, uint32_t gk, uint64_t a, uint64_t b)
{
    struct xproc *p = &x->p;
    if (p->gn * 2 + 2 >= p->gcap) {
        uint32_t nc = p->gcap ? p->gcap * 2 : 64;
        struct xgroup **nt = rs_xcalloc(nc, sizeof *nt, "export_xlate nt");
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
    struct xgroup *g = rs_xcalloc(1, sizeof *g, "export_xlate g");
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

struct xlane *xl_lane_new(struct rs_exp *x, struct xgroup *g)
{
    struct xlane *l = rs_xcalloc(1, sizeof *l, "export_xlate l");
    if (!l) return NULL;
    int k = g->nlanes;
    l->t.uuid = new_uuid(x);
    l->t.parent_uuid = x->p.ptrack.uuid;
    l->t.kind = g->counter ? RS_XT_COUNTER : RS_XT_CHILD;
    l->t.name = k == 0 ? g->name : xl_name_f(x, "%s #%d", rs_xname_get(x, g->name)->s, k + 1);
    l->t.jpid = g->jpid;
    l->t.jtid = k == 0 ? g->jtid0 : xl_synth_jtid(x);
    int64_t sort = (int64_t)g->sort * 64 + k; /* ids from the trace are hostile input: clamp */
    l->t.sort = sort > INT32_MAX ? INT32_MAX : sort < INT32_MIN ? INT32_MIN : (int32_t)sort;
    l->t.pid = x->p.pid;
    if (g->gk == XG_THREAD && k == 0) {
        l->t.kind = RS_XT_THREAD;
        l->t.tid = (uint32_t)g->a;
    }
    g->lane[g->nlanes++] = l;
    return l;
}

/* Would [s, e] get one of g's first `maxl` lanes (nothing changes)? As lane_for, which then takes that lane. */
int xl_lane_fits(const struct xgroup *g, uint64_t s, uint64_t e, int maxl)
{
    for (int i = 0; i < g->nlanes && i < maxl; i++) {
        const struct xlane *l = g->lane[i];
        if (s < l->last_start) continue;
        int d = l->depth;
        while (d && l->stack[d - 1] <= s) d--;
        if (d && (!g->nest || e > l->stack[d - 1] || d >= XSTACK)) continue;
        if (!i && g->row && e > s && xr_check(g->row, g->rsrc, s, e, 1)) continue;
        return 1;
    }
    return g->nlanes < maxl;
}

/* A slice the row guard kept off its thread's row got lane l (another row): counted once, where it lands (one
 * that finds no lane at all becomes an instant and is counted as lane_overflow alone). */
static struct xlane *moved_to(struct rs_exp *x, int moved, struct xlane *l)
{
    if (moved) {
        x->st.row_moved++;
        x->st.row_unsure += moved == 2;
    }
    return l;
}

/* Lane for [s, e] in g (allocating lanes as needed); NULL when every lane is taken (see emit_slice). A lane's
 * stack is popped only once the slice is placed there: a slice refused by a lane leaves it as it was. Lane 0 of
 * a thread's row also asks the row guard (export_row.c) and tells it what was placed. */
static struct xlane *lane_for(struct rs_exp *x, struct xgroup *g, uint64_t s, uint64_t e)
{
    int moved = 0; /* the row guard refused lane 0: 1 overlap, 2 not known (xr_check) */
    for (int i = 0; i < g->nlanes; i++) {
        struct xlane *l = g->lane[i];
        if (s < l->last_start) continue;
        int d = l->depth;
        while (d && l->stack[d - 1] <= s) d--;
        if (d && (!g->nest || e > l->stack[d - 1] || d >= XSTACK)) continue;
        if (!i && g->row && e > s && (moved = xr_check(g->row, g->rsrc, s, e, 1)))
            continue; /* it would partially overlap another source's slice on the row: off the row */
        l->depth = d;
        l->stack[l->depth++] = e;
        l->last_start = s;
        if (!i && e > s && (g->row || g->gk == XG_THREAD)) xr_place(x, g, s, e);
        return moved_to(x, moved, l);
    }
    struct xlane *l = g->nlanes < g->maxl ? xl_lane_new(x, g) : NULL;
    if (!l) { /* an instant (emit_slice), counted there as lane_overflow, not as moved; said apart */
        x->st.row_overflow += moved != 0;
        return NULL;
    }
    l->stack[l->depth++] = e;
    l->last_start = s;
    return moved_to(x, moved, l);
}

static void group_free(struct xgroup *g)
{
    free(g->pushes);
    if (g->gk == XG_THREAD) xr_free(g->row);
    for (int i = 0; i < g->nlanes; i++) free(g->lane[i]);
    free(g);
}

/* Named groups. */
struct xgroup *xl_thread_group(struct rs_exp *x, uint32_t tid)
{
    struct xgroup *g = x->p.last_thread; /* most events come in runs of one thread */
    if (g && g->a == tid) return g;
    g = xl_group_get(x, XG_THREAD, tid, 0);
    x->p.last_thread = g;
    if (g && !g->nlanes) {
        g->nest = 1;
        g->maxl = XLANES_NEST;
        g->name = tid ? xl_name_f(x, "thread %u", tid) : xl_name_s(x, "railscope (tracer)");
        g->jtid0 = tid;
        g->sort = tid ? g->sort : -1;
        xl_lane_new(x, g);
    }
    return g;
}

/* Groups that share the thread's lane 0 (CUDA API calls arrive later in the file than the thread's own
 * events: a separate lane state keeps each in time order). In Kineto output the NVTX ranges share that row
 * too. The row guard (export_row.c) keeps the groups from partially overlapping each other there. */
struct xgroup *xl_thread_side_group(struct rs_exp *x, uint32_t gk, uint32_t tid, const char *what)
{
    struct xgroup *g = xl_group_get(x, gk, tid, 0);
    if (g && !g->nlanes) {
        struct xgroup *tg = xl_thread_group(x, tid);
        g->nest = 1;
        g->maxl = XLANES_NEST;
        /* Kineto: ranges (ProfilerStep#N for HTA) on the thread's own row; elsewhere a row of their own */
        g->jtid0 = gk == XG_NVTX && x->o.format != RS_EXP_KINETO ? xl_synth_jtid(x) : tid;
        g->name = xl_name_f(x, "thread %u %s", tid, what);
        struct xlane *l = xl_lane_new(x, g);
        /* Same track as the thread: API calls nest under the thread's other slices; in Kineto output the
         * NVTX ranges too (HTA reads ProfilerStep#N on the thread's row, and a row has one name). */
        if (l && tg && tg->nlanes && (gk == XG_CUDA || x->o.format == RS_EXP_KINETO)) {
            xl_declare(x, &tg->lane[0]->t);
            l->t = tg->lane[0]->t;
            xr_join(tg->row ? tg->row : xr_new(x, tg), gk == XG_CUDA ? XR_C : XR_N, g);
        }
    }
    return g;
}

/* The name is formatted only when the group is new: lookups stay cheap on the per-event path. */
struct xgroup *xl_async_group(struct rs_exp *x, uint32_t gk, uint64_t a, uint64_t b, const char *fmt, ...)
{
    struct xgroup *g = xl_group_get(x, gk, a, b);
    if (g && !g->nlanes) {
        char nm[RS_XNAME_MAX + 1];
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(nm, sizeof nm, fmt, ap);
        va_end(ap);
        g->maxl = XLANES_ASYNC;
        g->name = xl_name_n(x, nm, n < 0 ? 0 : (size_t)n < sizeof nm ? (size_t)n : sizeof nm - 1);
        g->jtid0 = xl_synth_jtid(x);
        xl_lane_new(x, g);
    }
    return g;
}

struct xgroup *xl_counter_group(struct rs_exp *x, uint32_t gk, uint64_t a, uint64_t b, uint32_t name)
{
    struct xgroup *g = xl_group_get(x, gk, a, b);
    if (g && !g->nlanes) {
        g->counter = 1;
        g->maxl = 1;
        g->name = name;
        g->jtid0 = xl_synth_jtid(x);
        xl_lane_new(x, g);
    }
    return g;
}

/* ---------------- emitting ---------------- */


void xl_emit_slice(struct rs_exp *x, struct xgroup *g, struct rs_xitem *it)
{
    if (!g) return;
    struct xlane *l = lane_for(x, g, it->ts, it->ts + it->dur);
    if (!l) {
        /* More overlap than lanes: show it as an instant where it ends (an instant nests anywhere) on the
         * first lane that is not ahead of that time. Its length stays in the arguments. */
        uint64_t e = it->ts + it->dur;
        for (int i = 0; i < g->nlanes && !l; i++)
            if (g->lane[i]->last_start <= e) l = g->lane[i];
        if (!l) { /* no lane may take it without breaking its order: left out, counted (never silently) */
            x->st.lane_overflow++;
            x->st.lane_dropped++;
            return;
        }
        while (l->depth && l->stack[l->depth - 1] <= e) l->depth--;
        l->last_start = e;
        arg_u(it, RS_XK_dur_ns, RS_XA_U64, it->dur);
        it->ts = e;
        it->dur = 0;
        x->st.lane_overflow++;
    }
    xl_declare(x, &l->t);
    it->t = &l->t;
    x->be->slice(x->b, it);
    x->st.items_out++;
}

void xl_emit_instant(struct rs_exp *x, struct xgroup *g, struct rs_xitem *it)
{
    xl_emit_slice(x, g, it); /* a zero-length slice: flows bind to it in every viewer */
}

void xl_emit_counter(struct rs_exp *x, struct xgroup *g, uint64_t ts, double v)
{
    if (!g || !g->nlanes) return;
    xl_declare(x, &g->lane[0]->t);
    x->be->counter(x->b, &g->lane[0]->t, ts, v);
    x->st.items_out++;
}

uint64_t xl_new_flow(struct rs_exp *x)
{
    if (x->o.no_flows) return 0;
    return x->p.base_flow | (++x->p.flow_seq & 0xffffffffffull);
}
/* CUDA flows use the correlation id (Kineto's ac2g ids): bit 39 keeps them apart from our own. */
uint64_t xl_corr_flow(struct rs_exp *x, uint32_t corr)
{
    if (x->o.no_flows || !corr) return 0;
    return x->p.base_flow | (1ull << 39) | corr;
}

/* ---------------- per-process strings ---------------- */

uint32_t xl_str_nid(struct rs_exp *x, uint32_t id)
{
    if (id && id < x->p.nstr && x->p.strmap[id]) return x->p.strmap[id];
    if (id > RS_NVTX_JOINED_ID && id - RS_NVTX_JOINED_ID < x->p.njmap && x->p.jmap[id - RS_NVTX_JOINED_ID])
        return x->p.jmap[id - RS_NVTX_JOINED_ID];
    return id ? NID(x, UNKNOWN) : NID(x, EMPTY);
}

/* map[i] = nid, the map grown (zeroed) to hold i; nothing when it cannot grow. */
static void map_set(uint32_t **map, uint32_t *n, uint32_t i, uint32_t nid)
{
    if (i >= *n) {
        uint32_t nc = *n ? *n : 256;
        while (nc <= i) nc *= 2;
        uint32_t *nm = rs_xrealloc(*map, nc * sizeof *nm, "export_xlate strmap");
        if (!nm) return;
        memset(nm + *n, 0, (nc - *n) * sizeof *nm);
        *map = nm;
        *n = nc;
    }
    (*map)[i] = nid;
}

void rs_exp_string(struct rs_exp *x, uint32_t id, const char *s, size_t len)
{
    if (!x->in_proc || !id) return;
    if (id > RS_NVTX_JOINED_ID) { /* an NVTX message the reader joined from its template and numbers */
        if (id - RS_NVTX_JOINED_ID < RS_NVTX_MAX_JOINED)
            map_set(&x->p.jmap, &x->p.njmap, id - RS_NVTX_JOINED_ID, xl_name_n(x, s, len));
        return;
    }
    if (id > (1u << 22)) return; /* 4 M strings: far beyond real traces, bounded for hostile ones */
    map_set(&x->p.strmap, &x->p.nstr, id, xl_name_n(x, s, len));
}

/* ---------------- core ---------------- */

static void rs_instant(struct rs_exp *x, uint64_t ts, uint32_t name, int key, uint32_t msg, uint64_t n)
{
    struct xgroup *g = xl_group_get(x, XG_RS, 0, 0);
    if (g && !g->nlanes) {
        g->nest = 1;
        g->maxl = XLANES_NEST;
        g->name = xl_name_s(x, "railscope");
        g->jtid0 = xl_synth_jtid(x);
        g->sort = -2;
        xl_lane_new(x, g);
    }
    struct rs_xitem it;
    item_init(&it, ts, 0, name, RS_XCAT_railscope);
    if (msg) arg_s(&it, key, msg);
    else arg_u(&it, key, RS_XA_U64, n);
    xl_emit_instant(x, g, &it);
}

void rs_exp_event(struct rs_exp *x, uint32_t tid, const struct rs_ev_hdr *h)
{
    if (!x->in_proc) return;
    unsigned k = h->kind;
    /* not the file's: a joined NVTX message handed over as a STRING (cli/export.c joined_string) */
    uint32_t sid = k == RS_EV_STRING && h->size >= sizeof(struct rs_ev_STRING)
                       ? ((const struct rs_ev_STRING *)(const void *)h)->id
                       : 0;
    if (sid <= RS_NVTX_JOINED_ID || sid == 0x7fffffffu) x->st.events_in++; /* 0x7fffffff: the PARTIAL reason */
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
        struct xgroup *g = xl_thread_group(x, tid);
        if (g && e->name) {
            uint32_t n = xl_name_f(x, "%s (%u)", rs_xname_get(x, xl_str_nid(x, e->name))->s, tid);
            g->name = n;
            struct rs_xtrack *t = &g->lane[0]->t;
            t->name = n;
            if (t->declared) x->be->track(x->b, t); /* rename */
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
        rs_instant(x, al(x, h->ts), NID(x, WARNING), RS_XK_message, xl_str_nid(x, e->message), 0);
        break;
    }
    case RS_EV_PARTIAL: {
        const struct rs_ev_PARTIAL *e = (const void *)h;
        rs_instant(x, al(x, h->ts), NID(x, PARTIAL), RS_XK_message, xl_str_nid(x, e->why), 0);
        break;
    }
    case RS_EV_MARK: {
        const struct rs_ev_MARK *e = (const void *)h;
        struct rs_xitem it;
        item_init(&it, al(x, h->ts), 0, e->name ? xl_str_nid(x, e->name) : NID(x, MARK), RS_XCAT_user_annotation);
        arg_u(&it, RS_XK_value, RS_XA_U64, e->value);
        xl_emit_instant(x, xl_thread_group(x, tid), &it);
        break;
    }
    case RS_EV_IBV_OPEN_DEVICE: xl_on_open_device(x, tid, (const void *)h); break;
    case RS_EV_IBV_REG_MR: xl_on_reg_mr(x, tid, (const void *)h); break;
    case RS_EV_IBV_CREATE_QP: xl_on_create_qp(x, tid, (const void *)h); break;
    case RS_EV_IBV_POST_SEND: xl_on_post_send(x, tid, (const void *)h); break;
    case RS_EV_IBV_POST_RECV: xl_on_post_recv(x, tid, (const void *)h); break;
    case RS_EV_IBV_WC: xl_on_wc(x, tid, (const void *)h); break;
    case RS_EV_IBV_GET_CQ_EVENT: xl_on_get_cq_event(x, tid, (const void *)h); break;
    case RS_EV_CUDA_KERNEL: xl_on_kernel(x, (const void *)h); break;
    case RS_EV_CUDA_MEMCPY: xl_on_memcpy(x, (const void *)h); break;
    case RS_EV_CUDA_MEMSET: xl_on_memset(x, (const void *)h); break;
    case RS_EV_CUDA_SYNC: xl_on_sync(x, (const void *)h); break;
    case RS_EV_CUDA_API: xl_on_api(x, tid, (const void *)h); break;
    case RS_EV_CUDA_COPY_CALL: xl_on_copy_call(x, tid, (const void *)h); break;
    case RS_EV_CUPTI_DROPPED: {
        const struct rs_ev_CUPTI_DROPPED *e = (const void *)h;
        rs_instant(x, al(x, h->ts), NID(x, CUPTI_DROPPED), RS_XK_events, 0, e->count);
        break;
    }
    case RS_EV_NVTX_PUSH: xl_on_nvtx_push(x, tid, (const void *)h); break;
    case RS_EV_NVTX_POP: xl_on_nvtx_pop(x, tid, (const void *)h); break;
    case RS_EV_NVTX_START: xl_on_nvtx_start(x, (const void *)h); break;
    case RS_EV_NVTX_END: xl_on_nvtx_end(x, (const void *)h); break;
    case RS_EV_NVTX_MARK: xl_on_nvtx_mark(x, tid, (const void *)h); break;
    case RS_EV_NVML_SAMPLE: xl_on_nvml(x, (const void *)h); break;
    case RS_EV_NCCL_CALL: xl_on_nccl_call(x, tid, (const void *)h); break;
    case RS_EV_NCCL_PROF_INIT: xl_on_prof_init(x, (const void *)h); break;
    case RS_EV_NCCL_COLL: xl_on_coll(x, (const void *)h); break;
    case RS_EV_NCCL_P2P: xl_on_p2p(x, (const void *)h); break;
    case RS_EV_NCCL_PROXY_OP: xl_on_proxy_op(x, (const void *)h); break;
    case RS_EV_NCCL_PROXY_STEP: xl_on_proxy_step(x, (const void *)h); break;
    case RS_EV_NCCL_PROXY_STATE: xl_on_proxy_state(x, (const void *)h); break;
    case RS_EV_NCCL_KERNEL_CH: xl_on_kernel_ch(x, (const void *)h); break;
    case RS_EV_NCCL_GROUP: xl_on_group(x, (const void *)h); break;
    case RS_EV_NCCL_NET_IB: xl_on_net_ib(x, (const void *)h); break;
    case RS_EV_NCCL_NET_SOCK: xl_on_net_sock(x, (const void *)h); break;
    case RS_EV_NCCL_PROF_API: xl_on_prof_api(x, (const void *)h); break;
    case RS_EV_NCCL_COMM_INIT: {
        const struct rs_ev_NCCL_COMM_INIT *e = (const void *)h;
        struct rs_xitem it;
        item_init(&it, al(x, h->ts), e->dur, NID(x, COMM_INIT), RS_XCAT_nccl);
        arg_u(&it, RS_XK_comm, RS_XA_HEX, e->comm_hash ? e->comm_hash : e->comm);
        arg_u(&it, RS_XK_rank, RS_XA_I64, (uint64_t)(int64_t)e->rank);
        xl_emit_slice(x, xl_thread_group(x, tid), &it);
        break;
    }
    default: break; /* not shown: HOST_FACT, MODULE, STACK, lifecycle, ... */
    }
}

/* ---------------- lifecycle ---------------- */

struct rs_exp *rs_exp_open(const struct rs_exp_opts *o, char *err, size_t errlen)
{
    return rs_exp_open_with(o,
                            o->format == RS_EXP_PERFETTO ? &rs_xbackend_perfetto
                            : o->format == RS_EXP_CHROME ? &rs_xbackend_chrome
                                                         : &rs_xbackend_kineto,
                            err, errlen);
}

struct rs_exp *rs_exp_open_with(const struct rs_exp_opts *o, const struct rs_xbackend *be, char *err, size_t errlen)
{
    struct rs_exp *x = rs_xcalloc(1, sizeof *x, "export_xlate x");
    if (!x) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    x->o = *o;
    if (!x->o.bw_bin_ns) x->o.bw_bin_ns = 1000000;
    if (!x->o.split_bytes) x->o.split_bytes = 500ull << 20;
    x->be = be;
    x->nproc = o->index_base;
    for (int i = 0; i < XN_COUNT; i++) x->nid_cache[i] = xl_name_s(x, xname_str[i]);
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
    x->st.files_in++;
    p->pid = pi->pid;
    p->rank = pi->rank;
    p->off = pi->start_realtime - x->o.base_realtime_ns - pi->start_mono;
    p->base_flow = (p->index + 1) << 40;
    p->next_jtid = 1000000000; /* synthetic JSON tids stay clear of real ones */
    x->in_proc = 1;
    struct rs_xtrack *t = &p->ptrack;
    t->uuid = new_uuid(x);
    t->kind = RS_XT_PROCESS;
    t->pid = pi->pid;
    t->jpid = x->o.format == RS_EXP_KINETO ? (int64_t)pi->pid : (int64_t)p->index + 1;
    t->sort = pi->rank >= 0 ? (int32_t)pi->rank : (int32_t)(100000 + p->index);
    char host[128];
    snprintf(host, sizeof host, "%s", pi->host ? pi->host : "?");
    if (pi->rank < 0 && pi->pid == 0) t->name = xl_name_f(x, "%s", host);
    else if (pi->rank >= 0)
        t->name = xl_name_f(x, "rank %lld (%s pid %llu)%s%s", (long long)pi->rank, host, (unsigned long long)pi->pid,
                            pi->label ? " " : "", pi->label ? pi->label : "");
    else
        t->name = xl_name_f(x, "%s pid %llu%s%s", host, (unsigned long long)pi->pid, pi->label ? " " : "",
                            pi->label ? pi->label : "");
    struct rs_xproc_out po = {p->index, pi->pid, pi->rank, pi->world_size, pi->host, t};
    if (x->be->begin_process(x->b, &po, x->last_err, sizeof x->last_err)) {
        x->in_proc = 0;
        return -1;
    }
    xl_declare(x, t);
    return 0;
}

void rs_exp_skip_process(struct rs_exp *x)
{
    if (x->in_proc) rs_exp_end_process(x);
    x->nproc++;
}

/* The reader found the input cut short (no PROC_END, a torn or damaged frame): say so inside the output, where
 * the viewer shows it, not only on stderr. At the last event exported, on the process's railscope track. */
void rs_exp_incomplete(struct rs_exp *x, const char *why)
{
    if (!x->in_proc) return;
    rs_instant(x, x->p.last_ts, NID(x, PARTIAL), RS_XK_message, xl_name_s(x, why && *why ? why : "input cut short"), 0);
}

int rs_exp_end_process(struct rs_exp *x)
{
    if (!x->in_proc) return 0;
    struct xproc *p = &x->p;
    xl_verbs_end(x); /* each family closes what it holds open */
    xl_cuda_end(x);
    xl_nccl_end(x);
    x->be->end_process(x->b);
    for (uint32_t i = 0; i < p->gcap; i++)
        if (p->gtab[i]) group_free(p->gtab[i]);
    free(p->gtab);
    free(p->qps);
    free(p->strmap);
    free(p->jmap);
    free(p->corr);
    x->in_proc = 0;
    return 0;
}

const char *rs_exp_last_error(const struct rs_exp *x) { return x->last_err; }

void rs_exp_annotation(struct rs_exp *x, uint64_t ts_ns, const char *title, const char *text)
{
    if (x->o.format == RS_EXP_KINETO) return; /* HTA would take an extra file for a rank */
    if (!x->findings_proc) {                  /* a pseudo-process after the real ones: "railscope analysis" */
        if (x->in_proc) rs_exp_end_process(x);
        struct rs_exp_proc pi = {.host = "railscope analysis", .pid = 0, .rank = -1, .label = NULL};
        pi.start_realtime = x->o.base_realtime_ns;
        if (rs_exp_begin_process(x, &pi)) return;
        x->findings_proc = 1;
    }
    if (!x->in_proc) return;
    struct rs_xitem it;
    item_init(&it, ts_ns, 0, xl_name_s(x, title ? title : "finding"), RS_XCAT_railscope);
    if (text) arg_s(&it, RS_XK_message, xl_name_s(x, text));
    xl_emit_instant(x, xl_async_group(x, XG_RS, 1, 0, "findings"), &it);
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
