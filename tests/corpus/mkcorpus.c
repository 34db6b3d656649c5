/* mkcorpus: writes the tricky-file corpus (tests/corpus/files/) and its expectations (tests/corpus/EXPECT).
 * The files are checked in, so the corpus stays the same when the writer changes; rerun with
 * `make corpus-regen` only to add cases. EXPECT says what a correct reader must report for each file:
 *     name  status  events
 * status is the reader's status name after a full drain ("complete", "incomplete", "truncated", "corrupt",
 * "partial"; "incomplete": whole frames but no PROC_END, as in every file assembled here without one)
 * or "refused" when rs_reader_open() must fail; events is the exact number of events it must hand out
 * before stopping ("-" when open is refused). Damaged files keep every whole frame before the damage.
 *
 * The base trace goes through the real writer (tracer/writer.c); the damage is done at byte level, and the
 * event-level cases are assembled frame by frame with the helpers of tests/fuzz/fuzz_common.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "tracer/writer.h"

static const char *outdir;
static FILE *expect;

static const char *emit_reason; /* when set: a substring the reader's reason must contain (4th column) */

static void emit(const char *name, const void *b, size_t n, const char *status, long events)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s.rtrace", outdir, name);
    FILE *f = fopen(p, "wb");
    if (!f || (n && fwrite(b, 1, n, f) != n) || fclose(f)) {
        fprintf(stderr, "mkcorpus: %s: %s\n", p, strerror(errno));
        exit(1);
    }
    if (events < 0) fprintf(expect, "%-28s %-10s -", name, status);
    else fprintf(expect, "%-28s %-10s %ld", name, status, events);
    fprintf(expect, emit_reason ? " %s\n" : "\n", emit_reason);
    emit_reason = NULL;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* ---- the base trace, through the real writer ---- */

static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)sz + 1);
    if (fread(b, 1, (size_t)sz, f) != (size_t)sz) sz = 0;
    fclose(f);
    *n = (size_t)sz;
    return b;
}

static void fixed_clock(void *arg, uint64_t *real, uint64_t *mono)
{
    uint64_t *t = arg;
    *real = 1700000000000000000ull + *t;
    *mono = *t;
}

/* One event of every known kind (STRING excluded), fields random, string fields naming interned ids. */
static long append_every_kind(struct rs_writer *w, uint32_t tid, uint64_t *t, const uint32_t *ids, int nids)
{
    long n = 0;
    for (unsigned k = 1; k < RS_EV_COUNT; k++) {
        const struct rs_kind_desc *d = rs_kind_get(k);
        if (!d || k == RS_EV_STRING || k == RS_EV_PARTIAL) continue;
        uint64_t buf[64] = {0};
        size_t size = d->size + (d->varlen ? 24 : 0);
        struct rs_ev_hdr *h = (struct rs_ev_hdr *)buf;
        *t += 1000 + rnd() % 5000;
        h->ts = *t;
        h->kind = (uint16_t)k;
        h->size = (uint16_t)size;
        h->aux = (uint32_t)(rnd() % 3);
        for (unsigned i = 0; i < d->nfields; i++) {
            unsigned char *f = (unsigned char *)buf + rs_field_offset(d, i);
            uint64_t v = rnd() % 100000;
            if (d->fields[i].type == RS_T_str) v = ids[rnd() % (unsigned)nids];
            memcpy(f, &v, rs_ftype_size[d->fields[i].type]);
        }
        if (k == RS_EV_STACK) ((struct rs_ev_STACK *)h)->depth = 3;
        if (rs_writer_append(w, tid, buf, size) == 0) n++;
    }
    return n;
}

static long base_events; /* events the reader hands out for the base file (strings, clocks included) */

