/* rs-export-gen: writes small, deterministic railscope traces through the real writer (tracer/writer.h)
 * for the exporter's tests and benchmark. Every family the exporter draws appears: thread names, verbs
 * (device, QP, MR, signaled and unsignaled sends completed by a later signaled one, receives, a post that
 * never completes), CUDA runtime calls with kernels and copies linked by correlation id, NVTX ranges,
 * NCCL calls/collectives/proxy ops/steps/states, NVML counters, step marks, a tracer warning.
 *
 *     rs-export-gen DIR [--ranks N] [--steps N] [--threads N] [--unranked 1] [--edge 1 [--a2a N]]
 *                       [--rows N [--rows-deep M] [--random SEED]]
 *
 * --edge 1 adds, after the steps, the cases the exporter must place with care (edge(), times in its comment);
 * --rows N the cases of a thread's shared row (rows(), after those), --random SEED random traffic on such rows.
 *
 * Rank r's monotonic clock starts at a different base than its neighbours' (as on separate hosts) and its
 * REALTIME anchor says how they line up: every rank's step k starts at the same real time, so an export
 * with working clock alignment shows the steps side by side.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracer/writer.h"

static struct rs_writer *w;

static void put(uint32_t tid, void *ev)
{
    struct rs_ev_hdr *h = ev;
    if (rs_writer_append(w, tid, ev, h->size) < 0) {
        fprintf(stderr, "rs-export-gen: append failed (kind %u)\n", h->kind);
        exit(1);
    }
}
#define EV(KIND, var, tsv)       \
    struct rs_ev_##KIND var;     \
    memset(&var, 0, sizeof var); \
    RS_EV_INIT(&var, KIND, tsv)

static uint32_t S(const char *s) { return rs_writer_intern(w, s); }

/* One rank's file: its clock base, thread and QP ids, names, and the running CUDA correlation and NCCL
 * profiler handle counters. */
struct rank {
    int r, ranks;
    uint64_t mono0;
    uint32_t tmain, qpn;
    uint32_t n_kernel, n_gemm, n_launch, n_memcpy, n_fwd, n_step, n_ar, n_ring, n_ll, n_comm, n_f32;
    uint32_t corr;
    uint64_t handle;
};

/* Open rank r's file (w), write its clock anchor and thread names. */
static int open_rank(const char *dir, int unranked, int threads, struct rank *R)
{
    const int r = R->r, ranks = R->ranks;
    const uint64_t rt0 = 1767225600000000000ull; /* 2026-01-01T00:00:00Z */
    char path[4096], host[32];
    snprintf(path, sizeof path, unranked ? "%s/proc%d.rtrace" : "%s/rank%d.rtrace", dir, r);
    snprintf(host, sizeof host, "node%d", r / 2);
    unlink(path);
    R->mono0 = 5000000000ull + (uint64_t)r * 777000000ull; /* per-host monotonic base */
    struct rs_file_info fi = {.host = host,
                              .pid = 4000u + (uint64_t)r,
                              .ppid = 1,
                              .rank = unranked ? -1 : r,
                              .local_rank = unranked ? -1 : r % 2,
                              .world_size = unranked ? -1 : ranks,
                              .cmdline = "train.py",
                              .start_realtime = rt0,
                              .start_mono = R->mono0,
                              .clock = "monotonic",
                              .events = "all",
                              .exe = "/usr/bin/python3"};
    int err = 0;
    w = rs_writer_open(path, &fi, &err);
    if (!w) {
        fprintf(stderr, "rs-export-gen: %s: error %d\n", path, err);
        return 1;
    }
    rs_writer_set_clock(w, NULL, NULL);
    {
        EV(CLOCK, c, R->mono0);
        c.realtime_ns = rt0;
        c.mono_ns = R->mono0;
        put(0, &c);
    }
    R->tmain = 100 + (uint32_t)r * 10;
    for (int t = 0; t < threads; t++) {
        EV(THREAD_START, ts, R->mono0 + 10);
        ts.name = S(t ? "worker" : "main");
        put(R->tmain + (uint32_t)t, &ts);
    }
    return 0;
}

