/* mkhostile: writes crafted trace files for the CLI tests (the .t files of tests/cli), assembled frame by frame with
 * the helpers of tests/fuzz/fuzz_common.h, so nothing large is checked in:
 *
 *     mkhostile marks FILE NFRAMES       NFRAMES frames of 64 MiB of MARK events (2.1 M marks each) that
 *                                        compress to ~6 KB each: 20 frames = 42 M marks in ~120 KB (D7)
 *     mkhostile strings FILE N LEN       N distinct interned strings of LEN bytes (<= 4096), highly
 *                                        compressible (600000 x 4096: 2.4 GB of text in a few MB) (info)
 *     mkhostile threads FILE N           N threads (tids 1..N), each a THREAD_START + one MARK (D8)
 *     mkhostile nvtx FILE N              N threads, each a THREAD_START + one NVTX range (report's stacks)
 *     mkhostile utf8 FILE                hostile strings (invalid UTF-8, encoded surrogates, overlong forms,
 *                                        control characters, quotes) as header fields, thread names, mark
 *                                        names, warnings and host facts (D9)
 *     mkhostile enums FILE               every kind with all number fields = v, v in 0..40, 128..140, 255
 *     mkhostile plain FILE               a small complete trace of a process without a rank (a launcher)
 *     mkhostile comms DIR LATE_STEPS [translog]  4 ranks, 10 steps (step marks), collectives on two communicators
 *                                        per rank (TP {0,1} {2,3}, DP {0,2} {1,3}), rank 3 1 ms late in
 *                                        each of its collectives in the steps listed ("1,3,5")
 *     mkhostile transport FILE VIA...    rank 0 with one NCCL_TRANSPORT connection per VIA ("NET/IB/0/GDRDMA",
 *                                        "NET/IB/0", "NET/Socket/0", "P2P/IPC", "SHM") (the GPUDirect verdict)
 *     mkhostile clean                    filter: each stdin line through util/utf8.h's rs_utf8_clean
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "util/utf8.h"

static void save(const char *path, const struct fz_buf *f)
{
    FILE *o = fopen(path, "wb");
    if (!o || fwrite(f->b, 1, f->n, o) != f->n || fclose(o)) {
        perror(path);
        exit(1);
    }
}

/* A raw frame being assembled: chunks of events. */
struct rawf {
    struct fz_buf b;
    size_t chunk; /* offset of the open chunk's header, (size_t)-1 when none */
};
static void chunk_open(struct rawf *r, uint32_t tid, uint32_t flags)
{
    struct rs_chunk_hdr c = {RS_CHUNK_MAGIC, tid, 0, flags};
    r->chunk = r->b.n;
    fz_put(&r->b, &c, sizeof c);
}
static void chunk_close(struct rawf *r)
{
    struct rs_chunk_hdr c;
    memcpy(&c, r->b.b + r->chunk, sizeof c);
    c.bytes = (uint32_t)(r->b.n - r->chunk - sizeof c);
    memcpy(r->b.b + r->chunk, &c, sizeof c);
}
static void frame_flush(struct fz_buf *f, struct rawf *r, uint64_t *seq)
{
    if (!r->b.n) return;
    fz_put_raw_frame(f, r->b.b, r->b.n, (*seq)++);
    r->b.n = 0;
}

static void put_string(struct rawf *r, uint32_t id, const char *s, uint32_t len)
{
    uint64_t buf[(sizeof(struct rs_ev_STRING) + RS_MAX_STRING + 8) / 8] = {0};
    struct rs_ev_STRING *e = (struct rs_ev_STRING *)buf;
    size_t size = (sizeof *e + len + 7) & ~(size_t)7;
    e->h.ts = 1;
    e->h.kind = RS_EV_STRING;
    e->h.size = (uint16_t)size;
    e->id = id;
    e->len = len;
    memcpy(e + 1, s, len);
    fz_put(&r->b, buf, size);
}

static void put_mark(struct rawf *r, uint64_t ts, uint64_t value, uint32_t name)
{
    struct rs_ev_MARK m;
    memset(&m, 0, sizeof m);
    RS_EV_INIT(&m, MARK, ts);
    m.value = value;
    m.name = name;
    fz_put(&r->b, &m, sizeof m);
}

