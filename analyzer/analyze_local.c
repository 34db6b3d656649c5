/* Reduce one rank's pass to its summary: clock anchor, collectives with their GPU interval and network
 * share, per-QP totals, GPUDirect counters and bounce copies, steps, and the local part of each step's
 * attribution (everything but the split of exposed collective time, which needs the other ranks). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "analyze_local.h"
#include "analyze_sampling.h"
#include "doctor/doctor_checks.h"
#include "util/xalloc.h"

/* qsort that first checks whether the input is already in order (the usual case: file order is mostly
 * time order), saving the sort's cost on the common path. */
static void an_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    const char *b = base;
    for (size_t i = 1; i < n; i++)
        if (cmp(b + (i - 1) * size, b + i * size) > 0) {
            qsort(base, n, size, cmp);
            return;
        }
}

static int cmp_i64(const void *x, const void *y)
{
    int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
    return a < b ? -1 : a > b;
}
static int cmp_u64_desc(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a > b ? -1 : a < b;
}
static int cmp_iv(const void *x, const void *y)
{
    const struct iv *a = x, *b = y;
    return a->a < b->a ? -1 : a->a > b->a;
}
static int cmp_coll_host(const void *x, const void *y)
{
    const struct an_lcoll *a = x, *b = y;
    if (a->host_ts != b->host_ts) return a->host_ts < b->host_ts ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}
static int cmp_coll_k(const void *x, const void *y)
{
    const struct an_lcoll *a = x, *b = y;
    return a->kstart < b->kstart ? -1 : a->kstart > b->kstart;
}
/* The sort comparators read it: one per worker thread (ranks are analysed in parallel). */
static __thread const struct wrrec *g_wrs;
static int cmp_wr_post(const void *x, const void *y)
{
    const struct wrrec *a = &g_wrs[*(const uint32_t *)x], *b = &g_wrs[*(const uint32_t *)y];
    return a->post < b->post ? -1 : a->post > b->post;
}
static int cmp_copy_b(const void *x, const void *y)
{
    const struct copyrec *a = x, *b = y;
    return a->b < b->b ? -1 : a->b > b->b;
}
static int cmp_tsb(const void *x, const void *y)
{
    const struct tsb *a = x, *b = y;
    return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* Index of the collective (sorted by kstart) whose window holds t, or -1. */
static long coll_at(const struct an_lcoll *c, size_t n, uint64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c[mid].kstart <= t) lo = mid + 1;
        else hi = mid;
    }
    for (long i = (long)lo - 1; i >= 0 && i >= (long)lo - 4; i--)
        if (t <= c[i].kend) return i;
    return -1;
}

/* No verbs capture (NCCL's own verbs calls not seen): proxy send-step bursts stand in for work requests. */
static void attach_proxy(struct pass *p)
{
    an_proxy_flush(p);
    if (p->nwrs || !p->npruns) return;
    for (size_t i = 0; i < p->npruns; i++) {
        struct wrrec *w = &p->pruns[i];
        struct qpst *q = qp_get(p, w->qp);
        uint32_t peer = w->qp & 0xffff;
        q->acc.peer_rank = (w->qp & 0x00ff0000u) == 0x00ff0000u || peer == 0xffff ? -1 : (int32_t)peer;
        if (!w->ctrl && w->wr_id > q->acc.max_wait) q->acc.max_wait = w->wr_id;
    }
    free(p->wrs);
    p->wrs = p->pruns;
    p->nwrs = p->npruns;
    p->wrcap = p->pruncap;
    p->pruns = NULL;
    p->npruns = p->pruncap = 0;
}

/* Pair collectives with NCCL kernels (GPU time) in order: a kernel belongs to the first collective
 * enqueued before it ends. With sampled kernels (CUDA_KERNEL_WINDOW) only collectives enqueued inside a
 * window have their kernel in the trace: the others keep their proxy/enqueue interval (pairing them with a
 * kernel of a later window gave collectives of seconds and ring halves longer than any collective). A
 * collective timed by its proxy ops never takes a kernel that starts after those ops ended. */
static void match_kernels(struct pass *p)
{
    an_sort(p->colls, p->ncolls, sizeof *p->colls, cmp_coll_host);
    if (p->nk.n > 1) an_sort(p->nk.v, p->nk.n, sizeof *p->nk.v, cmp_iv);
    size_t j = 0;
    for (size_t i = 0; i < p->ncolls; i++) {
        struct an_lcoll *c = &p->colls[i];
        if (p->kwin_seen && !iv_cover(&p->kwin, c->host_ts, c->host_ts + 1)) continue;
        while (j < p->nk.n && p->nk.v[j].b < c->host_ts) j++;
        if (j < p->nk.n) {
            if (c->nproxy && p->nk.v[j].a > c->kend) continue; /* a later collective's kernel */
            c->timed = 1;
            c->kpaired = 1;
            c->kstart = p->nk.v[j].a;
            if (p->nk.v[j].b > c->kend || c->kend <= c->host_ts + 1000000) c->kend = p->nk.v[j].b;
            if (c->kend < c->kstart) c->kend = c->kstart;
            j++;
        }
    }
    an_sort(p->colls, p->ncolls, sizeof *p->colls, cmp_coll_k);
}

/* Base latency of this rank's work requests: the median, over data bursts of at most 64 KiB, of
 * post->completion beyond the bytes' time at the link rate; with fewer than 5 such bursts, the 10th
 * percentile of its control WRs' post->completion (their median includes waits for the peer to post a
 * receive); else 0. Never from large data bursts: a slow link would pass for latency. (Rate: the option,
 * else this rank's recorded rate, else 100 Gb/s; the report's final rate may differ slightly.)
 * docs/report.md "Latency is not stall". */
static uint64_t base_latency(struct pass *p, double rate_bpns)
{
    size_t n = 0;
    uint64_t *v = rs_xmalloc((p->nwrs + 1) * sizeof *v, "analyze_local latency");
    for (int ctrl = 0; ctrl < 2 && n < 5; ctrl++) {
        n = 0;
        for (size_t i = 0; i < p->nwrs; i++) {
            const struct wrrec *w = &p->wrs[i];
            if (!w->done || w->done < w->post || w->ctrl != ctrl || w->bytes > 65536) continue;
            double x = (double)(w->done - w->post) - (double)w->bytes / rate_bpns;
            v[n++] = x > 0 ? (uint64_t)x : 0;
        }
        if (n >= 5) {
            qsort(v, n, sizeof *v, cmp_u64_desc);
            uint64_t r = ctrl ? v[n - 1 - n / 10] : v[n / 2];
            free(v);
            return r;
        }
    }
    free(v);
    return 0;
}

/* A rank whose every send is at most AN_CTRL_BYTES (a small-message ping-pong) has no other data: its
 * non-empty sends are its traffic (latency-bound), not control; zero-byte sends stay control. */
static void small_messages_are_data(struct pass *p)
{
    for (size_t i = 0; i < p->nwrs; i++)
        if (!p->wrs[i].ctrl) return;
    for (size_t i = 0; i < p->nwrs; i++)
        if (p->wrs[i].bytes) {
            p->wrs[i].ctrl = 0;
            struct qpst *q = qp_get(p, p->wrs[i].qp);
            if (q->acc.ctrl_sends) q->acc.ctrl_sends--;
        }
}

/* A latency-bound burst (its bytes need less time at the link rate than the base latency: round trips, small
 * messages) is latency for all its time beyond the bytes; a bandwidth-bound one for at most the base. */
static inline uint64_t burst_lat(const struct pass *p, const struct wrrec *w, double rate_bpns)
{
    double ideal = (double)w->bytes / rate_bpns, x = (double)(w->done - w->post) - ideal;
    if (x <= 0) return 0;
    if (ideal < (double)p->r->base_lat) return (uint64_t)x;
    return (uint64_t)x < p->r->base_lat ? (uint64_t)x : p->r->base_lat;
}

