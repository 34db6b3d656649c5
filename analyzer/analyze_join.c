/* The cross-rank part: align clocks (REALTIME anchors, then per-host refinement from collective ends),
 * join collectives on (comm_hash, func, seq), measure arrival skew and the network's share of each
 * collective, split every rank's exposed collective time into peer wait / intra-node / network transfer /
 * network stall, and find stragglers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_local.h"
#include "util/xalloc.h"

/* A rank's collective in a joined group; kend copied in (the clock refinement reads it in several passes,
 * and the ranks' collective arrays are scattered over the heap). */
struct member {
    uint32_t g, r, c;
    uint64_t kend;
};

static int cmp_member(const void *x, const void *y)
{
    const struct member *a = x, *b = y;
    if (a->g != b->g) return a->g < b->g ? -1 : 1;
    return a->r < b->r ? -1 : a->r > b->r;
}
static int cmp_dbl(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}
/* Stable top-down merge sort of doubles, the same steps as glibc's qsort (msort: halves n / 2 and the
 * rest, the left element first unless it compares greater), so the order (of equal values too) is the
 * one qsort(cmp_dbl) gives, without a call per comparison. tmp holds n doubles. */
static void dsort(double *b, size_t n, double *tmp)
{
    if (n <= 1) return;
    size_t n1 = n / 2, n2 = n - n1;
    double *b1 = b, *b2 = b + n1, *t = tmp;
    dsort(b1, n1, tmp);
    dsort(b2, n2, tmp);
    while (n1 > 0 && n2 > 0) {
        if (!(*b1 > *b2)) {
            *t++ = *b1++;
            n1--;
        } else {
            *t++ = *b2++;
            n2--;
        }
    }
    if (n1 > 0) memcpy(t, b1, n1 * sizeof *b);
    memcpy(b, tmp, (n - n2) * sizeof *b);
}

