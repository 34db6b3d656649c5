/* JSON backends: Chrome trace-event JSON (one file, optionally split) and Kineto-flavoured JSON (one file
 * per rank, so Holistic Trace Analysis can load a railscope run). Rules followed (reference F1, F4, F5):
 * ts/dur in microseconds with 3 decimals relative to the run's start; complete events "X" (zero-length
 * ones for instants, so flows bind to them); "B"/"E" for NVTX push/pop; flows v1 "s"/"t"/"f" ("bp":"e"),
 * CUDA ones named "ac2g" with the correlation id as Kineto does; "C" counters; "M" names and sort order.
 * Events are formatted by hand into the output buffer: no printf per event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "export_int.h"
#include "util/xalloc.h"

struct jtrack { /* declared tracks, re-announced at the top of each split file */
    int64_t jpid, jtid;
    uint32_t name, kind;
    int32_t sort;
};

struct jw {
    struct rs_exp *x;
    int kineto;
    struct rs_xout out;
    int first; /* no comma before the next event */
    int file_open;
    const struct rs_exp_opts *o;
    char base[4096]; /* chrome: OUT without ".json"; kineto: the directory */
    int part;        /* chrome split: file number */
    int warned;
    uint64_t bytes_done; /* bytes of closed files */
    uint64_t files;
    struct jtrack *tr;
    size_t ntr, captr;
    uint32_t *trh; /* index of tr by (jpid, jtid, kind): slot = index + 1, 0 = empty; open addressing */
    size_t trh_cap;
    int64_t rank, world; /* kineto: current file's rank */
    uint64_t pid;
    char host[128];
    int64_t *ranks_used;
    size_t nranks_used;
    uint64_t gpu_named; /* kineto: device pids given a process_name in this file */
    int err;
    char errmsg[4400];
};

#define RES (RS_XOUT_MAX_ITEM)

/* Pre-quoted pieces: "key": per argument key, ,"cat":"<cat>","name": per category. */
static const struct {
    const char *s;
    size_t n;
} jkeys[RS_XK_COUNT] = {
#define JK(id, str) {"\"" str "\":", sizeof("\"" str "\":") - 1},
    RS_XKEYS(JK)
#undef JK
};
static const struct {
    const char *s;
    size_t n;
} jcats[RS_XCAT_COUNT] = {
#define JC(c) {"\",\"cat\":\"" #c "\",\"name\":", sizeof("\",\"cat\":\"" #c "\",\"name\":") - 1},
    RS_XCATS(JC)
#undef JC
};

/* A double with up to 6 decimals, trailing zeros cut, without printf (GB/s, bytes, counts). */
static size_t fmt_dbl(char *d, double v)
{
    if (!(v == v) || v > 9e12 || v < -9e12) v = 0;
    size_t n = 0;
    if (v < 0) {
        d[n++] = '-';
        v = -v;
    }
    uint64_t m = (uint64_t)(v * 1e6 + 0.5);
    n += rs_xfmt_u64(d + n, m / 1000000);
    unsigned f = (unsigned)(m % 1000000);
    if (f) {
        d[n++] = '.';
        for (unsigned div = 100000; f; div /= 10) {
            d[n++] = (char)('0' + f / div);
            f %= div;
        }
    }
    return n;
}

static inline size_t cpy(char *d, const char *s, size_t n)
{
    memcpy(d, s, n);
    return n;
}
#define LIT(d, s) cpy((d), (s), sizeof(s) - 1)

size_t rs_exp_json_head(char *buf, size_t n, uint64_t base_realtime_ns)
{
    int k = snprintf(buf, n,
                     "{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"railscope\","
                     "\"baseTimeNanoseconds\":%llu},\"traceEvents\":[\n",
                     (unsigned long long)base_realtime_ns);
    return k < 0 ? 0 : (size_t)k < n ? (size_t)k : n - 1;
}
size_t rs_exp_json_tail(char *buf, size_t n)
{
    int k = snprintf(buf, n, "\n]}\n");
    return k < 0 ? 0 : (size_t)k < n ? (size_t)k : n - 1;
}