/* A header like the writer's (rank 0 of 1, monotonic clock; no rank tags for a launcher-like process). */
static int no_rank, hdr_rank, hdr_world = 1;
static void put_header(struct fz_buf *f, const char *host, const char *cmd, size_t cmdlen)
{
    struct fz_buf t = {0};
    uint64_t v;
#define TLV_U64(tag, val)          \
    do {                           \
        uint16_t hd[2] = {tag, 8}; \
        v = (val);                 \
        fz_put(&t, hd, 4);         \
        fz_put(&t, &v, 8);         \
    } while (0)
#define TLV_STR(tag, s, n)                     \
    do {                                       \
        uint16_t hd[2] = {tag, (uint16_t)(n)}; \
        fz_put(&t, hd, 4);                     \
        fz_put(&t, s, n);                      \
    } while (0)
    TLV_STR(RS_HDR_HOST, host, strlen(host));
    TLV_U64(RS_HDR_PID, 4242 + (uint64_t)hdr_rank);
    TLV_U64(RS_HDR_PPID, 1);
    if (!no_rank) {
        TLV_U64(RS_HDR_RANK, (uint64_t)hdr_rank);
        TLV_U64(RS_HDR_LOCAL_RANK, (uint64_t)hdr_rank);
        TLV_U64(RS_HDR_WORLD_SIZE, (uint64_t)hdr_world);
    }
    TLV_STR(RS_HDR_CMDLINE, cmd, cmdlen);
    TLV_U64(RS_HDR_START_REALTIME, 1700000000000000000ull);
    TLV_U64(RS_HDR_START_MONO, 1000);
    TLV_STR(RS_HDR_CLOCK, "monotonic", 9);
    TLV_STR(RS_HDR_EVENTS, "all", 3);
    TLV_STR(RS_HDR_TRACER_VERSION, "0.1.0", 5);
#undef TLV_U64
#undef TLV_STR
    fz_put_preamble(f, t.b, (uint32_t)t.n);
    free(t.b);
}

static void put_proc_end(struct rawf *r, uint64_t ts)
{
    struct rs_ev_PROC_END p;
    memset(&p, 0, sizeof p);
    RS_EV_INIT(&p, PROC_END, ts);
    fz_put(&r->b, &p, sizeof p);
}

static void put_thread_start(struct rawf *r, uint64_t ts, uint32_t name)
{
    struct rs_ev_THREAD_START t;
    memset(&t, 0, sizeof t);
    RS_EV_INIT(&t, THREAD_START, ts);
    t.name = name;
    fz_put(&r->b, &t, sizeof t);
}

/* D7: a 64 MiB frame of identical MARK events (ts deltas and field deltas constant), compressed once and
 * repeated NFRAMES times with increasing seq. */
static void mk_marks(const char *path, long nframes)
{
    struct fz_buf f = {0};
    struct rawf r = {0};
    uint64_t seq = 0;
    put_header(&f, "node-a", "train.py", 8);
    chunk_open(&r, 0, 0);
    put_string(&r, 1, "step", 4);
    chunk_close(&r);
    frame_flush(&f, &r, &seq);
    size_t n = (RS_MAX_FRAME_RAW - sizeof(struct rs_chunk_hdr)) / sizeof(struct rs_ev_MARK);
    chunk_open(&r, 7, RS_CHUNK_TS_DELTA | RS_CHUNK_FIELD_DELTA);
    put_mark(&r, 2000, 0, 1);
    for (size_t i = 1; i < n; i++) put_mark(&r, 1000, 1, 0); /* deltas: ts +1000, value +1, same name */
    chunk_close(&r);
    struct fz_buf one = {0};
    fz_put_raw_frame(&one, r.b.b, r.b.n, 0);
    struct rs_frame_hdr fh;
    memcpy(&fh, one.b, sizeof fh);
    for (long k = 0; k < nframes; k++) {
        fh.seq = seq++;
        fz_put(&f, &fh, sizeof fh);
        fz_put(&f, one.b + sizeof fh, fh.compressed);
    }
    save(path, &f);
    fprintf(stderr, "mkhostile: %s: %ld marks, %zu bytes\n", path, (long)n * nframes, f.n);
}

/* info memory: n distinct strings of len bytes each, as many per frame as fit. */
static void mk_strings(const char *path, long n, long len)
{
    if (len < 16 || len > RS_MAX_STRING) len = RS_MAX_STRING;
    struct fz_buf f = {0};
    struct rawf r = {0};
    uint64_t seq = 0;
    put_header(&f, "node-a", "train.py", 8);
    char *s = malloc((size_t)len);
    memset(s, 'k', (size_t)len);
    chunk_open(&r, 0, 0);
    size_t per = (sizeof(struct rs_ev_STRING) + (size_t)len + 7) & ~(size_t)7;
    for (long i = 1; i <= n; i++) {
        if (r.b.n + per > RS_MAX_FRAME_RAW / 4) {
            chunk_close(&r);
            frame_flush(&f, &r, &seq);
            chunk_open(&r, 0, 0);
        }
        char num[24];
        int w = snprintf(num, sizeof num, "k%014ld", i);
        memcpy(s, num, (size_t)w);
        put_string(&r, (uint32_t)i, s, (uint32_t)len);
    }
    put_mark(&r, 5000, 1, 1);
    put_proc_end(&r, 6000);
    chunk_close(&r);
    frame_flush(&f, &r, &seq);
    save(path, &f);
    free(s);
    fprintf(stderr, "mkhostile: %s: %ld strings of %ld bytes, %zu bytes\n", path, n, len, f.n);
}

