/* The row guard: a thread's row (its lane 0) is shared by groups with lane states of their own: the thread's
 * calls (T), its CUDA runtime/driver calls (C, from CUPTI, seconds late in the file) and, in Kineto output,
 * its NVTX ranges (N, written at their pop). Each group keeps its own slices nested; this file keeps the
 * groups from partially overlapping each other there, for any order and number of slices.
 *
 * Per source, the slices it placed on the row are kept in placement order in a ring: T and C place theirs
 * in start order (lane_for), N in end order (pops), so "the innermost slice around time t" is a binary
 * search plus a walk up a parent link (the slices of one source nest: a laminar family). A slice [s, e] may
 * join the row when no other source's slice has one end inside it and the other outside: the innermost one
 * around s must not end inside, the innermost one around e must not start inside. A slice starting at s or at
 * e counts as around it: trace_processor sorts a track's begins and ends by time only (ties in file order), so
 * of two equal starts the longer must be written first, and a slice must not end where one written before it
 * begins.
 *
 * Memory is bounded (XROW_MAX slices per source). A slice that no later query can reach is forgotten: each
 * source's placements move forward in time (its lane 0's last start, its frontier), and a slice that ends
 * before every other source's frontier can never be around a later query point. When the ring is full of
 * slices still reachable (a source lagging far behind: CUDA calls seconds late, or none seen yet), the oldest
 * quarter is forgotten; a query at a time before the latest end forgotten (lost_q) answers "unknown", and the
 * slice goes to another row as if it overlapped: counted (row_unsure), never a partial overlap.
 *
 * A row whose thread has made no CUDA call yet cannot forget anything (CUPTI's first calls may come from any time
 * before), and most threads never make one (NCCL's, data loaders): 65536 slices each would be 1.5 MB per thread
 * (128 threads of NCCL calls: 200 MB, where the export needed 12 MB before the guard). So the rings of such rows
 * share one budget per process (XROW_ALONE slices): a few threads keep as much as they would alone, many keep a
 * recent window each; the rest is forgotten as above (a late CUDA call reaching back past it moves, counted).
 * A row leaves the budget when its thread's first CUDA call comes (xr_join). */
#include <stdlib.h>
#include <string.h>

#include "export_xlate.h"
#include "util/xalloc.h"

#define XIV_LOST UINT32_MAX /* parent forgotten */

static inline struct xiv *at(const struct xivs *a, uint64_t k) { return &a->v[k & (a->cap - 1)]; }

/* The earliest time a later placement by source `src` can ask about. */
static uint64_t front(const struct xrow *r, int src)
{
    const struct xgroup *g = r->g[src];
    if (g && g->nlanes) return g->lane[0]->last_start;
    if (src == XR_N) /* Kineto: ranges come in time with the thread's calls; elsewhere not on the row */
        return r->kineto ? front(r, XR_T) : UINT64_MAX;
    return 0; /* C: CUPTI's first calls of a thread may come from anywhere before */
}

/* Slices of source src that end by this time can be forgotten. */
static uint64_t gc_front(const struct xrow *r, int src)
{
    uint64_t f = UINT64_MAX;
    for (int y = 0; y < XR_NSRC; y++)
        if (y != src) {
            uint64_t v = front(r, y);
            if (v < f) f = v;
        }
    return f;
}

/* Innermost kept slice I of a around t: I.p <= t < I.q. */
static inline int inner(const struct xivs *a, uint64_t t, const struct xiv **out)
{
    uint64_t lo = a->base, hi = a->n;
    /* A forgotten slice that ended after t may have been around t, inside or outside the kept ones (either order:
     * compaction forgets slices from anywhere in the ring, and a range's push may come before the other sources'
     * frontier when its group is new). Nothing forgotten ends after t otherwise: the kept ones tell all. */
    if (a->lost_q > t) return XR_UNSURE;
    /* nothing kept, all ended by t (the usual answer for a source behind the asker), or all start after t */
    if (lo == hi || t >= a->maxq || (!a->by_end && t < at(a, lo)->p)) return XR_NONE;
    if (!a->by_end) { /* start order: the last slice starting by t, then its ancestors */
        /* galloping back from the newest: queries are mostly near them */
        for (uint64_t step = 1; hi - lo > step && at(a, hi - step)->p > t; step *= 2) hi -= step;
        if (at(a, hi - 1)->p <= t) lo = hi;
        while (lo < hi) {
            uint64_t mid = lo + (hi - lo) / 2;
            if (at(a, mid)->p <= t) lo = mid + 1;
            else hi = mid;
        }
        for (uint64_t k = lo - 1;;) {
            const struct xiv *I = at(a, k);
            if (I->q > t) {
                *out = I;
                return XR_FOUND;
            }
            if (!I->up) return XR_NONE; /* a root: whatever is around t would be one of its ancestors */
            if (I->up == XIV_LOST || I->up > k - a->base) return XR_NONE; /* lost ancestors ended by t */
            k -= I->up;
        }
    }
    /* end order: the first slice ending after t, then its ancestors (placed later, so kept) */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (at(a, mid)->q <= t) lo = mid + 1;
        else hi = mid;
    }
    for (uint64_t k = lo; k < a->n;) {
        const struct xiv *I = at(a, k);
        if (I->p <= t) {
            *out = I;
            return XR_FOUND;
        }
        if (!I->up) break;
        k += I->up;
    }
    return XR_NONE;
}

