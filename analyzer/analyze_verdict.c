/* Verdicts in plain words: GPUDirect RDMA per rank and per QP, and the top findings of the run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_int.h"
#include "formats/rtrace.h"

static void human_bytes(char *b, size_t n, double v)
{
    const char *u[] = {"B", "KB", "MB", "GB", "TB"};
    int i = 0;
    while (v >= 1000 && i < 4) {
        v /= 1000;
        i++;
    }
    snprintf(b, n, i ? "%.1f %s" : "%.0f %s", v, u[i]);
}

/* Decide from bytes posted by memory kind; fall back to registered memory when posts carry no kind. */
static void verdict(struct rs_an_gd *g, int peermem, int with_mrs)
{
    uint64_t dev = g->posted_bytes[RS_MEM_DEVICE] + g->posted_bytes[RS_MEM_DMABUF] + g->posted_bytes[RS_MEM_MANAGED];
    uint64_t host = g->posted_bytes[RS_MEM_HOST] + g->posted_bytes[RS_MEM_PINNED];
    uint64_t mixed = g->posted_bytes[RS_MEM_MIXED];
    uint64_t mdev = g->mr_bytes[RS_MEM_DEVICE] + g->mr_bytes[RS_MEM_DMABUF] + g->mr_bytes[RS_MEM_MANAGED];
    uint64_t mhost = g->mr_bytes[RS_MEM_HOST] + g->mr_bytes[RS_MEM_PINNED];
    if (dev && host) g->verdict = RS_GD_PARTIAL;
    else if (dev) g->verdict = RS_GD_USED;
    else if (host) g->verdict = RS_GD_NOT_USED;
    else if (mixed) g->verdict = RS_GD_PARTIAL;
    else if (with_mrs && mdev && !mhost) g->verdict = RS_GD_USED;
    else if (with_mrs && mhost && !mdev) g->verdict = RS_GD_NOT_USED;
    else if (with_mrs && mhost && mdev) g->verdict = RS_GD_PARTIAL;
    else g->verdict = RS_GD_UNKNOWN;
    char a[32], b[32], c[32], d[32];
    human_bytes(a, sizeof a, (double)dev);
    human_bytes(b, sizeof b, (double)host);
    human_bytes(c, sizeof c, (double)mdev);
    human_bytes(d, sizeof d, (double)mhost);
    /* posted bytes are those of send and receive WRs: say both counts (a ping-pong's receives outnumber its
     * sends) */
    int n = snprintf(g->evidence, sizeof g->evidence,
                     "posted %s from GPU memory and %s from host memory in %llu WRs (%llu sends, %llu receives)", a, b,
                     (unsigned long long)g->posts, (unsigned long long)g->send_posts,
                     (unsigned long long)(g->posts - g->send_posts));
    if (with_mrs && n < (int)sizeof g->evidence)
        n += snprintf(g->evidence + n, sizeof g->evidence - n, "; MRs: %s GPU, %s host, %llu dmabuf", c, d,
                      (unsigned long long)g->dmabuf_mrs);
    if ((g->bounce_d2h || g->bounce_h2d) && n < (int)sizeof g->evidence)
        n += snprintf(g->evidence + n, sizeof g->evidence - n,
                      "; bounce copies: %llu device->host before sends, %llu host->device after receives",
                      (unsigned long long)g->bounce_d2h, (unsigned long long)g->bounce_h2d);
    if (peermem >= 0 && n < (int)sizeof g->evidence)
        n +=
            snprintf(g->evidence + n, sizeof g->evidence - n, "; nvidia_peermem %s", peermem ? "loaded" : "not loaded");
    if (g->verdict == RS_GD_UNKNOWN && !g->posts && n < (int)sizeof g->evidence)
        snprintf(g->evidence + n, sizeof g->evidence - n, "; no RDMA traffic recorded");
}

/* No verbs traffic on the rank: NCCL's transport decides. NET/Socket moves every byte through host
 * sockets: GPUDirect RDMA is not used, whatever the registered memory says. P2P/SHM only: no network
 * transport, nothing for GPUDirect RDMA to do (UNKNOWN, said so). */
static void verdict_from_transport(struct rs_an_rank *o, int gdr)
{
    struct rs_an_gd *g = &o->gd;
    if (g->posts || !o->transport[0]) return;
    if (!strncmp(o->transport, "NET/IB", 6) && gdr >= 0) { /* NCCL's log says whether its IB used GDR */
        g->verdict = gdr == 1 ? RS_GD_USED : gdr ? RS_GD_PARTIAL : RS_GD_NOT_USED;
        snprintf(g->evidence, sizeof g->evidence, "NCCL used %.40s %s GPUDirect RDMA: %.200s", o->transport,
                 gdr == 1 ? "with"
                 : gdr    ? "partly with"
                          : "without",
                 o->transport_why);
    } else if (!strncmp(o->transport, "NET/Socket", 10)) {
        g->verdict = RS_GD_NOT_USED;
        snprintf(g->evidence, sizeof g->evidence, "NCCL used %.40s, no RDMA: %.250s", o->transport, o->transport_why);
    } else if (!strstr(o->transport, "NET") && !strstr(o->transport, "CollNet") && !strstr(o->transport, "other")) {
        /* "P2P/SHM" (no log), or NCCL's log: "P2P", "SHM", "P2P + SHM", "NVLS" ... */
        g->verdict = RS_GD_UNKNOWN;
        snprintf(g->evidence, sizeof g->evidence, "no network transport (NCCL used %.40s only): %.200s", o->transport,
                 o->transport_why);
    }
}

