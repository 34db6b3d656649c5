/* The hot path and the core's start: per-thread rings, rs_emit, the reentrancy guard, rs_core_start.
 * rs_emit is the one function every traced call goes through: no lock, no allocation, only a bounds
 * check and a copy into this thread's ring (see core_int.h for the data path); no system call either,
 * except a futex wake of the writer when the ring is more than half full (ring_limit). */
#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core_int.h"

unsigned rs_enabled_mask;
_Atomic int rs_state;
pid_t rs_pid;
_Atomic uint64_t rs_orphan_drops;
_Atomic int rs_dying;
_Atomic(struct rs_ring *) rs_rings;
__thread struct rs_tls rs_tls __attribute__((tls_model("initial-exec")));

static pthread_key_t ring_key;
static int ring_key_ok;


uint32_t rs_gettid(void) { return (uint32_t)syscall(SYS_gettid); }

void rs_futex_wake(_Atomic uint32_t *addr)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

void rs_futex_wake_one(_Atomic uint32_t *addr)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

int rs_futex_wait(_Atomic uint32_t *addr, uint32_t val, unsigned timeout_ms)
{
    return rs_futex_wait_us(addr, val, (uint64_t)timeout_ms * 1000);
}

int rs_futex_wait_us(_Atomic uint32_t *addr, uint32_t val, uint64_t timeout_us)
{
    struct timespec ts = {(time_t)(timeout_us / 1000000), (long)(timeout_us % 1000000) * 1000L};
    return (int)syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

/* ---- rings ---- */

static void ring_reset(struct rs_ring *r)
{
    atomic_store_explicit(&r->head, 0, memory_order_relaxed);
    atomic_store_explicit(&r->tail, 0, memory_order_relaxed);
    r->limit = r->size / 2;
    r->next_wake = 0;
    atomic_store_explicit(&r->drop_events, 0, memory_order_relaxed);
    atomic_store_explicit(&r->drop_bytes, 0, memory_order_relaxed);
    r->emitted = 0;
    r->seen_drop_events = r->seen_drop_bytes = 0;
    r->started = 0;
    r->end_ts = 0;
}

static void thread_gone(void *p)
{
    struct rs_ring *r = p;
    if (!r) return;
    r->end_ts = rs_now();
    atomic_store_explicit(&r->state, RS_RING_EXITED, memory_order_release);
    if (rs_tls.ring == r) rs_tls.ring = NULL;
}

struct rs_ring *rs_ring_attach(void)
{
    int st = atomic_load_explicit(&rs_state, memory_order_acquire);
    if (rs_tls.no_ring || (st != RS_ST_RUNNING && st != RS_ST_STARTING) || rs_cfg.buffer_bytes < 65536) return NULL;
    int g = rs_tls.guard;
    rs_tls.guard = 1;
    struct rs_ring *r;
    /* Reuse the ring of a thread that has exited and been drained; its buffer was given back to the
     * system (writer_thread.c): map a new one. */
    for (r = atomic_load_explicit(&rs_rings, memory_order_acquire); r; r = r->next) {
        int exp = RS_RING_FREE;
        if (atomic_compare_exchange_strong(&r->state, &exp, RS_RING_CLAIMED)) break;
    }
    if (r && (!r->data || r->size != rs_cfg.buffer_bytes)) {
        if (r->data) munmap(r->data, r->size);
        r->data = NULL;
        void *m = mmap(NULL, rs_cfg.buffer_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            atomic_store_explicit(&r->state, RS_RING_FREE, memory_order_release);
            rs_tls.no_ring = 1;
            rs_tls.guard = g;
            return NULL;
        }
        r->data = m;
        r->size = rs_cfg.buffer_bytes;
    }
    if (!r) {
        size_t hdr = (sizeof(struct rs_ring) + 4095) & ~(size_t)4095;
        void *m = mmap(NULL, hdr + rs_cfg.buffer_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) {
            rs_tls.no_ring = 1;
            rs_tls.guard = g;
            return NULL;
        }
        r = m;
        r->size = rs_cfg.buffer_bytes;
        r->data = (unsigned char *)m + hdr;
        atomic_store_explicit(&r->state, RS_RING_CLAIMED, memory_order_relaxed);
        struct rs_ring *head = atomic_load_explicit(&rs_rings, memory_order_relaxed);
        do r->next = head;
        while (!atomic_compare_exchange_weak_explicit(&rs_rings, &head, r, memory_order_release, memory_order_relaxed));
    }
    ring_reset(r);
    r->tid = rs_gettid();
    r->start_ts = rs_now();
    atomic_store_explicit(&r->state, RS_RING_ALIVE, memory_order_release);
    rs_tls.ring = r;
    if (ring_key_ok) pthread_setspecific(ring_key, r);
    rs_tls.guard = g;
    return r;
}

/* Give a drained ring's buffer back to the system (the header stays on the list, for the next thread):
 * a program with many short-lived threads, or one that had many threads once, must not keep their buffers'
 * address space (under a low RLIMIT_AS the program's own malloc failed). Only for a ring nobody writes. */
void rs_ring_release(struct rs_ring *r)
{
    if (r->data) munmap(r->data, r->size);
    r->data = NULL;
}

/* fork child: only the forking thread exists. Its ring's contents belong to the parent's file (the parent
 * writes them); every other ring's thread is gone, and so is the use of its buffer. */
void rs_rings_after_fork_child(void)
{
    for (struct rs_ring *r = atomic_load(&rs_rings); r; r = r->next) {
        if (r == rs_tls.ring) {
            /* What it holds is the parent's to write. The head stays where it is, not 0: a fork from a signal
             * handler may have interrupted this thread's emit2 between its load of the head and its store of the
             * next one, which it makes when the handler returns (set back to 0, the ring then had a head past
             * data never written: "cannot write ...: Input/output error" in children forked by a SIGALRM handler
             * amid marks, tests/core/sigfork_term.c, session 29). */
            uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
            ring_reset(r);
            atomic_store_explicit(&r->head, head, memory_order_relaxed);
            atomic_store_explicit(&r->tail, head, memory_order_relaxed);
            r->limit = head + r->size / 2;
            r->tid = rs_gettid();
            r->start_ts = rs_now();
        } else {
            ring_reset(r);
            rs_ring_release(r);
            atomic_store(&r->state, RS_RING_FREE);
        }
    }
}

/* Only the owning thread writes its ring's counters (the writer reads them): a load and a store, no RMW. */
static inline void ring_drop(struct rs_ring *r, uint32_t n)
{
    atomic_store_explicit(&r->drop_events, atomic_load_explicit(&r->drop_events, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_store_explicit(&r->drop_bytes, atomic_load_explicit(&r->drop_bytes, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

extern _Atomic uint32_t rs_writer_wake;

static void wake_writer(void)
{
    atomic_fetch_add(&rs_writer_wake, 1);
    rs_futex_wake(&rs_writer_wake);
}

/* No room for n more bytes: drop and count (false), or (block policy) wait for the writer until *tail
 * leaves room (true). */
static bool ring_full(struct rs_ring *r, uint64_t head, uint32_t n, uint64_t *tail)
{
    if (rs_cfg.policy_block && !rs_tls.is_writer) {
        /* Block policy: wait for the writer (bounded, so a dead writer cannot hang the application). */
        for (int i = 0; i < 100000 && atomic_load(&rs_state) == RS_ST_RUNNING; i++) {
            wake_writer();
            struct timespec ts = {0, 20000};
            nanosleep(&ts, NULL);
            *tail = atomic_load_explicit(&r->tail, memory_order_acquire);
            if (head + n - *tail <= r->size) return true;
        }
    }
    ring_drop(r, n);
    return false;
}

/* The fast path only compares head with r->limit. Up to half full the limit is tail + half the ring;
 * beyond, the writer is behind the schedule it chose for its sleep (it was descheduled, or the rate
 * jumped since it measured it): wake it, at most once per eighth of the ring, so a burst meets an
 * awake writer rather than a full ring. The futex wake is the only system call rs_emit makes, and only
 * on a ring more than half full. */
static void ring_limit(struct rs_ring *r, uint64_t end, uint64_t tail)
{
    uint64_t half = tail + r->size / 2, hard = tail + r->size;
    if (end <= half) {
        r->limit = half;
        return;
    }
    if (end >= r->next_wake && !rs_tls.is_writer) {
        r->next_wake = end + r->size / 8;
        wake_writer();
    }
    r->limit = end + r->size / 8 < hard ? end + r->size / 8 : hard;
}

/* Events are multiples of 8 bytes and the ring is a power of two >= 64 KiB, so an event never straddles
 * the end in the middle of a word: copy words, no memcpy call on the hot path. */
static inline void ring_copy(struct rs_ring *r, uint64_t pos, const void *src, size_t n)
{
    size_t off = (size_t)pos & (r->size - 1);
    const uint64_t *s = src;
    if (RS_LIKELY(off + n <= r->size)) {
        uint64_t *d = (uint64_t *)(r->data + off);
        for (size_t i = 0; i < n / 8; i++) d[i] = s[i];
    } else {
        for (size_t i = 0; i < n / 8; i++, off += 8) *(uint64_t *)(r->data + (off & (r->size - 1))) = s[i];
    }
}

/* The process is being killed by a signal at its default disposition and the writer is writing the last
 * frame: a thread that records now parks here (bounded) instead of returning to the application, so
 * every call the application saw complete is in the file. The process dies within milliseconds. */
static __attribute__((noinline)) void park_dying(void)
{
    for (int i = 0; i < 500; i++) {
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
    }
}

/* Everything rs_emit does, including the rare cases (a thread's first event, a malformed event, a full
 * ring). emit2 below handles the common case inline and calls this for the rest; kept out of line so
 * that the fast path needs no saved registers or stack frame. */
static bool emit_slow_body(const struct rs_ev_hdr *pre, const struct rs_ev_hdr *h);

/* Wrappers call rs_emit after the real call has set errno: the rare paths (a thread's first ring is
 * allocated, the writer is woken, a blocked producer sleeps) make system calls, so errno is restored. */
static __attribute__((noinline, cold)) bool emit_slow(const struct rs_ev_hdr *pre, const struct rs_ev_hdr *h)
{
    int saved = errno;
    bool ok = emit_slow_body(pre, h);
    errno = saved;
    return ok;
}

static bool emit_slow_body(const struct rs_ev_hdr *pre, const struct rs_ev_hdr *h)
{
    struct rs_ring *r = rs_tls.ring;
    if (RS_UNLIKELY(!r)) {
        r = rs_ring_attach();
        if (!r) {
            if (RS_UNLIKELY(atomic_load_explicit(&rs_dying, memory_order_relaxed)) && !rs_tls.is_writer) park_dying();
            if (atomic_load_explicit(&rs_state, memory_order_relaxed) == RS_ST_RUNNING)
                atomic_fetch_add_explicit(&rs_orphan_drops, 1, memory_order_relaxed);
            return false;
        }
    }
    uint32_t n = h->size, pn = pre ? (uint32_t)sizeof *pre : 0;
    if (RS_UNLIKELY((n & 7) | (n < sizeof *h) | (n > r->size / 4))) { /* malformed or oversized: counted */
        ring_drop(r, n);
        return false;
    }
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed), end = head + n + pn;
    if (RS_UNLIKELY(end > r->limit)) {
        uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        if (end - tail > r->size && !ring_full(r, head, n + pn, &tail)) return false;
        ring_limit(r, end, tail);
    }
    if (pre) {
        ring_copy(r, head, pre, pn);
        head += pn;
    }
    ring_copy(r, head, h, n);
    atomic_store_explicit(&r->head, head + n, memory_order_release);
    /* Checked after publishing: a thread that returns to the application did so before the last drain
     * was asked for (the writer wakes milliseconds after rs_dying is set). */
    if (RS_UNLIKELY(atomic_load_explicit(&rs_dying, memory_order_relaxed)) && !rs_tls.is_writer) park_dying();
    return true;
}

/* How far ahead of the write position rs_emit asks for cache lines. The ring's lines were last read by
 * the writer on another core (or have left this core's caches): each new line costs a read-for-ownership
 * that the copy's stores would otherwise wait for one at a time (~10 ns per 64-byte event here). 2 KiB
 * ahead = 32 lines in flight; measured 1-8 KiB alike, 256 B too short (bench/core/RESULTS.md). */
#define RS_PREFETCH_AHEAD 2048

static inline void prefetch_w(const void *p)
{
#if defined(__x86_64__)
    __asm__ volatile("prefetchw (%0)" ::"r"(p)); /* not __builtin_prefetch: that is prefetcht0 without -mprfchw */
#else
    __builtin_prefetch(p, 1, 3);
#endif
}

static inline __attribute__((always_inline)) bool emit2(const struct rs_ev_hdr *pre, const struct rs_ev_hdr *h)
{
    struct rs_ring *r = rs_tls.ring;
    uint32_t n = h->size, pn = pre ? (uint32_t)sizeof *pre : 0;
    if (RS_UNLIKELY(!r)) return emit_slow(pre, h);
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    size_t mask = r->size - 1, off = (size_t)head & mask;
    /* Rare cases (and an event that would wrap at the ring's end) take the slow path: the copy below is
     * straight-line, with no wrap handling and no stack frame. */
    if (RS_UNLIKELY(head + n + pn > r->limit)) return emit_slow(pre, h);
    if (RS_UNLIKELY(off + n + pn > r->size)) return emit_slow(pre, h);
    /* n in [16, size/4] and a multiple of 8 (one unsigned compare for the range) */
    if (RS_UNLIKELY((n & 7) | ((size_t)n - sizeof *h > r->size / 4 - sizeof *h))) return emit_slow(pre, h);
    /* the lines of the first and last byte, ahead: every line an event of up to 128 bytes will touch
     * (one address per event skipped one line in five with 80-byte events) */
    prefetch_w(r->data + ((off + RS_PREFETCH_AHEAD) & mask));
    prefetch_w(r->data + ((off + n + pn - 1 + RS_PREFETCH_AHEAD) & mask));
    uint64_t *d = (uint64_t *)(r->data + off);
    if (pre) {
        d[0] = ((const uint64_t *)pre)[0];
        d[1] = ((const uint64_t *)pre)[1];
        d += 2;
    }
    /* 16 bytes per store (SSE2 on x86-64): half the stores of a word loop, so fewer wait in the store
     * buffer while a new line's ownership arrives. */
    const unsigned char *s = (const unsigned char *)h;
    unsigned char *dc = (unsigned char *)d;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        typedef uint64_t v16 __attribute__((vector_size(16), aligned(8), may_alias));
        *(v16 *)(dc + i) = *(const v16 *)(s + i);
    }
    if (n & 8) *(uint64_t *)(dc + i) = *(const uint64_t *)(s + i);
    atomic_store_explicit(&r->head, head + n + pn, memory_order_release);
    /* Checked after publishing: a thread that returns to the application did so before the last drain
     * was asked for (the writer wakes milliseconds after rs_dying is set). */
    if (RS_UNLIKELY(atomic_load_explicit(&rs_dying, memory_order_relaxed)) && !rs_tls.is_writer) park_dying();
    return true;
}

bool rs_emit(const struct rs_ev_hdr *h) { return emit2(NULL, h); }

bool rs_emit_as(uint32_t tid, const struct rs_ev_hdr *h)
{
    struct rs_ev_hdr m = {0, RS_EV_AS_MARKER, sizeof m, tid};
    return emit2(&m, h);
}

bool rs_guard_enter(void)
{
    if (rs_tls.guard) return false;
    rs_tls.guard = 1;
    return true;
}

void rs_guard_exit(void) { rs_tls.guard = 0; }

/* ---- hooks ---- */

#define RS_MAX_HOOKS 16
static void (*shutdown_hooks[RS_MAX_HOOKS])(void);
static _Atomic int n_shutdown;
void (*rs_tick_hooks[RS_MAX_HOOKS])(void);
_Atomic int rs_n_tick;

void rs_at_shutdown(void (*fn)(void))
{
    int i = atomic_fetch_add(&n_shutdown, 1);
    if (i < RS_MAX_HOOKS) __atomic_store_n(&shutdown_hooks[i], fn, __ATOMIC_RELEASE); /* read by other threads */
    else rs_warn_once("more than %d shutdown hooks; some are ignored", RS_MAX_HOOKS);
}

void rs_at_tick(void (*fn)(void))
{
    int i = atomic_fetch_add(&rs_n_tick, 1);
    if (i < RS_MAX_HOOKS) __atomic_store_n(&rs_tick_hooks[i], fn, __ATOMIC_RELEASE); /* the writer reads it */
    else rs_warn_once("more than %d tick hooks; some are ignored", RS_MAX_HOOKS);
}

/* rs_tick_soon's one slot: the writer reads rs_soon_at (acquire), then the function stored before it */
void (*rs_soon_fn)(void);
_Atomic uint64_t rs_soon_at;

void rs_tick_soon(void (*fn)(void), uint64_t at)
{
    __atomic_store_n(&rs_soon_fn, fn, __ATOMIC_RELAXED);
    atomic_store_explicit(&rs_soon_at, at ? at : 1, memory_order_release);
}

uint64_t rs_tick_period_ns(void) { return (uint64_t)rs_cfg.flush_ms * 1000000ull; }

static void (*fork_child_hooks[RS_MAX_HOOKS])(void);
static _Atomic int n_fork_child;

void rs_at_fork_child(void (*fn)(void))
{
    int i = atomic_fetch_add(&n_fork_child, 1);
    if (i < RS_MAX_HOOKS) __atomic_store_n(&fork_child_hooks[i], fn, __ATOMIC_RELEASE);
    else rs_warn_once("more than %d fork hooks; some are ignored", RS_MAX_HOOKS);
}

void rs_run_fork_child_hooks(void)
{
    int n = atomic_load(&n_fork_child);
    for (int i = 0; i < n && i < RS_MAX_HOOKS; i++) {
        void (*h)(void) = __atomic_load_n(&fork_child_hooks[i], __ATOMIC_ACQUIRE);
        if (h) h();
    }
}

void rs_run_shutdown_hooks(void)
{
    static _Atomic int ran;
    if (atomic_exchange(&ran, 1)) return;
    int n = atomic_load(&n_shutdown);
    for (int i = 0; i < n && i < RS_MAX_HOOKS; i++) {
        void (*h)(void) = __atomic_load_n(&shutdown_hooks[i], __ATOMIC_ACQUIRE);
        if (h) h();
    }
}

/* ---- start ---- */

void rs_core_start(void)
{
    int exp = RS_ST_OFF;
    if (!atomic_compare_exchange_strong(&rs_state, &exp, RS_ST_STARTING)) return;
    int g = rs_tls.guard;
    rs_tls.guard = 1;
    /* setuid/setgid programs (AT_SECURE) are left alone: the loader already ignores LD_PRELOAD for them
     * unless the library is in a trusted path, and we will not write files with their privileges. */
    if (getauxval(AT_SECURE) || rs_config_load() != 0) {
        atomic_store(&rs_state, RS_ST_DISABLED);
        rs_tls.guard = g;
        return;
    }
    rs_pid = getpid();
    rs_clock_init();
    if (pthread_key_create(&ring_key, thread_gone) == 0) ring_key_ok = 1;
    if (rs_writer_thread_start(1) != 0) {
        atomic_store(&rs_state, RS_ST_DISABLED);
        rs_tls.guard = g;
        return;
    }
    rs_lifecycle_init();
    __atomic_store_n(&rs_enabled_mask, rs_cfg.mask, __ATOMIC_RELAXED);
    atomic_store(&rs_state, RS_ST_RUNNING);
    rs_tls.guard = g;
}

__attribute__((constructor)) static void rs_core_ctor(void) { rs_core_start(); }