static unsigned char *make_base(size_t *n, int field_delta)
{
    char path[512];
    snprintf(path, sizeof path, "%s/.base.tmp", outdir);
    unlink(path);
    const char cmd[] = "train.py\0--steps\0"
                       "10";
    struct rs_file_info info = {.host = "node-a",
                                .pid = 4242,
                                .ppid = 1,
                                .rank = 0,
                                .local_rank = 0,
                                .world_size = 2,
                                .cmdline = cmd,
                                .cmdline_len = sizeof cmd - 1,
                                .start_realtime = 1700000000000000000ull,
                                .start_mono = 0,
                                .clock = "monotonic",
                                .events = "all",
                                .tracer_version = "corpus",
                                .exe = "/usr/bin/python3",
                                .boot_id = "00000000-0000-0000-0000-000000000000"};
    int err = 0;
    struct rs_writer *w = rs_writer_open(path, &info, &err);
    if (!w) {
        fprintf(stderr, "mkcorpus: writer: %s\n", strerror(-err));
        exit(1);
    }
    uint64_t t = 1000000;
    rng = 88172645463325252ull; /* both encodings of the base hold the same events */
    rs_writer_set_field_delta(w, field_delta);
    rs_writer_set_clock(w, fixed_clock, &t);
    uint32_t ids[4];
    ids[0] = rs_writer_intern(w, "mlx5_0");
    ids[1] = rs_writer_intern(w, "ncclAllReduce");
    ids[2] = rs_writer_intern(w, "worker \"quoted\" <tag> & \\ back");
    ids[3] = rs_writer_intern(w, "");
    for (int fr = 0; fr < 3; fr++) {
        append_every_kind(w, 100 + (uint32_t)fr, &t, ids, 4);
        append_every_kind(w, 200, &t, ids, 4);
        rs_writer_drops(w, 200, 5, 320, RS_DROP_BUFFER_FULL);
        rs_writer_flush(w);
    }
    struct rs_writer_stats st;
    rs_writer_stats(w, &st);
    rs_writer_close(w);
    unsigned char *b = slurp(path, n);
    unlink(path);
    return b;
}

/* Frame offsets in a file: off[0] = end of header, off[i] = start of frame i, off[nf] = end. */
static int frames_of(const unsigned char *b, size_t n, size_t *off, int max)
{
    struct rs_file_preamble pre;
    memcpy(&pre, b, sizeof pre);
    size_t o = sizeof pre + pre.header_bytes;
    int nf = 0;
    while (o + sizeof(struct rs_frame_hdr) <= n && nf < max) {
        struct rs_frame_hdr fh;
        memcpy(&fh, b + o, sizeof fh);
        off[nf++] = o;
        o += sizeof fh + fh.compressed;
    }
    off[nf] = o;
    return nf;
}

static long count_events(const unsigned char *b, size_t n)
{
    char path[512];
    snprintf(path, sizeof path, "%s/.count.tmp", outdir);
    FILE *f = fopen(path, "wb");
    fwrite(b, 1, n, f);
    fclose(f);
    char err[256];
    struct rs_reader *r = rs_reader_open(path, err, sizeof err);
    long k = 0;
    struct rs_event e;
    while (r && rs_reader_next(r, &e) > 0) k++;
    if (r) rs_reader_close(r);
    unlink(path);
    return k;
}

static void variant(const char *name, const unsigned char *b, size_t n, const char *status, long events)
{
    emit(name, b, n, status, events);
}

/* ---- hand-assembled files ---- */

static void ev_str(struct fz_buf *e, uint32_t id, const char *s, size_t n, uint32_t claimed)
{
    struct rs_ev_STRING st;
    size_t size = (sizeof st + n + 7) & ~(size_t)7;
    st.h.ts = 10;
    st.h.kind = RS_EV_STRING;
    st.h.size = (uint16_t)size;
    st.h.aux = 0;
    st.id = id;
    st.len = claimed;
    fz_put(e, &st, sizeof st);
    fz_put(e, s, n);
    fz_zero(e, size - sizeof st - n);
}
static void ev_raw(struct fz_buf *e, uint64_t ts, uint16_t kind, uint16_t size, const void *fields, size_t fl)
{
    struct rs_ev_hdr h = {ts, kind, size, 0};
    fz_put(e, &h, sizeof h);
    fz_put(e, fields, fl);
    if (size > sizeof h + fl) fz_zero(e, size - sizeof h - fl);
}
/* One frame holding one chunk of `e` for tid, with given chunk flags; `cbytes` overrides the chunk length. */
static void put_chunk_frame(struct fz_buf *f, const struct fz_buf *e, uint32_t tid, uint32_t flags, uint32_t magic,
                            long cbytes, uint64_t seq)
{
    struct fz_buf raw = {0};
    struct rs_chunk_hdr c = {magic, tid, cbytes < 0 ? (uint32_t)e->n : (uint32_t)cbytes, flags};
    fz_put(&raw, &c, sizeof c);
    fz_put(&raw, e->b, e->n);
    fz_put_raw_frame(f, raw.b, raw.n, seq);
    free(raw.b);
}
/* A whole file: minimal header + one frame with one chunk. */
static void one_chunk_file(const char *name, const struct fz_buf *e, uint32_t flags, uint32_t magic, long cbytes,
                           const char *status, long events)
{
    struct fz_buf f = {0};
    fz_put_min_header(&f);
    put_chunk_frame(&f, e, 5, flags, magic, cbytes, 0);
    emit(name, f.b, f.n, status, events);
    free(f.b);
}

