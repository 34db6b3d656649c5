/* rs-mkcraft: crafted trace files for the analyzer's robustness and accuracy tests (the .t files of tests/analyzer),
 * written through the real writer (tracer/writer.h), so nothing large is checked in:
 *
 *     rs-mkcraft wc FILE N [DUP]  one rank, one send QP: N RDMA writes posted (wr_id 1..N, 4 KiB each, 1 us
 *                                 apart) and left outstanding, then N completions for wr_ids never posted,
 *                                 then one completion per posted WR in order. DUP: every WR posted with
 *                                 wr_id 7 (ids reused), the unknown completions use 8.
 *     rs-mkcraft comms DIR        4 ranks, 10 steps (step marks), three communicators of different
 *                                 membership: WORLD {0,1,2,3} one AllReduce a step (rank 3 1 ms late in
 *                                 every step), A {0,1} one a step (rank 0 1 ms late in steps 2 and 5),
 *                                 B {2,3} three a step. Ranks 0 and 1 take part in 20 collectives, ranks 2
 *                                 and 3 in 40; the run has 50.
 *     rs-mkcraft turns DIR        4 ranks, 12 steps (step marks), one WORLD AllReduce a step at +1 ms with
 *                                 one rank 1 ms late in turns: rank 0 in steps 0, 4, 8, 11, rank 1 in 1, 5,
 *                                 9, rank 2 in 2, 6, 10, rank 3 in 3, 7 (no rank costs half of the wait)
 *     rs-mkcraft lone DIR         4 ranks, 12 steps (step marks), one WORLD AllReduce a step at +1 ms: rank 3
 *                                 0.8 ms late in step 5 (the one straggler), and in each other step rank k % 3
 *                                 95 us late, under the lateness threshold (1 % of the 10 ms step): the wait
 *                                 those cause is charged to no rank, so rank 3 costs less than half of it
 *     rs-mkcraft pair DIR [US]    4 ranks, 12 steps (step marks), one WORLD AllReduce a step at +1 ms: rank 1
 *                                 1 ms late in the odd steps, rank 2 US microseconds (default 1000) late in the
 *                                 even ones: with 1000 the two cost the same (a tie), each half of the wait
 *     rs-mkcraft round DIR        the same, ranks 0-3 1 ms late in turns, 3 steps each (a four-way tie)
 *     rs-mkcraft commlog FILE N   one rank in N communicators (distinct hashes): per communicator the
 *                                 profiler's init, one NCCL_TRANSPORT connection (NET/Socket) and one
 *                                 AllReduce record of the plugin (each looked its communicator up in a list)
 *     rs-mkcraft marks FILE N [RANK]  rank RANK (default 0) of 1024, N core MARK events named "step" 1 us
 *                                 apart (N steps)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/analyzer/craft.h"
#include "tracer/writer.h"

static struct rs_writer *w;
static uint32_t cur_tid = 7;

static void die(const char *what)
{
    fprintf(stderr, "rs-mkcraft: %s\n", what);
    exit(2);
}

static void put(const void *ev)
{
    const struct rs_ev_hdr *h = ev;
    if (rs_writer_append(w, cur_tid, ev, h->size) < 0) die("rs_writer_append failed");
}

static void open_rank(const char *path, int rank, int world)
{
    w = craft_open_path(path, rank, world, 4242, "all", "rs-mkcraft", 0);
    if (!w) die("cannot create the file");
    cur_tid = 7;
}

static void close_rank(uint64_t ts)
{
    struct rs_ev_PROC_END p;
    memset(&p, 0, sizeof p);
    RS_EV_INIT(&p, PROC_END, ts);
    put(&p);
    if (rs_writer_close(w) != 0) die("write failed");
}

static void post_send(uint64_t ts, uint32_t qp, uint64_t wr_id, uint64_t bytes)
{
    struct rs_ev_IBV_POST_SEND e;
    memset(&e, 0, sizeof e);
    RS_EV_INIT(&e, IBV_POST_SEND, ts);
    e.wr_id = wr_id;
    e.bytes = bytes;
    e.qp_num = qp;
    e.opcode = 0; /* RDMA write */
    e.send_flags = 2;
    e.num_sge = 1;
    e.mem = 1; /* device memory */
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

