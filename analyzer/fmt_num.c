/* printf("%.9g") for the JSON report without printf: the report prints about a million doubles on a
 * 1024-rank job, and glibc's exact multi-precision path made that ~9 % of the report's CPU. The fast path
 * scales by one exact power of ten (one rounding, relative error <= 2^-53, so the scaled value is within
 * 1.2e-7 of the exact one) and rounds to 9 digits; whenever that error could change a digit (a rounding
 * tie within 1e-6, a magnitude out of range) it defers to snprintf (decade edges are exact: see below),
 * so the output is byte-identical to "%.9g" (tests/analyzer/fmt.t checks millions of values). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analyze_int.h"

static const double p10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                             1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int slow(char *buf, double v) { return snprintf(buf, RS_FMT_G9_MAX, "%.9g", v); }

int rs_fmt_g9(char *buf, double v)
{
    if (v == 0 && !signbit(v)) {
        buf[0] = '0';
        buf[1] = 0;
        return 1;
    }
    double a = fabs(v);
    if (!(a >= 1e-200 && a < 1e17)) /* zero, NaN, inf, and magnitudes whose scale is not one exact power */
        return slow(buf, v);
    /* decimal exponent from the binary one (no log10): off by at most one, which the loop corrects */
    int e = (int)floor(ilogb(a) * 0.30102999566398120);
    double s = 0;
    for (int tries = 0; tries < 2; tries++) {
        int k = 8 - e;
        if (k > 22 || k < -22) return slow(buf, v);
        s = k >= 0 ? a * p10[k] : a / p10[-k];
        if (s < 1e8) e--;
        else if (s >= 1e9) e++;
        else break;
    }
    if (!(s >= 1e8 && s < 1e9)) /* still off after two tries */
        return slow(buf, v);
    double fl = floor(s), frac = s - fl;
    if (fabs(frac - 0.5) < 1e-6) return slow(buf, v);
    unsigned m = (unsigned)fl + (frac > 0.5);
    /* At a decade edge the exact value may sit on the other side of the power of ten than s (it is within
     * 1.2e-7 of s): just below 1e8 (exponent e - 1), it rounds at 9 digits up to 1e9 there, which printf
     * writes as 1e8 at exponent e, as here; at 1e9 - 1 < s the digits round up to 1e9 on either side,
     * i.e. 1e8 at exponent e + 1. */
    if (m >= 1000000000u) {
        m = 100000000u;
        e++;
    }
    char d[9];
    for (int i = 8; i >= 0; i--) {
        d[i] = (char)('0' + m % 10);
        m /= 10;
    }
    int nd = 9;
    while (nd > 1 && d[nd - 1] == '0') nd--;
    char *p = buf;
    if (v < 0) *p++ = '-';
    if (e >= -4 && e < 9) { /* %g's fixed notation: 8 - e decimals, trailing zeros dropped */
        if (e >= 0) {
            for (int i = 0; i <= e; i++) *p++ = d[i];
            if (nd > e + 1) {
                *p++ = '.';
                for (int i = e + 1; i < nd; i++) *p++ = d[i];
            }
        } else {
            *p++ = '0';
            *p++ = '.';
            for (int i = 0; i < -e - 1; i++) *p++ = '0';
            for (int i = 0; i < nd; i++) *p++ = d[i];
        }
    } else {
        *p++ = d[0];
        if (nd > 1) {
            *p++ = '.';
            for (int i = 1; i < nd; i++) *p++ = d[i];
        }
        *p++ = 'e';
        *p++ = e < 0 ? '-' : '+';
        int x = e < 0 ? -e : e;
        if (x >= 100) *p++ = (char)('0' + x / 100);
        *p++ = (char)('0' + x / 10 % 10);
        *p++ = (char)('0' + x % 10);
    }
    *p = 0;
    return (int)(p - buf);
}
