/* A one-rank trace with sampled GPU activity, for tests/nccl/sampling.t (built by the test itself against the
 * tree's writer objects). STEPS steps of 10 ms ("step N" NVTX ranges); each step's GPU work: a 1 ms H2D copy,
 * then 6 ms of kernels, then 3 ms idle (compute 60 %, exposed H2D 10 %, host idle 30 %). Kernel-tracing
 * windows (CUDA_KERNEL_WINDOW, flags = API copies) cover steps [W0, W1); inside them kernels and copies
 * come as CUPTI records (CUDA_KERNEL, CUDA_MEMCPY), outside only the cudart wrappers' CUDA_COPY_CALL (a
 * 20 us host call). Step STALL (optional) lasts 40 ms: the same GPU work, 33 ms idle (a host stall).
 * SCALE (optional, default 1) stretches every duration: 100 makes 1 s steps. W0 = -1: full capture
 * (RAILSCOPE_CUDA_KERNELS=all): one window, mode 2, from before the first step to after the last.
 * WINEXTRA (optional, ms): every step inside a window, and the one its start cuts, lasts that much longer, idle
 * (the tracer's own cost). W0 = -2: full capture whose one window opens at step W1 (steps before it untraced).
 * RANK (optional): the file is that rank's of a world of RANK + 1 (pid 4000 + RANK, host nodeRANK).
 * TAIL, TAILEXTRA (optional): CUPTI stays attached after the window for TAIL steps (the detach marker,
 * RS_KWIN_DETACHED, at the end of step W1 + TAIL - 1), each of them TAILEXTRA ms longer, idle; TAIL -1: the detach
 * marker comes 0.3 ms into step W1 + 1 (a tail that cuts a step and holds none); TAIL -2: a (hostile) marker at
 * the end of step W0 + 10, inside the window, and none after it.
 * usage: sampling_gen FILE STEPS W0 W1 [STALL [SCALE [WINEXTRA [RANK [TAIL [TAILEXTRA]]]]]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracer/writer.h"

static struct rs_writer *w;
static uint32_t kmode = 1; /* the windows' mode: 1 sampled, 2 all */

static void put(uint32_t tid, void *ev)
{
    struct rs_ev_hdr *h = ev;
    if (rs_writer_append(w, tid, ev, h->size) < 0) {
        fprintf(stderr, "sampling_gen: append failed (kind %u)\n", h->kind);
        exit(1);
    }
}
#define EV(KIND, var, tsv)       \
    struct rs_ev_##KIND var;     \
    memset(&var, 0, sizeof var); \
    RS_EV_INIT(&var, KIND, tsv)

static void window_flags(uint64_t ts, int on, uint32_t extra)
{
    EV(CUDA_KERNEL_WINDOW, e, ts);
    e.on = (uint32_t)on;
    e.mode = kmode;
    e.state = 0;
    e.flags = RS_KWIN_API_COPIES | extra;
    put(100, &e);
}

static void window(uint64_t ts, int on) { window_flags(ts, on, 0); }

