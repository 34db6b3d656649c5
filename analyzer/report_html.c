/* The HTML report (report_html.h): one self-contained page, inline CSS and SVG, a few lines of inline JS
 * for the step chooser; nothing is fetched. Panels:
 *   1. step breakdown: per rank, a stacked bar of the mean step split into the attribution categories;
 *   2. AllReduce phases of one step: per collective, arrival skew (waiting for the last rank) then its own
 *      time split into reduce-scatter / all-gather or intra-node / network / stall; slowest step first;
 *   3. per-QP bandwidth over time: the exporter's bandwidth counters (formats/export/export_int.h, run over each
 *      rank's trace file with a collecting backend) drawn as lines, with the link rate; then a QP table;
 *   4. GPUDirect: verdict and its evidence (MR and posted bytes by memory kind, bounce copies);
 *   5. findings, stragglers and the run's warnings; doctor's checks on the recorded host facts.
 * Everything is drawn from the analysis model; only panel 3 re-reads the traces (bounded memory: the
 * counters are binned to ~240 points per QP over the run).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "report_html.h"

/* In the analyzer; weak so that the renderer also links without it (tests/html/html_edge.c). */
extern size_t rs_an_run_steps(const struct rs_analysis *a, struct rs_an_runstep **out) __attribute__((weak));
#include "formats/export/export_int.h"
#include "formats/reader.h"
#include "util/utf8.h"
#include "util/xalloc.h"

/* Stragglers "cannot tell" on request/response traffic (analyze_join.c verbs_stragglers, straggler_basis "none: round
 * trips": round trips, answers) */
#define AN_RT_WHY                                                                                                \
    "request/response: each rank's data send answers a message it waited for (a ping-pong, a chain of stages), " \
    "so one is always later by the message's trip"

/* ---------------- small output helpers ---------------- */

/* HTML text: markup characters as entities; ill-formed UTF-8 (host names, paths and names from a trace) as
 * U+FFFD, one per maximal subpart (util/utf8.h), and control characters other than tab and newline (not
 * allowed in HTML text) as U+FFFD too, so the page is valid UTF-8. */
static void esc(FILE *f, const char *s)
{
    if (!s) return;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        const unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            size_t bad, l = rs_utf8_seq((const unsigned char *)s + i, n - i, &bad);
            if (l) fwrite(s + i, 1, l, f);
            else fputs("\xef\xbf\xbd", f);
            i += l ? l : bad;
            continue;
        }
        switch (c) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        case '\t':
        case '\n': fputc(c, f); break;
        default:
            if (c < 0x20 || c == 0x7f) fputs("\xef\xbf\xbd", f);
            else fputc(c, f);
        }
        i++;
    }
}

static const char *const cat_key[RS_CAT_COUNT] = {
#define X(e, key, words) #key,
    RS_CATS(X)
#undef X
};
static const char *const cat_words[RS_CAT_COUNT] = {
#define X(e, key, words) words,
    RS_CATS(X)
#undef X
};
static const char *const gd_names[RS_GD_COUNT] = {
#define X(e, s) s,
    RS_GD_VERDICTS(X)
#undef X
};
static const char *const cat_color[RS_CAT_COUNT] = {"#4e79a7", "#f28e2b", "#76b7b2", "#59a14f", "#e15759",
                                                    "#ff9da7", "#edc948", "#b07aa1", "#bab0ac"};
static const char *const mem_names[RS_AN_MEMKINDS] = RS_MEM_NAMES;

static const char *gd_name(int v) { return v >= 0 && v < RS_GD_COUNT ? gd_names[v] : "UNKNOWN"; }

/* Human time from seconds. */
static void fmt_s(char *b, size_t n, double s)
{
    double a = fabs(s); /* thresholds just under 1 so that 999.7 us prints as 1 ms, not 1e+03 us */
    if (a >= 0.9995) snprintf(b, n, "%.3g s", s);
    else if (a >= 0.9995e-3) snprintf(b, n, "%.3g ms", s * 1e3);
    else if (a >= 0.9995e-6) snprintf(b, n, "%.3g us", s * 1e6);
    else snprintf(b, n, "%.0f ns", s * 1e9);
}
static void fmt_bytes(char *b, size_t n, double v)
{
    if (v >= 1e9) snprintf(b, n, "%.2f GB", v / 1e9);
    else if (v >= 1e6) snprintf(b, n, "%.2f MB", v / 1e6);
    else if (v >= 1e3) snprintf(b, n, "%.1f kB", v / 1e3);
    else snprintf(b, n, "%.0f B", v);
}

/* ---------------- bandwidth series from the traces ---------------- */

#define BW_MAXPTS 512
struct bw_series {
    int32_t rank;
    uint32_t qp;
    uint64_t uuid;
    size_t n;
    double t[BW_MAXPTS], v[BW_MAXPTS]; /* s from run start, GB/s */
};
struct bw_sink {
    struct rs_exp *x;
    int32_t rank;
    struct bw_series *s;
    size_t n, cap;
    double tmax;
};

