/* The one pointer-keyed table of the interposers (verbs contexts, CQs, QPs, SRQs, WQs, MRs; NCCL
 * communicators; call sites, preload/stack.c; string ids by address, rs_gpu_common.h): open addressing with
 * linear probing over a caller-owned array of keys, nslots a power of two, the caller's records in a
 * parallel array (slot i's record is recs[i]). Implemented in preload/ptrmap.c.
 *
 * Keys are pointers, or any word that is never 0 (empty) or 1 (RS_PTRMAP_TOMB, a removed key; later
 * insertions reuse it). Readers never lock and never block: a slot's key is published with a release store
 * after its record is filled (rs_ptrmap_publish), and find loads it with acquire, so a reader that sees the
 * key sees the record. Writers (slot, publish, remove) are serialised by the caller's own lock, except
 * rs_ptrmap_claim (compare-and-swap, for tables that never remove). An object used after its destruction is
 * the application's bug; the look-ups themselves never crash (the arrays are the caller's static storage).
 *
 * Cost (the verbs data path: bench/verbs/RESULTS.md): the first probe is inline, and finds the key unless
 * the table has a collision there; the rest of the probe sequence is out of line, so the hot path carries no
 * loop. The default hash is two shifts and an xor: objects are heap blocks of >= 64 bytes, and dropping the
 * low bits and folding in the page number spreads them well enough for linear probing, for a fraction of a
 * multiplicative hash's cost. Keys that are not addresses pass their own hash (the _h forms). */
#ifndef RAILSCOPE_PTRMAP_H
#define RAILSCOPE_PTRMAP_H

#include <stdint.h>

#include "tracer/rs_tracer.h"

#define RS_PTRMAP_EMPTY     ((uintptr_t)0)
#define RS_PTRMAP_TOMB      ((uintptr_t)1)
#define RS_PTRMAP_MAX_PROBE 64u /* the longest probe sequence (ptrmap.c) */

static inline uint64_t rs_ptrmap_hash(uintptr_t key) { return (uint64_t)key >> 6 ^ (uint64_t)key >> 16; }

/* The slot holding key, or -1. h: the key's hash (rs_ptrmap_find: rs_ptrmap_hash). */
long rs_ptrmap_find_more(const uintptr_t *keys, unsigned nslots, uintptr_t key, unsigned s0);
static inline long rs_ptrmap_find_h(const uintptr_t *keys, unsigned nslots, uintptr_t key, unsigned h)
{
    unsigned s = h & (nslots - 1);
    uintptr_t k = __atomic_load_n(&keys[s], __ATOMIC_ACQUIRE);
    if (RS_LIKELY(k == key)) return (long)s;
    if (k == RS_PTRMAP_EMPTY) return -1;
    return rs_ptrmap_find_more(keys, nslots, key, s);
}
static inline long rs_ptrmap_find(const uintptr_t *keys, unsigned nslots, uintptr_t key)
{
    return rs_ptrmap_find_h(keys, nslots, key, (unsigned)rs_ptrmap_hash(key));
}

/* Writers, under the caller's lock. The slot holding key (*found = 1), else the first free slot (empty or
 * tombstone) of its probe sequence (*found = 0), where the caller fills its record and then publishes the
 * key; -1 when the table is full. */
int rs_ptrmap_slot_h(const uintptr_t *keys, unsigned nslots, uintptr_t key, unsigned h, int *found);
static inline int rs_ptrmap_slot(const uintptr_t *keys, unsigned nslots, uintptr_t key, int *found)
{
    return rs_ptrmap_slot_h(keys, nslots, key, (unsigned)rs_ptrmap_hash(key), found);
}
static inline void rs_ptrmap_publish(uintptr_t *keys, int slot, uintptr_t key)
{
    __atomic_store_n(&keys[slot], key, __ATOMIC_RELEASE);
}
/* Removes key (its slot becomes a tombstone, or empty when nothing lies beyond it): the slot it had, or -1. */
int rs_ptrmap_remove_h(uintptr_t *keys, unsigned nslots, uintptr_t key, unsigned h);
static inline int rs_ptrmap_remove(uintptr_t *keys, unsigned nslots, uintptr_t key)
{
    return rs_ptrmap_remove_h(keys, nslots, key, (unsigned)rs_ptrmap_hash(key));
}

/* Lock-free insertion for tables that never remove: the slot holding key, claimed with a compare-and-swap
 * when absent (*fresh = 1: the record is the caller's to fill; a reader may see the key before it is
 * filled, so records must read sensibly when zero); -1 when full. */
int rs_ptrmap_claim_h(uintptr_t *keys, unsigned nslots, uintptr_t key, unsigned h, int *fresh);
static inline int rs_ptrmap_claim(uintptr_t *keys, unsigned nslots, uintptr_t key, int *fresh)
{
    return rs_ptrmap_claim_h(keys, nslots, key, (unsigned)rs_ptrmap_hash(key), fresh);
}

#endif