/* Work requests: per-QP busy time (union of post->completion), per-collective busiest QP, free sends. */
static void account_wrs(struct pass *p, struct ivec *free_net, double rate_bpns)
{
    size_t n = 0;
    uint32_t *idx = rs_xmalloc((p->nwrs + 1) * sizeof *idx, "analyze_local idx");
    if (!idx) exit(2);
    for (size_t i = 0; i < p->nwrs; i++)
        if (p->wrs[i].done >= p->wrs[i].post && p->wrs[i].done) idx[n++] = (uint32_t)i;
    /* (qp, post) order: post order (usually the file's), then a stable counting sort by QP */
    g_wrs = p->wrs;
    an_sort(idx, n, sizeof *idx, cmp_wr_post);
    size_t *cnt = rs_xcalloc(p->nqps + 1, sizeof *cnt, "analyze_local cnt");
    uint32_t *tmp = rs_xmalloc((n + 1) * sizeof *tmp, "analyze_local tmp"),
             *qi = rs_xmalloc((n + 1) * sizeof *qi, "analyze_local qi");
    if (!cnt || !tmp || !qi) exit(2);
    for (size_t k = 0; k < n; k++) {
        uint64_t v = 0;
        hm_get(&p->qpmap, p->wrs[idx[k]].qp, &v);
        qi[k] = (uint32_t)v;
        cnt[v + 1]++;
    }
    for (size_t q = 0; q < p->nqps; q++) cnt[q + 1] += cnt[q];
    for (size_t k = 0; k < n; k++) tmp[cnt[qi[k]]++] = idx[k];
    memcpy(idx, tmp, n * sizeof *idx);
    free(cnt);
    free(tmp);
    free(qi);
    size_t i = 0;
    while (i < n) {
        uint32_t qp = p->wrs[idx[i]].qp;
        struct qpst *q = qp_get(p, qp);
        uint64_t cur_b = 0, busy = 0, ccur_b = 0, cbusy_ctrl = 0;
        long cc = -2;
        uint64_t cbusy = 0, cbytes = 0, clat = 0, lat = 0;
        for (; i < n && p->wrs[idx[i]].qp == qp; i++) {
            const struct wrrec *w = &p->wrs[idx[i]];
            if (w->ctrl) { /* synchronisation, not transfer: its own union, nothing else */
                uint64_t from = w->post > ccur_b ? w->post : ccur_b;
                if (w->done > from) {
                    cbusy_ctrl += w->done - from;
                    ccur_b = w->done;
                }
                continue;
            }
            q->acc.bytes_sent += w->bytes;
            q->acc.sends++;
            long c = coll_at(p->colls, p->ncolls, w->post);
            if (c != cc) {
                if (cc >= 0 && cbusy > p->colls[cc].qp_busy) {
                    p->colls[cc].qp_busy = cbusy;
                    p->colls[cc].qp_bytes = cbytes;
                    p->colls[cc].qp_lat = clat;
                    p->colls[cc].qp = qp;
                }
                cc = c;
                cbusy = cbytes = clat = 0;
            }
            uint64_t bl = burst_lat(p, w, rate_bpns);
            lat += bl;
            clat += bl;
            if (c >= 0) {
                p->colls[c].net_bytes += w->bytes;
                cbytes += w->bytes;
            } else {
                iv_add(free_net, w->post, w->done);
                p->r->free_net_bytes += w->bytes;
            }
            /* growth of the QP's busy union (WRs sorted by post time) */
            uint64_t from = w->post > cur_b ? w->post : cur_b;
            if (w->done > from) {
                busy += w->done - from;
                cbusy += w->done - from;
                cur_b = w->done;
            }
        }
        if (cc >= 0 && cbusy > p->colls[cc].qp_busy) {
            p->colls[cc].qp_busy = cbusy;
            p->colls[cc].qp_bytes = cbytes;
            p->colls[cc].qp_lat = clat;
            p->colls[cc].qp = qp;
        }
        q->acc.busy = busy;
        q->acc.lat = lat < busy ? lat : busy;
        q->acc.ctrl_busy = cbusy_ctrl;
    }
    free(idx);
    iv_normalize(free_net);
}

/* Bounce buffers: a device->host copy just before a send of similar size, a host->device copy just after
 * a receive completion of similar size. */
#define BOUNCE_WINDOW 200000ull /* ns */
static int similar(uint64_t a, uint64_t b) { return a && b && a <= 2 * b && b <= 2 * a; }
static void find_bounces(struct pass *p)
{
    if (!p->ncopies || !p->nwrs) return;
    an_sort(p->copies, p->ncopies, sizeof *p->copies, cmp_copy_b);
    uint32_t *idx = rs_xmalloc(p->nwrs * sizeof *idx, "analyze_local idx");
    if (!idx) exit(2);
    for (size_t i = 0; i < p->nwrs; i++) idx[i] = (uint32_t)i;
    g_wrs = p->wrs;
    an_sort(idx, p->nwrs, sizeof *idx, cmp_wr_post);
    size_t c = 0;
    for (size_t k = 0; k < p->nwrs; k++) {
        struct wrrec *w = &p->wrs[idx[k]];
        while (c < p->ncopies && p->copies[c].b + BOUNCE_WINDOW < w->post) c++;
        for (size_t j = c; j < p->ncopies && p->copies[j].b <= w->post + 1000; j++) {
            struct copyrec *x = &p->copies[j];
            if (x->d2h && !x->used && similar(x->bytes, w->bytes)) {
                x->used = 1;
                w->bounce = 1;
                qp_get(p, w->qp)->acc.bounce_d2h++;
                p->r->bounce_copy_ns += x->b - x->a;
                break;
            }
        }
    }
    free(idx);
    /* receive side: copies sorted by start would be exact; ends are close enough for small copies */
    an_sort(p->rwc, p->nrwc, sizeof *p->rwc, cmp_tsb);
    c = 0;
    for (size_t k = 0; k < p->nrwc; k++) {
        struct tsb *t = &p->rwc[k];
        while (c < p->ncopies && p->copies[c].a < t->ts && p->copies[c].b < t->ts) c++;
        for (size_t j = c; j < p->ncopies && p->copies[j].a <= t->ts + BOUNCE_WINDOW; j++) {
            struct copyrec *x = &p->copies[j];
            if (!x->d2h && !x->used && x->a >= t->ts && similar(x->bytes, t->bytes)) {
                x->used = 1;
                qp_get(p, t->qp)->acc.bounce_h2d++;
                p->r->bounce_copy_ns += x->b - x->a;
                break;
            }
        }
    }
}

/* Boundary threshold for a sequence of start-to-start gaps: the boundary gaps are the largest ones; cut the
 * sorted gaps into two classes in log space (Otsu; the classes must differ by 2x). 0: no split. */
static uint64_t gap_split(uint64_t *g, size_t ng)
{
    qsort(g, ng, sizeof *g, cmp_u64_desc);
    double *lg = rs_xmalloc(ng * sizeof *lg, "analyze_local lg"), tot = 0;
    for (size_t i = 0; i < ng; i++) {
        lg[i] = log((double)g[i] + 1.0);
        tot += lg[i];
    }
    uint64_t thr = 0;
    double best = -1, head = 0;
    for (size_t k = 1; k < ng; k++) { /* first k gaps (the largest) are boundaries */
        head += lg[k - 1];
        double m1 = head / k, m2 = (tot - head) / (ng - k);
        double between = (double)k * (ng - k) * (m1 - m2) * (m1 - m2);
        if (m1 - m2 > log(2.0) && between > best) {
            best = between;
            thr = g[k - 1];
        }
    }
    free(lg);
    return thr;
}

/* Groups of a sequence of intervals cut at gaps >= thr (start-to-start): group k is [first[k], first[k+1]). */
static size_t gap_groups(const struct iv *v, size_t n, uint64_t thr, size_t *first)
{
    size_t ng = 0;
    for (size_t i = 0; i < n; i++)
        if (!i || (v[i].a > v[i - 1].a && v[i].a - v[i - 1].a >= thr)) first[ng++] = i;
    first[ng] = n;
    return ng;
}

/* The most common group size (the intervals of one iteration). */
static size_t modal_size(const size_t *first, size_t ng)
{
    size_t best = 0, bestc = 0;
    for (size_t i = 0; i < ng && i < 4096; i++) {
        size_t c = 0, sz = first[i + 1] - first[i];
        for (size_t j = 0; j < ng; j++) c += first[j + 1] - first[j] == sz;
        if (c > bestc) {
            bestc = c;
            best = sz;
        }
    }
    return best;
}

/* A split is a step structure only when it repeats: most groups hold the same number of intervals (the
 * collectives or sends of one iteration; within 10 % for large groups: gradient buckets may vary), and that
 * number is at least 2. Random long gaps in a uniform stream (a loaded host's scheduling hiccups) give groups
 * of random sizes, or mostly of one interval: such a split changed from run to run (95 to 892 steps on
 * identical ibv_rc_pingpong runs). */
static int near_size(size_t sz, size_t best)
{
    return sz == best || (best >= 10 && sz * 10 >= best * 9 && sz * 10 <= best * 11);
}
static int split_regular(const size_t *first, size_t ng, size_t best)
{
    size_t near = 0;
    for (size_t i = 0; i < ng; i++) near += near_size(first[i + 1] - first[i], best);
    return ng >= 2 && best >= 2 && near * 4 >= ng * 3;
}

/* Split a sequence of activity intervals into steps at its large gaps. Only the groups from the first to the
 * last of the common size are iterations (setup and teardown collectives before and after are not steps):
 * each ends a step that starts at the end of the group before it (collectives end a step: the compute before
 * them is in it), or, with first_open (verbs traffic is the work itself) and no group before, at its own
 * start. No repeating split: with regular gaps (interquartile range within the median), or when the caller
 * knows each interval is one round trip (*rt set), every interval is a step; else there is no step structure
 * (0). *rt (rt may be NULL) is left set only when the steps are those round trips. */