static void *bw_open(struct rs_exp *x, const struct rs_exp_opts *o, char *err, size_t errlen)
{
    (void)err, (void)errlen;
    struct bw_sink *k = o->sink;
    k->x = x;
    return k;
}
static int bw_begin(void *b, const struct rs_xproc_out *p, char *err, size_t errlen)
{
    (void)b, (void)p, (void)err, (void)errlen;
    return 0;
}
static void bw_track(void *b, const struct rs_xtrack *t)
{
    struct bw_sink *k = b;
    if (t->kind != RS_XT_COUNTER) return;
    const char *name = rs_xname_get(k->x, t->name)->s;
    unsigned qp;
    if (sscanf(name, "QP %u tx", &qp) != 1) return;
    if (k->n == k->cap) {
        size_t nc = k->cap ? k->cap * 2 : 8;
        struct bw_series *ns = rs_xrealloc(k->s, nc * sizeof *ns, "report_html ns");
        if (!ns) return;
        k->s = ns;
        k->cap = nc;
    }
    struct bw_series *s = &k->s[k->n++];
    s->rank = k->rank;
    s->qp = qp;
    s->uuid = t->uuid;
    s->n = 0;
}
static void bw_counter(void *b, const struct rs_xtrack *t, uint64_t ts, double v)
{
    struct bw_sink *k = b;
    for (size_t i = k->n; i-- > 0;) {
        struct bw_series *s = &k->s[i];
        if (s->uuid != t->uuid) continue;
        if (s->n < BW_MAXPTS) {
            s->t[s->n] = ts * 1e-9;
            s->v[s->n++] = v;
            if (ts * 1e-9 > k->tmax) k->tmax = ts * 1e-9;
        }
        return;
    }
}
static void bw_nop_item(void *b, const struct rs_xitem *it) { (void)b, (void)it; }
static void bw_nop_end(void *b, const struct rs_xtrack *t, uint64_t ts) { (void)b, (void)t, (void)ts; }
static void bw_nop(void *b) { (void)b; }
static int bw_close(void *b, struct rs_exp_stats *st, char *err, size_t errlen)
{
    (void)b, (void)st, (void)err, (void)errlen;
    return 0;
}
static const struct rs_xbackend bw_backend = {bw_open,     bw_begin,   bw_track,   bw_nop_item, bw_nop_item,
                                              bw_nop_item, bw_nop_end, bw_counter, bw_nop,      bw_close};

static uint64_t run_span_ns(const struct rs_analysis *a)
{
    uint64_t end = 0;
    for (size_t r = 0; r < a->nranks; r++)
        for (size_t s = 0; s < a->ranks[r].nsteps; s++)
            if (a->ranks[r].steps[s].end_ns > end) end = a->ranks[r].steps[s].end_ns;
    for (size_t c = 0; c < a->ncolls; c++)
        if (a->colls[c].end_ns > end) end = a->colls[c].end_ns;
    return end;
}

static void collect_bw(const struct rs_analysis *a, struct bw_sink *k)
{
    uint64_t span = run_span_ns(a);
    uint64_t bin = span / 240;
    if (bin < 10000) bin = 10000; /* 10 us at least */
    for (size_t r = 0; r < a->nranks; r++) {
        const struct rs_an_rank *rk = &a->ranks[r];
        if (!rk->nqps || !rk->path[0]) continue;
        char err[256];
        struct rs_reader *rd = rs_reader_open(rk->path, err, sizeof err);
        if (!rd) continue;
        const struct rs_header_info *h = rs_reader_header(rd);
        struct rs_exp_opts o = {.format = RS_EXP_CHROME,
                                .out = "-",
                                .bw_bin_ns = bin,
                                .quiet = 1,
                                .no_flows = 1,
                                .base_realtime_ns = a->run_start_realtime_ns,
                                .sink = k};
        struct rs_exp *x = rs_exp_open_with(&o, &bw_backend, err, sizeof err);
        if (!x) {
            rs_reader_close(rd);
            continue;
        }
        k->rank = rk->rank;
        /* Put the rank on the analyzer's run clock (anchors + refinement: run = mono + clock_offset_ns)
         * rather than on the anchors alone, so the chart lines up with the other panels; the CLOCK
         * records that would re-anchor it are not passed on below. */
        struct rs_exp_proc p = {h->host,
                                h->pid,
                                h->rank,
                                h->world_size,
                                a->run_start_realtime_ns + h->start_mono + (uint64_t)rk->clock_offset_ns,
                                h->start_mono,
                                NULL};
        if (!rs_exp_begin_process(x, &p)) {
            struct rs_event e;
            while (rs_reader_next(rd, &e) > 0) {
                unsigned kd = e.ev->kind;
                /* only what the bandwidth counters need */
                if (kd == RS_EV_STRING || kd == RS_EV_IBV_POST_SEND || kd == RS_EV_IBV_WC ||
                    kd == RS_EV_IBV_CREATE_QP || kd == RS_EV_IBV_OPEN_DEVICE)
                    rs_exp_event(x, e.tid, e.ev);
            }
        }
        rs_exp_close(x, NULL, err, sizeof err);
        rs_reader_close(rd);
    }
}

/* ---------------- page ---------------- */

static const char css[] =
    "body{font:14px/1.4 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;background:#f6f7f9;color:#222}"
    "header{background:#1f2d3d;color:#fff;padding:14px 24px}header h1{margin:0;font-size:20px}"
    "header p{margin:4px 0 0;color:#c9d3dd}main{padding:12px 24px;max-width:1200px}"
    "section{background:#fff;border:1px solid #dde1e6;border-radius:6px;margin:14px 0;padding:12px 16px}"
    "h2{font-size:16px;margin:0 0 8px}table{border-collapse:collapse;font-size:13px}"
    "td,th{border-bottom:1px solid #eee;padding:3px 6px;text-align:right}th{background:#fafbfc;font-size:12px}"
    ".scroll{overflow-x:auto}"
    "td:first-child,th:first-child{text-align:left}.legend span{display:inline-block;margin-right:12px}"
    ".sw{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:-1px;border-radius:2px}"
    ".badge{display:inline-block;padding:2px 10px;border-radius:10px;font-weight:600;color:#fff}"
    ".USED{background:#2e7d32}.NOT_USED{background:#c62828}.PARTIAL{background:#ef6c00}.UNKNOWN{background:#757575}"
    ".warn{background:#fff4e5;border:1px solid #f0c36d;padding:6px 10px;border-radius:4px;margin:4px 0}"
    ".muted{color:#777}svg text{font:11px system-ui,sans-serif;fill:#333}ol li{margin:4px 0}";