/* GPU memory to send from: a GPU program (GPU activity, copy calls or NCCL traced) or device, managed or dmabuf
 * memory registered or posted on some rank. Then GPUDirect RDMA NOT USED is a fault (the finding); without, a
 * host-memory program has nothing for GPUDirect to do. The GPUDirect section and the finding both use this. */
static int gpu_memory(const struct rs_analysis *a)
{
    int m = a->gpu_program_ranks > 0;
    for (size_t i = 0; i < a->nranks && !m; i++)
        for (int k = RS_MEM_DEVICE; k <= RS_MEM_DMABUF; k++)
            if (a->ranks[i].gd.mr_bytes[k] || a->ranks[i].gd.posted_bytes[k]) m = 1;
    return m;
}

/* The run verdict's qualifier (a->gd_note), the same in text, JSON and HTML: why no verdict can be given (verbs
 * not captured), or whether NOT USED/PARTIAL is a fault (gpu_memory()) or a host-memory program's. */
static void gd_note(struct rs_analysis *a, size_t noverbs)
{
    char *b = a->gd_note;
    size_t len = sizeof a->gd_note;
    int v = a->gd_verdict, w = 0;
    b[0] = 0;
    if (!a->nranks) return;
    if (v == RS_GD_UNKNOWN && noverbs == a->nranks)
        w = snprintf(b, len, "verbs not captured: RAILSCOPE_EVENTS left them out, nothing to tell it from");
    else if ((v == RS_GD_NOT_USED || v == RS_GD_PARTIAL) && !a->gd_gpu_memory)
        w = snprintf(b, len,
                     "no GPU activity traced and no GPU memory registered or posted: a host-memory program, not a "
                     "fault");
    else if (v == RS_GD_NOT_USED || v == RS_GD_PARTIAL) {
        int reg = 0, post = 0;
        for (size_t i = 0; i < a->nranks; i++)
            for (int k = RS_MEM_DEVICE; k <= RS_MEM_DMABUF; k++) {
                reg |= a->ranks[i].gd.mr_bytes[k] != 0;
                post |= a->ranks[i].gd.posted_bytes[k] != 0;
            }
        w = snprintf(b, len, "a fault: %s, but %s network traffic goes through host memory",
                     post  ? "GPU memory is posted in some work requests"
                     : reg ? "GPU memory is registered"
                           : "a GPU program (GPU activity, copy calls or NCCL traced)",
                     v == RS_GD_PARTIAL ? "part of the" : "the");
    }
    if (noverbs && (v != RS_GD_UNKNOWN || noverbs < a->nranks) && w >= 0 && (size_t)w < len)
        snprintf(b + w, len - (size_t)w, "%sverbs not captured on %zu of %zu ranks", w ? "; " : "", noverbs, a->nranks);
}

void an_gpudirect(struct rs_analysis *a, struct an_rank *R, size_t n)
{
    int seen[RS_GD_COUNT] = {0};
    size_t noverbs = 0;
    for (size_t i = 0; i < n; i++) {
        struct rs_an_rank *o = &a->ranks[i];
        o->gd.send_posts = 0;
        for (size_t q = 0; q < o->nqps; q++) o->gd.send_posts += R[i].qps[q].send_wrs;
        verdict(&o->gd, R[i].peermem, 1);
        if (R[i].verbs_off && !o->gd.posts) { /* no verbs in the trace proves nothing: not "no RDMA traffic" */
            noverbs++;
            snprintf(o->gd.evidence, sizeof o->gd.evidence,
                     "verbs not captured: RAILSCOPE_EVENTS left them out, no work requests or memory registrations "
                     "to tell from");
        }
        verdict_from_transport(o, R[i].gdr);
        seen[o->gd.verdict]++;
        for (size_t q = 0; q < o->nqps; q++) {
            struct rs_an_qp *y = &o->qps[q];
            const struct an_qpacc *x = &R[i].qps[q];
            memcpy(y->gd.posted_bytes, x->posted, sizeof x->posted);
            y->gd.bounce_d2h = x->bounce_d2h;
            y->gd.bounce_h2d = x->bounce_h2d;
            y->gd.posts = x->send_wrs + x->recv_wrs;
            y->gd.send_posts = x->send_wrs;
            if (x->qp_num & 0x80000000u) { /* a proxy channel standing in for a QP: no memory kinds */
                y->gd.verdict = RS_GD_UNKNOWN;
                snprintf(y->gd.evidence, sizeof y->gd.evidence, "NCCL proxy channel (no verbs capture)");
                continue;
            }
            verdict(&y->gd, -1, 0);
        }
    }
    int known = seen[RS_GD_USED] + seen[RS_GD_NOT_USED] + seen[RS_GD_PARTIAL];
    if (!known) a->gd_verdict = RS_GD_UNKNOWN;
    else if (seen[RS_GD_USED] == known) a->gd_verdict = RS_GD_USED;
    else if (seen[RS_GD_NOT_USED] == known) a->gd_verdict = RS_GD_NOT_USED;
    else a->gd_verdict = RS_GD_PARTIAL;
    a->gd_gpu_memory = gpu_memory(a);
    gd_note(a, noverbs);
}