/* The verbs objects, the names and the NCCL communicator, before the steps. */
static void setup(struct rank *R)
{
    const int r = R->r, ranks = R->ranks;
    uint64_t t0 = R->mono0 + 1000;
    R->qpn = 10 + (uint32_t)r;
    {
        EV(IBV_OPEN_DEVICE, e, t0);
        e.ctx = 0xc0;
        e.device = S("softnic0");
        put(R->tmain, &e);
        EV(IBV_CREATE_QP, q, t0 + 100);
        q.qp = 0x9000;
        q.ctx = 0xc0;
        q.qp_num = R->qpn;
        q.qp_type = 2;
        q.max_send_wr = 64;
        put(R->tmain, &q);
        EV(IBV_REG_MR, m, t0 + 200);
        m.addr = 0x7f0000000000;
        m.length = 1 << 20;
        m.ctx = 0xc0;
        m.mr = 0xa000;
        m.dur = 5000;
        m.mem = RS_MEM_DEVICE;
        put(R->tmain, &m);
    }
    R->n_kernel = S("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)");
    R->n_gemm = S("void gemm_kernel<float, \"quoted\\name\">(float*)");
    R->n_launch = S("cudaLaunchKernel_v7000");
    R->n_memcpy = S("cudaMemcpyAsync_v3020");
    R->n_fwd = S("forward");
    R->n_step = S("ProfilerStep");
    R->n_ar = S("AllReduce");
    R->n_ring = S("Ring"), R->n_ll = S("LL");
    R->n_comm = S("dp");
    R->n_f32 = S("ncclFloat32");
    {
        EV(NCCL_PROF_INIT, pi, t0 + 300);
        pi.comm_hash = 0xabcdef;
        pi.rank = r;
        pi.nranks = ranks;
        pi.version = 5;
        pi.comm_name = R->n_comm;
        put(R->tmain, &pi);
    }
    R->corr = 1;
    R->handle = 1;
}

/* Step k on the host: a mark, an NVTX range, verbs WRs, an NCCL call, an NVML sample. */
static void step_host(struct rank *R, int k, uint64_t s, uint32_t tid)
{
    const int r = R->r, ranks = R->ranks;
    EV(MARK, mk, s);
    mk.value = (uint64_t)k;
    mk.name = R->n_step;
    put(tid, &mk);
    EV(NVTX_PUSH, np, s + 100);
    np.message = R->n_fwd;
    np.depth = 1;
    put(tid, &np);
    /* verbs: WR a signaled, b unsignaled, c signaled (completes b too), d a receive */
    uint64_t wid = (uint64_t)k * 4;
    for (int i = 0; i < 3; i++) {
        EV(IBV_POST_SEND, ps, s + 1000 + (uint64_t)i * 500);
        ps.wr_id = wid + (uint64_t)i;
        ps.bytes = 65536;
        ps.qp_num = R->qpn;
        ps.opcode = 0; /* RDMA_WRITE */
        ps.send_flags = i == 1 ? 0 : 2;
        ps.num_sge = 1;
        ps.mem = RS_MEM_DEVICE;
        put(tid, &ps);
    }
    EV(IBV_POST_RECV, pr, s + 2600);
    pr.wr_id = wid + 3;
    pr.bytes = 4096;
    pr.qp_num = R->qpn;
    pr.num_sge = 1;
    put(tid, &pr);
    EV(IBV_WC, w0, s + 3000);
    w0.wr_id = wid;
    w0.cq = 0xcc;
    w0.qp_num = R->qpn;
    w0.opcode = 1;
    w0.bytes = 65536;
    put(tid, &w0);
    EV(IBV_WC, w2, s + 6000);
    w2.wr_id = wid + 2;
    w2.cq = 0xcc;
    w2.qp_num = R->qpn;
    w2.opcode = 1;
    w2.bytes = 65536;
    put(tid, &w2);
    EV(IBV_WC, w3, s + 7000);
    w3.wr_id = wid + 3;
    w3.cq = 0xcc;
    w3.qp_num = R->qpn;
    w3.opcode = 128;
    w3.bytes = 100;
    put(tid, &w3);
    EV(NCCL_CALL, nc, s + 8000);
    nc.dur = 3000;
    nc.comm = 0x5000;
    nc.count = 1 << 20;
    nc.stream = 0x77;
    nc.seq = (uint64_t)k;
    nc.comm_hash = 0xabcdef;
    nc.func = 0;
    nc.peer = -1;
    nc.rank = r;
    nc.nranks = ranks;
    put(tid, &nc);
    EV(NVML_SAMPLE, nv, s + 9000);
    nv.value = (uint64_t)k * 1000;
    nv.device = 0;
    nv.field = 138;
    nv.scope = 0xffffffffu;
    put(tid, &nv);
    EV(NVTX_POP, pp, s + 50000);
    pp.depth = 0;
    put(tid, &pp);
}