static void warnings(FILE *f, const struct rs_analysis *a);

static void head(FILE *f, const struct rs_analysis *a)
{
    char b1[32], b2[32];
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
          "<title>railscope report</title><style>",
          f);
    fputs(css, f);
    fputs("</style></head><body>\n<header><h1>railscope report</h1><p>", f);
    fmt_s(b1, sizeof b1, a->step_mean_s);
    fprintf(f, "%zu rank(s), %llu step(s) per rank (steps from: ", a->nranks, (unsigned long long)a->nsteps);
    esc(f, a->step_source);
    fprintf(f, "), mean step %s, %llu events", b1, (unsigned long long)a->events);
    if (a->drops) fprintf(f, ", <b>%llu events lost by the tracer</b>", (unsigned long long)a->drops);
    fmt_s(b2, sizeof b2, a->residual_skew_s);
    fprintf(f, ". Link rate %.1f Gb/s (", a->link_gbps);
    esc(f, a->link_source);
    if (a->one_clock && a->nranks > 1) fputs("); one host clock (same boot id): no skew", f);
    else fprintf(f, "); clock alignment residual %s", b2);
    if (a->transport[0]) { /* what NCCL used, from the trace (docs/report.md "Transport") */
        const char *why = "";
        for (size_t i = 0; i < a->nranks && !why[0]; i++) why = a->ranks[i].transport_why;
        fputs(". NCCL transport: <b id=\"transport\">", f);
        esc(f, a->transport);
        fputs("</b> (", f);
        esc(f, why);
        fputs(")", f);
    }
    fputs(".</p></header>\n<main>\n", f);
    warnings(f, a);
}

/* The partial-input banner and the first eight warnings (and how many more there are). */
static void warnings(FILE *f, const struct rs_analysis *a)
{
    if (a->partial)
        fputs("<div class=\"warn\" id=\"partial\">Some inputs were truncated, damaged, unreadable or past the "
              "memory budget: the numbers cover what could be read.</div>\n",
              f);
    for (size_t i = 0; i < a->nwarnings && i < 8; i++) {
        fputs("<div class=\"warn\">", f);
        esc(f, a->warnings[i]);
        fputs("</div>\n", f);
    }
    /* the page keeps eight; the rest is not lost, and the reader is told where it is */
    if (a->nwarnings > 8)
        fprintf(f, "<div class=\"warn\">%zu more warnings: see the text or JSON report</div>\n",
                a->nwarnings - 8 + (a->warnings_dropped ? a->warnings_dropped - 1 : 0));
}

static void legend(FILE *f)
{
    fputs("<div class=\"legend\">", f);
    for (int c = 0; c < RS_CAT_COUNT; c++) {
        fprintf(f, "<span><i class=\"sw\" style=\"background:%s\"></i>", cat_color[c]);
        esc(f, cat_words[c]);
        fputs("</span>", f);
    }
    fputs("</div>\n", f);
}