static void mk_wc(const char *path, long n, int dup)
{
    const uint32_t qp = 0x77;
    open_rank(path, 0, 1);
    uint64_t t = 100000;
    for (long i = 0; i < n; i++) post_send(t += 1000, qp, dup ? 7 : (uint64_t)i + 1, 4096);
    for (long i = 0; i < n; i++) wc(t += 10, qp, dup ? 8 : (1ull << 40) + (uint64_t)i, 0);
    for (long i = 0; i < n; i++) wc(t += 1000, qp, dup ? 7 : (uint64_t)i + 1, 4096);
    close_rank(t + 1000);
}

/* The mark name every crafted step uses ("step", interned in the open rank file). */
static uint32_t step_name(void)
{
    uint32_t name = rs_writer_intern(w, "step");
    if (!name) die("rs_writer_intern failed");
    return name;
}

/* DIR/rank<rk>.rtrace of an nranks-rank run, opened; returns the "step" mark name interned there. */
static uint32_t open_step_rank(const char *dir, int rk, int nranks)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rank%d.rtrace", dir, rk);
    open_rank(path, rk, nranks);
    return step_name();
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

static void call(uint64_t at, uint64_t end, uint64_t hash, uint64_t seq, int rank, int nranks)
{
    struct rs_ev_NCCL_CALL e;
    memset(&e, 0, sizeof e);
    RS_EV_INIT(&e, NCCL_CALL, at);
    e.dur = end - at;
    e.comm = 0x5000 + hash;
    e.comm_hash = hash;
    e.count = 1 << 20;
    e.seq = seq;
    e.func = 0; /* AllReduce */
    e.datatype = 7;
    e.rank = rank;
    e.nranks = nranks;
    put(&e);
}

static void mk_comms(const char *dir)
{
    const uint64_t step = 10000000, t0 = 1000000, ms = 1000000;
    const uint64_t world = 0xaa, ca = 0xa01, cb = 0xb23;
    for (int rk = 0; rk < 4; rk++) {
        uint32_t name = open_step_rank(dir, rk, 4);
        for (int k = 0; k < 10; k++) {
            uint64_t s = t0 + (uint64_t)k * step;
            mark(s, (uint64_t)k, name);
            /* WORLD at +1 ms: rank 3 arrives 1 ms late; everyone leaves 0.5 ms after it */
            uint64_t at = s + ms, last = at + ms;
            call(rk == 3 ? last : at, last + ms / 2, world, (uint64_t)k, rk, 4);
            if (rk < 2) { /* A at +4 ms: rank 0 late in steps 2 and 5 */
                int late = k == 2 || k == 5;
                at = s + 4 * ms;
                last = at + (late ? ms : 0);
                call(rk == 0 ? last : at, last + ms / 2, ca, (uint64_t)k, rk, 2);
            } else /* B at +4, +5.5, +7 ms: nobody late */
                for (int j = 0; j < 3; j++) {
                    at = s + 4 * ms + (uint64_t)j * 3 * ms / 2;
                    call(at, at + ms / 2, cb, (uint64_t)(3 * k + j), rk - 2, 2);
                }
        }
        close_rank(t0 + 10 * step);
    }
}

/* 4 ranks, 12 steps marked "step", one allreduce a step; late(k, &delay) names the step's late rank and how long
 * after the others (1 ms in) it arrives. */
static void mk_lateness(const char *dir, int (*late)(int k, uint64_t *delay))
{
    const uint64_t step = 10000000, t0 = 1000000, ms = 1000000;
    for (int rk = 0; rk < 4; rk++) {
        uint32_t name = open_step_rank(dir, rk, 4);
        for (int k = 0; k < 13; k++) { /* 13 marks: 12 steps */
            uint64_t s = t0 + (uint64_t)k * step;
            mark(s, (uint64_t)k, name);
            if (k == 12) break;
            uint64_t delay = 0;
            int lr = late(k, &delay);
            uint64_t at = s + ms, last = at + delay;
            call(rk == lr ? last : at, last + ms / 2, 0xaa, (uint64_t)k, rk, 4);
        }
        close_rank(t0 + 12 * step + ms);
    }
}

/* lateness in turns: ranks 0-3 late by 1 ms in 4, 3, 3, 2 of the 12 steps */
static int turns_late(int k, uint64_t *delay)
{
    *delay = 1000000;
    return k == 11 ? 0 : k % 4;
}
static void mk_turns(const char *dir) { mk_lateness(dir, turns_late); }

