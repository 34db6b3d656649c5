/* What the latency benches (forklat, execlat) share: a monotonic clock in microseconds and a comparator for
 * qsort of doubles (their medians). */
#ifndef RAILSCOPE_BENCH_LAT_UTIL_H
#define RAILSCOPE_BENCH_LAT_UTIL_H

#include <time.h>

static inline double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static inline int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