static size_t add(struct rs_an_finding *c, size_t nc, const struct rs_analysis *a, int cat, int32_t rank, uint32_t qp,
                  double cost)
{
    struct rs_an_finding *f = &c[nc];
    memset(f, 0, sizeof *f);
    f->cat = cat;
    f->rank = rank;
    f->qp = qp;
    f->cost_s = cost;
    double per_step = a->nsteps ? cost / a->nsteps : cost;
    f->step_frac = a->step_mean_s > 0 ? per_step / a->step_mean_s : 0;
    return nc + 1;
}

#define MS(x) ((x)*1e3)

/* Verbs failures that cost time (send WRs outstanding until they completed in error: retries, timeouts):
 * a finding, charged as stall. Failures without a cost are warnings only (an_verbs_warnings). */
static size_t verbs_error_finding(struct rs_an_finding *c, size_t nc, const struct rs_analysis *a)
{
    double cost = 0;
    int32_t wr = -1;
    const struct rs_an_verrs *w = NULL;
    for (size_t i = 0; i < a->nranks; i++) {
        cost += a->ranks[i].verrs.cost_s;
        if (a->ranks[i].verrs.cost_s > 0 && (!w || a->ranks[i].verrs.cost_s > w->cost_s)) {
            w = &a->ranks[i].verrs;
            wr = a->ranks[i].rank;
        }
    }
    if (!w) return nc;
    cost /= a->nranks ? (double)a->nranks : 1;
    nc = add(c, nc, a, RS_CAT_STALL, wr, 0, cost);
    struct rs_an_finding *f = &c[nc - 1];
    snprintf(f->text, sizeof f->text,
             "Verbs errors cost %.2f ms: work requests completed in error after waiting (rank %d: %llu error "
             "completions, %llu flushed; %.180s)",
             MS(w->cost_s), wr, (unsigned long long)w->wc_err, (unsigned long long)w->wc_flush, w->first);
    return nc;
}

void an_verbs_warnings(struct rs_analysis *a)
{
    for (size_t i = 0; i < a->nranks; i++) {
        const struct rs_an_verrs *v = &a->ranks[i].verrs;
        uint64_t tot = v->create_fail + v->post_fail + v->wc_err + v->wc_flush;
        a->verbs_errors += tot;
        if (tot)
            an_warn(a,
                    "rank %d: verbs errors: %llu failed creations, %llu refused posts, %llu error completions, %llu "
                    "flushed WRs: %.200s",
                    a->ranks[i].rank, (unsigned long long)v->create_fail, (unsigned long long)v->post_fail,
                    (unsigned long long)v->wc_err, (unsigned long long)v->wc_flush, v->first);
    }
}

static size_t finding_stall(struct rs_an_finding *c, size_t nc, const struct rs_analysis *a)
{
    double ns = a->nsteps ? (double)a->nsteps : 1;
    /* network stall, with the worst QP */
    if (a->attr[RS_CAT_STALL] > 0) {
        const struct rs_an_qp *w = NULL;
        int32_t wr = -1;
        for (size_t i = 0; i < a->nranks; i++)
            for (size_t q = 0; q < a->ranks[i].nqps; q++)
                if (a->ranks[i].qps[q].bytes_sent && (!w || a->ranks[i].qps[q].stall_s > w->stall_s)) {
                    w = &a->ranks[i].qps[q];
                    wr = a->ranks[i].rank;
                }
        nc = add(c, nc, a, RS_CAT_STALL, w ? wr : -1, w ? w->qp_num : 0, a->attr[RS_CAT_STALL]);
        struct rs_an_finding *f = &c[nc - 1];
        int k = snprintf(f->text, sizeof f->text,
                         "Network stall: %.2f ms per step (%.0f %% of step time) beyond what the bytes need at %g Gb/s",
                         MS(a->attr[RS_CAT_STALL] / ns), 100 * f->step_frac, a->link_gbps);
        if (w && k < (int)sizeof f->text)
            snprintf(f->text + k, sizeof f->text - k,
                     "; worst is rank %d QP 0x%x: send WRs outstanding %.1f ms for %.1f ms of data, link achieved %.3g "
                     "of %g Gb/s, longest WR wait %.2f ms",
                     wr, w->qp_num, MS(w->busy_s), MS(w->ideal_s), w->achieved_gbps, a->link_gbps, MS(w->max_wait_s));
        k = (int)strlen(f->text);
        if (strstr(a->transport, "NET/Socket") && k < (int)sizeof f->text)
            snprintf(f->text + k, sizeof f->text - k,
                     "; NCCL used NET/Socket: its proxy threads copy every byte through TCP sockets");
    }
    return nc;
}