/* Chunk-level damage, event sizes, unknown kinds, timestamps, DROPS, stacks. */
static void chunk_event_cases(void)
{
    struct rs_ev_CLOCK ck = {{0}, 1700000000000000000ull, 100};
    struct fz_buf e = {0};
    /* chunk-level damage */
    ev_raw(&e, 100, RS_EV_CLOCK, sizeof ck, &ck.realtime_ns, 16);
    one_chunk_file("chunk-bad-magic", &e, 0, 0xdeadbeef, -1, "corrupt", 0);
    one_chunk_file("chunk-bytes-huge", &e, 0, RS_CHUNK_MAGIC, 0x7ffffff8, "corrupt", 0);
    one_chunk_file("chunk-bytes-odd", &e, 0, RS_CHUNK_MAGIC, 13, "corrupt", 0);
    one_chunk_file("chunk-flags-unknown", &e, 0x80, RS_CHUNK_MAGIC, -1, "corrupt", 0);
    one_chunk_file("chunk-empty", &(struct fz_buf){0}, 0, RS_CHUNK_MAGIC, -1, "incomplete", 0);
    /* event sizes */
    struct fz_buf z = {0};
    ev_raw(&z, 100, RS_EV_CLOCK, 0, NULL, 0);
    fz_zero(&z, 16);
    one_chunk_file("ev-size-zero", &z, 0, RS_CHUNK_MAGIC, -1, "corrupt", 0);
    z.n = 0;
    ev_raw(&z, 100, RS_EV_CLOCK, 20, &ck.realtime_ns, 16);
    fz_zero(&z, 4);
    one_chunk_file("ev-size-odd", &z, 0, RS_CHUNK_MAGIC, -1, "corrupt", 0);
    z.n = 0;
    {
        struct rs_ev_hdr big = {100, RS_EV_CLOCK, 0xfff8, 0}; /* claims 64 KiB, holds 32 bytes */
        fz_put(&z, &big, sizeof big);
        fz_put(&z, &ck.realtime_ns, 16);
    }
    one_chunk_file("ev-size-past-chunk", &z, 0, RS_CHUNK_MAGIC, -1, "corrupt", 0);
    z.n = 0;
    ev_raw(&z, 100, RS_EV_CLOCK, 16, NULL, 0); /* CLOCK needs 32 bytes */
    one_chunk_file("ev-short-for-kind", &z, 0, RS_CHUNK_MAGIC, -1, "corrupt", 0);
    /* a known event followed by damage: the first is handed out, then the stream stops */
    z.n = 0;
    ev_raw(&z, 100, RS_EV_CLOCK, sizeof ck, &ck.realtime_ns, 16);
    ev_raw(&z, 200, RS_EV_CLOCK, 8, NULL, 0);
    one_chunk_file("ev-good-then-bad", &z, 0, RS_CHUNK_MAGIC, -1, "corrupt", 1);
    /* unknown kinds are skipped by size; kind 0 is not a kind */
    z.n = 0;
    uint64_t junk[4] = {1, 2, 3, 4};
    ev_raw(&z, 100, 0x7fff, 48, junk, sizeof junk);
    ev_raw(&z, 110, 0, 16, NULL, 0);
    ev_raw(&z, 120, RS_EV_CLOCK, sizeof ck, &ck.realtime_ns, 16);
    one_chunk_file("ev-unknown-kinds", &z, 0, RS_CHUNK_MAGIC, -1, "incomplete", 3);
    /* bigger than the kind (a newer minor added fields) */
    z.n = 0;
    ev_raw(&z, 100, RS_EV_CLOCK, sizeof ck + 64, &ck.realtime_ns, 16);
    one_chunk_file("ev-bigger-than-kind", &z, 0, RS_CHUNK_MAGIC, -1, "incomplete", 1);
    /* delta timestamps that wrap, and go backwards */
    z.n = 0;
    ev_raw(&z, UINT64_MAX - 5, RS_EV_CLOCK, sizeof ck, &ck.realtime_ns, 16);
    ev_raw(&z, 100, RS_EV_CLOCK, sizeof ck, &ck.realtime_ns, 16);
    ev_raw(&z, UINT64_MAX, RS_EV_CLOCK, sizeof ck, &ck.realtime_ns, 16);
    one_chunk_file("ts-delta-wrap", &z, RS_CHUNK_TS_DELTA, RS_CHUNK_MAGIC, -1, "incomplete", 3);
    /* DROPS whose sums overflow */
    z.n = 0;
    struct rs_ev_DROPS dr;
    memset(&dr, 0, sizeof dr);
    dr.events = UINT64_MAX;
    dr.bytes = UINT64_MAX;
    dr.tid = 5;
    dr.reason = 0xffffffffu;
    ev_raw(&z, 100, RS_EV_DROPS, sizeof dr, &dr.events, sizeof dr - sizeof dr.h);
    ev_raw(&z, 200, RS_EV_DROPS, sizeof dr, &dr.events, sizeof dr - sizeof dr.h);
    one_chunk_file("drops-overflow", &z, 0, RS_CHUNK_MAGIC, -1, "incomplete", 2);
    /* STACK whose depth claims more addresses than the event holds */
    z.n = 0;
    struct rs_ev_STACK sk;
    memset(&sk, 0, sizeof sk);
    sk.depth = 0xffffffffu;
    sk.for_kind = RS_EV_CLOCK;
    ev_raw(&z, 100, RS_EV_STACK, sizeof sk + 8, &sk.depth, 8);
    one_chunk_file("stack-depth-lies", &z, 0, RS_CHUNK_MAGIC, -1, "incomplete", 1);
    /* CALL_STACK (events_cuda.h) whose depth lies, with frames naming module paths that are no ELF file (a
     * device, a directory, a missing file), an undefined string id and unknown offsets: `dump` reads the
     * module files to symbolise, and must print module+offset (or '?') and go on. */
    z.n = 0;
    ev_str(&z, 1, "/dev/zero", 9, 9);
    ev_str(&z, 2, "/", 1, 1);
    ev_str(&z, 3, "/nonexistent/libx.so", 20, 20);
    {
        struct {
            uint32_t depth, for_kind, site, flags;
            struct rs_stack_frame f[5];
        } cs;
        memset(&cs, 0, sizeof cs);
        cs.depth = 0xffffffffu;
        cs.for_kind = 0xffffu;
        cs.site = 1;
        cs.flags = 0xffffffffu;
        cs.f[0] = (struct rs_stack_frame){0x1234, 1, 0x10};
        cs.f[1] = (struct rs_stack_frame){0x5678, 2, RS_STACK_OFFSET_UNKNOWN};
        cs.f[2] = (struct rs_stack_frame){0x9abc, 3, 0};
        cs.f[3] = (struct rs_stack_frame){0xdef0, 0x7fffffu, 0x20};
        ev_raw(&z, 100, RS_EV_CALL_STACK, (uint16_t)(sizeof(struct rs_ev_hdr) + sizeof cs), &cs, sizeof cs);
    }
    one_chunk_file("call-stack-lies", &z, 0, RS_CHUNK_MAGIC, -1, "incomplete", 4);
    free(z.b);
    free(e.b);
}

