/* The source behind rs_now(): CLOCK_MONOTONIC through the vDSO, or the TSC converted to CLOCK_MONOTONIC
 * nanoseconds with a calibration the writer thread keeps close to clock_gettime (rs_clock_tick). The
 * file format does not change: timestamps are CLOCK_MONOTONIC ns either way; the header's CLOCK tag says
 * "monotonic/tsc" when the TSC was the source.
 *
 * Calibration (writer thread only, under the writer lock, so fork never sees it half done):
 * - A process starts on the vDSO. The first record is published once the writer has watched the TSC
 *   against clock_gettime for >= 20 ms; then every 100 ms a new record is published whose rate is the
 *   measured TSC rate over the last 4-8 s, corrected so that the current error (rs_now - clock_gettime)
 *   is worked off over the next second (slewing, never stepping back).
 * - Per-thread monotonicity across a new record: records cross at base_tsc. A record that runs faster
 *   than the last one crosses it at the sampling instant (already past: every later reading is at least
 *   what the old record gives); one that runs slower crosses it 2 ms in the future and is published only
 *   while that instant is still >= 1 ms away, so until the crossing the new line lies above the old one.
 *   The first record (vDSO -> TSC) is biased up by the sampling uncertainty for the same reason.
 * - An error beyond 10 ms (a TSC that stops, jumps or runs at another rate than the kernel believes)
 *   gives one warning and the vDSO from then on. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core_int.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

struct rs_clock rs_clk;

static int use_tsc; /* chosen at start: the TSC is (to be) the source */
static struct rs_clock_stats stats;

#define CAL_FIRST_NS  20000000ull   /* watch this long before the first record */
#define CAL_EVERY_NS  100000000ull  /* then publish a record this often */
#define CAL_SLEW_NS   1000000000ull /* work the error off over this long */
#define CAL_BASE_NS   4000000000ull /* rate measured over 4-8 s */
#define CAL_AHEAD_NS  2000000ull    /* a slower record crosses the old one this far ahead */
#define CAL_GIVEUP_NS 10000000ll    /* this far off: the TSC is not usable */

static uint64_t vdso_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
static inline uint64_t tsc_ordered(void)
{
    uint32_t lo, hi;
    __asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi)::"memory");
    return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t tsc_plain(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi)::"memory");
    return ((uint64_t)hi << 32) | lo;
}

/* One (tsc, ns) pair: the tightest of a few brackets tsc1 < clock_gettime < tsc2. *win_ns = how far
 * apart the bracket's TSC readings were (in ns once a rate is known, else in ticks): the pair's uncertainty. */
static void sample(uint64_t *tsc, uint64_t *ns, uint64_t *win)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = tsc_ordered(), n = vdso_ns(), b = tsc_ordered();
        if (b - a < best) {
            best = b - a;
            *tsc = a + (b - a) / 2;
            *ns = n;
        }
    }
    *win = best;
}

static uint64_t ticks_to_ns(uint64_t ticks, uint64_t mult)
{
    return (uint64_t)(((unsigned __int128)ticks * mult) >> 32);
}
static uint64_t ns_to_ticks(uint64_t ns, uint64_t mult) { return (uint64_t)(((unsigned __int128)ns << 32) / mult); }

/* The published record's value at tsc (what rs_now would return). */
static uint64_t conv(const struct rs_clock_slot *c, uint64_t tsc)
{
    int64_t d = (int64_t)(tsc - c->base_tsc);
    return c->base_ns + (uint64_t)(int64_t)(((__int128)d * (__int128)c->mult) >> 32);
}

static void publish(uint64_t base_tsc, uint64_t base_ns, uint64_t mult)
{
    uint32_t s = __atomic_load_n(&rs_clk.seq, __ATOMIC_RELAXED);
    struct rs_clock_slot *c = &rs_clk.slot[(s + 1) & 1];
    /* Release stores: a reader that sees any of them sees seq != s on its re-check (it was s+1 first). */
    __atomic_store_n(&c->mult, mult, __ATOMIC_RELEASE);
    __atomic_store_n(&c->base_tsc, base_tsc, __ATOMIC_RELEASE);
    __atomic_store_n(&c->base_ns, base_ns, __ATOMIC_RELEASE);
    __atomic_store_n(&rs_clk.seq, s + 1, __ATOMIC_RELEASE);
    __atomic_store_n(&stats.records, stats.records + 1, __ATOMIC_RELAXED); /* read by rs_clock_get_stats */
}

