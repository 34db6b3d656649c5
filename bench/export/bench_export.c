/* Exporter throughput: loads every event of the given traces into memory (so reading and zstd are out of
 * the measurement), then runs the exporter over them N times per format into /dev/null and reports the
 * best run: events/s by wall clock and by process CPU time (the machine may be shared), bytes per input
 * event, and the same for the whole `railscope export` pipeline is measured by run.sh.
 *
 *     bench-export [--reps N] [--format perfetto|chrome] TRACE...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats/export/export.h"
#include "formats/reader.h"

struct file_events {
    struct rs_header_info h;
    char host[64];
    uint8_t *buf; /* [u32 tid][u32 pad][event bytes] ... */
    size_t len, n;
};

static double now(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int reps = 3, first = 1;
    const char *only = NULL;
    while (first + 1 < argc && argv[first][0] == '-') {
        if (!strcmp(argv[first], "--reps")) reps = atoi(argv[first + 1]);
        else if (!strcmp(argv[first], "--format")) only = argv[first + 1];
        else break;
        first += 2;
    }
    if (first >= argc) {
        fprintf(stderr, "usage: bench-export [--reps N] [--format perfetto|chrome] TRACE...\n");
        return 2;
    }
    int nf = argc - first;
    struct file_events *fe = calloc((size_t)nf, sizeof *fe);
    uint64_t total = 0, base = UINT64_MAX;
    for (int i = 0; i < nf; i++) {
        char err[256];
        struct rs_reader *r = rs_reader_open(argv[first + i], err, sizeof err);
        if (!r) {
            fprintf(stderr, "bench-export: %s\n", err);
            return 2;
        }
        fe[i].h = *rs_reader_header(r);
        snprintf(fe[i].host, sizeof fe[i].host, "%s", fe[i].h.host ? fe[i].h.host : "?");
        fe[i].h.host = fe[i].host;
        if (fe[i].h.start_realtime < base) base = fe[i].h.start_realtime;
        size_t cap = 1 << 20;
        fe[i].buf = malloc(cap);
        struct rs_event e;
        while (rs_reader_next(r, &e) > 0) {
            if (!e.known) continue;
            size_t need = 8 + e.ev->size;
            if (fe[i].len + need > cap) {
                while (fe[i].len + need > cap) cap *= 2;
                fe[i].buf = realloc(fe[i].buf, cap);
            }
            uint32_t hdr[2] = {e.tid, 0};
            memcpy(fe[i].buf + fe[i].len, hdr, 8);
            memcpy(fe[i].buf + fe[i].len + 8, e.ev, e.ev->size);
            fe[i].len += need;
            fe[i].n++;
        }
        total += fe[i].n;
        rs_reader_close(r);
    }
    static const struct {
        enum rs_exp_format f;
        const char *name, *out;
    } fmts[] = {{RS_EXP_PERFETTO, "perfetto", "/dev/null"}, {RS_EXP_CHROME, "chrome", "/dev/null"}};
    printf("events in memory: %llu from %d file(s)\n", (unsigned long long)total, nf);
    for (size_t k = 0; k < sizeof fmts / sizeof fmts[0]; k++) {
        if (only && strcmp(only, fmts[k].name)) continue;
        double best_wall = 1e30, best_cpu = 1e30;
        uint64_t bytes = 0;
        for (int rep = 0; rep < reps; rep++) {
            struct rs_exp_opts o = {.format = fmts[k].f,
                                    .out = fmts[k].out,
                                    .base_realtime_ns = base,
                                    .quiet = 1,
                                    .split_bytes = 1ull << 62};
            char err[256];
            double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
            struct rs_exp *x = rs_exp_open(&o, err, sizeof err);
            if (!x) {
                fprintf(stderr, "bench-export: %s\n", err);
                return 1;
            }
            for (int i = 0; i < nf; i++) {
                struct rs_exp_proc p = {fe[i].h.host,           fe[i].h.pid,        fe[i].h.rank, fe[i].h.world_size,
                                        fe[i].h.start_realtime, fe[i].h.start_mono, NULL};
                rs_exp_begin_process(x, &p);
                for (size_t off = 0; off < fe[i].len;) {
                    uint32_t tid;
                    memcpy(&tid, fe[i].buf + off, 4);
                    const struct rs_ev_hdr *h = (const void *)(fe[i].buf + off + 8);
                    rs_exp_event(x, tid, h);
                    off += 8 + h->size;
                }
                rs_exp_end_process(x);
            }
            struct rs_exp_stats st;
            rs_exp_close(x, &st, err, sizeof err);
            double w = now(CLOCK_MONOTONIC) - w0, c = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
            if (w < best_wall) best_wall = w;
            if (c < best_cpu) best_cpu = c;
            bytes = st.bytes_out;
        }
        printf("%-9s export only: %6.2f M events/s wall, %6.2f M events/s cpu, %5.1f bytes/event, %.1f MB\n",
               fmts[k].name, total / best_wall / 1e6, total / best_cpu / 1e6, (double)bytes / total, bytes / 1e6);
    }
    return 0;
}