static double median(double *v, size_t n)
{
    if (!n) return 0;
    double small[256], *tmp = n <= 256 ? small : rs_xmalloc(n * sizeof *tmp, "analyze_join");
    if (tmp) {
        dsort(v, n, tmp);
        if (tmp != small) free(tmp);
    } else qsort(v, n, sizeof *v, cmp_dbl);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint64_t coll_key(const struct an_lcoll *c)
{
    uint64_t h = c->comm_hash * 0x9e3779b97f4a7c15ull;
    h ^= c->seq + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
    h ^= rs_fnv1a(c->func, strlen(c->func)) * 0xff51afd7ed558ccdull;
    return h;
}

/* busbw factor, nccl-tests conventions (peers-and-formats.md A5). */
static double bus_factor(const char *func, int n)
{
    if (n < 2) return 1;
    if (!strcmp(func, "AllReduce")) return 2.0 * (n - 1) / n;
    if (!strcmp(func, "ReduceScatter") || !strcmp(func, "AllGather") || !strcmp(func, "AlltoAll"))
        return (double)(n - 1) / n;
    return 1;
}

/* Spread of collective ends with the current offsets: median over collectives of max |end - median end|. */
static double end_spread(struct member *m, size_t nm, const double *off, double *tmp)
{
    double *sp = rs_xmalloc((nm + 1) * sizeof *sp, "analyze_join sp");
    size_t ns = 0;
    for (size_t i = 0; i < nm;) {
        size_t j = i;
        while (j < nm && m[j].g == m[i].g) j++;
        if (j - i >= 2) {
            for (size_t k = i; k < j; k++) tmp[k - i] = (double)m[k].kend + off[m[k].r];
            double med = median(tmp, j - i), mx = 0;
            for (size_t k = 0; k < j - i; k++) mx = fmax(mx, fabs(tmp[k] - med));
            sp[ns++] = mx;
        }
        i = j;
    }
    double r = median(sp, ns);
    free(sp);
    return r * 1e-9;
}

static void refine_clocks(struct rs_analysis *a, struct member *m, size_t nm, struct an_rank *R, size_t n, double *off)
{
    /* hosts: same boot id (or host name) = same monotonic clock */
    int *grp = rs_xmalloc(n * sizeof *grp, "analyze_join grp");
    size_t ng = 0;
    const char **gname = rs_xmalloc(n * sizeof *gname, "analyze_join gname");
    for (size_t i = 0; i < n; i++) {
        const char *key = R[i].boot_id[0] ? R[i].boot_id : R[i].out.host;
        size_t g = 0;
        while (g < ng && strcmp(gname[g], key)) g++;
        if (g == ng) gname[ng++] = key;
        grp[i] = (int)g;
    }
    /* One host, one monotonic clock: every rank of a boot-id group gets the group's median anchor, so
     * ranks of one host are aligned exactly (their own anchors differ by the jitter of reading two clocks),
     * and with a single group there is no skew to measure: differences of collective ends between its
     * processes are real, not clock error. */
    for (size_t g = 0; g < ng; g++) {
        double *v = rs_xmalloc(n * sizeof *v, "analyze_join anchors");
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (grp[i] == (int)g && R[i].have_anchor && R[i].boot_id[0]) v[k++] = off[i];
        double med = k ? median(v, k) : 0;
        for (size_t i = 0; i < n && k; i++)
            if (grp[i] == (int)g && R[i].have_anchor && R[i].boot_id[0]) off[i] = med;
        free(v);
    }
    a->one_clock = ng == 1 && n > 0 && R[0].boot_id[0];
    /* a group can exceed n (several communicators without a hash): size by members */
    double *tmp = rs_xmalloc((nm + 1) * sizeof *tmp, "analyze_join tmp");
    a->anchor_skew_s = a->one_clock ? 0 : end_spread(m, nm, off, tmp);
    if (ng >= 2) {
        size_t *cnt = rs_xcalloc(ng, sizeof *cnt, "analyze_join cnt"),
               *pos = rs_xcalloc(ng + 1, sizeof *pos, "analyze_join pos");
        double *d = rs_xmalloc((nm + 1) * sizeof *d, "analyze_join d"),
               *corr = rs_xmalloc(ng * sizeof *corr, "analyze_join corr");
        for (int round = 0; round < 3; round++) {
            memset(cnt, 0, ng * sizeof *cnt);
            for (size_t i = 0; i < nm; i++) cnt[grp[m[i].r]]++;
            pos[0] = 0;
            for (size_t g = 0; g < ng; g++) pos[g + 1] = pos[g] + cnt[g];
            memset(cnt, 0, ng * sizeof *cnt);
            size_t used = 0;
            for (size_t i = 0; i < nm;) {
                size_t j = i;
                while (j < nm && m[j].g == m[i].g) j++;
                int multi = 0;
                for (size_t k = i + 1; k < j; k++) multi |= grp[m[k].r] != grp[m[i].r];
                if (multi) {
                    for (size_t k = i; k < j; k++) tmp[k - i] = (double)m[k].kend + off[m[k].r];
                    double med = median(tmp, j - i);
                    for (size_t k = i; k < j; k++) {
                        int g = grp[m[k].r];
                        d[pos[g] + cnt[g]++] = med - ((double)m[k].kend + off[m[k].r]);
                        used++;
                    }
                }
                i = j;
            }
            if (!used) break;
            for (size_t g = 0; g < ng; g++) corr[g] = median(d + pos[g], cnt[g]);
            double c0[ng];
            memcpy(c0, corr, ng * sizeof *corr);
            double gauge = median(c0, ng);
            for (size_t i = 0; i < n; i++) {
                double c = corr[grp[i]] - gauge;
                off[i] += c;
                R[i].out.refine_ns += (int64_t)llround(c);
            }
        }
        free(cnt);
        free(pos);
        free(d);
        free(corr);
    }
    a->residual_skew_s = a->one_clock ? 0 : end_spread(m, nm, off, tmp);
    free(tmp);
    free(grp);
    free(gname);
}

/* part[i]: the collectives (steps, without collectives) rank index i took part in among those compared: a
 * straggler is "late at N of part[i]", never of the run's total, which counts groups it is not in.
 * cost[i]: the other ranks' exposed wait (their peer_wait, ns) in the collectives (steps) where rank index i
 * was late, its share of it where several were (late_ranks), summed over those ranks. A straggler's cost is that
 * sum divided by the ranks the run's categories are a mean over (a->mean_ranks: the ranks with steps), on the same
 * basis as the "waiting for late ranks" category (docs/report.md "Stragglers"): the stragglers' costs add up to
 * that category less the waits under the lateness threshold, which are charged to no rank. */
static void stragglers(struct rs_analysis *a, const double *late_count, const double *late_sum, const double *cost,
                       const uint64_t *late_steps, const uint64_t *costly_steps, size_t n, struct an_rank *R,
                       const uint64_t *part)
{
    size_t ns = 0;
    for (size_t i = 0; i < n; i++)
        if (late_count[i] > 0) ns++;
    a->stragglers = rs_xcalloc(ns ? ns : 1, sizeof *a->stragglers, "analyze_join stragglers");
    for (size_t i = 0; i < n; i++) {
        if (late_count[i] <= 0) continue;
        struct rs_an_straggler *s = &a->stragglers[a->nstragglers++];
        s->rank = R[i].out.rank;
        s->late_count = (uint64_t)late_count[i];
        s->of = part[i];
        s->mean_late_s = late_sum[i] / late_count[i] * 1e-9;
        s->cost_s = cost[i] * 1e-9 / (a->mean_ranks ? (double)a->mean_ranks : 1);
        s->cost_per_step_s = a->nsteps ? s->cost_s / a->nsteps : s->cost_s;
        s->costly_steps = costly_steps[i];
        /* persistent: last in most steps (most collectives without steps) ... */
        s->persistent = a->nsteps >= 2 ? late_steps[i] * 2 > a->nsteps : late_count[i] * 2 > part[i];
        /* ... and only when its lateness matters: the others' wait it causes is at least
         * RS_AN_STRAGGLER_MIN_COST of the mean step (ranks sharing one GPU take turns being last by ~1 ms,
         * < 1 % of a step; planted stragglers cost 3 % and more) ... */
        if (a->step_mean_s > 0 && s->cost_per_step_s < RS_AN_STRAGGLER_MIN_COST * a->step_mean_s) s->persistent = 0;
        /* ... in its typical step, not only on average: at least that much in more than half of the run's steps (the
         * lower median of its cost per step, 0 in the steps it was not late, is at least that much). A few steps make
         * a mean: NCCL's connection set-up and DDP's bucket rebuild kept the other rank of a 2-rank H200 run waiting
         * 19-37 ms for rank 1 at the first four AllReduces (steps 0 and 1: 37 and 34 % of the step), 0.14-0.47 ms a
         * step after that (median 1.0 %), and the mean, 0.89 ms (3.2 %), made it "persistent" and named
         * (bench/gpu/results/2026-12-04-s21/call3-s2_profstep; a re-run named nobody). The median, not a mean trimmed
         * of the costliest 10 % of steps: start-up lasts a number of steps, not a share of the run (2 of 30 there; of
         * a 10-step run a 10 % trim leaves one in), and "more than half of the steps" is the count "late in most
         * steps" makes. A steady straggler costs about the same every step: its median is its mean. The mean test
         * stays (this one only takes away): a rank costly in just over half of the steps and free in the others is no
         * more persistent than before. Memory: count_late_steps. */
        if (a->nsteps >= 2 && a->step_mean_s > 0 && costly_steps[i] * 2 <= a->nsteps) s->persistent = 0;
        R[i].out.late_s = s->cost_s;
        if (i < a->nranks && a->ranks) a->ranks[i].late_s = s->cost_s; /* rank_outputs() copied R[i].out already */
    }
    /* most costly first */
    for (size_t i = 1; i < a->nstragglers; i++)
        for (size_t j = i; j > 0 && a->stragglers[j].cost_s > a->stragglers[j - 1].cost_s; j--) {
            struct rs_an_straggler t = a->stragglers[j];
            a->stragglers[j] = a->stragglers[j - 1];
            a->stragglers[j - 1] = t;
        }
}

/* An early rank's wait at a collective nothing timed, estimated from the arrival lag (lag_entries): from its own
 * arrival to the last rank's on the run clock, then (lag_waits) the part of it the rank's step gives it, and the ns
 * moved to peer wait for it. */
struct lagw {
    double a, b, w;
    size_t m0;     /* the collective: its members join.m[m0, m0 + nmem) */
    uint32_t nmem; /* (its late ranks are found again from them when it is charged: nothing kept per late rank) */
    uint32_t r;    /* rank index */
    int32_t st;    /* its step on that rank */
};

/* The join's shared state: ranks, clock offsets, run clock origin, straggler accounting. */
struct join {
    struct rs_analysis *a;
    struct an_rank *R;
    size_t n;
    double *off, t0, rate_bpns, late_thr; /* off: clock offsets less base (a double holds ns exactly below 2^53) */
    int64_t base;                         /* realtime - monotonic of the first anchored rank (~1.7e18 ns) */
    int noanchor;                         /* readable ranks without clock anchors */
    struct member *m;
    size_t nm;
    uint32_t ng;
    double *late_count, *late_sum, *cost;
    uint64_t *late_steps, *costly_steps;
    size_t *last_lat; /* per rank index: its latest entry in lat (SIZE_MAX: none) */
    struct late_at {
        int64_t st;
        uint32_t r;
        float cost; /* ns, in a float: an entry stays 16 bytes (about one per late rank and step) */
    } * lat;        /* (rank, step) of late arrivals and the others' wait for it there: late_steps, costly_steps */
    size_t nlat, latcap;
    uint64_t considered;      /* collectives (or verbs steps) where arrivals were compared */
    uint64_t net_estimated;   /* network-only collectives whose transfer was estimated (no member measured it) */
    uint64_t *part;           /* per rank index: how many of those it took part in */
    double *tmp, *arrm;       /* arrm: a collective's members' arrivals */
    struct late *late, *lscr; /* one comparison's late ranks (late_ranks), and its scratch: max(nm, n) + 1 each */
    double *seg;              /* per late rank: the share of the waits before its arrival of each rank still to come */
    struct lagw *lag;         /* early ranks' waits estimated from the arrival lag (lag_entries, lag_waits) */
    size_t nlag, lagcap;
    uint64_t lag_colls; /* collectives whose waits were estimated so */
    double lag_ns;      /* what the estimate moved to peer wait, summed over ranks (ns) */
};
#define RUN(r, t) ((double)(t) + J->off[r] - J->t0) /* local ns -> run clock ns */

/* Phase 1: members of joined collectives (comm_hash, func, seq), grouped; clocks aligned. */
static void join_members(struct join *J)
{
    struct an_rank *R = J->R;
    struct hmap gmap = {0};
    size_t mcap = 0;
    for (size_t r = 0; r < J->n; r++)
        for (size_t c = 0; c < R[r].ncolls; c++) {
            uint64_t k = coll_key(&R[r].colls[c]), g;
            if (!hm_get(&gmap, k, &g)) {
                g = J->ng++;
                hm_put(&gmap, k, g);
            }
            *AN_PUSH(J->m, J->nm, mcap) = (struct member){(uint32_t)g, (uint32_t)r, (uint32_t)c, R[r].colls[c].kend};
        }
    hm_free(&gmap);
    if (J->nm) qsort(J->m, J->nm, sizeof *J->m, cmp_member);
    refine_clocks(J->a, J->m, J->nm, R, J->n, J->off);
}

/* Phase 1b: which steps of different ranks are one step of the run. Ranks' steps are joined by step id, never by
 * position: a rank whose tracing started after its first step, or that lost a mark in the middle, has every later
 * step one position off, and joined by position it arrived a whole step late every time (audit s18: the persistent
 * straggler, the real one hidden; each slow step charged to the step before). After this phase equal ids on two
 * ranks are the same step of the run, and each rank's ids increase (rs_an_run_steps relies on it), so everything
 * after it joins by id and a step a rank lacks is missing there, not shifted:
 *  - ids that increase on every rank are step numbers (a counter in the name, the mark's value) and are kept, so
 *    step N is step N on every rank: what the user numbered. Two exceptions, where the ids cannot be numbers that
 *    ranks share: every rank's ids are just their positions (0..n-1: names without a counter, periodicity) and
 *    the counts differ (positions: a missing first step shifts them all; counters from 0 that lost their last
 *    step look the same, and the join by time below gives those their own ids back); or one rank's ids are none
 *    of the others' (another counter): both are joined by time;
 *  - ids that repeat or go back on some rank (NVTX marks without payload all have id 0; a counter reset every
 *    epoch) name no step: with the same count on every rank the steps are joined by position, as they always
 *    were, and numbered by it; with different counts by time;
 *  - by time (steps_by_time): a step of the run is the steps of all ranks starting within half the median step
 *    of the first of them, one per rank (clocks are aligned by now: steps of a synchronous job start within the
 *    clock error and the ranks' skew, far less than a step). That is what a user means by "the same step" when
 *    nothing numbers it. A warning says so, and why, where it matters: where that joins a step with another than
 *    the join by position (all there was until session 18) or replaces a rank's ids (counters from 0 of ranks
 *    that stopped at different steps join as they did, unsaid); not when the ranks' step sources differ (that
 *    warning already says the join mixes steps). Without clock anchors times say nothing: by position, said. */
static int ids_increasing(const struct an_rank *r)
{
    for (size_t k = 1; k < r->nlsteps; k++)
        if (r->lsteps[k].id <= r->lsteps[k - 1].id) return 0;
    return 1;
}
static int ids_positions(const struct an_rank *r)
{
    for (size_t k = 0; k < r->nlsteps; k++)
        if (r->lsteps[k].id != (int64_t)k) return 0;
    return 1;
}
/* A step of one rank, by id or by start (run clock, less t0). */
struct sref {
    int64_t id;
    double t;
    uint32_t r, k;
};
static int cmp_sref_id(const void *x, const void *y)
{
    const struct sref *a = x, *b = y;
    if (a->id != b->id) return a->id < b->id ? -1 : 1;
    if (a->r != b->r) return a->r < b->r ? -1 : 1;
    return a->k < b->k ? -1 : a->k > b->k;
}
static int cmp_sref_t(const void *x, const void *y)
{
    const struct sref *a = x, *b = y;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    if (a->r != b->r) return a->r < b->r ? -1 : 1;
    return a->k < b->k ? -1 : a->k > b->k;
}
/* A rank whose steps' arrivals are compared without collectives (verbs_stragglers): not one whose data sends are
 * round trips, by the traffic, whatever its steps come from (marks and NVTX ranges too, not only steps that are the
 * round trips; audit 3). */
static int free_sender(const struct an_rank *r) { return !r->ncolls && !r->round_trips; }
/* Every rank's steps (only those of free senders with `free_only`), sorted by id (ranks in order within an id), or
 * by start with `by_t`. */
static struct sref *step_refs(const struct join *J, size_t *n, int by_t, int free_only)
{
    size_t total = 0, i = 0;
    for (size_t r = 0; r < J->n; r++) total += !free_only || free_sender(&J->R[r]) ? J->R[r].nlsteps : 0;
    struct sref *v = rs_xmalloc((total + 1) * sizeof *v, "analyze_join step refs");
    for (size_t r = 0; r < J->n; r++)
        for (size_t k = 0; k < J->R[r].nlsteps && (!free_only || free_sender(&J->R[r])); k++)
            v[i++] = (struct sref){J->R[r].lsteps[k].id, (double)J->R[r].lsteps[k].start + J->off[r], (uint32_t)r,
                                   (uint32_t)k};
    if (total) qsort(v, total, sizeof *v, by_t ? cmp_sref_t : cmp_sref_id);
    *n = total;
    return v;
}
/* A rank with steps whose ids are none of the other ranks' (J->n: none such). Ids increase on every rank. */
static size_t lone_rank(const struct join *J, size_t ref)
{
    const struct an_rank *R = J->R;
    int same = 1; /* the common case, every rank with the reference's steps: no sort */
    for (size_t r = 0; r < J->n && same; r++)
        if (R[r].nlsteps) {
            same = R[r].nlsteps == R[ref].nlsteps;
            for (size_t k = 0; k < R[r].nlsteps && same; k++) same = R[r].lsteps[k].id == R[ref].lsteps[k].id;
        }
    if (same) return J->n;
    size_t ns, lone = J->n;
    struct sref *v = step_refs(J, &ns, 0, 0);
    uint8_t *shared = rs_xcalloc(J->n + 1, 1, "analyze_join shared");
    for (size_t i = 0, j; i < ns; i = j) {
        for (j = i; j < ns && v[j].id == v[i].id; j++) continue;
        if (v[j - 1].r != v[i].r) /* one step per rank and id: two ranks at least */
            for (size_t q = i; q < j; q++) shared[v[q].r] = 1;
    }
    for (size_t r = 0; r < J->n && lone == J->n; r++)
        if (J->R[r].nlsteps && !shared[r]) lone = r;
    free(shared);
    free(v);
    return lone;
}
/* Steps numbered by start time (see above). The run's step numbers are rank `ref`'s ids (the rank with the most
 * steps) when it has a step in each of them and its ids increase, else 0, 1, ... Returns whether that joins
 * some step with another than the join by position did. */
static int steps_by_time(struct join *J, size_t ref)
{
    struct an_rank *R = J->R;
    size_t ns;
    struct sref *v = step_refs(J, &ns, 1, 0);
    double *len = rs_xmalloc((ns + 1) * sizeof *len, "analyze_join step lengths");
    for (size_t i = 0; i < ns; i++) {
        const struct an_lstep *s = &R[v[i].r].lsteps[v[i].k];
        len[i] = s->end > s->start ? (double)(s->end - s->start) : 0;
    }
    double half = median(len, ns) / 2, c0 = 0;
    free(len);
    int64_t *last = rs_xmalloc((J->n + 1) * sizeof *last, "analyze_join last cluster"), nc = 0;
    for (size_t r = 0; r < J->n; r++) last[r] = -1;
    for (size_t i = 0; i < ns; i++) {
        if (!nc || v[i].t - c0 > half || last[v[i].r] == nc - 1) { /* a new step: one per rank */
            c0 = v[i].t;
            nc++;
        }
        last[v[i].r] = nc - 1;
        v[i].id = nc - 1; /* the cluster, for now */
    }
    int64_t *num = rs_xmalloc((size_t)(nc + 1) * sizeof *num, "analyze_join step numbers"),
            *refc = rs_xmalloc((R[ref].nlsteps + 1) * sizeof *refc, "analyze_join ref clusters");
    for (int64_t c = 0; c < nc; c++) num[c] = c;
    for (size_t i = 0; i < ns; i++)
        if (v[i].r == ref) refc[v[i].k] = v[i].id;
    if ((int64_t)R[ref].nlsteps == nc && ids_increasing(&R[ref]))
        for (size_t k = 0; k < R[ref].nlsteps; k++) num[refc[k]] = R[ref].lsteps[k].id;
    int moved = 0; /* by position: step k of every rank with step k of the reference */
    for (size_t i = 0; i < ns; i++) {
        moved |= v[i].k >= R[ref].nlsteps || refc[v[i].k] != v[i].id;
        R[v[i].r].lsteps[v[i].k].id = num[v[i].id];
    }
    free(refc);
    free(num);
    free(last);
    free(v);
    return moved;
}
static void steps_by_position(struct join *J)
{
    for (size_t r = 0; r < J->n; r++)
        for (size_t k = 0; k < J->R[r].nlsteps; k++) J->R[r].lsteps[k].id = (int64_t)k;
}
static void step_keys(struct join *J)
{
    struct an_rank *R = J->R;
    size_t nwith = 0, ref = 0, fewer = J->n;
    int inc = 1, pos = 1, mixed = 0;
    const char *src = NULL;
    for (size_t r = 0; r < J->n; r++) {
        if (!R[r].nlsteps) continue;
        if (R[r].nlsteps > R[ref].nlsteps || !nwith) ref = r;
        inc &= ids_increasing(&R[r]);
        pos &= ids_positions(&R[r]);
        if (src) mixed |= strcmp(src, R[r].step_source) != 0;
        else src = R[r].step_source;
        nwith++;
    }
    if (nwith < 2) return;
    for (size_t r = 0; r < J->n && fewer == J->n; r++)
        if (R[r].nlsteps && R[r].nlsteps != R[ref].nlsteps) fewer = r;
    char why[160];
    size_t lone = J->n;
    if (inc && (!pos || fewer == J->n)) {
        lone = lone_rank(J, ref);
        if (lone == J->n) return; /* the ids name the steps */
        const struct an_rank *l = &R[lone];
        snprintf(why, sizeof why, "rank %d's step ids (%lld to %lld) are none of the other ranks'", l->out.rank,
                 (long long)l->lsteps[0].id, (long long)l->lsteps[l->nlsteps - 1].id);
    } else if (fewer == J->n) {
        steps_by_position(J); /* as many steps on every rank, ids naming none */
        return;
    } else
        snprintf(why, sizeof why, "rank %d has %zu steps, rank %d %zu, and their ids are %s", R[fewer].out.rank,
                 R[fewer].nlsteps, R[ref].out.rank, R[ref].nlsteps,
                 pos ? "only positions" : "not step numbers (repeated or reset)");
    if (J->noanchor) {
        steps_by_position(J);
        if (!mixed)
            an_warn(J->a,
                    "%s, and without clock anchors their times cannot be compared: steps joined across ranks by "
                    "position",
                    why);
        return;
    }
    int moved = steps_by_time(J, ref);
    if ((moved || lone < J->n) && !mixed)
        an_warn(J->a,
                "%s: steps joined across ranks by their start times (a step of the run is the steps starting within "
                "half a step of each other), not by position",
                why);
}

/* Phase 2: run clock zero (earliest aligned step start or collective), step count, late threshold. */
static void run_clock(struct join *J)
{
    struct rs_analysis *a = J->a;
    struct an_rank *R = J->R;
    double t0 = INFINITY;
    for (size_t r = 0; r < J->n; r++) {
        if (R[r].nlsteps) t0 = fmin(t0, (double)R[r].lsteps[0].start + J->off[r]);
        if (R[r].ncolls) t0 = fmin(t0, (double)R[r].colls[0].kstart + J->off[r]);
    }
    if (!isfinite(t0)) t0 = 0;
    J->t0 = t0;
    int64_t t0i = llround(t0);
    a->run_start_realtime_ns = J->base + t0i > 0 ? (uint64_t)(J->base + t0i) : 0;
    /* documented in analysis.h: tracer clock + clock_offset_ns = run clock (ns since run_start_realtime_ns) */
    for (size_t i = 0; i < J->n; i++) R[i].out.clock_offset_ns = (int64_t)llround(J->off[i] - (double)t0i);
    double steps_total = 0;
    uint64_t steps_n = 0;
    for (size_t r = 0; r < J->n; r++) {
        for (size_t k = 0; k < R[r].nlsteps; k++) {
            steps_total += (double)(R[r].lsteps[k].end - R[r].lsteps[k].start);
            steps_n++;
        }
        if (R[r].nlsteps > a->nsteps) a->nsteps = R[r].nlsteps;
    }
    J->late_thr = fmax(20e3, 0.01 * (steps_n ? steps_total / steps_n : 0));
}

/* A late arrival of rank index lr (by `late` ns) in step st, the others' wait for it `cost` (ns, summed over them). */
static void count_late(struct join *J, size_t lr, double late, int64_t st, double cost)
{
    J->late_count[lr] += 1;
    J->late_sum[lr] += late;
    if (st < 0) return;
    size_t x = J->last_lat[lr];
    if (x != SIZE_MAX && J->lat[x].st == st) J->lat[x].cost += (float)cost; /* the same step: one entry */
    else { /* collectives are joined group by group, not in time order: a step can have several (summed later) */
        *AN_PUSH(J->lat, J->nlat, J->latcap) = (struct late_at){st, (uint32_t)lr, (float)cost};
        J->last_lat[lr] = J->nlat - 1;
    }
}
/* Who is late in one comparison of arrivals (a joined collective; a step of verbs-only ranks), and who pays for the
 * others' wait.
 *
 * Late: arriving more than the threshold (max(20 us, 1 % of the mean step)) after the bulk of the ranks, the lower
 * median of the arrivals (of 2 ranks the earlier, of 8 the 4th). Until audit 3 a rank was late only by that much
 * after the next-latest rank: two ranks slow together (a throttled node, all its GPUs late; rank 5 with 8 ms more
 * compute and rank 3 with 8.05 ms of pageable copies) were never late, and six ranks waiting 8 ms per step gave
 * "Stragglers: none". The lower median, not the mean or the median of an even count: with half the ranks late
 * together (4 of 8, one node of two), the bulk is still the early half, and each late rank is late by its whole
 * delay, not half of it. A majority late together is the bulk: nobody is late then, their wait is "waiting for late
 * ranks" charged to no rank.
 *
 * Cost: every waiting rank's wait (until the last arrival) is split among the late ranks it was waiting for, time
 * segment by time segment: before the first late arrival the wait is shared equally by all the late ranks, between
 * two late arrivals by the late ranks not yet arrived (the Shapley split of a wait for the latest of several). A
 * user expects that: with ranks 3 and 5 late by 8.05 and 8.00 ms, neither alone would shorten the wait by more than
 * 0.05 ms (the other still holds everyone), both together by 8 ms, so each is charged half of the common 8 ms and
 * rank 3 the last 0.05 ms alone, and the finding calls them a tie; each late rank's own lateness beyond the bulk,
 * summed, would count the common 8 ms twice, and the stragglers' costs would no longer add up to the category. With
 * one late rank it pays the whole wait, as before. */
struct late {
    double t;   /* arrival, run clock */
    size_t k;   /* the caller's index (member, rank) */
    size_t r;   /* its rank index (late_ranks: k; the caller sets it) */
    int64_t st; /* its own step (the caller sets it; -1 none) */
};
static int cmp_late(const void *x, const void *y)
{
    const struct late *a = x, *b = y;
    if (a->t != b->t) return a->t < b->t ? -1 : 1;
    return a->k < b->k ? -1 : a->k > b->k;
}
/* arr[k] (NAN: no arrival), indep[k] (NULL: every arrival): the arrivals compared (an answer, verbs_stragglers, is
 * neither late nor part of the bulk: it follows its sender's by construction). The late ones into J->late by
 * arrival, their count returned; *bulk the bulk's arrival. Fewer than 2 arrivals compared: none. */
static size_t late_ranks(struct join *J, const double *arr, const uint8_t *indep, size_t n, double *bulk)
{
    size_t cnt = 0, m = 0;
    struct late *v = J->lscr;
    for (size_t k = 0; k < n; k++)
        if (!isnan(arr[k]) && (!indep || indep[k])) v[cnt++] = (struct late){arr[k], k, k, -1};
    if (cnt < 2) return 0;
    qsort(v, cnt, sizeof *v, cmp_late);
    *bulk = v[(cnt - 1) / 2].t;
    for (size_t q = (cnt - 1) / 2 + 1; q < cnt; q++)
        if (v[q].t - *bulk > J->late_thr) J->late[m++] = v[q];
    return m;
}
/* A wait of `w` ns over [x, y) (run clock) into J->seg's segments of the m late ranks (see late_ranks). */
static void wait_segments(struct join *J, size_t m, double x, double y, double w)
{
    if (y <= x || w <= 0) return;
    double prev = -INFINITY;
    for (size_t q = 0; q < m; q++) {
        double a = fmax(x, prev), b = fmin(y, J->late[q].t);
        if (b > a) J->seg[q] += w * (b - a) / (y - x) / (double)(m - q);
        prev = J->late[q].t;
    }
}
/* The late ranks counted (lateness beyond the bulk, in their own steps) and charged: late rank q pays its share of
 * every segment up to its arrival. */
static void charge_late(struct join *J, size_t m, double bulk)
{
    double acc = 0;
    for (size_t q = 0; q < m; q++) {
        acc += J->seg[q];
        J->cost[J->late[q].r] += acc;
        count_late(J, J->late[q].r, J->late[q].t - bulk, J->late[q].st, acc);
        J->seg[q] = 0;
    }
}

static int cmp_late_at(const void *x, const void *y)
{
    const struct late_at *a = x, *b = y;
    if (a->r != b->r) return a->r < b->r ? -1 : 1;
    return a->st < b->st ? -1 : a->st > b->st;
}
/* The steps in which each rank was late, each counted once (a rank in several communicators, e.g. tensor and
 * data parallel groups, is late in the collectives of one step in more than one group: counting every change
 * of step made a rank late in 3 of 10 steps 'persistent'), and those of them where the others' wait for it cost
 * at least RS_AN_STRAGGLER_MIN_COST of the mean step (on the cost's basis: summed over the waiting ranks, per rank of
 * the run's mean_ranks; stragglers()). After rank_outputs: the mean step and mean_ranks are known. Memory: the late
 * arrivals' (rank, step) entries, which were kept before; nothing per rank and step of the run. */
static void count_late_steps(struct join *J)
{
    const struct rs_analysis *a = J->a;
    double thr = RS_AN_STRAGGLER_MIN_COST * a->step_mean_s * 1e9 * (double)(a->mean_ranks ? a->mean_ranks : 1);
    if (J->nlat) qsort(J->lat, J->nlat, sizeof *J->lat, cmp_late_at);
    for (size_t i = 0, j; i < J->nlat; i = j) {
        double c = 0; /* summed in double: the entries of one step are a few */
        for (j = i; j < J->nlat && J->lat[j].r == J->lat[i].r && J->lat[j].st == J->lat[i].st; j++) c += J->lat[j].cost;
        J->late_steps[J->lat[i].r]++;
        J->costly_steps[J->lat[i].r] += c >= thr;
    }
    free(J->lat);
    J->lat = NULL;
}

/* NCCL's log of a communicator's connections (bits: 1 P2P, 2 SHM, 3 NET/IB, 4 NET/Socket, 5 NET, 6 CollNet,
 * 7 NVLS): through the network, and only through it. */
#define CONN_NET(m)      (((m) & (15u << 3)) != 0)
#define CONN_NET_ONLY(m) (!((m) & (1u << 1 | 1u << 2 | 1u << 7)) && ((m) & (7u << 3)))
/* A member's network-only flag: its communicator's own log where NCCL logged it, else the rank's. */
static int member_net_only(const struct an_rank *R, const struct an_lcoll *c)
{
    return c->conn_mask ? CONN_NET_ONLY(c->conn_mask) : R->net_only;
}
/* The transport label of a communicator's log: its network first, "+ P2P/SHM" when intra-node links too. */
static void conn_label(uint32_t m, char *buf, size_t n)
{
    static const char *const names[] = {"NET/IB", "NET/Socket", "NET", "CollNet"};
    const char *net = NULL;
    for (int b = 3; b <= 6 && !net; b++)
        if (m & 1u << b) net = names[b - 3];
    if (net) snprintf(buf, n, "%s%s", net, m & (1u << 1 | 1u << 2 | 1u << 7) ? " + P2P/SHM" : "");
    else snprintf(buf, n, "P2P/SHM");
}

/* The collective's transport from its members: by NCCL's log of the collective's own communicator where a
 * member has one (a rank in a tensor parallel group over NVLink and a data parallel group over the network
 * has both in its rank-wide log); else through the network when any member ran proxy ops, its communicator
 * spans nodes, or its rank logged only network connections; intra-node when the communicator is on one node,
 * or the profiler recorded no proxy op on any member (P2P/SHM move data without the proxy). */
static void coll_transport(struct join *J, struct rs_an_coll *gc, size_t i, size_t j)
{
    int net = 0, known = 0, one_node = 1;
    const char *label = NULL;
    char cl[32] = "";
    for (size_t k = i; k < j; k++) {
        const struct an_lcoll *c = &J->R[J->m[k].r].colls[J->m[k].c];
        const char *t = J->R[J->m[k].r].out.transport;
        net |= c->nproxy > 0 || c->nnodes > 1 || (c->conn_mask ? CONN_NET(c->conn_mask) : J->R[J->m[k].r].net_only);
        one_node &= c->nnodes == 1;
        known |= t[0] != 0;
        if (c->conn_mask && !cl[0]) conn_label(c->conn_mask, cl, sizeof cl);
        if (!label && t[0]) label = t;
    }
    if (cl[0]) label = cl;
    if (net) {
        gc->inter = 1;
        snprintf(gc->transport, sizeof gc->transport, "%.23s", label && !strncmp(label, "NET", 3) ? label : "NET");
        char *plus = strstr(gc->transport, " +");
        if (plus && gc->nseen <= 2) *plus = 0;
    } else if (known || one_node) {
        gc->inter = 0;
        snprintf(gc->transport, sizeof gc->transport, "P2P/SHM");
    } else gc->inter = -1;
}

/* A collective that nothing timed: NCCL API calls alone (no profiler plugin) and no member's NCCL kernel in a sampling
 * window, so each member's interval is its enqueue call and the existing split sees only the call's own microseconds
 * (a 2-rank H200 run with rank 1 sleeping 15 ms a step: 0.06 ms of wait a step, the rest "other";
 * tests/gpu/fixtures/s2_noplugin). Its arrivals are known where every rank of the communicator recorded it, once:
 * then no rank's data can be complete before the last rank enqueued it, so an early rank waits at least from its
 * own arrival to the last one. Those lags are kept here and turned into peer wait per rank and step by lag_waits,
 * once every collective is joined. */
static int lag_estimable(const struct join *J, size_t i, size_t j, int32_t nranks)
{
    if (j - i < 2 || (size_t)nranks != j - i) return 0;
    for (size_t k = i; k < j; k++) {
        const struct an_rank *rr = &J->R[J->m[k].r];
        if (rr->colls[J->m[k].c].timed || !rr->coll_source[0] || (k > i && J->m[k].r == J->m[k - 1].r)) return 0;
    }
    return 1;
}
static void lag_entries(struct join *J, size_t i, size_t j, double L)
{
    J->lag_colls++;
    for (size_t k = i; k < j; k++) {
        const struct an_rank *rr = &J->R[J->m[k].r];
        const struct an_lcoll *c = &rr->colls[J->m[k].c];
        if (c->step < 0 || (size_t)c->step >= rr->nlsteps || !(J->arrm[k - i] < L)) continue;
        *AN_PUSH(J->lag, J->nlag, J->lagcap) =
            (struct lagw){J->arrm[k - i], L, 0, i, (uint32_t)(j - i), J->m[k].r, c->step};
    }
}

/* The late ranks of the collective m[i..j) from its members' arrivals in J->arrm (late_ranks), each with its rank
 * index and its own step. */
static size_t member_late(struct join *J, size_t i, size_t j, double *bulk)
{
    size_t nlate = late_ranks(J, J->arrm, NULL, j - i, bulk);
    for (size_t q = 0; q < nlate; q++) {
        const struct member *mk = &J->m[i + J->late[q].k];
        J->late[q].r = mk->r;
        J->late[q].st = J->R[mk->r].colls[mk->c].step; /* the late rank's own step */
    }
    return nlate;
}

/* Phase 3, per joined collective: arrivals, the network's share, phases, the straggler, and the split of
 * every member's exposed time. */
static void join_coll(struct join *J, size_t i, size_t j)
{
    struct rs_analysis *a = J->a;
    struct an_rank *R = J->R;
    const struct member *m = J->m;
    struct rs_an_coll *gc = &a->colls[a->ncolls++];
    const struct an_lcoll *c0 = &R[m[i].r].colls[m[i].c];
    gc->comm_hash = c0->comm_hash;
    gc->seq = c0->seq;
    snprintf(gc->func, sizeof gc->func, "%s", c0->func);
    snprintf(gc->algo, sizeof gc->algo, "%s", c0->algo);
    gc->bytes = c0->bytes;
    gc->nranks = c0->nranks > 0 ? c0->nranks : (int32_t)(j - i);
    gc->nseen = (int32_t)(j - i);
    /* the step (ids name one step on every rank: step_keys) of the first member that has one: a rank whose tracing
     * started late has the collective outside its steps */
    gc->step = -1;
    for (size_t k = i; k < j && gc->step < 0; k++)
        if (R[m[k].r].colls[m[k].c].step >= 0) gc->step = R[m[k].r].lsteps[R[m[k].r].colls[m[k].c].step].id;
    gc->stall_rank = -1;
    double first = INFINITY, L = -INFINITY, end = -INFINITY, up = -INFINITY;
    int32_t last = -1;
    size_t nrs = 0;
    double stall = 0, transfer = 0, lat = 0;
    /* Arrivals on one footing: kernel starts when every member's kernel was traced, else enqueue times
     * (with sampled kernels a collective may have its kernel on one rank and not on another). */
    int allk = 1;
    for (size_t k = i; k < j; k++) allk &= R[m[k].r].colls[m[k].c].kpaired;
    for (size_t k = i; k < j; k++) {
        const struct an_lcoll *c = &R[m[k].r].colls[m[k].c];
        double arr = RUN(m[k].r, allk ? c->kstart : c->host_ts), e = RUN(m[k].r, c->kend);
        J->arrm[k - i] = arr;
        first = fmin(first, arr);
        if (arr > L) {
            L = arr;
            last = R[m[k].r].out.rank;
        }
        end = fmax(end, e);
        if (c->qp_busy) {
            double ideal = c->qp_bytes / J->rate_bpns, tr = fmin(ideal, (double)c->qp_busy);
            double la = fmin((double)c->qp_lat, (double)c->qp_busy - tr), st = (double)c->qp_busy - tr - la;
            transfer = fmax(transfer, tr);
            lat = fmax(lat, la);
            if (st > stall) {
                stall = st;
                gc->stall_rank = R[m[k].r].out.rank;
                gc->stall_qp = c->qp;
            }
        }
        if (c->rs_end && c->rs_end >= c->kstart && c->rs_end <= c->kend) J->tmp[nrs++] = RUN(m[k].r, c->rs_end);
        if (c->up_end) /* the reduce is over when the last rank (the root) has its children's sums */
            up = fmax(up, RUN(m[k].r, c->up_end));
    }
    gc->first_arrival_ns = (uint64_t)fmax(first, 0);
    gc->last_arrival_ns = (uint64_t)fmax(L, 0);
    gc->end_ns = (uint64_t)fmax(end, 0);
    gc->last_rank = last;
    gc->arrival_skew_s = (L - first) * 1e-9;
    gc->dur_s = fmax(end - L, 0) * 1e-9;
    int timed = 1;
    for (size_t k = i; k < j; k++) timed &= R[m[k].r].colls[m[k].c].timed;
    if (gc->dur_s > 0 && timed && gc->nranks > 1) { /* enqueue-only intervals say nothing about bandwidth */
        gc->algbw_gbps = gc->bytes / gc->dur_s / 1e9;
        gc->busbw_gbps = gc->algbw_gbps * bus_factor(gc->func, gc->nranks);
    }
    if (up > -INFINITY) {
        gc->reduce_s = fmax(up - L, 0) * 1e-9;
        gc->bcast_s = fmax(end - fmax(up, L), 0) * 1e-9;
    }
    if (nrs) { /* ring halves: within the collective's own time by construction */
        double rs = fmin(fmax(median(J->tmp, nrs), L), end);
        gc->rs_s = fmax(rs - L, 0) * 1e-9;
        gc->ag_s = fmax(end - rs, 0) * 1e-9;
    }
    coll_transport(J, gc, i, j);
    /* A collective only through the network (every peer on another node): the time after the last arrival
     * beyond the bytes and latency is the network's too (the pipeline waits on the network path), never
     * intra-node. */
    int net_only = gc->inter == 1;
    for (size_t k = i; k < j; k++) { /* known: every rank of the communicator on a node of its own */
        const struct an_lcoll *c = &R[m[k].r].colls[m[k].c];
        net_only &= (c->nnodes > 1 && c->nnodes >= c->nranks) || member_net_only(&R[m[k].r], c);
    }
    double own = fmax(end - L, 0);
    /* No member measured its sends (NCCL's ProxySteps masked, no verbs WRs): calling all of the time after the
     * last arrival a stall would blame the network for time nothing measured. The bytes a member puts on the wire
     * (the collective's bus bytes) at link rate are transfer, the rest stays unsplit stall as before; latency is
     * not separated (the run's warning says so: net_unmeasured_warning). */
    int unmeasured = net_only && transfer + lat + stall <= 0;
    for (size_t k = i; k < j && unmeasured; k++) unmeasured &= R[m[k].r].net_unmeasured;
    if (unmeasured && J->rate_bpns > 0 && gc->bytes > 0) {
        transfer = fmin(own, (double)gc->bytes * bus_factor(gc->func, gc->nranks) / J->rate_bpns);
        J->net_estimated++;
    }
    if (net_only && own > transfer + lat + stall) stall = own - transfer - lat;
    gc->stall_s = stall * 1e-9;
    gc->net_s = transfer * 1e-9;
    gc->lat_s = lat * 1e-9;
    gc->intra_s = fmax(gc->dur_s - gc->stall_s - gc->net_s - gc->lat_s, 0);
    /* straggler accounting (late_ranks; the cost is the exposed waiting they cause: computed in the split below) */
    size_t nlate = 0;
    double bulk = 0;
    if (j - i >= 2) {
        J->considered++;
        for (size_t k = i; k < j; k++) /* members are sorted by rank within the group: each rank once */
            if (k == i || m[k].r != m[k - 1].r) J->part[m[k].r]++;
        nlate = member_late(J, i, j, &bulk);
    }
    /* split each member's exposed time */
    for (size_t k = i; k < j; k++) {
        struct an_rank *rr = &R[m[k].r];
        const struct an_lcoll *c = &rr->colls[m[k].c];
        if (c->step < 0 || (size_t)c->step >= rr->nlsteps) continue;
        struct an_lstep *st = &rr->lsteps[c->step];
        double pw = 0, rest = 0;
        for (int q = 0; q < c->nexp; q++) {
            double x = RUN(m[k].r, c->exp[q].a), y = RUN(m[k].r, c->exp[q].b);
            double cut = fmin(fmax(L, x), y);
            pw += cut - x;
            rest += y - cut;
        }
        /* its wait, shared among the late ranks it waited for (late_ranks), in the ns the category gets (equal
         * waits give equal costs) */
        for (int q = 0; q < c->nexp && nlate && pw > 0; q++) {
            double x = RUN(m[k].r, c->exp[q].a), y = RUN(m[k].r, c->exp[q].b), cut = fmin(fmax(L, x), y);
            wait_segments(J, nlate, x, cut, (cut - x) * (double)llround(pw) / pw);
        }
        double t_ = fmin(transfer, rest), l_ = fmin(lat, rest - t_), s_ = fmin(stall, rest - t_ - l_),
               in_ = rest - t_ - l_ - s_;
        if (net_only) s_ += in_, in_ = 0;
        st->t[RS_CAT_PEER_WAIT] += (uint64_t)llround(pw);
        st->t[RS_CAT_STALL] += (uint64_t)llround(s_);
        st->t[RS_CAT_NET] += (uint64_t)llround(t_);
        st->t[RS_CAT_LATENCY] += (uint64_t)llround(l_);
        st->t[RS_CAT_INTRA] += (uint64_t)llround(in_);
    }
    if (lag_estimable(J, i, j, gc->nranks)) lag_entries(J, i, j, L);
    charge_late(J, nlate, bulk); /* costs divided by the run's ranks in stragglers() */
}

/* A step's exposed collective time that no joined collective split (a collective seen on one rank only) is intra-node.
 * rank_steps does it; lag_waits first, before it adds to peer wait, which would hide that time from the test. */
static void claim_unjoined(struct an_lstep *ls)
{
    uint64_t split =
        ls->t[RS_CAT_PEER_WAIT] + ls->t[RS_CAT_STALL] + ls->t[RS_CAT_NET] + ls->t[RS_CAT_INTRA] + ls->t[RS_CAT_LATENCY];
    if (ls->coll_exposed > split) ls->t[RS_CAT_INTRA] += ls->coll_exposed - split;
}

static int cmp_lagw_step(const void *x, const void *y)
{
    const struct lagw *a = x, *b = y;
    if (a->r != b->r) return a->r < b->r ? -1 : 1;
    if (a->st != b->st) return a->st < b->st ? -1 : 1;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    return a->b < b->b ? -1 : a->b > b->b;
}
static int cmp_lagw_coll(const void *x, const void *y)
{
    const struct lagw *a = x, *b = y;
    if (a->m0 != b->m0) return a->m0 < b->m0 ? -1 : 1;
    return a->r < b->r ? -1 : a->r > b->r;
}
static int cmp_span(const void *x, const void *y)
{
    const double *a = x, *b = y;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}
/* One rank's lags in one step, lag[g..h) sorted by arrival, and the exposed parts of its collectives in that step,
 * ex[0..nex) ([a, b) pairs, run clock): each lag claims what the earlier ones did not reach (lags of several
 * collectives in a step overlap: the rank waits once), within the step, less the collectives' own exposed time (the
 * split of join_coll has it already, its wait part included). That much moves to peer wait, and only from "other" and
 * "host idle" (time no category explains), as verbs_stragglers moves a rank's wait: never more than the step holds,
 * never time already compute, copies or network. Each lag's w is what it moved. */
static void lag_step(struct join *J, size_t g, size_t h, double *ex, size_t nex)
{
    uint32_t r = J->lag[g].r;
    struct an_lstep *ls = &J->R[r].lsteps[J->lag[g].st];
    double s0 = RUN(r, ls->start), s1 = RUN(r, ls->end), reach = -INFINITY, tot = 0;
    if (nex > 1) qsort(ex, nex, 2 * sizeof *ex, cmp_span);
    size_t p = 0; /* claimed parts increase and do not overlap: one walk over the exposed parts */
    for (size_t q = g; q < h; q++) {
        struct lagw *e = &J->lag[q];
        double x = fmax(fmax(e->a, reach), s0), y = fmin(e->b, s1);
        reach = fmax(reach, e->b);
        e->w = 0;
        if (y <= x) continue;
        e->a = x;
        e->b = y;
        double len = y - x;
        while (p < nex && ex[2 * p + 1] <= x) p++;
        for (size_t u = p; u < nex && ex[2 * u] < y; u++) len -= fmax(fmin(y, ex[2 * u + 1]) - fmax(x, ex[2 * u]), 0);
        e->w = fmax(len, 0);
        tot += e->w;
    }
    if (tot <= 0) return;
    claim_unjoined(ls);
    uint64_t want = (uint64_t)llround(tot), o = ls->t[RS_CAT_OTHER], d = ls->t[RS_CAT_IDLE];
    uint64_t from_other = want < o ? want : o, from_idle = want - from_other < d ? want - from_other : d;
    ls->t[RS_CAT_OTHER] -= from_other;
    ls->t[RS_CAT_IDLE] -= from_idle;
    ls->t[RS_CAT_PEER_WAIT] += from_other + from_idle;
    J->lag_ns += (double)(from_other + from_idle);
    double f = (double)(from_other + from_idle) / tot;
    for (size_t q = g; q < h; q++) J->lag[q].w *= f;
}
/* The late ranks charged for what lag_step moved, as charge_late does for measured waits (their lateness was counted
 * by join_coll already): each collective's lags split among its late ranks segment by segment (wait_segments), the
 * late ranks found again from the members' arrivals as join_coll found them (enqueue times: nothing timed). */
static void lag_charge(struct join *J, size_t m)
{
    double acc = 0;
    for (size_t q = 0; q < m; q++) {
        acc += J->seg[q];
        J->cost[J->late[q].r] += acc;
        if (J->late[q].st >= 0 && acc > 0)
            *AN_PUSH(J->lat, J->nlat, J->latcap) = (struct late_at){J->late[q].st, (uint32_t)J->late[q].r, (float)acc};
        J->seg[q] = 0;
    }
}
/* The waits estimated from the arrival lag (lag_entries), per rank and step, then charged per collective. */
static void lag_waits(struct join *J)
{
    if (!J->nlag) return;
    qsort(J->lag, J->nlag, sizeof *J->lag, cmp_lagw_step);
    for (size_t i = 0, j; i < J->nlag; i = j) {
        uint32_t r = J->lag[i].r;
        for (j = i; j < J->nlag && J->lag[j].r == r; j++) continue;
        const struct an_rank *rr = &J->R[r];
        /* the rank's collectives by step (counting sort), for their exposed parts */
        size_t ns = rr->nlsteps, *pos = rs_xcalloc(2 * (ns + 1), sizeof *pos, "analyze_join lag steps"),
               *fill = pos + ns + 1;
        uint32_t *ord = rs_xmalloc((rr->ncolls + 1) * sizeof *ord, "analyze_join lag colls");
        double *ex = rs_xmalloc((AN_EXP * rr->ncolls + 1) * 2 * sizeof *ex, "analyze_join lag exposed");
        for (size_t c = 0; c < rr->ncolls; c++)
            if (rr->colls[c].step >= 0 && (size_t)rr->colls[c].step < ns) pos[rr->colls[c].step + 1]++;
        for (size_t k = 1; k <= ns; k++) pos[k] += pos[k - 1];
        memcpy(fill, pos, (ns + 1) * sizeof *pos);
        for (size_t c = 0; c < rr->ncolls; c++)
            if (rr->colls[c].step >= 0 && (size_t)rr->colls[c].step < ns) ord[fill[rr->colls[c].step]++] = (uint32_t)c;
        for (size_t g = i, h; g < j; g = h) {
            int32_t st = J->lag[g].st;
            for (h = g; h < j && J->lag[h].st == st; h++) continue;
            size_t nex = 0;
            for (size_t u = pos[st]; u < pos[st + 1]; u++) {
                const struct an_lcoll *c = &rr->colls[ord[u]];
                for (int q = 0; q < c->nexp; q++) {
                    ex[2 * nex] = RUN(r, c->exp[q].a);
                    ex[2 * nex++ + 1] = RUN(r, c->exp[q].b);
                }
            }
            lag_step(J, g, h, ex, nex);
        }
        free(ex);
        free(ord);
        free(pos);
    }
    qsort(J->lag, J->nlag, sizeof *J->lag, cmp_lagw_coll);
    for (size_t i = 0, j; i < J->nlag; i = j) {
        for (j = i; j < J->nlag && J->lag[j].m0 == J->lag[i].m0; j++) continue;
        size_t m0 = J->lag[i].m0, m1 = m0 + J->lag[i].nmem;
        for (size_t k = m0; k < m1; k++) J->arrm[k - m0] = RUN(J->m[k].r, J->R[J->m[k].r].colls[J->m[k].c].host_ts);
        double bulk;
        size_t m = member_late(J, m0, m1, &bulk);
        if (!m) continue; /* nobody late beyond the threshold: a wait charged to no rank */
        for (size_t q = i; q < j; q++)
            if (J->lag[q].w > 0) wait_segments(J, m, J->lag[q].a, J->lag[q].b, J->lag[q].w);
        lag_charge(J, m);
    }
}

/* The data-send busy intervals of a step's ranks, widened by the lateness threshold, sorted by start, and for each
 * prefix the latest end and the latest end of another rank than that one's: whether a receive polled at t came while
 * another rank than r was sending is one binary search (a scan of every rank for every rank was quadratic in ranks). */
struct busy_iv {
    double a, b;
    size_t r;
};
struct busy_pre {
    double b1, b2; /* the latest end so far, and the latest of the other ranks' */
    size_t r1;     /* whose b1 is */
};
struct step_busy {
    struct busy_iv *iv;
    struct busy_pre *pre;
    size_t n;
    const double *arr; /* the step's arrivals (run clock, NAN none) */
};
static int cmp_busy_iv(const void *x, const void *y)
{
    const struct busy_iv *a = x, *b = y;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    return a->r < b->r ? -1 : a->r > b->r;
}
/* The step v[i..j) (arrivals in arr, step indices in kof) into B (room for AN_STEP_BUSY intervals per rank). */
static void step_busy(const struct join *J, const struct sref *v, size_t i, size_t j, const double *arr,
                      const uint32_t *kof, struct step_busy *B)
{
    B->n = 0;
    for (size_t q = i; q < j; q++) {
        size_t s = v[q].r;
        if (isnan(arr[s]) || (q > i && v[q - 1].r == s)) continue;
        const struct an_lstep *o = &J->R[s].lsteps[kof[s]];
        for (int b = 0; b < o->nbusy; b++)
            B->iv[B->n++] = (struct busy_iv){RUN(s, o->busy[b].a) - J->late_thr, RUN(s, o->busy[b].b) + J->late_thr, s};
    }
    if (B->n > 1) qsort(B->iv, B->n, sizeof *B->iv, cmp_busy_iv);
    struct busy_pre p = {-INFINITY, -INFINITY, SIZE_MAX};
    for (size_t k = 0; k < B->n; k++) {
        const struct busy_iv *x = &B->iv[k];
        if (x->b > p.b1) {
            if (x->r != p.r1) p.b2 = p.b1;
            p.b1 = x->b;
            p.r1 = x->r;
        } else if (x->r != p.r1 && x->b > p.b2) p.b2 = x->b;
        B->pre[k] = p;
    }
}

/* Whether the poll that found a message (its IBV_WC hdr.aux, formats/events_verbs.h RS_WC_AUX_*: the empty polls of
 * its CQ right before it, and the time since the CQ's previous completions filled in by an_on_wc when there were none)
 * shows a rank polling for it when it came: a run of empty polls before it (two or more: busy-polling, as
 * IBV_POLL_EMPTY counts it), or no more than the lateness threshold since the CQ's previous completions or its one
 * empty poll. Not so for a rank away when the message landed, which finds it on its first look
 * (no empty poll, and as long since its previous completions as it was away) or after one empty poll and as long.
 * A mean time between polls would say more (a rank that polls now and then between other work and finds the message
 * late), but a rank that busy-polls beside others on a loaded host polls only when it gets a CPU: 16 to 64 polls in
 * 0.5 to 1 ms, 10 to 40 us apart, on the software NIC with three ranks on two CPUs (answer_stream.t), while the
 * threshold was 20 us. A rank that waited for the CQ's event instead (ibv_get_cq_event, IBV_GET_CQ_EVENT) is judged
 * the same way by an_on_wc (analyze_net.c wc_polls): blocked in the call until the event came, it was waiting, and
 * its record is the time from its wake-up to the poll (no empty poll: within the threshold it answers, as a polling
 * rank does); the event there already when it called, its polls decide as if it had not waited. Unknown, and left to
 * the rule below (1): older traces (no record), and a CQ armed with ibv_req_notify_cq since its previous completions
 * whose wait is not known (tracers before session 21 did not record ibv_get_cq_event; a non-blocking channel's wait is
 * in poll/epoll, not traced; or no wait for the event was recorded since those completions). */
static int polled_for(const struct join *J, uint32_t aux)
{
    if (!(aux & RS_WC_AUX_SEEN) || (aux & RS_WC_AUX_ARMED) || rs_wc_aux_polls(aux) >= 2) return 1;
    uint64_t w = rs_wc_aux_wait_ns(aux);
    return w != UINT64_MAX && (double)w <= J->late_thr;
}

/* Every rank's message runs by QP (an_rank qsends) on the run clock, sorted by (qp, dqp, post). */
struct msend {
    double post, done;
    uint32_t qp, dqp;
    size_t r;
};
struct msends {
    struct msend *v;
    size_t n;
};
static int cmp_msend(const void *x, const void *y)
{
    const struct msend *a = x, *b = y;
    if (a->qp != b->qp) return a->qp < b->qp ? -1 : 1;
    if (a->dqp != b->dqp) return a->dqp < b->dqp ? -1 : 1;
    return a->post < b->post ? -1 : a->post > b->post;
}
static struct msends msends(const struct join *J)
{
    struct msends M = {0};
    size_t n = 0;
    for (size_t r = 0; r < J->n; r++) n += J->R[r].nqsends;
    M.v = rs_xmalloc((n + 1) * sizeof *M.v, "analyze_join message sends");
    for (size_t r = 0; r < J->n; r++)
        for (size_t i = 0; i < J->R[r].nqsends; i++) {
            const struct an_qsend *q = &J->R[r].qsends[i];
            M.v[M.n++] = (struct msend){RUN(r, q->post), RUN(r, q->done), q->qp, q->dqp, r};
        }
    if (M.n > 1) qsort(M.v, M.n, sizeof *M.v, cmp_msend);
    return M;
}
/* The completion (run clock) of the send whose message the receive completion answer_rc of a step polled: the last
 * message run posted before it on the QP connected to the receiving one (its qp the receiver's remote QP, its remote
 * QP the receiver's), on whichever rank, when that rank posted it in the same step (from its arrival on, less the
 * threshold: a message of the sender's step before, a ring's token back at its start, is no answer in this one, as
 * below); NAN when not found (remote QPs unknown, the send not traced or not in the step). */
static double msg_sent(const struct msends *M, const struct step_busy *B, double late_thr, const struct an_lstep *st,
                       double rc)
{
    if (!st->answer_qp || !st->answer_dqp) return NAN;
    size_t lo = 0, hi = M->n; /* the first entry after (dqp, qp, rc) */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const struct msend *m = &M->v[mid];
        int before = m->qp != st->answer_dqp   ? m->qp < st->answer_dqp
                     : m->dqp != st->answer_qp ? m->dqp < st->answer_qp
                                               : m->post <= rc;
        if (before) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return NAN;
    const struct msend *m = &M->v[lo - 1];
    if (m->qp != st->answer_dqp || m->dqp != st->answer_qp) return NAN;
    return !isnan(B->arr[m->r]) && m->post >= B->arr[m->r] - late_thr ? m->done : NAN;
}

/* Whether rank r's arrival in a step answers a message it was waiting for: its first data send follows a
 * data-carrying receive completion (answer_rc, polled since its previous data send) that came while another rank of
 * the step was sending (within one of its data-send busy intervals, or the lateness threshold after it: the poll that
 * finds a message follows its landing, the sender's completion follows it too). A responder (request/response, a
 * pipeline stage passing on what it received) can send only after the message lands; arriving after its sender is
 * not its lateness, and the sender waiting for the answer is the round trip, not a straggler (audit 3: a ping-pong
 * whose steps are marks named the answering rank "persistent straggler" at 23-30 % of the step). Not an answer:
 *  - a message that landed while the rank was busy (a ring's late rank finds its left neighbour's write of the
 *    step's start when it looks, long after the sender's send completed): the rank is late on its own;
 *  - a message polled before the rank's step began (a responder still waiting for its last send's completion polls
 *    the next request) when the rank then took more than the threshold to send it: the message was there when its
 *    step began, whatever delayed the send is the rank's own. Sent at once, it is an answer.
 * Work between a message polled in the step and the send (a pipeline stage's compute) is part of the answer: the rank
 * could not start it before the message came.
 * "Came while another rank was sending" stands in for "the rank was waiting for it", and a burst that goes on after the
 * message landed (its sender follows it with something else) stands in wrongly. Where the tracer recorded the polls
 * before the message (polled_for), a rank that was not polling for it when it came is not answering either. */
static int polled_for(const struct join *J, uint32_t aux);
static int answers(const struct join *J, size_t r, const struct an_lstep *st, const struct step_busy *B,
                   const struct msends *M)
{
    if (!st->answer_rc) return 0;
    double rc = RUN(r, st->answer_rc);
    if (st->answer_rc < st->start && (double)(st->arrive - st->start) > J->late_thr) return 0;
    /* since when it was waiting for the message: blocked in a wait for its CQ's event until it came and polled within
     * the threshold of the wake-up, since that wait began (the wake-up's own delay is the channel's, not the rank's) */
    int pf = polled_for(J, st->answer_aux);
    double from = pf && st->answer_blocked ? fmin(RUN(r, st->answer_blocked), rc) : rc;
    /* The message's own send known (msg_sent): it answered when it was waiting for the message no later than the
     * threshold after the sender polled that send's completion, whatever its polls say (a rank descheduled in its
     * wait loop on a loaded host finds its message on its first look, long after its previous one, yet before its
     * sender knew that the message had landed), and not otherwise (its sender's other sends go on after it). */
    /* (only for a message that came through a wait for its CQ's event: a busy-polling rank's polls tell when it was
     * there, and its sender's completion poll, late on a loaded host, would excuse a rank that was away) */
    double sent = st->answer_evwait ? msg_sent(M, B, J->late_thr, st, rc) : NAN;
    if (!isnan(sent)) return sent + J->late_thr >= from;
    if (!pf) return 0;
    size_t lo = 0, hi = B->n; /* the intervals starting at or before rc: [0, lo) */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (B->iv[mid].a <= rc) lo = mid + 1;
        else hi = mid;
    }
    if (!lo) return 0;
    const struct busy_pre *p = &B->pre[lo - 1];
    return (p->r1 != r ? p->b1 : p->b2) >= from;
}

