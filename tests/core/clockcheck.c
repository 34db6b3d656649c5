/* Test program for the tracer clock (core linked in statically, started by its constructor): threads
 * compare rs_now() with clock_gettime(CLOCK_MONOTONIC) and check that their own rs_now() never goes back.
 *
 *   clockcheck SECONDS THREADS [-f]
 * Prints "source=S records=R samples=N maxdev_ns=D backward=B" (-f: a forked child does the same for
 * SECONDS/2 on 2 threads first and prints its line prefixed "child "). A sample brackets rs_now() between
 * two clock_gettime calls; maxdev is how far outside the bracket it fell, over brackets < 2 us wide. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core_int.h"

static uint64_t vdso(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct arg {
    double secs;
    uint64_t samples, maxdev, backward;
};

static void *run(void *p)
{
    struct arg *a = p;
    uint64_t end = vdso() + (uint64_t)(a->secs * 1e9), last = 0;
    for (;;) {
        /* a tight run of readings: the strictest check of "never backwards" */
        for (int i = 0; i < 64; i++) {
            uint64_t r = rs_now();
            a->backward += r < last;
            last = r;
        }
        uint64_t c1 = vdso(), r = rs_now(), c2 = vdso();
        a->backward += r < last;
        last = r;
        if (c2 > end) break;
        if (c2 - c1 > 2000) continue; /* preempted inside the bracket */
        uint64_t d = r < c1 ? c1 - r : r > c2 ? r - c2 : 0;
        if (d > a->maxdev) a->maxdev = d;
        a->samples++;
    }
    return NULL;
}

static void check(const char *prefix, double secs, int t)
{
    pthread_t th[64];
    struct arg a[64];
    uint64_t samples = 0, maxdev = 0, backward = 0;
    for (int i = 0; i < t; i++) {
        a[i] = (struct arg){secs, 0, 0, 0};
        pthread_create(&th[i], NULL, run, &a[i]);
    }
    for (int i = 0; i < t; i++) {
        pthread_join(th[i], NULL);
        samples += a[i].samples;
        backward += a[i].backward;
        if (a[i].maxdev > maxdev) maxdev = a[i].maxdev;
    }
    struct rs_clock_stats cs;
    rs_clock_get_stats(&cs);
    printf("%ssource=%s records=%llu samples=%llu maxdev_ns=%llu backward=%llu\n", prefix, rs_clock_name(),
           (unsigned long long)cs.records, (unsigned long long)samples, (unsigned long long)maxdev,
           (unsigned long long)backward);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: clockcheck SECONDS THREADS [-f]\n");
        return 2;
    }
    double secs = atof(argv[1]);
    int t = atoi(argv[2]);
    if (t < 1 || t > 64) return 2;
    if (argc > 3 && !strcmp(argv[3], "-f")) {
        check("", secs / 2, t); /* calibrated in the parent first */
        pid_t p = fork();
        if (p == 0) {
            check("child ", secs / 2, 2);
            _exit(0);
        }
        int st;
        waitpid(p, &st, 0);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    }
    check("", secs, t);
    return 0;
}