/* Step k's CUPTI records. */
static void step_cupti(struct rank *R, uint64_t s, uint32_t tid)
{
    /* CUPTI records arrive on CUPTI's thread (tid 0), after the fact */
    EV(CUDA_API, a1, s + 200);
    a1.end = s + 700;
    a1.name = R->n_launch;
    a1.correlation = R->corr;
    a1.cbid = 211;
    a1.tid = tid;
    put(0, &a1);
    EV(CUDA_KERNEL, k1, s + 10000);
    k1.end = s + 30000;
    k1.name = R->n_gemm;
    k1.correlation = R->corr++;
    k1.device = 0;
    k1.stream = 7;
    k1.grid_x = 128, k1.grid_y = 1, k1.grid_z = 1, k1.block_x = 256, k1.block_y = 1, k1.block_z = 1;
    put(0, &k1);
    EV(CUDA_API, a2, s + 800);
    a2.end = s + 900;
    a2.name = R->n_memcpy;
    a2.correlation = R->corr;
    a2.cbid = 41;
    a2.tid = tid;
    put(0, &a2);
    EV(CUDA_MEMCPY, m1, s + 31000);
    m1.end = s + 33000;
    m1.bytes = 1 << 20;
    m1.correlation = R->corr++;
    m1.device = 0;
    m1.stream = 7;
    m1.copy_kind = 1;
    m1.src_kind = 2;
    m1.dst_kind = 3;
    put(0, &m1);
    EV(CUDA_API, a3, s + 8100);
    a3.end = s + 8600;
    a3.name = R->n_launch;
    a3.correlation = R->corr;
    a3.cbid = 211;
    a3.tid = tid;
    put(0, &a3);
    EV(CUDA_KERNEL, k2, s + 34000);
    k2.end = s + 60000;
    k2.name = R->n_kernel;
    k2.correlation = R->corr++;
    k2.device = 0;
    k2.stream = 9;
    k2.grid_x = 2, k2.grid_y = 1, k2.grid_z = 1, k2.block_x = 288, k2.block_y = 1, k2.block_z = 1;
    put(0, &k2);
}

/* Step k's NCCL profiler plugin records. */
static void step_plugin(struct rank *R, int k, uint64_t s)
{
    const int r = R->r, ranks = R->ranks;
    /* NCCL profiler plugin: coll -> proxy op -> step with states (written at stop) */
    uint64_t hc = R->handle++, ho = R->handle++, hs = R->handle++;
    EV(NCCL_PROXY_STATE, st1, s + 36000);
    st1.handle = hs;
    st1.state = 8;
    put(0, &st1);
    EV(NCCL_PROXY_STATE, st2, s + 40000);
    st2.handle = hs;
    st2.state = 20;
    put(0, &st2);
    EV(NCCL_PROXY_STATE, st3, s + 45000);
    st3.handle = hs;
    st3.state = 9;
    put(0, &st3);
    EV(NCCL_PROXY_STEP, sp, s + 36000);
    sp.end = s + 55000;
    sp.handle = hs;
    sp.parent = ho;
    sp.trans_size = 65536;
    sp.step = 0;
    sp.is_send = 1;
    put(0, &sp);
    EV(NCCL_PROXY_OP, po, s + 35000);
    po.end = s + 58000;
    po.handle = ho;
    po.parent = hc;
    po.chunk_size = 65536;
    po.channel = 0;
    po.peer = (r + 1) % ranks;
    po.nsteps = 1;
    po.is_send = 1;
    put(0, &po);
    EV(NCCL_COLL, co, s + 8050);
    co.end = s + 8500;
    co.handle = hc;
    co.comm_hash = 0xabcdef;
    co.seq = (uint64_t)k;
    co.count = 1 << 20;
    co.func = R->n_ar;
    co.algo = R->n_ring;
    co.proto = R->n_ll;
    co.nchannels = 2;
    co.datatype = R->n_f32;
    co.rank = r;
    put(0, &co);
}

