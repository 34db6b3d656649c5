/* railscope info PATH...: what a trace file holds: header, event counts per kind, drops, time span,
 * threads, compression, and whether the file is complete. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "reader.h"
#include "util/utf8.h"
#include "util/xalloc.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: railscope info PATH...\n"
               "\n"
               "For each trace file (a directory means its *.rtrace files and those of its subdirectories):\n"
               "host, pid, rank, command line, start time, format version, frames, event counts per kind,\n"
               "events dropped by the recorder, time span, and whether the file is complete. Text from the\n"
               "trace and paths are printed as strace does: control bytes and bytes of invalid UTF-8 as \\xNN\n"
               "(\\x1b for ESC), '\\' as \\\\; the arguments of the command line are separated by spaces.\n"
               "\n"
               "Exit status: 0 all files complete (drops are reported, not an error), 1 a file is partial,\n"
               "truncated, damaged or unreadable while others were read, 2 usage or no readable input. A file\n"
               "without the recorder's end record (PROC_END: the process was killed, crashed or is still running)\n"
               "is \"incomplete\": partial, exit 1, everything in it still listed.\n");
}

/* Distinct thread ids: an open-addressing set (0 = empty; tid 0 is the tracer itself, not counted). Grows
 * with the threads seen, i.e. with the events read: 1 M threads cost 8 MB and one probe per event. */
struct tidset {
    uint32_t *v;
    size_t cap, n;
};
static void tid_add(struct tidset *s, uint32_t tid)
{
    if ((s->n + 1) * 2 > s->cap) {
        struct tidset g = {rs_xcalloc(s->cap ? s->cap * 2 : 1024, sizeof(uint32_t), "info thread set"),
                           s->cap ? s->cap * 2 : 1024, 0};
        for (size_t i = 0; i < s->cap; i++)
            if (s->v[i]) tid_add(&g, s->v[i]);
        free(s->v);
        *s = g;
    }
    size_t j = (tid * 2654435761u) & (s->cap - 1);
    for (; s->v[j]; j = (j + 1) & (s->cap - 1))
        if (s->v[j] == tid) return;
    s->v[j] = tid;
    s->n++;
}

/* Text from the trace (the traced program's argv, host name, exe path; anything in a hostile file) goes to a
 * terminal: control bytes (C0, DEL, and C1 as UTF-8: a CSI is c2 9b) and bytes of ill-formed UTF-8 are
 * written \xNN, and '\' as \\, as strace does, so no escape sequence reaches the terminal and what was
 * escaped can be told from what was typed. NUL (the separator of argv) is a space when nul_sp is set. */
static void put_text(const char *s, size_t n, int nul_sp)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t bad, k = rs_utf8_seq(p + i, n - i, &bad);
        if (k > 1 && !(p[i] == 0xc2 && p[i + 1] < 0xa0)) { /* printable non-ASCII */
            fwrite(p + i, 1, k, stdout);
            i += k;
            continue;
        }
        for (size_t j = 0; j < (k ? k : bad); j++, i++) {
            unsigned c = p[i];
            if (!c && nul_sp) putchar(' ');
            else if (c == '\\') fputs("\\\\", stdout);
            else if (c < 0x20 || c >= 0x7f) printf("\\x%02x", c);
            else putchar((int)c);
        }
    }
}

/* A header string: "?" when absent. */
static void put_str(const char *s)
{
    if (s) put_text(s, strlen(s), 0);
    else putchar('?');
}

/* The header's lines, file to boot id; every string escaped (put_text). */
static void print_header(const char *path, const struct rs_header_info *h)
{
    fputs("file:       ", stdout);
    put_str(path);
    fputs("\nhost:       ", stdout);
    put_str(h->host);
    printf("  pid %llu  ppid %llu\n", (unsigned long long)h->pid, (unsigned long long)h->ppid);
    if (h->rank >= 0 || h->world_size >= 0 || h->local_rank >= 0)
        printf("rank:       %lld of %lld (local rank %lld)\n", (long long)h->rank, (long long)h->world_size,
               (long long)h->local_rank);
    else printf("rank:       (launcher did not say)\n");
    printf("command:    ");
    if (h->cmdline) put_text(h->cmdline, h->cmdline_len, 1);
    putchar('\n');
    if (h->exe) {
        fputs("exe:        ", stdout);
        put_str(h->exe);
        putchar('\n');
    }
    if (h->start_realtime) {
        time_t t = (time_t)(h->start_realtime / 1000000000ull);
        struct tm tm;
        char buf[64];
        gmtime_r(&t, &tm);
        strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
        printf("started:    %s.%03llu UTC\n", buf, (unsigned long long)(h->start_realtime % 1000000000ull) / 1000000);
    }
    printf("format:     %u.%u  tracer ", h->major, h->minor);
    put_str(h->tracer_version);
    fputs("  clock ", stdout);
    put_str(h->clock);
    fputs("  events ", stdout);
    put_str(h->events);
    putchar('\n');
    if (h->boot_id) {
        fputs("boot id:    ", stdout);
        put_str(h->boot_id);
        putchar('\n');
    }
}

