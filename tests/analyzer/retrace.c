/* rs-retrace IN OUT [--drop KIND]... [--fact KEY=VALUE]...: copy trace file IN to OUT, edited the way a different
 * recording would have made it, for the analyzer's tests on real recorded traces (the GPU fixtures) rather than on a
 * generator's: --drop leaves out the events of a kind (lower-case names as `railscope info` prints them, e.g.
 * nccl_proxy_step: what a narrower RAILSCOPE_NCCL_MASK or RAILSCOPE_EVENTS records), --fact adds a HOST_FACT (what
 * another host's snapshot would hold, e.g. net/eth0/speed=25000). Every other event is copied as read, STRING
 * records included (string ids keep their meaning; added strings take ids above the file's), each in its thread's
 * chunk; the header is carried over. Exit 0 with the number of events dropped on stdout; 1 when IN does not read
 * completely or OUT cannot be written; 2 on usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/reader.h"
#include "tracer/writer.h"

static int usage(void)
{
    fprintf(stderr, "usage: rs-retrace IN OUT [--drop KIND]... [--fact KEY=VALUE]...\n");
    return 2;
}

/* The largest string id IN uses (its STRING records), 0 when none or unreadable (the copy then reports it). */
static uint32_t max_string_id(const char *path)
{
    char err[256];
    struct rs_reader *r = rs_reader_open(path, err, sizeof err);
    if (!r) return 0;
    uint32_t m = 0;
    struct rs_event e;
    while (rs_reader_next(r, &e) > 0)
        if (e.known && e.ev->kind == RS_EV_STRING) {
            uint32_t id = ((const struct rs_ev_STRING *)(const void *)e.ev)->id;
            if (id > m) m = id;
        }
    rs_reader_close(r);
    return m;
}

/* A recorded fact whose key one of the added facts sets: left out, so that the added value is the only one. */
static int replaced(struct rs_reader *r, const struct rs_ev_hdr *ev, const char *const *facts, int nfacts)
{
    const char *k = rs_reader_string(r, ((const struct rs_ev_HOST_FACT *)(const void *)ev)->key, NULL);
    for (int i = 0; k && i < nfacts; i++) {
        size_t n = (size_t)(strchr(facts[i], '=') - facts[i]);
        if (strlen(k) == n && !strncmp(k, facts[i], n)) return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) return usage();
    unsigned char drop[RS_EV_COUNT] = {0};
    const char *facts[64];
    int nfacts = 0;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--drop") && i + 1 < argc) {
            unsigned k;
            for (k = 0; k < RS_EV_COUNT; k++)
                if (rs_kind_lname(k) && !strcmp(rs_kind_lname(k), argv[i + 1])) break;
            if (k == RS_EV_COUNT) {
                fprintf(stderr, "rs-retrace: unknown kind '%s'\n", argv[i + 1]);
                return 2;
            }
            drop[k] = 1;
        } else if (!strcmp(argv[i], "--fact") && i + 1 < argc && strchr(argv[i + 1], '=') && nfacts < 64) {
            facts[nfacts++] = argv[i + 1];
        } else {
            return usage();
        }
        i++;
    }
    uint32_t next_id = max_string_id(argv[1]) + 1;
    char err[256];
    struct rs_reader *r = rs_reader_open(argv[1], err, sizeof err);
    if (!r) {
        fprintf(stderr, "rs-retrace: %s\n", err);
        return 1;
    }
    const struct rs_header_info *h = rs_reader_header(r);
    struct rs_file_info fi = {
        .host = h->host,
        .pid = h->pid,
        .ppid = h->ppid,
        .rank = h->rank,
        .local_rank = h->local_rank,
        .world_size = h->world_size,
        .cmdline = h->cmdline,
        .cmdline_len = h->cmdline_len,
        .start_realtime = h->start_realtime,
        .start_mono = h->start_mono,
        .clock = h->clock,
        .events = h->events,
        .tracer_version = h->tracer_version,
        .exe = h->exe,
        .boot_id = h->boot_id,
    };
    int werr = 0;
    struct rs_writer *w = rs_writer_open(argv[2], &fi, &werr);
    if (!w) {
        fprintf(stderr, "rs-retrace: %s: %s\n", argv[2], strerror(-werr));
        rs_reader_close(r);
        return 1;
    }
    rs_writer_set_clock(w, NULL, NULL); /* the input's own CLOCK anchors are copied */
    unsigned long long dropped = 0;
    int rc = 0, added = 0;
    struct rs_event e;
    while (rc == 0 && rs_reader_next(r, &e) > 0) {
        if (e.known && drop[e.ev->kind]) {
            dropped++;
            continue;
        }
        if (e.known && e.ev->kind == RS_EV_HOST_FACT && replaced(r, e.ev, facts, nfacts)) continue;
        if (rs_writer_append(w, e.tid, e.ev, e.ev->size) < 0) {
            fprintf(stderr, "rs-retrace: %s: cannot append an event of kind %u\n", argv[2], e.ev->kind);
            rc = 1;
        }
        /* the added facts go in after the file's first event that is not a STRING (near its own snapshot) */
        if (!added && !(e.known && e.ev->kind == RS_EV_STRING)) {
            added = 1;
            for (int i = 0; i < nfacts && rc == 0; i++) {
                const char *eq = strchr(facts[i], '=');
                uint32_t k = next_id++, v = next_id++;
                struct rs_ev_HOST_FACT f;
                memset(&f, 0, sizeof f);
                RS_EV_INIT(&f, HOST_FACT, e.ts);
                f.key = k;
                f.value = v;
                if (rs_writer_string(w, k, facts[i], (size_t)(eq - facts[i])) < 0 ||
                    rs_writer_string(w, v, eq + 1, strlen(eq + 1)) < 0 || rs_writer_append(w, 0, &f, sizeof f) < 0)
                    rc = 1;
            }
        }
    }
    const struct rs_read_stats *st = rs_reader_stats(r);
    if (st->status != RS_READ_OK) {
        fprintf(stderr, "rs-retrace: %s: %s\n", argv[1], st->reason);
        rc = 1;
    }
    if (rs_writer_close(w) < 0) rc = 1;
    rs_reader_close(r);
    printf("%llu\n", dropped);
    return rc;
}