static size_t steps_from_gaps(const struct iv *v, size_t n, int first_open, int *rt, struct srange **out)
{
    int round = rt && *rt;
    if (rt) *rt = 0;
    *out = NULL;
    if (n < 2) return 0;
    uint64_t *g = rs_xmalloc((n - 1) * sizeof *g, "analyze_local g");
    size_t ng = 0;
    for (size_t i = 0; i + 1 < n; i++) /* start-to-start: robust to work that completes just in time */
        if (v[i + 1].a > v[i].a) g[ng++] = v[i + 1].a - v[i].a;
    if (!ng) {
        free(g);
        return 0;
    }
    uint64_t thr = gap_split(g, ng); /* g is sorted descending now */
    size_t *first = rs_xmalloc((n + 2) * sizeof *first, "analyze_local groups"), nG = 0, lo = 0, hi = 0;
    if (thr) {
        nG = gap_groups(v, n, thr, first);
        size_t best = modal_size(first, nG);
        if (split_regular(first, nG, best)) {
            for (lo = 0; lo < nG && !near_size(first[lo + 1] - first[lo], best); lo++) continue;
            for (hi = nG; hi > lo && !near_size(first[hi] - first[hi - 1], best); hi--) continue;
        } else thr = 0;
    }
    if (!thr) { /* uniform gaps: every interval is a group */
        uint64_t q1 = g[ng * 3 / 4], med = g[ng / 2], q3 = g[ng / 4];
        if (round || q3 - q1 <= med) {
            nG = gap_groups(v, n, 1, first);
            lo = 0;
            hi = nG;
            if (rt) *rt = round;
        }
    }
    free(g);
    size_t ns = 0, cap = 0;
    struct srange *s = NULL;
    for (size_t k = lo; k < hi; k++) {
        size_t last = first[k + 1] - 1;
        if (!k && !first_open) continue; /* the first group only opens the first step */
        struct srange *x = AN_PUSH(s, ns, cap);
        memset(x, 0, sizeof *x);
        x->a = k ? v[first[k] - 1].b : v[0].a;
        if (k && first_open && k == lo) x->a = v[first[k]].a;
        x->b = v[last].b;
        x->id = (int64_t)ns - 1;
    }
    free(first);
    *out = s;
    return ns;
}

/* The NVTX ranges or marks that are steps. Candidates are the names (stems) that qualify: a priority-1
 * name (see an_step_name) must repeat at least 3 times, a higher one may appear once. Of those:
 * 1. A name whose ranges all lie inside the ranges of another candidate that is a step word and repeats
 *    is not the steps: per-layer ranges (`layer_3`) or micro-batches (`batch 2`) inside a `train_step`
 *    subdivide the step, and outnumber it. Only a step word encloses this way: generic `epoch N` ranges
 *    enclose `step N` ranges and are not the steps.
 * 2. A name must cover the run to win on priority: at least half the count of the most frequent candidate,
 *    or ranges that cover at least half the time the best-covering candidate's do. Count alone would
 *    fail a step that subdivides into more ranges (30 `train_step` against 120 `layer_N` when the layers
 *    are not enclosed), time alone a step range that leaves out data loading inside an `epoch N`; a
 *    torch.profiler window (`ProfilerStep#N` on 5 of 30 steps) or a single `step 0` fails both.
 * 3. Then the most step-like, where a step word alone (`train_step`, ranges only: a mark without counter
 *    carries its payload as id) ranks above any other name with a counter (`fwd_bwd 3`) and below a step
 *    word with one; then the most frequent.
 * Their outermost ranges are the steps. Returns how many are kept at the front of r (sorted by start), 0
 * when no name qualifies. */
static int cmp_stem(const void *x, const void *y)
{
    const struct srange *a = x, *b = y;
    if (a->prio != b->prio) return a->prio > b->prio ? -1 : 1;
    if (a->stem != b->stem) return a->stem < b->stem ? -1 : 1;
    return a->a < b->a ? -1 : a->a > b->a;
}
struct stem_grp {
    size_t i, n;    /* r[i .. i+n), sorted by start */
    uint64_t cover; /* time covered by the union of its ranges */
    int rank;       /* 2 x priority, +1 for a step word alone (ranges) */
    int out;        /* enclosed by a step word (rule 1) */
};
/* Whether every range of x lies inside the union of y's ranges (both sorted by start). Ranges of y that
 * only touch are not joined: an x range across a step boundary is not inside. */
static int enclosed(const struct srange *x, size_t nx, const struct srange *y, size_t ny)
{
    uint64_t ua = 0, ub = 0;
    size_t k = 0;
    int open = 0;
    for (size_t i = 0; i < nx; i++) {
        for (; k < ny && y[k].a <= x[i].a; k++) {
            if (!open || y[k].a >= ub) {
                ua = y[k].a;
                ub = y[k].b;
                open = 1;
            } else if (y[k].b > ub) ub = y[k].b;
        }
        if (!open || x[i].a < ua || x[i].b > ub) return 0;
    }
    return 1;
}
static size_t pick_stem(struct srange *r, size_t n, int outermost)
{
    if (!n) return 0;
    an_sort(r, n, sizeof *r, cmp_stem);
    struct stem_grp *g = NULL;
    size_t ng = 0, gcap = 0, maxcount = 0;
    uint64_t maxcover = 0;
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i; j < n && r[j].prio == r[i].prio && r[j].stem == r[i].stem; j++) continue;
        if (!r[i].prio || (r[i].prio == 1 && j - i < 3)) continue;
        struct stem_grp *x = AN_PUSH(g, ng, gcap);
        memset(x, 0, sizeof *x);
        x->i = i;
        x->n = j - i;
        /* ranges of a step word alone have no counter (id -1); a generic name always has one */
        x->rank = 2 * r[i].prio + (outermost && r[i].prio == 1 && r[i].id < 0);
        for (size_t k = i, end = 0; k < j; k++) { /* union length: sorted by start */
            uint64_t a = r[k].a > end ? r[k].a : end;
            if (r[k].b > a) x->cover += r[k].b - a;
            if (r[k].b > end) end = r[k].b;
        }
    }
    if (!ng) return 0;
    for (size_t x = 0; outermost && x < ng; x++)
        for (size_t y = 0; y < ng && !g[x].out; y++)
            if (y != x && g[y].rank >= 3 && g[y].n >= 2 && enclosed(r + g[x].i, g[x].n, r + g[y].i, g[y].n) &&
                !enclosed(r + g[y].i, g[y].n, r + g[x].i, g[x].n)) /* the same ranges twice: priority decides */
                g[x].out = 1;
    for (size_t x = 0; x < ng; x++)
        if (!g[x].out) {
            if (g[x].n > maxcount) maxcount = g[x].n;
            if (g[x].cover > maxcover) maxcover = g[x].cover;
        }
    size_t best = ng;
    int bcov = 0;
    for (size_t x = 0; x < ng; x++) {
        if (g[x].out) continue;
        int cov = g[x].n * 2 >= maxcount || (maxcover && g[x].cover * 2 >= maxcover);
        if (best == ng || cov > bcov ||
            (cov == bcov && (g[x].rank > g[best].rank || (g[x].rank == g[best].rank && g[x].n > g[best].n)))) {
            best = x;
            bcov = cov;
        }
    }
    size_t bi = g[best].i, bcount = g[best].n;
    free(g);
    memmove(r, r + bi, bcount * sizeof *r); /* sorted by start within the name */
    if (!outermost) return bcount;
    size_t k = 0;
    for (size_t i = 0; i < bcount; i++)
        if (!k || r[i].a >= r[k - 1].b) r[k++] = r[i];
    return k;
}

/* Request/response (a ping-pong): nine in ten data sends after the first follow a data-carrying receive
 * completion on their QP (the peer's answer) since the rank's previous data send, on the same QP. Each send
 * then opens one round trip whatever the gaps: on a loaded host, descheduled ranks make the gaps
 * irregular (interquartile range up to 100x the median on ibv_rc_pingpong), never the count. A ring's data
 * writes follow zero-byte credits on their QP and its data arrives on another QP: not round trips. */
static int round_trips(struct pass *p, const uint32_t *idx, size_t ni)
{
    if (ni < 3 || !p->nrwc) return 0;
    an_sort(p->rwc, p->nrwc, sizeof *p->rwc, cmp_tsb); /* receive completions by time (poll order) */
    size_t ok = 0, k = 0;
    for (size_t i = 1; i < ni; i++) {
        const struct wrrec *a = &p->wrs[idx[i - 1]], *b = &p->wrs[idx[i]];
        while (k < p->nrwc && p->rwc[k].ts <= a->post) k++;
        int answered = 0;
        for (size_t j = k; j < p->nrwc && p->rwc[j].ts <= b->post && !answered; j++)
            answered = p->rwc[j].qp == b->qp && p->rwc[j].bytes > 0;
        ok += answered && a->qp == b->qp;
    }
    return ok * 10 >= (ni - 1) * 9;
}