static int info_one(const char *path)
{
    char err[512];
    struct rs_reader *r = rs_reader_open(path, err, sizeof err);
    if (!r) {
        /* flagged in the listing too, so the output accounts for every file; the caller decides the exit */
        fprintf(stderr, "railscope: info: %s\n", err);
        printf("file:       %s\nstatus:     unreadable: %s\n", path, err);
        return 2;
    }
    rs_reader_keep_strings(r, 0); /* info resolves no string: memory stays that of one frame */
    const struct rs_header_info *h = rs_reader_header(r);
    static uint64_t counts[65536];
    memset(counts, 0, sizeof counts);
    struct tidset tids = {0};
    uint32_t last_tid = 0;
    uint64_t first = UINT64_MAX, last = 0, nev = 0;
    struct rs_event e;
    while (rs_reader_next(r, &e) > 0) {
        counts[e.ev->kind]++;
        if (e.ev->kind == RS_EV_STRING) continue;
        nev++;
        if (e.ts && e.ts < first) first = e.ts;
        if (e.ts > last) last = e.ts;
        if (e.tid && e.tid != last_tid) tid_add(&tids, last_tid = e.tid); /* runs of one thread: one probe */
    }
    const struct rs_read_stats *st = rs_reader_stats(r);
    struct stat sb;
    uint64_t fsize = stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;

    print_header(path, h);
    if (nev && last >= first)
        printf("time span:  %.6f s (first event %+.6f s after start)\n", (double)(last - first) / 1e9,
               ((double)(int64_t)(first - h->start_mono)) / 1e9);
    else printf("time span:  (no events)\n");
    printf("events:     %llu in %llu frames, %llu bytes on disk (%.2f B/event), %zu threads\n", (unsigned long long)nev,
           (unsigned long long)st->frames, (unsigned long long)fsize, nev ? (double)fsize / (double)nev : 0.0, tids.n);
    free(tids.v);
    /* a file that stops early (write error, killed) cannot hold the count of what came after its end */
    printf("dropped:    %llu events (%llu bytes)%s%s\n", (unsigned long long)st->drop_events,
           (unsigned long long)st->drop_bytes, st->drop_events ? "  <-- the recorder could not keep up" : "",
           st->status == RS_READ_OK ? ""
           : st->status == RS_READ_PARTIAL
               ? "; not counted: what the process did after the write failed (the tracer's warning says how much)"
               : "; not counted: what came after the file's end");
    printf("status:     %s\n", st->reason); /* the reason starts with the status name (reader.h) */
    if (st->frame_gaps) printf("            %llu gaps in the frame sequence\n", (unsigned long long)st->frame_gaps);
    printf("by kind:\n");
    for (unsigned k = 0; k < 65536; k++) {
        if (!counts[k]) continue;
        const char *n = rs_kind_lname(k);
        if (n) printf("  %-24s %llu\n", n, (unsigned long long)counts[k]);
        else printf("  unknown_%-16u %llu\n", k, (unsigned long long)counts[k]);
    }
    int rc = st->status == RS_READ_OK ? 0 : 1; /* "incomplete" (no PROC_END) too: what came after is missing */
    rs_reader_close(r);
    return rc;
}

int cmd_info(int argc, char **argv)
{
    char **paths;
    int n = cli_trace_args("info", argc, argv, NULL, usage, &paths);
    if (n <= 0) return n < 0 ? 2 : 0;
    int rc = 0, nbad = 0;
    for (int k = 0; k < n; k++) {
        if (k) putchar('\n');
        int r = info_one(paths[k]);
        if (r == 2) nbad++;
        else if (r > rc) rc = r;
    }
    rs_paths_free(paths, n);
    /* An unreadable file (empty, headerless, not a trace) beside readable ones makes the result partial
     * (exit 1), not unusable; only when nothing could be read is it exit 2 (issue 17 D10). */
    if (nbad) rc = nbad == n ? 2 : 1;
    return rc;
}
