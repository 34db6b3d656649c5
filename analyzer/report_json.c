/* `railscope report --json`: the analysis model as JSON for scripts. Seconds everywhere (suffix _s),
 * bytes as integers, categories keyed by rs_cat_key(). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analysis.h"
#include "analyze_int.h"
#include "formats/rtrace.h"
#include "util/utf8.h"
#include "util/xalloc.h"

/* Output goes through a 64 KB buffer written with fwrite: a 1024-rank report is ~1 M members, and stdio
 * calls (fputs, fputc, printf) cost a function call, a lock or a format parse each. The hot members are
 * written by hand (digits, %.9g by rs_fmt_g9); the rare lines by jp() (vsnprintf). */
#define JW_CAP 65536
struct jw {
    FILE *f;
    size_t n;
    char b[JW_CAP];
};
static void jw_flush(struct jw *w)
{
    if (w->n) fwrite_unlocked(w->b, 1, w->n, w->f);
    w->n = 0;
}
/* Room for k <= JW_CAP / 2 bytes at the end of the buffer. */
static inline char *jw_room(struct jw *w, size_t k)
{
    if (w->n + k > JW_CAP) jw_flush(w);
    return w->b + w->n;
}
static inline void jw_mem(struct jw *w, const char *s, size_t k)
{
    if (k > JW_CAP / 2) {
        jw_flush(w);
        fwrite_unlocked(s, 1, k, w->f);
        return;
    }
    memcpy(jw_room(w, k), s, k);
    w->n += k;
}
static inline void js(struct jw *w, const char *s) { jw_mem(w, s, strlen(s)); }
static inline void jc(struct jw *w, char c)
{
    *jw_room(w, 1) = c;
    w->n++;
}
static void jp(struct jw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void jp(struct jw *w, const char *fmt, ...)
{
    char b[1024];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    if ((size_t)k < sizeof b) {
        jw_mem(w, b, (size_t)k);
        return;
    }
    char *m = rs_xmalloc((size_t)k + 1, "report_json m");
    if (!m) return;
    va_start(ap, fmt);
    vsnprintf(m, (size_t)k + 1, fmt, ap);
    va_end(ap);
    jw_mem(w, m, (size_t)k);
    free(m);
}

/* Strings come from trace files (host names, paths, NVTX names): util/utf8.h escapes them and replaces
 * ill-formed UTF-8 with U+FFFD, so the output is valid JSON for strict decoders. */
static void jstr(struct jw *w, const char *s)
{
    enum { PIECE = (JW_CAP / 2 - 1) / 6 }; /* escaping grows a byte to at most 6 */
    size_t n = s ? strlen(s) : 0;
    jc(w, '"');
    while (n) {
        size_t k = n;
        if (k > PIECE) { /* cut before a lead byte, so no valid sequence is split into two bad ones */
            k = PIECE;
            while (k > PIECE - 4 && ((unsigned char)s[k] & 0xc0) == 0x80) k--;
        }
        w->n += rs_json_escape(jw_room(w, 6 * k + 1), s, k, 0);
        s += k;
        n -= k;
    }
    jc(w, '"');
}
static void jnum(struct jw *w, double v)
{
    if (!isfinite(v)) v = 0;
    w->n += (size_t)rs_fmt_g9(jw_room(w, RS_FMT_G9_MAX), v);
}
/* printf("%lld") without printf */
static void jdigits(struct jw *w, unsigned long long u, int neg)
{
    char b[24], *p = b + sizeof b;
    do *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (neg) *--p = '-';
    jw_mem(w, p, (size_t)(b + sizeof b - p));
}
static void jint(struct jw *w, long long v)
{
    jdigits(w, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, v < 0);
}
static void juint(struct jw *w, unsigned long long v) { jdigits(w, v, 0); }
/* ", "key": " */
static void key(struct jw *w, const char *k)
{
    jw_mem(w, ", \"", 3);
    js(w, k);
    jw_mem(w, "\": ", 3);
}
/* ", "key": value" members: most of the report is a run of these after an object's first member. */
static void kn(struct jw *w, const char *k, double v)
{
    key(w, k);
    jnum(w, v);
}
static void ku(struct jw *w, const char *k, unsigned long long v)
{
    key(w, k);
    juint(w, v);
}
static void ki(struct jw *w, const char *k, long long v)
{
    key(w, k);
    jint(w, v);
}
static void ks(struct jw *w, const char *k, const char *v)
{
    key(w, k);
    jstr(w, v);
}
/* The category keys, each with its separator and quotes ("{\"compute\": ", ", \"h2d_exposed\": ", ...). */
static char cat_pre[RS_CAT_COUNT][48];
static size_t cat_pre_len[RS_CAT_COUNT];
static void attr(struct jw *w, const double *t, double div)
{
    for (int c = 0; c < RS_CAT_COUNT; c++) {
        jw_mem(w, cat_pre[c], cat_pre_len[c]);
        jnum(w, div > 0 ? t[c] / div : 0);
    }
    jc(w, '}');
}
static const char *const memk[] = RS_MEM_NAMES;
static void kinds(struct jw *w, const uint64_t *v)
{
    jc(w, '{');
    for (int k = 0; k < RS_AN_MEMKINDS; k++) {
        jw_mem(w, &", \""[k ? 0 : 2], k ? 3 : 1);
        js(w, memk[k]);
        jw_mem(w, "\": ", 3);
        juint(w, v[k]);
    }
    jc(w, '}');
}
static void gd(struct jw *w, const struct rs_an_gd *g, int full)
{
    js(w, "{\"verdict\": ");
    jstr(w, rs_gd_name(g->verdict));
    ks(w, "evidence", g->evidence);
    js(w, ", \"posted_bytes\": ");
    kinds(w, g->posted_bytes);
    if (full) {
        js(w, ", \"mr_bytes\": ");
        kinds(w, g->mr_bytes);
        ku(w, "dmabuf_mrs", g->dmabuf_mrs);
    }
    ku(w, "bounce_d2h", g->bounce_d2h);
    ku(w, "bounce_h2d", g->bounce_h2d);
    ku(w, "posts", g->posts);
    ku(w, "send_posts", g->send_posts);
    ku(w, "recv_posts", g->posts - g->send_posts);
    jc(w, '}');
}
static void hex32(struct jw *w, unsigned v)
{
    static const char hex[] = "0123456789abcdef";
    char b[8], *p = b + sizeof b;
    do *--p = hex[v & 15];
    while (v >>= 4);
    jw_mem(w, p, (size_t)(b + sizeof b - p));
}

static void json(const struct rs_analysis *a, struct jw *w);

void rs_report_json(const struct rs_analysis *a, FILE *f)
{
    for (int c = 0; c < RS_CAT_COUNT; c++)
        cat_pre_len[c] = (size_t)snprintf(cat_pre[c], sizeof cat_pre[c], "%s\"%s\": ", c ? ", " : "{", rs_cat_key(c));
    struct jw *w = rs_xmalloc(sizeof *w, "report_json w");
    if (!w) { /* out of memory: the caller sees the failed write */
        fputs("railscope: report: out of memory\n", stderr);
        exit(2);
    }
    w->f = f;
    w->n = 0;
    json(a, w);
    jw_flush(w);
    free(w);
}

static int cmp_i32(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return a < b ? -1 : a > b;
}

/* The peer-wait finding's verdict as data: "rank" names rank, "tie" lists the ranks that tie (in rank order;
 * in stragglers[] order if the copy cannot be allocated), "none" names no rank (wait spread over ranks). */
static void json_straggler_verdict(const struct rs_analysis *a, const struct rs_an_finding *x, struct jw *w)
{
    static const char *const kind[] = {[RS_SV_NONE] = "none", [RS_SV_RANK] = "rank", [RS_SV_TIE] = "tie"};
    size_t n = x->sv == RS_SV_TIE && x->ntied <= a->nstragglers ? x->ntied : 0;
    int32_t small[64], *v = n > 64 ? rs_xmalloc(n * sizeof *v, "report_json tied") : small;
    for (size_t i = 0; v && i < n; i++) v[i] = a->stragglers[i].rank;
    if (v) qsort(v, n, sizeof *v, cmp_i32);
    js(w, ", \"straggler\": {\"verdict\": \"");
    js(w, kind[x->sv == RS_SV_RANK || x->sv == RS_SV_TIE ? x->sv : RS_SV_NONE]);
    jc(w, '"');
    ki(w, "rank", x->sv == RS_SV_RANK ? x->rank : -1);
    js(w, ", \"tied_ranks\": [");
    for (size_t i = 0; i < n; i++) {
        if (i) js(w, ", ");
        jint(w, v ? v[i] : a->stragglers[i].rank);
    }
    jc(w, ']');
    kn(w, "tie_margin", RS_AN_STRAGGLER_TIE);
    jc(w, '}');
    if (v != small) free(v);
}

/* Top level: input, link, steps, clock, attribution, transport, verdict, findings. */
static void json_head(const struct rs_analysis *a, struct jw *w)
{
    /* "analysable": false: no GPU, NCCL or verbs activity and no step; every number below is zero (text: one line) */
    jp(w, "{\n\"railscope_report\": 1, \"analysable\": %s, \"partial\": %s, \"events\": %llu, \"drops\": %llu,\n",
       a->analysable ? "true" : "false", a->partial ? "true" : "false", (unsigned long long)a->events,
       (unsigned long long)a->drops);
    js(w, "\"link_gbps\": ");
    jnum(w, a->link_gbps);
    ks(w, "link_source", a->link_source);
    js(w, ",\n\"step_source\": ");
    jstr(w, a->step_source);
    jp(w,
       ", \"nsteps\": %llu, \"gpu_ranks\": %zu, \"mean_ranks\": %zu, \"step_mean_s\": ", (unsigned long long)a->nsteps,
       a->gpu_ranks, a->mean_ranks);
    jnum(w, a->step_mean_s);
    js(w, ",\n\"clock\": {\"anchor_skew_s\": ");
    jnum(w, a->anchor_skew_s);
    kn(w, "residual_skew_s", a->residual_skew_s);
    js(w, a->one_clock ? ", \"one_clock\": true" : ", \"one_clock\": false");
    jp(w, ", \"run_start_realtime_ns\": %llu},\n\"attribution\": ", (unsigned long long)a->run_start_realtime_ns);
    attr(w, a->attr, 1);
    js(w, ",\n\"attribution_per_step\": ");
    attr(w, a->attr, a->nsteps ? (double)a->nsteps : 1);
    /* what the GPU split rests on, as data (the warnings say it in words): windows' steps measured, the rest
     * extrapolated (analyze_sampling.c) */
    jp(w,
       ",\n\"sampling\": {\"ranks\": %zu, \"steps\": %llu, \"steps_in_windows\": %llu, \"steps_extrapolated\": %llu, "
       "\"ranks_without_window_step\": %zu, \"window_time_share\": ",
       a->sampled_ranks, (unsigned long long)a->sampled_steps, (unsigned long long)a->sampled_in_steps,
       (unsigned long long)a->sampled_extra_steps, a->sampled_no_step_ranks);
    jnum(w, a->sampled_in_share);
    /* the tracing cost the windows measure (analyze_sampling.c): null without window and outside steps */
    jp(w, ", \"window_steps_measured\": %llu, \"window_step_excess\": ", (unsigned long long)a->sampled_win_measured);
    if (a->sampled_win_measured) jnum(w, a->sampled_win_excess);
    else js(w, "null");
    js(w, ", \"window_cost_share\": ");
    if (a->sampled_win_measured) jnum(w, a->sampled_win_cost);
    else js(w, "null");
    /* the detach tails after windows (traces since session 20): how many, how long, what their steps cost */
    jp(w, ", \"detach_tails\": %llu, \"detach_tail_mean_ms\": ", (unsigned long long)a->sampled_tails);
    if (a->sampled_tails) jnum(w, a->sampled_tail_mean_ms);
    else js(w, "null");
    jp(w, ", \"detach_tail_steps_measured\": %llu, \"detach_tail_step_excess\": ",
       (unsigned long long)a->sampled_tail_measured);
    if (a->sampled_tail_measured) jnum(w, a->sampled_tail_excess);
    else js(w, "null");
    js(w, ", \"detach_tail_cost_share\": ");
    if (a->sampled_tail_measured) jnum(w, a->sampled_tail_cost);
    else js(w, "null");
    jc(w, '}');
    /* peer wait not measured but estimated from the arrival lag of collectives nothing timed (analyze_join.c
     * lag_waits): how many, and what it added to peer_wait (mean per rank, as attribution) */
    jp(w, ",\n\"peer_wait_estimate\": {\"from_arrival_lag\": %s, \"collectives\": %llu, \"of\": %zu, \"wait_s\": ",
       a->lag_colls ? "true" : "false", (unsigned long long)a->lag_colls, a->ncolls);
    jnum(w, a->lag_wait_s);
    kn(w, "wait_per_step_s", a->nsteps ? a->lag_wait_s / (double)a->nsteps : a->lag_wait_s);
    jc(w, '}');
    js(w, ",\n\"transport\": ");
    jstr(w, a->transport);
    js(w, a->stragglers_known ? ", \"stragglers_known\": true" : ", \"stragglers_known\": false");
    ks(w, "straggler_basis", a->straggler_basis);
    ku(w, "verbs_errors", a->verbs_errors);
    js(w, ",\n\"gpudirect\": {\"verdict\": ");
    jstr(w, rs_gd_name(a->gd_verdict));
    /* the text's qualifier, as data: GPU memory to send from (NOT USED/PARTIAL is then a fault, the finding) */
    js(w, a->gd_gpu_memory ? ", \"gpu_memory\": true" : ", \"gpu_memory\": false");
    js(w, (a->gd_verdict == RS_GD_NOT_USED || a->gd_verdict == RS_GD_PARTIAL) && a->gd_gpu_memory
              ? ", \"fault\": true"
              : ", \"fault\": false");
    ks(w, "note", a->gd_note);
    js(w, "},\n\"findings\": [");
    for (size_t i = 0; i < a->nfindings; i++) {
        const struct rs_an_finding *x = &a->findings[i];
        /* the GPUDirect finding is a configuration fault, in no attribution category: its own key */
        jp(w, "%s\n  {\"category\": \"%s\", \"rank\": %d, \"qp\": %u, \"cost_s\": ", i ? "," : "",
           x->gpudirect ? RS_AN_GD_FINDING : rs_cat_key(x->cat), x->rank, x->qp);
        jnum(w, x->cost_s);
        kn(w, "step_fraction", x->step_frac);
        if (x->cat == RS_CAT_PEER_WAIT) json_straggler_verdict(a, x, w);
        ks(w, "text", x->text);
        jc(w, '}');
    }
    js(w, "\n],\n\"ranks\": [");
}

static void json_qps(const struct rs_an_rank *r, struct jw *w)
{
    js(w, ",\n   \"qps\": [");
    for (size_t q = 0; q < r->nqps; q++) {
        const struct rs_an_qp *x = &r->qps[q];
        js(w, q ? ",\n    {\"qp\": " : "\n    {\"qp\": ");
        juint(w, x->qp_num);
        js(w, ", \"qp_hex\": \"0x");
        hex32(w, x->qp_num);
        jc(w, '"');
        ki(w, "peer_rank", x->peer_rank);
        ku(w, "bytes_sent", x->bytes_sent);
        ku(w, "sends", x->sends);
        kn(w, "busy_s", x->busy_s);
        kn(w, "ideal_s", x->ideal_s);
        kn(w, "latency_s", x->latency_s);
        kn(w, "stall_s", x->stall_s);
        kn(w, "achieved_gbps", x->achieved_gbps);
        kn(w, "max_wait_s", x->max_wait_s);
        ku(w, "control_sends", x->ctrl_sends);
        kn(w, "control_busy_s", x->ctrl_busy_s);
        js(w, ", \"gpudirect\": ");
        gd(w, &x->gd, 0);
        jc(w, '}');
    }
    jc(w, ']');
}

static void json_rank(const struct rs_an_rank *r, int first, struct jw *w)
{
    js(w, first ? "\n  {\"rank\": " : ",\n  {\"rank\": ");
    jint(w, r->rank);
    js(w, ", \"host\": ");
    jstr(w, r->host);
    ku(w, "pid", r->pid);
    js(w, ", \"path\": ");
    jstr(w, r->path);
    js(w, ", \"input\": \"");
    js(w, rs_an_input_name(r->input));
    jc(w, '"');
    ku(w, "events", r->events);
    ku(w, "drops", r->drops);
    ki(w, "clock_offset_ns", (long long)r->clock_offset_ns);
    ki(w, "clock_refinement_ns", (long long)r->refine_ns);
    js(w, ",\n   \"nsteps\": ");
    juint(w, r->nsteps);
    js(w, ", \"step_mean_s\": ");
    jnum(w, r->step_mean_s);
    kn(w, "late_cost_s", r->late_s);
    ku(w, "h2d_pageable_bytes", r->h2d_pageable_bytes);
    ku(w, "h2d_pinned_bytes", r->h2d_pinned_bytes);
    kn(w, "h2d_pageable_s", r->h2d_pageable_s);
    kn(w, "h2d_pinned_s", r->h2d_pinned_s);
    kn(w, "base_latency_s", r->base_latency_s);
    ks(w, "transport", r->transport);
    ks(w, "transport_evidence", r->transport_why);
    js(w, ",\n   \"verbs_errors\": {\"create_fail\": ");
    juint(w, r->verrs.create_fail);
    ku(w, "post_fail", r->verrs.post_fail);
    ku(w, "wc_error", r->verrs.wc_err);
    ku(w, "wc_flush", r->verrs.wc_flush);
    ku(w, "probes", r->verrs.probes);
    kn(w, "cost_s", r->verrs.cost_s);
    ks(w, "first", r->verrs.first);
    js(w, "},\n   \"attribution\": ");
    attr(w, r->attr, 1);
    js(w, ",\n   \"gpudirect\": ");
    gd(w, &r->gd, 1);
    json_qps(r, w);
    js(w, ",\n   \"steps\": [");
    for (size_t k = 0; k < r->nsteps; k++) {
        const struct rs_an_step *s = &r->steps[k];
        js(w, &",\n    {\"id\": "[k ? 0 : 1]);
        jint(w, (long long)s->id);
        js(w, ", \"start_s\": ");
        jnum(w, s->start_ns * 1e-9);
        kn(w, "dur_s", (s->end_ns - s->start_ns) * 1e-9);
        js(w, ", \"attribution\": ");
        attr(w, s->attr, 1);
        jc(w, '}');
    }
    js(w, "]}");
}

static void json_runsteps(const struct rs_analysis *a, struct jw *w)
{
    js(w, "\n],\n\"steps\": [");
    struct rs_an_runstep *rsx = NULL;
    size_t nrs = rs_an_run_steps(a, &rsx);
    for (size_t k = 0; k < nrs; k++) {
        js(w, k ? ",\n  {\"index\": " : "\n  {\"index\": ");
        juint(w, k);
        ki(w, "id", (long long)rsx[k].id);
        ku(w, "ranks", rsx[k].nranks);
        kn(w, "mean_s", rsx[k].mean_s);
        kn(w, "max_s", rsx[k].max_s);
        ki(w, "slowest_rank", rsx[k].slowest_rank);
        js(w, ", \"attribution\": ");
        attr(w, rsx[k].attr, 1);
        jc(w, '}');
    }
    free(rsx);
}

static void json_colls(const struct rs_analysis *a, struct jw *w)
{
    js(w, "\n],\n\"collectives\": [");
    static const char *const names[] = {
        "first_arrival_s",  "last_arrival_s", "end_s",   "arrival_skew_s", "dur_s", "algbw_gbps", "busbw_gbps",
        "reduce_scatter_s", "all_gather_s",   "intra_s", "net_s",          "lat_s", "stall_s"};
    for (size_t i = 0; i < a->ncolls; i++) {
        const struct rs_an_coll *c = &a->colls[i];
        js(w, i ? ",\n  {\"comm_hash\": \"0x" : "\n  {\"comm_hash\": \"0x");
        jp(w, "%llx", (unsigned long long)c->comm_hash);
        js(w, "\", \"func\": ");
        jstr(w, c->func);
        ks(w, "algo", c->algo);
        ku(w, "seq", c->seq);
        ku(w, "bytes", c->bytes);
        ki(w, "nranks", c->nranks);
        ki(w, "nseen", c->nseen);
        ki(w, "step", (long long)c->step);
        ki(w, "last_rank", c->last_rank);
        ks(w, "transport", c->transport);
        ki(w, "inter_node", c->inter);
        const double vals[] = {c->first_arrival_ns * 1e-9,
                               c->last_arrival_ns * 1e-9,
                               c->end_ns * 1e-9,
                               c->arrival_skew_s,
                               c->dur_s,
                               c->algbw_gbps,
                               c->busbw_gbps,
                               c->rs_s,
                               c->ag_s,
                               c->intra_s,
                               c->net_s,
                               c->lat_s,
                               c->stall_s};
        for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) kn(w, names[k], vals[k]);
        if (!strcasecmp(c->algo, "tree")) { /* the tree's phases (0 when its proxy ops were not traced) */
            kn(w, "reduce_s", c->reduce_s);
            kn(w, "broadcast_s", c->bcast_s);
        }
        ki(w, "stall_rank", c->stall_rank);
        ku(w, "stall_qp", c->stall_qp);
        jc(w, '}');
    }
}