/* edge()'s children of collectives: a ProxyOp (one step) and a KernelCh, [ts, end) under `parent`. */
static void edge_proxy_op(struct rank *R, uint64_t ts, uint64_t end, uint64_t parent, uint32_t channel,
                          uint32_t is_send)
{
    EV(NCCL_PROXY_OP, po, ts);
    po.end = end;
    po.handle = R->handle++;
    po.parent = parent;
    po.channel = channel;
    po.nsteps = 1;
    po.is_send = is_send;
    put(0, &po);
}

static void edge_kernel_ch(uint64_t ts, uint64_t end, uint64_t parent, uint32_t channel)
{
    EV(NCCL_KERNEL_CH, k, ts);
    k.end = end;
    k.parent = parent;
    k.channel = channel;
    put(0, &k);
}

/* --edge 1, one step slot after the steps (B = its start, ns):
 * - main thread: NCCL's NVTX range "ncclCommInitRankConfig" pushed at B+200 inside railscope's ncclCommInit
 *   call [B+100, B+5000] and never popped (as NCCL 2.2x does); a range "outer" [B+10000, B+15000] popped
 *   inside an ncclAllReduce call [B+12000, B+20000] that began inside it (written after the pop). Kineto
 *   puts NVTX ranges on the thread's row: neither may partially overlap the call there.
 * - profiler plugin (tid 0), in one ncclGroup [B+29900, B+33200] of comm "dp":
 *   AllReduce seq 10, enqueue [B+30000, B+30400], two KernelCh written after it, ending B+45000 and B+47000:
 *     slice [B+30000, B+47000], end_from kernel_ch, children 2;
 *   Broadcast seq 10, enqueue [B+31000, B+31300], no children: the enqueue, end_from "enqueue only";
 *   Send (p2p), enqueue [B+32000, B+32200], a ProxyOp written after it [B+32500, B+52000]: end_from proxy;
 *   ReduceScatter seq 10, enqueue [B+33000, B+33100], a ProxyOp written BEFORE it ending B+40000 and a KernelCh
 *     after it ending B+42000: [B+33000, B+42000], end_from kernel_ch, children 2. */
/* --a2a N (with --edge): an all-to-all's sends, N p2p enqueued 1 us apart from B+60000 on comm "dp", each with a
 * ProxyOp ending 70 us after the first enqueue + 0.5 us per send: all in flight together, more than a track's
 * 32 lanes when N > 32. */
static int a2a;