/* Panel 1 */
static void panel_breakdown(FILE *f, const struct rs_analysis *a)
{
    fputs("<section id=\"step-breakdown\"><h2>Where each rank's step time goes</h2>\n"
          "<p class=\"muted\">Mean step per rank, split into categories that add up to the step time.</p>\n",
          f);
    if (a->lag_colls) { /* peer wait not measured: estimated from the arrival lag (analyze_join.c lag_waits) */
        char t[32];
        fmt_s(t, sizeof t, a->lag_wait_s / (a->nsteps ? (double)a->nsteps : 1));
        fprintf(f,
                "<p id=\"peer-wait-estimated\">Peer wait estimated from the arrival lag: %s per step of it at %llu of "
                "%zu collectives nothing timed (host times, from each rank's NCCL call to the last rank's).</p>\n",
                t, (unsigned long long)a->lag_colls, a->ncolls);
    }
    legend(f);
    double maxv = 0;
    for (size_t r = 0; r < a->nranks; r++) {
        const struct rs_an_rank *rk = &a->ranks[r];
        double n = rk->nsteps ? (double)rk->nsteps : 1, t = 0;
        for (int c = 0; c < RS_CAT_COUNT; c++) t += rk->attr[c] / n;
        if (t > maxv) maxv = t;
    }
    if (maxv <= 0) maxv = 1;
    const int W = 900, L = 110, bh = 20, gap = 8;
    int H = (int)a->nranks * (bh + gap) + 30;
    fprintf(f, "<svg id=\"breakdown-svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", W, H, W,
            H);
    for (size_t r = 0; r < a->nranks; r++) {
        const struct rs_an_rank *rk = &a->ranks[r];
        double n = rk->nsteps ? (double)rk->nsteps : 1, x = L, tot = 0;
        int y = (int)r * (bh + gap) + 4;
        fprintf(f, "<text x=\"4\" y=\"%d\">rank %d</text>\n", y + 14, rk->rank);
        for (int c = 0; c < RS_CAT_COUNT; c++) {
            double v = rk->attr[c] / n;
            tot += v;
            double w = v / maxv * (W - L - 90);
            if (w <= 0) continue;
            char t[32];
            fmt_s(t, sizeof t, v);
            fprintf(f,
                    "<rect class=\"cat-%s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\">"
                    "<title>rank %d: %s %s</title></rect>\n",
                    cat_key[c], x, y, w, bh, cat_color[c], rk->rank, cat_words[c], t);
            x += w;
        }
        char t[32];
        fmt_s(t, sizeof t, tot);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\">%s</text>\n", x + 6, y + 14, t);
    }
    fprintf(f, "</svg>\n");
    /* the numbers */
    static const char *const short_names[RS_CAT_COUNT] = {"compute", "H2D",       "intra-node", "network", "stall",
                                                          "latency", "peer wait", "idle",       "other"};
    fputs("<div class=\"scroll\"><table><tr><th>rank</th><th>host</th><th>steps</th><th>mean step</th>", f);
    for (int c = 0; c < RS_CAT_COUNT; c++) {
        fprintf(f, "<th title=\"%s\">", cat_key[c]);
        esc(f, short_names[c]);
        fputs("</th>", f);
    }
    fputs("<th>input</th></tr>\n", f);
    for (size_t r = 0; r < a->nranks; r++) {
        const struct rs_an_rank *rk = &a->ranks[r];
        char t[32];
        fmt_s(t, sizeof t, rk->step_mean_s);
        fprintf(f, "<tr><td>%d</td><td>", rk->rank);
        esc(f, rk->host);
        fprintf(f, "</td><td>%zu</td><td>%s</td>", rk->nsteps, t);
        double n = rk->nsteps ? (double)rk->nsteps : 1;
        for (int c = 0; c < RS_CAT_COUNT; c++) {
            fmt_s(t, sizeof t, rk->attr[c] / n);
            fprintf(f, "<td>%s</td>", t);
        }
        static const char *const in[] = {"complete", "truncated", "corrupt", "unreadable"};
        fprintf(f, "<td>%s</td></tr>\n", rk->input >= 0 && rk->input < 4 ? in[rk->input] : "?");
    }
    fputs("</table></div></section>\n", f);
}

/* Panel 2: one SVG group per step, the slowest shown first. */
/* How many collectives went through the network, as the trace shows NCCL's transport. */
static void coll_transport(FILE *f, const struct rs_analysis *a)
{
    size_t ninter = 0, nintra = 0;
    for (size_t i = 0; i < a->ncolls; i++) {
        ninter += a->colls[i].inter == 1;
        nintra += a->colls[i].inter == 0;
    }
    if (!ninter && !nintra) return;
    fprintf(f, "<p id=\"coll-transport\">Transport: %zu collective(s) through the network (", ninter);
    esc(f, a->transport[0] ? a->transport : "NET");
    fprintf(f, "), %zu intra-node (P2P/SHM), %zu unknown.</p>\n", nintra, a->ncolls - ninter - nintra);
}