/* The arrivals (run clock; NAN none) and step indices of one step of the run: v[i..j) (step_refs, ranks in order). */
static void step_arrivals(const struct join *J, const struct sref *v, size_t i, size_t j, double *arr, uint32_t *kof)
{
    for (size_t q = i; q < j; q++) {
        size_t r = v[q].r;
        const struct an_lstep *st = &J->R[r].lsteps[v[q].k];
        if (!st->arrive || !isnan(arr[r])) continue; /* isnan: one rank alone may repeat an id */
        arr[r] = RUN(r, st->arrive);
        kof[r] = v[q].k;
    }
}

/* Without collectives (verbs-only programs): each step's first data-carrying send is the rank's arrival. Ranks
 * arriving after the bulk of the ranks are late (late_ranks), except answers (above); like a collective's peer
 * wait, every rank's time from its own arrival to the last late rank's is waiting: it moves to peer wait (its own
 * data sends in there leave network time, the rest leaves other/idle) and is charged to the late ranks it waited
 * for (late_ranks' split). Ranks whose data sends are round trips (r->round_trips, whatever the steps come from)
 * are not compared at all (free_sender). */
static void verbs_stragglers(struct join *J)
{
    struct rs_analysis *a = J->a;
    struct an_rank *R = J->R;
    double *arr = rs_xmalloc((J->n + 1) * sizeof *arr, "analyze_join arrivals");
    uint32_t *kof = rs_xmalloc((J->n + 1) * sizeof *kof, "analyze_join arrival steps");
    uint8_t *indep = rs_xmalloc(J->n + 1, "analyze_join independent arrivals");
    uint64_t *nans = rs_xcalloc(2 * J->n + 1, sizeof *nans, "analyze_join answers"), *narr = nans + J->n;
    struct step_busy B = {rs_xmalloc((J->n * AN_STEP_BUSY + 1) * sizeof *B.iv, "analyze_join busy"),
                          rs_xmalloc((J->n * AN_STEP_BUSY + 1) * sizeof *B.pre, "analyze_join busy prefix"), 0, arr};
    struct msends M = msends(J);
    size_t rt = 0; /* ranks whose data sends are round trips (a ping-pong), or answers: not compared */
    for (size_t r = 0; r < J->n; r++) {
        rt += !R[r].ncolls && R[r].round_trips;
        arr[r] = NAN;
    }
    /* step by step of the run: the ranks' steps with one id (step_keys), ranks in order */
    size_t ns;
    struct sref *v = step_refs(J, &ns, 0, 1);
    /* First the responders: ranks whose arrival answers a message (answers()) in most of the steps with another
     * rank's arrival. Their arrivals are compared in no step: a responder's poll lags the message's landing by
     * more than the threshold when the host deschedules it (a loaded host: 6 of 20 steps of a 3-rank chain on the
     * software NIC), and those steps would make it late. A rank late on its own (a ring's late rank, a responder
     * that sleeps before it looks for the message) answers in few steps, if any: compared in the others. */
    for (size_t i = 0, j; i < ns; i = j) {
        for (j = i; j < ns && v[j].id == v[i].id; j++) continue;
        step_arrivals(J, v, i, j, arr, kof);
        size_t seen = 0;
        for (size_t q = i; q < j; q++) seen += !isnan(arr[v[q].r]) && (q == i || v[q - 1].r != v[q].r);
        if (seen >= 2) step_busy(J, v, i, j, arr, kof, &B);
        for (size_t q = i; q < j && seen >= 2; q++)
            if (!isnan(arr[v[q].r]) && (q == i || v[q - 1].r != v[q].r)) {
                narr[v[q].r]++;
                nans[v[q].r] += answers(J, v[q].r, &R[v[q].r].lsteps[kof[v[q].r]], &B, &M);
            }
        for (size_t q = i; q < j; q++) arr[v[q].r] = NAN;
    }
    for (size_t r = 0; r < J->n; r++) rt += nans[r] * 2 > narr[r];
    for (size_t i = 0, j; i < ns; i = j) {
        for (j = i; j < ns && v[j].id == v[i].id; j++) continue;
        step_arrivals(J, v, i, j, arr, kof);
        step_busy(J, v, i, j, arr, kof, &B);
        size_t seen = 0;
        for (size_t q = i; q < j; q++) { /* the arrivals compared: not responders', not answers */
            size_t r = v[q].r;
            if (isnan(arr[r]) || (q > i && v[q - 1].r == r)) continue;
            indep[r] = nans[r] * 2 <= narr[r] && !answers(J, r, &R[r].lsteps[kof[r]], &B, &M);
            seen += indep[r];
        }
        if (seen >= 2) {
            J->considered++;
            for (size_t q = i; q < j; q++)
                if (!isnan(arr[v[q].r]) && (q == i || v[q - 1].r != v[q].r)) J->part[v[q].r] += indep[v[q].r];
        }
        double bulk = 0;
        size_t nlate = seen >= 2 ? late_ranks(J, arr, indep, J->n, &bulk) : 0;
        if (nlate) {
            double L = J->late[nlate - 1].t;
            for (size_t q = 0; q < nlate; q++) J->late[q].st = (int64_t)kof[J->late[q].r];
            for (size_t q = i; q < j; q++) {
                size_t r = v[q].r;
                if (isnan(arr[r]) || arr[r] >= L) continue;
                struct an_lstep *st = &R[r].lsteps[kof[r]];
                double overlap = 0;
                for (int b = 0; b < st->nbusy; b++) {
                    double x = fmax(RUN(r, st->busy[b].a), arr[r]), y = fmin(RUN(r, st->busy[b].b), L);
                    if (y > x) overlap += y - x;
                }
                uint64_t ov = (uint64_t)llround(overlap);
                if (ov > st->free_busy) ov = st->free_busy;
                st->free_busy -= ov;
                uint64_t w = (uint64_t)llround(fmax(L - arr[r] - (double)ov, 0));
                uint64_t from_other = w < st->t[RS_CAT_OTHER] ? w : st->t[RS_CAT_OTHER];
                uint64_t from_idle = w - from_other < st->t[RS_CAT_IDLE] ? w - from_other : st->t[RS_CAT_IDLE];
                st->t[RS_CAT_OTHER] -= from_other;
                st->t[RS_CAT_IDLE] -= from_idle;
                st->t[RS_CAT_PEER_WAIT] += ov + from_other + from_idle;
                wait_segments(J, nlate, arr[r], L, (double)(ov + from_other + from_idle));
            }
            charge_late(J, nlate, bulk);
        }
        for (size_t q = i; q < j; q++) arr[v[q].r] = NAN;
    }
    free(v);
    free(M.v);
    free(B.iv);
    free(B.pre);
    free(nans);
    free(indep);
    free(kof);
    free(arr);
    if (J->considered && !a->ncolls)
        snprintf(a->straggler_basis, sizeof a->straggler_basis, "first data send per step");
    else if (!J->considered && rt) /* cannot tell: the text reports say why */
        snprintf(a->straggler_basis, sizeof a->straggler_basis, "none: round trips");
}