static int cmp_rank(const void *x, const void *y)
{
    int32_t a = ((const struct rs_an_straggler *)x)->rank, b = ((const struct rs_an_straggler *)y)->rank;
    return a < b ? -1 : a > b;
}

/* "ranks 1 and 2", "ranks 0, 1, 2 and 3": the first n stragglers (n >= 2) in rank order, at most 8 named */
static int rank_list(char *b, size_t len, const struct rs_an_straggler *s, size_t n)
{
    struct rs_an_straggler v[8];
    size_t k = n < 8 ? n : 8;
    memcpy(v, s, k * sizeof *v);
    qsort(v, k, sizeof *v, cmp_rank);
    int w = snprintf(b, len, "ranks");
    for (size_t i = 0; i < k && w > 0 && (size_t)w < len; i++)
        w += snprintf(b + w, len - (size_t)w, "%s%d", !i ? " " : i + 1 == n ? " and " : ", ", v[i].rank);
    if (n > k && w > 0 && (size_t)w < len) w += snprintf(b + w, len - (size_t)w, " and %zu more", n - k);
    return w;
}

/* Stragglers / peer wait (a rank is late after the bulk of the ranks, analyze_join.c late_ranks). Every cost here is
 * on one basis, the category's: the others' exposed wait summed over the run and divided by the run's ranks
 * (mean_ranks), so the stragglers' costs add up to the "waiting for late ranks" category less the waits under the
 * lateness threshold (charged to no rank) and a named straggler's share of the step is its share of that category.
 * A rank is named only when it is persistent (analyze_join.c stragglers: late, and costly on average and in most
 * steps), its cost is at least half of the category (and of the stragglers' sum: the two differ by rounding only) and
 * no other late rank costs within RS_AN_STRAGGLER_TIE of it. Persistence was not asked before: the sole late rank of
 * a 2-rank H200 run (bench/gpu/results/2026-12-04-s21/call3-s2_profstep), its cost a mean made by the start-up's
 * waits in steps 0 and 1 (1.0 % of a typical step, 3 % on average), was named "the straggler" and a re-run named
 * nobody; now the words say the costliest late rank and why it is not persistent. A named rank's finding states its
 * own cost, then, when the rest of the category costs at least 1 % of the step (the findings' noise floor), the
 * category with what the other late ranks and the waits under the threshold take of it. Otherwise the wait is spread
 * over ranks, or two ranks or more tie (costs within RS_AN_STRAGGLER_TIE, together at least half of the category):
 * the finding is the category, naming no rank, and says the costliest late rank or the ranks that tie. A tie does
 * not ask persistence: ranks late in turns (each in half of the steps) tie by design. */
