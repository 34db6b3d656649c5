/* Unit test of preload/ptrmap.[ch], the interposers' pointer-keyed table, linked with preload/ptrmap.c alone.
 * Prints TAP. Collisions are forced with the _h forms (every key hashed to one home slot). */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "preload/ptrmap.h"

#define N 64u
static uintptr_t keys[N];
static int n_test, n_fail;

static void ok(int cond, const char *what)
{
    n_test++;
    if (!cond) n_fail++;
    printf("%sok %d - %s\n", cond ? "" : "not ", n_test, what);
}

static uintptr_t key_of(unsigned i) { return 0x10000u + 64u * i; } /* never 0 or 1 */

/* Insert key (with home slot h) as the table's writers do: find a slot, publish. */
static long put(uintptr_t key, unsigned h)
{
    int found, s = rs_ptrmap_slot_h(keys, N, key, h, &found);
    if (s >= 0 && !found) rs_ptrmap_publish(keys, s, key);
    return s;
}

static void collisions(void)
{
    memset(keys, 0, sizeof keys);
    int all = 1;
    for (unsigned i = 0; i < 10; i++) all &= put(key_of(i), 5) == (long)(5 + i);
    ok(all, "colliding keys take consecutive slots from their home");
    all = 1;
    for (unsigned i = 0; i < 10; i++) all &= rs_ptrmap_find_h(keys, N, key_of(i), 5) == (long)(5 + i);
    ok(all, "each colliding key is found (first probe inline, the rest out of line)");
    ok(rs_ptrmap_find_h(keys, N, key_of(99), 5) == -1, "an absent key with the same home is not found");
    ok(rs_ptrmap_remove_h(keys, N, key_of(3), 5) == 8 && keys[8] == RS_PTRMAP_TOMB, "remove leaves a tombstone");
    ok(rs_ptrmap_find_h(keys, N, key_of(7), 5) == 12, "a key past the tombstone is still found");
    ok(rs_ptrmap_find_h(keys, N, key_of(3), 5) == -1, "the removed key is gone");
    int found = -1;
    ok(rs_ptrmap_slot_h(keys, N, key_of(7), 5, &found) == 12 && found == 1,
       "slot: a present key answers its own slot (found), not the earlier tombstone");
    ok(put(key_of(50), 5) == 8, "a new key reuses the first tombstone of its probe sequence");
    ok(rs_ptrmap_remove_h(keys, N, key_of(99), 5) == -1, "removing an absent key changes nothing");
}

static void wraparound_and_full(void)
{
    memset(keys, 0, sizeof keys);
    ok(put(key_of(1), N - 1) == (long)(N - 1) && put(key_of(2), N - 1) == 0, "the probe sequence wraps around");
    ok(rs_ptrmap_find_h(keys, N, key_of(2), N - 1) == 0, "a wrapped key is found");
    memset(keys, 0, sizeof keys);
    int all = 1;
    for (unsigned i = 0; i < N; i++) all &= put(key_of(i), i * 7) >= 0;
    ok(all, "the table fills up to its last slot");
    ok(put(key_of(N + 1), 3) == -1, "a full table refuses a new key");
    ok(rs_ptrmap_find_h(keys, N, key_of(N + 1), 3) == -1, "a find in a full table ends (absent key)");
    ok(rs_ptrmap_find_h(keys, N, key_of(N - 1), (N - 1) * 7) >= 0, "and still finds a present one");
}

static void default_hash(void)
{
    memset(keys, 0, sizeof keys);
    static char objs[16][256];
    int all = 1;
    for (unsigned i = 0; i < 16; i++) {
        int found;
        int s = rs_ptrmap_slot(keys, N, (uintptr_t)objs[i], &found);
        if (s < 0 || found) all = 0;
        else rs_ptrmap_publish(keys, s, (uintptr_t)objs[i]);
    }
    for (unsigned i = 0; i < 16; i++) all &= rs_ptrmap_find(keys, N, (uintptr_t)objs[i]) >= 0;
    ok(all, "pointer keys with the default hash: inserted and found");
    ok(rs_ptrmap_remove(keys, N, (uintptr_t)objs[4]) >= 0 && rs_ptrmap_find(keys, N, (uintptr_t)objs[4]) == -1,
       "pointer keys: removed");
}