/* The string table: lying lengths, bad ids, hostile bytes, the writer's PARTIAL reason. */
static void string_cases(void)
{
    struct fz_buf z = {0};
    z.n = 0;
    ev_str(&z, 1, "abc", 3, 200);
    one_chunk_file("str-len-lies", &z, 0, RS_CHUNK_MAGIC, -1, "corrupt", 0);
    z.n = 0;
    ev_str(&z, 0, "abc", 3, 3);
    one_chunk_file("str-id-zero", &z, 0, RS_CHUNK_MAGIC, -1, "corrupt", 0);
    z.n = 0;
    ev_str(&z, 0xfffffff0u, "abc", 3, 3);
    one_chunk_file("str-id-huge", &z, 0, RS_CHUNK_MAGIC, -1, "corrupt", 0);
    z.n = 0;
    {
        char *big = malloc(RS_MAX_STRING + 1);
        memset(big, 'x', RS_MAX_STRING + 1);
        ev_str(&z, 1, big, RS_MAX_STRING + 1, RS_MAX_STRING + 1);
        free(big);
    }
    one_chunk_file("str-too-long", &z, 0, RS_CHUNK_MAGIC, -1, "corrupt", 0);
    z.n = 0;
    struct rs_ev_THREAD_START ts;
    memset(&ts, 0, sizeof ts);
    ts.name = 999;
    ev_raw(&z, 100, RS_EV_THREAD_START, sizeof ts, &ts.name, 8);
    struct rs_ev_WARNING wn;
    memset(&wn, 0, sizeof wn);
    wn.message = 0xffffffffu;
    ev_raw(&z, 110, RS_EV_WARNING, sizeof wn, &wn.message, 8);
    one_chunk_file("str-undefined-ref", &z, 0, RS_CHUNK_MAGIC, -1, "incomplete", 2);
    z.n = 0;
    ev_str(&z, 3, "first", 5, 5);
    ev_str(&z, 3, "second, longer", 14, 14);
    ts.name = 3;
    ev_raw(&z, 100, RS_EV_THREAD_START, sizeof ts, &ts.name, 8);
    one_chunk_file("str-dup-id", &z, 0, RS_CHUNK_MAGIC, -1, "incomplete", 3);
    z.n = 0;
    /* hostile bytes in names: NUL, newline, quotes, backslash, terminal escapes, invalid UTF-8, HTML */
    static const char nasty[] = "a\0b\n\"q\"\\\x1b[2J\xff\xfe\xc3</script><b>x</b>%s%n\r\t";
    ev_str(&z, 1, nasty, sizeof nasty - 1, sizeof nasty - 1);
    ev_str(&z, 2, "", 0, 0);
    ts.name = 1;
    ev_raw(&z, 100, RS_EV_THREAD_START, sizeof ts, &ts.name, 8);
    wn.message = 1;
    ev_raw(&z, 110, RS_EV_WARNING, sizeof wn, &wn.message, 8);
    ts.name = 2;
    ev_raw(&z, 120, RS_EV_THREAD_START, sizeof ts, &ts.name, 8);
    one_chunk_file("str-hostile-bytes", &z, 0, RS_CHUNK_MAGIC, -1, "incomplete", 5);
    /* the writer's PARTIAL reason: string id 0x7fffffff, then a PARTIAL event naming it */
    z.n = 0;
    ev_str(&z, 0x7fffffffu, "disk-full", 9, 9);
    struct rs_ev_PARTIAL pa;
    memset(&pa, 0, sizeof pa);
    pa.err = -ENOSPC;
    pa.why = 0x7fffffffu;
    ev_raw(&z, 100, RS_EV_PARTIAL, sizeof pa, &pa.err, 8);
    emit_reason = "disk-full";
    one_chunk_file("partial-marked", &z, 0, RS_CHUNK_MAGIC, -1, "partial", 2);
    /* a PARTIAL whose err is INT32_MIN (negating it overflows an int) */
    z.n = 0;
    pa.err = INT32_MIN;
    pa.why = 0;
    ev_raw(&z, 100, RS_EV_PARTIAL, sizeof pa, &pa.err, 8);
    one_chunk_file("partial-err-int-min", &z, 0, RS_CHUNK_MAGIC, -1, "partial", 1);
    pa.err = -ENOSPC;
    pa.why = 0x7fffffffu;
    /* ... and a real string at the id the reader uses as that side slot must not be confused with it */
    z.n = 0;
    ev_str(&z, 0x7fffffffu, "disk-full", 9, 9);
    ev_str(&z, 1u << 22, "plain", 5, 5);
    ev_raw(&z, 100, RS_EV_PARTIAL, sizeof pa, &pa.err, 8);
    emit_reason = "disk-full";
    one_chunk_file("partial-slot-collision", &z, 0, RS_CHUNK_MAGIC, -1, "partial", 3);
    free(z.b);
}

