/* `railscope report` on a terminal: findings first, then where the step time goes, per rank, the
 * collectives, stragglers, GPUDirect and QPs. Long lists are cut to their worst entries. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "util/xalloc.h"

/* Stragglers "cannot tell" on request/response traffic (analyze_join.c verbs_stragglers, straggler_basis "none: round
 * trips": round trips, answers) */
#define AN_RT_WHY                                                                                                \
    "request/response: each rank's data send answers a message it waited for (a ping-pong, a chain of stages), " \
    "so one is always later by the message's trip"

#define MS(x)    ((x)*1e3)
#define MAX_ROWS 16

static size_t nhosts(const struct rs_analysis *a)
{
    size_t n = 0;
    for (size_t i = 0; i < a->nranks; i++) {
        size_t j = 0;
        while (j < i && strcmp(a->ranks[j].host, a->ranks[i].host)) j++;
        n += j == i;
    }
    return n;
}

static const char *short_cat[] = {"compute", "h2d", "intra", "net", "stall", "lat", "wait", "idle", "other"};

static int cmp_dur(const void *x, const void *y)
{
    const struct rs_an_coll *a = *(const struct rs_an_coll *const *)x, *b = *(const struct rs_an_coll *const *)y;
    double da = a->dur_s + a->arrival_skew_s, db = b->dur_s + b->arrival_skew_s;
    return da < db ? 1 : da > db ? -1 : 0;
}

static void text_head(const struct rs_analysis *a, FILE *f)
{
    fprintf(f, "railscope report: %zu rank%s on %zu host%s, %llu step%s (%s), mean step %.2f ms, %llu events\n",
            a->nranks, a->nranks == 1 ? "" : "s", nhosts(a), nhosts(a) == 1 ? "" : "s", (unsigned long long)a->nsteps,
            a->nsteps == 1 ? "" : "s", a->step_source, MS(a->step_mean_s), (unsigned long long)a->events);
    if (a->one_clock && a->nranks > 1) /* one monotonic clock: nothing to align, no skew to report */
        fprintf(f, "clock: every rank on one host clock (same boot id): aligned exactly, no skew\n");
    else if (a->ncolls)
        fprintf(
            f,
            "clock: REALTIME anchors leave collective ends %.1f us apart; after refinement %.1f us (residual skew)\n",
            a->anchor_skew_s * 1e6, a->residual_skew_s * 1e6);
    else /* nothing to measure the skew on: say so rather than print a reassuring 0.0 */
        fprintf(f, "clock: REALTIME anchors only (no collectives to refine the alignment with)\n");
    fprintf(f, "link rate: %g Gb/s (%s)\n", a->link_gbps, a->link_source);
    if (a->transport[0]) {
        const char *why = "";
        for (size_t i = 0; i < a->nranks && !why[0]; i++) why = a->ranks[i].transport_why;
        fprintf(f, "NCCL transport: %s (%s)\n", a->transport, why);
    }
    if (a->partial) fprintf(f, "PARTIAL INPUT: results cover what could be read (see warnings)\n");

    fprintf(f, "\nTop findings:\n");
    if (!a->nfindings) fprintf(f, "  none\n");
    for (size_t i = 0; i < a->nfindings; i++) fprintf(f, "  %zu. %s\n", i + 1, a->findings[i].text);

    double ns = a->nsteps ? (double)a->nsteps : 1;
    fprintf(f, "\nWhere each step's time goes (mean over ranks):\n");
    for (int c = 0; c < RS_CAT_COUNT; c++) {
        double v = a->attr[c] / ns;
        /* host-only programs (no GPU traced): the rest is the CPU's own work (reductions, copies) and its
         * waits for peers (polling for a receive, barriers), which the trace cannot tell apart */
        const char *w = c == RS_CAT_OTHER && !a->gpu_ranks && a->nranks
                            ? "other: host work and waits for peers (no GPU traced)"
                            : rs_cat_words(c);
        fprintf(f, "  %-62s %9.2f ms %5.1f %%\n", w, MS(v), a->step_mean_s > 0 ? 100 * v / a->step_mean_s : 0);
    }
    if (a->lag_colls) /* not measured like the rest of the category: said beside it (analyze_join.c lag_waits) */
        fprintf(f,
                "  (waiting for late ranks: %.2f ms per step of it estimated from the arrival lag at %llu of %zu "
                "collectives nothing timed: host times, from each rank's NCCL call to the last rank's)\n",
                MS(a->lag_wait_s / ns), (unsigned long long)a->lag_colls, a->ncolls);
}

