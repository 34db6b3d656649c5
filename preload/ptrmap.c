/* The pointer-keyed table's probe sequences (API and rules in preload/ptrmap.h). */
#include "preload/ptrmap.h"

/* Every probe sequence stops after RS_PTRMAP_MAX_PROBE slots: a key lives within that distance of its home
 * (an insert finds no free slot beyond it: "full" for that key, which the callers count), so a lookup that
 * misses costs at most that many loads whatever tombstones churn has left (review of session 5). */
static inline unsigned probe_limit(unsigned nslots)
{
    return nslots < RS_PTRMAP_MAX_PROBE ? nslots : RS_PTRMAP_MAX_PROBE;
}

/* After a first slot that held another key (rs_ptrmap_find_h inline). */
long rs_ptrmap_find_more(const uintptr_t *keys, unsigned nslots, uintptr_t key, unsigned s0)
{
    for (unsigned i = 1, lim = probe_limit(nslots); i < lim; i++) {
        unsigned s = (s0 + i) & (nslots - 1);
        uintptr_t k = __atomic_load_n(&keys[s], __ATOMIC_ACQUIRE);
        if (k == key) return (long)s;
        if (k == RS_PTRMAP_EMPTY) return -1;
    }
    return -1;
}

int rs_ptrmap_slot_h(const uintptr_t *keys, unsigned nslots, uintptr_t key, unsigned h, int *found)
{
    int free_slot = -1;
    *found = 0;
    for (unsigned i = 0, lim = probe_limit(nslots); i < lim; i++) {
        unsigned s = (h + i) & (nslots - 1);
        uintptr_t k = keys[s]; /* the writers' lock is held: no other store can race with this load */
        if (k == key) {
            *found = 1;
            return (int)s;
        }
        if (k == RS_PTRMAP_EMPTY) return free_slot >= 0 ? free_slot : (int)s;
        if (k == RS_PTRMAP_TOMB && free_slot < 0) free_slot = (int)s;
    }
    return free_slot;
}

int rs_ptrmap_remove_h(uintptr_t *keys, unsigned nslots, uintptr_t key, unsigned h)
{
    for (unsigned i = 0, lim = probe_limit(nslots); i < lim; i++) {
        unsigned s = (h + i) & (nslots - 1);
        uintptr_t k = keys[s];
        if (k == RS_PTRMAP_EMPTY) return -1;
        if (k != key) continue;
        __atomic_store_n(&keys[s], RS_PTRMAP_TOMB, __ATOMIC_RELEASE);
        /* Tombstones that only lead to an empty slot end no live key's probe chain (a chain never crosses
         * an empty slot): they become empty again, from the end backwards, so that churn (QPs, MRs created
         * and destroyed at new addresses all run long) cannot fill the table with tombstones and make
         * every miss scan all of it. Writers hold the table's lock; readers that already passed a slot
         * are unaffected, later ones stop where nothing lies beyond. */
        if (keys[(s + 1) & (nslots - 1)] == RS_PTRMAP_EMPTY)
            for (unsigned j = s, n = 0; n < nslots && keys[j] == RS_PTRMAP_TOMB; n++, j = (j - 1) & (nslots - 1))
                __atomic_store_n(&keys[j], RS_PTRMAP_EMPTY, __ATOMIC_RELEASE);
        return (int)s;
    }
    return -1;
}

int rs_ptrmap_claim_h(uintptr_t *keys, unsigned nslots, uintptr_t key, unsigned h, int *fresh)
{
    *fresh = 0;
    for (unsigned i = 0, lim = probe_limit(nslots); i < lim; i++) {
        unsigned s = (h + i) & (nslots - 1);
        uintptr_t k = __atomic_load_n(&keys[s], __ATOMIC_ACQUIRE);
        if (k == key) return (int)s;
        if (k != RS_PTRMAP_EMPTY) continue;
        if (__atomic_compare_exchange_n(&keys[s], &k, key, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
            *fresh = 1;
            return (int)s;
        }
        if (k == key) return (int)s; /* another thread claimed it for the same key */
    }
    return -1;
}