/* The rank's data-carrying sends (completed, control WRs left out) in post order; returns how many. */
static size_t data_sends(struct pass *p, uint32_t **idx)
{
    size_t ni = 0;
    *idx = rs_xmalloc((p->nwrs + 1) * sizeof **idx, "analyze_local idx");
    for (size_t i = 0; i < p->nwrs; i++)
        if (!p->wrs[i].ctrl && p->wrs[i].done) (*idx)[ni++] = (uint32_t)i;
    g_wrs = p->wrs;
    an_sort(*idx, ni, sizeof **idx, cmp_wr_post);
    return ni;
}

/* Whether the rank's data sends are round trips (r->round_trips), whatever its steps come from: a ping-pong
 * delimited by marks or NVTX ranges is as much request/response as one whose steps are its round trips, and each
 * side is later than the other by a round trip in turn; the join compares no arrivals of such a rank (audit 3:
 * a ping-pong with `railscope_mark` steps named its answering rank the persistent straggler). */
static void rank_round_trips(struct pass *p)
{
    uint32_t *idx;
    size_t ni = data_sends(p, &idx);
    p->r->round_trips = round_trips(p, idx, ni);
    free(idx);
}

/* Steps from data-carrying sends in post order (verbs-only programs; zero-byte credits and acks blur the
 * pattern). */
static size_t steps_from_sends(struct pass *p, struct srange **steps)
{
    struct iv *v = NULL;
    size_t nv = 0, cap = 0;
    uint32_t *idx;
    size_t ni = data_sends(p, &idx);
    for (size_t i = 0; i < ni; i++) *AN_PUSH(v, nv, cap) = (struct iv){p->wrs[idx[i]].post, p->wrs[idx[i]].done};
    int rt = p->r->round_trips;
    free(idx);
    size_t n = steps_from_gaps(v, nv, 1, &rt, steps);
    free(v);
    if (n) snprintf(p->r->step_source, sizeof p->r->step_source, rt ? AN_ROUND_TRIPS : "verbs traffic periodicity");
    return n;
}

/* The stamp of the rank's PROC_END, 0 without one (killed, crashed, still running): the process's exit, after
 * everything it recorded. p->last_ts leaves the core kinds out (setup records may carry odd stamps,
 * analyze_load.c span_kind). A file cut by the memory budget was analysed up to the cut: its end is not the
 * steps' end. */
static uint64_t proc_end_ts(const struct pass *p) { return p->r->cut_events ? 0 : p->proc_end_ts; }

/* NVTX ranges with a step-like name that pick_stem passed over (none qualified: a name without a counter, or one
 * that is no step word with a counter, on fewer than 3 ranges), for the join's hint: the likeliest of them (the most
 * step-like, then the most frequent) by its first range's name as written, cut at its counter: `train_step` (2
 * ranges), `fwd_bwd` of `fwd_bwd 5`. r: the ranges as pick_stem left them (sorted by priority, stem, start); steps:
 * those found elsewhere. Ranges coarser than those steps (two `epoch N` around 500 steps found by periodicity: at
 * least 2 whole steps inside each range on average) are not steps the detection missed: no hint. A name too long for
 * the hint is left out too: cut, it would name no range. */
static void step_hint(struct pass *p, const struct srange *r, size_t n, const struct srange *steps, size_t nsteps)
{
    struct an_rank *R = p->r;
    size_t best = n, bn = 0;
    int brank = -1;
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i; j < n && r[j].prio == r[i].prio && r[j].stem == r[i].stem; j++) continue;
        const int rank = 2 * r[i].prio + (r[i].prio == 1 && r[i].id < 0);
        if (r[i].prio && (rank > brank || (rank == brank && j - i > bn))) {
            best = i;
            bn = j - i;
            brank = rank;
        }
    }
    if (best == n) return;
    size_t inside = 0; /* steps wholly inside one of the ranges */
    for (size_t k = 0; k < nsteps; k++)
        for (size_t i = best; i < best + bn; i++)
            if (steps[k].a >= r[i].a && steps[k].b <= r[i].b && steps[k].b > steps[k].a) {
                inside++;
                break;
            }
    if (inside >= 2 * bn) return;
    const char *s = rs_reader_string(p->rd, r[best].msg, NULL);
    const size_t l = s ? an_step_stem_len(s) : 0;
    if (!l || l >= sizeof R->step_hint) return;
    memcpy(R->step_hint, s, l);
    R->step_hint[l] = 0;
    R->step_hint_n = (uint32_t)bn;
    R->step_hint_word = r[best].prio == 1 && r[best].id < 0;
}

static void find_steps(struct pass *p, struct ivec *free_net, struct srange **steps, size_t *nsteps)
{
    struct an_rank *r = p->r;
    const char *mk = p->o->step_marker;
    size_t k = p->nranges ? pick_stem(p->ranges, p->nranges, 1) : 0;
    if (k) {
        p->nranges = k;
        *steps = p->ranges;
        *nsteps = p->nranges;
        p->ranges = NULL;
        p->nranges = p->rangecap = 0;
        snprintf(r->step_source, sizeof r->step_source, "%s%.20s", mk ? AN_MARKER_SOURCE : "nvtx ranges", mk ? mk : "");
        return;
    }
    k = p->nmarks >= 2 ? pick_stem(p->marks, p->nmarks, 0) : 0;
    if (k >= 2) {
        /* A mark starts a step; the last one runs to the rank's last event. With nothing recorded after
         * the last mark: where the steps hold recorded activity (kernels, collectives, sends) that stops
         * before it, the last mark closes the loop (13 marks around 12 steps of collectives) and starts no
         * step; where the rank records nothing but its marks (a host-only program; an NVTX mark is itself
         * activity, so the last event is that mark), the last step ran all the same, to PROC_END (see
         * proc_end_ts). Killed (no PROC_END): no end known, the last mark starts no step. */
        uint64_t end = p->last_ts;
        int closes = end > p->marks[0].a && end < p->marks[k - 1].a;
        if (end <= p->marks[k - 1].a && !closes) {
            uint64_t pe = proc_end_ts(p);
            if (pe > end) end = pe;
        }
        struct srange *s = rs_xcalloc(k, sizeof *s, "analyze_local s");
        for (size_t i = 0; i < k; i++) {
            s[i].a = p->marks[i].a;
            s[i].b = i + 1 < k ? p->marks[i + 1].a : end;
            s[i].id = p->marks[i].id;
        }
        *steps = s;
        *nsteps = k - (end > p->marks[k - 1].a ? 0 : 1);
        snprintf(r->step_source, sizeof r->step_source, "%s%.20s", mk ? AN_MARKER_SOURCE : "marks", mk ? mk : "");
        return;
    }
    if (p->ncolls >= 2) {
        struct iv *v = rs_xmalloc(p->ncolls * sizeof *v, "analyze_local v");
        for (size_t i = 0; i < p->ncolls; i++) v[i] = (struct iv){p->colls[i].kstart, p->colls[i].kend};
        *nsteps = steps_from_gaps(v, p->ncolls, 0, NULL, steps);
        free(v);
        if (*nsteps) {
            snprintf(r->step_source, sizeof r->step_source, "collective periodicity");
            return;
        }
    }
    if (free_net->n >= 2 && (*nsteps = steps_from_sends(p, steps))) return;
    /* one step: the whole trace */
    *steps = rs_xcalloc(1, sizeof **steps, "analyze_local steps");
    (*steps)[0].a = p->first_ts == UINT64_MAX ? 0 : p->first_ts;
    (*steps)[0].b = p->last_ts;
    (*steps)[0].id = 0;
    *nsteps = p->last_ts > (*steps)[0].a ? 1 : 0;
    snprintf(r->step_source, sizeof r->step_source,
             p->ncolls >= 2 || free_net->n >= 2 ? "none found (whole trace)" : "whole trace");
}

/* The hint without --step-marker (see detect_steps' step_hint), once for the run: the first rank with one names the
 * candidate, its count and the option; the ranks whose candidate has the same name are counted. */