static size_t finding_straggler(struct rs_an_finding *c, size_t nc, const struct rs_analysis *a)
{
    double ns = a->nsteps ? (double)a->nsteps : 1, cat = a->attr[RS_CAT_PEER_WAIT];
    if (cat <= 0) return nc;
    const struct rs_an_straggler *s = a->nstragglers ? &a->stragglers[0] : NULL; /* most costly first */
    double all = 0;
    for (size_t i = 0; i < a->nstragglers; i++) all += a->stragglers[i].cost_s;
    size_t tie = s ? 1 : 0; /* the costliest and those within RS_AN_STRAGGLER_TIE of it */
    double tied = s ? s->cost_s : 0;
    while (s && tie < a->nstragglers && a->stragglers[tie].cost_s >= (1 - RS_AN_STRAGGLER_TIE) * s->cost_s)
        tied += a->stragglers[tie++].cost_s;
    /* A tie, like a named rank, accounts for at least half of the category: with arrivals jittered over 20 % of
     * the step every rank is late after the bulk now and then (analyze_join.c late_ranks), and the costliest few of
     * eight cost within 5 % of each other by chance (tests/analyzer/straggler_bulk.t, noise: "tied: ranks 1, 3
     * and 4" for 45 % of the wait). Then the wait is spread: the words say the costliest. */
    if (tie > 1 && 2 * tied < fmax(all, cat)) tie = 1;
    int mr = (int)a->mean_ranks;
    /* the costliest would be named but for its persistence (transient): the words say so, and why */
    int alone = s && s->cost_s > 0 && tie == 1 && 2 * s->cost_s >= fmax(all, cat), transient = alone && !s->persistent;
    if (alone && s->persistent) {
        nc = add(c, nc, a, RS_CAT_PEER_WAIT, s->rank, 0, s->cost_s);
        struct rs_an_finding *f = &c[nc - 1];
        f->sv = RS_SV_RANK;
        int coll = !strcmp(a->straggler_basis, "collectives");
        int w =
            snprintf(f->text, sizeof f->text,
                     "Straggler: rank %d arrives late at %llu of %llu %s (persistent), %.2f ms after the bulk of the "
                     "ranks on average; waiting for it costs %.2f ms per step, mean over the run's %d ranks (%.0f %% "
                     "of step time)",
                     s->rank, (unsigned long long)s->late_count, (unsigned long long)s->of,
                     coll ? "collectives" : "steps (first data send)", MS(s->mean_late_s), MS(s->cost_per_step_s), mr,
                     100 * f->step_frac);
        /* the rest of the category: the other late ranks, then the waits under the lateness threshold */
        double others = fmax(all - s->cost_s, 0) / ns, under = fmax(cat - fmax(all, s->cost_s), 0) / ns;
        if (others + under >= 0.01 * a->step_mean_s && w > 0 && w < (int)sizeof f->text) {
            double frac = a->step_mean_s > 0 ? cat / ns / a->step_mean_s : 0;
            w += snprintf(f->text + w, sizeof f->text - (size_t)w,
                          "; all waiting for late ranks: %.2f ms per step (%.0f %%)", MS(cat / ns), 100 * frac);
            if (a->nstragglers > 1 && w > 0 && w < (int)sizeof f->text)
                w += snprintf(f->text + w, sizeof f->text - (size_t)w, ", %.2f ms of it for %zu other late rank%s",
                              MS(others), a->nstragglers - 1, a->nstragglers > 2 ? "s" : "");
            if (MS(under) >= 0.005 && w > 0 && w < (int)sizeof f->text)
                snprintf(f->text + w, sizeof f->text - (size_t)w,
                         ", %.2f ms of it in waits under the lateness threshold (charged to no rank)", MS(under));
        }
        return nc;
    }
    nc = add(c, nc, a, RS_CAT_PEER_WAIT, -1, 0, cat);
    struct rs_an_finding *f = &c[nc - 1];
    if (s && s->cost_s > 0 && tie > 1) {
        f->sv = RS_SV_TIE;
        f->ntied = tie;
    }
    int w =
        snprintf(f->text, sizeof f->text,
                 "Ranks wait %.2f ms per step (%.0f %% of step time) in collectives for late ranks (%s", MS(cat / ns),
                 100 * f->step_frac, transient ? "no persistent straggler" : "no single rank is consistently last");
    if (s && s->cost_s > 0 && w > 0 && w < (int)sizeof f->text) {
        char rl[160];
        const struct rs_an_straggler *z = &a->stragglers[tie - 1]; /* the least costly of those that tie */
        if (a->nstragglers == 1) /* waits under the lateness threshold make the rest: "1 late rank, rank 3" */
            w += snprintf(f->text + w, sizeof f->text - (size_t)w, ": 1 late rank, rank %d, %.2f ms per step", s->rank,
                          MS(s->cost_per_step_s));
        else if (tie == 1)
            w += snprintf(f->text + w, sizeof f->text - (size_t)w,
                          ": %zu late ranks, the costliest, rank %d, %.2f ms per step", a->nstragglers, s->rank,
                          MS(s->cost_per_step_s));
        else if (rank_list(rl, sizeof rl, s, tie) > 0) {
            char each[48], hi[24]; /* "0.38 ms" or "0.37-0.39 ms": the ranks that tie cost within RS_AN_STRAGGLER_TIE */
            snprintf(hi, sizeof hi, "%.2f", MS(s->cost_per_step_s));
            snprintf(each, sizeof each, "%.2f", MS(z->cost_per_step_s));
            if (strcmp(each, hi)) snprintf(each + strlen(each), sizeof each - strlen(each), "-%s ms", hi);
            else snprintf(each, sizeof each, "%s ms", hi);
            w += snprintf(f->text + w, sizeof f->text - (size_t)w, ": %zu late ranks, %s: %s, %s per step each",
                          a->nstragglers, tie == a->nstragglers ? "tied" : "the costliest tied", rl, each);
        }
    }
    if (transient && w > 0 && w < (int)sizeof f->text) {
        /* why it is not named: cheap on average (the noise of ranks taking turns), else costly in too few steps (a
         * few steps' waits make its mean: start-up; or late in half of the steps), else (no steps) late too seldom */
        double min = RS_AN_STRAGGLER_MIN_COST;
        if (a->step_mean_s > 0 && s->cost_per_step_s < min * a->step_mean_s)
            w += snprintf(f->text + w, sizeof f->text - (size_t)w, ", under %.0f %% of the step", 100 * min);
        else if (a->nsteps >= 2 && a->step_mean_s > 0 && s->costly_steps * 2 <= a->nsteps)
            w += snprintf(f->text + w, sizeof f->text - (size_t)w,
                          ", %.0f %% of the step or more in only %llu of %llu steps", 100 * min,
                          (unsigned long long)s->costly_steps, (unsigned long long)a->nsteps);
        else
            w += snprintf(f->text + w, sizeof f->text - (size_t)w, ", late at only %llu of %llu",
                          (unsigned long long)s->late_count, (unsigned long long)s->of);
    }
    if (w > 0 && w < (int)sizeof f->text) snprintf(f->text + w, sizeof f->text - (size_t)w, ")");
    return nc;
}

