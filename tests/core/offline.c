/* The file writer used offline (as the synthetic cluster generator does): own timestamps, own clock
 * anchors (a simulated host 2.5 s ahead), interned strings, drops, a second thread id, hostile input
 * refused; then read back through the reader. Prints TAP. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "reader.h"
#include "writer.h"

static int n_test;
static int fails;
static void ok(int cond, const char *what)
{
    printf("%sok %d - %s\n", cond ? "" : "not ", ++n_test, what);
    if (!cond) fails++;
}

/* The simulated process every file of this test is written for, its clock (sim_clock reads `now`) and one
 * append's worth of events (the fed and limit phases). */
static const struct rs_file_info fi = {.host = "sim-node-3",
                                       .pid = 4242,
                                       .ppid = 1,
                                       .rank = 5,
                                       .local_rank = 1,
                                       .world_size = 16,
                                       .cmdline = "python\0train.py",
                                       .cmdline_len = 15,
                                       .start_realtime = 1700000000000000000ull,
                                       .start_mono = 1000,
                                       .events = "all"};
static uint64_t now;
static struct rs_ev_MARK batch[1000];

static void sim_clock(void *arg, uint64_t *real, uint64_t *mono)
{
    const uint64_t *t = arg;
    *mono = *t;
    *real = 1700000000000000000ull + *t + 2500000000ull; /* this host's clock is 2.5 s ahead */
}

/* A second file beside the first, with the simulated clock: NULL (and a diagnostic) if it cannot be made. */
static struct rs_writer *open_beside(char *path2, size_t cap, const char *path, const char *suffix,
                                     const struct rs_file_info *fi, uint64_t *now)
{
    int err = 0;
    snprintf(path2, cap, "%s.%s", path, suffix);
    struct rs_writer *w = rs_writer_open(path2, fi, &err);
    if (!w) printf("# cannot create %s\n", path2);
    else rs_writer_set_clock(w, sim_clock, now);
    return w;
}

static struct rs_reader *open_read(const char *path)
{
    char e[256];
    struct rs_reader *r = rs_reader_open(path, e, sizeof e);
    if (!r) printf("# %s\n", e);
    return r;
}

