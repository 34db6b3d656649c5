/* Crafted traces for the analyzer's tests: one rank's file as the tracer would start it (a host, a rank, a world,
 * the header's event list) with its clock anchor, so each generator writes only the events it plants. Header-only:
 * the .t files compile their generators from heredocs with -I$RS_TOP. */
#ifndef RAILSCOPE_TESTS_CRAFT_H
#define RAILSCOPE_TESTS_CRAFT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracer/writer.h"

/* PATH as rank RANK of WORLD on host node-a (pid PID0 + RANK, one boot: clocks comparable), started at realtime
 * 1.7e18 ns / monotonic 1000 ns, its CLOCK anchor written as thread TID. NULL when the file cannot be made. */
static inline struct rs_writer *craft_open_path(const char *path, int rank, int world, uint64_t pid0,
                                                const char *events, const char *tag, uint32_t tid)
{
    struct rs_file_info fi = {0};
    fi.host = "node-a";
    fi.pid = pid0 + (uint64_t)rank;
    fi.ppid = 1;
    fi.rank = rank;
    fi.local_rank = rank;
    fi.world_size = world;
    fi.cmdline = "train.py";
    fi.start_realtime = 1700000000000000000ull;
    fi.start_mono = 1000;
    fi.events = events;
    fi.tracer_version = tag;
    fi.boot_id = "boot-craft";
    int err = 0;
    unlink(path);
    struct rs_writer *w = rs_writer_open(path, &fi, &err);
    if (!w) return NULL;
    rs_writer_set_clock(w, NULL, NULL);
    struct rs_ev_CLOCK c;
    memset(&c, 0, sizeof c);
    RS_EV_INIT(&c, CLOCK, 1000);
    c.realtime_ns = fi.start_realtime;
    c.mono_ns = 1000;
    if (rs_writer_append(w, tid, &c, c.h.size) < 0) {
        rs_writer_close(w);
        return NULL;
    }
    return w;
}

/* The same as DIR/rankRANK.rtrace. */
static inline struct rs_writer *craft_open(const char *dir, int rank, int world, uint64_t pid0, const char *events,
                                           const char *tag, uint32_t tid)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rank%d.rtrace", dir, rank);
    return craft_open_path(path, rank, world, pid0, events, tag, tid);
}

/* A generator's file (w), its failure (die: exit 2, the .t bails) and its events, all as thread 7 (put): the
 * preamble each generator had written out; a generator says CRAFT_GENERATOR once at file scope. */
#define CRAFT_GENERATOR                                             \
    static struct rs_writer *w;                                     \
    static void die(const char *s)                                  \
    {                                                               \
        fprintf(stderr, "gen: %s\n", s);                            \
        exit(2);                                                    \
    }                                                               \
    static void put(const void *ev)                                 \
    {                                                               \
        const struct rs_ev_hdr *h = ev;                             \
        if (rs_writer_append(w, 7, ev, h->size) < 0) die("append"); \
    }

/* For verbs-only generators, after CRAFT_GENERATOR (their events through put): post() a signaled one-SGE send WR
 * (send_flags 2, mem 1) of OPCODE on QP at TS; complete() its completion (or a receive's) polled at TS from CQ 0xc0,
 * with hdr.aux AUX (formats/events_verbs.h rs_wc_aux; 0: no record of the polls); step_mark() the MARK "step K"
 * (value K) at TS; finish() the PROC_END at TS and the file closed. */
#define CRAFT_VERBS                                                                                                   \
    static inline void post(uint64_t ts, uint32_t qp, uint64_t wr, uint64_t bytes, uint32_t opcode)                   \
    {                                                                                                                 \
        struct rs_ev_IBV_POST_SEND e;                                                                                 \
        memset(&e, 0, sizeof e);                                                                                      \
        RS_EV_INIT(&e, IBV_POST_SEND, ts);                                                                            \
        e.wr_id = wr;                                                                                                 \
        e.bytes = bytes;                                                                                              \
        e.qp_num = qp;                                                                                                \
        e.opcode = opcode;                                                                                            \
        e.send_flags = 2;                                                                                             \
        e.num_sge = 1;                                                                                                \
        e.mem = 1;                                                                                                    \
        put(&e);                                                                                                      \
    }                                                                                                                 \
    static inline void complete(uint64_t ts, uint32_t qp, uint64_t wr, uint32_t bytes, uint32_t opcode, uint32_t aux) \
    {                                                                                                                 \
        struct rs_ev_IBV_WC x;                                                                                        \
        memset(&x, 0, sizeof x);                                                                                      \
        RS_EV_INIT(&x, IBV_WC, ts);                                                                                   \
        x.h.aux = aux;                                                                                                \
        x.wr_id = wr;                                                                                                 \
        x.cq = 0xc0;                                                                                                  \
        x.qp_num = qp;                                                                                                \
        x.opcode = opcode;                                                                                            \
        x.bytes = bytes;                                                                                              \
        put(&x);                                                                                                      \
    }                                                                                                                 \
    static inline void step_mark(uint64_t ts, int k)                                                                  \
    {                                                                                                                 \
        struct rs_ev_MARK m;                                                                                          \
        memset(&m, 0, sizeof m);                                                                                      \
        RS_EV_INIT(&m, MARK, ts);                                                                                     \
        char name[32];                                                                                                \
        snprintf(name, sizeof name, "step %d", k);                                                                    \
        m.name = rs_writer_intern(w, name);                                                                           \
        m.value = (uint64_t)k;                                                                                        \
        put(&m);                                                                                                      \
    }                                                                                                                 \
    static inline void finish(uint64_t ts)                                                                            \
    {                                                                                                                 \
        struct rs_ev_PROC_END p;                                                                                      \
        memset(&p, 0, sizeof p);                                                                                      \
        RS_EV_INIT(&p, PROC_END, ts);                                                                                 \
        put(&p);                                                                                                      \
        if (rs_writer_close(w) != 0) die("close");                                                                    \
    }

/* For generators of NCCL runs, after CRAFT_GENERATOR: allreduce() an ncclAllReduce call of rank RANK of NRANKS (1 M
 * floats of bf16 type 7, communicator 0x5aa hash 0xaa, sequence number SEQ) from TS for DUR. */
#define CRAFT_NCCL                                                                              \
    static inline void allreduce(uint64_t ts, uint64_t dur, uint64_t seq, int rank, int nranks) \
    {                                                                                           \
        struct rs_ev_NCCL_CALL e;                                                               \
        memset(&e, 0, sizeof e);                                                                \
        RS_EV_INIT(&e, NCCL_CALL, ts);                                                          \
        e.dur = dur;                                                                            \
        e.comm = 0x5aa;                                                                         \
        e.comm_hash = 0xaa;                                                                     \
        e.count = 1 << 20;                                                                      \
        e.seq = seq;                                                                            \
        e.func = 0; /* AllReduce */                                                             \
        e.datatype = 7;                                                                         \
        e.rank = rank;                                                                          \
        e.nranks = nranks;                                                                      \
        put(&e);                                                                                \
    }


#endif
