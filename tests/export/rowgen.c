/* Crafted one-rank traces for the row guard and the verbs waits (tests/export/rows.t), each the case that once
 * went wrong, written in the order that let it through:
 *
 *   rs-export-rowgen straddle DIR    a range whose push comes behind the thread's calls (a new NVTX group), around a
 *                                    call the row has already forgotten: it must not join the row (Kineto)
 *   rs-export-rowgen threads DIR T N T threads of N NCCL calls each, interleaved, no CUDA call: the row memory
 *   rs-export-rowgen overflow DIR [backwards]  a late CUDA call the row guard keeps off the row while its group's 8
 *                                    lanes are taken: an instant, counted once; backwards: then one written out of time
 *                                    order that ended before every lane's latest start: left out, counted
 *   rs-export-rowgen cqev DIR        ibv_get_cq_event waits of every flag, one failed, one straddled by a CUDA call
 *   rs-export-rowgen late DIR        100 threads of 3000 calls (past the shared budget of rows without CUDA calls),
 *                                    then each thread's CUDA calls at random times, some straddling its calls
 *
 * Times are ns after the file's start (craft.h: monotonic 1000 = the run's origin). */
#include "tests/analyzer/craft.h"

CRAFT_GENERATOR

#define B 1000000ull /* 1 ms: clear of the clock anchor */

static void app(uint32_t tid, void *e)
{
    if (rs_writer_append(w, tid, e, ((struct rs_ev_hdr *)e)->size) < 0) die("append");
}
static void call(uint32_t tid, uint64_t ts, uint64_t dur)
{
    struct rs_ev_NCCL_CALL e;
    memset(&e, 0, sizeof e);
    RS_EV_INIT(&e, NCCL_CALL, ts);
    e.dur = dur;
    e.comm = 0x5000;
    e.count = 1;
    e.peer = -1;
    e.nranks = 1;
    app(tid, &e);
}
/* a CUDA runtime call of thread tid, written by CUPTI's thread (0) */
static void api(uint32_t tid, uint64_t ts, uint64_t end)
{
    struct rs_ev_CUDA_API a;
    memset(&a, 0, sizeof a);
    RS_EV_INIT(&a, CUDA_API, ts);
    a.end = end;
    a.name = rs_writer_intern(w, "cudaGetDevice");
    a.cbid = 17;
    a.tid = tid;
    app(0, &a);
}
static void push(uint32_t tid, uint64_t ts, const char *m)
{
    struct rs_ev_NVTX_PUSH e;
    memset(&e, 0, sizeof e);
    RS_EV_INIT(&e, NVTX_PUSH, ts);
    e.message = rs_writer_intern(w, m);
    app(tid, &e);
}
static void pop(uint32_t tid, uint64_t ts)
{
    struct rs_ev_NVTX_POP e;
    memset(&e, 0, sizeof e);
    RS_EV_INIT(&e, NVTX_POP, ts);
    app(tid, &e);
}
static void cqev(uint32_t tid, uint64_t ts, uint64_t dur, uint64_t cq, uint32_t flags, int ret, uint32_t err)
{
    struct rs_ev_IBV_GET_CQ_EVENT e;
    memset(&e, 0, sizeof e);
    RS_EV_INIT(&e, IBV_GET_CQ_EVENT, ts);
    e.h.aux = err;
    e.cq = cq;
    e.channel = 0xc0;
    e.dur = dur;
    e.ret = ret;
    e.flags = flags;
    app(tid, &e);
}