/* Phase 1: write a file, refuse bad input, read it back. 1 = cannot go on. */
static int basic(const char *path)
{
    int err = 0;
    struct rs_writer *w = rs_writer_open(path, &fi, &err);
    ok(w != NULL, "rs_writer_open creates the file");
    ok(rs_writer_open(path, &fi, &err) == NULL && err == -EEXIST, "a second open of the same path: -EEXIST");
    now = 1000;
    rs_writer_set_clock(w, sim_clock, &now);
    uint32_t name = rs_writer_intern(w, "step");
    ok(name == 1 && rs_writer_intern(w, "step") == 1 && rs_writer_intern(w, "other") == 2,
       "intern: dense ids, same id for the same string");
    struct rs_ev_MARK m[100];
    for (int i = 0; i < 100; i++) {
        now += 1000;
        RS_EV_INIT(&m[i], MARK, now);
        m[i].value = (uint64_t)i;
        m[i].name = name;
        m[i].pad = 0;
    }
    ok(rs_writer_append(w, 11, m, sizeof m) == 0, "append 100 events for tid 11");
    ok(rs_writer_flush(w) == 0, "flush ends a frame");
    ok(rs_writer_append(w, 12, m, 40) == -EINVAL, "a partial event is refused with -EINVAL");
    struct rs_ev_MARK bad = m[0];
    bad.h.size = 12;
    ok(rs_writer_append(w, 12, &bad, sizeof bad) == -EINVAL, "an event size that is not a multiple of 8 is refused");
    ok(rs_writer_append(w, 12, &m[50], sizeof(m[0]) * 50) == 0, "append 50 more for tid 12 (second frame)");
    ok(rs_writer_drops(w, 12, 7, 224, RS_DROP_BUFFER_FULL) == 0, "record 7 dropped events");
    ok(rs_writer_close(w) == 0, "close");

    struct rs_reader *r = open_read(path);
    if (!r) return 1;
    const struct rs_header_info *h = rs_reader_header(r);
    ok(h->rank == 5 && h->world_size == 16 && h->pid == 4242 && !strcmp(h->host, "sim-node-3") && h->cmdline_len == 15,
       "header read back");
    struct rs_event ev;
    int marks = 0, order = 1, tids = 1, clocks = 0, anchors_ok = 1;
    uint64_t prev = 0;
    while (rs_reader_next(r, &ev) > 0) {
        if (ev.ev->kind == RS_EV_CLOCK) {
            const struct rs_ev_CLOCK *c = (const void *)ev.ev;
            clocks++;
            if (c->realtime_ns - c->mono_ns != 1700000000000000000ull + 2500000000ull) anchors_ok = 0;
        }
        if (ev.ev->kind != RS_EV_MARK) continue;
        const struct rs_ev_MARK *mk = (const void *)ev.ev;
        if (marks < 100 && (mk->value != (uint64_t)marks || ev.tid != 11)) tids = 0;
        if (marks >= 100 && (mk->value != (uint64_t)(marks - 50) || ev.tid != 12)) tids = 0;
        if (ev.ts != 1000 + 1000 * (mk->value + 1)) order = 0;
        if (!rs_reader_string(r, mk->name, NULL) || strcmp(rs_reader_string(r, mk->name, NULL), "step")) order = 0;
        prev = ev.ts;
        marks++;
    }
    (void)prev;
    ok(marks == 150 && order && tids, "150 events back with their own timestamps, tids, strings");
    ok(clocks == 2 && anchors_ok, "one CLOCK anchor per frame, from the simulated clock (+2.5 s)");
    const struct rs_read_stats *st = rs_reader_stats(r);
    ok(st->status == RS_READ_NO_END && st->drop_events == 7 && st->frames == 2,
       "whole frames (incomplete: the writer alone writes no PROC_END), 2 frames, drops counted");
    rs_reader_close(r);
    return 0;
}

/* Phase 2: incremental compression. */
static int fed(const char *path)
{
    struct rs_writer *w;
    struct rs_reader *r;
    struct rs_event ev;
    const struct rs_read_stats *st;
    uint32_t name;

    /* Incremental compression (the live writer's rs_writer_feed after each drain): the frames written
     * must read back the same, including a frame that fills up (4 MiB raw) after several feeds. */
    char path2[4096];
    if (!(w = open_beside(path2, sizeof path2, path, "fed", &fi, &now))) return 1;
    name = rs_writer_intern(w, "fed");
    const long total = 300000; /* 300k 32-byte events = 9.6 MB raw: more than two full frames */
    int feeds_ok = 1;
    for (long i = 0; i < total;) {
        for (int k = 0; k < 1000; k++, i++) {
            RS_EV_INIT(&batch[k], MARK, 5000 + (uint64_t)i * 10);
            batch[k].value = (uint64_t)i;
            batch[k].name = name;
            batch[k].pad = 0;
        }
        if (rs_writer_append(w, (i / 1000) % 3 ? 21 : 22, batch, sizeof batch) != 0) feeds_ok = 0;
        if (rs_writer_feed(w) != 0) feeds_ok = 0;
    }
    ok(feeds_ok && rs_writer_close(w) == 0, "300k events appended with a feed after every 1000, closed");
    if (!(r = open_read(path2))) return 1;
    long got = 0;
    int in_order = 1;
    while (rs_reader_next(r, &ev) > 0) {
        if (ev.ev->kind != RS_EV_MARK) continue;
        const struct rs_ev_MARK *mk = (const void *)ev.ev;
        uint32_t want_tid = (uint32_t)((mk->value / 1000 + 1) % 3 ? 21 : 22);
        if (mk->value != (uint64_t)got || ev.ts != 5000 + (uint64_t)got * 10 || ev.tid != want_tid) in_order = 0;
        got++;
    }
    ok(got == total && in_order, "every fed event back, in order, with its timestamp and tid");
    st = rs_reader_stats(r);
    printf("# frames %llu status %d\n", (unsigned long long)st->frames, (int)st->status);
    ok(st->status == RS_READ_NO_END && st->frames >= 3, "whole frames; full frames were cut while fed (>= 3 frames)");
    rs_reader_close(r);
    return 0;
}

