/* Interned strings of the live process: one id per distinct byte string, dense from 1. Callers cache ids
 * (rs_intern locks and may allocate). The writer thread reads entries (published with release order on
 * `count`) without the lock: entries never move (fixed pages of pointers) and are never freed. After a
 * fork the child keeps the table (interposers keep their cached ids) and writes it all to its new file.
 *
 * The memory is page memory (tracer/pagemem.h), not malloc's: the final flush of _exit() interns the names of
 * threads seen for the first time and its own warnings, possibly inside a signal handler that interrupted malloc.
 * There (rs_tls.in_exit) the lock is tried for a bounded time: the interrupted code may be rs_intern itself. */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "core_int.h"
#include "pagemem.h"

#define PAGE_SHIFT 10
#define PAGE_N     (1u << PAGE_SHIFT)
#define MAX_PAGES  4096 /* 4M strings */

struct ent {
    uint32_t len, hash;
    char s[]; /* NUL-terminated */
};

/* The lock: a futex word holding its holder's token (a number per thread, rs_tls.lock_token), with LOCK_WAITERS set
 * while another thread sleeps on it. Not a pthread mutex, which cannot say who holds it when a thread's fork()
 * handler asks: a signal handler that forked while its thread waited in rs_intern for the lock another thread held
 * (in_strings set, the lock not ours) gave a child that lock taken by a thread it does not have, and the child's
 * marker and writer waited for it for ever (its file a bare header: tests/core/term_exit.t, session 31). The
 * holder's token is in the word from the moment it is taken until it is let go: nothing in between. */
#define LOCK_WAITERS 0x80000000u
static _Atomic uint32_t lock_word;

/* The thread's kernel id: unique among the process's live threads (a counter wrapped after 2^31 threads and could
 * give a new thread the token of a live one), and below LOCK_WAITERS (pid_max is at most 2^22). */
static uint32_t my_token(void)
{
    if (!rs_tls.lock_token) rs_tls.lock_token = rs_gettid();
    return rs_tls.lock_token;
}

static int held_by_me(void) { return (atomic_load(&lock_word) & ~LOCK_WAITERS) == my_token(); }

static int try_take(void)
{
    uint32_t free_word = 0;
    return atomic_compare_exchange_strong(&lock_word, &free_word, my_token());
}

static void take(void)
{
    uint32_t me = my_token(), v = 0;
    if (atomic_compare_exchange_strong(&lock_word, &v, me)) return;
    int saved_errno = errno; /* the futex's EAGAIN or ETIMEDOUT is not the program's (railscope_mark, NVTX) */
    for (;;) {
        if (v == 0) { /* taken after a wait: others may sleep on it still */
            if (atomic_compare_exchange_strong(&lock_word, &v, me | LOCK_WAITERS)) break;
            continue;
        }
        if (!(v & LOCK_WAITERS)) {
            if (!atomic_compare_exchange_strong(&lock_word, &v, v | LOCK_WAITERS)) continue;
            v |= LOCK_WAITERS;
        }
        rs_futex_wait(&lock_word, v, 1000);
        v = atomic_load(&lock_word);
    }
    errno = saved_errno;
}

/* One sleeper woken: it takes the lock with LOCK_WAITERS set, so that its own let_go wakes the next. */
static void let_go(void)
{
    if (atomic_exchange(&lock_word, 0) & LOCK_WAITERS) {
        int saved_errno = errno;
        rs_futex_wake_one(&lock_word);
        errno = saved_errno;
    }
}

int rs_strings_mine(void) { return held_by_me(); }

static struct ent **pages[MAX_PAGES];
static _Atomic uint32_t count; /* highest id handed out */
static uint32_t *table;        /* open addressing: ids; 0 = empty */
static uint32_t table_cap;

/* Entries are carved from 64 KiB chunks, never freed. */
#define CHUNK (64u << 10)
static char *chunk;
static size_t chunk_used = CHUNK;

static struct ent *ent_alloc(size_t n)
{
    size_t need = (sizeof(struct ent) + n + 1 + 7) & ~(size_t)7;
    if (need > CHUNK - chunk_used) {
        char *c = rs_pm_alloc(CHUNK);
        if (!c) return NULL;
        chunk = c;
        chunk_used = 0;
    }
    struct ent *e = (struct ent *)(chunk + chunk_used);
    chunk_used += need;
    return e;
}

