/* The floor under the verbs capture's per-WR cost, measured with the core's own rs_now() and rs_emit():
 * what a traced post with its completion cannot go below whatever the verbs code does — two clock reads
 * (the post's and the poll's stamp) and two event copies (IBV_POST_SEND 80 B, IBV_WC 64 B) into the
 * calling thread's ring. Linked into a bench-only copy of the library ($(B)/verbs/floor/librailscope.so,
 * bench/verbs/build.mk); vb_bench -F calls it. Never part of the product library. */
#include <string.h>

#include "tracer/rs_tracer.h"

/* mode bit 1: read the clock twice; bit 2: copy the two events (else the events are only kept in memory) */
static inline __attribute__((always_inline)) void floor_loop(int mode, int iters)
{
    struct rs_ev_IBV_POST_SEND p;
    struct rs_ev_IBV_WC w;
    memset(&p, 0, sizeof p);
    memset(&w, 0, sizeof w);
    RS_EV_INIT(&p, IBV_POST_SEND, 0);
    RS_EV_INIT(&w, IBV_WC, 0);
    for (int i = 0; i < iters; i++) {
        if (mode & 1) p.h.ts = rs_now();
        p.wr_id = (uint64_t)i;
        if (mode & 2) rs_emit(&p.h);
        else __asm__ volatile("" : : "r"(&p) : "memory");
        if (mode & 1) w.h.ts = rs_now();
        w.wr_id = (uint64_t)i;
        if (mode & 2) rs_emit(&w.h);
        else __asm__ volatile("" : : "r"(&w) : "memory");
    }
}

RS_EXPORT void vb_floor_run(int mode, int iters)
{
    switch (mode) {
    case 0: floor_loop(0, iters); break;
    case 1: floor_loop(1, iters); break;
    case 2: floor_loop(2, iters); break;
    default: floor_loop(3, iters); break;
    }
}