/* "37 %", "<1 %" (some, under half a percent), ">99 %" (not all): a share in words that never says 0 or 100 % of
 * something that is not */
static const char *pct(char *b, size_t n, double part, double whole)
{
    double x = whole > 0 ? 100 * part / whole : 0;
    if (part > 0 && x < 0.5) snprintf(b, n, "<1 %%");
    else if (part < whole && x >= 99.5) snprintf(b, n, ">99 %%");
    else snprintf(b, n, "%.0f %%", x);
    return b;
}

/* Pageable copies worth pinning: at least this share of the H2D copy time (of the bytes when no copy has a
 * duration). A share below it leaves little for pinning to save (a few small pageable copies beside large pinned
 * ones). */
#define AN_PAGEABLE_MIN_SHARE 0.10

/* Exposed H2D copies, with the pageable copies' share of the H2D copy time (what pinning would save: a pageable
 * copy stages through a bounce buffer at a fraction of the rate) and of the bytes, and the rank with the most
 * pageable copy time. Time, not bytes, decides the advice: a few large pinned (or asynchronous) copies beside many
 * pageable ones are most of the bytes and little of the time. */
static size_t finding_h2d(struct rs_an_finding *c, size_t nc, const struct rs_analysis *a)
{
    double ns = a->nsteps ? (double)a->nsteps : 1;
    if (a->attr[RS_CAT_H2D] <= 0) return nc;
    uint64_t pg = 0, pin = 0;
    double pgs = 0, pins = 0, worst = 0;
    int32_t wr = -1;
    const struct rs_an_rank *wk = NULL; /* the rank with the most pageable copy time (bytes) */
    for (size_t i = 0; i < a->nranks; i++) {
        pg += a->ranks[i].h2d_pageable_bytes;
        pin += a->ranks[i].h2d_pinned_bytes;
        pgs += a->ranks[i].h2d_pageable_s;
        pins += a->ranks[i].h2d_pinned_s;
    }
    int timed = pgs + pins > 0; /* copies with durations (every traced copy has one; bytes alone: old traces) */
    for (size_t i = 0; i < a->nranks; i++) {
        double v = timed ? a->ranks[i].h2d_pageable_s : (double)a->ranks[i].h2d_pageable_bytes;
        if (v > worst) {
            worst = v;
            wr = a->ranks[i].rank;
            wk = &a->ranks[i];
        }
    }
    nc = add(c, nc, a, RS_CAT_H2D, wr, 0, a->attr[RS_CAT_H2D]);
    struct rs_an_finding *f = &c[nc - 1];
    int w =
        snprintf(f->text, sizeof f->text, "Host-to-device copies are exposed %.2f ms per step (%.0f %% of step time)",
                 MS(a->attr[RS_CAT_H2D] / ns), 100 * f->step_frac);
    char t[16], b[16];
    if (w < 0 || (size_t)w >= sizeof f->text) return nc;
    if (!pg && (pin || pins > 0)) /* nothing to pin */
        snprintf(f->text + w, sizeof f->text - (size_t)w, "; every H2D copy is from pinned memory");
    else if (pg && timed) {
        int pin_it = pgs >= AN_PAGEABLE_MIN_SHARE * (pgs + pins);
        snprintf(f->text + w, sizeof f->text - (size_t)w,
                 "; copies from pageable memory take %s of the H2D copy time and %s of the bytes (most on rank %d: "
                 "%.2f ms per step)%s",
                 pct(t, sizeof t, pgs, pgs + pins), pct(b, sizeof b, (double)pg, (double)(pg + pin)), wr,
                 MS(wk->h2d_pageable_s / (wk->nsteps ? (double)wk->nsteps : ns)),
                 pin_it ? ": pin the host buffers (e.g. pin_memory=True)" : ", too little for pinning to save much");
    } else if (pg)
        snprintf(
            f->text + w, sizeof f->text - (size_t)w, "; %s of H2D bytes come from pageable memory (most on rank %d)%s",
            pct(b, sizeof b, (double)pg, (double)(pg + pin)), wr,
            (double)pg >= AN_PAGEABLE_MIN_SHARE * (double)(pg + pin) ? ": pin the host buffers (e.g. pin_memory=True)"
                                                                     : "");
    return nc;
}

