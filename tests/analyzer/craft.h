/* Crafted traces for the analyzer's tests: one rank's file as the tracer would start it (a host, a rank, a world,
 * the header's event list) with its clock anchor, so each generator writes only the events it plants. Header-only:
 * the .t files compile their generators from heredocs with -I$RS_TOP. */
#ifndef RAILSCOPE_TESTS_CRAFT_H
#define RAILSCOPE_TESTS_CRAFT_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tracer/writer.h"

/* DIR/rankRANK.rtrace on host node-a (pid PID0 + RANK, one boot: clocks comparable), started at realtime
 * 1.7e18 ns / monotonic 1000 ns, its CLOCK anchor written as thread TID. NULL when the file cannot be made. */
static inline struct rs_writer *craft_open(const char *dir, int rank, int world, uint64_t pid0, const char *events,
                                           const char *tag, uint32_t tid)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rank%d.rtrace", dir, rank);
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

#endif
