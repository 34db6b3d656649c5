/* rs-mkgd: crafted traces with planted GPUDirect and H2D truths for tests/analyzer/gd_report.t and h2d_share.t,
 * written through the real writer (tracer/writer.h). Every rank: 10 steps of 10 ms (core MARK events "step").
 *
 *     rs-mkgd gdr DIR MODE0 MODE1 [bounce|noverbs]
 *         2 ranks (DIR/rank0.rtrace, rank1.rtrace), rank r on QP 0x108 + r. Each step: 4 zero-byte receive WRs
 *         posted at +1 ms, one 256 KiB RDMA write posted at +2 ms, completed 100 us later: 10 sends and 40
 *         receives per rank. MODE per rank: host (host MR, sends from host memory), dev (device MR, sends from
 *         device memory), devreg (a device MR registered, sends from a host MR). A host MR for the receives.
 *         bounce: a 256 KiB device->host copy of 200 us ending 20 us before each send (a GPU program staging
 *         through host memory: 0.2 ms of bounce copies per 10 ms step, 2 %).
 *         noverbs: the header says "all,-verbs" (RAILSCOPE_EVENTS=all,-verbs) and no verbs event is written.
 *     rs-mkgd h2d DIR PG_N PG_BYTES PG_US PIN_N PIN_BYTES PIN_US
 *         1 rank. Each step from +1 ms: PG_N host->device copy calls of PG_BYTES from pageable memory taking
 *         PG_US microseconds each, then PIN_N of PIN_BYTES from pinned memory taking PIN_US each (cudart
 *         wrappers' CUDA_COPY_CALL; a pinned call of 1-2 us is an asynchronous copy returning at once).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/events_verbs.h"
#include "tests/analyzer/craft.h"
#include "tracer/writer.h"

static struct rs_writer *w;
static const uint64_t T0 = 1000000, STEP = 10000000, US = 1000;

static void die(const char *what)
{
    fprintf(stderr, "rs-mkgd: %s\n", what);
    exit(2);
}

static void put(const void *ev)
{
    const struct rs_ev_hdr *h = ev;
    if (rs_writer_append(w, 7, ev, h->size) < 0) die("rs_writer_append failed");
}

static uint32_t open_rank(const char *dir, int rank, int world, const char *events)
{
    if (!(w = craft_open(dir, rank, world, 5150, events, "rs-mkgd", 0))) die("cannot create the file");
    uint32_t name = rs_writer_intern(w, "step");
    if (!name) die("rs_writer_intern failed");
    return name;
}

static void close_rank(uint64_t ts)
{
    struct rs_ev_PROC_END p;
    memset(&p, 0, sizeof p);
    RS_EV_INIT(&p, PROC_END, ts);
    put(&p);
    if (rs_writer_close(w) != 0) die("write failed");
}

static void mark(uint64_t ts, uint64_t value, uint32_t name)
{
    struct rs_ev_MARK m;
    memset(&m, 0, sizeof m);
    RS_EV_INIT(&m, MARK, ts);
    m.value = value;
    m.name = name;
    put(&m);
}

static void reg_mr(uint64_t ts, uint64_t addr, uint64_t len, unsigned mem)
{
    struct rs_ev_IBV_REG_MR e;
    memset(&e, 0, sizeof e);
    RS_EV_INIT(&e, IBV_REG_MR, ts);
    e.addr = addr;
    e.length = len;
    e.mr = addr | 1;
    e.lkey = (uint32_t)(addr >> 12);
    e.mem = mem;
    e.dmabuf_fd = -1; /* not a dmabuf registration */
    e.cuda_device = mem == RS_MEM_DEVICE ? 0 : -1;
    put(&e);
}

static void post_send(uint64_t ts, uint32_t qp, uint64_t wr_id, uint64_t bytes, unsigned mem)
{
    struct rs_ev_IBV_POST_SEND e;
    memset(&e, 0, sizeof e);
    RS_EV_INIT(&e, IBV_POST_SEND, ts);
    e.wr_id = wr_id;
    e.bytes = bytes;
    e.qp_num = qp;
    e.opcode = 4; /* RDMA write with immediate */
    e.send_flags = 2;
    e.num_sge = 1;
    e.mem = mem;
    put(&e);
}

static void post_recv(uint64_t ts, uint32_t qp, uint64_t wr_id)
{
    struct rs_ev_IBV_POST_RECV e;
    memset(&e, 0, sizeof e);
    RS_EV_INIT(&e, IBV_POST_RECV, ts);
    e.wr_id = wr_id;
    e.qp_num = qp;
    e.mem = RS_MEM_HOST;
    put(&e);
}