static void step_hint_warning(struct rs_analysis *a, const struct an_rank *R, size_t n)
{
    size_t h = 0, readable = 0, same_src = 0, others = 0;
    while (h < n && (R[h].out.input == RS_AN_UNREADABLE || !R[h].step_hint[0])) h++;
    if (h == n) return;
    const char *src = R[h].step_source[0] ? R[h].step_source : "none";
    for (size_t i = 0; i < n; i++) {
        if (R[i].out.input == RS_AN_UNREADABLE) continue;
        readable++;
        same_src += !strcmp(R[i].step_source[0] ? R[i].step_source : "none", src);
        others += i != h && !strcasecmp(R[i].step_hint, R[h].step_hint);
    }
    char on[48] = "", more[48] = "", opt[2 * AN_STEP_HINT + 8];
    if (readable > 1) snprintf(on, sizeof on, " on %zu of %zu ranks", same_src, readable);
    if (others) snprintf(more, sizeof more, " and on %zu other rank%s", others, others > 1 ? "s" : "");
    /* the option as a shell takes it: quoted when the name holds anything but a plain word's characters; after
     * `=` when it starts with `-` (getopt would take it for an option) */
    const char *nm = R[h].step_hint;
    size_t plain = strspn(nm, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.:#=/+,@%");
    if (!nm[plain]) snprintf(opt, sizeof opt, "%s", nm);
    else {
        size_t l = 0;
        opt[l++] = '\'';
        for (const char *c = nm; *c && l + 6 < sizeof opt; c++) {
            if (*c == '\'') { /* 'it'\''s' */
                memcpy(opt + l, "'\\''", 4);
                l += 4;
            } else opt[l++] = *c;
        }
        opt[l++] = '\'';
        opt[l] = 0;
    }
    an_warn(a,
            "steps from %s%s; NVTX ranges '%s' (%u on rank %d%s) were not taken as steps (%s needs 3): "
            "--step-marker%s%s uses them",
            src, on, nm, R[h].step_hint_n, R[h].out.rank, more,
            R[h].step_hint_word ? "a name without a counter" : "a name that is no step word, like step or iteration,",
            nm[0] == '-' ? "=" : " ", opt);
}

/* The rank's steps (find_steps); NVTX ranges left in p->ranges were passed over (taken, they move into the steps). */
static void detect_steps(struct pass *p, struct ivec *free_net, struct srange **steps, size_t *nsteps)
{
    find_steps(p, free_net, steps, nsteps);
    if (p->nranges && !p->o->step_marker) step_hint(p, p->ranges, p->nranges, *steps, *nsteps);
}

void an_step_marker_warning(struct rs_analysis *a, const struct an_rank *R, size_t n, const struct rs_report_opts *o)
{
    if (!o || !o->step_marker) {
        step_hint_warning(a, R, n);
        return;
    }
    size_t readable = 0, missed = 0;
    const char *src = NULL;
    for (size_t i = 0; i < n; i++) {
        if (R[i].out.input == RS_AN_UNREADABLE) continue;
        readable++;
        if (!strncmp(R[i].step_source, AN_MARKER_SOURCE, strlen(AN_MARKER_SOURCE))) continue;
        missed++;
        if (!src) src = R[i].step_source[0] ? R[i].step_source : "none";
    }
    if (!missed) return;
    char where[64] = "";
    if (missed < readable) snprintf(where, sizeof where, " on %zu of %zu ranks", missed, readable);
    an_warn(a,
            "--step-marker '%.60s' delimits no step%s (no NVTX range and fewer than two marks start with it): %s "
            "from %s",
            o->step_marker, where, missed < readable ? "their steps" : "steps", src);
}

/* A data-carrying send burst outside collectives (verbs programs). */
struct fsend {
    uint64_t post, done, bytes, lat;
};
static int cmp_fsend(const void *x, const void *y)
{
    const struct fsend *a = x, *b = y;
    return a->post < b->post ? -1 : a->post > b->post;
}
static struct fsend *free_sends(struct pass *p, double rate_bpns, size_t *n, size_t *cap)
{
    struct fsend *fs = NULL;
    for (size_t i = 0; i < p->nwrs; i++) {
        const struct wrrec *w = &p->wrs[i];
        if (!w->done || w->ctrl || coll_at(p->colls, p->ncolls, w->post) >= 0) continue;
        *AN_PUSH(fs, *n, *cap) = (struct fsend){w->post, w->done, w->bytes, burst_lat(p, w, rate_bpns)};
    }
    an_sort(fs, *n, sizeof *fs, cmp_fsend);
    return fs;
}
/* The step's free sends: bytes, latency, the first post (the rank's arrival in the step) and the first
 * AN_STEP_BUSY merged busy intervals from it (the join moves the rest of [arrival, last rank's arrival]
 * into peer wait). */
static void step_sends(struct an_lstep *st, const struct fsend *fs, size_t n, uint64_t s, uint64_t e)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (fs[mid].post < s) lo = mid + 1;
        else hi = mid;
    }
    for (size_t q = lo; q < n && fs[q].post < e; q++) {
        st->free_bytes += fs[q].bytes;
        st->free_lat += fs[q].lat;
        if (!st->arrive) st->arrive = fs[q].post;
        uint64_t b = fs[q].done < e ? fs[q].done : e;
        if (st->nbusy && fs[q].post <= st->busy[st->nbusy - 1].b) {
            if (b > st->busy[st->nbusy - 1].b) st->busy[st->nbusy - 1].b = b;
        } else if (st->nbusy < AN_STEP_BUSY) st->busy[st->nbusy++] = (struct iv){fs[q].post, b};
    }
}

static int cmp_u64_asc(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? -1 : a > b;
}
/* A data send posted after a pause in [s, e) earlier than the step's first burst is its arrival. */
static size_t first_gpost(const struct pass *p, size_t i, uint64_t s, uint64_t e, struct an_lstep *st)
{
    while (i < p->ngposts && p->gposts[i] < s) i++;
    if (i < p->ngposts && p->gposts[i] < e && st->arrive && p->gposts[i] < st->arrive) st->arrive = p->gposts[i];
    return i;
}

/* The message the step's first data send may answer (analyze_join.c verbs_stragglers decides whether it did): the last
 * data-carrying receive completion polled after the rank's previous data send and before this one, in this step or
 * the one before (a responder whose last send completes late polls the next request while it still waits for that
 * completion, before its next step's mark). Receive completions sorted by time; fs: the free sends by post. */
static void answer_rc(const struct pass *p, const struct fsend *fs, size_t nfs, struct an_lstep *st)
{
    if (!st->arrive) return;
    size_t lo = 0, hi = nfs; /* the first send posted at or after the arrival */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (fs[mid].post < st->arrive) lo = mid + 1;
        else hi = mid;
    }
    uint64_t prev = lo ? fs[lo - 1].post : 0;
    lo = 0, hi = p->nrwc; /* the first receive completion at or after the arrival */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (p->rwc[mid].ts < st->arrive) lo = mid + 1;
        else hi = mid;
    }
    for (size_t j = lo; j > 0 && p->rwc[j - 1].ts > prev && !st->answer_rc; j--)
        if (p->rwc[j - 1].bytes > 0) {
            st->answer_rc = p->rwc[j - 1].ts;
            st->answer_aux = p->rwc[j - 1].aux;
            st->answer_qp = p->rwc[j - 1].qp;
            st->answer_blocked = p->rwc[j - 1].blocked;
            st->answer_evwait = p->rwc[j - 1].evwait;
        }
}

static int cmp_qsend(const void *x, const void *y)
{
    const struct an_qsend *a = x, *b = y;
    if (a->qp != b->qp) return a->qp < b->qp ? -1 : 1;
    if (a->dqp != b->dqp) return a->dqp < b->dqp ? -1 : 1;
    return a->post < b->post ? -1 : a->post > b->post;
}
/* The rank's message runs (analyze_net.c complete) outside collectives, sorted by (qp, dqp, post): the join finds in
 * them the send whose message a receive completion on another rank polled (analyze_join.c msg_sent). */
static void qsends(struct pass *p)
{
    struct an_rank *r = p->r;
    size_t n = 0;
    for (size_t i = 0; i < r->nqsends; i++)
        if (coll_at(p->colls, p->ncolls, r->qsends[i].post) < 0) r->qsends[n++] = r->qsends[i];
    r->nqsends = n;
    an_sort(r->qsends, r->nqsends, sizeof *r->qsends, cmp_qsend);
}