/* Phase 3: sliced feeding. */
static int sliced(const char *path)
{
    struct rs_writer *w;
    struct rs_reader *r;
    struct rs_event ev;
    const struct rs_read_stats *st;
    uint32_t name;
    char path2[4096];

    /* Sliced feeding (the live writer's rs_writer_set_feed_slice): large runs are copied and compressed a
     * slice at a time; events bigger than a slice (65528 bytes, an unknown kind: read back by size) go
     * alone between slices; frames still fill up and are cut. */
    if (!(w = open_beside(path2, sizeof path2, path, "sliced", &fi, &now))) return 1;
    rs_writer_set_feed_slice(w, 1); /* rounded up to the 64 KiB minimum */
    name = rs_writer_intern(w, "sliced");
    enum { BIG = 65528, RUN = 3000, RUNS = 60, BIG_KIND = 62 };
    static unsigned char run[RUN * sizeof(struct rs_ev_MARK) + BIG];
    long seq = 0, bigs = 0;
    int sliced_ok = 1;
    for (int k = 0; k < RUNS; k++) {
        size_t used = 0;
        for (int j = 0; j < RUN; j++, seq++) {
            struct rs_ev_MARK mk;
            RS_EV_INIT(&mk, MARK, 9000 + (uint64_t)seq * 7);
            mk.value = (uint64_t)seq;
            mk.name = name;
            mk.pad = 0;
            memcpy(run + used, &mk, sizeof mk);
            used += sizeof mk;
            if (j == RUN / 2 && k % 3 == 0) { /* a big one in the middle of every third run */
                struct rs_ev_hdr bh = {9000 + (uint64_t)seq * 7, BIG_KIND, BIG, (uint32_t)bigs};
                memcpy(run + used, &bh, sizeof bh);
                for (size_t b = sizeof bh; b < BIG; b++) run[used + b] = (unsigned char)(b * 31 + (size_t)bigs);
                used += BIG;
                bigs++;
            }
        }
        if (rs_writer_append(w, 31 + (uint32_t)(k % 2), run, used) != 0) sliced_ok = 0;
    }
    struct rs_writer_stats ws;
    rs_writer_stats(w, &ws);
    /* one feed per 64 KiB slice, give or take the frames' ends */
    const unsigned long long appended =
        (unsigned long long)seq * sizeof(struct rs_ev_MARK) + (unsigned long long)bigs * BIG;
    printf("# sliced: %llu feeds for %llu bytes appended\n", (unsigned long long)ws.feeds, appended);
    if (rs_writer_close(w) != 0) sliced_ok = 0;
    ok(sliced_ok && ws.feeds + 4 >= appended / 65536,
       "60 runs of 96-160 KB appended with a 64 KiB feed slice (fed a slice at a time), closed");
    if (!(r = open_read(path2))) return 1;
    long marks2 = 0, bigs2 = 0;
    int sl_order = 1, big_same = 1;
    while (rs_reader_next(r, &ev) > 0) {
        if (ev.ev->kind == BIG_KIND) {
            const unsigned char *b = (const unsigned char *)ev.ev;
            if (ev.ev->size != BIG || ev.ev->aux != (uint32_t)bigs2) big_same = 0;
            for (size_t x = sizeof(struct rs_ev_hdr); big_same && x < BIG; x++)
                if (b[x] != (unsigned char)(x * 31 + (size_t)bigs2)) big_same = 0;
            bigs2++;
            continue;
        }
        if (ev.ev->kind != RS_EV_MARK) continue;
        const struct rs_ev_MARK *mk = (const void *)ev.ev;
        if (mk->value != (uint64_t)marks2 || ev.ts != 9000 + (uint64_t)marks2 * 7 ||
            ev.tid != 31 + (uint32_t)((marks2 / RUN) % 2))
            sl_order = 0;
        marks2++;
    }
    ok(marks2 == seq && sl_order && bigs2 == bigs && big_same,
       "every event back in order with its timestamp and tid; the big events byte for byte");
    st = rs_reader_stats(r);
    printf("# sliced: frames %llu status %d, %ld big events\n", (unsigned long long)st->frames, (int)st->status, bigs2);
    ok(st->status == RS_READ_NO_END && st->frames >= 2, "whole frames; frames cut while sliced (>= 2 frames)");
    rs_reader_close(r);
    return 0;
}