static void file_header(struct jw *w)
{
    char b[1024];
    size_t n;
    w->first = 1;
    if (w->o->part && !w->kineto) return; /* the caller writes the head once around all parts */
    if (w->kineto) {
        int k = snprintf(b, sizeof b,
                         "{\n  \"schemaVersion\": 1,\n  \"deviceProperties\": [],\n"
                         "  \"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %lld, \"world_size\": %lld},\n"
                         "  \"displayTimeUnit\": \"ms\",\n  \"baseTimeNanoseconds\": %llu,\n"
                         "  \"railscope\": {\"host\": \"%s\", \"pid\": %llu},\n  \"traceEvents\": [\n",
                         (long long)(w->rank >= 0 ? w->rank : 0), (long long)(w->world > 0 ? w->world : 1),
                         (unsigned long long)w->o->base_realtime_ns, w->host, (unsigned long long)w->pid);
        n = k < 0 ? 0 : (size_t)k;
    } else n = rs_exp_json_head(b, sizeof b, w->o->base_realtime_ns);
    rs_xout_write(&w->out, b, n);
}

static void file_footer(struct jw *w)
{
    if (w->o->part && !w->kineto) return;
    char b[16];
    rs_xout_write(&w->out, b, rs_exp_json_tail(b, sizeof b));
}

static int file_open(struct jw *w, const char *path)
{
    if (rs_xout_open(&w->out, path, w->o->inputs, w->o->ninputs)) {
        w->err = w->out.err;
        snprintf(w->errmsg, sizeof w->errmsg, "cannot write %s: %s", path, rs_xout_strerror(w->out.err));
        return -1;
    }
    w->file_open = 1;
    w->files++;
    file_header(w);
    return 0;
}

static int file_close(struct jw *w)
{
    if (!w->file_open) return 0;
    file_footer(w);
    w->bytes_done += w->out.bytes;
    char path[4096];
    snprintf(path, sizeof path, "%s", w->out.path);
    int e = rs_xout_close(&w->out);
    w->file_open = 0;
    if (e && !w->err) {
        w->err = e;
        snprintf(w->errmsg, sizeof w->errmsg, "write error on %s: %s", path, strerror(e));
    }
    return e ? -1 : 0;
}

/* ---- event pieces ---- */

static inline char *ev_start(struct jw *w)
{
    char *d = rs_xout_reserve(&w->out, RES);
    if (w->first) w->first = 0;
    else {
        d[0] = ',';
        d[1] = '\n';
        rs_xout_commit(&w->out, 2);
        d += 2;
    }
    return d;
}

static inline size_t pidtid_t(char *d, const struct rs_xtrack *t);
static inline size_t pidtid(char *d, int64_t pid, int64_t tid)
{
    size_t n = LIT(d, "\"pid\":");
    n += rs_xfmt_i64(d + n, pid);
    n += LIT(d + n, ",\"tid\":");
    n += rs_xfmt_i64(d + n, tid);
    return n;
}

static inline size_t pidtid_t(char *d, const struct rs_xtrack *t)
{
    if (t->jpt_len) {
        memcpy(d, t->jpt, t->jpt_len);
        return t->jpt_len;
    }
    return pidtid(d, t->jpid, t->jtid);
}

static void meta(struct jw *w, const char *what, int64_t pid, int64_t tid, uint32_t name, int32_t sort)
{
    char *d = ev_start(w);
    size_t n = LIT(d, "{\"ph\":\"M\",\"name\":\"");
    n += cpy(d + n, what, strlen(what));
    n += LIT(d + n, "_name\",");
    n += pidtid(d + n, pid, tid);
    n += LIT(d + n, ",\"args\":{\"name\":");
    const struct rs_xname *nm = rs_xname_get(w->x, name);
    n += cpy(d + n, nm->json, nm->json_len);
    n += LIT(d + n, "}},\n{\"ph\":\"M\",\"name\":\"");
    n += cpy(d + n, what, strlen(what));
    n += LIT(d + n, "_sort_index\",");
    n += pidtid(d + n, pid, tid);
    n += LIT(d + n, ",\"args\":{\"sort_index\":");
    n += rs_xfmt_i64(d + n, sort);
    n += LIT(d + n, "}}");
    rs_xout_commit(&w->out, n);
}