/* GPUDirect RDMA not used where there is GPU memory to send from (a->gd_gpu_memory, the GPUDirect section's own
 * test): a configuration fault, in no attribution category. Its cost is what was measured, the bounce copies
 * through host memory (mean per rank); it is ranked as at least RS_AN_GD_RANK_FLOOR of the step (an_findings),
 * a floor that is no measurement and is not shown. */
static size_t finding_gpudirect(struct rs_an_finding *c, size_t nc, const struct rs_analysis *a,
                                const struct an_rank *R, size_t n)
{
    double ns = a->nsteps ? (double)a->nsteps : 1;
    if (!a->gd_gpu_memory || (a->gd_verdict != RS_GD_NOT_USED && a->gd_verdict != RS_GD_PARTIAL)) return nc;
    int bad = 0;
    int32_t ex = -1;
    double bounce = 0;
    for (size_t i = 0; i < a->nranks; i++) {
        int v = a->ranks[i].gd.verdict;
        if (v == RS_GD_NOT_USED || v == RS_GD_PARTIAL) {
            bad++;
            if (ex < 0) ex = (int32_t)i;
        }
        bounce += R[i].bounce_copy_ns * 1e-9;
    }
    bounce /= n ? (double)n : 1;
    nc = add(c, nc, a, -1, ex >= 0 ? a->ranks[ex].rank : -1, 0, bounce);
    struct rs_an_finding *f = &c[nc - 1];
    f->gpudirect = 1;
    char bc[96];
    if (bounce > 0)
        snprintf(bc, sizeof bc, "bounce copies take %.2f ms per step (%.1f %% of step time)", MS(bounce / ns),
                 100 * f->step_frac);
    else snprintf(bc, sizeof bc, "no bounce copies traced: their cost is not measured");
    int k = snprintf(f->text, sizeof f->text,
                     "GPUDirect RDMA %s on %d of %zu ranks (a configuration fault, ranked as at least %.0f %% of step "
                     "time); %s. Rank %d: ",
                     rs_gd_name(a->gd_verdict), bad, a->nranks, 100 * RS_AN_GD_RANK_FLOOR, bc,
                     ex >= 0 ? a->ranks[ex].rank : -1);
    /* the rank's evidence, its "; "-separated clauses while they fit whole */
    const char *e = ex >= 0 ? a->ranks[ex].gd.evidence : "";
    for (int first = 1; *e && k > 0 && (size_t)k < sizeof f->text; first = 0) {
        const char *semi = strstr(e, "; ");
        size_t l = semi ? (size_t)(semi - e) : strlen(e), need = l + (first ? 0 : 2);
        if ((size_t)k + need >= sizeof f->text) break;
        if (!first) memcpy(f->text + k, "; ", 2);
        memcpy(f->text + k + (first ? 0 : 2), e, l);
        k += (int)need;
        f->text[k] = 0;
        e += l + (semi ? 2 : 0);
    }
    return nc;
}

/* What a finding is ranked by: its cost, the GPUDirect finding's at least RS_AN_GD_RANK_FLOOR of the step. */
static double rank_cost(const struct rs_an_finding *f, const struct rs_analysis *a)
{
    double ns = a->nsteps ? (double)a->nsteps : 1;
    return f->gpudirect ? fmax(f->cost_s, RS_AN_GD_RANK_FLOOR * a->step_mean_s * ns) : f->cost_s;
}

/* Collectives nothing timed (ranks without NCCL profiler records, most of their kernels outside every sampling
 * window): their GPU time lies in "other", where the report cannot tell network from NVLink or host work. Ranked by
 * that "other" time (an upper bound: host work is in it too), so that a run whose communication was not measured
 * does not read as host-bound with nothing said (session 26: s2_slownet without its plugin events, a planted slow
 * network, was 99.8 % "other" and no finding about it). */
static size_t finding_untimed(struct rs_an_finding *c, size_t nc, const struct rs_analysis *a, const struct an_rank *R,
                              size_t n)
{
    struct an_noprof np = an_noprof_sum(R, n);
    const char *why = np.why;
    if (!np.ranks || !np.calls || np.timed * 2 >= np.calls || a->attr[RS_CAT_OTHER] <= 0) return nc;
    double ns = a->nsteps ? (double)a->nsteps : 1;
    nc = add(c, nc, a, RS_CAT_OTHER, -1, 0, a->attr[RS_CAT_OTHER]);
    struct rs_an_finding *f = &c[nc - 1];
    const char *fix = why && !strncmp(why, "NCCL ", 5)   ? "NCCL 2.23 or later"
                      : why && !strncmp(why, "NCCL_", 5) ? "railscope's profiler plugin (record sets it)"
                                                         : "the profiler plugin (NCCL 2.23+)";
    char because[128] = "";
    if (why) snprintf(because, sizeof because, "; %.110s", why);
    int w = snprintf(f->text, sizeof f->text,
                     "Collectives not measured: %.2f ms per step (%.0f %% of step time) is \"other\", holding the GPU "
                     "time of %zu of %zu collectives nothing timed (%d rank%s without NCCL profiler records%s)",
                     MS(a->attr[RS_CAT_OTHER] / ns), 100 * f->step_frac, np.calls - np.timed, np.calls, np.ranks,
                     np.ranks > 1 ? "s" : "", because);
    if (w > 0 && (size_t)w < sizeof f->text)
        snprintf(f->text + w, sizeof f->text - (size_t)w, "; with %s it splits into network, NVLink and host work",
                 fix);
    return nc;
}