/* Frames: sequence gap, lying raw sizes, not zstd, trailing junk. */
static void frame_cases(void)
{
    struct rs_ev_CLOCK ck = {{0}, 1700000000000000000ull, 100};
    /* frame sequence gap: two good frames numbered 0 and 5 */
    struct fz_buf f = {0};
    fz_put_min_header(&f);
    struct fz_buf one = {0};
    ev_raw(&one, 100, RS_EV_CLOCK, sizeof ck, &ck.realtime_ns, 16);
    put_chunk_frame(&f, &one, 1, 0, RS_CHUNK_MAGIC, -1, 0);
    put_chunk_frame(&f, &one, 1, 0, RS_CHUNK_MAGIC, -1, 5);
    emit("frame-seq-gap", f.b, f.n, "incomplete", 2);
    /* the raw size in the frame header lies (checksum fixed up) */
    size_t second = f.n;
    put_chunk_frame(&f, &one, 1, 0, RS_CHUNK_MAGIC, -1, 6);
    struct rs_frame_hdr fh;
    memcpy(&fh, f.b + second, sizeof fh);
    fh.raw += 8;
    memcpy(f.b + second, &fh, sizeof fh);
    emit("frame-raw-lies", f.b, f.n, "corrupt", 2);
    fh.raw -= 5;
    memcpy(f.b + second, &fh, sizeof fh);
    emit("frame-raw-odd", f.b, f.n, "corrupt", 2);
    /* compressed bytes that are not zstd, checksum right */
    f.n = second;
    static const unsigned char notz[32] = "this is not a zstd frame at all";
    fz_put_frame(&f, notz, sizeof notz, 64, 6);
    emit("frame-not-zstd", f.b, f.n, "corrupt", 2);
    /* a zstd frame whose content is fine but is followed by trailing garbage within `compressed` */
    f.n = second;
    {
        struct fz_buf tmp = {0};
        put_chunk_frame(&tmp, &one, 1, 0, RS_CHUNK_MAGIC, -1, 6);
        struct rs_frame_hdr th;
        memcpy(&th, tmp.b, sizeof th);
        fz_put(&tmp, "JUNKJUNK", 8);
        th.compressed += 8;
        th.checksum = rs_fnv1a(tmp.b + sizeof th, th.compressed);
        memcpy(tmp.b, &th, sizeof th);
        fz_put(&f, tmp.b, tmp.n);
        free(tmp.b);
    }
    emit("frame-trailing-junk", f.b, f.n, "corrupt", 2);
    free(f.b);
    free(one.b);
}

