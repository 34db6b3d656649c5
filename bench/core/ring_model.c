/* A model of rs_emit's copy, without the tracer: where does a 64-byte event's time go? A producer copies
 * events into a ring (batches of 4096, 2 ms apart); optionally a reader thread reads each batch after it
 * (as the writer thread does), optionally the producer prefetches for write PF bytes ahead.
 *   ring_model RING_KB EVENT_BYTES READER(0|1) PF_BYTES
 * Prints the median ns per event over 101 batches. See bench/core/RESULTS.md (Session 2). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdatomic.h>
#include <sys/mman.h>
static uint64_t now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000ull + t.tv_nsec;
}
static size_t SZ;
static unsigned char *ring;
static _Atomic uint64_t req, done_;
static uint64_t rfrom, rto;
static volatile uint64_t sink;
static void *reader(void *a)
{
    (void)a;
    uint64_t seen = 0;
    for (;;) {
        uint64_t q;
        while ((q = atomic_load(&req)) == seen) {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, 0);
        }
        if (q == ~0ull) return 0;
        uint64_t s = 0;
        for (uint64_t p = rfrom; p < rto; p += 8) s += *(uint64_t *)(ring + (p & (SZ - 1)));
        sink = s;
        seen = q;
        atomic_store(&done_, q);
    }
}
static int cmp(const void *a, const void *b)
{
    uint64_t x = *(uint64_t *)a, y = *(uint64_t *)b;
    return x < y ? -1 : x > y;
}
int main(int argc, char **argv)
{
    SZ = (size_t)atol(argv[1]) * 1024;
    int evsz = atoi(argv[2]);
    int rd = atoi(argv[3]);
    int pf = atoi(argv[4]);
    int nt = argc > 5 ? atoi(argv[5]) : 0;
    if (argc < 5) return 2;
    {
        unsigned char *m = mmap(0, SZ + (2 << 20), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ring = (unsigned char *)(((uintptr_t)m + (2 << 20) - 1) & ~(uintptr_t)((2 << 20) - 1));
        if (getenv("THP")) madvise(ring, SZ, MADV_HUGEPAGE);
    }
    memset(ring, 1, SZ);
    pthread_t th;
    if (rd) pthread_create(&th, 0, reader, 0);
    uint64_t ev[16] = {0};
    uint64_t head = 0;
    int B = 4096;
    uint64_t v[101];
    for (int r = 0; r < 101; r++) {
        uint64_t t0 = now();
        uint64_t from = head;
        for (int i = 0; i < B; i++) {
            ev[1] = i;
            sink = i;
            size_t off = head & (SZ - 1);
            uint64_t *d = (uint64_t *)(ring + off);
            if (nt) {
                for (int k = 0; k < evsz / 8; k++) __builtin_ia32_movnti64((long long *)&d[k], ev[k]);
            } else
                for (int k = 0; k < evsz / 8; k++) d[k] = ev[k];
            if (pf) __asm__ volatile("prefetchw %0" ::"m"(ring[(head + pf) & (SZ - 1)]));
            head += evsz;
        }
        v[r] = now() - t0;
        if (rd) {
            rfrom = from;
            rto = head;
            atomic_fetch_add(&req, 1);
            while (atomic_load(&done_) != atomic_load(&req))
                ;
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, 0);
    }
    qsort(v, 101, 8, cmp);
    printf("ring %zuK ev %d reader %d pf %d nt %d: %.2f ns/event\n", SZ / 1024, evsz, rd, pf, nt, (double)v[50] / B);
    return 0;
}