int main(int argc, char **argv)
{
    if (argc < 3) die("usage: rs-export-rowgen straddle|threads|late|overflow|cqev DIR [T N | backwards]");
    const char *mode = argv[1];
    if (!(w = craft_open(argv[2], 0, 1, 4242, "all", "rowgen", 7))) die("open");
    uint64_t end = B + 200000;
    if (!strcmp(mode, "straddle")) {
        /* a CUDA call first (the row's CUDA group exists, so the calls' slices are forgotten as it moves on);
         * call I [B+1000, B+100000] holds F [B+2000, B+3000]; 20 short calls after F let the row forget F (they
         * move the calls' frontier past it, and nothing else on the row is behind); then the range R [B+2500,
         * B+3500], whose group is new: it straddles F's end, so it must leave the row (its time is forgotten) */
        api(100, B + 90000, B + 90010);
        call(100, B + 1000, 99000);
        call(100, B + 2000, 1000);
        for (int k = 0; k < 20; k++) call(100, B + 4000 + 10 * (uint64_t)k, 5);
        push(100, B + 2500, "R");
        pop(100, B + 3500);
    } else if (!strcmp(mode, "threads")) {
        if (argc < 5) die("threads DIR T N");
        int nt = atoi(argv[3]), nc = atoi(argv[4]);
        for (int i = 0; i < nc; i++)
            for (int t = 0; t < nt; t++) call(100 + (uint32_t)t, B + (uint64_t)i * 1000 + (uint64_t)t, 500);
        end = B + (uint64_t)nc * 1000 + 10;
    } else if (!strcmp(mode, "overflow")) {
        /* the thread's call T [B+1000, B+2000]; its CUDA calls: A0 [B+1100, B+1200] on the row, A1..A7 each
         * partially overlapping A0 and the ones before (lanes 1-7 of the CUDA group), then X [B+1500, B+2500],
         * straddling T's end (kept off the row) and the open A1..A7 (no lane): an instant */
        call(100, B + 1000, 1000);
        api(100, B + 1100, B + 1200);
        for (uint64_t k = 1; k <= 7; k++) api(100, B + 1140 + 5 * k, B + 2000 + k);
        api(100, B + 1500, B + 2500);
        /* backwards: then a CUDA call written after them that ended before any of them started (out of time order:
         * CUPTI's thread never writes so, hostile input may): no lane takes it even as an instant, counted */
        if (!strcmp(argv[3 < argc ? 3 : 1], "backwards")) api(100, B + 1010, B + 1050);
    } else if (!strcmp(mode, "cqev")) {
        /* thread 100: a wait that blocked (no flag), one that found the event there, one on a non-blocking
         * channel, one where the tracer could not look, a failed one (EAGAIN), and one a late CUDA call straddles
         * (the CUDA call leaves the row); thread 101: a wait inside an NCCL call (nests) */
        cqev(100, B + 1000, 500, 0xa1, 0, 0, 0);
        cqev(100, B + 2000, 20, 0xa1, RS_CQEV_PENDING, 0, 0);
        cqev(100, B + 3000, 10, 0xa2, RS_CQEV_PENDING | RS_CQEV_NONBLOCK, 0, 0);
        cqev(100, B + 4000, 300, 0xa2, RS_CQEV_UNKNOWN, 0, 0);
        cqev(100, B + 5000, 5, 0, RS_CQEV_NONBLOCK, -1, 11);
        cqev(100, B + 6000, 1000, 0xa1, 0, 0, 0);
        call(101, B + 1000, 5000);
        cqev(101, B + 2000, 1000, 0xa3, 0, 0, 0);
        api(100, B + 6500, B + 7500);
    } else if (!strcmp(mode, "late")) {
        uint64_t r = 12345;
        for (int i = 0; i < 3000; i++)
            for (uint32_t t = 0; t < 100; t++) call(100 + t, B + (uint64_t)i * 1000 + t, i % 10 ? 500 : 900);
        for (uint32_t t = 0; t < 100; t++)
            for (int k = 0; k < 50; k++) { /* in time order per thread (CUPTI's order), anywhere in the run */
                r = r * 6364136223846793005ull + 1442695040888963407ull;
                uint64_t ts = B + (uint64_t)k * 60000 + (r >> 33) % 59000;
                api(100 + t, ts, ts + 100 + (r >> 20) % 1900);
            }
        end = B + 3000 * 1000ull + 10;
    } else die("unknown mode");
    struct rs_ev_PROC_END p;
    memset(&p, 0, sizeof p);
    RS_EV_INIT(&p, PROC_END, end);
    put(&p);
    return rs_writer_close(w) ? 1 : 0;
}
