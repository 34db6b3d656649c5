/* rs_fmt_g9() against snprintf("%.9g") on random doubles of every magnitude, values the report prints
 * (seconds, fractions, byte counts), decimal ties, round decimals and decade edges. Prints "ok N" or the first
 * mismatch. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analyze_int.h"

static uint64_t st = 88172645463325252ull;
static uint64_t rnd(void)
{
    st ^= st << 13;
    st ^= st >> 7;
    st ^= st << 17;
    return st;
}

static int check(double v, long *n)
{
    char a[64], b[RS_FMT_G9_MAX];
    snprintf(a, sizeof a, "%.9g", v);
    int len = rs_fmt_g9(b, v);
    (*n)++;
    if (strcmp(a, b) || len != (int)strlen(a)) {
        printf("mismatch for %a: printf \"%s\", rs_fmt_g9 \"%s\" (%d)\n", v, a, b, len);
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    long count = argc > 1 ? atol(argv[1]) : 2000000, n = 0;
    double fixed[] = {0.0,          -0.0,          1,
                      -1,           0.5,           1e-5,
                      1e-4,         9.99999999e-5, 0.0001,
                      1e8,          1e9,           999999999.5,
                      99999999.95,  123456789,     1234567890,
                      0.1,          0.3,           2.304e-06,
                      1e16,         1e17,          1e22,
                      1e-300,       5e-324,        1.7e308,
                      0.0769333579, 16318464,      1800000000001809408.0};
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++)
        if (check(fixed[i], &n) || check(-fixed[i], &n)) return 1;
    for (long i = 0; i < count; i++) {
        uint64_t r = rnd();
        double v;
        switch (i % 6) {
        case 0: /* any bit pattern that is a number */
            memcpy(&v, &r, 8);
            if (!isfinite(v)) continue;
            break;
        case 1: /* what the report prints: seconds and fractions, 1e-9 .. 1e4 */
            v = (double)(r >> 11) / 9007199254740992.0 * pow(10, (double)(rnd() % 14) - 9);
            break;
        case 2: /* ns counts as seconds */ v = (double)(r % 100000000000ull) / 1e9; break;
        case 3: /* 9-digit decimal ties: d.dddddddd5 x 10^k, and next to them */
            v = ((double)(r % 900000000ull + 100000000ull) + 0.5) * pow(10, (double)(rnd() % 30) - 20);
            v = nextafter(v, (rnd() & 1) ? 0 : INFINITY);
            break;
        case 4: /* round decimals (0.1 s, 2.5 ms, 1000 steps) and their neighbours: scaled values at 1e8 */
            v = (double)(r % 1000 + 1) * pow(10, (double)(rnd() % 40) - 20);
            for (int k = (int)(rnd() % 3); k > 0; k--) v = nextafter(v, (r & 2) ? 0 : INFINITY);
            break;
        default: /* decade edges */
            v = pow(10, (double)(r % 60) - 30);
            for (int k = (int)(rnd() % 4); k > 0; k--) v = nextafter(v, (r & 1) ? 0 : INFINITY);
            break;
        }
        if (check(v, &n) || check(-v, &n)) return 1;
    }
    printf("ok %ld\n", n);
    return 0;
}
