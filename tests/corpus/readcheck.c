/* rs-readcheck: drains trace files with the reader library and prints one line per file:
 *     NAME STATUS EVENTS FRAMES UNKNOWN | REASON
 * STATUS is the reader's status name, or "refused" when rs_reader_open() failed (REASON = its error).
 * The corpus test compares these lines against tests/corpus/EXPECT.
 *
 * rs-readcheck -k KIND FILE...: campaign mode, one line per file:
 *     NAME STATUS events=N kind=COUNT last_ts=NS last_any_ts=NS proc_end=R drops=D
 * COUNT = events of that kind (e.g. ibv_post_send), last_ts = the latest timestamp among events that are
 * not the core's own (the application's last recorded call), proc_end = PROC_END reason or -1. */
#include <stdio.h>
#include <string.h>

#include "reader.h"

static int campaign(const char *kind, int argc, char **argv)
{
    int bad = 0;
    for (int i = 0; i < argc; i++) {
        char err[256] = "";
        struct rs_reader *r = rs_reader_open(argv[i], err, sizeof err);
        if (!r) {
            printf("%s refused | %s\n", argv[i], err);
            bad = 1;
            continue;
        }
        struct rs_event e;
        long n = 0, count = 0;
        long long proc_end = -1;
        uint64_t last = 0, last_any = 0;
        while (rs_reader_next(r, &e) > 0) {
            n++;
            const struct rs_kind_desc *d = rs_kind_get(e.ev->kind);
            const char *ln = rs_kind_lname(e.ev->kind);
            if (ln && !strcmp(ln, kind)) count++;
            if (d && d->family != RS_FAM_core && d->family != RS_FAM_host && e.ts > last) last = e.ts;
            if (e.ev->kind != RS_EV_CLOCK && e.ts > last_any) last_any = e.ts;
            if (e.ev->kind == RS_EV_PROC_END) proc_end = ((const struct rs_ev_PROC_END *)e.ev)->reason;
        }
        const struct rs_read_stats *st = rs_reader_stats(r);
        printf("%s %s events=%ld kind=%ld last_ts=%llu last_any_ts=%llu proc_end=%lld drops=%llu | %s\n", argv[i],
               rs_read_status_name(st->status), n, count, (unsigned long long)last, (unsigned long long)last_any,
               proc_end, (unsigned long long)st->drop_events, st->reason);
        rs_reader_close(r);
    }
    return bad;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !strcmp(argv[1], "-k")) return campaign(argv[2], argc - 3, argv + 3);
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
        printf("%s %s %ld %llu %llu | %s\n", name, rs_read_status_name(st->status), n, (unsigned long long)st->frames,
               (unsigned long long)st->unknown_events, st->reason);
        rs_reader_close(r);
    }
    return 0;
}
