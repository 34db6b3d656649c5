/* Recording-core benchmarks, measured against baselines in the same run (the machine is shared, so
 * only ratios and medians mean anything). The core is linked in statically and started by its
 * constructor; RAILSCOPE_OUT must point at a scratch directory.
 *
 *   bench_core hot                 ns per event on the hot path vs an empty loop; clock costs
 *   bench_core sustained T N       T threads emit N 64-byte events each as fast as they can
 *                                  (run with RAILSCOPE_POLICY=block: the rate the writer sustains
 *                                  with zero drops)
 *   bench_core paced T N RATE      same at RATE events/s per thread (drop policy): prints drops
 *   bench_core bytes FILE N        offline writer: N verbs-like events (post_send + completion
 *                                  pairs, realistic fields) into FILE; prints bytes/event
 *   bench_core clock S T           T threads compare rs_now() with clock_gettime(CLOCK_MONOTONIC) for
 *                                  S seconds: deviation (max, p99, median), backward steps per thread
 */
#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "core_int.h"
#include "rs_tracer.h"
#include "writer.h"

static uint64_t now_ns(void) { return rs_now(); }

static uint64_t vdso_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Events per timed batch: 4096 x 64 B = 256 KiB, well inside the default 2 MiB ring, so no drops in a
 * batch; the writer drains between batches. RS_BENCH_BATCH overrides. */
static int BATCH = 4096;
#define ROUNDS 101

static volatile uint64_t sink;

static double median_ns(uint64_t *v, int n, int per)
{
    qsort(v, (size_t)n, sizeof *v, cmp_u64);
    return (double)v[n / 2] / per;
}

static void pause_for_writer(void)
{
    struct timespec ts = {0, 20 * 1000000}; /* let the writer drain between batches */
    nanosleep(&ts, NULL);
}

static int bench_hot(void)
{
    uint64_t empty[ROUNDS], clk[ROUNDS], now[ROUNDS], tsc[ROUNDS], emit[ROUNDS], full[ROUNDS], small[ROUNDS];
    uint64_t line[ROUNDS];
    struct rs_ev_IBV_WC wc; /* 64 bytes: one cache line */
    memset(&wc, 0, sizeof wc);
    RS_EV_INIT(&wc, IBV_WC, 1);
    wc.bytes = 4096;
    struct rs_ev_MARK mk;
    RS_EV_INIT(&mk, MARK, 1);
    mk.name = 0;
    mk.pad = 0;
    struct rs_ev_IBV_POST_SEND ev;
    memset(&ev, 0, sizeof ev);
    RS_EV_INIT(&ev, IBV_POST_SEND, 1);
    ev.bytes = 4096;
    uint64_t drops = 0;
    for (int r = 0; r < ROUNDS; r++) {
        uint64_t t0 = now_ns();
        for (int i = 0; i < BATCH; i++) {
            sink = (uint64_t)i; /* the loop a wrapper would be in anyway */
        }
        uint64_t t1 = now_ns();
        for (int i = 0; i < BATCH; i++) sink = vdso_ns();
        uint64_t t1b = now_ns();
        for (int i = 0; i < BATCH; i++) sink = rs_now();
        uint64_t t2 = now_ns();
        for (int i = 0; i < BATCH; i++) sink = __rdtsc();
        uint64_t t3 = now_ns();
        for (int i = 0; i < BATCH; i++) {
            ev.wr_id = (uint64_t)i;
            sink = (uint64_t)i;
            drops += !rs_emit(&ev.h);
        }
        uint64_t t4 = now_ns();
        pause_for_writer();
        uint64_t t5 = now_ns();
        for (int i = 0; i < BATCH; i++) {
            ev.h.ts = rs_now();
            ev.wr_id = (uint64_t)i;
            sink = (uint64_t)i;
            drops += !rs_emit(&ev.h);
        }
        uint64_t t6 = now_ns();
        pause_for_writer();
        uint64_t t7 = now_ns();
        for (int i = 0; i < BATCH; i++) {
            mk.value = (uint64_t)i;
            sink = (uint64_t)i;
            drops += !rs_emit(&mk.h);
        }
        small[r] = now_ns() - t7;
        pause_for_writer();
        uint64_t t8 = now_ns();
        for (int i = 0; i < BATCH; i++) {
            wc.wr_id = (uint64_t)i;
            sink = (uint64_t)i;
            drops += !rs_emit(&wc.h);
        }
        line[r] = now_ns() - t8;
        pause_for_writer();
        empty[r] = t1 - t0;
        clk[r] = t1b - t1;
        now[r] = t2 - t1b;
        tsc[r] = t3 - t2;
        emit[r] = t4 - t3;
        full[r] = t6 - t5;
    }
    double e = median_ns(empty, ROUNDS, BATCH), c = median_ns(clk, ROUNDS, BATCH), t = median_ns(tsc, ROUNDS, BATCH);
    double m = median_ns(emit, ROUNDS, BATCH), f = median_ns(full, ROUNDS, BATCH);
    printf("hot.empty_loop_ns %.2f\n", e);
    struct rs_clock_stats cs;
    rs_clock_get_stats(&cs);
    printf("hot.clock_gettime_ns %.2f\n", c);
    printf("hot.rs_now_ns %.2f  (source: %s, %llu calibration records so far)\n", median_ns(now, ROUNDS, BATCH),
           rs_clock_name(), (unsigned long long)cs.records);
    printf("hot.rdtsc_ns %.2f\n", t);
    /* The 80-byte event is a post_send (the largest common event), 64 bytes a work completion, 32 a MARK. */
    printf("hot.emit_80B_ns %.2f  (rs_emit of a prebuilt 80-byte post_send event, loop included)\n", m);
    printf("hot.emit_64B_ns %.2f  (a 64-byte work completion: one cache line)\n", median_ns(line, ROUNDS, BATCH));
    printf("hot.emit_32B_ns %.2f  (a 32-byte event: two per cache line)\n", median_ns(small, ROUNDS, BATCH));
    printf("hot.now_plus_emit_ns %.2f  (timestamp + rs_emit of the 80-byte event: what a wrapper adds)\n", f);
    printf("hot.cost_over_empty_ns %.2f\n", f - e);
    printf("hot.ratio_vs_empty %.1f\n", e > 0 ? f / e : 0);
    printf("hot.drops %llu\n", (unsigned long long)drops);
    return 0;
}