static void panel_allreduce(FILE *f, const struct rs_analysis *a)
{
    fputs("<section id=\"allreduce-timeline\"><h2>AllReduce phases of one step</h2>\n", f);
    int64_t nsteps = (int64_t)a->nsteps;
    if (!a->ncolls || nsteps <= 0) {
        fputs("<p class=\"muted\">No collectives joined across ranks in this run.</p></section>\n", f);
        return;
    }
    coll_transport(f, a);
    /* The run's steps (the analyzer's view across ranks: one id is one step on every rank, and a collective's
     * `step` is that id), else the steps of the rank with the most; the slowest by mean duration over ranks. */
    struct rs_an_runstep *rsv = NULL;
    size_t nrs = rs_an_run_steps ? rs_an_run_steps(a, &rsv) : 0;
    size_t most = 0;
    for (size_t r = 1; r < a->nranks; r++)
        if (a->ranks[r].nsteps > a->ranks[most].nsteps) most = r;
    if (!nrs) nsteps = a->nranks ? (int64_t)a->ranks[most].nsteps : 0;
    else nsteps = (int64_t)nrs;
    int64_t *ids = calloc((size_t)nsteps + 1, sizeof *ids);
    if (!ids) {
        free(rsv);
        fputs("<p class=\"muted\">Out of memory.</p></section>\n", f);
        return;
    }
    int64_t slow = 0;
    double slow_d = -1;
    for (int64_t s = 0; s < nsteps; s++) {
        double d;
        if (nrs) {
            ids[s] = rsv[s].id;
            d = rsv[s].mean_s;
        } else {
            const struct rs_an_step *st = &a->ranks[most].steps[s];
            ids[s] = st->id;
            d = (double)(st->end_ns - st->start_ns) * 1e-9;
        }
        if (d > slow_d) {
            slow_d = d;
            slow = s;
        }
    }
    fputs("<p class=\"muted\">Per collective: arrival skew (ranks waiting for the last one), then its own time "
          "split into phases. Step: <select id=\"step-select\" onchange=\"showStep(this.value)\">",
          f);
    for (int64_t s = 0; s < nsteps; s++) {
        char info[96] = "";
        if (nrs) {
            char m1[32], m2[32];
            fmt_s(m1, sizeof m1, rsv[s].mean_s);
            fmt_s(m2, sizeof m2, rsv[s].max_s);
            snprintf(info, sizeof info, ": %s mean, %s on rank %d", m1, m2, rsv[s].slowest_rank);
        }
        fprintf(f, "<option value=\"%lld\"%s>step %lld%s%s</option>", (long long)ids[s], s == slow ? " selected" : "",
                (long long)ids[s], s == slow ? " (slowest)" : "", info);
    }
    fputs("</select></p>\n", f);
    static const char *const ph_color[] = {"#d9d9d9", "#4e79a7", "#59a14f", "#76b7b2", "#59a14f",
                                           "#e15759", "#bab0ac", "#9c755f", "#edc948"};
    /* tree AllReduce: reduce (up) and broadcast (down) phases, when the analysis found them */
    int tree = 0;
    for (size_t c = 0; c < a->ncolls && !tree; c++) tree = a->colls[c].reduce_s > 0 || a->colls[c].bcast_s > 0;
    fputs("<div class=\"legend\"><span><i class=\"sw\" style=\"background:#d9d9d9\"></i>arrival skew</span>"
          "<span><i class=\"sw\" style=\"background:#4e79a7\"></i>reduce-scatter</span>"
          "<span><i class=\"sw\" style=\"background:#59a14f\"></i>all-gather / network</span>",
          f);
    if (tree)
        fputs("<span><i class=\"sw\" style=\"background:#9c755f\"></i>tree reduce (up)</span>"
              "<span><i class=\"sw\" style=\"background:#edc948\"></i>tree broadcast (down)</span>",
              f);
    fputs("<span><i class=\"sw\" style=\"background:#76b7b2\"></i>intra-node</span>"
          "<span><i class=\"sw\" style=\"background:#e15759\"></i>network stall</span>"
          "<span><i class=\"sw\" style=\"background:#bab0ac\"></i>other</span></div>\n",
          f);
    const int W = 900, L = 190;
    for (int64_t s = 0; s < nsteps; s++) {
        size_t nc = 0;
        uint64_t t0 = UINT64_MAX, t1 = 0;
        for (size_t c = 0; c < a->ncolls; c++) {
            const struct rs_an_coll *co = &a->colls[c];
            if (co->step != ids[s]) continue;
            nc++;
            if (co->first_arrival_ns < t0) t0 = co->first_arrival_ns;
            if (co->end_ns > t1) t1 = co->end_ns;
        }
        int H = (int)(nc ? nc : 1) * 24 + 34;
        fprintf(f, "<svg class=\"step-g\" id=\"step-%lld\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\"%s>\n",
                (long long)ids[s], W, H, W, H, s == slow ? "" : " style=\"display:none\"");
        if (!nc) {
            fputs("<text x=\"4\" y=\"20\">no joined collective in this step</text></svg>\n", f);
            continue;
        }
        double span = t1 > t0 ? (double)(t1 - t0) : 1;
        double sc = (W - L - 20) / span;
        size_t row = 0;
        for (size_t c = 0; c < a->ncolls; c++) {
            const struct rs_an_coll *co = &a->colls[c];
            if (co->step != ids[s]) continue;
            int y = (int)row++ * 24 + 4;
            char by[32], t[32];
            fmt_bytes(by, sizeof by, (double)co->bytes);
            fprintf(f, "<text x=\"4\" y=\"%d\">", y + 14);
            esc(f, co->func);
            fprintf(f, " #%llu %s</text>\n", (unsigned long long)co->seq, by);
            double xa = L + (co->first_arrival_ns - t0) * sc, xb = L + (co->last_arrival_ns - t0) * sc;
            fmt_s(t, sizeof t, co->arrival_skew_s);
            fprintf(f,
                    "<rect class=\"phase skew\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"18\" fill=\"%s\">"
                    "<title>arrival skew %s: waiting for rank %d</title></rect>\n",
                    xa, y, xb - xa > 0.5 ? xb - xa : 0.5, ph_color[0], t, co->last_rank);
            /* own time: ring RS/AG halves or tree reduce/broadcast phases when known, else intra/net/stall */
            double segs[4], x = xb;
            const char *names[4], *cls[4] = {"", "", "", ""};
            int cols[4], ns = 0;
            if (co->rs_s > 0 || co->ag_s > 0) {
                segs[ns] = co->rs_s, names[ns] = "reduce-scatter", cols[ns++] = 1;
                segs[ns] = co->ag_s, names[ns] = "all-gather", cols[ns++] = 2;
            } else if (co->reduce_s > 0 || co->bcast_s > 0) {
                segs[ns] = co->reduce_s, names[ns] = "tree reduce (up)", cls[ns] = " tree-reduce", cols[ns++] = 7;
                segs[ns] = co->bcast_s, names[ns] = "tree broadcast (down)", cls[ns] = " tree-bcast", cols[ns++] = 8;
            } else {
                segs[ns] = co->intra_s, names[ns] = "intra-node", cols[ns++] = 3;
                segs[ns] = co->net_s, names[ns] = "network", cols[ns++] = 4;
                segs[ns] = co->stall_s, names[ns] = "network stall", cols[ns++] = 5;
            }
            double used = 0;
            for (int i = 0; i < ns; i++) used += segs[i] > 0 ? segs[i] : 0;
            if (co->dur_s > used) segs[ns] = co->dur_s - used, names[ns] = "other", cols[ns++] = 6;
            for (int i = 0; i < ns; i++) {
                if (segs[i] <= 0) continue;
                double w = segs[i] * 1e9 * sc;
                fmt_s(t, sizeof t, segs[i]);
                fprintf(f,
                        "<rect class=\"phase%s\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"18\" fill=\"%s\">"
                        "<title>%s %s</title></rect>\n",
                        cls[i], x, y, w > 0.5 ? w : 0.5, ph_color[cols[i]], names[i], t);
                x += w;
            }
            char bw[48] = "";
            if (co->busbw_gbps > 0) snprintf(bw, sizeof bw, " busbw %.1f GB/s", co->busbw_gbps);
            fmt_s(t, sizeof t, co->dur_s);
            /* after the bar when there is room, else over its end with a white halo to stay legible */
            fprintf(f,
                    "<text x=\"%.1f\" y=\"%d\" style=\"paint-order:stroke;stroke:#fff;stroke-width:3px\">%s%s"
                    "</text>\n",
                    x + 4 < W - 140 ? x + 4 : W - 140, y + 14, t, bw);
        }
        char t[32];
        fmt_s(t, sizeof t, span * 1e-9);
        fprintf(f, "<text x=\"%d\" y=\"%d\">0</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", L, H - 6,
                W - 20, H - 6, t);
        fputs("</svg>\n", f);
    }
    free(ids);
    free(rsv);
    /* the chooser; "#step=N" in the URL preselects step N (its id, as the report names it; links from notes, and
     * the headless test) */
    fputs("<script>function showStep(v){var g=document.getElementsByClassName('step-g');"
          "for(var i=0;i<g.length;i++)g[i].style.display=(g[i].id==='step-'+v)?'':'none';"
          "var s=document.getElementById('step-select');if(s)s.value=String(v);}\n"
          "var m=/step=(\\d+)/.exec(location.hash);if(m&&document.getElementById('step-'+m[1]))showStep(m[1]);"
          "</script>\n",
          f);
    fputs("</section>\n", f);
}