/* Phase 4: each rank's steps (the network sends outside collectives split into transfer, latency and
 * stall; categories scaled to add up to the step exactly) and QPs. */
static void rank_steps(struct join *J, size_t r, double *step_sum, uint64_t *step_cnt)
{
    struct an_rank *rr = &J->R[r];
    struct rs_an_rank *out = &J->a->ranks[r];
    out->nsteps = rr->nlsteps;
    out->steps = rs_xcalloc(rr->nlsteps ? rr->nlsteps : 1, sizeof *out->steps, "analyze_join steps");
    for (size_t k = 0; k < rr->nlsteps; k++) {
        struct an_lstep *ls = &rr->lsteps[k];
        struct rs_an_step *s = &out->steps[k];
        uint64_t len = ls->end > ls->start ? ls->end - ls->start : 0;
        claim_unjoined(ls);
        /* network sends outside collectives (verbs programs): bytes at link rate, then latency, then stall */
        double ideal = ls->free_bytes / J->rate_bpns;
        uint64_t tr = (uint64_t)fmin(ideal, (double)ls->free_busy);
        uint64_t la = ls->free_lat < ls->free_busy - tr ? ls->free_lat : ls->free_busy - tr;
        ls->t[RS_CAT_NET] += tr;
        ls->t[RS_CAT_LATENCY] += la;
        ls->t[RS_CAT_STALL] += ls->free_busy - tr - la;
        s->id = ls->id;
        s->start_ns = (uint64_t)fmax(RUN(r, ls->start), 0);
        s->end_ns = s->start_ns + len;
        double sum = 0;
        for (int cat = 0; cat < RS_CAT_COUNT; cat++) sum += (double)ls->t[cat];
        /* rounding and folded exposure parts: scale so the categories add up to the step exactly */
        double scale = sum > 0 ? (double)len / sum : 0;
        for (int cat = 0; cat < RS_CAT_COUNT; cat++) {
            s->attr[cat] = (double)ls->t[cat] * scale * 1e-9;
            out->attr[cat] += s->attr[cat];
        }
        *step_sum += len * 1e-9;
        (*step_cnt)++;
    }
    double tot = 0;
    for (int cat = 0; cat < RS_CAT_COUNT; cat++) tot += out->attr[cat];
    out->step_mean_s = rr->nlsteps ? tot / rr->nlsteps : 0;
}

