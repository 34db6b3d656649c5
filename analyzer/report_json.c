/* `railscope report --json`: the analysis model as JSON for scripts. Seconds everywhere (suffix _s),
 * bytes as integers, categories keyed by rs_cat_key(). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "analysis.h"
#include "analyze_int.h"
#include "formats/rtrace.h"

static void jstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}
static void jnum(FILE *f, double v)
{
    if (!isfinite(v))
        v = 0;
    char b[RS_FMT_G9_MAX];
    fwrite_unlocked(b, 1, (size_t)rs_fmt_g9(b, v), f);
}
/* printf("%lld") without printf: a 1024-rank report is ~1 M members, so the hot ones avoid vfprintf
 * (and the per-call stream lock: the report is written by one thread after the workers are done). */
static void jdigits(FILE *f, unsigned long long u, int neg)
{
    char b[24], *p = b + sizeof b;
    do
        *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (neg)
        *--p = '-';
    fwrite_unlocked(p, 1, (size_t)(b + sizeof b - p), f);
}
static void jint(FILE *f, long long v) { jdigits(f, v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v, v < 0); }
static void juint(FILE *f, unsigned long long v) { jdigits(f, v, 0); }
/* ", "key": " */
static void key(FILE *f, const char *k)
{
    fputs_unlocked(", \"", f);
    fputs_unlocked(k, f);
    fputs_unlocked("\": ", f);
}
/* ", "key": value" members: most of the report is a run of these after an object's first member. */
static void kn(FILE *f, const char *k, double v)
{
    key(f, k);
    jnum(f, v);
}
static void ks(FILE *f, const char *key, const char *v)
{
    fprintf(f, ", \"%s\": ", key);
    jstr(f, v);
}
static void attr(FILE *f, const double *t, double div)
{
    fputc_unlocked('{', f);
    for (int c = 0; c < RS_CAT_COUNT; c++) {
        fputs_unlocked(&", \""[c ? 0 : 2], f);
        fputs_unlocked(rs_cat_key(c), f);
        fputs_unlocked("\": ", f);
        jnum(f, div > 0 ? t[c] / div : 0);
    }
    fputc_unlocked('}', f);
}
static const char *const memk[] = RS_MEM_NAMES;
static void kinds(FILE *f, const uint64_t *v)
{
    fputc_unlocked('{', f);
    for (int k = 0; k < RS_AN_MEMKINDS; k++) {
        fputs_unlocked(&", \""[k ? 0 : 2], f);
        fputs_unlocked(memk[k], f);
        fputs_unlocked("\": ", f);
        juint(f, v[k]);
    }
    fputc_unlocked('}', f);
}
static void gd(FILE *f, const struct rs_an_gd *g, int full)
{
    fprintf(f, "{\"verdict\": ");
    jstr(f, rs_gd_name(g->verdict));
    ks(f, "evidence", g->evidence);
    fprintf(f, ", \"posted_bytes\": ");
    kinds(f, g->posted_bytes);
    if (full) {
        fprintf(f, ", \"mr_bytes\": ");
        kinds(f, g->mr_bytes);
        fprintf(f, ", \"dmabuf_mrs\": %llu", (unsigned long long)g->dmabuf_mrs);
    }
    fprintf(f, ", \"bounce_d2h\": %llu, \"bounce_h2d\": %llu, \"posts\": %llu}", (unsigned long long)g->bounce_d2h,
            (unsigned long long)g->bounce_h2d, (unsigned long long)g->posts);
}