void an_findings(struct rs_analysis *a, struct an_rank *R, size_t n)
{
    struct rs_an_finding c[12];
    size_t nc = 0;
    double ns = a->nsteps ? (double)a->nsteps : 1;
    nc = finding_stall(c, nc, a);
    nc = finding_straggler(c, nc, a);
    nc = finding_h2d(c, nc, a);
    nc = finding_gpudirect(c, nc, a, R, n);
    if (a->attr[RS_CAT_IDLE] > 0) {
        nc = add(c, nc, a, RS_CAT_IDLE, -1, 0, a->attr[RS_CAT_IDLE]);
        struct rs_an_finding *f = &c[nc - 1];
        snprintf(f->text, sizeof f->text,
                 "GPU idle outside collectives (host, data loading or launch bound): %.2f ms per step (%.0f %% of step "
                 "time)",
                 MS(a->attr[RS_CAT_IDLE] / ns), 100 * f->step_frac);
    }
    if (a->attr[RS_CAT_NET] > 0) {
        double bus = 0;
        size_t k = 0;
        for (size_t i = 0; i < a->ncolls; i++)
            if (a->colls[i].busbw_gbps > 0) {
                bus += a->colls[i].busbw_gbps;
                k++;
            }
        nc = add(c, nc, a, RS_CAT_NET, -1, 0, a->attr[RS_CAT_NET]);
        struct rs_an_finding *f = &c[nc - 1];
        int w = snprintf(f->text, sizeof f->text,
                         "Exposed network transfer: %.2f ms per step (%.0f %% of step time) at the %g Gb/s link rate",
                         MS(a->attr[RS_CAT_NET] / ns), 100 * f->step_frac, a->link_gbps);
        if (k && w < (int)sizeof f->text)
            snprintf(f->text + w, sizeof f->text - w, "; collectives reach %.1f GB/s bus bandwidth on average",
                     bus / k);
    }
    if (a->attr[RS_CAT_LATENCY] > 0) {
        double bl = 0;
        int32_t br = -1;
        for (size_t i = 0; i < a->nranks; i++)
            if (a->ranks[i].base_latency_s > bl) {
                bl = a->ranks[i].base_latency_s;
                br = a->ranks[i].rank;
            }
        nc = add(c, nc, a, RS_CAT_LATENCY, br, 0, a->attr[RS_CAT_LATENCY]);
        struct rs_an_finding *f = &c[nc - 1];
        snprintf(f->text, sizeof f->text,
                 "Network latency: %.2f ms per step (%.0f %% of step time) in round trips and small messages (base "
                 "latency up to %.1f us per burst of work requests, rank %d): the link's latency, not its rate or a "
                 "stall, bounds this traffic; batch small messages",
                 MS(a->attr[RS_CAT_LATENCY] / ns), 100 * f->step_frac, a->attr[RS_CAT_LATENCY] > 0 ? bl * 1e6 : 0, br);
    }
    nc = verbs_error_finding(c, nc, a);
    if (a->attr[RS_CAT_INTRA] > 0) {
        nc = add(c, nc, a, RS_CAT_INTRA, -1, 0, a->attr[RS_CAT_INTRA]);
        struct rs_an_finding *f = &c[nc - 1];
        snprintf(f->text, sizeof f->text,
                 "Exposed intra-node (NVLink/PCIe) collective time: %.2f ms per step (%.0f %% of step time)",
                 MS(a->attr[RS_CAT_INTRA] / ns), 100 * f->step_frac);
    }
    nc = finding_untimed(c, nc, a, R, n);
    /* top three by cost */
    for (size_t i = 1; i < nc; i++)
        for (size_t j = i; j > 0 && rank_cost(&c[j], a) > rank_cost(&c[j - 1], a); j--) {
            struct rs_an_finding t = c[j];
            c[j] = c[j - 1];
            c[j - 1] = t;
        }
    /* A finding under 1 % of the step time is noise (a ping-pong's occasional late rank, the transfer of a
     * few bytes), unless it names a fault: verbs errors, GPUDirect not used (ranked at >= 5 % anyway). */
    a->nfindings = 0;
    for (size_t i = 0; i < nc && a->nfindings < 3; i++)
        if (c[i].step_frac >= 0.01 || !strncmp(c[i].text, "Verbs errors", 12) || c[i].gpudirect)
            a->findings[a->nfindings++] = c[i];
}