/* Panel 3 */
static void panel_qp(FILE *f, const struct rs_analysis *a)
{
    fputs("<section id=\"qp-bandwidth\"><h2>Per-QP bandwidth over time</h2>\n", f);
    struct bw_sink k = {0};
    collect_bw(a, &k);
    size_t keep = 0; /* QPs that never completed a send (receive-only) have nothing to draw */
    for (size_t i = 0; i < k.n; i++) {
        int any = 0;
        for (size_t j = 0; j < k.s[i].n && !any; j++) any = k.s[i].v[j] > 0;
        if (any) k.s[keep++] = k.s[i];
    }
    k.n = keep;
    /* Many ranks: draw the QPs that moved the most bytes; the table below lists them all. */
    size_t shown = k.n, limit = 16;
    if (k.n > limit) {
        for (size_t i = 0; i < limit; i++) { /* partial selection sort by bytes (sum of the bins) */
            size_t best = i;
            double bv = -1;
            for (size_t j = i; j < k.n; j++) {
                double v = 0;
                for (size_t t = 0; t < k.s[j].n; t++) v += k.s[j].v[t];
                if (v > bv) bv = v, best = j;
            }
            if (best != i) {
                struct bw_series tmp = k.s[i];
                k.s[i] = k.s[best];
                k.s[best] = tmp;
            }
        }
        k.n = limit;
    }
    static const char *const pal[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                      "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
    if (!k.n) {
        fputs("<p class=\"muted\">No completed send work requests in the traces.</p>\n", f);
    } else {
        double vmax = a->link_gbps / 8; /* GB/s */
        for (size_t i = 0; i < k.n; i++)
            for (size_t j = 0; j < k.s[i].n; j++)
                if (k.s[i].v[j] > vmax) vmax = k.s[i].v[j];
        if (vmax <= 0) vmax = 1;
        double tmax = k.tmax > 0 ? k.tmax : 1;
        const int W = 900, H = 240, L = 50, B = 24;
        fprintf(f, "<svg id=\"qp-bw-svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\">\n", W, H + 10, W, H + 10);
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999\"/>", L, H - B, W - 10, H - B);
        fprintf(f, "<line x1=\"%d\" y1=\"4\" x2=\"%d\" y2=\"%d\" stroke=\"#999\"/>\n", L, L, H - B);
        fprintf(f, "<text x=\"2\" y=\"12\">%.2g GB/s</text><text x=\"2\" y=\"%d\">0</text>\n", vmax, H - B);
        char t[32];
        fmt_s(t, sizeof t, tmax);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", W - 10, H - 6, t);
        if (a->link_gbps > 0) {
            double y = (H - B) - (a->link_gbps / 8) / vmax * (H - B - 8);
            fprintf(f,
                    "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#c62828\" stroke-dasharray=\"5,4\">"
                    "<title>link rate %.1f Gb/s</title></line>\n",
                    L, y, W - 10, y, a->link_gbps);
        }
        for (size_t i = 0; i < k.n; i++) {
            struct bw_series *s = &k.s[i];
            fprintf(f, "<polyline class=\"qp-line\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" points=\"",
                    pal[i % 10]);
            /* a bin's value holds until the next bin: draw steps, not ramps */
            for (size_t j = 0; j < s->n; j++) {
                double x0 = L + s->t[j] / tmax * (W - L - 10), y = (H - B) - s->v[j] / vmax * (H - B - 8);
                double x1 = j + 1 < s->n ? L + s->t[j + 1] / tmax * (W - L - 10) : x0;
                fprintf(f, "%.1f,%.1f %.1f,%.1f ", x0, y, x1, y);
            }
            fprintf(f, "\"><title>rank %d QP 0x%x</title></polyline>\n", s->rank, s->qp);
        }
        fputs("</svg>\n<div class=\"legend\">", f);
        for (size_t i = 0; i < k.n; i++)
            fprintf(f, "<span><i class=\"sw\" style=\"background:%s\"></i>rank %d QP 0x%x</span>", pal[i % 10],
                    k.s[i].rank, k.s[i].qp);
        fputs("<span><i class=\"sw\" style=\"background:#c62828\"></i>link rate</span></div>\n", f);
        if (shown > k.n)
            fprintf(f, "<p class=\"muted\">The %zu busiest of %zu sending QPs are drawn; all are in the table.</p>\n",
                    k.n, shown);
    }
    free(k.s);
    fputs("<table><tr><th>rank</th><th>QP</th><th>peer</th><th>sent</th><th title=\"data-carrying send WRs, merged "
          "into bursts (JSON sends)\">sends</th><th>busy</th>"
          "<th>ideal</th><th>stall</th><th>achieved</th><th>longest wait</th><th>GPUDirect</th></tr>\n",
          f);
    for (size_t r = 0; r < a->nranks; r++)
        for (size_t q = 0; q < a->ranks[r].nqps; q++) {
            const struct rs_an_qp *qp = &a->ranks[r].qps[q];
            char by[32], b1[32], b2[32], b3[32], b4[32];
            fmt_bytes(by, sizeof by, (double)qp->bytes_sent);
            fmt_s(b1, sizeof b1, qp->busy_s);
            fmt_s(b2, sizeof b2, qp->ideal_s);
            fmt_s(b3, sizeof b3, qp->stall_s);
            fmt_s(b4, sizeof b4, qp->max_wait_s);
            fprintf(f,
                    "<tr><td>%d</td><td>0x%x</td><td>%d</td><td>%s</td><td>%llu</td><td>%s</td><td>%s</td>"
                    "<td>%s</td><td>%.2f Gb/s</td><td>%s</td><td>%s</td></tr>\n",
                    a->ranks[r].rank, qp->qp_num, qp->peer_rank, by, (unsigned long long)qp->sends, b1, b2, b3,
                    qp->achieved_gbps, b4, gd_name(qp->gd.verdict));
        }
    fputs("</table></section>\n", f);
}

