/* rs-dropkinds IN OUT KIND...: copy trace file IN to OUT without the events of the named kinds (lower-case names as
 * `railscope info` prints them, e.g. nccl_proxy_step). For the analyzer's tests on real recorded traces: what a run
 * recorded with a narrower event mask (RAILSCOPE_NCCL_MASK, RAILSCOPE_EVENTS) would have held, from the fixture
 * itself rather than from a generator. Every other event is copied as read, STRING records included (so string
 * ids keep their meaning), each in its thread's chunk; the header is carried over. Exit 0 with the number of events
 * dropped on stdout; 1 when IN does not read completely or OUT cannot be written; 2 on usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/reader.h"
#include "tracer/writer.h"

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: rs-dropkinds IN OUT KIND...\n");
        return 2;
    }
    unsigned char drop[RS_EV_COUNT] = {0};
    for (int i = 3; i < argc; i++) {
        unsigned k;
        for (k = 0; k < RS_EV_COUNT; k++)
            if (rs_kind_lname(k) && !strcmp(rs_kind_lname(k), argv[i])) break;
        if (k == RS_EV_COUNT) {
            fprintf(stderr, "rs-dropkinds: unknown kind '%s'\n", argv[i]);
            return 2;
        }
        drop[k] = 1;
    }
    char err[256];
    struct rs_reader *r = rs_reader_open(argv[1], err, sizeof err);
    if (!r) {
        fprintf(stderr, "rs-dropkinds: %s\n", err);
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
        fprintf(stderr, "rs-dropkinds: %s: %s\n", argv[2], strerror(-werr));
        rs_reader_close(r);
        return 1;
    }
    rs_writer_set_clock(w, NULL, NULL); /* the input's own CLOCK anchors are copied */
    unsigned long long dropped = 0;
    int rc = 0;
    struct rs_event e;
    while (rs_reader_next(r, &e) > 0) {
        if (e.known && drop[e.ev->kind]) {
            dropped++;
            continue;
        }
        if (rs_writer_append(w, e.tid, e.ev, e.ev->size) < 0) {
            fprintf(stderr, "rs-dropkinds: %s: cannot append an event of kind %u\n", argv[2], e.ev->kind);
            rc = 1;
            break;
        }
    }
    const struct rs_read_stats *st = rs_reader_stats(r);
    if (st->status != RS_READ_OK) {
        fprintf(stderr, "rs-dropkinds: %s: %s\n", argv[1], st->reason);
        rc = 1;
    }
    if (rs_writer_close(w) < 0) rc = 1;
    rs_reader_close(r);
    printf("%llu\n", dropped);
    return rc;
}