static void announce(struct jw *w, const struct jtrack *t)
{
    if (t->kind == RS_XT_COUNTER) return; /* counters are named by their C events */
    if (t->kind == RS_XT_PROCESS) meta(w, "process", t->jpid, 0, t->name, t->sort);
    else meta(w, "thread", t->jpid, t->jtid, t->name, t->sort);
}

/* Chrome split: roll over to OUT.<n>.json once past the limit. */
static void maybe_split(struct jw *w)
{
    if (w->kineto || w->out.bytes < w->o->split_bytes) return;
    if (!w->o->split) {
        if (!w->warned++)
            rs_xwarn(w->x,
                     "%s passed %llu MB: chrome://tracing and the Perfetto UI may fail to load it "
                     "(use --split, or --format perfetto)",
                     w->out.path, (unsigned long long)(w->o->split_bytes >> 20));
        return;
    }
    file_close(w);
    char path[4200];
    snprintf(path, sizeof path, "%s.%d.json", w->base, ++w->part);
    if (file_open(w, path)) return;
    for (size_t i = 0; i < w->ntr; i++) announce(w, &w->tr[i]);
}

/* The remembered tracks are looked up by (pid, tid, kind) through a hash index, so declaring N tracks is
 * O(N), not O(N^2): 1 M threads took minutes with a linear scan per new track (issue 17 D8). */
static size_t tr_slot(const struct jw *w, const struct jtrack *t)
{
    uint64_t h = (uint64_t)t->jpid * 0x9e3779b97f4a7c15ull ^ ((uint64_t)t->jtid + t->kind * 0x632be59bd9b4e019ull);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    return (size_t)h & (w->trh_cap - 1);
}
/* Index of the track with t's key in w->tr, or w->ntr when there is none; with add, the index then is
 * reserved for it (the caller appends tr[ntr]). */
static size_t tr_find(struct jw *w, const struct jtrack *t, int add)
{
    if (add && (w->ntr + 1) * 2 > w->trh_cap) {
        free(w->trh);
        w->trh_cap = w->trh_cap ? w->trh_cap * 2 : 256;
        while ((w->ntr + 1) * 2 > w->trh_cap) w->trh_cap *= 2;
        w->trh = rs_xcalloc(w->trh_cap, sizeof *w->trh, "export track index");
        for (size_t i = 0; i < w->ntr; i++) {
            size_t j = tr_slot(w, &w->tr[i]);
            while (w->trh[j]) j = (j + 1) & (w->trh_cap - 1);
            w->trh[j] = (uint32_t)i + 1;
        }
    }
    if (!w->trh_cap) return w->ntr;
    size_t j = tr_slot(w, t);
    for (; w->trh[j]; j = (j + 1) & (w->trh_cap - 1)) {
        const struct jtrack *e = &w->tr[w->trh[j] - 1];
        if (e->jpid == t->jpid && e->jtid == t->jtid && e->kind == t->kind) return w->trh[j] - 1;
    }
    if (add) w->trh[j] = (uint32_t)w->ntr + 1;
    return w->ntr;
}
/* Forget the tracks (a new process): a big index is dropped rather than cleared for every later file. */
static void tr_reset(struct jw *w)
{
    w->ntr = 0;
    if (w->trh_cap > 4096) {
        free(w->trh);
        w->trh = NULL;
        w->trh_cap = 0;
    } else if (w->trh_cap) {
        memset(w->trh, 0, w->trh_cap * sizeof *w->trh);
    }
}

/* ---- backend ---- */

