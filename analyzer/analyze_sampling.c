/* Extrapolating sampled GPU activity (see analyze_sampling.h).
 *
 * A step lies inside the kernel-tracing windows when the windows cover at least 98 % of it (window edges
 * come from the tracer's tick, a step may start a little before). For those steps the local attribution
 * is complete: compute (kernels), exposed H2D (GPU copy times), host idle (GPU idle), other. A step outside
 * (or partly outside) the windows keeps what is measured without kernel records (exposed collectives,
 * network, peer waits: NCCL plugin and verbs events); its GPU-derived time (compute + H2D + idle + other,
 * which outside windows is mostly "other") is re-split on the premise that a training step's GPU work is
 * the same from step to step and what varies is how long the host leaves the GPU waiting: it gets the mean
 * per-step compute, exposed H2D and other of the window steps, and the rest is host idle; a step shorter
 * than that work gets it scaled down to fit, no idle. (Splitting by the window steps' fractions instead
 * gave a slow first step, 0.49 s of mostly idle, 78 % compute: 16 points off on the H200 transformer trace;
 * this way every window position came within 0.1 point of the fully traced run, bench/gpu/RESULTS.md.)
 * Copies' bytes and pageable/pinned kinds are not extrapolated: the cudart wrappers record every copy
 * outside windows. Exposed collective time of steps outside windows stays as measured (it is not reduced
 * by compute overlap that was not seen). */
#include "analyzer/analyze_sampling.h"

#include <stdio.h>
#include <stdlib.h>

#include "analyzer/analyze_local.h"

static const int gpu_cats[] = {RS_CAT_COMPUTE, RS_CAT_H2D, RS_CAT_IDLE, RS_CAT_OTHER};
#define NGPU (int)(sizeof gpu_cats / sizeof gpu_cats[0])

/* Per analysis, over ranks (attributed in parallel: atomics). */
static uint64_t s_ranks, s_steps, s_in_steps, s_in_ns, s_steps_ns, s_extra_steps, s_extra_ns, s_no_sample_ranks;
/* Ranks whose every kernel was traced (RAILSCOPE_CUDA_KERNELS=all: one window from CUDA init, mode 2). */
static uint64_t s_continuous_ranks;
/* What a stretch of the tracer's own (a window, a detach tail) costs, over ranks: its steps counted, and summed
 * over them, their rank's median such step and median step outside (ns); over every step it touched: their time,
 * as many outside medians; and the most such steps of one rank (the text's threshold: ranks' windows are
 * correlated, their steps do not add up to evidence). */
struct cost_acc {
    uint64_t n, in_ns, base_ns, touch_ns, touch_base_ns, rank_max;
};
/* The windows' own cost (sampled_win_*) and the detach tails' (CUPTI attached after a window until its finalize;
 * sampled_tail_*), with how many tails and how long in all. */
static struct cost_acc s_win, s_tail;
static uint64_t s_tails, s_tails_ns;

/* A rank's n steps of median `med` against its outside median `mo`; `touch_ns` over `kept` touched steps. Each
 * rank's sums cannot wrap (measure_window_cost checks); sums over the ranks of a hostile trace still can, like
 * s_steps_ns: wrong numbers then, never a crash. */
static void cost_add(struct cost_acc *c, uint64_t n, uint64_t med, uint64_t mo, uint64_t touch_ns, uint64_t kept);

/* Taken for the report (and reset): excess = median over outside median less 1; cost = share of all_ns. */
static uint64_t cost_take(struct cost_acc *c, uint64_t all_ns, double *excess, double *cost, uint64_t *rank_max);
/* For a run whose windows missed every step (a short run: the first periodic window comes 3 s after CUDA init,
 * the next 30 s later, and a first step that autotunes for 10 s swallows the one): the latest, over such ranks,
 * of (median step's start - first window's start), in ms: a first window there lands on the steady steps; and
 * the window length that holds two median steps (a step counts as sampled when a window covers 98 % of it). */
static uint64_t s_suggest_first_ms, s_suggest_on_ms;