static void attribute(struct pass *p, const struct srange *steps, size_t nsteps, struct ivec *free_net,
                      double rate_bpns)
{
    struct an_rank *r = p->r;
    struct ivec K = {0}, tmp = {0}, Kx = {0};
    for (size_t i = 0; i < p->ncolls; i++) iv_add(&K, p->colls[i].kstart, p->colls[i].kend);
    iv_normalize(&K);
    /* free sends sorted by post, for bytes, latency, first post and busy intervals per step */
    size_t nfs = 0, fscap = 0;
    struct fsend *fs = free_sends(p, rate_bpns, &nfs, &fscap);
    qsends(p);
    r->lsteps = rs_xcalloc(nsteps ? nsteps : 1, sizeof *r->lsteps, "analyze_local lsteps");
    r->nlsteps = nsteps;
    size_t ci = 0, gpi = 0;
    an_sort(p->gposts, p->ngposts, sizeof *p->gposts, cmp_u64_asc);
    an_sort(p->rwc, p->nrwc, sizeof *p->rwc, cmp_tsb);
    for (size_t k = 0; k < nsteps; k++) {
        uint64_t s = steps[k].a, e = steps[k].b;
        struct an_lstep *st = &r->lsteps[k];
        st->id = steps[k].id >= 0 ? steps[k].id : (int64_t)k;
        st->start = s;
        st->end = e;
        if (e <= s) continue;
        uint64_t comp = iv_cover(&p->compute, s, e);
        const struct ivec *m1[] = {&p->compute};
        iv_clip_minus(&K, s, e, m1, 1, &Kx);
        uint64_t kexp = iv_total(&Kx);
        /* collectives starting in this step take their exposed parts */
        while (ci < p->ncolls && p->colls[ci].kstart < s) ci++;
        uint64_t claimed = 0;
        for (size_t j = ci; j < p->ncolls && p->colls[j].kstart < e; j++) {
            struct an_lcoll *c = &p->colls[j];
            c->step = (int32_t)k;
            uint64_t a = c->kstart > claimed ? c->kstart : claimed;
            c->nexp = 0;
            for (size_t q = 0; q < Kx.n; q++) {
                uint64_t x = Kx.v[q].a > a ? Kx.v[q].a : a, y = Kx.v[q].b < c->kend ? Kx.v[q].b : c->kend;
                if (y <= x) continue;
                if (c->nexp < AN_EXP) c->exp[c->nexp++] = (struct iv){x, y};
                else c->exp[AN_EXP - 1].b = y; /* rare: fold the rest into the last part */
            }
            if (c->kend > claimed) claimed = c->kend;
        }
        const struct ivec *m2[] = {&p->compute, &K};
        iv_clip_minus(free_net, s, e, m2, 2, &tmp);
        uint64_t fbusy = iv_total(&tmp);
        step_sends(st, fs, nfs, s, e);
        gpi = first_gpost(p, gpi, s, e, st);
        answer_rc(p, fs, nfs, st);
        uint64_t qi; /* (a lookup: a QP seen only in receive completions gets no record) */
        if (st->answer_rc && hm_get(&p->qpmap, st->answer_qp, &qi)) st->answer_dqp = p->qps[qi].acc.dest_qpn;
        const struct ivec *m3[] = {&p->compute, &K, free_net};
        iv_clip_minus(&p->h2d, s, e, m3, 3, &tmp);
        uint64_t h2d = iv_total(&tmp);
        const struct ivec *m4[] = {&p->compute, &K, free_net, &p->h2d};
        iv_clip_minus(&p->other, s, e, m4, 4, &tmp);
        uint64_t oth = iv_total(&tmp);
        uint64_t used = comp + kexp + fbusy + h2d + oth, len = e - s;
        st->t[RS_CAT_COMPUTE] = comp;
        st->coll_exposed = kexp;
        st->free_busy = fbusy;
        st->t[RS_CAT_H2D] = h2d;
        st->t[RS_CAT_OTHER] = oth;
        if (used < len) {
            uint64_t rest = len - used, idle = rest;
            if (p->kwin_seen) { /* sampled kernels: idle only where kernel tracing was on */
                const struct ivec *m5[] = {&p->compute, &K, free_net, &p->h2d, &p->other};
                iv_clip_minus(&p->kwin, s, e, m5, 5, &tmp);
                idle = iv_total(&tmp);
                if (idle > rest) idle = rest;
                r->untraced_ns += rest - idle;
            }
            st->t[r->has_gpu ? RS_CAT_IDLE : RS_CAT_OTHER] += idle;
            st->t[RS_CAT_OTHER] += rest - idle;
        }
        r->steps_ns += len;
    }
    free(fs);
    iv_free(&K);
    iv_free(&Kx);
    iv_free(&tmp);
}

static void host_checks(struct pass *p);

/* NCCL's transport on this rank, from what the trace holds: the profiler plugin's net events name the net
 * plugin (NET_IB / NET_SOCK); proxy ops exist only for network transports (P2P/NVLink and SHM move data
 * from the GPU kernels without the proxy); the communicator's nNodes (plugin init) says whether any peer is
 * on another node; without net events, verbs traffic means IB and none (or NCCL_NET=Socket,
 * NCCL_IB_DISABLE=1) means Socket. Never from host names (containers on one node differ; NCCL_HOSTID can
 * force ranks of one host through NET). */
/* From NCCL's own connection log (NCCL_TRANSPORT events): the transports by name, network first. */
static int transport_from_log(struct pass *p)
{
    static const char *const names[8] = {"other", "P2P", "SHM", "NET/IB", "NET/Socket", "NET", "CollNet", "NVLS"};
    static const int order[8] = {3, 4, 5, 6, 7, 1, 2, 0};
    struct an_rank *r = p->r;
    if (!p->conn_mask) return 0;
    size_t l = 0;
    for (int i = 0; i < 8; i++)
        if (p->conn_mask & 1u << order[i] && l < sizeof r->out.transport)
            l += (size_t)snprintf(r->out.transport + l, sizeof r->out.transport - l, "%s%s", l ? " + " : "",
                                  names[order[i]]);
    r->net_only = !(p->conn_mask & (1u << 1 | 1u << 2 | 1u << 7)) && (p->conn_mask & (7u << 3));
    /* every NET/IB connection with GPUDirect RDMA, none, or some (e.g. receives with it, sends without) */
    r->gdr = !p->ib_conn ? -1 : p->gdr_conn == p->ib_conn ? 1 : p->gdr_conn ? 2 : 0;
    snprintf(r->out.transport_why, sizeof r->out.transport_why,
             "NCCL's log: %llu connections (%s%s), %llu with GPUDirect RDMA; %llu proxy ops, %llu verbs WRs",
             (unsigned long long)p->nconn, p->conn_via[0] ? "e.g. via " : "", p->conn_via[0] ? p->conn_via : "P2P/SHM",
             (unsigned long long)p->gdr_conn, (unsigned long long)p->proxy_ops, (unsigned long long)p->posts);
    return 1;
}

static void an_transport(struct pass *p)
{
    struct an_rank *r = p->r;
    r->gdr = -1;
    if (transport_from_log(p)) return;
    int32_t nnodes = 0, nranks = 0;
    for (size_t i = 0; i < p->ncomms; i++)
        if (p->comms[i].nranks > 1 && p->comms[i].nnodes > nnodes) {
            nnodes = p->comms[i].nnodes;
            nranks = p->comms[i].nranks;
        }
    if (!p->ncolls && !p->proxy_ops) return;
    const char *net = p->net_ib_ev        ? "NET/IB"
                      : p->net_sock_ev    ? "NET/Socket"
                      : p->posts          ? "NET/IB"
                      : p->verbs_captured ? "NET/Socket"
                                          : "NET";
    const char *why = p->net_ib_ev         ? "NCCL net plugin IB events"
                      : p->net_sock_ev     ? "NCCL net plugin socket events"
                      : p->posts           ? "verbs work requests recorded"
                      : !p->verbs_captured ? "verbs not captured (RAILSCOPE_EVENTS): IB or Socket cannot be told"
                      : p->env_socket      ? "NCCL_NET=Socket or NCCL_IB_DISABLE=1 and no verbs work requests recorded"
                                           : "no verbs work requests recorded while verbs were captured";
    int intra_too = nnodes > 1 && nranks > nnodes;
    if (p->proxy_ops || nnodes > 1)
        snprintf(r->out.transport, sizeof r->out.transport, "%s%s", net, intra_too ? " + P2P/SHM" : "");
    else if (nnodes == 1 || (p->prof_mask & 8)) snprintf(r->out.transport, sizeof r->out.transport, "P2P/SHM");
    else return; /* API records only: nothing says */
    char comm[64] = "";
    if (nnodes > 0) snprintf(comm, sizeof comm, "; communicator of %d ranks on %d nodes", nranks, nnodes);
    snprintf(r->out.transport_why, sizeof r->out.transport_why,
             "%llu NCCL proxy ops, %llu net plugin events (IB %llu, socket %llu), %llu verbs WRs%s%s%s",
             (unsigned long long)p->proxy_ops, (unsigned long long)(p->net_ib_ev + p->net_sock_ev),
             (unsigned long long)p->net_ib_ev, (unsigned long long)p->net_sock_ev, (unsigned long long)p->posts, comm,
             p->proxy_ops || nnodes > 1 ? "; network: " : "", p->proxy_ops || nnodes > 1 ? why : "");
}

/* NCCL_SOCKET_IFNAME's rule for one interface name: a comma list of prefixes, exact names after a leading '=', and
 * names to leave out after a leading '^' (NCCL's own syntax). Empty or absent: every interface. */
static int socket_ifname_ok(const char *spec, const char *ifn)
{
    if (!spec || !*spec) return 1;
    int exclude = *spec == '^', exact = 0;
    spec += exclude;
    if (*spec == '=') exact = 1, spec++;
    int hit = 0;
    for (const char *t = spec; *t && !hit;) {
        size_t n = strcspn(t, ",");
        if (n) hit = exact ? strlen(ifn) == n && !strncmp(ifn, t, n) : !strncmp(ifn, t, n);
        t += n + (t[n] == ',');
    }
    return exclude ? !hit : hit;
}

/* A rank whose NCCL traffic goes through NET/Socket and that recorded no IB port rate: its link is an Ethernet
 * port, and the host facts have each netdev's speed (Mb/s; -1 where the driver does not say, as virtio). The
 * fastest port that is up and that NCCL_SOCKET_IFNAME allows (loopback never), as NCCL would use the data NIC. */