/* The CPU's invariant TSC bit (CPUID 0x80000007, EDX bit 8): what the kernel's constant_tsc and nonstop_tsc flags
 * in /proc/cpuinfo come from (it sets both from this bit on Intel, AMD, Hygon, Centaur and Zhaoxin; without the bit
 * nonstop_tsc is never set). Read here rather than /proc/cpuinfo, which every traced process read in its constructor
 * when the kernel's clocksource is not tsc (the usual KVM guest): 0.2-0.5 ms of its start-up on the dev VM
 * (bench/RESULTS.md, "Session 31"). */
static int invariant_tsc_flags(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000007, &a, &b, &c, &d)) return 0; /* the leaf is beyond the CPU's highest */
    return (d >> 8) & 1;
}

static int kernel_uses_tsc(void)
{
    char b[32] = "";
    int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = read(fd, b, sizeof b - 1);
    close(fd);
    return n >= 3 && !strncmp(b, "tsc", 3) && (n == 3 || b[3] == '\n');
}

/* ns per call of rdtsc and of clock_gettime, measured side by side (medians of 5 runs of 64). */
static void read_costs(double *tsc_ns, double *vdso_ns_out)
{
    volatile uint64_t sink;
    uint64_t t[5], v[5];
    for (int r = 0; r < 5; r++) {
        uint64_t a = vdso_ns();
        for (int i = 0; i < 64; i++) sink = tsc_plain();
        uint64_t b = vdso_ns();
        for (int i = 0; i < 64; i++) sink = vdso_ns();
        uint64_t c = vdso_ns();
        t[r] = b - a;
        v[r] = c - b;
    }
    (void)sink;
    for (int i = 0; i < 5; i++) /* 5 elements: sort, take the middle */
        for (int j = i + 1; j < 5; j++) {
            if (t[j] < t[i]) {
                uint64_t x = t[i];
                t[i] = t[j];
                t[j] = x;
            }
            if (v[j] < v[i]) {
                uint64_t x = v[i];
                v[i] = v[j];
                v[j] = x;
            }
        }
    *tsc_ns = (double)t[2] / 64;
    *vdso_ns_out = (double)v[2] / 64;
}
#endif

void rs_clock_init(void)
{
    use_tsc = 0;
    memset(&stats, 0, sizeof stats);
    if (rs_cfg.clock == RS_CLOCK_MONOTONIC) return;
#if defined(__x86_64__)
    if (rs_cfg.clock == RS_CLOCK_TSC) {
        /* Asked for: trusted, but say so when the kernel would not vouch for it. */
        if (!kernel_uses_tsc() && !invariant_tsc_flags())
            rs_warn("RAILSCOPE_CLOCK=tsc: this CPU does not report an invariant TSC (constant_tsc, nonstop_tsc) "
                    "and the kernel does not use it; timestamps may be off");
        use_tsc = 1;
        return;
    }
    if (!kernel_uses_tsc() && !invariant_tsc_flags()) return;
    double t, v;
    read_costs(&t, &v);
    stats.tsc_read_ns = t;
    stats.vdso_read_ns = v;
    use_tsc = t < 0.8 * v; /* a trapped or slow rdtsc (some VMs) is not worth it */
#else
    if (rs_cfg.clock == RS_CLOCK_TSC) rs_warn("RAILSCOPE_CLOCK=tsc: no TSC on this architecture; using monotonic");
#endif
}

const char *rs_clock_name(void) { return __atomic_load_n(&use_tsc, __ATOMIC_RELAXED) ? "monotonic/tsc" : "monotonic"; }

