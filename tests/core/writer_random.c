/* Random workloads against the file writer, read back event for event (tests/core/writer_random.t).
 *   writer_random FILE SEED
 * One seed = a few hundred operations on one writer: appends of runs (small events that take the
 * field-delta path, larger ones, a few of 65504-65528 bytes), runs handed over the way the live writer
 * drains a ring (rs_writer_append_run in random pieces, with rs_emit_as markers and events split at the
 * pieces' ends going through a copy), feeds, flushes, interned strings, field delta switched on and off,
 * and feed slices from none to 8 MiB changed along the way. Then every event must come back with its
 * thread, kind, size, timestamp and payload. Prints one line "ok|BAD events=N frames=N feeds=N"; exit 1
 * on a mismatch. Deterministic per seed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "reader.h"
#include "writer.h"

/* the live writer's entry point (tracer/core_int.h declares it for the core; not in writer.h) */
int rs_writer_append_run(struct rs_writer *w, uint32_t tid, const void *events, size_t bytes, int stop_kind,
                         size_t *done, uint64_t *nevents);

#define MARKER  0xffffu /* kind of an rs_emit_as marker in a ring (never on disk) */
#define AS_TID  777u
#define KIND_LO 300u /* test events use unknown kinds 300..429: the reader hands them out by size */
#define KIND_N  130u

static uint64_t rng;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

struct expect {
    uint32_t tid;
    uint16_t kind, size;
    uint64_t ts, seed;
};
static struct expect *ex;
static size_t nex, capex;

/* slowly varying words, so that the field deltas are small and matter */
static void payload(unsigned char *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n / 8; i++) {
        uint64_t v = seed * 1000003u + i * (seed & 7);
        memcpy(p + 8 * i, &v, 8);
    }
}

static uint64_t now = 1000;
static void sim_clock(void *arg, uint64_t *real, uint64_t *mono)
{
    (void)arg;
    *mono = now;
    *real = now + 5;
}

static void expect_event(uint32_t tid, const struct rs_ev_hdr *h, uint64_t seed)
{
    if (nex == capex) {
        capex = capex ? capex * 2 : 4096;
        ex = realloc(ex, capex * sizeof *ex);
        if (!ex) exit(2);
    }
    ex[nex++] = (struct expect){tid, h->kind, h->size, h->ts, seed};
}

/* Hand buf[0, used) over like tracer/writer_thread.c's ring_to_file: pieces of random length, a marker's
 * event and an event cut by a piece's end appended on their own through a copy. */