static void *jw_open_common(struct rs_exp *x, const struct rs_exp_opts *o, int kineto, char *err, size_t errlen)
{
    struct jw *w = rs_xcalloc(1, sizeof *w, "export_json w");
    if (!w) return NULL;
    w->x = x;
    w->o = o;
    w->kineto = kineto;
    snprintf(w->base, sizeof w->base, "%s", o->out);
    if (kineto) {
        struct stat sb;
        if (mkdir(o->out, 0755) && errno != EEXIST) {
            snprintf(err, errlen, "cannot create directory %s: %s", o->out, strerror(errno));
            free(w);
            return NULL;
        }
        if (stat(o->out, &sb) || !S_ISDIR(sb.st_mode)) {
            snprintf(err, errlen, "%s exists and is not a directory (kineto writes one file per rank into it)", o->out);
            free(w);
            return NULL;
        }
        return w;
    }
    size_t bl = strlen(w->base);
    if (bl > 5 && !strcmp(w->base + bl - 5, ".json")) w->base[bl - 5] = 0;
    char path[4200];
    if (o->split) snprintf(path, sizeof path, "%s.%d.json", w->base, w->part = 0);
    else snprintf(path, sizeof path, "%s", o->out);
    if (file_open(w, path)) {
        snprintf(err, errlen, "%s", w->errmsg);
        free(w);
        return NULL;
    }
    return w;
}
static void *chrome_open(struct rs_exp *x, const struct rs_exp_opts *o, char *err, size_t errlen)
{
    return jw_open_common(x, o, 0, err, errlen);
}
static void *kineto_open(struct rs_exp *x, const struct rs_exp_opts *o, char *err, size_t errlen)
{
    return jw_open_common(x, o, 1, err, errlen);
}

static int jw_begin_process(void *b, const struct rs_xproc_out *p, char *err, size_t errlen)
{
    struct jw *w = b;
    w->gpu_named = 0;
    tr_reset(w); /* tracks of earlier processes are complete: split files announce only the current one */
    if (!w->kineto) return 0;
    w->rank = p->rank;
    w->world = p->world_size;
    w->pid = p->pid;
    snprintf(w->host, sizeof w->host, "%s", p->host ? p->host : "?");
    /* the host goes into the Kineto header and into a file name (other/HOST-pidN...): letters, digits and
     * ".-_" only, so a hostile header can neither break the JSON (D9) nor name a path ('/') */
    for (char *c = w->host; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
              *c == '-' || *c == '_'))
            *c = '_';
    int dup = 0;
    for (size_t i = 0; i < w->nranks_used; i++)
        if (w->ranks_used[i] == p->rank) dup = 1;
    int64_t *nr = rs_xrealloc(w->ranks_used, (w->nranks_used + 1) * sizeof *nr, "export_json nr");
    if (nr) {
        w->ranks_used = nr;
        nr[w->nranks_used++] = p->rank;
    }
    /* HTA loads every file of the directory as one rank: a process without a rank (a launcher) or a second
     * process of the same rank goes to OUT/other/ instead, where HTA does not look. */
    char path[4400];
    if (p->rank >= 0 && !dup) snprintf(path, sizeof path, "%s/rank%lld.pt.trace.json", w->base, (long long)p->rank);
    else {
        snprintf(path, sizeof path, "%s/other", w->base);
        if (mkdir(path, 0755) && errno != EEXIST) {
            snprintf(err, errlen, "cannot create directory %s: %s", path, strerror(errno));
            return -1;
        }
        if (p->rank >= 0)
            snprintf(path, sizeof path, "%s/other/rank%lld-pid%llu.pt.trace.json", w->base, (long long)p->rank,
                     (unsigned long long)p->pid);
        else
            snprintf(path, sizeof path, "%s/other/%s-pid%llu.pt.trace.json", w->base, w->host,
                     (unsigned long long)p->pid);
    }
    if (file_open(w, path)) {
        snprintf(err, errlen, "%s", w->errmsg);
        return -1;
    }
    return 0;
}