/* Writer thread, every loop (cheap when nothing is due: one clock_gettime). */
void rs_clock_tick(void)
{
#if defined(__x86_64__)
    static uint64_t a_tsc, a_ns, b_tsc, b_ns, last_ns;
    if (!use_tsc) return;
    uint64_t now = vdso_ns();
    if (a_ns && now - last_ns < (stats.records ? CAL_EVERY_NS : CAL_FIRST_NS)) return;
    uint64_t tsc = 0, ns = 0, win = 0;
    sample(&tsc, &ns, &win);
    last_ns = ns;
    if (!a_ns) { /* first sample: start watching */
        a_tsc = b_tsc = tsc;
        a_ns = b_ns = ns;
        return;
    }
    if (tsc <= a_tsc || ns <= a_ns) return; /* cannot happen with an invariant TSC; wait for sense */
    /* The TSC's rate in ns per tick (<< 32), over the older anchor (4-8 s back once warmed up). */
    uint64_t rate = (uint64_t)(((unsigned __int128)(ns - a_ns) << 32) / (tsc - a_tsc));
    if (!rate) return;
    if (ns - b_ns >= CAL_BASE_NS) {
        a_tsc = b_tsc, a_ns = b_ns;
        b_tsc = tsc, b_ns = ns;
    }
    uint64_t win_ns = ticks_to_ns(win, rate);
    uint32_t s = __atomic_load_n(&rs_clk.seq, __ATOMIC_RELAXED);
    struct rs_clock_slot cur = rs_clk.slot[s & 1];
    if (!cur.mult) {
        /* vDSO -> TSC: cross it 2 ms ahead, biased up by the pair's uncertainty (see the top). */
        uint64_t ahead = ns_to_ticks(CAL_AHEAD_NS, rate);
        uint64_t base_ns = ns + ticks_to_ns(ahead, rate) + win_ns + 2;
        if (tsc_ordered() - tsc > ahead / 2) return; /* preempted since the sample: next time */
        publish(tsc + ahead, base_ns, rate);
        return;
    }
    int64_t err = (int64_t)(conv(&cur, tsc) - ns); /* > 0: we are ahead of clock_gettime */
    uint64_t aerr = (uint64_t)(err < 0 ? -err : err);
    if (aerr > stats.max_err_ns) __atomic_store_n(&stats.max_err_ns, aerr, __ATOMIC_RELAXED);
    __atomic_store_n(&stats.last_err_ns, err, __ATOMIC_RELAXED);
    if (err > CAL_GIVEUP_NS || err < -CAL_GIVEUP_NS) {
        rs_warn("the TSC is %.3f ms off CLOCK_MONOTONIC; using clock_gettime from now on", (double)err / 1e6);
        __atomic_store_n(&use_tsc, 0, __ATOMIC_RELAXED);
        publish(0, 0, 0);
        return;
    }
    /* Slew: rate * (1 - err / 1 s), the correction at most 500 ppm (err clamped to 500 us). */
    int64_t e = err > 500000 ? 500000 : err < -500000 ? -500000 : err;
    uint64_t mult = (uint64_t)((__int128)rate * (int64_t)(CAL_SLEW_NS - e) / (int64_t)CAL_SLEW_NS);
    if (mult >= cur.mult) {
        /* Faster (or equal): cross at the sample, already past. */
        publish(tsc, conv(&cur, tsc), mult);
    } else {
        uint64_t ahead = ns_to_ticks(CAL_AHEAD_NS, cur.mult);
        uint64_t base = tsc + ahead, base_ns = conv(&cur, base);
        if (tsc_ordered() - tsc > ahead / 2) return; /* too late to publish safely: next time */
        publish(base, base_ns, mult);
    }
#endif
}

/* Any thread (tests, benches): the counters the writer thread updates are read atomically. */
void rs_clock_get_stats(struct rs_clock_stats *st)
{
    *st = (struct rs_clock_stats){
        .tsc = __atomic_load_n(&use_tsc, __ATOMIC_RELAXED),
        .records = __atomic_load_n(&stats.records, __ATOMIC_RELAXED),
        .max_err_ns = __atomic_load_n(&stats.max_err_ns, __ATOMIC_RELAXED),
        .last_err_ns = __atomic_load_n(&stats.last_err_ns, __ATOMIC_RELAXED),
        .tsc_read_ns = stats.tsc_read_ns, /* set at start, before any thread */
        .vdso_read_ns = stats.vdso_read_ns,
    };
}