static struct ent *get(uint32_t id) { return pages[id >> PAGE_SHIFT][id & (PAGE_N - 1)]; }

uint32_t rs_strings_count(void) { return atomic_load_explicit(&count, memory_order_acquire); }

const char *rs_string_get(uint32_t id, size_t *len)
{
    if (id == 0 || id > rs_strings_count()) return NULL;
    struct ent *e = get(id);
    if (len) *len = e->len;
    return e->s;
}

int rs_strings_lock(void)
{
    if (held_by_me()) return 0;
    take();
    return 1;
}
void rs_strings_unlock(void) { let_go(); }
/* The forking thread's interrupted rs_intern, if it held the lock, goes on in the child and lets go there; any other
 * holder (the fork handler, or a thread the child does not have) is gone. */
void rs_strings_child_reset(int taken_for_fork)
{
    int mine = !taken_for_fork && held_by_me();
    rs_tls.lock_token = 0; /* the parent's thread id, which a thread of the child may get once that thread ends */
    atomic_store(&lock_word, mine ? my_token() : 0);
}

static int grow(void)
{
    uint32_t cap = table_cap ? table_cap * 2 : 1024;
    uint32_t *t = rs_pm_alloc((size_t)cap * sizeof *t);
    if (!t) return -1;
    for (uint32_t i = 0; i < table_cap; i++) {
        uint32_t id = table[i];
        if (!id) continue;
        uint32_t j = get(id)->hash & (cap - 1);
        while (t[j]) j = (j + 1) & (cap - 1);
        t[j] = id;
    }
    rs_pm_free(table);
    table = t;
    table_cap = cap;
    return 0;
}

uint32_t rs_intern_n(const char *s, size_t n)
{
    if (!s) return 0;
    if (n > RS_MAX_STRING) n = RS_MAX_STRING;
    uint32_t h = rs_fnv1a(s, n), id = 0;
    int g = rs_tls.guard;
    rs_tls.guard = 1; /* what is called below must not be traced */
    if (!rs_tls.in_exit) {
        rs_tls.in_strings = 1;
        take();
        rs_tls.strings_held = 1;
    } else {
        /* ~50 ms, then no id: the string is lost, and so are the rest of this flush's new strings (in_exit 2) */
        for (int i = 0; rs_tls.in_exit == 2 || held_by_me() || !try_take(); i++) {
            if (i == 50 || rs_tls.in_exit == 2 || held_by_me()) { /* the interrupted code holds it */
                rs_tls.in_exit = 2;
                rs_tls.guard = g;
                return 0;
            }
            struct timespec d = {0, 1000000};
            nanosleep(&d, NULL);
        }
        rs_tls.in_strings = 1;
        rs_tls.strings_held = 1;
    }
    uint32_t c = atomic_load_explicit(&count, memory_order_relaxed);
    if ((c + 1) * 2 > table_cap && grow()) goto out;
    uint32_t j = h & (table_cap - 1);
    for (; table[j]; j = (j + 1) & (table_cap - 1)) {
        struct ent *e = get(table[j]);
        if (e->hash == h && e->len == n && !memcmp(e->s, s, n)) {
            id = table[j];
            goto out;
        }
    }
    uint32_t nid = c + 1;
    if ((nid >> PAGE_SHIFT) >= MAX_PAGES) goto out;
    if (!pages[nid >> PAGE_SHIFT] && !(pages[nid >> PAGE_SHIFT] = rs_pm_alloc(PAGE_N * sizeof(struct ent *)))) goto out;
    struct ent *e = ent_alloc(n);
    if (!e) goto out;
    e->len = (uint32_t)n;
    e->hash = h;
    memcpy(e->s, s, n);
    e->s[n] = 0;
    pages[nid >> PAGE_SHIFT][nid & (PAGE_N - 1)] = e;
    table[j] = nid;
    atomic_store_explicit(&count, nid, memory_order_release);
    id = nid;
out:
    let_go();
    rs_tls.strings_held = 0; /* after: a signal in between is deferred, then raised just below */
    rs_tls.in_strings = 0;
    rs_tls.guard = g;
    rs_raise_deferred();
    return id;
}

uint32_t rs_intern(const char *s) { return s ? rs_intern_n(s, strlen(s)) : 0; }