static void jw_track(void *b, const struct rs_xtrack *t)
{
    struct jw *w = b;
    if (!w->file_open) return;
    struct jtrack jt = {t->jpid, t->jtid, t->name, t->kind, t->sort};
    size_t i = tr_find(w, &jt, 1); /* a rename of a known track updates the remembered entry */
    if (i == w->ntr) {
        if (w->ntr == w->captr) {
            size_t nc = w->captr ? w->captr * 2 : 64;
            w->tr = rs_xrealloc(w->tr, nc * sizeof *w->tr, "export tracks");
            w->captr = nc;
        }
        w->ntr++;
    }
    w->tr[i] = jt;
    if (w->kineto && t->kind != RS_XT_PROCESS && t->jpid >= 0 && t->jpid < 64 && (uint64_t)t->jpid != w->pid &&
        !(w->gpu_named & (1ull << t->jpid))) { /* Kineto's GPU rows: pid = device */
        w->gpu_named |= 1ull << t->jpid;
        char nm[32];
        snprintf(nm, sizeof nm, "GPU %lld", (long long)t->jpid);
        struct jtrack gp = {t->jpid, 0, rs_xname_intern(w->x, nm), RS_XT_PROCESS, 1000 + (int32_t)t->jpid};
        announce(w, &gp);
    }
    announce(w, &jt);
}

static size_t args(struct jw *w, char *d, const struct rs_xitem *it)
{
    size_t n = 0;
    if (!it->nargs) return 0;
    n += LIT(d, ",\"args\":{");
    for (int i = 0; i < it->nargs; i++) {
        const struct rs_xarg *a = &it->args[i];
        if (i) d[n++] = ',';
        n += cpy(d + n, jkeys[a->key].s, jkeys[a->key].n);
        switch (a->type) {
        case RS_XA_U64: n += rs_xfmt_u64(d + n, a->v.u); break;
        case RS_XA_I64: n += rs_xfmt_i64(d + n, a->v.i); break;
        case RS_XA_HEX: {
            static const char hx[] = "0123456789abcdef";
            char t[16];
            int m = 0;
            uint64_t v = a->v.u;
            do {
                t[m++] = hx[v & 15];
                v >>= 4;
            } while (v);
            n += LIT(d + n, "\"0x");
            while (m) d[n++] = t[--m];
            d[n++] = '"';
            break;
        }
        case RS_XA_DBL: {
            n += fmt_dbl(d + n, a->v.d);
            break;
        }
        case RS_XA_STR: {
            const struct rs_xname *nm = rs_xname_get(w->x, a->v.nid);
            if (a->key == RS_XK_grid || a->key == RS_XK_block) /* "[x, y, z]" arrays, as Kineto */
                n += cpy(d + n, nm->s, nm->len);
            else n += cpy(d + n, nm->json, nm->json_len);
            break;
        }
        }
    }
    d[n++] = '}';
    return n;
}

static size_t common(struct jw *w, char *d, char ph, const struct rs_xitem *it)
{
    size_t n = LIT(d, "{\"ph\":\"");
    d[n++] = ph;
    n += cpy(d + n, jcats[it->cat].s, jcats[it->cat].n);
    const struct rs_xname *nm = rs_xname_get(w->x, it->name);
    n += cpy(d + n, nm->json, nm->json_len);
    d[n++] = ',';
    n += pidtid_t(d + n, it->t);
    n += LIT(d + n, ",\"ts\":");
    n += rs_xfmt_us(d + n, it->ts);
    return n;
}

static void flow(struct jw *w, char ph, uint64_t id, const struct rs_xitem *it)
{
    char *d = ev_start(w);
    int cuda = (id >> 39) & 1;
    size_t n = LIT(d, "{\"ph\":\"");
    d[n++] = ph;
    if (cuda) n += LIT(d + n, "\",\"cat\":\"ac2g\",\"name\":\"ac2g\",\"id\":");
    else n += LIT(d + n, "\",\"cat\":\"rdma\",\"name\":\"wr\",\"id\":");
    /* Kineto files hold one rank: the bare correlation id, as Kineto writes it */
    n += rs_xfmt_u64(d + n, w->kineto && cuda ? (id & 0xffffffffu) : id);
    d[n++] = ',';
    n += pidtid_t(d + n, it->t);
    n += LIT(d + n, ",\"ts\":");
    n += rs_xfmt_us(d + n, it->ts);
    if (ph != 's') n += LIT(d + n, ",\"bp\":\"e\"");
    d[n++] = '}';
    rs_xout_commit(&w->out, n);
}