/* rs_ptrmap_claim from several threads at once: every key ends in exactly one slot, and every thread that
 * claimed a key got the slot the key is in. */
#define THREADS 4
#define CLAIMS  40
static uintptr_t ckeys[N];
static long got[THREADS][CLAIMS];
static int fresh_count[THREADS];
static void *claimer(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < CLAIMS; i++) {
        int fresh;
        got[t][i] = rs_ptrmap_claim(ckeys, N, key_of((unsigned)((i + t * 7) % CLAIMS)), &fresh);
        fresh_count[t] += fresh;
    }
    return NULL;
}

static void claims(void)
{
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++) pthread_create(&th[t], NULL, claimer, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    int fresh = 0, consistent = 1;
    for (int t = 0; t < THREADS; t++) fresh += fresh_count[t];
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < CLAIMS; i++) {
            uintptr_t k = key_of((unsigned)((i + t * 7) % CLAIMS));
            consistent &= got[t][i] >= 0 && ckeys[got[t][i]] == k;
        }
    unsigned used = 0;
    for (unsigned s = 0; s < N; s++) used += ckeys[s] != 0;
    ok(fresh == CLAIMS && used == CLAIMS, "concurrent claims: each key claimed once (fresh once, one slot)");
    ok(consistent, "concurrent claims: every caller got the slot its key is in");
    int f;
    ok(rs_ptrmap_claim(ckeys, N, key_of(0), &f) == rs_ptrmap_find(ckeys, N, key_of(0)) && !f,
       "claiming a present key answers its slot, not fresh");
}

/* Churn: objects created and destroyed at new addresses all run long (review of session 5: every slot
 * ended a tombstone, and every miss then scanned the whole table). */
static void churn(void)
{
    memset(keys, 0, sizeof keys);
    for (unsigned i = 0; i < 10 * N; i++) {
        put(key_of(i), (i * 7) & (N - 1));
        if (i >= 4) rs_ptrmap_remove_h(keys, N, key_of(i - 4), ((i - 4) * 7) & (N - 1)); /* 4 live at a time */
    }
    unsigned empty = 0;
    for (unsigned s = 0; s < N; s++) empty += keys[s] == RS_PTRMAP_EMPTY;
    ok(empty == N - 4, "churn: tombstones that only lead to an empty slot become empty again");
    /* A bigger table: a key lives within RS_PTRMAP_MAX_PROBE slots of its home, so a run of live keys that
     * long makes the table full for that home (and a miss stops there) even with free slots further on. */
    static uintptr_t big[4 * RS_PTRMAP_MAX_PROBE];
    const unsigned nb = 4 * RS_PTRMAP_MAX_PROBE;
    int found, all = 1;
    for (unsigned i = 0; i < RS_PTRMAP_MAX_PROBE; i++) {
        int s = rs_ptrmap_slot_h(big, nb, key_of(i), 0, &found);
        all &= s == (int)i;
        if (s >= 0) rs_ptrmap_publish(big, s, key_of(i));
    }
    ok(all && rs_ptrmap_slot_h(big, nb, key_of(9999), 0, &found) == -1 &&
           rs_ptrmap_find_h(big, nb, key_of(9999), 0) == -1 && rs_ptrmap_find_h(big, nb, key_of(63), 0) == 63,
       "probe sequences stop after RS_PTRMAP_MAX_PROBE slots (inserts and misses alike)");
}

int main(void)
{
    printf("1..22\n");
    collisions();
    wraparound_and_full();
    default_hash();
    claims();
    churn();
    return n_fail != 0 || n_test != 22;
}
