/* The recording core's API for interposers (preload/). Everything here is safe to call from any thread,
 * before or after the core has started, and from inside wrappers; the hot-path calls never lock, never
 * allocate and never block. The core knows nothing of verbs, CUDA or NCCL.
 *
 * A wrapper's skeleton is the macros of preload/dl.h (the one way to write a wrapper; used by verbs*.c, nccl.c,
 * cuda/cudart.c, cuda/cupti.c):
 *     RS_REAL(ibv_foo, int, (int a), rs_dl_real("libx.so", "ibv_foo"))   typed slot, lazy safe resolution
 *     static int wrap_ibv_foo(int a) {
 *         RS_WRAP_REAL(ibv_foo, errno = ENOSYS; return -1);     never call NULL
 *         RS_WRAP_ENTER(RS_FAM_verbs, rs_guard);               rs_rec: family on and the guard is ours; rs_t0
 *         RS_WRAP_CALL((a));                                   rs_ret, rs_errno: the real call's
 *         if (rs_rec) { struct rs_ev_X ev; RS_EV_INIT(&ev, X, rs_t0); ...; rs_emit(&ev.h); }   record
 *         RS_WRAP_LEAVE(rs_guard);                             guard exit, errno = rs_errno, return rs_ret
 *     }
 * (RS_WRAP_FORWARD instead of RS_WRAP_ENTER forwards untouched when not recording.)
 */
#ifndef RAILSCOPE_TRACER_H
#define RAILSCOPE_TRACER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "../formats/rtrace.h"

#define RS_EXPORT      __attribute__((visibility("default")))
/* For code a sanitizer runtime can reach before it is initialised (its start-up calls sigaction and dlsym,
 * which this library interposes): no instrumentation, so no call into the not-yet-ready runtime. */
#define RS_NO_SANITIZE __attribute__((no_sanitize("address", "undefined", "thread")))
#define RS_LIKELY(x)   __builtin_expect(!!(x), 1)
#define RS_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Bit mask of enabled families (1u << RS_FAM_x); 0 until the core has started, 0 again after shutdown
 * and in processes left untraced (setuid, RAILSCOPE_DISABLE). */
extern unsigned rs_enabled_mask;
int rs_bench_hooks_on(void); /* RAILSCOPE_BENCH_HOOKS=1: bench/gpu/parttoggle.py's switches work */
/* Relaxed atomic: written at start and at shutdown while any thread may be reading it (a plain load on x86), and
 * by the bench's switches (tracer/bench_hooks.c, only with RAILSCOPE_BENCH_HOOKS=1). */
static inline bool rs_on(enum rs_family fam)
{
    return RS_LIKELY(__atomic_load_n(&rs_enabled_mask, __ATOMIC_RELAXED) & (1u << fam));
}

/* The calibrated TSC behind rs_now() (tracer/clock.c). The writer thread publishes a conversion
 * ns = base_ns + (tsc - base_tsc) * mult / 2^32 into the slot that readers do not use, then bumps seq;
 * readers take slot[seq & 1] and retry if seq moved meanwhile (never spin on a writer that was
 * preempted). mult == 0: not calibrated (yet), or RAILSCOPE_CLOCK=monotonic: read the vDSO. */
struct rs_clock_slot {
    uint64_t base_tsc, base_ns, mult;
};
struct rs_clock {
    _Alignas(64) uint32_t seq;
    struct rs_clock_slot slot[2];
};
extern struct rs_clock rs_clk __attribute__((visibility("hidden")));

/* The tracer clock: CLOCK_MONOTONIC in ns (the format's timestamps), whatever the source. With the TSC:
 * rdtsc and a multiply (~2.5x cheaper than clock_gettime here), within a few hundred ns of
 * clock_gettime(CLOCK_MONOTONIC) and never going backwards within a thread (bench/core/RESULTS.md). */
static inline uint64_t rs_now(void)
{
#if defined(__x86_64__)
    for (;;) {
        uint32_t s = __atomic_load_n(&rs_clk.seq, __ATOMIC_ACQUIRE);
        const struct rs_clock_slot *c = &rs_clk.slot[s & 1];
        uint64_t mult = __atomic_load_n(&c->mult, __ATOMIC_ACQUIRE);
        if (!mult) break;
        uint64_t bt = __atomic_load_n(&c->base_tsc, __ATOMIC_ACQUIRE);
        uint64_t bn = __atomic_load_n(&c->base_ns, __ATOMIC_ACQUIRE);
        uint32_t lo, hi;
        __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi)::"memory"); /* "memory": stays between the loads */
        if (RS_LIKELY(__atomic_load_n(&rs_clk.seq, __ATOMIC_ACQUIRE) == s)) {
            int64_t d = (int64_t)((((uint64_t)hi << 32) | lo) - bt); /* < 0 before a base set ahead */
            return bn + (uint64_t)(int64_t)(((__int128)d * (__int128)mult) >> 32);
        }
    }
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Copy one event (h->size bytes, h->size a multiple of 8) into the calling thread's buffer. Returns false
 * when it was dropped (buffer full under the drop policy, core not running); drops are counted. */