/* An NVTX range push/pop on the chunk's thread. */
static void put_nvtx(struct rawf *r, uint64_t ts, uint32_t message)
{
    struct rs_ev_NVTX_PUSH a;
    memset(&a, 0, sizeof a);
    RS_EV_INIT(&a, NVTX_PUSH, ts);
    a.message = message;
    fz_put(&r->b, &a, sizeof a);
    struct rs_ev_NVTX_POP b;
    memset(&b, 0, sizeof b);
    RS_EV_INIT(&b, NVTX_POP, ts + 5);
    fz_put(&r->b, &b, sizeof b);
}

/* D8: n threads, each with a named THREAD_START and one MARK (nvtx: one NVTX range), one chunk per thread. */
static void mk_threads(const char *path, long n, int nvtx)
{
    struct fz_buf f = {0};
    struct rawf r = {0};
    uint64_t seq = 0;
    put_header(&f, "node-a", "train.py", 8);
    chunk_open(&r, 0, 0);
    put_string(&r, 1, "worker", 6);
    put_string(&r, 2, "step", 4);
    chunk_close(&r);
    for (long i = 1; i <= n; i++) {
        if (r.b.n > RS_MAX_FRAME_RAW / 8) frame_flush(&f, &r, &seq);
        chunk_open(&r, (uint32_t)i, 0);
        put_thread_start(&r, 2000 + (uint64_t)i, 1);
        if (nvtx) put_nvtx(&r, 3000 + (uint64_t)i, 2);
        else put_mark(&r, 3000 + (uint64_t)i, (uint64_t)i, 2);
        chunk_close(&r);
    }
    chunk_open(&r, 0, 0);
    put_proc_end(&r, 3000 + (uint64_t)n + 10);
    chunk_close(&r);
    frame_flush(&f, &r, &seq);
    save(path, &f);
    fprintf(stderr, "mkhostile: %s: %ld threads, %zu bytes\n", path, n, f.n);
}

/* D9: every string a JSON output may print is hostile. */
static const struct {
    const char *s;
    size_t n;
} bad[] = {
#define B(lit)              \
    {                       \
        lit, sizeof lit - 1 \
    }
    B("lone high surrogate \xed\xa0\x80 end"),
    B("lone low surrogate \xed\xbf\xbf end"),
    B("surrogate pair encoded as CESU \xed\xa0\xbd\xed\xb8\x80 end"),
    B("overlong slash \xc0\xaf and NUL \xc0\x80 end"),
    B("truncated \xe2\x82 then ascii"),
    B("stray continuation \x80\xbf and \xff\xfe bytes"),
    B("above U+10FFFF \xf4\x90\x80\x80 and \xf5\x80\x80\x80 end"),
    B("controls \x01\x02\x1b[31m\x7f tab\there nl\nhere cr\r"),
    B("quote \" backslash \\ slash / </script> end"),
    B("valid multibyte: caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 end"),
    B("ends inside a sequence \xf0\x9f\x98"),
    B("\xed\xa0\x80"),
#undef B
};
#define NBAD (sizeof bad / sizeof bad[0])

static void mk_utf8(const char *path)
{
    struct fz_buf f = {0};
    struct rawf r = {0};
    uint64_t seq = 0;
    char host[] = "node-\xed\xa0\x80-\xff\x01";
    char cmd[] = "train\xc0\xaf.py\0--name=\xed\xbf\xbf\"\\\x1b";
    put_header(&f, host, cmd, sizeof cmd - 1);
    chunk_open(&r, 0, 0);
    for (unsigned i = 0; i < NBAD; i++) put_string(&r, i + 1, bad[i].s, (uint32_t)bad[i].n);
    chunk_close(&r);
    uint64_t ts = 2000;
    for (unsigned i = 0; i < NBAD; i++) {
        chunk_open(&r, 100 + i, 0);
        put_thread_start(&r, ts += 100, i + 1);
        put_mark(&r, ts += 100, i, i + 1);
        struct rs_ev_WARNING w;
        memset(&w, 0, sizeof w);
        RS_EV_INIT(&w, WARNING, ts += 100);
        w.message = i + 1;
        fz_put(&r.b, &w, sizeof w);
        struct rs_ev_HOST_FACT h;
        memset(&h, 0, sizeof h);
        RS_EV_INIT(&h, HOST_FACT, ts += 100);
        h.key = i + 1;
        h.value = (i + 1) % NBAD + 1;
        fz_put(&r.b, &h, sizeof h);
        chunk_close(&r);
    }
    chunk_open(&r, 0, 0);
    put_proc_end(&r, ts += 100);
    chunk_close(&r);
    frame_flush(&f, &r, &seq);
    save(path, &f);
}