static void json_tail(const struct rs_analysis *a, struct jw *w)
{
    js(w, "\n],\n\"stragglers\": [");
    for (size_t i = 0; i < a->nstragglers; i++) {
        const struct rs_an_straggler *s = &a->stragglers[i];
        jp(w, "%s\n  {\"rank\": %d, \"persistent\": %s, \"late_count\": %llu, \"of\": %llu, \"mean_late_s\": ",
           i ? "," : "", s->rank, s->persistent ? "true" : "false", (unsigned long long)s->late_count,
           (unsigned long long)s->of);
        jnum(w, s->mean_late_s);
        kn(w, "cost_s", s->cost_s);
        kn(w, "cost_per_step_s", s->cost_per_step_s);
        jc(w, '}');
    }
    js(w, "\n],\n\"host_checks\": [");
    for (size_t i = 0; i < a->nhostchecks; i++) {
        const struct rs_an_hostcheck *c = &a->hostchecks[i];
        js(w, i ? ",\n  {\"host\": " : "\n  {\"host\": ");
        jstr(w, c->host);
        js(w, c->fail ? ", \"level\": \"fail\", \"check\": " : ", \"level\": \"warn\", \"check\": ");
        jstr(w, c->check);
        ks(w, "subject", c->subject);
        ks(w, "msg", c->msg);
        ks(w, "fix", c->fix);
        jc(w, '}');
    }
    js(w, "\n],\n\"warnings\": [");
    for (size_t i = 0; i < a->nwarnings; i++) {
        js(w, i ? ",\n  " : "\n  ");
        jstr(w, a->warnings[i]);
    }
    js(w, "\n]\n}\n");
}

static void json(const struct rs_analysis *a, struct jw *w)
{
    json_head(a, w);
    for (size_t i = 0; i < a->nranks; i++) json_rank(&a->ranks[i], !i, w);
    json_runsteps(a, w);
    json_colls(a, w);
    json_tail(a, w);
}