bool rs_emit(const struct rs_ev_hdr *h);
/* Same, on behalf of another thread id (e.g. CUPTI records delivered on CUPTI's thread for many
 * threads: pass tid 0 for "device/background"). */
bool rs_emit_as(uint32_t tid, const struct rs_ev_hdr *h);

/* Intern a string; returns its id (>0), the same id for the same bytes; 0 for NULL or on failure.
 * Takes a lock and may allocate: call it at setup time (device open, kernel name first seen), not per
 * event on a hot path; interposers cache ids. */
uint32_t rs_intern(const char *s);
uint32_t rs_intern_n(const char *s, size_t n);

/* Reentrancy guard, per thread: returns false if this thread is already inside a wrapper (or inside the
 * core itself), in which case the wrapper must just forward the call. */
bool rs_guard_enter(void);
void rs_guard_exit(void);

/* Warnings: one helper, "railscope: " prefix on stderr (respecting RAILSCOPE_LOG), also recorded as a
 * WARNING event. rs_warn_once() prints a given call site's message once per process. */
void rs_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* strerror without gettext's catalogs or allocation (the exit paths' warnings may run in a signal handler). */
const char *rs_strerror(int err);
void rs_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define rs_warn_once(...)                                                                 \
    do {                                                                                  \
        static int rs_warned_;                                                            \
        if (!__atomic_exchange_n(&rs_warned_, 1, __ATOMIC_RELAXED)) rs_warn(__VA_ARGS__); \
    } while (0)

/* Make sure the core is started (idempotent): entry points that can run before the constructor
 * (CUDA_INJECTION64_PATH's InitializeInjection, NCCL's plugin init) call this first. */
void rs_core_start(void);
/* Flush everything recorded so far to the file (blocking; for exit paths and CUDA/CUPTI final flush). */
void rs_core_flush(void);

/* Hooks a family registers to run at shutdown before the final flush (e.g. CUPTI flush, poll-empty
 * counters), in registration order. At most 16. */
void rs_at_shutdown(void (*fn)(void));
/* Hooks run by the writer thread once per flush interval (e.g. emitting per-CQ empty-poll counters). */
void rs_at_tick(void (*fn)(void));
/* One extra run of fn on the writer thread at the first wake at or after `at` (rs_now()'s clock), between ticks:
 * for work that a whole tick's wait would make costly (CUPTI's detach once a window's last records are in). One
 * request at a time: a later call replaces an earlier one not yet run. fn never runs concurrently with a tick hook.
 * For the writer thread only (its tick hooks and the functions it runs this way): the slot's function and time are
 * stored one after the other, so two threads asking at once could pair one's function with the other's time. A
 * request pending at fork() is dropped in the child. */
void rs_tick_soon(void (*fn)(void), uint64_t at);
/* The writer's tick period (RAILSCOPE_FLUSH_MS) in ns: when the tick after this one comes. */
uint64_t rs_tick_period_ns(void);
/* Run fn(arg) on a short-lived thread with a file descriptor table of its own, and wait for it: what fn opens
 * never takes a number in the program's table, where a program's close() + dup2() onto the number would race
 * it (tracer/private_fds.c). Returns 1, or 0 when it ran on the calling thread (no private table to be had).
 * Not async-signal-safe (a thread is created). */
int rs_run_private_fds(void (*fn)(void *), void *arg);
/* Up to n bytes of the regular file at path from offset off (O_NOFOLLOW; a FIFO or device reads as 0 bytes, never
 * blocks); -1 when it cannot be opened. rs_private_pread reads it that way (above), rs_pread_file on this thread. */
ssize_t rs_private_pread(const char *path, void *buf, size_t n, off_t off);
ssize_t rs_pread_file(const char *path, void *buf, size_t n, off_t off);
/* Hooks run in a forked child (atfork child handler) before its writer thread starts: forget state that
 * is the parent's to record (e.g. pending empty-poll counts). Async-signal-safe work only. At most 16. */
void rs_at_fork_child(void (*fn)(void));
/* The tracer's own threads, left out of the thread count the program reads in /proc/self/stat (tracer/selfstat.c):
 * each calls this first thing; it counts until the kernel has reaped it. */
void rs_own_thread_enter(void);
int rs_own_threads(void); /* how many of them are threads of this process now */
/* Field 20 (num_threads) of a /proc/PID/stat line lowered by ours (to 1 at least) into out; its length, 0 if the
 * line is not one (exported for tests/core/selfstat_edit.c). */
size_t rs_selfstat_edit(const char *in, size_t len, int ours, char *out, size_t cap);

#endif