static void rank_qps(struct join *J, size_t r)
{
    struct an_rank *rr = &J->R[r];
    struct rs_an_rank *out = &J->a->ranks[r];
    out->base_latency_s = rr->base_lat * 1e-9;
    out->nqps = rr->nqps;
    out->qps = rs_xcalloc(rr->nqps ? rr->nqps : 1, sizeof *out->qps, "analyze_join qps");
    for (size_t q = 0; q < rr->nqps; q++) {
        const struct an_qpacc *x = &rr->qps[q];
        struct rs_an_qp *y = &out->qps[q];
        y->qp_num = x->qp_num;
        y->peer_rank = x->peer_rank;
        y->bytes_sent = x->bytes_sent;
        y->sends = x->sends;
        y->ctrl_sends = x->ctrl_sends;
        y->ctrl_busy_s = x->ctrl_busy * 1e-9;
        y->busy_s = x->busy * 1e-9;
        y->ideal_s = x->bytes_sent / J->rate_bpns * 1e-9;
        y->latency_s = fmin(x->lat * 1e-9, fmax(y->busy_s - y->ideal_s, 0));
        y->stall_s = fmax(y->busy_s - y->ideal_s - y->latency_s, 0);
        y->achieved_gbps = x->busy ? x->bytes_sent * 8.0 / x->busy : 0;
        y->max_wait_s = x->max_wait * 1e-9;
    }
}