static void atomic_max(uint64_t *c, uint64_t v)
{
    uint64_t cur = __atomic_load_n(c, __ATOMIC_RELAXED);
    while (v > cur && !__atomic_compare_exchange_n(c, &cur, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
}

static int cmp_u64(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}

static void add(uint64_t *c, uint64_t v) { __atomic_fetch_add(c, v, __ATOMIC_RELAXED); }

static void cost_add(struct cost_acc *c, uint64_t n, uint64_t med, uint64_t mo, uint64_t touch_ns, uint64_t kept)
{
    add(&c->n, n);
    add(&c->in_ns, n * med);
    add(&c->base_ns, n * mo);
    add(&c->touch_ns, touch_ns);
    add(&c->touch_base_ns, kept * mo);
    atomic_max(&c->rank_max, n);
}

static uint64_t cost_take(struct cost_acc *c, uint64_t all_ns, double *excess, double *cost, uint64_t *rank_max)
{
    uint64_t n = __atomic_exchange_n(&c->n, 0, __ATOMIC_RELAXED);
    uint64_t in = __atomic_exchange_n(&c->in_ns, 0, __ATOMIC_RELAXED);
    uint64_t base = __atomic_exchange_n(&c->base_ns, 0, __ATOMIC_RELAXED);
    uint64_t touch = __atomic_exchange_n(&c->touch_ns, 0, __ATOMIC_RELAXED);
    uint64_t touch_base = __atomic_exchange_n(&c->touch_base_ns, 0, __ATOMIC_RELAXED);
    *rank_max = __atomic_exchange_n(&c->rank_max, 0, __ATOMIC_RELAXED);
    *excess = base ? (double)in / (double)base - 1 : 0;
    *cost = all_ns ? ((double)touch - (double)touch_base) / (double)all_ns : 0;
    return n;
}

static uint64_t median_of(uint64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_u64);
    return n % 2 ? v[n / 2] : v[n / 2 - 1] / 2 + v[n / 2] / 2;
}

/* Window steps are longer than the others by what CUPTI costs while it traces every kernel: the run measures its
 * own kernel-tracing cost. The excess: a rank's median window step (98 % inside) over its median step wholly
 * outside windows; medians, so that a checkpoint or a slow first step does not decide it. The cost to the run:
 * every step a window touches (those its start and stop cut carry enabling activity and re-attaching CUPTI: +12
 * ms on a 30 ms ResNet step, session 11's trace) less as many outside medians, leaving out steps over
 * RS_WIN_COST_OUTLIER outside medians (the window at CUDA init touches a run's first step, 10 s of JIT there).
 * The detach tails (traces since session 20 mark the finalize after a window): from a window's close until then
 * CUPTI stayed attached with nothing enabled, which costs too (+5 % of a transformer step, session 8); their steps
 * are measured the same way, and are not outside steps. Not in it: what the tracer costs outside windows and tails
 * (wrappers, NCCL, writing). A rank needs RS_WIN_COST_MIN_STEPS steps wholly outside: a short run's few are its
 * warm-up, and a median of them says nothing. */
#define RS_WIN_COST_OUTLIER 4
static void measure_window_cost(const struct pass *p, const struct an_rank *r)
{
    size_t n = r->nlsteps, nin = 0, nout = 0, ntouch = 0, ntin = 0, nttouch = 0;
    /* v: window steps from the front, outside ones from the back; t: every step a window touched; tv: tail steps
     * from the front, every step a tail (and no window) touched from the back */
    uint64_t *v = malloc(4 * n * sizeof *v), *t = v + n, *tv = v + 2 * n, touch_ns = 0, ttouch_ns = 0;
    if (!v) return;
    for (size_t k = 0; k < n; k++) {
        const struct an_lstep *st = &r->lsteps[k];
        if (st->end <= st->start) continue;
        uint64_t len = st->end - st->start, cov = iv_cover(&p->kwin, st->start, st->end);
        uint64_t tcov = cov ? 0 : iv_cover(&p->ktail, st->start, st->end);
        if (tcov) {
            if (tcov * 100 >= len * 98) tv[ntin++] = len;
            tv[2 * n - 1 - nttouch++] = len;
            continue;
        }
        if (!cov) {
            v[n - 1 - nout++] = len;
            continue;
        }
        if (cov * 100 >= len * 98) v[nin++] = len;
        t[ntouch++] = len;
    }
    uint64_t mi = nin ? median_of(v, nin) : 0, mo = nout ? median_of(v + n - nout, nout) : 0;
    uint64_t mt = ntin ? median_of(tv, ntin) : 0;
    size_t kept = 0, tkept = 0;
    int base = nout >= RS_WIN_COST_MIN_STEPS && mo <= UINT64_MAX / 64 / n;
    int measurable = base && nin && mi <= UINT64_MAX / 64 / n;
    int tmeasurable = base && ntin && mt <= UINT64_MAX / 64 / n;
    for (size_t k = 0; measurable && k < ntouch; k++)
        if (t[k] <= RS_WIN_COST_OUTLIER * mo) touch_ns += t[k], kept++;
    for (size_t k = 0; tmeasurable && k < nttouch; k++) {
        uint64_t len = tv[2 * n - 1 - k];
        if (len <= RS_WIN_COST_OUTLIER * mo) ttouch_ns += len, tkept++;
    }
    free(v);
    if (measurable) cost_add(&s_win, nin, mi, mo, touch_ns, kept);
    if (tmeasurable) cost_add(&s_tail, ntin, mt, mo, ttouch_ns, tkept);
}

static void suggest_first_window(const struct pass *p, const struct an_rank *r)
{
    uint64_t w0 = UINT64_MAX;
    for (size_t i = 0; i < p->kwin.n; i++)
        if (p->kwin.v[i].a < w0) w0 = p->kwin.v[i].a; /* the window opened at CUDA init */
    uint64_t mid = r->lsteps[r->nlsteps / 2].start;
    /* no suggestion from a trace whose first window is not before its steps, or a day away from them */
    if (w0 == UINT64_MAX || mid <= w0 || mid - w0 > 86400ull * 1000000000) return;
    uint64_t *len = malloc(r->nlsteps * sizeof *len);
    if (!len) return;
    size_t n = 0;
    for (size_t k = 0; k < r->nlsteps; k++)
        if (r->lsteps[k].end > r->lsteps[k].start) len[n++] = r->lsteps[k].end - r->lsteps[k].start;
    uint64_t on_ms = 500; /* the default window, unless two median steps need more */
    if (n) {
        qsort(len, n, sizeof *len, cmp_u64);
        uint64_t two = 2 * (len[n / 2] / 1000000 + 1);
        if (two > on_ms && two < 3600ull * 1000) on_ms = (two + 99) / 100 * 100;
    }
    free(len);
    atomic_max(&s_suggest_first_ms, (mid - w0) / 1000000);
    atomic_max(&s_suggest_on_ms, on_ms);
}

void an_sampling_extrapolate(struct pass *p)
{
    struct an_rank *r = p->r;
    if (p->kwin_all && r->nlsteps && p->compute.n && !an_is_launcher(r)) add(&s_continuous_ranks, 1);
    if (!p->kwin_seen || !r->nlsteps) return;
    /* a launcher (torchrun initialises CUDA, so it has windows) is left out of the report: not a rank here */
    if (an_is_launcher(r)) return;
    uint64_t in_sum[NGPU] = {0}, in_pool = 0, in_steps = 0, in_ns = 0, all_ns = 0;
    for (size_t k = 0; k < r->nlsteps; k++) {
        const struct an_lstep *st = &r->lsteps[k];
        if (st->end <= st->start) continue;
        uint64_t len = st->end - st->start, cov = iv_cover(&p->kwin, st->start, st->end);
        all_ns += len;
        if (cov * 100 < len * 98) continue;
        in_steps++;
        in_ns += len;
        for (int c = 0; c < NGPU; c++) {
            in_sum[c] += st->t[gpu_cats[c]];
            in_pool += st->t[gpu_cats[c]];
        }
    }
    add(&s_ranks, 1);
    add(&s_steps, r->nlsteps);
    add(&s_steps_ns, all_ns);
    add(&s_in_steps, in_steps);
    add(&s_in_ns, in_ns);
    if (!p->kwin_all) { /* full capture never detaches: marks there are not ours */
        add(&s_tails, p->ktail.n);
        add(&s_tails_ns, iv_total(&p->ktail));
    }
    if (in_steps && !p->kwin_all) measure_window_cost(p, r); /* full capture: no step outside to compare with */
    if (!in_steps || !in_pool) {
        add(&s_no_sample_ranks, 1);
        suggest_first_window(p, r);
        return; /* nothing to extrapolate from: the old accounting (rest counted as other) stays */
    }
    /* mean per-step GPU work of the window steps: compute, exposed H2D, other (idle is what is left) */
    double work[NGPU];
    for (int c = 0; c < NGPU; c++) work[c] = gpu_cats[c] == RS_CAT_IDLE ? 0 : (double)in_sum[c] / (double)in_steps;
    double wsum = 0;
    for (int c = 0; c < NGPU; c++) wsum += work[c];
    uint64_t extra_steps = 0, extra_ns = 0;
    for (size_t k = 0; k < r->nlsteps; k++) {
        struct an_lstep *st = &r->lsteps[k];
        if (st->end <= st->start) continue;
        uint64_t len = st->end - st->start, cov = iv_cover(&p->kwin, st->start, st->end);
        if (cov * 100 >= len * 98) continue;
        uint64_t pool = 0, given = 0;
        for (int c = 0; c < NGPU; c++) pool += st->t[gpu_cats[c]];
        double scale = wsum > (double)pool ? (double)pool / wsum : 1.0;
        for (int c = 0; c < NGPU; c++) {
            uint64_t v = (uint64_t)(work[c] * scale);
            if (given + v > pool) v = pool - given;
            st->t[gpu_cats[c]] = v;
            given += v;
        }
        st->t[RS_CAT_IDLE] += pool - given; /* the host left the GPU waiting for the rest */
        extra_steps++;
        extra_ns += len;
    }
    add(&s_extra_steps, extra_steps);
    add(&s_extra_ns, extra_ns);
    /* Every step outside the windows was extrapolated: nothing is left "counted as other". */
    r->untraced_ns = 0;
}

void an_sampling_note(struct rs_analysis *a, uint64_t untraced_ns, uint64_t steps_ns)
{
    uint64_t ranks = __atomic_exchange_n(&s_ranks, 0, __ATOMIC_RELAXED);
    uint64_t steps = __atomic_exchange_n(&s_steps, 0, __ATOMIC_RELAXED);
    uint64_t in_steps = __atomic_exchange_n(&s_in_steps, 0, __ATOMIC_RELAXED);
    uint64_t in_ns = __atomic_exchange_n(&s_in_ns, 0, __ATOMIC_RELAXED);
    uint64_t all_ns = __atomic_exchange_n(&s_steps_ns, 0, __ATOMIC_RELAXED);
    uint64_t extra_steps = __atomic_exchange_n(&s_extra_steps, 0, __ATOMIC_RELAXED);
    uint64_t extra_ns = __atomic_exchange_n(&s_extra_ns, 0, __ATOMIC_RELAXED);
    uint64_t none = __atomic_exchange_n(&s_no_sample_ranks, 0, __ATOMIC_RELAXED);
    uint64_t first_ms = __atomic_exchange_n(&s_suggest_first_ms, 0, __ATOMIC_RELAXED);
    uint64_t on_ms = __atomic_exchange_n(&s_suggest_on_ms, 0, __ATOMIC_RELAXED);
    uint64_t continuous = __atomic_exchange_n(&s_continuous_ranks, 0, __ATOMIC_RELAXED);
    uint64_t tails = __atomic_exchange_n(&s_tails, 0, __ATOMIC_RELAXED);
    uint64_t tails_ns = __atomic_exchange_n(&s_tails_ns, 0, __ATOMIC_RELAXED);
    uint64_t win_rank_max, tail_rank_max;
    a->sampled_ranks = ranks;
    a->sampled_no_step_ranks = none;
    a->sampled_steps = steps;
    a->sampled_in_steps = in_steps;
    a->sampled_extra_steps = extra_steps;
    a->sampled_in_share = all_ns ? (double)in_ns / (double)all_ns : 0;
    uint64_t win_n = cost_take(&s_win, all_ns, &a->sampled_win_excess, &a->sampled_win_cost, &win_rank_max);
    uint64_t tail_n = cost_take(&s_tail, all_ns, &a->sampled_tail_excess, &a->sampled_tail_cost, &tail_rank_max);
    a->sampled_win_measured = win_n;
    a->sampled_tails = tails;
    a->sampled_tail_mean_ms = tails ? (double)tails_ns / (double)tails * 1e-6 : 0;
    a->sampled_tail_measured = tail_n;
    if (extra_steps)
        an_warn(a,
                "GPU activity was sampled: kernels and GPU copy times come from windows covering %llu of %llu steps "
                "(%.0f %% of step time); compute, exposed H2D, host idle and other of the %llu steps outside them "
                "(%.0f %%) are extrapolated from those; copy bytes and pageable/pinned are complete",
                (unsigned long long)in_steps, (unsigned long long)steps,
                all_ns ? 100.0 * (double)in_ns / (double)all_ns : 0, (unsigned long long)extra_steps,
                all_ns ? 100.0 * (double)extra_ns / (double)all_ns : 0);
    /* A step's own noise is 9-17 % on the H200 (bench/gpu/RESULTS.md, session 13): a few window steps say
     * little, so the text waits for 20 on one rank (a 500 ms window holds ~15-25 steps of 20-30 ms); the JSON
     * has it always. */
    if (win_rank_max >= RS_WIN_COST_MIN_STEPS && a->sampled_win_excess > 0)
        an_warn(a,
                "kernel tracing cost measured in this run: the %llu steps inside kernel windows took %+.1f %% over "
                "the median step wholly outside them (about what RAILSCOPE_CUDA_KERNELS=all would cost each step); "
                "the steps the windows touched cost %.2f %% of step time (the tracer's costs outside windows are "
                "not in this number)",
                (unsigned long long)win_n, 100.0 * a->sampled_win_excess, 100.0 * a->sampled_win_cost);
    else if (win_rank_max >= RS_WIN_COST_MIN_STEPS)
        an_warn(a,
                "kernel tracing cost measured in this run: none above the steps' own noise (the %llu steps inside "
                "kernel windows took %+.1f %% against the median step wholly outside them)",
                (unsigned long long)win_n, 100.0 * a->sampled_win_excess);
    if (tail_rank_max >= RS_WIN_COST_MIN_STEPS)
        an_warn(a,
                "after each kernel window CUPTI stayed attached %.0f ms on average until it was detached: the %llu "
                "steps inside those tails took %+.1f %% over the median step outside; the steps they touched cost "
                "%.2f %% of step time",
                a->sampled_tail_mean_ms, (unsigned long long)tail_n, 100.0 * a->sampled_tail_excess,
                100.0 * a->sampled_tail_cost);
    if (untraced_ns)
        an_warn(a,
                "kernels were recorded in sampling windows: %.0f %% of step time lies outside them and is counted "
                "as other, not idle (%llu of %llu ranks had no step inside a window to extrapolate from)",
                steps_ns ? 100.0 * (double)untraced_ns / (double)steps_ns : 0, (unsigned long long)none,
                (unsigned long long)ranks);
    /* the remedy, with the number this run needs: a short test run otherwise just shows ~100 % "other" */
    if (untraced_ns && none && first_ms)
        an_warn(a,
                "to sample this run's steady steps, record it with RAILSCOPE_CUDA_KERNEL_WINDOW=%llu/30000/%llu "
                "(the first window %llu ms after CUDA init: at the middle step) or RAILSCOPE_CUDA_KERNELS=all",
                (unsigned long long)on_ms, (unsigned long long)first_ms, (unsigned long long)first_ms);
    else if (untraced_ns && none)
        an_warn(a, "to sample steps, record a longer run or with RAILSCOPE_CUDA_KERNELS=all (every kernel)");
    /* Full capture perturbs what it measures: on the H200 its steps ran 10-19 % longer than untraced ones with
     * the same compute per step (bench/gpu/RESULTS.md, sessions 5-16), the extra being the host's slower kernel
     * launches, i.e. GPU idle. Said so that a user does not read the tracer's own cost as a launch-bound job. */
    if (continuous)
        an_warn(a,
                "every kernel was traced (RAILSCOPE_CUDA_KERNELS=all) on %llu rank(s): CUPTI's per-kernel cost "
                "lengthens steps of many short kernels (7-19 %% of a step measured on H100 and H200), and that time is "
                "counted as host idle; the default (sampled) mode's shares are closer to the untraced run's",
                (unsigned long long)continuous);
}
