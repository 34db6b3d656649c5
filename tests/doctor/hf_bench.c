/* Times rs_hostfacts_collect() (what the tracer runs at start): best of 20 runs over a root (default the
 * live "/"). Usage: hf-bench [SYSFS_ROOT] */
#include <stdio.h>
#include <time.h>

#include "hostfacts/hostfacts.h"

static int n;
static void cb(void *a, const char *k, const char *v)
{
    (void)a;
    (void)k;
    (void)v;
    n++;
}

int main(int argc, char **argv)
{
    double best = 1e9;
    for (int i = 0; i < 20; i++) {
        struct timespec a, b;
        n = 0;
        clock_gettime(CLOCK_MONOTONIC, &a);
        rs_hostfacts_collect(argc > 1 ? argv[1] : NULL, cb, NULL);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
        if (ms < best) best = ms;
    }
    printf("%s: %d facts, best of 20: %.2f ms\n", argc > 1 ? argv[1] : "/", n, best);
    return 0;
}