static void edge(struct rank *R, uint64_t B)
{
    const uint32_t t = R->tmain;
    EV(NVTX_PUSH, np, B + 200);
    np.message = S("ncclCommInitRankConfig");
    np.domain = S("NCCL");
    np.depth = 1;
    put(t, &np);
    EV(NCCL_COMM_INIT, ci, B + 100);
    ci.comm = 0x5000;
    ci.comm_hash = 0xabcdef;
    ci.dur = 4900;
    ci.rank = R->r;
    ci.nranks = R->ranks;
    ci.how = 1;
    put(t, &ci);
    EV(NVTX_PUSH, o1, B + 10000);
    o1.message = S("outer");
    o1.depth = 2;
    put(t, &o1);
    EV(NVTX_POP, o2, B + 15000);
    o2.depth = 1;
    put(t, &o2);
    EV(NCCL_CALL, nc, B + 12000);
    nc.dur = 8000;
    nc.comm = 0x5000;
    nc.count = 1024;
    nc.seq = 10;
    nc.comm_hash = 0xabcdef;
    nc.peer = -1;
    nc.rank = R->r;
    nc.nranks = R->ranks;
    put(t, &nc);

    uint64_t ha = R->handle++, hb = R->handle++, hc = R->handle++, hd = R->handle++, hg = R->handle++;
    edge_proxy_op(R, B + 33050, B + 40000, hd, 1, 0); /* D's child, before D */
    EV(NCCL_GROUP, g, B + 29900);
    g.end = B + 33200;
    g.handle = hg;
    g.comm_hash = 0xabcdef;
    put(0, &g);
    const struct {
        uint64_t h, ts, end;
        const char *func;
    } cs[] = {{ha, 30000, 30400, "AllReduce"}, {hb, 31000, 31300, "Broadcast"}, {hd, 33000, 33100, "ReduceScatter"}};
    for (int i = 0; i < 3; i++) {
        if (i == 2) {
            EV(NCCL_P2P, pp, B + 32000);
            pp.end = B + 32200;
            pp.handle = hc;
            pp.comm_hash = 0xabcdef;
            pp.count = 4096;
            pp.parent = hg;
            pp.func = S("Send");
            pp.peer = (R->r + 1) % R->ranks;
            pp.nchannels = 1;
            pp.rank = R->r;
            put(0, &pp);
        }
        EV(NCCL_COLL, co, B + cs[i].ts);
        co.end = B + cs[i].end;
        co.handle = cs[i].h;
        co.comm_hash = 0xabcdef;
        co.seq = 10;
        co.count = 1024;
        co.parent = hg;
        co.func = S(cs[i].func);
        co.algo = R->n_ring;
        co.proto = R->n_ll;
        co.nchannels = 2;
        co.datatype = R->n_f32;
        co.rank = R->r;
        put(0, &co);
    }
    for (uint32_t ch = 0; ch < 2; ch++) edge_kernel_ch(B + 30500 + ch * 100, B + 45000 + ch * 2000, ha, ch);
    edge_proxy_op(R, B + 32500, B + 52000, hc, 0, 1);
    edge_kernel_ch(B + 33500, B + 42000, hd, 1);
    for (int i = 0; i < a2a; i++) {
        uint64_t h = R->handle++;
        EV(NCCL_P2P, sp, B + 60000 + 1000 * (uint64_t)i);
        sp.end = sp.h.ts + 200;
        sp.handle = h;
        sp.comm_hash = 0xabcdef;
        sp.count = 4096;
        sp.func = S("Send");
        sp.peer = i;
        sp.nchannels = 1;
        sp.rank = R->r;
        put(0, &sp);
        edge_proxy_op(R, B + 60500 + 1000 * (uint64_t)i, B + 130000 + 500 * (uint64_t)i, h, (uint32_t)(i % 4), 1);
    }
}

/* A CUDA runtime call that links to no GPU work, written on CUPTI's thread (tid 0) for thread t, late. */
static void late_api(uint32_t t, uint64_t ts, uint64_t end)
{
    EV(CUDA_API, a, ts);
    a.end = end;
    a.name = S("cudaGetDevice");
    a.cbid = 17;
    a.tid = t;
    put(0, &a);
}
static void nvtx_range(uint32_t t, const char *name, uint64_t ts, uint64_t end)
{
    EV(NVTX_PUSH, np, ts);
    np.message = S(name);
    put(t, &np);
    EV(NVTX_POP, pp, end);
    put(t, &pp);
}
static void nccl_call(struct rank *R, uint32_t t, uint64_t ts, uint64_t dur)
{
    EV(NCCL_CALL, nc, ts);
    nc.dur = dur;
    nc.comm = 0x5000;
    nc.count = 1024;
    nc.comm_hash = 0xabcdef;
    nc.peer = -1;
    nc.rank = R->r;
    nc.nranks = R->ranks;
    put(t, &nc);
}