/* The run's step source is the first rank's; a rank whose steps came from elsewhere (NVTX ranges on rank 0 only,
 * say, the others falling back to traffic periodicity or the whole trace) joins its steps with steps of another
 * meaning: the mean step, the slowest steps and a straggler's cost then mix them (audit s17). Said, naming the
 * first few ranks that differ. */
static void mixed_step_sources(struct join *J, const char *src)
{
    if (!src) return;
    char who[160] = "";
    size_t odd = 0, len = 0, first = 0;
    while (first < J->n && J->R[first].step_source != src) first++;
    for (size_t r = 0; r < J->n; r++) {
        const char *s = J->R[r].step_source[0] ? J->R[r].step_source : "none";
        if (!strcmp(s, src)) continue;
        if (odd++ < 3 && len < sizeof who)
            len += (size_t)snprintf(who + len, sizeof who - len, "%srank %d: %s (%zu step%s)", odd > 1 ? ", " : "",
                                    J->R[r].out.rank, s, J->R[r].nlsteps, J->R[r].nlsteps == 1 ? "" : "s");
    }
    if (odd)
        an_warn(J->a,
                "steps come from different sources on different ranks: %s on rank %d, but %s%s; the run's steps "
                "and stragglers mix them (mark steps the same way on every rank, or use --step-marker)",
                src, first < J->n ? J->R[first].out.rank : -1, who, odd > 3 ? ", ..." : "");
}