/* Many ranks: show the MAX_ROWS with the most time outside compute, after the ones the findings and
 * stragglers name (they are the causes, not the ones waiting). */
static char *ranks_to_show(const struct rs_analysis *a, size_t nshow)
{
    char *show = rs_xcalloc(a->nranks ? a->nranks : 1, 1, "report_text show");
    size_t shown = 0;
    for (size_t i = 0; i < a->nranks && nshow < a->nranks; i++) {
        int named = 0;
        for (size_t k = 0; k < a->nfindings; k++) named |= a->findings[k].rank == a->ranks[i].rank;
        for (size_t k = 0; k < a->nstragglers && k < 4; k++) named |= a->stragglers[k].rank == a->ranks[i].rank;
        if (named && shown < nshow) {
            show[i] = 1;
            shown++;
        }
    }
    for (size_t k = shown; k < nshow; k++) {
        size_t best = (size_t)-1;
        double bv = -1;
        for (size_t i = 0; i < a->nranks; i++) {
            const struct rs_an_rank *r = &a->ranks[i];
            double v = r->nsteps ? (r->step_mean_s * r->nsteps - r->attr[RS_CAT_COMPUTE]) / r->nsteps : 0;
            if (!show[i] && v > bv) {
                bv = v;
                best = i;
            }
        }
        if (best != (size_t)-1) show[best] = 1;
    }
    return show;
}

static void text_ranks(const struct rs_analysis *a, FILE *f)
{
    fprintf(f, "\nPer rank (ms per step):\n  %5s %-16s %8s", "rank", "host", "step");
    for (int c = 0; c < RS_CAT_COUNT; c++) fprintf(f, " %7s", short_cat[c]);
    fprintf(f, "  GPUDirect\n");
    size_t nshow = a->nranks > MAX_ROWS + 1 ? MAX_ROWS : a->nranks;
    char *show = ranks_to_show(a, nshow);
    if (nshow < a->nranks)
        fprintf(f,
                "  (%zu of %zu ranks: those the findings name, then the most time outside compute; --json has all)\n",
                nshow, a->nranks);
    for (size_t i = 0; i < a->nranks; i++) {
        if (!show[i]) continue;
        const struct rs_an_rank *r = &a->ranks[i];
        double d = r->nsteps ? (double)r->nsteps : 1;
        fprintf(f, "  %5d %-16.16s %8.2f", r->rank, r->host, MS(r->step_mean_s));
        for (int c = 0; c < RS_CAT_COUNT; c++) fprintf(f, " %7.2f", MS(r->attr[c] / d));
        fprintf(f, "  %s%s%s\n", rs_gd_name(r->gd.verdict), r->input ? "  input " : "",
                r->input ? rs_an_input_name(r->input) : "");
    }
    free(show);
}

