/* A small hash map u64 -> u64 for the analyzer's per-rank pass: open addressing, linear probing,
 * power-of-two capacity, backward-shift deletion (no tombstones). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze_local.h"

void hm_put(struct hmap *m, uint64_t k, uint64_t v)
{
    if ((m->n + 1) * 2 > m->cap) {
        struct hmap o = *m;
        m->cap = o.cap ? o.cap * 2 : 64;
        m->k = calloc(m->cap, sizeof *m->k);
        m->v = calloc(m->cap, sizeof *m->v);
        m->used = calloc(m->cap, 1);
        if (!m->k || !m->v || !m->used) {
            fprintf(stderr, "railscope: out of memory\n");
            exit(2);
        }
        m->n = 0;
        for (size_t i = 0; i < o.cap; i++)
            if (o.used[i])
                hm_put(m, o.k[i], o.v[i]);
        free(o.k);
        free(o.v);
        free(o.used);
    }
    size_t i = (size_t)(k * 0x9e3779b97f4a7c15ull >> 20) & (m->cap - 1);
    while (m->used[i] && m->k[i] != k)
        i = (i + 1) & (m->cap - 1);
    if (!m->used[i])
        m->n++;
    m->used[i] = 1;
    m->k[i] = k;
    m->v[i] = v;
}

int hm_get(const struct hmap *m, uint64_t k, uint64_t *v)
{
    if (!m->cap)
        return 0;
    size_t i = (size_t)(k * 0x9e3779b97f4a7c15ull >> 20) & (m->cap - 1);
    while (m->used[i]) {
        if (m->k[i] == k) {
            *v = m->v[i];
            return 1;
        }
        i = (i + 1) & (m->cap - 1);
    }
    return 0;
}

/* Remove k (backward-shift deletion keeps probe chains intact without tombstones). */
void hm_del(struct hmap *m, uint64_t k)
{
    if (!m->cap)
        return;
    size_t mask = m->cap - 1, i = (size_t)(k * 0x9e3779b97f4a7c15ull >> 20) & mask;
    while (m->used[i] && m->k[i] != k)
        i = (i + 1) & mask;
    if (!m->used[i])
        return;
    m->used[i] = 0;
    m->n--;
    for (size_t j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask) {
        size_t home = (size_t)(m->k[j] * 0x9e3779b97f4a7c15ull >> 20) & mask;
        /* move j back into the hole i if its home is not in (i, j] cyclically */
        int between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            m->k[i] = m->k[j];
            m->v[i] = m->v[j];
            m->used[i] = 1;
            m->used[j] = 0;
            i = j;
        }
    }
}

void hm_free(struct hmap *m)
{
    free(m->k);
    free(m->v);
    free(m->used);
    memset(m, 0, sizeof *m);
}