static void rank_outputs(struct join *J)
{
    struct rs_analysis *a = J->a;
    a->nranks = J->n;
    a->ranks = rs_xcalloc(J->n, sizeof *a->ranks, "analyze_join ranks");
    double step_sum = 0;
    uint64_t step_cnt = 0;
    const char *src = NULL;
    for (size_t r = 0; r < J->n; r++) {
        a->ranks[r] = J->R[r].out;
        if (J->R[r].has_gpu) a->gpu_ranks++;
        if (J->R[r].has_gpu || J->R[r].has_cuda || J->R[r].has_nccl) a->gpu_program_ranks++;
        if (!src && J->R[r].step_source[0]) src = J->R[r].step_source;
        rank_steps(J, r, &step_sum, &step_cnt);
        rank_qps(J, r);
    }
    size_t live = 0;
    for (size_t r = 0; r < J->n; r++)
        if (a->ranks[r].nsteps) {
            live++;
            for (int cat = 0; cat < RS_CAT_COUNT; cat++) a->attr[cat] += a->ranks[r].attr[cat];
        }
    for (int cat = 0; cat < RS_CAT_COUNT && live; cat++) a->attr[cat] /= (double)live;
    a->mean_ranks = live;
    a->step_mean_s = step_cnt ? step_sum / step_cnt : 0;
    snprintf(a->step_source, sizeof a->step_source, "%s", src ? src : "none");
    mixed_step_sources(J, src);
}