static void text_steps(const struct rs_analysis *a, FILE *f)
{
    struct rs_an_runstep *rsx = NULL;
    size_t nrs = rs_an_run_steps(a, &rsx);
    if (nrs > 1) {
        size_t w[3] = {0, 0, 0};
        int nw = 0;
        for (int k = 0; k < 3 && k < (int)nrs; k++) {
            size_t best = 0;
            double bv = -1;
            for (size_t i = 0; i < nrs; i++) {
                int taken = 0;
                for (int q = 0; q < k; q++) taken |= w[q] == i;
                if (!taken && rsx[i].max_s > bv) {
                    bv = rsx[i].max_s;
                    best = i;
                }
            }
            w[nw++] = best;
        }
        fprintf(f, "\nSlowest steps (max over ranks):\n");
        for (int k = 0; k < nw; k++) {
            const struct rs_an_runstep *x = &rsx[w[k]];
            int big = 0;
            for (int c = 1; c < RS_CAT_COUNT; c++)
                if (x->attr[c] > x->attr[big] || big == RS_CAT_COMPUTE) big = c;
            fprintf(f, "  step %lld: %.2f ms on rank %d (mean %.2f ms); largest non-compute part: %s %.2f ms\n",
                    (long long)x->id, MS(x->max_s), x->slowest_rank, MS(x->mean_s), rs_cat_key(big), MS(x->attr[big]));
        }
    }
    free(rsx);
}

static void text_colls(const struct rs_analysis *a, FILE *f)
{
    if (!a->ncolls) return;
    size_t n = a->ncolls, ninter = 0, nintra = 0;
    const struct rs_an_coll **v = rs_xmalloc(n * sizeof *v, "report_text v");
    double skew = 0, bus = 0, rs = 0, ag = 0, red = 0, bc = 0;
    size_t ntree = 0, nring = 0;
    for (size_t i = 0; i < n; i++) {
        const struct rs_an_coll *c = &a->colls[i];
        v[i] = c;
        skew += c->arrival_skew_s;
        bus += c->busbw_gbps;
        if (c->rs_s > 0 || c->ag_s > 0) {
            rs += c->rs_s;
            ag += c->ag_s;
            nring++;
        }
        if (c->reduce_s > 0 || c->bcast_s > 0) {
            red += c->reduce_s;
            bc += c->bcast_s;
            ntree++;
        }
        ninter += c->inter == 1;
        nintra += c->inter == 0;
    }
    fprintf(f,
            "\nCollectives: %zu joined across ranks; mean arrival skew %.2f ms, mean bus bandwidth %.1f GB/s "
            "(link %g Gb/s = %.1f GB/s)\n",
            n, MS(skew / n), bus / n, a->link_gbps, a->link_gbps / 8);
    if (ninter || nintra)
        fprintf(f, "  transport: %zu through the network (%s), %zu intra-node (P2P/SHM), %zu unknown\n", ninter,
                a->transport[0] ? a->transport : "NET", nintra, n - ninter - nintra);
    if (nring) /* means over the collectives whose halves were measured */
        fprintf(f, "  ring halves (%zu collectives): reduce-scatter %.2f ms, all-gather %.2f ms on average\n", nring,
                MS(rs / nring), MS(ag / nring));
    if (ntree)
        fprintf(f, "  tree phases (%zu collectives): reduce (up) %.2f ms, broadcast (down) %.2f ms on average\n", ntree,
                MS(red / ntree), MS(bc / ntree));
    qsort(v, n, sizeof *v, cmp_dur);
    fprintf(f, "  slowest: %-14s %6s %5s %9s %9s %5s %8s %8s %8s %8s %8s\n", "func", "seq", "ranks", "skew ms",
            "dur ms", "last", "busbw", "intra", "net", "lat", "stall");
    for (size_t i = 0; i < n && i < 5; i++)
        fprintf(f, "           %-14.14s %6llu %5d %9.2f %9.2f %5d %8.1f %8.2f %8.2f %8.2f %8.2f\n", v[i]->func,
                (unsigned long long)v[i]->seq, v[i]->nseen, MS(v[i]->arrival_skew_s), MS(v[i]->dur_s), v[i]->last_rank,
                v[i]->busbw_gbps, MS(v[i]->intra_s), MS(v[i]->net_s), MS(v[i]->lat_s), MS(v[i]->stall_s));
    free(v);
}

/* A straggler's cost is on the category's basis: the others' wait for it, mean over the run's ranks (analyze_join.c
 * stragglers()); the last line says how much of "waiting for late ranks" the late ranks account for. */
