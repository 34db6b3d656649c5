/* A small hash map u64 -> u64 for the analyzer's per-rank pass: open addressing, linear probing,
 * power-of-two capacity, backward-shift deletion (no tombstones). Keys come from the trace (hostile), so
 * the one key value that marks a free slot is kept outside the table rather than refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_local.h"
#include "util/xalloc.h"

#define HM_EMPTY 0xffffffffffffffffull

static inline size_t hm_home(uint64_t k, size_t mask) { return (size_t)(k * 0x9e3779b97f4a7c15ull >> 20) & mask; }

static void hm_grow(struct hmap *m)
{
    struct hm_slot *o = m->s;
    size_t ocap = m->cap;
    m->cap = ocap ? ocap * 2 : 64;
    m->s = rs_xmalloc(m->cap * sizeof *m->s, "analyze_hmap s");
    if (!m->s) {
        fprintf(stderr, "railscope: out of memory\n");
        exit(2);
    }
    memset(m->s, 0xff, m->cap * sizeof *m->s);
    an_held += (m->cap - ocap) * sizeof *m->s;
    size_t mask = m->cap - 1;
    for (size_t i = 0; i < ocap; i++)
        if (o[i].k != HM_EMPTY) {
            size_t j = hm_home(o[i].k, mask);
            while (m->s[j].k != HM_EMPTY) j = (j + 1) & mask;
            m->s[j] = o[i];
        }
    free(o);
}

void hm_put(struct hmap *m, uint64_t k, uint64_t v)
{
    if (k == HM_EMPTY) {
        m->zero_used = 1;
        m->zero_v = v;
        return;
    }
    if ((m->n + 1) * 2 > m->cap) hm_grow(m);
    size_t mask = m->cap - 1, i = hm_home(k, mask);
    while (m->s[i].k != HM_EMPTY && m->s[i].k != k) i = (i + 1) & mask;
    if (m->s[i].k == HM_EMPTY) m->n++;
    m->s[i].k = k;
    m->s[i].v = v;
}

int hm_get(const struct hmap *m, uint64_t k, uint64_t *v)
{
    if (k == HM_EMPTY) {
        if (m->zero_used) *v = m->zero_v;
        return m->zero_used;
    }
    if (!m->cap) return 0;
    size_t mask = m->cap - 1, i = hm_home(k, mask);
    for (; m->s[i].k != HM_EMPTY; i = (i + 1) & mask)
        if (m->s[i].k == k) {
            *v = m->s[i].v;
            return 1;
        }
    return 0;
}

/* Remove k (backward-shift deletion keeps probe chains intact without tombstones). */
void hm_del(struct hmap *m, uint64_t k)
{
    if (k == HM_EMPTY) {
        m->zero_used = 0;
        return;
    }
    if (!m->cap) return;
    size_t mask = m->cap - 1, i = hm_home(k, mask);
    while (m->s[i].k != HM_EMPTY && m->s[i].k != k) i = (i + 1) & mask;
    if (m->s[i].k == HM_EMPTY) return;
    m->s[i].k = HM_EMPTY;
    m->n--;
    for (size_t j = (i + 1) & mask; m->s[j].k != HM_EMPTY; j = (j + 1) & mask) {
        size_t home = hm_home(m->s[j].k, mask);
        /* move j back into the hole i if its home is not in (i, j] cyclically */
        int between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            m->s[i] = m->s[j];
            m->s[j].k = HM_EMPTY;
            i = j;
        }
    }
}

void hm_free(struct hmap *m)
{
    free(m->s);
    memset(m, 0, sizeof *m);
}