static void socket_link_rate(struct pass *p)
{
    struct an_rank *r = p->r;
    if (r->link_gbps > 0 || !strstr(r->out.transport, "NET/Socket") || !p->facts.n) return;
    char ifs[32][RS_FACT_NAME];
    int n = rs_facts_children(&p->facts, ifs, 32, "net/");
    const char *spec = rs_facts_get(&p->facts, "env/NCCL_SOCKET_IFNAME");
    for (int i = 0; i < n; i++) {
        const char *up = rs_facts_get(&p->facts, "net/%s/operstate", ifs[i]);
        const char *sp = rs_facts_get(&p->facts, "net/%s/speed", ifs[i]);
        if (!strcmp(ifs[i], "lo") || !up || strcmp(up, "up") || !sp || !socket_ifname_ok(spec, ifs[i])) continue;
        double g = atof(sp) / 1000; /* Mb/s */
        if (g > r->link_gbps && g < 1e5) {
            r->link_gbps = g;
            snprintf(r->link_fact, sizeof r->link_fact, "host fact net/%.24s/speed", ifs[i]);
        }
    }
}

struct an_noprof an_noprof_sum(const struct an_rank *R, size_t n)
{
    struct an_noprof s = {0};
    for (size_t i = 0; i < n; i++) {
        if (!R[i].coll_source[0]) continue;
        s.ranks++;
        s.calls += R[i].ncolls;
        s.timed += R[i].ncalls_timed;
        if (R[i].noprof_why[0] && !s.why) s.why = R[i].noprof_why;
        s.nwhy += R[i].noprof_why[0] && !strcmp(R[i].noprof_why, s.why);
    }
    return s;
}

/* Why a rank that called NCCL has no profiler records, where its facts say: another profiler plugin in its start
 * environment, or an NCCL older than the plugin tables the library exports (ncclProfiler_v1: NCCL 2.23). */
static void noprof_why(struct pass *p)
{
    const char *pl = rs_facts_get(&p->facts, "env/NCCL_PROFILER_PLUGIN"), *v = rs_facts_get(&p->facts, "nccl/version");
    const char *cuda = rs_facts_get(&p->facts, "env/CUDA_INJECTION64_PATH"); /* record sets both to the library */
    const char *base = pl ? strrchr(pl, '/') : NULL;
    int major = 0, minor = 0;
    if (pl && !strcasecmp(pl, "none")) /* NCCL's own switch: no plugin loaded (src/plugin/profiler.cc) */
        snprintf(p->r->noprof_why, sizeof p->r->noprof_why, "NCCL_PROFILER_PLUGIN=none turned NCCL's profiler off");
    else if (pl && *pl && strncmp(base ? base + 1 : pl, "librailscope", 12) && !(cuda && !strcmp(cuda, pl)))
        snprintf(p->r->noprof_why, sizeof p->r->noprof_why, "NCCL_PROFILER_PLUGIN names another plugin, %.60s", pl);
    else if (v && sscanf(v, "%d.%d", &major, &minor) == 2 && (major < 2 || (major == 2 && minor < 23)))
        snprintf(p->r->noprof_why, sizeof p->r->noprof_why, "NCCL %.16s: the profiler plugin needs NCCL 2.23 or later",
                 v);
}

_Static_assert(sizeof(struct an_lstep) + sizeof(struct rs_an_step) + sizeof(struct rs_an_runstep) <= AN_STEP_BYTES,
               "AN_STEP_BYTES: what a step costs after the pass");
_Static_assert(sizeof(struct an_lcoll) + 72 <= AN_COLL_BYTES, "AN_COLL_BYTES: what a collective costs after the pass");
void an_local(struct pass *p, double link_gbps_hint)
{
    struct an_rank *r = p->r;
    double gbps = link_gbps_hint > 0 ? link_gbps_hint : r->link_gbps > 0 ? r->link_gbps : 100;
    double rate_bpns = gbps / 8.0;
    if (p->nanchors) {
        qsort(p->anchors, p->nanchors, sizeof *p->anchors, cmp_i64);
        r->anchor_offset = p->anchors[p->nanchors / 2];
        r->have_anchor = 1;
    }
    if (p->kwin_open) { /* a window still open at the end of the trace */
        iv_add(&p->kwin, p->kwin_open, p->last_ts + 1);
        p->kwin_open = 0;
    }
    iv_normalize(&p->kwin);
    iv_normalize(&p->ktail);
    iv_normalize(&p->compute);
    iv_normalize(&p->h2d);
    iv_normalize(&p->other);
    if (!p->ncolls && p->ncalls) { /* no profiler plugin: the API calls are the collectives */
        free(p->colls);
        p->colls = p->calls;
        p->ncolls = p->ncalls;
        p->collcap = p->callcap;
        p->calls = NULL;
        p->ncalls = 0;
        snprintf(r->coll_source, sizeof r->coll_source, "NCCL API calls");
        noprof_why(p);
    }
    attach_proxy(p);
    match_kernels(p);
    if (r->coll_source[0])
        for (size_t i = 0; i < p->ncolls; i++) r->ncalls_timed += p->colls[i].timed != 0;
    struct ivec free_net = {0};
    small_messages_are_data(p);
    r->base_lat = base_latency(p, rate_bpns);
    account_wrs(p, &free_net, rate_bpns);
    find_bounces(p);
    rank_round_trips(p);
    struct srange *steps = NULL;
    size_t nsteps = 0;
    detect_steps(p, &free_net, &steps, &nsteps);
    /* the memory budget: the steps that fit in what the pass left of it (and of the file's share of the run
     * with more files than passes at once), at least 1024 or what the share holds (docs/report.md) */
    uint64_t left = r->budget > an_held ? r->budget - an_held : 0;
    if (r->share < r->budget) {
        uint64_t kept = p->ncolls * (sizeof(struct an_lcoll) + AN_COLL_BYTES);
        uint64_t sl = r->share > kept ? r->share - kept : 0;
        if (sl < left) left = sl;
    }
    uint64_t room = left / AN_STEP_BYTES, floor = r->share / AN_STEP_BYTES < 1024 ? r->share / AN_STEP_BYTES : 1024;
    if (room < floor) room = floor;
    if (nsteps > room) {
        r->cut_steps = nsteps - room;
        nsteps = (size_t)room;
    }
    attribute(p, steps, nsteps, &free_net, rate_bpns);
    an_sampling_extrapolate(p); /* sampled GPU activity (analyze_sampling.c, H_GPU) */
    free(steps);
    iv_free(&free_net);
    /* keep: collectives, QPs, GPUDirect counters */
    r->colls = p->colls;
    r->ncolls = p->ncolls;
    p->colls = NULL;
    if (r->colls && r->ncolls) { /* kept until the join: give back the growth slack (~1/3 on average) */
        struct an_lcoll *c = rs_xrealloc(r->colls, r->ncolls * sizeof *c, "analyze_local c");
        if (c) r->colls = c;
    }
    r->qps = rs_xcalloc(p->nqps ? p->nqps : 1, sizeof *r->qps, "analyze_local qps");
    r->nqps = p->nqps;
    for (size_t i = 0; i < p->nqps; i++) r->qps[i] = p->qps[i].acc;
    host_checks(p);
    an_transport(p);
    socket_link_rate(p);
    for (size_t i = 0; i < r->ncolls && p->nconnlog; i++) {
        uint64_t k;
        if (hm_get(&p->connmap, r->colls[i].comm_hash, &k)) r->colls[i].conn_mask = p->connlog[k].mask;
    }
    r->lost_wrs = p->lost_wrs;
    memcpy(r->out.gd.mr_bytes, p->mr_bytes, sizeof p->mr_bytes);
    memcpy(r->out.gd.posted_bytes, p->posted, sizeof p->posted);
    r->out.gd.dmabuf_mrs = p->dmabuf_mrs;
    r->out.gd.posts = p->posts;
    r->net_unmeasured = p->proxy_ops && !p->proxy_steps && !p->posts;
    for (size_t i = 0; i < p->nqps; i++) {
        r->out.gd.bounce_d2h += p->qps[i].acc.bounce_d2h;
        r->out.gd.bounce_h2d += p->qps[i].acc.bounce_h2d;
    }
}

/* Doctor's checks on the rank's host-fact snapshot: keep the WARN/FAIL verdicts. The checks depend on the
 * facts alone and every rank of a host records the same snapshot, so the last few distinct snapshots and
 * their verdicts are kept (shared by the workers): a 1024-rank run checks each host once, not each rank. */
#define CHK_CACHE 4
static struct {
    char *facts; /* sorted key\0value\0... */
    size_t len;
    struct rs_an_hostcheck *v; /* host left empty */
    size_t n;
} chk_cache[CHK_CACHE];
static unsigned chk_next;
static pthread_mutex_t chk_mu = PTHREAD_MUTEX_INITIALIZER;