static void events_cases(void)
{
    chunk_event_cases();
    string_cases();
    frame_cases();
}

static void header_cases(void)
{
    struct fz_buf f = {0};
    /* no tags at all */
    fz_put_preamble(&f, NULL, 0);
    emit("header-empty", f.b, f.n, "incomplete", 0);
    /* newer minor + an unknown tag + a known tag of the wrong length */
    f.n = 0;
    unsigned char tlv[] = {200, 0, 3, 0, 'x', 'y', 'z', RS_HDR_PID, 0, 3, 0, 1, 2, 3};
    fz_put_preamble(&f, tlv, sizeof tlv);
    memcpy(f.b + 10, &(uint16_t){RS_FORMAT_MINOR + 7}, 2);
    emit("header-newer-minor", f.b, f.n, "incomplete", 0);
    /* a field that runs past the block */
    f.n = 0;
    unsigned char over[] = {RS_HDR_HOST, 0, 0xff, 0xff, 'h'};
    fz_put_preamble(&f, over, sizeof over);
    emit("header-field-overrun", f.b, f.n, "refused", -1);
    /* 3 stray bytes */
    f.n = 0;
    unsigned char stray[] = {RS_HDR_PID, 0, 0, 0, 1, 2, 3};
    fz_put_preamble(&f, stray, sizeof stray);
    emit("header-stray-bytes", f.b, f.n, "refused", -1);
    /* header_bytes beyond the limit, and beyond the file */
    f.n = 0;
    fz_put_min_header(&f);
    memcpy(f.b + 12, &(uint32_t){0xffffffffu}, 4);
    emit("header-len-huge", f.b, f.n, "refused", -1);
    memcpy(f.b + 12, &(uint32_t){RS_MAX_HEADER_BYTES}, 4);
    emit("header-len-past-eof", f.b, f.n, "refused", -1);
    /* wrong major version */
    f.n = 0;
    fz_put_min_header(&f);
    memcpy(f.b + 8, &(uint16_t){RS_FORMAT_MAJOR + 1}, 2);
    emit("version-major-next", f.b, f.n, "refused", -1);
    memcpy(f.b + 8, &(uint16_t){0}, 2);
    emit("version-major-zero", f.b, f.n, "refused", -1);
    /* two CMDLINE tags: the first short, the second long; cmdline_len must match the string kept */
    f.n = 0;
    unsigned char dup[4 + 2 + 4 + 64];
    memset(dup, 'A', sizeof dup);
    memcpy(dup, (unsigned char[]){RS_HDR_CMDLINE, 0, 2, 0}, 4);
    memcpy(dup + 4, "a\0", 2);
    memcpy(dup + 6, (unsigned char[]){RS_HDR_CMDLINE, 0, 64, 0}, 4);
    fz_put_preamble(&f, dup, sizeof dup);
    emit("header-dup-cmdline", f.b, f.n, "incomplete", 0);
    /* hostile strings in every string tag (control chars, quotes, HTML, invalid UTF-8, embedded NUL) */
    f.n = 0;
    struct fz_buf t = {0};
    static const char nasty[] = "<img src=x onerror=alert(1)>\"\\\x1b]0;pwn\x07\xff\n\0tail";
    for (int tag = RS_HDR_HOST; tag <= RS_HDR_BOOT_ID; tag++) {
        if (tag >= RS_HDR_PID && tag <= RS_HDR_WORLD_SIZE) continue;
        if (tag == RS_HDR_START_REALTIME || tag == RS_HDR_START_MONO) continue;
        uint16_t tg = (uint16_t)tag, len = sizeof nasty - 1;
        fz_put(&t, &tg, 2);
        fz_put(&t, &len, 2);
        fz_put(&t, nasty, len);
    }
    int64_t neg = -7;
    uint16_t tg = RS_HDR_RANK, l8 = 8;
    fz_put(&t, &tg, 2);
    fz_put(&t, &l8, 2);
    fz_put(&t, &neg, 8);
    tg = RS_HDR_WORLD_SIZE;
    int64_t huge = INT64_MAX;
    fz_put(&t, &tg, 2);
    fz_put(&t, &l8, 2);
    fz_put(&t, &huge, 8);
    fz_put_preamble(&f, t.b, (uint32_t)t.n);
    emit("header-hostile-strings", f.b, f.n, "incomplete", 0);
    free(t.b);
    free(f.b);
}