/* 18.6: for every known kind, events whose number fields all hold v, for v in 0..40, 128..140 and 255 (so
 * each enum field takes every value of its list); string fields name string 1. */
static void mk_enums(const char *path)
{
    struct fz_buf f = {0};
    struct rawf r = {0};
    uint64_t seq = 0;
    put_header(&f, "node-a", "train.py", 8);
    chunk_open(&r, 0, 0);
    put_string(&r, 1, "name", 4);
    chunk_close(&r);
    chunk_open(&r, 9, 0);
    uint64_t ts = 2000;
    for (unsigned v = 0; v <= 255; v++) {
        if (!(v <= 40 || (v >= 128 && v <= 140) || v == 255)) continue;
        for (unsigned k = 1; k < RS_EV_COUNT; k++) {
            if (!rs_kind_known(k) || k == RS_EV_STRING || k == RS_EV_PARTIAL || k == RS_EV_STACK) continue;
            const struct rs_kind_desc *d = &rs_kinds[k];
            uint64_t buf[64] = {0};
            struct rs_ev_hdr *h = (struct rs_ev_hdr *)buf;
            h->ts = ts += 100;
            h->kind = (uint16_t)k;
            h->size = (uint16_t)(d->size + (d->varlen ? 8 : 0));
            for (unsigned i = 0; i < d->nfields; i++) {
                uint64_t x = d->fields[i].type == RS_T_str ? 1 : v;
                memcpy((char *)buf + rs_field_offset(d, i), &x, rs_ftype_size[d->fields[i].type]);
            }
            if (k == RS_EV_CALL_STACK) ((struct rs_ev_CALL_STACK *)h)->depth = 0;
            fz_put(&r.b, buf, h->size);
        }
    }
    chunk_close(&r);
    chunk_open(&r, 0, 0);
    put_proc_end(&r, ts += 100);
    chunk_close(&r);
    frame_flush(&f, &r, &seq);
    save(path, &f);
}

static void clean_lines(void)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        if (line[n - 1] == '\n') n--;
        char *d = malloc(3 * (size_t)n + 1);
        size_t k = rs_utf8_clean(d, line, (size_t)n);
        fwrite(d, 1, k, stdout);
        putchar('\n');
        free(d);
    }
    free(line);
}

/* NCCL's connection log: one NCCL_TRANSPORT event per VIA, the transport from its prefix. */
static void mk_transport(const char *path, int n, char **via)
{
    struct fz_buf f = {0};
    struct rawf r = {0};
    uint64_t seq = 0;
    put_header(&f, "node-a", "train.py", 8);
    chunk_open(&r, 7, 0);
    for (int i = 0; i < n; i++) {
        put_string(&r, (uint32_t)(i + 1), via[i], (uint32_t)strlen(via[i]));
        struct rs_ev_NCCL_TRANSPORT t;
        memset(&t, 0, sizeof t);
        RS_EV_INIT(&t, NCCL_TRANSPORT, 2000 + (uint64_t)i);
        t.comm_hash = 0x1234;
        t.channel = i;
        t.src = 0;
        t.dst = 1;
        t.dir = (uint32_t)(i & 1);
        t.transport = !strncmp(via[i], "NET/IB", 6)        ? 3
                      : !strncmp(via[i], "NET/Socket", 10) ? 4
                      : !strncmp(via[i], "P2P", 3)         ? 1
                      : !strncmp(via[i], "SHM", 3)         ? 2
                                                           : 0;
        t.via = (uint32_t)(i + 1);
        fz_put(&r.b, &t, sizeof t);
    }
    put_proc_end(&r, 9000);
    chunk_close(&r);
    frame_flush(&f, &r, &seq);
    save(path, &f);
}