/* Phase 4: the file size limit. */
static int size_limit(const char *path)
{
    struct rs_writer *w;
    struct rs_reader *r;
    struct rs_event ev;
    const struct rs_read_stats *st;
    uint32_t name;
    struct rs_writer_stats ws;
    char path2[4096];

    /* The file size limit (RLIMIT_FSIZE) reached 50 bytes after a frame's end: the PARTIAL frame (~100
     * bytes) does not fit there, so rs_writer_mark_partial gives up the last frame to say why the file is
     * partial instead of leaving a torn frame (seen once in tests/core/diskfull.t as "truncated"). */
    if (!(w = open_beside(path2, sizeof path2, path, "limit", &fi, &now))) return 1;
    name = rs_writer_intern(w, "limit");
    int frames_ok = 1;
    for (int f = 0; f < 3; f++) {
        for (int k = 0; k < 100; k++) {
            RS_EV_INIT(&batch[k], MARK, now += 10);
            batch[k].value = (uint64_t)(f * 100 + k);
            batch[k].name = name;
            batch[k].pad = 0;
        }
        if (rs_writer_append(w, 41, batch, 100 * sizeof batch[0]) || rs_writer_flush(w)) frames_ok = 0;
    }
    rs_writer_stats(w, &ws);
    struct rlimit old_lim, lim;
    getrlimit(RLIMIT_FSIZE, &old_lim);
    lim = old_lim;
    lim.rlim_cur = (rlim_t)ws.file_bytes + 50;
    setrlimit(RLIMIT_FSIZE, &lim);
    for (int k = 0; k < 1000; k++) {
        RS_EV_INIT(&batch[k], MARK, now += 10);
        batch[k].value = (uint64_t)(1000 + k * 7919u); /* less compressible: more than 50 bytes */
        batch[k].name = name;
        batch[k].pad = 0;
    }
    int ferr = rs_writer_append(w, 41, batch, sizeof batch);
    if (!ferr) ferr = rs_writer_flush(w);
    int pm = rs_writer_mark_partial(w, ferr, "cannot write the trace file");
    setrlimit(RLIMIT_FSIZE, &old_lim);
    printf("# limit: flush %d, mark_partial %d\n", ferr, pm);
    rs_writer_close(w);
    ok(frames_ok && ferr == -EFBIG && pm == 0,
       "size limit 50 bytes past a frame: EFBIG, and the PARTIAL frame still written");
    if (!(r = open_read(path2))) return 1;
    long lim_marks = 0;
    while (rs_reader_next(r, &ev) > 0)
        if (ev.ev->kind == RS_EV_MARK) lim_marks++;
    st = rs_reader_stats(r);
    printf("# limit: status %d, %ld marks, %s\n", (int)st->status, lim_marks, st->reason);
    ok(st->status == RS_READ_PARTIAL, "the file reads as partial, not truncated");
    ok(lim_marks == 200, "the frames before the one given up are all there (200 events)");
    rs_reader_close(r);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    const char *path = argv[1];
    printf("1..23\n");
    alarm(60); /* a writer that loops forever fails the test instead of hanging the suite */
    if (basic(path) || fed(path) || sliced(path) || size_limit(path)) return 1;
    return fails ? 1 : 0;
}