/* Files cut inside a frame of several zstd blocks (formats/SPEC.md, "Files cut inside a frame"): frame 0 holds
 * a STRING and a MARK; frame 1 one chunk of 10000 MARKs (16 + 320000 bytes of payload, no clock anchors),
 * which zstd compresses in 128 KiB blocks. The events a reader recovers from a cut in block 3 are those
 * whole in the first 2 x 128 KiB: (262144 - 16) / 32 = 8191, by arithmetic, not by a reader. Where block 2
 * ends is found with zstd's streaming decoder (the smallest prefix that yields 256 KiB). */
#define CUT_MARKS 10000
static void cut_cases(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/.cut.tmp", outdir);
    unlink(path);
    struct rs_file_info info = {.host = "node-c", .pid = 77, .ppid = 1, .rank = -1, .local_rank = -1, .world_size = -1};
    int err = 0;
    struct rs_writer *w = rs_writer_open(path, &info, &err);
    if (!w) {
        fprintf(stderr, "mkcorpus: writer: %s\n", strerror(-err));
        exit(1);
    }
    rs_writer_set_clock(w, NULL, NULL);
    uint32_t id = rs_writer_intern(w, "step");
    struct rs_ev_MARK m;
    RS_EV_INIT(&m, MARK, 1000);
    m.name = id;
    rs_writer_append(w, 7, &m, sizeof m);
    rs_writer_flush(w);
    static struct rs_ev_MARK ms[CUT_MARKS];
    for (int i = 0; i < CUT_MARKS; i++) {
        RS_EV_INIT(&ms[i], MARK, 2000 + 10 * (uint64_t)i);
        ms[i].name = id;
        ms[i].value = (uint64_t)i * 7;
    }
    rs_writer_append(w, 7, ms, sizeof ms);
    rs_writer_flush(w);
    rs_writer_close(w);
    size_t n;
    unsigned char *b = slurp(path, &n);
    unlink(path);
    size_t off[4];
    int nf = frames_of(b, n, off, 3);
    struct rs_frame_hdr fh;
    memcpy(&fh, b + off[1], sizeof fh);
    if (nf != 2 || fh.raw != 16 + sizeof ms) {
        fprintf(stderr, "mkcorpus: cut base: %d frames, frame 1 of %u bytes\n", nf, fh.raw);
        exit(1);
    }
    const unsigned char *z = b + off[1] + sizeof fh;
    size_t two = 0; /* compressed bytes that decode to the first two blocks */
    ZSTD_DCtx *d = ZSTD_createDCtx();
    static unsigned char out[16 + sizeof ms];
    for (size_t k = 1; k <= fh.compressed && !two; k++) {
        ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
        ZSTD_inBuffer in = {z, k, 0};
        ZSTD_outBuffer o = {out, sizeof out, 0};
        while (in.pos < in.size && !ZSTD_isError(ZSTD_decompressStream(d, &o, &in)) && o.pos < sizeof out) {}
        if (o.pos >= 2 * 131072) two = k;
    }
    ZSTD_freeDCtx(d);
    if (!two || two + 8 >= fh.compressed) {
        fprintf(stderr, "mkcorpus: cut base: frame 1 has no third zstd block\n");
        exit(1);
    }
    const long in_blocks = (2 * 131072 - 16) / 32;
    emit_reason = "8191 events recovered";
    variant("trunc-cut-blocks", b, off[1] + sizeof fh + two + 5, "truncated", 2 + in_blocks);
    emit_reason = "0 events recovered";
    variant("trunc-cut-first-block", b, off[1] + sizeof fh + 20, "truncated", 2);
    /* an open frame (a writer's header before the frame is finished): whole, then cut in block 3 */
    struct rs_frame_hdr open = {RS_FRAME_MAGIC, RS_MAX_FRAME_COMPRESSED, RS_MAX_FRAME_RAW, 0, fh.seq};
    memcpy(b + off[1], &open, sizeof open);
    emit_reason = "still open";
    variant("trunc-open-frame", b, n, "truncated", 2 + CUT_MARKS);
    emit_reason = "8191 events recovered";
    variant("trunc-open-cut", b, off[1] + sizeof fh + two + 5, "truncated", 2 + in_blocks);
    free(b);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: mkcorpus OUTDIR EXPECTFILE\n");
        return 2;
    }
    outdir = argv[1];
    mkdir(outdir, 0755);
    expect = fopen(argv[2], "w");
    if (!expect) {
        perror(argv[2]);
        return 1;
    }
    fprintf(expect,
            "# generated by tests/corpus/mkcorpus.c: name, status a correct reader reports, events it hands out\n");

    /* not traces at all */
    emit("empty", "", 0, "refused", -1);
    emit("magic-only", RS_MAGIC, 8, "refused", -1);
    emit("not-a-trace", "hello, I am a text file\n", 24, "refused", -1);
    emit("magic-lowercase", "rstrace1\1\0\0\0\0\0\0\0", 16, "refused", -1);

    size_t n;
    unsigned char *b = make_base(&n, 0); /* the older encoding (RS_CHUNK_TS_DELTA only) stays readable */
    variant("base-ts-delta-only", b, n, "complete", count_events(b, n));
    free(b);
    b = make_base(&n, 1);
    size_t off[16];
    int nf = frames_of(b, n, off, 15);
    if (nf < 3) {
        fprintf(stderr, "mkcorpus: base trace has %d frames, want 3\n", nf);
        return 1;
    }
    long upto[16];
    upto[0] = 0;
    for (int i = 1; i <= nf; i++) upto[i] = count_events(b, off[i]);
    base_events = upto[nf];
    variant("base", b, n, "complete", base_events);
    /* truncations */
    variant("trunc-preamble", b, 12, "refused", -1);
    variant("trunc-header", b, off[0] - 5, "refused", -1);
    variant("trunc-at-frame-1", b, off[1], "complete", upto[1]);
    variant("trunc-frame-hdr", b, off[1] + 7, "truncated", upto[1]);
    variant("trunc-frame-body", b, off[2] - 3, "truncated", upto[1]);
    variant("trunc-last-byte", b, n - 1, "truncated", upto[nf - 1]);
    variant("trunc-first-frame", b, off[0] + 30, "truncated", 0);
    /* frame header damage on frame 2 (index 1) */
    unsigned char *c = malloc(n);
    struct rs_frame_hdr fh;