struct targ {
    long n, rate;
    uint64_t dropped, cpu_ns;
};

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time of the writer thread so far (schedstat: ns on a CPU), found by its name among this process's
 * threads (/proc/self/task: a scan of candidate tids cost ~0.3 s of kernel time per call). */
static uint64_t writer_cpu_ns(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return 0;
    uint64_t ns = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        char p[300], name[32] = "";
        snprintf(p, sizeof p, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(p, "re");
        if (!f) continue;
        if (!fgets(name, sizeof name, f)) name[0] = 0;
        fclose(f);
        if (strncmp(name, "railscope-wr", 12)) continue;
        snprintf(p, sizeof p, "/proc/self/task/%s/schedstat", e->d_name);
        unsigned long long v = 0;
        if ((f = fopen(p, "re"))) {
            if (fscanf(f, "%llu", &v) != 1) v = 0;
            fclose(f);
        }
        ns = v;
        break;
    }
    closedir(d);
    return ns;
}

static void *emit_thread(void *p)
{
    struct targ *a = p;
    struct rs_ev_IBV_POST_SEND ev;
    memset(&ev, 0, sizeof ev);
    RS_EV_INIT(&ev, IBV_POST_SEND, 0);
    ev.bytes = 65536;
    ev.qp_num = 77;
    uint64_t t0 = rs_now();
    for (long i = 0; i < a->n;) {
        long due = a->n;
        if (a->rate) {
            /* paced in bursts: emit what is due, then sleep 1 ms. A thread that was descheduled (a
             * shared 2-core machine: tens of ms) does not catch up with one burst of everything it
             * missed: at most 2 ms worth, the schedule slides. Bursts are what the ring absorbs, not
             * the sustained rate measured here; the rate printed is the achieved one (events/elapsed). */
            uint64_t now = rs_now();
            due = (long)((double)(now - t0) * (double)a->rate / 1e9) + 1;
            long burst = a->rate / 500 + 1;
            if (due > i + burst) {
                t0 = now - (uint64_t)((double)(i + burst) * 1e9 / (double)a->rate);
                due = i + burst;
            }
            if (due > a->n) due = a->n;
            if (due <= i) {
                struct timespec ts = {0, 1000000};
                nanosleep(&ts, NULL);
                continue;
            }
        }
        for (; i < due; i++) {
            ev.h.ts = rs_now();
            ev.wr_id = (uint64_t)i;
            ev.remote_addr = 0x7f0000000000ull + ((uint64_t)i & 255) * 65536;
            a->dropped += !rs_emit(&ev.h);
        }
    }
    a->cpu_ns = thread_cpu_ns();
    return NULL;
}