static void text_stragglers(const struct rs_analysis *a, FILE *f)
{
    int coll = !strcmp(a->straggler_basis, "collectives");
    fprintf(f, "\nStragglers:");
    if (!a->stragglers_known)
        fprintf(f, " cannot tell (%s)\n",
                a->nranks < 2 ? "one rank: nobody to compare with"
                : !strcmp(a->straggler_basis, "none: round trips")
                    ? AN_RT_WHY
                    : "no collectives joined across ranks and no per-step network sends to compare arrivals");
    else if (!a->nstragglers)
        fprintf(f, " none (arrivals compared over %s)\n", coll ? "collectives" : "steps, by first data send");
    else
        fprintf(f,
                " (arrivals compared over %s; cost: the others' wait for the rank, per step, mean over the run's %zu "
                "ranks)\n",
                coll ? "collectives" : "steps, by first data send", a->mean_ranks);
    double all = 0, ns = a->nsteps ? (double)a->nsteps : 1;
    for (size_t i = 0; i < a->nstragglers; i++) all += a->stragglers[i].cost_s;
    for (size_t i = 0; i < a->nstragglers && i < 5; i++) {
        const struct rs_an_straggler *s = &a->stragglers[i];
        fprintf(f, "  rank %d%s: late at %llu of %llu %s, %.2f ms late on average, costs %.2f ms per step\n", s->rank,
                s->persistent ? " (persistent)" : "", (unsigned long long)s->late_count, (unsigned long long)s->of,
                coll ? "collectives" : "steps", MS(s->mean_late_s), MS(s->cost_per_step_s));
    }
    if (a->nstragglers > 5) fprintf(f, "  ... %zu more (--json has every late rank)\n", a->nstragglers - 5);
    if (a->nstragglers && a->attr[RS_CAT_PEER_WAIT] > 0)
        fprintf(f, "  %s: %.2f ms per step of the %.2f ms waiting for late ranks%s\n",
                a->nstragglers > 1 ? "together" : "in all", MS(all / ns), MS(a->attr[RS_CAT_PEER_WAIT] / ns),
                MS((a->attr[RS_CAT_PEER_WAIT] - all) / ns) >= 0.005
                    ? " (the rest: waits under the lateness threshold, charged to no rank)"
                    : "");
}

static void text_gpudirect(const struct rs_analysis *a, FILE *f)
{
    /* the qualifier is analyze_verdict.c's, the GPUDirect finding's test: GPU memory to send from or not */
    fprintf(f, "\nGPUDirect RDMA: %s%s%s%s\n", rs_gd_name(a->gd_verdict), a->gd_note[0] ? " (" : "", a->gd_note,
            a->gd_note[0] ? ")" : "");
    for (size_t i = 0; i < a->nranks && i < 8; i++)
        fprintf(f, "  rank %d: %s: %s\n", a->ranks[i].rank, rs_gd_name(a->ranks[i].gd.verdict),
                a->ranks[i].gd.evidence);
    if (a->nranks > 8) fprintf(f, "  ... (--json has every rank and QP)\n");
}