static void gd_row(FILE *f, const char *who, const struct rs_an_gd *g)
{
    fprintf(f, "<tr><td>%s</td><td><span class=\"badge %s\">%s</span></td>", who,
            g->verdict == RS_GD_NOT_USED ? "NOT_USED" : gd_name(g->verdict), gd_name(g->verdict));
    for (int m = 1; m < RS_AN_MEMKINDS; m++) {
        char b1[32], b2[32];
        fmt_bytes(b1, sizeof b1, (double)g->posted_bytes[m]);
        fmt_bytes(b2, sizeof b2, (double)g->mr_bytes[m]);
        fprintf(f, "<td>%s / %s</td>", b1, b2);
    }
    fprintf(f, "<td>%llu</td><td>%llu / %llu</td><td style=\"text-align:left\">", (unsigned long long)g->dmabuf_mrs,
            (unsigned long long)g->bounce_d2h, (unsigned long long)g->bounce_h2d);
    esc(f, g->evidence);
    fputs("</td></tr>\n", f);
}

/* Panel 4 */
static void panel_gpudirect(FILE *f, const struct rs_analysis *a)
{
    int v = a->gd_verdict;
    fprintf(f,
            "<section id=\"gpudirect\"><h2>GPUDirect RDMA: <span class=\"badge %s\" id=\"gd-verdict\">%s</span>"
            "</h2>\n",
            v == RS_GD_NOT_USED ? "NOT_USED" : gd_name(v), gd_name(v));
    if (a->gd_note[0]) { /* the text report's qualifier (analyze_verdict.c) */
        fputs("<p id=\"gd-note\">", f);
        esc(f, a->gd_note);
        fputs("</p>\n", f);
    }
    fputs("<p class=\"muted\">Evidence: bytes posted / bytes registered by memory kind, dmabuf registrations, "
          "bounce copies (device-to-host before a send / host-to-device after a receive).</p>\n"
          "<table><tr><th>rank</th><th>verdict</th>",
          f);
    for (int m = 1; m < RS_AN_MEMKINDS; m++) fprintf(f, "<th>%s</th>", mem_names[m]);
    fputs("<th>dmabuf MRs</th><th>bounces d2h / h2d</th><th>evidence</th></tr>\n", f);
    for (size_t r = 0; r < a->nranks; r++) {
        char who[32];
        snprintf(who, sizeof who, "%d", a->ranks[r].rank);
        gd_row(f, who, &a->ranks[r].gd);
    }
    fputs("</table></section>\n", f);
}

/* Host checks: doctor's verdicts on each host's recorded facts (the run's own snapshot). */
static void panel_hostchecks(FILE *f, const struct rs_analysis *a)
{
    if (!a->nhostchecks || !a->hostchecks) return;
    fputs("<section id=\"host-checks\"><h2>Host checks from the recorded facts</h2>\n<table><tr><th>host</th>"
          "<th>verdict</th><th>check</th><th>subject</th><th>finding</th><th>fix</th></tr>\n",
          f);
    for (size_t i = 0; i < a->nhostchecks; i++) {
        const struct rs_an_hostcheck *c = &a->hostchecks[i];
        fputs("<tr><td>", f);
        esc(f, c->host);
        fprintf(f, "</td><td><span class=\"badge %s\">%s</span></td><td>", c->fail ? "NOT_USED" : "PARTIAL",
                c->fail ? "FAIL" : "WARN");
        esc(f, c->check);
        fputs("</td><td>", f);
        esc(f, c->subject);
        fputs("</td><td style=\"text-align:left\">", f);
        esc(f, c->msg);
        fputs("</td><td style=\"text-align:left\">", f);
        esc(f, c->fix);
        fputs("</td></tr>\n", f);
    }
    fputs("</table></section>\n", f);
}