static int append_like_a_ring(struct rs_writer *w, uint32_t tid, const unsigned char *buf, size_t used)
{
    static unsigned char scratch[65536];
    for (size_t from = 0; from < used;) {
        size_t seg = used - from, done;
        uint64_t nev;
        if (rnd() % 2) {
            size_t p = 1 + rnd() % 300000;
            if (p < seg) seg = p;
        }
        if (rs_writer_append_run(w, tid, buf + from, seg, MARKER, &done, &nev)) return -1;
        from += done;
        if (done == seg) continue;
        struct rs_ev_hdr h;
        uint32_t t = tid;
        memcpy(&h, buf + from, sizeof h);
        if (h.kind == MARKER) {
            t = h.aux;
            from += sizeof h;
            memcpy(&h, buf + from, sizeof h);
        }
        memcpy(scratch, buf + from, h.size);
        if (rs_writer_append(w, t, scratch, h.size)) return -1;
        from += h.size;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: writer_random FILE SEED\n");
        return 2;
    }
    const char *path = argv[1];
    rng = strtoull(argv[2], NULL, 0) * 2654435761u + 88172645463325252ull;
    unlink(path);
    struct rs_file_info fi = {.host = "h", .pid = 1, .events = "all"};
    int err;
    struct rs_writer *w = rs_writer_open(path, &fi, &err);
    if (!w) return 2;
    static const size_t slices[] = {0, 65536, 70000, 100000, 262144, 1 << 20, 8 << 20};
    rs_writer_set_feed_slice(w, slices[rnd() % 7]);
    rs_writer_set_clock(w, rnd() % 2 ? sim_clock : NULL, NULL);
    const size_t cap = 4u << 20;
    unsigned char *buf = malloc(cap), *want = malloc(65536);
    if (!buf || !want) return 2;
    uint64_t seed = 1;
    for (int op = 0, ops = 300 + (int)(rnd() % 300); op < ops; op++) {
        uint32_t tid = 1 + (uint32_t)(rnd() % 3);
        switch (rnd() % 10) {
        case 0: rs_writer_feed(w); continue;
        case 1:
            if (rnd() % 4 == 0) rs_writer_flush(w);
            continue;
        case 2:
            if (rnd() % 8 == 0) rs_writer_set_field_delta(w, (int)(rnd() % 2));
            continue;
        case 3:
            if (rnd() % 8 == 0) rs_writer_set_feed_slice(w, slices[rnd() % 7]);
            continue;
        case 4: {
            char s[40];
            snprintf(s, sizeof s, "str%llu", (unsigned long long)(rnd() % 500));
            rs_writer_intern(w, s);
            continue;
        }
        default: break;
        }
        size_t target = rnd() % 3 == 0 ? rnd() % (3u << 20) : rnd() % 200000, used = 0;
        int ring_like = (int)(rnd() % 2);
        while (used < target) {
            unsigned r = (unsigned)(rnd() % 100);
            uint16_t size = r < 80   ? (uint16_t)(16 + 8 * (rnd() % 15)) /* <= 128 B: field delta */
                            : r < 95 ? (uint16_t)(16 + 8 * (rnd() % 500))
                                     : (uint16_t)(65528 - 8 * (rnd() % 4));
            uint32_t etid = tid;
            if (ring_like && rnd() % 20 == 0) {
                struct rs_ev_hdr m = {0, MARKER, 16, AS_TID};
                if (used + 16 + size > cap) break;
                memcpy(buf + used, &m, 16);
                used += 16;
                etid = AS_TID;
            }
            if (used + size > cap) break;
            struct rs_ev_hdr h = {rnd() % 50 == 0 ? rnd() % 100000 : (now += rnd() % 100),
                                  (uint16_t)(KIND_LO + rnd() % KIND_N), size, (uint32_t)rnd()};
            memcpy(buf + used, &h, sizeof h);
            payload(buf + used + sizeof h, size - sizeof h, seed);
            expect_event(etid, &h, seed++);
            used += size;
        }
        if (ring_like ? append_like_a_ring(w, tid, buf, used) : rs_writer_append(w, tid, buf, used)) {
            printf("BAD append failed (op %d)\n", op);
            return 1;
        }
    }
    struct rs_writer_stats st;
    rs_writer_stats(w, &st);
    if (rs_writer_close(w)) {
        printf("BAD close failed\n");
        return 1;
    }

    char e[256];
    struct rs_reader *r = rs_reader_open(path, e, sizeof e);
    if (!r) {
        printf("BAD open: %s\n", e);
        return 1;
    }
    struct rs_event ev;
    size_t k = 0;
    int bad = 0;
    while (!bad && rs_reader_next(r, &ev) > 0) {
        if (ev.ev->kind < KIND_LO || ev.ev->kind >= KIND_LO + KIND_N) continue;
        if (k >= nex) {
            printf("BAD more events back than written\n");
            bad = 1;
            break;
        }
        const struct expect *x = &ex[k];
        payload(want, x->size - sizeof *ev.ev, x->seed);
        if (ev.tid != x->tid || ev.ev->kind != x->kind || ev.ev->size != x->size || ev.ev->ts != x->ts ||
            memcmp(ev.ev + 1, want, x->size - sizeof *ev.ev)) {
            printf("BAD mismatch at event %zu: tid %u/%u kind %u/%u size %u/%u ts %llu/%llu\n", k, ev.tid, x->tid,
                   ev.ev->kind, x->kind, ev.ev->size, x->size, (unsigned long long)ev.ev->ts,
                   (unsigned long long)x->ts);
            bad = 1;
        }
        k++;
    }
    const struct rs_read_stats *rst = rs_reader_stats(r);
    if (!bad && (k != nex || rst->status != RS_READ_NO_END)) { /* whole frames, no PROC_END */
        printf("BAD %zu of %zu events back, status %d (%s)\n", k, nex, (int)rst->status, rst->reason);
        bad = 1;
    }
    if (!bad)
        printf("ok events=%zu frames=%llu feeds=%llu\n", nex, (unsigned long long)rst->frames,
               (unsigned long long)st.feeds);
    rs_reader_close(r);
    unlink(path);
    free(buf);
    free(want);
    free(ex);
    return bad;
}