/* Run-level transport: the distinct per-rank transports, joined with " + ". */
static void run_transport(struct rs_analysis *a)
{
    for (size_t r = 0; r < a->nranks; r++) {
        const char *t = a->ranks[r].transport;
        if (!t[0] || strstr(a->transport, t)) continue;
        size_t l = strlen(a->transport);
        snprintf(a->transport + l, sizeof a->transport - l, "%s%s", l ? " + " : "", t);
    }
}

/* Ranks whose collectives' network time nothing measured (an_rank.net_unmeasured): the report says what their
 * network categories are made of. */
static void net_unmeasured_warning(struct join *J)
{
    int nr = 0;
    for (size_t i = 0; i < J->n; i++) nr += J->R[i].net_unmeasured && J->R[i].ncolls;
    if (!nr) return;
    an_warn(J->a,
            "NCCL's ProxySteps were not recorded on %d rank%s (RAILSCOPE_NCCL_MASK without proxystep and net): their "
            "network time was not measured; in %llu collective%s through the network only, the bus bytes at link "
            "rate count as transfer and the rest as stall (latency not separated); with intra-node peers too, as "
            "intra-node",
            nr, nr > 1 ? "s" : "", (unsigned long long)J->net_estimated, J->net_estimated == 1 ? "" : "s");
}

void an_join(struct rs_analysis *a, struct an_rank *R, size_t n, const struct rs_report_opts *o)
{
    an_step_marker_warning(a, R, n, o); /* first: the step source shapes everything after it */
    struct join J0 = {.a = a, .R = R, .n = n}, *J = &J0;
    J->off = rs_xcalloc(n ? n : 1, sizeof *J->off, "analyze_join off");
    /* offsets relative to one rank's: as doubles of ~1.7e18 ns every time was rounded to 256 ns (a late rank
     * "1.000064 ms" late, two equal waits costing 0.374976 and 0.375024 ms) */
    for (size_t i = 0; i < n && !J->base; i++)
        if (R[i].have_anchor) J->base = R[i].anchor_offset;
    for (size_t i = 0; i < n; i++) {
        J->off[i] = (double)((R[i].have_anchor ? R[i].anchor_offset : 0) - J->base);
        J->noanchor += !R[i].have_anchor && R[i].out.input != RS_AN_UNREADABLE;
    }
    if (J->noanchor)
        an_warn(a, "%d rank file%s without clock anchors: their times are not aligned", J->noanchor,
                J->noanchor > 1 ? "s" : "");
    join_members(J);
    step_keys(J);
    run_clock(J);
    J->rate_bpns = a->link_gbps / 8.0; /* bytes per ns */
    a->colls = rs_xcalloc(J->ng ? J->ng : 1, sizeof *a->colls, "analyze_join colls");
    J->late_count = rs_xcalloc(n + 1, sizeof(double), "analyze_join late_count");
    J->late_sum = rs_xcalloc(n + 1, sizeof(double), "analyze_join late_sum");
    J->cost = rs_xcalloc(n + 1, sizeof(double), "analyze_join cost");
    J->late_steps = rs_xcalloc(n + 1, sizeof(uint64_t), "analyze_join late_steps");
    J->costly_steps = rs_xcalloc(n + 1, sizeof(uint64_t), "analyze_join costly_steps");
    J->part = rs_xcalloc(n + 1, sizeof(uint64_t), "analyze_join part");
    J->last_lat = rs_xmalloc((n + 1) * sizeof *J->last_lat, "analyze_join last_lat");
    for (size_t i = 0; i < n; i++) J->last_lat[i] = SIZE_MAX;
    J->tmp = rs_xmalloc((J->nm + 1) * sizeof *J->tmp, "analyze_join tmp");
    size_t nl = (J->nm > n ? J->nm : n) + 1;
    J->arrm = rs_xmalloc(nl * sizeof *J->arrm, "analyze_join arrivals");
    J->late = rs_xmalloc(nl * sizeof *J->late, "analyze_join late");
    J->lscr = rs_xmalloc(nl * sizeof *J->lscr, "analyze_join late scratch");
    J->seg = rs_xcalloc(nl, sizeof *J->seg, "analyze_join late segments");
    for (size_t i = 0, j; i < J->nm; i = j) {
        for (j = i; j < J->nm && J->m[j].g == J->m[i].g; j++) continue;
        join_coll(J, i, j);
    }
    lag_waits(J);
    net_unmeasured_warning(J);
    if (J->considered) snprintf(a->straggler_basis, sizeof a->straggler_basis, "collectives");
    verbs_stragglers(J);
    a->stragglers_known = J->considered > 0;
    rank_outputs(J);
    a->lag_colls = J->lag_colls;
    a->lag_wait_s = a->mean_ranks ? J->lag_ns * 1e-9 / (double)a->mean_ranks : 0;
    run_transport(a);
    count_late_steps(J);
    stragglers(a, J->late_count, J->late_sum, J->cost, J->late_steps, J->costly_steps, n, R, J->part);
    free(J->part);
    free(J->tmp);
    free(J->arrm);
    free(J->late);
    free(J->lscr);
    free(J->seg);
    free(J->lag);
    free(J->late_count);
    free(J->late_sum);
    free(J->cost);
    free(J->late_steps);
    free(J->costly_steps);
    free(J->last_lat);
    free(J->m);
    free(J->off);
}
#undef RUN