static void text_qps(const struct rs_analysis *a, FILE *f)
{
    /* worst QPs by stall */
    const struct rs_an_qp *worst[5] = {0};
    int32_t wrank[5];
    size_t nctrl = 0; /* QPs that carried only control WRs (credits, acks): no data, no stall */
    double ctrl_busy = 0;
    for (size_t i = 0; i < a->nranks; i++)
        for (size_t q = 0; q < a->ranks[i].nqps; q++) {
            const struct rs_an_qp *x = &a->ranks[i].qps[q];
            if (!x->sends && x->ctrl_sends) {
                nctrl++;
                ctrl_busy = fmax(ctrl_busy, x->ctrl_busy_s);
            }
            if (!x->sends) continue;
            for (int k = 0; k < 5; k++)
                if (!worst[k] || x->stall_s > worst[k]->stall_s) {
                    memmove(&worst[k + 1], &worst[k], (4 - k) * sizeof *worst);
                    memmove(&wrank[k + 1], &wrank[k], (4 - k) * sizeof *wrank);
                    worst[k] = x;
                    wrank[k] = a->ranks[i].rank;
                    break;
                }
        }
    if (worst[0]) {
        fprintf(f, "\nQueue pairs (most stalled first):\n");
        for (int k = 0; k < 5 && worst[k]; k++)
            fprintf(f,
                    "  rank %d QP 0x%x: %.1f MB sent, busy %.2f ms, latency %.2f ms, stall %.2f ms, achieved %.1f of "
                    "%g Gb/s, %s\n",
                    wrank[k], worst[k]->qp_num, worst[k]->bytes_sent / 1e6, MS(worst[k]->busy_s),
                    MS(worst[k]->latency_s), MS(worst[k]->stall_s), worst[k]->achieved_gbps, a->link_gbps,
                    rs_gd_name(worst[k]->gd.verdict));
    }
    if (nctrl)
        fprintf(f,
                "  (%zu QP%s carried only control WRs of <= 64 B, e.g. credits: up to %.2f ms outstanding, which is "
                "peer synchronisation and latency, not bytes on the wire: no network time)\n",
                nctrl, nctrl == 1 ? "" : "s", MS(ctrl_busy));
}

static void text_tail(const struct rs_analysis *a, FILE *f)
{
    if (a->verbs_errors) {
        fprintf(f, "\nVerbs errors:\n");
        for (size_t i = 0; i < a->nranks; i++) {
            const struct rs_an_verrs *v = &a->ranks[i].verrs;
            if (!(v->create_fail + v->post_fail + v->wc_err + v->wc_flush)) continue;
            fprintf(f,
                    "  rank %d: %llu failed creations, %llu refused posts, %llu error completions, %llu flushed WRs, "
                    "%.2f ms outstanding before errors: %s\n",
                    a->ranks[i].rank, (unsigned long long)v->create_fail, (unsigned long long)v->post_fail,
                    (unsigned long long)v->wc_err, (unsigned long long)v->wc_flush, MS(v->cost_s), v->first);
        }
    }
    if (a->nhostchecks) {
        fprintf(f, "\nHost checks on the recorded host facts (railscope doctor's checks):\n");
        for (size_t i = 0; i < a->nhostchecks && i < 12; i++) {
            const struct rs_an_hostcheck *c = &a->hostchecks[i];
            fprintf(f, "  %s %s %s %s: %s\n", c->host, c->fail ? "FAIL" : "WARN", c->check, c->subject, c->msg);
        }
        if (a->nhostchecks > 12) fprintf(f, "  ... %zu more (--json)\n", a->nhostchecks - 12);
    }
    if (a->nwarnings) {
        fprintf(f, "\nWarnings:\n");
        for (size_t i = 0; i < a->nwarnings; i++) fprintf(f, "  %s\n", a->warnings[i]);
    }
}

/* Nothing to explain (no GPU, NCCL or verbs activity, no step): one plain line instead of a table of zeros and
 * a link rate nobody measured; the input's warnings still follow (a truncated file says so). */
static void text_nothing(const struct rs_analysis *a, FILE *f)
{
    fprintf(f,
            "railscope report: nothing to analyse: %zu process%s traced (%llu events), none with GPU, NCCL or verbs "
            "activity, and no steps marked\n",
            a->nranks, a->nranks == 1 ? "" : "es", (unsigned long long)a->events);
    if (a->partial) fprintf(f, "PARTIAL INPUT: results cover what could be read (see warnings)\n");
    if (a->nwarnings) {
        fprintf(f, "\nWarnings:\n");
        for (size_t i = 0; i < a->nwarnings; i++) fprintf(f, "  %s\n", a->warnings[i]);
    }
}

void rs_report_text(const struct rs_analysis *a, FILE *f)
{
    if (!a->analysable) {
        text_nothing(a, f);
        return;
    }
    text_head(a, f);
    text_ranks(a, f);
    text_steps(a, f);
    text_colls(a, f);
    text_stragglers(a, f);
    text_gpudirect(a, f);
    text_qps(a, f);
    text_tail(a, f);
}