/* Panel 5 */
static void panel_findings(FILE *f, const struct rs_analysis *a)
{
    fputs("<section id=\"findings\"><h2>Top findings</h2>\n", f);
    if (!a->nfindings) fputs("<p class=\"muted\">Nothing stands out.</p>\n", f);
    else {
        fputs("<ol>", f);
        for (size_t i = 0; i < a->nfindings && i < 3; i++) {
            const struct rs_an_finding *fd = &a->findings[i];
            char t[32];
            fmt_s(t, sizeof t, fd->cost_s);
            fprintf(f, "<li class=\"finding\"><b>%.1f%% of step time</b> (%s over the run, ", fd->step_frac * 100, t);
            if (fd->gpudirect) /* no attribution category: what the cost is; the ranking floor is no measurement */
                fprintf(f,
                        "bounce copies through host memory; GPUDirect RDMA not used is a configuration fault, "
                        "ranked as at least %.0f%% of step time",
                        100 * RS_AN_GD_RANK_FLOOR);
            else esc(f, fd->cat >= 0 && fd->cat < RS_CAT_COUNT ? cat_words[fd->cat] : "?");
            fputs("): ", f);
            esc(f, fd->text);
            fputs("</li>", f);
        }
        fputs("</ol>\n", f);
    }
    if (!a->stragglers_known && a->nranks)
        fprintf(f, "<h2>Stragglers</h2><p id=\"stragglers-unknown\">Cannot tell: %s.</p>\n",
                !strcmp(a->straggler_basis, "none: round trips")
                    ? AN_RT_WHY
                    : "no collectives joined across ranks and no per-step network sends to compare arrivals");
    if (a->nstragglers) {
        fprintf(f,
                "<h2>Stragglers</h2><p class=\"muted\" id=\"straggler-cost\">Cost: the others' wait for the rank, per "
                "step, mean over the run's %zu ranks, as in &ldquo;waiting for late ranks&rdquo;.</p>\n<table><tr>"
                "<th>rank</th><th>persistent</th><th>late</th><th>mean lateness</th><th>cost per step</th></tr>\n",
                a->mean_ranks);
        double all = 0;
        for (size_t i = 0; i < a->nstragglers; i++) {
            const struct rs_an_straggler *s = &a->stragglers[i];
            char b1[32], b2[32];
            fmt_s(b1, sizeof b1, s->mean_late_s);
            fmt_s(b2, sizeof b2, s->cost_per_step_s);
            fprintf(f, "<tr><td>%d</td><td>%s</td><td>%llu of %llu</td><td>%s</td><td>%s</td></tr>\n", s->rank,
                    s->persistent ? "yes" : "no", (unsigned long long)s->late_count, (unsigned long long)s->of, b1, b2);
            all += s->cost_per_step_s;
        }
        char b3[32], b4[32];
        fmt_s(b3, sizeof b3, all);
        fmt_s(b4, sizeof b4, a->attr[RS_CAT_PEER_WAIT] / (a->nsteps ? (double)a->nsteps : 1));
        fprintf(f,
                "<tr><td colspan=\"4\">%s</td><td id=\"straggler-sum\">%s of the %s waiting for late ranks</td>"
                "</tr>\n</table>\n",
                a->nstragglers > 1 ? "together" : "in all", b3, b4);
    }
    fputs("</section>\n", f);
}

/* Nothing to analyse (a shell, a CPU-only command): the text report's one line and the warnings, not a page of
 * zeros under a default link rate. */
static void html_nothing(FILE *f, const struct rs_analysis *a)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>railscope report</title><style>", f);
    fputs(css, f);
    fprintf(f,
            "</style></head><body>\n<header><h1>railscope report</h1><p id=\"nothing\">Nothing to analyse: %zu "
            "process%s traced (%llu events), none with GPU, NCCL or verbs activity, and no steps marked.</p>"
            "</header>\n<main>\n",
            a->nranks, a->nranks == 1 ? "" : "es", (unsigned long long)a->events);
    warnings(f, a);
}

int rs_report_html_write(const struct rs_analysis *a, FILE *f)
{
    if (!a->analysable) {
        html_nothing(f, a);
        fputs("</main></body></html>\n", f);
        fflush(f);
        return ferror(f) ? -1 : 0;
    }
    head(f, a);
    panel_findings(f, a);
    panel_breakdown(f, a);
    panel_allreduce(f, a);
    panel_qp(f, a);
    panel_gpudirect(f, a);
    panel_hostchecks(f, a);
    fputs("<footer class=\"muted\" style=\"padding:0 24px 20px\">railscope: this page is self-contained "
          "(no network). Open the Perfetto export for the event-level view.</footer>\n</main></body></html>\n",
          f);
    fflush(f);
    return ferror(f) ? -1 : 0;
}

int rs_report_html(const struct rs_analysis *a, const char *path, char *err, size_t errlen)
{
    FILE *f = !strcmp(path, "-") ? stdout : fopen(path, "w");
    if (!f) {
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = rs_report_html_write(a, f);
    int saved = errno;
    if (f != stdout && fclose(f) && !rc) rc = -1, saved = errno;
    if (rc) snprintf(err, errlen, "write error on %s: %s", path, strerror(saved));
    return rc;
}