static void wc(uint64_t ts, uint32_t qp, uint64_t wr_id, uint32_t bytes)
{
    struct rs_ev_IBV_WC e;
    memset(&e, 0, sizeof e);
    RS_EV_INIT(&e, IBV_WC, ts);
    e.wr_id = wr_id;
    e.cq = 0xc0;
    e.qp_num = qp;
    e.opcode = 1; /* IBV_WC_RDMA_WRITE */
    e.bytes = bytes;
    put(&e);
}

static void d2h_copy(uint64_t start, uint64_t end, uint64_t bytes)
{
    struct rs_ev_CUDA_MEMCPY e;
    memset(&e, 0, sizeof e);
    RS_EV_INIT(&e, CUDA_MEMCPY, start);
    e.end = end;
    e.bytes = bytes;
    e.copy_kind = 2; /* device to host */
    e.src_kind = 3;  /* device */
    e.dst_kind = 2;  /* pinned host */
    put(&e);
}

static void copy_call(uint64_t ts, uint64_t dur, uint64_t bytes, int pageable)
{
    struct rs_ev_CUDA_COPY_CALL e;
    memset(&e, 0, sizeof e);
    RS_EV_INIT(&e, CUDA_COPY_CALL, ts);
    e.dur = dur;
    e.bytes = bytes;
    e.dst = 0x7e0000000000ull;
    e.src = pageable ? 0x5000000 : 0x6000000;
    e.copy_kind = 1; /* host to device */
    e.async = dur <= 2 * US;
    e.src_mem = pageable ? 0 : 1; /* 0: unregistered (pageable) host memory; 1: pinned */
    e.dst_mem = 2;
    put(&e);
}

static void mk_gdr(const char *dir, const char *const mode[2], const char *opt)
{
    const uint64_t sz = 256 * 1024;
    int bounce = opt && !strcmp(opt, "bounce"), noverbs = opt && !strcmp(opt, "noverbs");
    for (int r = 0; r < 2; r++) {
        uint32_t name = open_rank(dir, r, 2, noverbs ? "all,-verbs" : "all");
        const uint32_t qp = 0x108 + (uint32_t)r;
        int dev = !strcmp(mode[r], "dev"), devreg = !strcmp(mode[r], "devreg");
        if (!dev && !devreg && strcmp(mode[r], "host")) die("MODE: host, dev or devreg");
        unsigned smem = dev ? RS_MEM_DEVICE : RS_MEM_HOST;
        if (!noverbs) {
            reg_mr(T0 / 2, 0x10000000, sz, RS_MEM_HOST); /* receive buffer */
            if (dev || devreg) reg_mr(T0 / 2 + US, 0x7e0000000000ull, sz, RS_MEM_DEVICE);
            if (!dev) reg_mr(T0 / 2 + 2 * US, 0x20000000, sz, RS_MEM_HOST);
        }
        for (uint64_t k = 0; k < 10; k++) {
            uint64_t s = T0 + k * STEP, send = s + 2000 * US;
            mark(s, k, name);
            if (bounce) d2h_copy(send - 220 * US, send - 20 * US, sz);
            if (noverbs) continue;
            for (uint64_t i = 0; i < 4; i++) post_recv(s + 1000 * US + i * US, qp, 1000 + 4 * k + i);
            post_send(send, qp, k + 1, sz, smem);
            wc(send + 100 * US, qp, k + 1, (uint32_t)sz);
        }
        close_rank(T0 + 10 * STEP);
    }
}

static void mk_h2d(const char *dir, long pg_n, long pg_b, long pg_us, long pin_n, long pin_b, long pin_us)
{
    uint32_t name = open_rank(dir, 0, 1, "all");
    for (uint64_t k = 0; k < 10; k++) {
        uint64_t s = T0 + k * STEP, t = s + 1000 * US;
        mark(s, k, name);
        for (long i = 0; i < pg_n; i++, t += (uint64_t)pg_us * US + 5 * US)
            copy_call(t, (uint64_t)pg_us * US, (uint64_t)pg_b, 1);
        for (long i = 0; i < pin_n; i++, t += (uint64_t)pin_us * US + 5 * US)
            copy_call(t, (uint64_t)pin_us * US, (uint64_t)pin_b, 0);
    }
    close_rank(T0 + 10 * STEP);
}

int main(int argc, char **argv)
{
    if (argc >= 5 && !strcmp(argv[1], "gdr")) {
        const char *mode[2] = {argv[3], argv[4]};
        mk_gdr(argv[2], mode, argc >= 6 ? argv[5] : NULL);
    } else if (argc >= 9 && !strcmp(argv[1], "h2d"))
        mk_h2d(argv[2], atol(argv[3]), atol(argv[4]), atol(argv[5]), atol(argv[6]), atol(argv[7]), atol(argv[8]));
    else {
        fprintf(stderr, "usage: rs-mkgd gdr DIR MODE0 MODE1 [bounce|noverbs] | h2d DIR PG_N PG_BYTES PG_US PIN_N "
                        "PIN_BYTES PIN_US\n");
        return 2;
    }
    return 0;
}