static int bench_threads(int t, long n, long rate)
{
    pthread_t th[64];
    struct targ a[64];
    if (t < 1 || t > 64) return 2;
    uint64_t w0 = writer_cpu_ns(), t0 = now_ns();
    for (int i = 0; i < t; i++) {
        a[i] = (struct targ){n, rate, 0, 0};
        pthread_create(&th[i], NULL, emit_thread, &a[i]);
    }
    uint64_t drops = 0, pcpu = 0;
    for (int i = 0; i < t; i++) {
        pthread_join(th[i], NULL);
        drops += a[i].dropped;
        pcpu += a[i].cpu_ns;
    }
    rs_core_flush(); /* count the time to get everything into the file */
    uint64_t dt = now_ns() - t0, wcpu = writer_cpu_ns() - w0;
    double rate_total = (double)n * t / ((double)dt / 1e9), nev = (double)n * t;
    /* CPU per event: producers' (timestamp + rs_emit + the loop; paced runs include their sleeps' wakeups)
     * and the writer's (drain, transform, compress, write), from the threads' CPU clocks. */
    printf("threads %d events %ld elapsed_s %.3f events_per_s %.0f drops %llu producer_cpu_ns_per_event %.1f "
           "writer_cpu_ns_per_event %.1f\n",
           t, n * t, (double)dt / 1e9, rate_total, (unsigned long long)drops, (double)pcpu / nev,
           (double)wcpu / (nev - (double)drops));
    return 0;
}

/* A verbs-like stream: a few QPs, each posting RDMA writes of a handful of sizes from a ring of
 * buffers, and the completions polled shortly after. */
static int bench_bytes(const char *path, long n)
{
    struct rs_file_info fi = {
        .host = "bench", .pid = 1, .rank = 0, .local_rank = 0, .world_size = 8, .cmdline = "bench", .events = "all"};
    int err;
    unlink(path);
    struct rs_writer *w = rs_writer_open(path, &fi, &err);
    if (!w) {
        fprintf(stderr, "bench: cannot create %s\n", path);
        return 2;
    }
    int level = getenv("RAILSCOPE_ZSTD_LEVEL") ? atoi(getenv("RAILSCOPE_ZSTD_LEVEL")) : 1;
    rs_writer_set_level(w, level);
    if (getenv("RAILSCOPE_FIELD_DELTA")) rs_writer_set_field_delta(w, atoi(getenv("RAILSCOPE_FIELD_DELTA")));
    if (getenv("RAILSCOPE_ZSTD_THREADS")) rs_writer_set_threads(w, atoi(getenv("RAILSCOPE_ZSTD_THREADS")));
    uint64_t ts = 1000000000ull, seed = 42, busy = 0;
    static unsigned char buf[64 * 1024];
    size_t used = 0;
    long events = 0;
    for (long i = 0; events < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t qp = 0x100 + (uint32_t)(i % 4);
        uint64_t sizes[] = {65536, 524288, 4096, 131072};
        uint64_t sz = sizes[(i / 64) % 4];
        struct rs_ev_IBV_POST_SEND p;
        memset(&p, 0, sizeof p);
        ts += 800 + (seed >> 54); /* ~1 us apart, jittered */
        RS_EV_INIT(&p, IBV_POST_SEND, ts);
        p.wr_id = (uint64_t)i;
        p.bytes = sz;
        p.remote_addr = 0x7f3a00000000ull + (uint64_t)(i % 16) * sz;
        p.local_addr = 0x7f5b00000000ull + (uint64_t)(i % 16) * sz;
        p.qp_num = qp;
        p.opcode = 0; /* RDMA_WRITE */
        p.send_flags = 2;
        p.num_sge = 1;
        p.rkey = 0x2a3b;
        p.mem = 3;
        struct rs_ev_IBV_WC c;
        memset(&c, 0, sizeof c);
        RS_EV_INIT(&c, IBV_WC, ts + 2000 + (seed >> 52));
        c.wr_id = (uint64_t)i;
        c.cq = 0x55d0c0de0000ull + (qp & 3) * 0x100;
        c.qp_num = qp;
        c.opcode = 1;
        c.bytes = (uint32_t)sz;
        memcpy(buf + used, &p, sizeof p);
        used += sizeof p;
        memcpy(buf + used, &c, sizeof c);
        used += sizeof c;
        events += 2;
        if (used + 256 > sizeof buf) {
            uint64_t t0 = now_ns();
            rs_writer_append(w, 4242, buf, used);
            busy += now_ns() - t0;
            used = 0;
        }
    }
    uint64_t t0 = now_ns();
    if (used) rs_writer_append(w, 4242, buf, used);
    struct rs_writer_stats st;
    rs_writer_flush(w);
    busy += now_ns() - t0;
    rs_writer_stats(w, &st);
    rs_writer_close(w);
    printf("bytes.level %d events %ld file_bytes %llu bytes_per_event %.2f raw_per_event %.1f "
           "writer_events_per_s %.0f\n",
           level, events, (unsigned long long)st.file_bytes, (double)st.file_bytes / (double)events,
           (double)st.raw_bytes / (double)events, (double)events / ((double)busy / 1e9));
    return 0;
}