int main(int argc, char **argv)
{
    if (argc < 5) return 2;
    int steps = atoi(argv[2]), w0 = atoi(argv[3]), w1 = atoi(argv[4]), stall = argc > 5 ? atoi(argv[5]) : -1;
    const uint64_t mono0 = 5000000000ull, rt0 = 1767225600000000000ull;
    const uint64_t ms = 1000000ull * (uint64_t)(argc > 6 && atoi(argv[6]) > 0 ? atoi(argv[6]) : 1);
    const uint64_t winextra = argc > 7 && atoi(argv[7]) > 0 ? (uint64_t)atoi(argv[7]) : 0;
    const int rank = argc > 8 && atoi(argv[8]) > 0 ? atoi(argv[8]) : 0;
    const int tail = argc > 9 ? atoi(argv[9]) : 0;
    const uint64_t tailextra = argc > 10 && atoi(argv[10]) > 0 ? (uint64_t)atoi(argv[10]) : 0;
    char host[16];
    snprintf(host, sizeof host, "node%d", rank);
    struct rs_file_info fi = {.host = host,
                              .pid = 4000 + rank,
                              .ppid = 1,
                              .rank = rank,
                              .local_rank = 0,
                              .world_size = rank + 1,
                              .cmdline = "train.py",
                              .start_realtime = rt0,
                              .start_mono = mono0,
                              .clock = "monotonic",
                              .events = "all",
                              .exe = "/usr/bin/python3"};
    int err = 0;
    unlink(argv[1]);
    if (!(w = rs_writer_open(argv[1], &fi, &err))) return fprintf(stderr, "sampling_gen: error %d\n", err), 1;
    rs_writer_set_clock(w, NULL, NULL);
    EV(CLOCK, c, mono0);
    c.realtime_ns = rt0;
    c.mono_ns = mono0;
    put(0, &c);
    uint32_t kname = rs_writer_intern(w, "_Z4gemmPf"), corr = 1;
    uint64_t base = mono0 + 10 * ms;
    int late = w0 == -2;
    if (w0 < 0) kmode = 2, w0 = late ? w1 : 0, w1 = steps;
    if (!late) window(base - 5 * ms, 1); /* the initialisation window, closed before the first step (sampled) */
    if (kmode == 1) window(base - 2 * ms, 0);
    uint64_t s = base;
    for (int k = 0; k < steps; k++) {
        int in = k >= w0 && k < w1, cut = kmode == 1 && k == w0 - 1; /* a sampled window opens 0.5 ms before w0 */
        int intail = kmode == 1 && tail > 0 && k >= w1 && k < w1 + tail;
        uint64_t len = (k == stall ? 40 : 10) * ms + (in || cut ? winextra * ms : 0) + (intail ? tailextra * ms : 0);
        if (k == w0 && kmode == 1) window(s - ms / 2, 1);
        if (k == w0 && late) window(s - ms / 2, 1);
        if (k == w1) window(s, 0);
        char name[32];
        snprintf(name, sizeof name, "step %d", k);
        EV(NVTX_PUSH, np, s);
        np.message = rs_writer_intern(w, name);
        np.depth = 1;
        put(100, &np);
        if (in) {
            EV(CUDA_MEMCPY, m, s);
            m.end = s + ms;
            m.bytes = 1 << 20;
            m.correlation = corr++;
            m.stream = 7;
            m.copy_kind = 1;
            m.src_kind = 2;
            m.dst_kind = 3;
            m.flags = 1;
            put(0, &m);
            for (int i = 0; i < 6; i++) {
                EV(CUDA_KERNEL, kr, s + ms + (uint64_t)i * ms);
                kr.end = s + 2 * ms + (uint64_t)i * ms;
                kr.name = kname;
                kr.correlation = corr++;
                kr.stream = 7;
                kr.grid_x = kr.grid_y = kr.grid_z = kr.block_x = kr.block_y = kr.block_z = 1;
                put(0, &kr);
            }
        } else {
            EV(CUDA_COPY_CALL, cc, s);
            cc.dur = 20000;
            cc.bytes = 1 << 20;
            cc.dst = 0x7f0000000000;
            cc.src = 0x7000;
            cc.stream = 0x77;
            cc.copy_kind = 1;
            cc.async = 1;
            cc.src_mem = 1;
            cc.dst_mem = 2;
            put(100, &cc);
        }
        EV(NVTX_POP, pp, s + len);
        pp.depth = 0;
        put(100, &pp);
        if (kmode == 1 && tail > 0 && k == w1 + tail - 1) window_flags(s + len, 0, RS_KWIN_DETACHED);
        if (kmode == 1 && tail == -1 && k == w1 + 1) window_flags(s + ms * 3 / 10, 0, RS_KWIN_DETACHED);
        if (kmode == 1 && tail == -2 && k == w0 + 10) window_flags(s + len, 0, RS_KWIN_DETACHED);
        s += len;
    }
    if (w1 >= steps) window(s + ms, 0);
    EV(PROC_END, pe, s + 2 * ms);
    put(100, &pe);
    if (rs_writer_close(w) != 0) return fprintf(stderr, "sampling_gen: close failed\n"), 1;
    return 0;
}