#define WITH_FH(name, status, mutate)         \
    do {                                      \
        memcpy(c, b, n);                      \
        memcpy(&fh, c + off[1], sizeof fh);   \
        mutate;                               \
        memcpy(c + off[1], &fh, sizeof fh);   \
        variant(name, c, n, status, upto[1]); \
    } while (0)
    WITH_FH("frame-bad-magic", "corrupt", fh.magic ^= 1);
    WITH_FH("frame-compressed-huge", "corrupt", fh.compressed = 0xffffffffu);
    WITH_FH("frame-compressed-limit", "corrupt", fh.compressed = RS_MAX_FRAME_COMPRESSED + 1);
    WITH_FH("frame-raw-huge", "corrupt", fh.raw = RS_MAX_FRAME_RAW + 8);
    WITH_FH("frame-zero-sizes", "corrupt", (fh.compressed = 0, fh.raw = 0));
    WITH_FH("frame-bad-checksum", "corrupt", fh.checksum ^= 0x80);
    /* one bit flipped in the compressed bytes (the checksum catches it) */
    memcpy(c, b, n);
    c[off[1] + sizeof fh + 9] ^= 0x10;
    variant("frame-bitflip-data", c, n, "corrupt", upto[1]);
    /* bytes zeroed over the end of frame 2 and the start of frame 3 (a torn write) */
    memcpy(c, b, n);
    memset(c + off[2] - 16, 0, 48);
    variant("frame-torn-write", c, n, "corrupt", upto[1]);
    /* garbage appended after a complete file */
    memcpy(c, b, n);
    c = realloc(c, n + 40);
    memset(c + n, 0xa5, 40);
    variant("trailing-garbage", c, n + 40, "corrupt", base_events);
    free(c);
    free(b);

    header_cases();
    events_cases();
    cut_cases();
    fclose(expect);
    return 0;
}