int xr_check(const struct xrow *r, int src, uint64_t s, uint64_t e, int at_start)
{
    int res = 0;
    for (int y = 0; y < XR_NSRC; y++) {
        const struct xivs *a = &r->s[y];
        const struct xiv *I;
        if (y == src || s >= a->maxq) continue; /* all it ever held ended by s (a source lagging behind) */
        int k = at_start ? inner(a, s, &I) : XR_NONE;
        if (k == XR_FOUND && I->q < e) return 1;
        if (k == XR_UNSURE) res = 2;
        k = inner(a, e, &I);
        if (k == XR_FOUND && I->p > s) return 1;
        if (k == XR_UNSURE) res = 2;
    }
    return res;
}

uint64_t xr_cross(const struct xrow *r, uint64_t t, int *unsure)
{
    uint64_t m = UINT64_MAX;
    for (int y = XR_T; y <= XR_C; y++) {
        const struct xiv *I;
        int k = inner(&r->s[y], t, &I);
        if (k == XR_FOUND && I->q < m) m = I->q;
        if (k == XR_UNSURE) *unsure = 1;
    }
    return m;
}

/* Start order: forget the slices that end by f (their descendants end earlier still, so every kept slice
 * keeps its parent), renumbering into a ring of newcap. */
static void compact(struct xivs *a, uint64_t f, uint32_t newcap)
{
    struct xiv *nv = rs_xmalloc((size_t)newcap * sizeof *nv, "export_row ring");
    uint64_t m = 0;
    for (uint64_t k = a->base; k < a->n; k++) {
        struct xiv *I = at(a, k);
        if (I->q <= f) {
            if (I->q > a->lost_q) a->lost_q = I->q;
            continue;
        }
        struct xiv *J = &nv[m];
        *J = *I;
        if (I->up && I->up != XIV_LOST) {
            if (I->up > k - a->base) J->up = XIV_LOST;
            else J->up = (uint32_t)(m - at(a, k - I->up)->left);
        }
        I->left = (uint32_t)m; /* its new place, for its children (start order does not use left) */
        m++;
    }
    free(a->v);
    a->v = nv;
    a->cap = newcap;
    a->base = 0;
    a->n = m;
}

/* End order: a copy into a ring of newcap (links are relative, so they stay). */
static void regrow(struct xivs *a, uint32_t newcap)
{
    struct xiv *nv = rs_xmalloc((size_t)newcap * sizeof *nv, "export_row ring");
    for (uint64_t k = a->base; k < a->n; k++) nv[k & (newcap - 1)] = *at(a, k);
    free(a->v);
    a->v = nv;
    a->cap = newcap;
}

/* Forget the oldest slices of source y that no query can reach any more. */
static void forget_prefix(struct xrow *r, int y)
{
    struct xivs *a = &r->s[y];
    uint64_t f = gc_front(r, y);
    while (a->base < a->n && at(a, a->base)->q <= f) { /* a child left behind finds its parent lost */
        uint64_t q = at(a, a->base++)->q;
        if (q > a->lost_q) a->lost_q = q;
    }
}

/* May a ring of the row grow by `more` slices? Always once the thread's CUDA calls are in (the limit is XROW_MAX);
 * before, within the process's budget for such rows (see the top). */
static int may_grow(struct xrow *r, uint32_t more)
{
    if (r->g[XR_C]) return 1;
    if (*r->alone + more > XROW_ALONE) return 0;
    *r->alone += more;
    r->alone_held += more;
    return 1;
}

