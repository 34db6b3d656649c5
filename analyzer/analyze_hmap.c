/* A small hash map u64 -> u64 for the analyzer's per-rank pass: open addressing, linear probing,
 * power-of-two capacity, backward-shift deletion (no tombstones). Keys come from the trace (hostile), so
 * the one key value that marks a free slot is kept outside the table rather than refused, and the slot a
 * key lands in depends on a per-process random seed: a crafted trace cannot pick keys that all share a
 * probe chain (a fixed multiplier made that a matter of multiplying by its inverse). Nothing iterates over
 * the slots, so the seed changes no result, only where keys sit. hm2: the same for keys of two words. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "analyze_local.h"
#include "util/xalloc.h"

#define HM_EMPTY 0xffffffffffffffffull

static uint64_t hm_seed;
static pthread_once_t hm_seed_once = PTHREAD_ONCE_INIT;
static void hm_seed_init(void)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        s = (uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 32 ^ (uint64_t)getpid() << 16 ^ (uint64_t)(uintptr_t)&s;
    }
    hm_seed = s;
}
/* Every map calls this before its first slot exists (hm_grow), so lookups of any map see the seed. */
static void hm_seed_get(void) { pthread_once(&hm_seed_once, hm_seed_init); }

static inline uint64_t hm_mix(uint64_t k) /* MurmurHash3's 64-bit finalizer: every bit of k moves every bit */
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    k *= 0xc4ceb9fe1a85ec53ull;
    return k ^ k >> 33;
}
static inline size_t hm_home(uint64_t k, size_t mask) { return (size_t)hm_mix(k ^ hm_seed) & mask; }

static void hm_grow(struct hmap *m)
{
    struct hm_slot *o = m->s;
    size_t ocap = m->cap;
    hm_seed_get();
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

/* ---- hm2: (a, b) -> v, v < UINT64_MAX (stored as v + 1: 0 marks a free slot, so every key is allowed) ---- */
static inline size_t hm2_home(uint64_t a, uint64_t b, size_t mask)
{
    return (size_t)hm_mix(hm_mix(a ^ hm_seed) ^ b) & mask;
}

static void hm2_grow(struct hmap2 *m)
{
    struct hm2_slot *o = m->s;
    size_t ocap = m->cap;
    hm_seed_get();
    m->cap = ocap ? ocap * 2 : 64;
    m->s = rs_xcalloc(m->cap, sizeof *m->s, "analyze_hmap s2");
    if (!m->s) {
        fprintf(stderr, "railscope: out of memory\n");
        exit(2);
    }
    an_held += (m->cap - ocap) * sizeof *m->s;
    size_t mask = m->cap - 1;
    for (size_t i = 0; i < ocap; i++)
        if (o[i].v) {
            size_t j = hm2_home(o[i].a, o[i].b, mask);
            while (m->s[j].v) j = (j + 1) & mask;
            m->s[j] = o[i];
        }
    free(o);
}

void hm2_put(struct hmap2 *m, uint64_t a, uint64_t b, uint64_t v)
{
    if ((m->n + 1) * 2 > m->cap) hm2_grow(m);
    size_t mask = m->cap - 1, i = hm2_home(a, b, mask);
    while (m->s[i].v && (m->s[i].a != a || m->s[i].b != b)) i = (i + 1) & mask;
    if (!m->s[i].v) m->n++;
    m->s[i] = (struct hm2_slot){a, b, v + 1};
}

int hm2_get(const struct hmap2 *m, uint64_t a, uint64_t b, uint64_t *v)
{
    if (!m->cap) return 0;
    size_t mask = m->cap - 1;
    for (size_t i = hm2_home(a, b, mask); m->s[i].v; i = (i + 1) & mask)
        if (m->s[i].a == a && m->s[i].b == b) {
            *v = m->s[i].v - 1;
            return 1;
        }
    return 0;
}

void hm2_del(struct hmap2 *m, uint64_t a, uint64_t b)
{
    if (!m->cap) return;
    size_t mask = m->cap - 1, i = hm2_home(a, b, mask);
    while (m->s[i].v && (m->s[i].a != a || m->s[i].b != b)) i = (i + 1) & mask;
    if (!m->s[i].v) return;
    m->s[i].v = 0;
    m->n--;
    for (size_t j = (i + 1) & mask; m->s[j].v; j = (j + 1) & mask) {
        size_t home = hm2_home(m->s[j].a, m->s[j].b, mask);
        int between = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            m->s[i] = m->s[j];
            m->s[j].v = 0;
            i = j;
        }
    }
}

void hm2_free(struct hmap2 *m)
{
    free(m->s);
    memset(m, 0, sizeof *m);
}
