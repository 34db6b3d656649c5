/* rs-readcheck: drains trace files with the reader library and prints one line per file:
 *     NAME STATUS EVENTS FRAMES UNKNOWN | REASON
 * STATUS is the reader's status name, or "refused" when rs_reader_open() failed (REASON = its error).
 * The corpus test compares these lines against tests/corpus/EXPECT. */
#include <stdio.h>
#include <string.h>

#include "reader.h"

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *base = strrchr(argv[i], '/');
        base = base ? base + 1 : argv[i];
        char name[256];
        snprintf(name, sizeof name, "%s", base);
        char *dot = strstr(name, ".rtrace");
        if (dot) *dot = 0;
        char err[256] = "";
        struct rs_reader *r = rs_reader_open(argv[i], err, sizeof err);
        if (!r) {
            printf("%s refused - - - | %s\n", name, err);
            continue;
        }
        struct rs_event e;
        long n = 0;
        while (rs_reader_next(r, &e) > 0) n++;
        const struct rs_read_stats *st = rs_reader_stats(r);
        printf("%s %s %ld %llu %llu | %s\n", name, rs_read_status_name(st->status), n,
               (unsigned long long)st->frames, (unsigned long long)st->unknown_events, st->reason);
        rs_reader_close(r);
    }
    return 0;
}