void rs_report_json(const struct rs_analysis *a, FILE *f)
{
    fprintf(f, "{\n\"railscope_report\": 1, \"partial\": %s, \"events\": %llu, \"drops\": %llu,\n",
            a->partial ? "true" : "false", (unsigned long long)a->events, (unsigned long long)a->drops);
    fprintf(f, "\"link_gbps\": ");
    jnum(f, a->link_gbps);
    ks(f, "link_source", a->link_source);
    fprintf(f, ",\n\"step_source\": ");
    jstr(f, a->step_source);
    fprintf(f, ", \"nsteps\": %llu, \"gpu_ranks\": %zu, \"step_mean_s\": ", (unsigned long long)a->nsteps, a->gpu_ranks);
    jnum(f, a->step_mean_s);
    fprintf(f, ",\n\"clock\": {\"anchor_skew_s\": ");
    jnum(f, a->anchor_skew_s);
    kn(f, "residual_skew_s", a->residual_skew_s);
    fprintf(f, ", \"run_start_realtime_ns\": %llu},\n\"attribution\": ", (unsigned long long)a->run_start_realtime_ns);
    attr(f, a->attr, 1);
    fprintf(f, ",\n\"attribution_per_step\": ");
    attr(f, a->attr, a->nsteps ? (double)a->nsteps : 1);
    fprintf(f, ",\n\"gpudirect\": {\"verdict\": ");
    jstr(f, rs_gd_name(a->gd_verdict));
    fprintf(f, "},\n\"findings\": [");
    for (size_t i = 0; i < a->nfindings; i++) {
        const struct rs_an_finding *x = &a->findings[i];
        fprintf(f, "%s\n  {\"category\": \"%s\", \"rank\": %d, \"qp\": %u, \"cost_s\": ", i ? "," : "",
                rs_cat_key(x->cat), x->rank, x->qp);
        jnum(f, x->cost_s);
        kn(f, "step_fraction", x->step_frac);
        ks(f, "text", x->text);
        fputc('}', f);
    }
    fprintf(f, "\n],\n\"ranks\": [");
    for (size_t i = 0; i < a->nranks; i++) {
        const struct rs_an_rank *r = &a->ranks[i];
        fprintf(f, "%s\n  {\"rank\": %d, \"host\": ", i ? "," : "", r->rank);
        jstr(f, r->host);
        fprintf(f, ", \"pid\": %llu, \"path\": ", (unsigned long long)r->pid);
        jstr(f, r->path);
        fprintf(f, ", \"input\": \"%s\", \"events\": %llu, \"drops\": %llu, \"clock_offset_ns\": %lld, "
                   "\"clock_refinement_ns\": %lld,\n   \"nsteps\": %zu, \"step_mean_s\": ",
                rs_an_input_name(r->input), (unsigned long long)r->events, (unsigned long long)r->drops,
                (long long)r->clock_offset_ns, (long long)r->refine_ns, r->nsteps);
        jnum(f, r->step_mean_s);
        kn(f, "late_cost_s", r->late_s);
        fprintf(f, ", \"h2d_pageable_bytes\": %llu, \"h2d_pinned_bytes\": %llu,\n   \"attribution\": ",
                (unsigned long long)r->h2d_pageable_bytes, (unsigned long long)r->h2d_pinned_bytes);
        attr(f, r->attr, 1);
        fprintf(f, ",\n   \"gpudirect\": ");
        gd(f, &r->gd, 1);
        fprintf(f, ",\n   \"qps\": [");
        for (size_t q = 0; q < r->nqps; q++) {
            const struct rs_an_qp *x = &r->qps[q];
            fprintf(f, "%s\n    {\"qp\": %u, \"qp_hex\": \"0x%x\", \"peer_rank\": %d, \"bytes_sent\": %llu, \"sends\": %llu, "
                       "\"busy_s\": ",
                    q ? "," : "", x->qp_num, x->qp_num, x->peer_rank, (unsigned long long)x->bytes_sent,
                    (unsigned long long)x->sends);
            jnum(f, x->busy_s);
            kn(f, "ideal_s", x->ideal_s);
            kn(f, "stall_s", x->stall_s);
            kn(f, "achieved_gbps", x->achieved_gbps);
            kn(f, "max_wait_s", x->max_wait_s);
            fprintf(f, ", \"control_sends\": %llu, \"control_busy_s\": ", (unsigned long long)x->ctrl_sends);
            jnum(f, x->ctrl_busy_s);
            fprintf(f, ", \"gpudirect\": ");
            gd(f, &x->gd, 0);
            fputc('}', f);
        }
        fprintf(f, "],\n   \"steps\": [");
        for (size_t k = 0; k < r->nsteps; k++) {
            const struct rs_an_step *s = &r->steps[k];
            fputs_unlocked(&",\n    {\"id\": "[k ? 0 : 1], f);
            jint(f, (long long)s->id);
            fputs_unlocked(", \"start_s\": ", f);
            jnum(f, s->start_ns * 1e-9);
            kn(f, "dur_s", (s->end_ns - s->start_ns) * 1e-9);
            fputs_unlocked(", \"attribution\": ", f);
            attr(f, s->attr, 1);
            fputc_unlocked('}', f);
        }
        fprintf(f, "]}");
    }
    fprintf(f, "\n],\n\"steps\": [");
    struct rs_an_runstep *rsx = NULL;
    size_t nrs = rs_an_run_steps(a, &rsx);
    for (size_t k = 0; k < nrs; k++) {
        fprintf(f, "%s\n  {\"index\": %zu, \"id\": %lld, \"ranks\": %zu, \"mean_s\": ", k ? "," : "", k,
                (long long)rsx[k].id, rsx[k].nranks);
        jnum(f, rsx[k].mean_s);
        kn(f, "max_s", rsx[k].max_s);
        fprintf(f, ", \"slowest_rank\": %d, \"attribution\": ", rsx[k].slowest_rank);
        attr(f, rsx[k].attr, 1);
        fputc('}', f);
    }
    free(rsx);
    fprintf(f, "\n],\n\"collectives\": [");
    for (size_t i = 0; i < a->ncolls; i++) {
        const struct rs_an_coll *c = &a->colls[i];
        fprintf(f, "%s\n  {\"comm_hash\": \"0x%llx\", \"func\": ", i ? "," : "", (unsigned long long)c->comm_hash);
        jstr(f, c->func);
        ks(f, "algo", c->algo);
        fprintf(f, ", \"seq\": %llu, \"bytes\": %llu, \"nranks\": %d, \"nseen\": %d, \"step\": %lld, \"last_rank\": %d",
                (unsigned long long)c->seq, (unsigned long long)c->bytes, c->nranks, c->nseen, (long long)c->step,
                c->last_rank);
        const char *names[] = {"first_arrival_s", "last_arrival_s", "end_s", "arrival_skew_s", "dur_s", "algbw_gbps",
                               "busbw_gbps", "reduce_scatter_s", "all_gather_s", "intra_s", "net_s", "stall_s"};
        double vals[] = {c->first_arrival_ns * 1e-9, c->last_arrival_ns * 1e-9, c->end_ns * 1e-9, c->arrival_skew_s,
                         c->dur_s, c->algbw_gbps, c->busbw_gbps, c->rs_s, c->ag_s, c->intra_s, c->net_s, c->stall_s};
        for (size_t k = 0; k < sizeof vals / sizeof vals[0]; k++) kn(f, names[k], vals[k]);
        if (!strcasecmp(c->algo, "tree")) { /* the tree's phases (0 when its proxy ops were not traced) */
            kn(f, "reduce_s", c->reduce_s);
            kn(f, "broadcast_s", c->bcast_s);
        }
        fprintf(f, ", \"stall_rank\": %d, \"stall_qp\": %u}", c->stall_rank, c->stall_qp);
    }
    fprintf(f, "\n],\n\"stragglers\": [");
    for (size_t i = 0; i < a->nstragglers; i++) {
        const struct rs_an_straggler *s = &a->stragglers[i];
        fprintf(f, "%s\n  {\"rank\": %d, \"persistent\": %s, \"late_count\": %llu, \"of\": %llu, \"mean_late_s\": ",
                i ? "," : "", s->rank, s->persistent ? "true" : "false", (unsigned long long)s->late_count,
                (unsigned long long)s->of);
        jnum(f, s->mean_late_s);
        kn(f, "cost_s", s->cost_s);
        kn(f, "cost_per_step_s", s->cost_per_step_s);
        fputc('}', f);
    }
    fprintf(f, "\n],\n\"host_checks\": [");
    for (size_t i = 0; i < a->nhostchecks; i++) {
        const struct rs_an_hostcheck *c = &a->hostchecks[i];
        fprintf(f, "%s\n  {\"host\": ", i ? "," : "");
        jstr(f, c->host);
        fprintf(f, ", \"level\": \"%s\", \"check\": ", c->fail ? "fail" : "warn");
        jstr(f, c->check);
        ks(f, "subject", c->subject);
        ks(f, "msg", c->msg);
        ks(f, "fix", c->fix);
        fputc('}', f);
    }
    fprintf(f, "\n],\n\"warnings\": [");
    for (size_t i = 0; i < a->nwarnings; i++) {
        fprintf(f, "%s\n  ", i ? "," : "");
        jstr(f, a->warnings[i]);
    }
    fprintf(f, "\n]\n}\n");
}