static void jw_slice(void *b, const struct rs_xitem *it)
{
    struct jw *w = b;
    if (!w->file_open) return;
    char *d = ev_start(w);
    size_t n = common(w, d, 'X', it);
    n += LIT(d + n, ",\"dur\":");
    n += rs_xfmt_us(d + n, it->dur);
    n += args(w, d + n, it);
    d[n++] = '}';
    rs_xout_commit(&w->out, n);
    if (it->flow_out) flow(w, 's', it->flow_out, it);
    if (it->flow_step) flow(w, 't', it->flow_step, it);
    if (it->flow_in) flow(w, 'f', it->flow_in, it);
    maybe_split(w);
}

static void jw_begin(void *b, const struct rs_xitem *it)
{
    struct jw *w = b;
    if (!w->file_open) return;
    char *d = ev_start(w);
    size_t n = common(w, d, 'B', it);
    n += args(w, d + n, it);
    d[n++] = '}';
    rs_xout_commit(&w->out, n);
}

static void jw_end(void *b, const struct rs_xtrack *t, uint64_t ts)
{
    struct jw *w = b;
    if (!w->file_open) return;
    char *d = ev_start(w);
    size_t n = LIT(d, "{\"ph\":\"E\",");
    n += pidtid_t(d + n, t);
    n += LIT(d + n, ",\"ts\":");
    n += rs_xfmt_us(d + n, ts);
    d[n++] = '}';
    rs_xout_commit(&w->out, n);
}

static void jw_counter(void *b, const struct rs_xtrack *t, uint64_t ts, double v)
{
    struct jw *w = b;
    if (!w->file_open) return;
    char *d = ev_start(w);
    size_t n = LIT(d, "{\"ph\":\"C\",\"name\":");
    const struct rs_xname *nm = rs_xname_get(w->x, t->name);
    n += cpy(d + n, nm->json, nm->json_len);
    n += LIT(d + n, ",\"pid\":");
    n += rs_xfmt_i64(d + n, t->jpid);
    n += LIT(d + n, ",\"ts\":");
    n += rs_xfmt_us(d + n, ts);
    n += LIT(d + n, ",\"args\":{\"value\":");
    n += fmt_dbl(d + n, v);
    n += LIT(d + n, "}}");
    rs_xout_commit(&w->out, n);
    maybe_split(w);
}

static void jw_end_process(void *b)
{
    struct jw *w = b;
    if (w->kineto) file_close(w);
}

static int jw_close(void *b, struct rs_exp_stats *st, char *err, size_t errlen)
{
    struct jw *w = b;
    file_close(w);
    if (st) {
        st->bytes_out += w->bytes_done;
        st->files_out += w->files;
    }
    int rc = 0;
    if (w->err) {
        snprintf(err, errlen, "%s", w->errmsg);
        rc = -1;
    }
    free(w->tr);
    free(w->trh);
    free(w->ranks_used);
    free(w);
    return rc;
}

static void jw_instant(void *b, const struct rs_xitem *it) { jw_slice(b, it); }

const struct rs_xbackend rs_xbackend_chrome = {chrome_open, jw_begin_process, jw_track,   jw_slice,       jw_instant,
                                               jw_begin,    jw_end,           jw_counter, jw_end_process, jw_close};
const struct rs_xbackend rs_xbackend_kineto = {kineto_open, jw_begin_process, jw_track,   jw_slice,       jw_instant,
                                               jw_begin,    jw_end,           jw_counter, jw_end_process, jw_close};