/* --rows N, from B on the main thread: what the row guard must keep off the thread's row (it is shared by the
 * thread's calls, its CUDA calls and, in Kineto output, its NVTX ranges), each written in the order that let a
 * partial overlap through before the row guard (formats/export/export_row.c):
 * - N ranges "row i" [B+1000+200i, +100], then a late CUDA call [B+1050, B+1250] straddling the first two (the
 *   guard remembered the last 64 ranges of a thread);
 * - a call ncclAllReduce [B+40000, +1000], then a late CUDA call [B+40500, +1000] straddling its end (the CUDA
 *   calls and the thread's calls were not checked against each other, in any format);
 * - a call ncclAllReduce [B+50000, +1000] written before the range "early" [B+50500, B+52000] that it straddles
 *   (only calls written while a range was open were checked against it);
 * - 70 nested ranges "nest i" pushed 10 ns apart from B+60000, popped 10 ns apart from B+61000: the 6 innermost
 *   are past the depth kept (64) and left out, "nest i" (i < 64) is [B+60000+10i, B+61000+10(69-i)] (the pops
 *   of the left-out pushes closed the kept ones, 6 off);
 * --rows-deep M: M ranges "deep i" [D+10i, +5] from D = B+100000, more than the row holds while the CUDA calls
 *   lag (65536 per source), and a late CUDA call [D+2, D+12] straddling the first: it leaves the row (its time
 *   forgotten), counted. Returns the step slots (100 us) used. */
static int rows(struct rank *R, uint64_t B, int n, int deep)
{
    const uint32_t t = R->tmain;
    char nm[32];
    for (int i = 0; i < n; i++) {
        snprintf(nm, sizeof nm, "row %d", i);
        nvtx_range(t, nm, B + 1000 + 200 * (uint64_t)i, B + 1100 + 200 * (uint64_t)i);
    }
    nccl_call(R, t, B + 40000, 1000);
    nccl_call(R, t, B + 50000, 1000);
    nvtx_range(t, "early", B + 50500, B + 52000);
    for (int i = 0; i < 70; i++) {
        snprintf(nm, sizeof nm, "nest %d", i);
        EV(NVTX_PUSH, np, B + 60000 + 10 * (uint64_t)i);
        np.message = S(nm);
        put(t, &np);
    }
    for (int i = 0; i < 70; i++) {
        EV(NVTX_POP, pp, B + 61000 + 10 * (uint64_t)i);
        put(t, &pp);
    }
    late_api(t, B + 1050, B + 1250);
    late_api(t, B + 40500, B + 41500);
    const uint64_t D = B + 100000;
    for (int i = 0; i < deep; i++) {
        snprintf(nm, sizeof nm, "deep %d", i);
        nvtx_range(t, nm, D + 10 * (uint64_t)i, D + 10 * (uint64_t)i + 5);
    }
    if (deep) late_api(t, D + 2, D + 12);
    return 1 + (deep ? 1 + (int)((uint64_t)deep * 10 / 100000) : 0);
}

/* --random SEED (with --rows): 3000 random operations on each of two threads' rows, in any order a hostile or
 * damaged file may hold: NVTX pushes (up to 80 deep) and pops (stray ones too), the thread's calls starting up to
 * 400 ns back, CUDA calls up to 600 ns back and up to 500 ns long, written late in random batches, zero-length
 * ones among them. Whatever the order, no row may get a partial overlap. Returns the step slots used. */