/* one rank 0.8 ms late once (step 5), the others in turns by 95 us (under the lateness threshold) */
static int lone_late(int k, uint64_t *delay)
{
    *delay = k == 5 ? 800000 : 95000;
    return k == 5 ? 3 : k % 3;
}
static void mk_lone(const char *dir) { mk_lateness(dir, lone_late); }

/* two ranks late in turns: rank 1 by 1 ms in the odd steps, rank 2 by pair_us2 in the even ones */
static uint64_t pair_us2 = 1000;
static int pair_late(int k, uint64_t *delay)
{
    *delay = k % 2 ? 1000000 : pair_us2 * 1000;
    return k % 2 ? 1 : 2;
}
static void mk_pair(const char *dir, long us2)
{
    if (us2 > 0) pair_us2 = (uint64_t)us2;
    mk_lateness(dir, pair_late);
}

/* every rank late by 1 ms in turns, 3 of the 12 steps each */
static int round_late(int k, uint64_t *delay)
{
    *delay = 1000000;
    return k % 4;
}
static void mk_round(const char *dir) { mk_lateness(dir, round_late); }

static void mk_marks(const char *path, long n, int rank)
{
    open_rank(path, rank, 1024);
    uint32_t name = step_name();
    uint64_t t = 100000;
    for (long i = 0; i < n; i++) {
        mark(t += 1000, (uint64_t)i, name);
    }
    close_rank(t + 1000);
}

static void mk_commlog(const char *path, long n)
{
    open_rank(path, 0, 2);
    uint32_t via = rs_writer_intern(w, "NET/Socket/0"), fn = rs_writer_intern(w, "AllReduce"),
             algo = rs_writer_intern(w, "Ring"), dt = rs_writer_intern(w, "ncclFloat32");
    if (!via || !fn || !algo || !dt) die("rs_writer_intern failed");
    uint64_t t = 100000;
    for (long i = 0; i < n; i++) {
        struct rs_ev_NCCL_PROF_INIT pi;
        memset(&pi, 0, sizeof pi);
        RS_EV_INIT(&pi, NCCL_PROF_INIT, t += 100);
        pi.comm_hash = 0x1000000 + (uint64_t)i;
        pi.nranks = 2;
        pi.nnodes = 2;
        pi.version = 5;
        put(&pi);
        struct rs_ev_NCCL_TRANSPORT tr;
        memset(&tr, 0, sizeof tr);
        RS_EV_INIT(&tr, NCCL_TRANSPORT, t += 100);
        tr.comm_hash = pi.comm_hash;
        tr.dst = 1;
        tr.transport = 4;
        tr.via = via;
        put(&tr);
    }
    for (long i = 0; i < n; i++) {
        struct rs_ev_NCCL_COLL c;
        memset(&c, 0, sizeof c);
        RS_EV_INIT(&c, NCCL_COLL, t += 1000);
        c.end = t + 500;
        c.handle = (uint64_t)i + 1;
        c.comm_hash = 0x1000000 + (uint64_t)(n - 1 - i);
        c.count = 1024;
        c.func = fn;
        c.algo = algo;
        c.datatype = dt;
        put(&c);
    }
    close_rank(t + 1000);
}

int main(int argc, char **argv)
{
    if (argc >= 4 && !strcmp(argv[1], "wc")) mk_wc(argv[2], atol(argv[3]), argc >= 5 && !strcmp(argv[4], "DUP"));
    else if (argc >= 3 && !strcmp(argv[1], "comms")) mk_comms(argv[2]);
    else if (argc >= 3 && !strcmp(argv[1], "turns")) mk_turns(argv[2]);
    else if (argc >= 3 && !strcmp(argv[1], "lone")) mk_lone(argv[2]);
    else if (argc >= 3 && !strcmp(argv[1], "pair")) mk_pair(argv[2], argc >= 4 ? atol(argv[3]) : 0);
    else if (argc >= 3 && !strcmp(argv[1], "round")) mk_round(argv[2]);
    else if (argc >= 4 && !strcmp(argv[1], "commlog")) mk_commlog(argv[2], atol(argv[3]));
    else if (argc >= 4 && !strcmp(argv[1], "marks")) mk_marks(argv[2], atol(argv[3]), argc >= 5 ? atoi(argv[4]) : 0);
    else {
        fprintf(stderr,
                "usage: rs-mkcraft wc FILE N [DUP] | comms DIR | turns DIR | lone DIR | pair DIR [US] | round DIR "
                "| commlog FILE N | marks FILE N [RANK]\n");
        return 2;
    }
    return 0;
}