/* Two communicators per rank (tensor and data parallel), API records only: rank 3 is late in some steps. */
static void mk_comms(const char *dir, const char *late, int translog)
{
    static const uint64_t tp[4] = {0xa01, 0xa01, 0xa23, 0xa23}, dp[4] = {0xd02, 0xd13, 0xd02, 0xd13};
    const uint64_t step = 10000000, t0 = 1000000;
    hdr_world = 4;
    for (int rk = 0; rk < 4; rk++) {
        struct fz_buf f = {0};
        struct rawf r = {0};
        uint64_t seq = 0;
        hdr_rank = rk;
        put_header(&f, "node-a", "train.py", 8);
        chunk_open(&r, 7, 0);
        put_string(&r, 1, "step", 4);
        for (int c = 0; c < 2 * translog; c++) { /* NCCL's log: TP over P2P, DP over the network */
            static const char *const via[2] = {"P2P/IPC", "NET/Socket/0"};
            put_string(&r, (uint32_t)(2 + c), via[c], (uint32_t)strlen(via[c]));
            struct rs_ev_NCCL_TRANSPORT t;
            memset(&t, 0, sizeof t);
            RS_EV_INIT(&t, NCCL_TRANSPORT, 500000 + (uint64_t)c);
            t.comm_hash = c ? dp[rk] : tp[rk];
            t.src = rk;
            t.dst = rk ^ (c ? 2 : 1);
            t.transport = c ? 4 : 1;
            t.via = (uint32_t)(2 + c);
            fz_put(&r.b, &t, sizeof t);
        }
        unsigned mask = 0;
        for (char *q = (char *)late; *q;) {
            long v = strtol(q, &q, 10);
            if (v >= 0 && v < 10) mask |= 1u << v;
            if (*q) q++;
        }
        for (int k = 0; k < 10; k++) {
            int is_late = !!(mask & 1u << k);
            uint64_t s = t0 + (uint64_t)k * step, lag = rk == 3 && is_late ? 1000000 : 0;
            put_mark(&r, s, (uint64_t)k, 1);
            for (int c = 0; c < 2; c++) { /* TP at +2 ms, DP at +6 ms; each ends 0.5 ms after its last member */
                uint64_t hash = c ? dp[rk] : tp[rk], at = s + (c ? 6000000 : 2000000);
                uint64_t last = at + (is_late && (hash == 0xa23 || hash == 0xd13) ? 1000000 : 0); /* rank 3's */
                struct rs_ev_NCCL_CALL e;
                memset(&e, 0, sizeof e);
                RS_EV_INIT(&e, NCCL_CALL, at + lag);
                e.dur = last + 500000 - (at + lag);
                e.comm = 0x5000 + (uint64_t)c;
                e.comm_hash = hash;
                e.count = 1 << 20;
                e.seq = (uint64_t)k;
                e.func = 0; /* AllReduce */
                e.datatype = 7;
                e.rank = rk;
                e.nranks = 2;
                fz_put(&r.b, &e, sizeof e);
            }
        }
        put_proc_end(&r, t0 + 10 * step);
        chunk_close(&r);
        frame_flush(&f, &r, &seq);
        char path[4096];
        snprintf(path, sizeof path, "%s/rank%d.rtrace", dir, rk);
        save(path, &f);
        free(f.b);
        free(r.b.b);
    }
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "clean")) {
        clean_lines();
        return 0;
    }
    if (argc >= 4 && !strcmp(argv[1], "marks")) mk_marks(argv[2], atol(argv[3]));
    else if (argc >= 5 && !strcmp(argv[1], "strings")) mk_strings(argv[2], atol(argv[3]), atol(argv[4]));
    else if (argc >= 4 && !strcmp(argv[1], "threads")) mk_threads(argv[2], atol(argv[3]), 0);
    else if (argc >= 4 && !strcmp(argv[1], "nvtx")) mk_threads(argv[2], atol(argv[3]), 1);
    else if (argc >= 3 && !strcmp(argv[1], "utf8")) mk_utf8(argv[2]);
    else if (argc >= 3 && !strcmp(argv[1], "enums")) mk_enums(argv[2]);
    else if (argc >= 4 && !strcmp(argv[1], "comms"))
        mk_comms(argv[2], argv[3], argc >= 5 && !strcmp(argv[4], "translog"));
    else if (argc >= 4 && !strcmp(argv[1], "transport")) mk_transport(argv[2], argc - 3, argv + 3);
    else if (argc >= 3 && !strcmp(argv[1], "plain")) {
        no_rank = 1;
        mk_threads(argv[2], 2, 0);
    } else {
        fprintf(stderr, "usage: mkhostile marks|strings|threads|nvtx|utf8|enums|plain|transport|comms FILE [ARGS]\n");
        return 2;
    }
    return 0;
}