static uint64_t rnd_s;
static uint64_t rnd(uint64_t n)
{
    rnd_s ^= rnd_s << 13, rnd_s ^= rnd_s >> 7, rnd_s ^= rnd_s << 17;
    return rnd_s % n;
}
static int random_rows(struct rank *R, uint64_t B, uint64_t seed)
{
    rnd_s = seed * 0x9e3779b97f4a7c15ull + (uint64_t)R->r + 1;
    for (uint32_t th = 0; th < 2; th++) {
        const uint32_t t = R->tmain + th;
        uint64_t now = B + 1000, late[64][2];
        int depth = 0, nlate = 0;
        for (int i = 0; i < 3000; i++) {
            now += rnd(50);
            uint64_t k = rnd(16), st = now - rnd(k < 8 ? 400 : 600);
            if (k < 4 && depth < 80) { /* push */
                EV(NVTX_PUSH, np, now);
                np.message = S(depth & 1 ? "odd" : "even");
                put(t, &np);
                depth++;
            } else if (k < 8 && (depth || !rnd(8))) { /* pop (a stray one now and then) */
                EV(NVTX_POP, pp, now);
                put(t, &pp);
                depth -= !!depth;
            } else if (k < 10) nccl_call(R, t, st, rnd(4) ? now - st : 0);
            else if (k < 15 && nlate < 64) {
                late[nlate][0] = st;
                late[nlate++][1] = st + (rnd(4) ? rnd(500) : 0);
            } else { /* CUPTI hands a batch over, sorted by start or not */
                for (int j = 0; j < nlate; j++) late_api(t, late[j][0], late[j][1]);
                nlate = 0;
            }
        }
        for (int j = 0; j < nlate; j++) late_api(t, late[j][0], late[j][1]);
    }
    return 2;
}

/* After the steps: a send that never completes, NCCL net/API records, a tracer warning. */
static void tail(struct rank *R, int steps)
{
    {
        uint64_t e = R->mono0 + 100000 + (uint64_t)steps * 100000;
        EV(IBV_POST_SEND, ps, e); /* never completes */
        ps.wr_id = 0xdead;
        ps.bytes = 8;
        ps.qp_num = R->qpn;
        ps.opcode = 2;
        ps.send_flags = 2;
        put(R->tmain, &ps);
        EV(NCCL_NET_SOCK, ns, e + 5);
        ns.end = e + 8;
        ns.length = 4096;
        ns.fd = 7;
        ns.op = 1;
        put(0, &ns);
        EV(NCCL_PROF_API, pa, e + 6);
        pa.end = e + 9;
        pa.count = 1024;
        pa.func = R->n_ar;
        pa.type = 0x200;
        put(0, &pa);
        EV(WARNING, wn, e + 10);
        wn.message = S("softnic: link paused (injected)");
        put(0, &wn);
        EV(PROC_END, pe, e + 20); /* the process ended normally: a complete file */
        put(0, &pe);
    }
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: rs-export-gen DIR [--ranks N] [--steps N] [--threads N] [--unranked 1] [--edge 1] "
                        "[--rows N [--rows-deep M]]\n");
        return 2;
    }
    const char *dir = argv[1];
    int ranks = 2, steps = 3, threads = 1, unranked = 0, edges = 0, nrows = 0, deep = 0, seed = 0;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--ranks")) ranks = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--steps")) steps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--unranked")) unranked = atoi(argv[i + 1]); /* no RANK (plain processes) */
        else if (!strcmp(argv[i], "--edge")) edges = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--a2a")) a2a = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rows")) nrows = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rows-deep")) deep = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--random")) seed = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "rs-export-gen: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (ranks < 1 || steps < 1 || threads < 1) return 2;
    mkdir(dir, 0755);
    for (int r = 0; r < ranks; r++) {
        struct rank R = {.r = r, .ranks = ranks};
        if (open_rank(dir, unranked, threads, &R)) return 1;
        setup(&R);
        for (int k = 0; k < steps; k++) {
            uint64_t s = R.mono0 + 100000 + (uint64_t)k * 100000; /* every rank's step k at the same real time */
            uint32_t tid = R.tmain + (uint32_t)(k % threads);
            step_host(&R, k, s, tid);
            step_cupti(&R, s, tid);
            step_plugin(&R, k, s);
        }
        int slots = steps + !!edges;
        if (edges) edge(&R, R.mono0 + 100000 + (uint64_t)steps * 100000);
        if (nrows > 0) slots += rows(&R, R.mono0 + 100000 + (uint64_t)slots * 100000, nrows, deep);
        if (nrows > 0 && seed) slots += random_rows(&R, R.mono0 + 100000 + (uint64_t)slots * 100000, (uint64_t)seed);
        tail(&R, slots);
        if (rs_writer_close(w) != 0) {
            fprintf(stderr, "rs-export-gen: close failed\n");
            return 1;
        }
    }
    return 0;
}