/* Room for one more slice in source src's ring: when it is full, the slices no query can reach are forgotten (a
 * prefix, then for start order the rest, renumbered); when that frees less than half, the ring doubles up to
 * XROW_MAX (or as the budget allows, may_grow), and past that its oldest quarter is forgotten. At least a quarter
 * of a ring of placements between two passes keeps the cost per placement constant. */
static void make_room(struct xrow *r, int src)
{
    struct xivs *a = &r->s[src];
    if (!a->v) {
        a->cap = 8;
        a->v = rs_xmalloc(a->cap * sizeof *a->v, "export_row ring");
        return;
    }
    forget_prefix(r, src);
    if (!a->by_end && a->n - a->base > a->cap / 2) compact(a, gc_front(r, src), a->cap);
    if (a->n - a->base <= a->cap / 2) return;
    if (a->cap < XROW_MAX && may_grow(r, a->cap)) { /* still reachable: more room */
        if (a->by_end) regrow(a, a->cap * 2);
        else compact(a, 0, a->cap * 2);
        return;
    }
    for (uint32_t i = 0; i < a->cap / 4; i++) { /* full: the oldest quarter is forgotten */
        uint64_t q = at(a, a->base++)->q;
        if (q > a->lost_q) a->lost_q = q;
    }
}

/* Start order (T, C): the parent is the nearest of the last slice and its ancestors that holds [p, q]. */
static uint32_t parent_of(const struct xivs *a, uint64_t p, uint64_t q)
{
    if (a->n == a->base) return p >= a->lost_q ? 0 : XIV_LOST;
    for (uint64_t k = a->n - 1;;) {
        const struct xiv *I = at(a, k);
        if (I->q >= q) return (uint32_t)(a->n - k);
        if (!I->up) return 0;
        if (I->up == XIV_LOST || I->up > k - a->base) return p >= a->lost_q ? 0 : XIV_LOST;
        k -= I->up;
    }
}

void xr_add(struct xrow *r, int src, uint64_t p, uint64_t q)
{
    struct xivs *a = &r->s[src];
    if (a->n - a->base >= a->cap || !a->v) make_room(r, src);
    struct xiv v = {p, q, 0, 0};
    if (!a->by_end) v.up = parent_of(a, p, q);
    else if (a->n > a->base) { /* end order: the last roots that start within [p, q] are its children */
        uint64_t k = a->n - 1;
        for (;;) {
            struct xiv *I = at(a, k);
            if (I->p < p) {
                v.left = (uint32_t)(a->n - k);
                break;
            }
            I->up = (uint32_t)(a->n - k);
            if (!I->left || I->left > k - a->base) break;
            k -= I->left;
        }
    }
    *at(a, a->n++) = v;
    if (q > a->maxq) a->maxq = q;
}

void xr_place(struct rs_exp *x, struct xgroup *g, uint64_t s, uint64_t e)
{
    struct xrow *r = g->row ? g->row : xr_new(x, g);
    xr_add(r, g->rsrc, s, e);
    const struct xgroup *ng = r->g[XR_N];
    if (!ng || !ng->nvtx_depth || !ng->pushes) return;
    /* the open ranges whose push it is around (their pop checks those, xl_on_nvtx_pop): pushes are in time order,
     * the latest on top */
    for (int i = ng->nvtx_depth - 1; i >= 0 && ng->pushes[i].ts >= s; i--) {
        struct xpush *P = &ng->pushes[i];
        if (P->ts < e && e < P->min_cross) P->min_cross = e;
    }
}

/* The row leaves the budget of rows without CUDA calls: from now on its slices can be forgotten as the CUDA calls
 * move forward, so its rings are bounded by XROW_MAX alone. */
static void leave_budget(struct xrow *r)
{
    *r->alone -= r->alone_held;
    r->alone_held = 0;
}

void xr_join(struct xrow *r, int src, struct xgroup *g)
{
    r->g[src] = g;
    g->row = r;
    g->rsrc = (uint8_t)src;
    if (src == XR_C) leave_budget(r);
}

struct xrow *xr_new(struct rs_exp *x, struct xgroup *tg)
{
    struct xrow *r = rs_xcalloc(1, sizeof *r, "export_row row");
    r->alone = &x->p.row_alone;
    r->kineto = x->o.format == RS_EXP_KINETO;
    r->s[XR_N].by_end = 1;
    r->g[XR_T] = tg;
    tg->row = r;
    tg->rsrc = XR_T;
    return r;
}

void xr_free(struct xrow *r)
{
    if (!r) return;
    leave_budget(r);
    for (int i = 0; i < XR_NSRC; i++) free(r->s[i].v);
    free(r);
}