/* rs_now() against clock_gettime: each sample brackets rs_now() between two clock_gettime calls and
 * counts how far outside the bracket it fell (0 inside); brackets wider than 2 us (preempted) are skipped.
 * Each thread also checks its own rs_now() never decreases. */
struct clk_arg {
    double secs;
    uint64_t n, skipped, backward, ahead, *dev;
    size_t cap;
};

static void *clock_thread(void *p)
{
    struct clk_arg *a = p;
    uint64_t end = vdso_ns() + (uint64_t)(a->secs * 1e9), last = 0;
    while (a->n < a->cap) {
        uint64_t c1 = vdso_ns(), r = rs_now(), c2 = vdso_ns();
        if (r < last) a->backward++;
        last = r;
        if (c2 > end) break;
        if (c2 - c1 > 2000) {
            a->skipped++;
            continue;
        }
        a->dev[a->n++] = r < c1 ? c1 - r : r > c2 ? r - c2 : 0;
        a->ahead += r > c2;
        for (volatile int i = 0; i < 200; i++) {} /* ~10 M samples/s would only measure the bracket */
    }
    return NULL;
}

static int bench_clock(double secs, int t)
{
    pthread_t th[64];
    struct clk_arg a[64];
    if (t < 1 || t > 64) return 2;
    size_t cap = (size_t)(secs * 4e6) + 1000;
    for (int i = 0; i < t; i++) {
        a[i] = (struct clk_arg){secs, 0, 0, 0, 0, malloc(cap * sizeof(uint64_t)), cap};
        if (!a[i].dev) return 2;
        pthread_create(&th[i], NULL, clock_thread, &a[i]);
    }
    uint64_t n = 0, skipped = 0, backward = 0, ahead = 0;
    for (int i = 0; i < t; i++) {
        pthread_join(th[i], NULL);
        ahead += a[i].ahead;
        n += a[i].n;
        skipped += a[i].skipped;
        backward += a[i].backward;
    }
    uint64_t *all = malloc((n + 1) * sizeof *all);
    size_t k = 0;
    for (int i = 0; i < t; i++) {
        memcpy(all + k, a[i].dev, a[i].n * sizeof *all);
        k += a[i].n;
        free(a[i].dev);
    }
    qsort(all, k, sizeof *all, cmp_u64);
    struct rs_clock_stats cs;
    rs_clock_get_stats(&cs);
    printf("clock.source %s threads %d seconds %.1f samples %llu skipped %llu records %llu "
           "dev_median_ns %llu dev_p99_ns %llu dev_max_ns %llu ahead %.0f%% backward %llu calib_max_err_ns %llu\n",
           rs_clock_name(), t, secs, (unsigned long long)k, (unsigned long long)skipped, (unsigned long long)cs.records,
           (unsigned long long)(k ? all[k / 2] : 0), (unsigned long long)(k ? all[k * 99 / 100] : 0),
           (unsigned long long)(k ? all[k - 1] : 0), k ? 100.0 * (double)ahead / (double)k : 0.0,
           (unsigned long long)backward, (unsigned long long)cs.max_err_ns);
    free(all);
    return 0;
}

int main(int argc, char **argv)
{
    if (getenv("RS_BENCH_BATCH")) BATCH = atoi(getenv("RS_BENCH_BATCH"));
    if (argc >= 2 && !strcmp(argv[1], "hot")) return bench_hot();
    if (argc >= 4 && !strcmp(argv[1], "sustained")) return bench_threads(atoi(argv[2]), atol(argv[3]), 0);
    if (argc >= 5 && !strcmp(argv[1], "paced")) return bench_threads(atoi(argv[2]), atol(argv[3]), atol(argv[4]));
    if (argc >= 4 && !strcmp(argv[1], "bytes")) return bench_bytes(argv[2], atol(argv[3]));
    if (argc >= 4 && !strcmp(argv[1], "clock")) return bench_clock(atof(argv[2]), atoi(argv[3]));
    fprintf(stderr, "usage: bench_core hot | sustained T N | paced T N RATE | bytes FILE N | clock S T\n");
    return 2;
}
