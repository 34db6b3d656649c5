/* rs_selfstat_edit (tracer/selfstat.c) on crafted stat lines: field 20 lowered, to 1 at least, every other byte
 * kept; command names with spaces and ')'; lines that are not stat lines left alone. Prints "ok N" or each
 * mismatch, exits 1 on any. */
#include <stdio.h>
#include <string.h>

#include "rs_tracer.h"

static int bad;

static void expect(const char *in, int ours, const char *want)
{
    char out[512];
    size_t n = rs_selfstat_edit(in, strlen(in), ours, out, sizeof out);
    const char *got = n ? out : "(unchanged)";
    if (n) out[n] = 0;
    if (strcmp(got, want) != 0) {
        printf("edit(\"%s\", %d):\n  got  \"%s\"\n  want \"%s\"\n", in, ours, got, want);
        bad++;
    }
}

int main(void)
{
    int n = 0;
    /* fields 3..19 are 17 fields after the name: "S" then 16 numbers, then field 20 */
    expect("7 (py) S 1 1 1 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 3 0 123 4096\n", 1,
           "7 (py) S 1 1 1 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 2 0 123 4096\n"),
        n++;
    expect("7 (se lf) st at) S 1 1 1 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 12 0 123\n", 2,
           "7 (se lf) st at) S 1 1 1 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 10 0 123\n"),
        n++;
    expect("7 (a) S 1 1 1 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 10 0\n", 1,
           "7 (a) S 1 1 1 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 9 0\n"),
        n++; /* shorter by a digit */
    expect("7 (a) S 1 1 1 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 2 0\n", 5,
           "7 (a) S 1 1 1 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1 0\n"),
        n++; /* never below 1 */
    expect("7 (a) S 1 1 1 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 2", 1, "7 (a) S 1 1 1 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 1"),
        n++;                                          /* last field, no newline */
    expect("7 (a) S 1 1 1\n", 1, "(unchanged)"), n++; /* too few fields */
    expect("no parenthesis here 1 2 3", 1, "(unchanged)"), n++;
    expect("7 (a) S 1 1 1 0 -1 4194304 1 0 0 0 0 0 0 0 20 0 x 0\n", 1, "(unchanged)"), n++; /* not a number */
    if (!bad) printf("ok %d\n", n);
    return bad != 0;
}
