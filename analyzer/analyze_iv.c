/* Growable arrays and interval sets for the analyzer. Interval sets are kept as sorted, merged arrays so
 * that coverage queries are a binary search plus a short walk. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_int.h"
#include "util/xalloc.h"

__thread uint64_t an_held, an_budget;

void *an_grow(void *p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return p;
    size_t nc = *cap ? *cap * 2 : 16;
    while (nc < need) nc *= 2;
    /* near the budget, grow by 1/8: a doubling would overshoot it by up to the array's size */
    if (an_budget && an_held + (nc - *cap) * elem > an_budget && need + need / 8 + 16 < nc) nc = need + need / 8 + 16;
    void *q = rs_xrealloc(p, nc * elem, "analyze_iv q");
    if (!q) {
        fprintf(stderr, "railscope: out of memory\n");
        exit(2);
    }
    an_held += (nc - *cap) * elem;
    *cap = nc;
    return q;
}

void iv_push(struct ivec *s, uint64_t a, uint64_t b)
{
    struct iv *x = AN_PUSH(s->v, s->n, s->cap);
    x->a = a;
    x->b = b;
}

static int iv_cmp(const void *x, const void *y)
{
    const struct iv *p = x, *q = y;
    return p->a < q->a ? -1 : p->a > q->a;
}

void iv_normalize(struct ivec *s)
{
    if (s->n < 2) return;
    /* Most producers append in time order: skip the sort when already sorted. */
    int sorted = 1;
    for (size_t i = 1; i < s->n && sorted; i++) sorted = s->v[i].a >= s->v[i - 1].a;
    if (!sorted) qsort(s->v, s->n, sizeof *s->v, iv_cmp);
    size_t o = 0;
    for (size_t i = 1; i < s->n; i++) {
        if (s->v[i].a <= s->v[o].b) {
            if (s->v[i].b > s->v[o].b) s->v[o].b = s->v[i].b;
        } else s->v[++o] = s->v[i];
    }
    s->n = o + 1;
}

void iv_free(struct ivec *s)
{
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* First interval whose end is after t. */
static size_t iv_first(const struct ivec *s, uint64_t t)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (s->v[mid].b <= t) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

uint64_t iv_cover(const struct ivec *s, uint64_t a, uint64_t b)
{
    uint64_t sum = 0;
    for (size_t i = iv_first(s, a); i < s->n && s->v[i].a < b; i++) {
        uint64_t x = s->v[i].a > a ? s->v[i].a : a, y = s->v[i].b < b ? s->v[i].b : b;
        if (y > x) sum += y - x;
    }
    return sum;
}

uint64_t iv_total(const struct ivec *s)
{
    uint64_t t = 0;
    for (size_t i = 0; i < s->n; i++) t += s->v[i].b - s->v[i].a;
    return t;
}

/* Subtract one normalized set from a normalized set (both small after clipping). */
static void iv_sub(struct ivec *io, const struct ivec *m)
{
    struct ivec out = {0};
    for (size_t i = 0; i < io->n; i++) {
        uint64_t a = io->v[i].a, b = io->v[i].b;
        for (size_t j = iv_first(m, a); j < m->n && m->v[j].a < b && a < b; j++) {
            if (m->v[j].a > a) iv_add(&out, a, m->v[j].a);
            if (m->v[j].b > a) a = m->v[j].b;
        }
        if (a < b) iv_add(&out, a, b);
    }
    free(io->v);
    *io = out;
}

void iv_clip_minus(const struct ivec *s, uint64_t a, uint64_t b, const struct ivec *const *minus, int nminus,
                   struct ivec *out)
{
    out->n = 0;
    for (size_t i = iv_first(s, a); i < s->n && s->v[i].a < b; i++) {
        uint64_t x = s->v[i].a > a ? s->v[i].a : a, y = s->v[i].b < b ? s->v[i].b : b;
        iv_add(out, x, y);
    }
    for (int k = 0; k < nminus && out->n; k++) iv_sub(out, minus[k]);
}