static void host_checks(struct pass *p)
{
    if (!p->facts.n) return;
    rs_facts_sort(&p->facts); /* as rs_doctor_check does first: the snapshot in canonical order */
    size_t len = 0;
    for (size_t i = 0; i < p->facts.n; i++) len += strlen(p->facts.v[i].key) + strlen(p->facts.v[i].value) + 2;
    char *flat = rs_xmalloc(len ? len : 1, "analyze_local flat");
    if (!flat) {
        fprintf(stderr, "railscope: out of memory\n");
        exit(2);
    }
    char *o = flat;
    for (size_t i = 0; i < p->facts.n; i++) {
        o = stpcpy(o, p->facts.v[i].key) + 1;
        o = stpcpy(o, p->facts.v[i].value) + 1;
    }
    struct rs_an_hostcheck *res = NULL;
    size_t nres = 0, cap = 0;
    int hit = 0;
    pthread_mutex_lock(&chk_mu);
    for (int k = 0; k < CHK_CACHE && !hit; k++)
        if (chk_cache[k].facts && chk_cache[k].len == len && !memcmp(chk_cache[k].facts, flat, len)) {
            hit = 1;
            nres = cap = chk_cache[k].n;
            res = rs_xmalloc((cap ? cap : 1) * sizeof *res, "analyze_local res");
            if (!res) {
                fprintf(stderr, "railscope: out of memory\n");
                exit(2);
            }
            if (nres) memcpy(res, chk_cache[k].v, nres * sizeof *res);
        }
    pthread_mutex_unlock(&chk_mu);
    if (!hit) {
        struct rs_verdicts v = {0};
        rs_doctor_check(&p->facts, &v);
        for (size_t i = 0; i < v.n; i++) {
            if (v.v[i].level != RS_WARN && v.v[i].level != RS_FAIL) continue;
            struct rs_an_hostcheck *c = AN_PUSH(res, nres, cap);
            memset(c, 0, sizeof *c);
            c->fail = v.v[i].level == RS_FAIL;
            snprintf(c->check, sizeof c->check, "%s", v.v[i].check);
            snprintf(c->subject, sizeof c->subject, "%s", v.v[i].subject);
            snprintf(c->msg, sizeof c->msg, "%.319s", v.v[i].msg);
            snprintf(c->fix, sizeof c->fix, "%.319s", v.v[i].fix);
        }
        rs_verdicts_free(&v);
        struct rs_an_hostcheck *keep = rs_xmalloc((nres ? nres : 1) * sizeof *keep, "analyze_local keep");
        if (keep) {
            if (nres) memcpy(keep, res, nres * sizeof *keep);
            pthread_mutex_lock(&chk_mu);
            unsigned k = chk_next++ % CHK_CACHE;
            free(chk_cache[k].facts);
            free(chk_cache[k].v);
            chk_cache[k].facts = flat;
            chk_cache[k].len = len;
            chk_cache[k].v = keep;
            chk_cache[k].n = nres;
            flat = NULL;
            pthread_mutex_unlock(&chk_mu);
        }
    }
    free(flat);
    for (size_t i = 0; i < nres; i++) {
        const struct rs_an_hostcheck *x = &res[i];
        size_t l1 = strlen(x->check) + 1, l2 = strlen(x->subject) + 1, l3 = strlen(x->msg) + 1, l4 = strlen(x->fix) + 1;
        char *b = rs_xmalloc(l1 + l2 + l3 + l4, "analyze_local b");
        if (!b) {
            fprintf(stderr, "railscope: out of memory\n");
            exit(2);
        }
        memcpy(b, x->check, l1);
        memcpy(b + l1, x->subject, l2);
        memcpy(b + l1 + l2, x->msg, l3);
        memcpy(b + l1 + l2 + l3, x->fix, l4);
        struct an_chk *c = AN_PUSH(p->r->checks, p->r->nchecks, p->chkcap);
        c->s = b;
        c->fail = x->fail;
    }
    free(res);
}

void an_chk_expand(const struct an_chk *c, const char *host, struct rs_an_hostcheck *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->host, sizeof out->host, "%s", host);
    out->fail = c->fail;
    const char *q = c->s; /* each string fits: it was cut to its field when the check was made */
    strcpy(out->check, q);
    q += strlen(q) + 1;
    strcpy(out->subject, q);
    q += strlen(q) + 1;
    strcpy(out->msg, q);
    q += strlen(q) + 1;
    strcpy(out->fix, q);
}

/* Ready p for the next rank file of the same worker: what belongs to one file is freed or cleared, the
 * pass's big arrays keep their memory (no regrowth by realloc, no fresh pages to fault in, no cold cache
 * lines for every file; the worker's peak memory is what its largest file needed, as before). Hash maps
 * and the kernel-class cache are cleared, so they are kept only while small. */
static void hm_recycle(struct hmap *dst, struct hmap *src)
{
    memset(dst, 0, sizeof *dst);
    if (src->cap && src->cap <= 65536) {
        memset(src->s, 0xff, src->cap * sizeof *src->s);
        dst->s = src->s;
        dst->cap = src->cap;
    } else free(src->s);
}
void an_pass_recycle(struct pass *p)
{
    struct pass k = *p;
    rs_facts_free(&p->facts);
    free(p->colls);
    for (size_t i = 0; i < p->naccs; i++) {
        free(p->accs[i].runs);
        free(p->accs[i].ends);
        free(p->accs[i].sidx);
    }
    for (size_t i = 0; i < p->nqps; i++) free(p->qps[i].pend);
    for (size_t i = 0; i < p->nnv; i++) free(p->nv[i].v);
    memset(p, 0, sizeof *p);
#define KEEP(a, cap) (p->a = k.a, p->cap = k.a ? k.cap : 0) /* (a moved-out array may leave its cap) */
    KEEP(treeops, treeopcap);
    KEEP(comms, commcap);
    KEEP(connlog, connlogcap);
    KEEP(gposts, gpostcap);
    KEEP(compute.v, compute.cap);
    KEEP(nk.v, nk.cap);
    KEEP(h2d.v, h2d.cap);
    KEEP(other.v, other.cap);
    KEEP(kwin.v, kwin.cap);
    KEEP(ktail.v, ktail.cap);
    KEEP(copies, copycap);
    KEEP(calls, callcap);
    KEEP(accs, acccap);
    KEEP(freeacc, freecap);
    KEEP(pruns, pruncap);
    KEEP(wrs, wrcap);
    KEEP(rwc, rwccap);
    KEEP(cqp, cqpcap);
    KEEP(qps, qpcap);
    KEEP(nv, nvcap);
    KEEP(starts, startcap);
    KEEP(ranges, rangecap);
    KEEP(marks, markcap);
    KEEP(anchors, anchorcap);
#undef KEEP
    if (k.kcls && k.kcls_n <= 65536) {
        memset(k.kcls, 0, k.kcls_n);
        p->kcls = k.kcls;
        p->kcls_n = k.kcls_n;
    } else free(k.kcls);
    hm_recycle(&p->collmap, &k.collmap);
    hm_recycle(&p->sendwait, &k.sendwait);
    hm_recycle(&p->qpmap, &k.qpmap);
    hm_recycle(&p->nvstart, &k.nvstart);
    hm_recycle(&p->nvmap, &k.nvmap);
    hm_recycle(&p->accmap, &k.accmap);
    hm_recycle(&p->commmap, &k.commmap);
    hm_recycle(&p->connmap, &k.connmap);
    hm_recycle(&p->cqpmap, &k.cqpmap);
    hm2_free(&k.pendmap);
}

void an_pass_free(struct pass *p)
{
    free(p->treeops);
    free(p->comms);
    free(p->connlog);
    free(p->gposts);
    rs_facts_free(&p->facts);
    free(p->kcls);
    iv_free(&p->compute);
    iv_free(&p->nk);
    iv_free(&p->h2d);
    iv_free(&p->other);
    iv_free(&p->kwin);
    iv_free(&p->ktail);
    free(p->copies);
    free(p->colls);
    free(p->calls);
    hm_free(&p->collmap);
    hm_free(&p->sendwait);
    hm_free(&p->qpmap);
    hm_free(&p->nvstart);
    hm_free(&p->nvmap);
    hm_free(&p->commmap);
    hm_free(&p->connmap);
    hm2_free(&p->pendmap);
    for (size_t i = 0; i < p->naccs; i++) {
        free(p->accs[i].runs);
        free(p->accs[i].ends);
        free(p->accs[i].sidx);
    }
    free(p->accs);
    hm_free(&p->accmap);
    free(p->freeacc);
    free(p->pruns);
    free(p->wrs);
    free(p->rwc);
    free(p->cqp);
    hm_free(&p->cqpmap);
    for (size_t i = 0; i < p->nqps; i++) free(p->qps[i].pend);
    free(p->qps);
    for (size_t i = 0; i < p->nnv; i++) free(p->nv[i].v);
    free(p->nv);
    free(p->starts);
    free(p->ranges);
    free(p->marks);
    free(p->anchors);
}
