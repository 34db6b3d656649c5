/* rs-synth: a synthetic cluster that writes railscope traces through the real writer (tracer/writer.h),
 * plus a truth file (JSON) saying what was injected and what it cost. The analyzer's accuracy tests
 * compare `railscope report --json` against that truth.
 *
 * Model (true time t in ns from run start; every host has its own monotonic base and a REALTIME offset):
 * N nodes x G GPUs, one rank per GPU. Each step on each rank: GPU idle (data loading) -> H2D copy of the
 * batch -> K compute kernels -> one AllReduce of the gradients -> an optimizer kernel. The AllReduce is
 * hierarchical over rails: intra-node reduce-scatter over NVLink, then each GPU's shard goes over its own
 * NIC (RoCE, one send QP to the same GPU of the next node) in chunked RDMA writes, then an intra-node
 * all-gather. Everyone leaves the AllReduce together (a few us of jitter) once the slowest rail is done.
 *
 * Injections: a straggler (extra compute on one rank), a paused link (one rank's QP stalls P ms in the
 * middle of its transfer every k-th step), a slow link (one rank's NIC at rate/f), pageable H2D copies,
 * no GPUDirect (MRs and posts on host memory, a device->host copy before each send and a host->device copy
 * after each receive), per-host clock offsets. The truth file gives, per rank, seconds per attribution
 * category over the run (same category keys as the report's JSON) and the list of injected problems.
 *
 * NCCL's connection log (--transport): per rank and channel, the NCCL_TRANSPORT events NCCL's INFO lines
 * give (preload/nccl_profiler.c): the ring to the next GPU of the node over P2P (or SHM, --intra shm), and
 * across nodes to the same GPU of the next node and from the previous one over NET/IB (with or without
 * GPUDirect RDMA: "/GDRDMA", or on receives only as NCCL_NET_GDR_READ=0 gives) or NET/Socket; plus NCCL's
 * "Using network X" line. The truth then names the transport and GPUDirect verdict the report must give.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tracer/writer.h"

struct cfg {
    int nodes, gpus, steps, kernels;
    const char *out, *truth, *algo;
    double net_gbps, nvlink_gbps, pin_gbps, pageable_gbps, pcie_gbps;
    double grad_mb, h2d_mb, compute_ms, idle_ms, opt_ms, chunk_mb;
    int straggler_rank;
    double straggler_ms;
    int pause_rank, pause_every;
    double pause_ms;
    int slow_rank;
    double slow_factor;
    int pageable_rank; /* -1 none, -2 all */
    int no_gpudirect;
    double skew_ms;
    int no_nvtx, no_verbs, no_proxy, no_hostfacts, no_plugin;
    const char *step_name; /* printf format of the NVTX step range name */
    int mark_steps;        /* core MARK events named "step" at each step start instead of NVTX */
    int buckets;           /* gradient buckets: buckets-1 early AllReduces hidden under backward */
    int garbage;           /* random events of random kinds per rank (robustness of readers of the trace) */
    const char *transport; /* NCCL's connection log: ib-gdr, ib, ib-gdr-recv, socket; NULL none */
    int intra_shm;         /* intra-node connections over SHM instead of P2P */
    int channels;          /* NCCL channels in the log */
    int sock;              /* --transport socket: no verbs traffic, though verbs were captured */
    unsigned seed;
};

static uint64_t rng_state;
static double rnd(void) /* [0,1) */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "rs-synth: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(2);
}

/* ---- per-step timeline (true time, ns) ---- */
struct rank_step {
    double start, h2d_t, compute, arrive, net_start, net_end, end, step_end, jitter;
    double stall; /* this rank's own QP stall */
};

#define CAT_KEYS(X) \
    X(compute)      \
    X(h2d_exposed) X(intra_node_exposed) X(network_transfer) X(network_stall) X(peer_wait) X(host_idle) X(other)
enum {
#define E(k) C_##k,
    CAT_KEYS(E)
#undef E
        NCAT
};
static const char *cat_names[] = {
#define S(k) #k,
    CAT_KEYS(S)
#undef S
};

struct model {
    struct cfg c;
    int n;                 /* ranks */
    double wr_bytes;       /* bytes per RDMA write */
    int nwr;               /* writes per step per rank */
    double t_intra_half;   /* ns */
    double t_wire;         /* ns per WR at full rate */
    double t_copy;         /* ns per bounce copy */
    double ideal_net;      /* ns per step per rank at full rate */
    struct rank_step *rs;  /* [step][rank] */
    double (*truth)[NCAT]; /* per rank, seconds over the run */
    double *host_offset;   /* realtime offset per node (ns) */
    double *mono_base;     /* per node */
    double *bk_L, *bk_end; /* [step][bucket]: last arrival and end of the early (hidden) buckets */
    int bk_nwr;            /* writes per early bucket */
};

static int paused(const struct model *m, int r, int s)
{
    return m->c.pause_rank == r && m->c.pause_ms > 0 && s % m->c.pause_every == 0;
}
static double rate_of(const struct model *m, int r) /* bytes per ns */
{
    double gbps = m->c.net_gbps / (r == m->c.slow_rank ? m->c.slow_factor : 1.0);
    return gbps / 8.0;
}
/* Send WR i of rank r in step s: post and completion times (ns). */
static void wr_times(const struct model *m, int s, int r, int i, double *post, double *done)
{
    const struct rank_step *x = &m->rs[(size_t)s * m->n + r];
    double wire = m->wr_bytes / rate_of(m, r);
    double per = wire + (m->c.no_gpudirect ? m->t_copy : 0);
    double p = x->net_start + i * per + (m->c.no_gpudirect ? m->t_copy : 0);
    double pause = paused(m, r, s) && i >= m->nwr / 2 ? m->c.pause_ms * 1e6 : 0;
    if (paused(m, r, s) && i > m->nwr / 2) p += pause; /* later WRs queue behind the stalled one */
    *post = p;
    *done = p + wire + (paused(m, r, s) && i == m->nwr / 2 ? pause : 0);
}

static void build_model(struct model *m)
{
    const struct cfg *c = &m->c;
    m->n = c->nodes * c->gpus;
    double S = c->grad_mb * 1048576.0;
    int N = c->nodes, G = c->gpus;
    m->t_intra_half = G > 1 ? ((G - 1.0) / G * S / (c->nvlink_gbps / 8.0)) + 20e3 : 5e3;
    double net_bytes = 0;
    if (N > 1) net_bytes = (!strcmp(c->algo, "tree") ? 2.0 : 2.0 * (N - 1) / N) * S / G;
    double chunk = c->chunk_mb * 1048576.0;
    m->nwr = N > 1 ? (int)ceil(net_bytes / chunk) : 0;
    if (m->nwr < 0) m->nwr = 0;
    m->wr_bytes = m->nwr ? floor(net_bytes / m->nwr / 8) * 8 : 0;
    m->ideal_net = m->nwr * m->wr_bytes / (c->net_gbps / 8.0);
    m->t_copy = m->wr_bytes / (c->pcie_gbps / 8.0);
    m->rs = calloc((size_t)c->steps * m->n, sizeof *m->rs);
    m->bk_L = calloc((size_t)c->steps * (c->buckets + 1), sizeof(double));
    m->bk_end = calloc((size_t)c->steps * (c->buckets + 1), sizeof(double));
    m->bk_nwr = m->nwr ? (m->nwr + c->buckets - 1) / c->buckets : 0;
    m->truth = calloc(m->n, sizeof *m->truth);
    m->host_offset = calloc(N, sizeof(double));
    m->mono_base = calloc(N, sizeof(double));
    if (!m->rs || !m->truth || !m->host_offset || !m->mono_base) die("out of memory");
    for (int h = 0; h < N; h++) {
        m->host_offset[h] = (rnd() * 2 - 1) * c->skew_ms * 1e6;
        m->mono_base[h] = 1e12 * (1 + h % 7) + floor(rnd() * 1e9);
    }
    double *next_start = calloc(m->n, sizeof(double));
    for (int r = 0; r < m->n; r++) next_start[r] = 2e6; /* 2 ms of setup */
    for (int s = 0; s < c->steps; s++) {
        struct rank_step *row = &m->rs[(size_t)s * m->n];
        double L = 0;
        for (int r = 0; r < m->n; r++) {
            struct rank_step *x = &row[r];
            x->start = next_start[r];
            int pg = c->pageable_rank == -2 || c->pageable_rank == r;
            x->h2d_t = c->h2d_mb * 1048576.0 / ((pg ? c->pageable_gbps : c->pin_gbps) / 8.0);
            x->compute = c->compute_ms * 1e6 + (r == c->straggler_rank ? c->straggler_ms * 1e6 : 0);
            x->arrive = x->start + c->idle_ms * 1e6 + x->h2d_t + x->compute;
            if (x->arrive > L) L = x->arrive;
        }
        double E = L + m->t_intra_half;
        for (int r = 0; r < m->n; r++) {
            struct rank_step *x = &row[r];
            x->net_start = L + m->t_intra_half;
            x->net_end = x->net_start;
            if (m->nwr) {
                double p, d;
                wr_times(m, s, r, m->nwr - 1, &p, &d);
                x->net_end = d;
                x->stall = (d - x->net_start) - m->ideal_net - (c->no_gpudirect ? m->nwr * m->t_copy : 0);
            }
            if (x->net_end > E) E = x->net_end;
        }
        double net_stall = E - (L + m->t_intra_half) - m->ideal_net - (c->no_gpudirect ? m->nwr * m->t_copy : 0);
        if (net_stall < 0) net_stall = 0;
        for (int j = 0; j + 1 < c->buckets; j++) {
            /* early bucket j: ready during backward (the last 60 % of compute) at 40 % + 50 % * (j+1)/B of each
             * rank's compute; runs when the last rank is ready */
            double Lj = 0, endc = 1e300, wire = 0;
            for (int r = 0; r < m->n; r++) {
                const struct rank_step *x = &row[r];
                double ready = x->arrive - x->compute + x->compute * (0.4 + 0.5 * (j + 1) / c->buckets);
                if (ready > Lj) Lj = ready;
                if (x->arrive < endc) endc = x->arrive;
                double w = m->bk_nwr * m->wr_bytes / rate_of(m, r);
                if (w > wire) wire = w;
            }
            double end = Lj + 2 * m->t_intra_half / c->buckets + wire + 4e3;
            if (end >= endc)
                die("--buckets %d: early bucket %d would end after compute (%.3f > %.3f ms into step %d); "
                    "use fewer buckets or more --compute-ms",
                    c->buckets, j, (end - row[0].start) * 1e-6, (endc - row[0].start) * 1e-6, s);
            m->bk_L[(size_t)s * c->buckets + j] = Lj;
            m->bk_end[(size_t)s * c->buckets + j] = end;
        }
        for (int r = 0; r < m->n; r++) {
            struct rank_step *x = &row[r];
            x->jitter = floor(rnd() * 4e3);
            x->end = E + m->t_intra_half + x->jitter;
            x->step_end = x->end + c->opt_ms * 1e6;
            next_start[r] = x->step_end;
            double *t = m->truth[r];
            t[C_host_idle] += c->idle_ms * 1e-3;
            t[C_h2d_exposed] += x->h2d_t * 1e-9;
            t[C_compute] += (x->compute + c->opt_ms * 1e6) * 1e-9;
            t[C_peer_wait] += (L - x->arrive) * 1e-9;
            t[C_network_transfer] += m->ideal_net * 1e-9;
            t[C_network_stall] += net_stall * 1e-9;
            t[C_intra_node_exposed] += (x->end - L - m->ideal_net - net_stall) * 1e-9;
        }
    }
    free(next_start);
}

/* ---- emission ---- */
struct emit {
    struct rs_writer *w;
    const struct model *m;
    int r, node, g;
    uint8_t buf[1 << 16];
    size_t len;
    uint32_t tid;
};

static void flush_buf(struct emit *e)
{
    if (e->len && rs_writer_append(e->w, e->tid, e->buf, e->len) < 0) die("rs_writer_append failed");
    e->len = 0;
}
static void put(struct emit *e, uint32_t tid, const void *ev)
{
    const struct rs_ev_hdr *h = ev;
    if (tid != e->tid || e->len + h->size > sizeof e->buf) {
        flush_buf(e);
        e->tid = tid;
    }
    memcpy(e->buf + e->len, ev, h->size);
    e->len += h->size;
}
static uint64_t mono(const struct emit *e, double t) { return (uint64_t)(e->m->mono_base[e->node] + t); }
static uint32_t S(struct emit *e, const char *s)
{
    flush_buf(e); /* the STRING record must precede the events that use it */
    uint32_t id = rs_writer_intern(e->w, s);
    if (!id) die("rs_writer_intern failed");
    return id;
}

#define TID_MAIN(e)  (100000u + (uint32_t)(e)->r * 10)
#define TID_PROXY(e) (TID_MAIN(e) + 1)
#define TID_DEV      0u

static void clock_anchor(struct emit *e, double t)
{
    struct rs_ev_CLOCK ev;
    RS_EV_INIT(&ev, CLOCK, mono(e, t));
    ev.realtime_ns = (uint64_t)(1.8e18 + t + e->m->host_offset[e->node]);
    ev.mono_ns = mono(e, t);
    put(e, TID_DEV, &ev);
}

static void memcpy_ev(struct emit *e, double t0, double t1, double bytes, int kind, int src, int dst)
{
    struct rs_ev_CUDA_MEMCPY ev;
    memset(&ev, 0, sizeof ev);
    RS_EV_INIT(&ev, CUDA_MEMCPY, mono(e, t0));
    ev.end = mono(e, t1);
    ev.bytes = (uint64_t)bytes;
    ev.device = (uint32_t)e->g;
    ev.stream = 7;
    ev.copy_kind = (uint32_t)kind;
    ev.src_kind = (uint32_t)src;
    ev.dst_kind = (uint32_t)dst;
    put(e, TID_DEV, &ev);
}

static void kernel_ev(struct emit *e, double t0, double t1, uint32_t name, uint32_t corr)
{
    struct rs_ev_CUDA_KERNEL ev;
    memset(&ev, 0, sizeof ev);
    RS_EV_INIT(&ev, CUDA_KERNEL, mono(e, t0));
    ev.end = mono(e, t1);
    ev.name = name;
    ev.correlation = corr;
    ev.device = (uint32_t)e->g;
    ev.stream = 7;
    ev.grid_x = 132;
    ev.grid_y = ev.grid_z = ev.block_y = ev.block_z = 1;
    ev.block_x = 256;
    put(e, TID_DEV, &ev);
}

static void host_fact(struct emit *e, const char *k, const char *v)
{
    uint32_t ks = S(e, k), vs = S(e, v);
    struct rs_ev_HOST_FACT ev;
    RS_EV_INIT(&ev, HOST_FACT, mono(e, 0));
    ev.key = ks;
    ev.value = vs;
    put(e, 0, &ev);
}

static uint32_t qp_send(int r) { return 0x100u + (uint32_t)r * 4; }
static uint32_t qp_recv(int r) { return 0x101u + (uint32_t)r * 4; }

/* The strings, threads and identities one rank's steps use (write_rank -> write_step). */
struct rank_ids {
    uint32_t tm, tp, kid[5], nccl_k, opt_k, s_allreduce, s_algo, s_proto, s_f32, s_dom, corr;
    int mem, next, prev;
    uint64_t comm_hash, handle;
};

/* Setup: the host facts of the rank's node. */
static void setup_facts(struct emit *e)
{
    const struct cfg *c = &e->m->c;
    char key[128], val[128];
    if (!c->no_hostfacts) {
        snprintf(key, sizeof key, "ib/mlx5_%d/port/1/rate", e->g);
        snprintf(val, sizeof val, "%g Gb/sec (4X)", c->net_gbps);
        host_fact(e, key, val);
        snprintf(key, sizeof key, "ib/mlx5_%d/port/1/link_layer", e->g);
        host_fact(e, key, "Ethernet");
        snprintf(key, sizeof key, "ib/mlx5_%d/port/1/state", e->g);
        host_fact(e, key, "4: ACTIVE");
        snprintf(key, sizeof key, "ib/mlx5_%d/port/1/phys_state", e->g);
        host_fact(e, key, "5: LinkUp");
        host_fact(e, "gpudirect/nvidia_peermem", c->no_gpudirect ? "absent" : "loaded");
    }
}

/* Setup: the verbs objects (device, MR, one send and one receive QP to the neighbouring nodes). */
static void setup_verbs(struct emit *e, const struct model *m, int r, uint32_t tp, int mem)
{
    const struct cfg *c = &m->c;
    char val[128];
    if (!c->no_verbs && c->nodes > 1) {
        snprintf(val, sizeof val, "mlx5_%d", e->g);
        struct rs_ev_IBV_OPEN_DEVICE od;
        memset(&od, 0, sizeof od);
        RS_EV_INIT(&od, IBV_OPEN_DEVICE, mono(e, 1e5));
        od.ctx = 0x7000 + (uint64_t)r;
        od.device = S(e, val);
        put(e, tp, &od);
        struct rs_ev_IBV_REG_MR mr;
        memset(&mr, 0, sizeof mr);
        RS_EV_INIT(&mr, IBV_REG_MR, mono(e, 2e5));
        mr.addr = c->no_gpudirect ? 0x7f0000000000ull : 0x7e0000000000ull;
        mr.length = 64ull << 20;
        mr.ctx = od.ctx;
        mr.mr = 0x9000 + (uint64_t)r;
        mr.lkey = mr.rkey = 0x2000 + (uint32_t)r;
        mr.mem = (uint32_t)mem;
        mr.dmabuf_fd = -1;
        mr.cuda_device = c->no_gpudirect ? -1 : e->g;
        put(e, tp, &mr);
        for (int k = 0; k < 2; k++) {
            struct rs_ev_IBV_CREATE_QP qp;
            memset(&qp, 0, sizeof qp);
            RS_EV_INIT(&qp, IBV_CREATE_QP, mono(e, 3e5));
            qp.qp = 0xa000 + (uint64_t)r * 4 + k;
            qp.ctx = od.ctx;
            qp.qp_num = k ? qp_recv(r) : qp_send(r);
            qp.qp_type = 2; /* RC */
            qp.max_send_wr = qp.max_recv_wr = 128;
            put(e, tp, &qp);
            struct rs_ev_IBV_MODIFY_QP mq;
            memset(&mq, 0, sizeof mq);
            RS_EV_INIT(&mq, IBV_MODIFY_QP, mono(e, 4e5));
            mq.qp_num = qp.qp_num;
            int peer = k ? (r - c->gpus + m->n) % m->n : (r + c->gpus) % m->n;
            mq.dest_qpn = k ? qp_send(peer) : qp_recv(peer);
            mq.state = 3; /* RTS */
            put(e, tp, &mq);
        }
    }
}

/* One line of NCCL's connection log (an NCCL_TRANSPORT event). */
static void conn_ev(struct emit *e, uint32_t tm, uint64_t hash, int ch, int src, int dst, int dir, int tr,
                    const char *via)
{
    uint32_t v = S(e, via);
    struct rs_ev_NCCL_TRANSPORT t;
    memset(&t, 0, sizeof t);
    RS_EV_INIT(&t, NCCL_TRANSPORT, mono(e, 5.5e5));
    t.comm_hash = hash;
    t.channel = ch;
    t.conn = 0;
    t.src = src;
    t.dst = dst;
    t.dir = (uint32_t)dir;
    t.transport = (uint32_t)tr;
    t.via = v;
    put(e, tm, &t);
}

/* NCCL's log of rank r's connections (--transport): per channel the intra-node ring link to the next GPU of
 * the node (dir 2: P2P/SHM lines say no side), and with several nodes a send to the same GPU of the next
 * node and a receive from the previous one (dir 0 send, 1 receive); first NCCL's "Using network X". */
static void setup_translog(struct emit *e, const struct model *m, int r, uint32_t tm, uint64_t hash)
{
    const struct cfg *c = &m->c;
    const int ib = strncmp(c->transport, "ib", 2) == 0;
    const int gdr_send = !strcmp(c->transport, "ib-gdr"), gdr_recv = gdr_send || !strcmp(c->transport, "ib-gdr-recv");
    if (c->nodes > 1) conn_ev(e, tm, hash, -1, -1, -1, 2, ib ? 3 : 4, ib ? "NET/IB" : "NET/Socket");
    const int node = r / c->gpus, g = r % c->gpus;
    for (int ch = 0; ch < c->channels; ch++) {
        if (c->gpus > 1)
            conn_ev(e, tm, hash, ch, r, node * c->gpus + (g + 1) % c->gpus, 2, c->intra_shm ? 2 : 1,
                    c->intra_shm ? "SHM/direct/direct" : "P2P/CUMEM/read");
        if (c->nodes < 2) continue;
        const char *send = ib ? (gdr_send ? "NET/IB/0/GDRDMA" : "NET/IB/0") : "NET/Socket/0";
        const char *recv = ib ? (gdr_recv ? "NET/IB/0/GDRDMA" : "NET/IB/0") : "NET/Socket/0";
        conn_ev(e, tm, hash, ch, r, (r + c->gpus) % m->n, 0, ib ? 3 : 4, send);
        conn_ev(e, tm, hash, ch, (r - c->gpus + m->n) % m->n, r, 1, ib ? 3 : 4, recv);
    }
}

/* Setup: the communicator (ncclCommInit* and, with the plugin, its init). */
static void setup_comm(struct emit *e, const struct model *m, int r, uint32_t tm, uint64_t comm_hash)
{
    const struct cfg *c = &m->c;
    {
        struct rs_ev_NCCL_COMM_INIT ci;
        memset(&ci, 0, sizeof ci);
        RS_EV_INIT(&ci, NCCL_COMM_INIT, mono(e, 5e5));
        ci.comm = 0x5000;
        ci.comm_hash = comm_hash;
        ci.rank = r;
        ci.nranks = m->n;
        ci.cuda_device = e->g;
        put(e, tm, &ci);
        if (!c->no_plugin) { /* the profiler plugin's init: the communicator's node count */
            struct rs_ev_NCCL_PROF_INIT pi;
            memset(&pi, 0, sizeof pi);
            RS_EV_INIT(&pi, NCCL_PROF_INIT, mono(e, 5e5));
            pi.comm_hash = comm_hash;
            pi.rank = r;
            pi.nranks = m->n;
            pi.nnodes = c->nodes;
            pi.mask = 0x9f; /* group coll p2p proxyop proxystep net */
            pi.version = 5;
            put(e, tm, &pi);
        }
    }
    if (c->transport) setup_translog(e, m, r, tm, comm_hash);
}

/* One step of one rank: NVTX/marks, kernels, buckets, the AllReduce (API, plugin, proxy, verbs), the
 * optimizer. */
/* Early gradient buckets of one step: AllReduces on the communication stream while backward computes. */
static void write_buckets(struct emit *e, const struct model *m, int r, int s, const struct rank_step *x,
                          struct rank_ids *id)
{
    const struct cfg *c = &m->c;
    const uint32_t tm = id->tm, tp = id->tp, nccl_k = id->nccl_k;
    const uint32_t s_allreduce = id->s_allreduce, s_algo = id->s_algo, s_proto = id->s_proto, s_f32 = id->s_f32;
    const int mem = id->mem, next = id->next, prev = id->prev;
    const uint64_t comm_hash = id->comm_hash;
    uint32_t corr = id->corr;
    uint64_t handle = id->handle;
    (void)tm, (void)tp, (void)nccl_k, (void)s_allreduce, (void)s_algo, (void)s_proto, (void)s_f32, (void)mem;
    (void)next, (void)prev, (void)comm_hash; /* the aliases write_step had; each part uses some */
    for (int j = 0; j + 1 < c->buckets; j++) {
        double ready = x->arrive - x->compute + x->compute * (0.4 + 0.5 * (j + 1) / c->buckets);
        double Lj = m->bk_L[(size_t)s * c->buckets + j], endj = m->bk_end[(size_t)s * c->buckets + j];
        uint64_t seq = (uint64_t)s * (uint64_t)c->buckets + (uint64_t)j, bh = handle++;
        struct rs_ev_NCCL_CALL nc;
        memset(&nc, 0, sizeof nc);
        RS_EV_INIT(&nc, NCCL_CALL, mono(e, ready - 30e3));
        nc.dur = 8000;
        nc.comm = 0x5000;
        nc.count = (uint64_t)(c->grad_mb * 1048576.0 / 4 / c->buckets);
        nc.seq = seq;
        nc.comm_hash = comm_hash;
        nc.datatype = 7;
        nc.rank = r;
        nc.nranks = m->n;
        nc.peer = -1;
        put(e, tm, &nc);
        if (!c->no_plugin) {
            struct rs_ev_NCCL_COLL co;
            memset(&co, 0, sizeof co);
            RS_EV_INIT(&co, NCCL_COLL, mono(e, ready - 28e3));
            co.end = mono(e, ready - 25e3);
            co.handle = bh;
            co.comm_hash = comm_hash;
            co.seq = seq;
            co.count = nc.count;
            co.func = s_allreduce;
            co.algo = s_algo;
            co.proto = s_proto;
            co.nchannels = (uint32_t)c->gpus;
            co.datatype = s_f32;
            co.rank = r;
            co.root = -1;
            put(e, tm, &co);
        }
        kernel_ev(e, ready, endj - floor(rnd() * 3e3), nccl_k, corr++);
        double t0 = Lj + m->t_intra_half / c->buckets, wire = m->wr_bytes / rate_of(m, r);
        for (int i = 0; i < m->bk_nwr && !c->no_verbs; i++) {
            struct rs_ev_IBV_POST_SEND ps;
            memset(&ps, 0, sizeof ps);
            RS_EV_INIT(&ps, IBV_POST_SEND, mono(e, t0 + i * wire));
            ps.wr_id = ((uint64_t)s << 20) | (1ull << 19) | ((uint64_t)j << 12) | (uint64_t)i;
            ps.bytes = (uint64_t)m->wr_bytes;
            ps.qp_num = qp_send(r);
            ps.opcode = 1;
            ps.send_flags = 2;
            ps.num_sge = 1;
            ps.mem = (uint32_t)mem;
            put(e, tp, &ps);
            struct rs_ev_IBV_WC wc;
            memset(&wc, 0, sizeof wc);
            RS_EV_INIT(&wc, IBV_WC, mono(e, t0 + (i + 1) * wire));
            wc.wr_id = ps.wr_id;
            wc.cq = 0xb000;
            wc.qp_num = qp_send(r);
            wc.opcode = 1;
            put(e, tp, &wc);
        }
    }
    id->corr = corr;
    id->handle = handle;
}

/* The network side of one step's AllReduce: verbs work requests (or proxy steps standing in) to the
 * neighbouring nodes. */
static void write_wrs(struct emit *e, const struct model *m, int r, int s, const struct rank_step *x, uint64_t ch,
                      struct rank_ids *id)
{
    const struct cfg *c = &m->c;
    const uint32_t tm = id->tm, tp = id->tp, nccl_k = id->nccl_k;
    const uint32_t s_allreduce = id->s_allreduce, s_algo = id->s_algo, s_proto = id->s_proto, s_f32 = id->s_f32;
    const int mem = id->mem, next = id->next, prev = id->prev;
    const uint64_t comm_hash = id->comm_hash;
    uint32_t corr = id->corr;
    uint64_t handle = id->handle;
    (void)tm, (void)tp, (void)nccl_k, (void)s_allreduce, (void)s_algo, (void)s_proto, (void)s_f32, (void)mem;
    (void)next, (void)prev, (void)comm_hash; /* the aliases write_step had; each part uses some */
    if (m->nwr) {
        uint64_t sop = handle++, rop = handle++;
        /* tree: the first half of the WRs is the reduce (up, to the parent = prev), the rest the
         * broadcast (down, to the child = next); each half has its own send and receive proxy op */
        int tree = !strcmp(c->algo, "tree") && m->nwr >= 2, half = m->nwr / 2;
        uint64_t sop_dn = tree ? handle++ : sop, rop_up = tree ? handle++ : rop;
        double rfirst = 1e300, rlast = 0;
        for (int i = 0; i < m->nwr; i++) {
            double p, d, pp, pd;
            wr_times(m, s, r, i, &p, &d);
            wr_times(m, s, prev, i, &pp, &pd); /* what we receive: prev's write i */
            if (pp < rfirst) rfirst = pp;
            if (pd > rlast) rlast = pd;
            if (c->no_gpudirect) memcpy_ev(e, p - m->t_copy, p, m->wr_bytes, 2, 3, 2);
            uint64_t wr_id = ((uint64_t)s << 20) | (uint64_t)i;
            if (!c->no_verbs) {
                struct rs_ev_IBV_POST_RECV pr;
                memset(&pr, 0, sizeof pr);
                RS_EV_INIT(&pr, IBV_POST_RECV, mono(e, x->net_start - 1e3));
                pr.wr_id = wr_id | (1ull << 40);
                pr.bytes = (uint64_t)m->wr_bytes;
                pr.local_addr = 0x7e0000000000ull;
                pr.qp_num = qp_recv(r);
                pr.num_sge = 1;
                pr.mem = (uint32_t)mem;
                put(e, tp, &pr);
                struct rs_ev_IBV_POST_SEND ps;
                memset(&ps, 0, sizeof ps);
                RS_EV_INIT(&ps, IBV_POST_SEND, mono(e, p));
                ps.wr_id = wr_id;
                ps.bytes = (uint64_t)m->wr_bytes;
                ps.remote_addr = 0x7e0000100000ull;
                ps.local_addr = c->no_gpudirect ? 0x7f0000000000ull : 0x7e0000000000ull;
                ps.qp_num = qp_send(r);
                ps.opcode = 1;     /* RDMA_WRITE_WITH_IMM */
                ps.send_flags = 2; /* SIGNALED */
                ps.num_sge = 1;
                ps.mem = (uint32_t)mem;
                put(e, tp, &ps);
                struct rs_ev_IBV_WC wc;
                memset(&wc, 0, sizeof wc);
                RS_EV_INIT(&wc, IBV_WC, mono(e, d));
                wc.wr_id = wr_id;
                wc.cq = 0xb000;
                wc.qp_num = qp_send(r);
                wc.opcode = 1;
                wc.bytes = 0;
                put(e, tp, &wc);
                RS_EV_INIT(&wc, IBV_WC, mono(e, pd + 1e3));
                wc.wr_id = wr_id | (1ull << 40);
                wc.qp_num = qp_recv(r);
                wc.opcode = 129; /* RECV_RDMA_WITH_IMM */
                wc.bytes = (uint32_t)m->wr_bytes;
                put(e, tp, &wc);
            }
            if (c->no_gpudirect) memcpy_ev(e, pd + 2e3, pd + 2e3 + m->t_copy, m->wr_bytes, 1, 2, 3);
            if (!c->no_proxy) {
                /* file order as the profiler plugin writes it: state transitions while the step runs,
                 * the step record at its stop */
                uint64_t sh = handle++;
                struct rs_ev_NCCL_PROXY_STATE ss;
                memset(&ss, 0, sizeof ss);
                RS_EV_INIT(&ss, NCCL_PROXY_STATE, mono(e, p));
                ss.handle = sh;
                ss.trans_size = (uint64_t)m->wr_bytes;
                ss.state = 9; /* SendWait */
                put(e, tp, &ss);
                struct rs_ev_NCCL_PROXY_STEP st;
                memset(&st, 0, sizeof st);
                RS_EV_INIT(&st, NCCL_PROXY_STEP, mono(e, p - 2e3));
                st.end = mono(e, d);
                st.handle = sh;
                st.parent = tree && i >= half ? sop_dn : sop;
                st.step = (uint32_t)(tree && i >= half ? i - half : i);
                st.trans_size = (uint64_t)m->wr_bytes;
                st.is_send = 1;
                put(e, tp, &st);
            }
        }
        if (!c->no_proxy) {
            struct rs_ev_NCCL_PROXY_OP op;
            memset(&op, 0, sizeof op);
            RS_EV_INIT(&op, NCCL_PROXY_OP, mono(e, x->net_start - 2e3));
            op.end = mono(e, x->net_end);
            op.handle = sop;
            op.parent = ch;
            op.chunk_size = (uint64_t)m->wr_bytes;
            op.channel = (uint32_t)e->g;
            op.peer = next;
            op.nsteps = (uint32_t)m->nwr;
            op.is_send = 1;
            if (tree) { /* up: send to the parent, steps 0..half-1 */
                double p, d;
                wr_times(m, s, r, half - 1, &p, &d);
                op.end = mono(e, d);
                op.peer = prev;
                op.nsteps = (uint32_t)half;
                put(e, tp, &op);
                RS_EV_INIT(&op, NCCL_PROXY_OP, mono(e, x->net_start - 2e3));
                op.end = mono(e, x->net_end); /* down: the rest, to the child */
                op.handle = sop_dn;
                op.peer = next;
                op.nsteps = (uint32_t)(m->nwr - half);
            }
            put(e, tp, &op);
            RS_EV_INIT(&op, NCCL_PROXY_OP, mono(e, x->net_start - 2e3));
            op.end = mono(e, rlast + 2e3);
            op.handle = rop;
            op.peer = prev;
            op.is_send = 0;
            if (tree) { /* up: the child's partial sums; down (rop, above): the parent's result */
                double p, d;
                op.nsteps = (uint32_t)(m->nwr - half);
                put(e, tp, &op);
                wr_times(m, s, next, half - 1, &p, &d);
                RS_EV_INIT(&op, NCCL_PROXY_OP, mono(e, x->net_start - 2e3));
                op.end = mono(e, d + 2e3);
                op.handle = rop_up;
                op.peer = next;
                op.nsteps = (uint32_t)half;
            }
            put(e, tp, &op);
        }
    }
    id->corr = corr;
    id->handle = handle;
}

static void write_step(struct emit *e, const struct model *m, int r, int s, struct rank_ids *id)
{
    const struct cfg *c = &m->c;
    const uint32_t tm = id->tm, *kid = id->kid, nccl_k = id->nccl_k, opt_k = id->opt_k;
    const uint32_t s_allreduce = id->s_allreduce, s_algo = id->s_algo, s_proto = id->s_proto, s_f32 = id->s_f32;
    const uint64_t comm_hash = id->comm_hash;
    uint32_t s_dom = id->s_dom, corr = id->corr;
    uint64_t handle = id->handle;
    const struct rank_step *x = &m->rs[(size_t)s * m->n + r];
    clock_anchor(e, x->start);
    char sn[96];
    snprintf(sn, sizeof sn, c->step_name, s);
    uint32_t s_step = c->no_nvtx ? 0 : S(e, sn);
    if (c->mark_steps) {
        struct rs_ev_MARK mk;
        memset(&mk, 0, sizeof mk);
        RS_EV_INIT(&mk, MARK, mono(e, x->start));
        mk.value = (uint64_t)s;
        mk.name = S(e, "step");
        put(e, tm, &mk);
    }
    if (!c->no_nvtx) {
        struct rs_ev_NVTX_PUSH p;
        memset(&p, 0, sizeof p);
        RS_EV_INIT(&p, NVTX_PUSH, mono(e, x->start));
        p.domain = s_dom;
        p.message = s_step;
        p.depth = 1;
        put(e, tm, &p);
    }
    double t = x->start + c->idle_ms * 1e6;
    int pg = c->pageable_rank == -2 || c->pageable_rank == r;
    memcpy_ev(e, t, t + x->h2d_t, c->h2d_mb * 1048576.0, 1, pg ? 1 : 2, 3);
    t += x->h2d_t;
    double kd = x->compute / c->kernels;
    for (int k = 0; k < c->kernels; k++, t += kd) kernel_ev(e, t, t + kd, kid[k % 5], corr++);
    id->corr = corr;
    id->handle = handle;
    write_buckets(e, m, r, s, x, id);
    corr = id->corr;
    handle = id->handle;
    /* The AllReduce: API call on the host shortly before the GPU gets there. */
    uint64_t ch = handle++;
    {
        struct rs_ev_NCCL_CALL nc;
        memset(&nc, 0, sizeof nc);
        RS_EV_INIT(&nc, NCCL_CALL, mono(e, x->arrive - 30e3));
        nc.dur = 8000;
        nc.comm = 0x5000;
        nc.count = (uint64_t)(c->grad_mb * 1048576.0 / 4);
        nc.seq = (uint64_t)s * (uint64_t)c->buckets + (uint64_t)(c->buckets - 1);
        nc.comm_hash = comm_hash;
        nc.func = 0;
        nc.datatype = 7;
        nc.rank = r;
        nc.nranks = m->n;
        nc.peer = -1;
        put(e, tm, &nc);
        if (c->no_plugin) goto no_coll;
        struct rs_ev_NCCL_COLL co;
        memset(&co, 0, sizeof co);
        RS_EV_INIT(&co, NCCL_COLL, mono(e, x->arrive - 28e3));
        co.end = mono(e, x->arrive - 25e3);
        co.handle = ch;
        co.comm_hash = comm_hash;
        co.seq = nc.seq;
        co.count = nc.count;
        co.func = s_allreduce;
        co.algo = s_algo;
        co.proto = s_proto;
        co.nchannels = (uint32_t)c->gpus;
        co.nwarps = 16;
        co.datatype = s_f32;
        co.rank = r;
        co.root = -1;
        put(e, tm, &co);
    no_coll:;
    }
    kernel_ev(e, x->arrive, x->end, nccl_k, corr++);
    id->corr = corr;
    id->handle = handle;
    write_wrs(e, m, r, s, x, ch, id);
    corr = id->corr;
    handle = id->handle;
    kernel_ev(e, x->end, x->step_end, opt_k, corr++);
    if (!c->no_nvtx) {
        struct rs_ev_NVTX_POP p;
        memset(&p, 0, sizeof p);
        RS_EV_INIT(&p, NVTX_POP, mono(e, x->step_end));
        p.domain = s_dom;
        put(e, tm, &p);
    }
    if (s % 4 == 3) {
        flush_buf(e);
        if (rs_writer_flush(e->w) < 0) die("flush failed");
    }
    id->s_dom = s_dom;
    id->corr = corr;
    id->handle = handle;
}

static void write_rank(const struct model *m, int r)
{
    const struct cfg *c = &m->c;
    static struct emit E;
    struct emit *e = &E;
    memset(e, 0, sizeof *e);
    e->m = m;
    e->r = r;
    e->node = r / c->gpus;
    e->g = r % c->gpus;
    char host[64], path[4096], boot[64];
    snprintf(host, sizeof host, "node%03d", e->node);
    snprintf(boot, sizeof boot, "boot-%08x-%04d", c->seed, e->node);
    snprintf(path, sizeof path, "%s/%s-%d.rtrace", c->out, host, 4000 + r);
    struct rs_file_info fi = {0};
    fi.host = host;
    fi.pid = 4000 + (uint64_t)r;
    fi.ppid = 1;
    fi.rank = r;
    fi.local_rank = e->g;
    fi.world_size = m->n;
    fi.cmdline = "python\0train.py";
    fi.cmdline_len = 16;
    fi.start_realtime = (uint64_t)(1.8e18 + m->host_offset[e->node]);
    fi.start_mono = mono(e, 0);
    /* as RAILSCOPE_EVENTS=all,-verbs records it; a Socket job's verbs were captured, there were none */
    fi.events = c->no_verbs && !c->sock ? "all,-verbs" : "all";
    fi.tracer_version = "rs-synth";
    fi.exe = "/usr/bin/python3";
    fi.boot_id = boot;
    int err = 0;
    unlink(path);
    e->w = rs_writer_open(path, &fi, &err);
    if (!e->w) die("cannot create %s: %s", path, strerror(-err));
    rs_writer_set_clock(e->w, NULL, NULL);
    clock_anchor(e, 0);

    /* Setup: host facts, verbs objects, communicator. */
    if (!c->no_hostfacts) setup_facts(e);
    struct rank_ids id;
    memset(&id, 0, sizeof id);
    id.tm = TID_MAIN(e);
    id.tp = TID_PROXY(e);
    id.mem = c->no_gpudirect ? RS_MEM_PINNED : RS_MEM_DEVICE;
    if (!c->no_verbs && c->nodes > 1) setup_verbs(e, m, r, id.tp, id.mem);
    id.comm_hash = 0xc0ffee0000000000ull | (uint64_t)c->seed;
    setup_comm(e, m, r, id.tm, id.comm_hash);
    static const char *knames[] = {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64",
                                   "void at::native::vectorized_elementwise_kernel<4>", "flash_fwd_kernel",
                                   "flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel",
                                   "void at::native::reduce_kernel<512, 1>"};
    for (int i = 0; i < 5; i++) id.kid[i] = S(e, knames[i]);
    char nk[128];
    snprintf(nk, sizeof nk, "ncclDevKernel_AllReduce_Sum_f32_%s_SIMPLE", !strcmp(c->algo, "tree") ? "TREE" : "RING");
    id.nccl_k = S(e, nk);
    id.opt_k = S(e, "multi_tensor_apply_kernel<AdamFunctor>");
    id.s_allreduce = S(e, "AllReduce");
    id.s_algo = S(e, !strcmp(c->algo, "tree") ? "Tree" : "Ring");
    id.s_proto = S(e, "Simple");
    id.s_f32 = S(e, "ncclFloat32");
    id.corr = 1;
    id.handle = 0x100000ull * (uint64_t)(r + 1);
    id.next = (r + c->gpus) % m->n;
    id.prev = (r - c->gpus + m->n) % m->n;

    for (int s = 0; s < c->steps; s++) write_step(e, m, r, s, &id);
    /* Hostile but decodable input: fixed-size events of any kind with random fields and times. */
    for (int i = 0; i < c->garbage; i++) {
        uint64_t buf[64];
        unsigned kind = 1 + (unsigned)(rnd() * (RS_EV_COUNT - 1));
        if (kind >= RS_EV_COUNT || !rs_kinds[kind].name || rs_kinds[kind].varlen || rs_kinds[kind].size > sizeof buf)
            continue;
        for (size_t k = 0; k < sizeof buf / 8; k++)
            buf[k] = (uint64_t)(rnd() * 18446744073709551615.0) >> (unsigned)(rnd() * 60);
        struct rs_ev_hdr *h = (struct rs_ev_hdr *)buf;
        h->kind = (uint16_t)kind;
        h->size = rs_kinds[kind].size;
        h->ts = rnd() < 0.5 ? mono(e, rnd() * m->rs[(size_t)(c->steps - 1) * m->n + r].step_end) : buf[1];
        put(e, rnd() < 0.5 ? id.tm : (uint32_t)(rnd() * 4), buf);
    }
    {
        struct rs_ev_PROC_END pe;
        memset(&pe, 0, sizeof pe);
        RS_EV_INIT(&pe, PROC_END, mono(e, m->rs[(size_t)(c->steps - 1) * m->n + r].step_end + 1e5));
        put(e, 0, &pe);
    }
    flush_buf(e);
    if (rs_writer_close(e->w) != 0) die("write of %s failed", path);
}

/* The GPUDirect RDMA verdict the report must give: from the WRs' memory when verbs traffic is recorded, else
 * from NCCL's log (--transport), else nothing to say. */
static const char *truth_gpudirect(const struct cfg *c)
{
    if (!c->transport) return c->no_gpudirect ? "NOT USED" : (c->nodes > 1 ? "USED" : "UNKNOWN");
    if (c->nodes < 2) return "UNKNOWN"; /* P2P/SHM only: nothing for GPUDirect RDMA to do */
    if (!c->no_verbs) return c->no_gpudirect ? "NOT USED" : "USED";
    if (c->sock || !strcmp(c->transport, "ib")) return "NOT USED";
    return !strcmp(c->transport, "ib-gdr") ? "USED" : "PARTIAL";
}

static void write_truth(const struct model *m)
{
    const struct cfg *c = &m->c;
    FILE *f = fopen(c->truth, "w");
    if (!f) die("cannot write %s", c->truth);
    double step_mean = 0;
    for (int s = 0; s < c->steps; s++)
        for (int r = 0; r < m->n; r++) {
            const struct rank_step *x = &m->rs[(size_t)s * m->n + r];
            step_mean += (x->step_end - x->start) * 1e-9;
        }
    step_mean /= (double)c->steps * m->n;
    fprintf(f, "{\n  \"nodes\": %d, \"gpus\": %d, \"ranks\": %d, \"steps\": %d, \"algo\": \"%s\",\n", c->nodes, c->gpus,
            m->n, c->steps, c->algo);
    fprintf(f, "  \"net_gbps\": %g, \"step_mean_s\": %.9f,\n", c->net_gbps, step_mean);
    fprintf(f, "  \"gpudirect\": \"%s\",\n", truth_gpudirect(c));
    if (c->transport) { /* what the report must say from NCCL's log: per rank, and per collective */
        const char *net = c->sock ? "NET/Socket" : "NET/IB";
        char rank_t[64] = "";
        if (c->nodes > 1) snprintf(rank_t, sizeof rank_t, "%s%s", net, c->gpus > 1 ? " + " : "");
        if (c->gpus > 1) strcat(rank_t, c->intra_shm ? "SHM" : "P2P");
        fprintf(f, "  \"transport\": \"%s\", \"coll_transport\": \"%s%s\", \"inter_node\": %d,\n", rank_t,
                c->nodes > 1 ? net : "P2P/SHM", c->nodes > 1 && c->gpus > 1 && m->n > 2 ? " + P2P/SHM" : "",
                c->nodes > 1);
    }
    fprintf(f, "  \"problems\": [");
    int np = 0;
    double per_step_pause = 0;
    int paused_steps = 0;
    for (int s = 0; s < c->steps; s++)
        if (c->pause_ms > 0 && s % c->pause_every == 0) paused_steps++;
    per_step_pause = c->pause_ms * 1e-3 * paused_steps / c->steps;
    if (c->straggler_rank >= 0)
        fprintf(
            f,
            "%s\n    {\"kind\": \"straggler\", \"category\": \"peer_wait\", \"rank\": %d, \"cost_per_step_s\": %.9f}",
            np++ ? "," : "", c->straggler_rank, c->straggler_ms * 1e-3);
    if (c->pause_rank >= 0 && m->nwr)
        fprintf(f,
                "%s\n    {\"kind\": \"paused_link\", \"category\": \"network_stall\", \"rank\": %d, \"qp\": %u, "
                "\"cost_per_step_s\": %.9f, \"paused_steps\": %d}",
                np++ ? "," : "", c->pause_rank, qp_send(c->pause_rank), per_step_pause, paused_steps);
    if (c->slow_rank >= 0 && m->nwr)
        fprintf(f,
                "%s\n    {\"kind\": \"slow_link\", \"category\": \"network_stall\", \"rank\": %d, \"qp\": %u, "
                "\"cost_per_step_s\": %.9f, \"factor\": %g}",
                np++ ? "," : "", c->slow_rank, qp_send(c->slow_rank), (c->slow_factor - 1) * m->ideal_net * 1e-9,
                c->slow_factor);
    if (c->pageable_rank != -1) {
        double extra = c->h2d_mb * 1048576.0 * (8.0 / c->pageable_gbps - 8.0 / c->pin_gbps) * 1e-9;
        fprintf(f,
                "%s\n    {\"kind\": \"pageable_h2d\", \"category\": \"h2d_exposed\", \"rank\": %d, "
                "\"cost_per_step_s\": %.9f}",
                np++ ? "," : "", c->pageable_rank == -2 ? -1 : c->pageable_rank, extra);
    }
    if (c->no_gpudirect)
        fprintf(f,
                "%s\n    {\"kind\": \"no_gpudirect\", \"category\": \"intra_node_exposed\", \"rank\": -1, "
                "\"cost_per_step_s\": %.9f}",
                np++ ? "," : "", m->nwr * m->t_copy * 1e-9);
    fprintf(f, "\n  ],\n  \"collectives\": [");
    /* the main AllReduce of every step; tree: its reduce phase runs from the last arrival to the last
     * receive of a reduce half (the root has its children's sums), the broadcast from there to the end */
    for (int s = 0; s < c->steps; s++) {
        double L = 0, up = 0, E = 0;
        for (int r = 0; r < m->n; r++) {
            const struct rank_step *x = &m->rs[(size_t)s * m->n + r];
            L = fmax(L, x->arrive);
            E = fmax(E, x->end);
            if (m->nwr >= 2) {
                double p, d;
                wr_times(m, s, r, m->nwr / 2 - 1, &p, &d);
                up = fmax(up, d + 2e3);
            }
        }
        fprintf(f, "%s\n    {\"step\": %d", s ? "," : "", s);
        if (!strcmp(c->algo, "tree") && m->nwr >= 2)
            fprintf(f, ", \"reduce_s\": %.9f, \"broadcast_s\": %.9f", (up - L) * 1e-9, (E - up) * 1e-9);
        fprintf(f, "}");
    }
    fprintf(f, "\n  ],\n  \"clock_offsets_ms\": [");
    for (int h = 0; h < c->nodes; h++) fprintf(f, "%s%.6f", h ? ", " : "", m->host_offset[h] * 1e-6);
    fprintf(f, "],\n  \"ranks\": [");
    for (int r = 0; r < m->n; r++) {
        fprintf(f, "%s\n    {\"rank\": %d, \"host\": \"node%03d\", \"attribution\": {", r ? "," : "", r, r / c->gpus);
        for (int k = 0; k < NCAT; k++) fprintf(f, "%s\"%s\": %.9f", k ? ", " : "", cat_names[k], m->truth[r][k]);
        fprintf(f, "}}");
    }
    fprintf(f, "\n  ]\n}\n");
    if (fclose(f) != 0) die("cannot write %s", c->truth);
}

static void usage(FILE *f)
{
    fprintf(
        f,
        "usage: rs-synth -o DIR [--truth FILE] [options]\n"
        "  --nodes N --gpus G --steps S --kernels K   cluster and loop shape (2 x 4, 10 steps, 20 kernels)\n"
        "  --algo ring|tree --grad-mb MB --h2d-mb MB --compute-ms MS --idle-ms MS --opt-ms MS --chunk-mb MB\n"
        "  --net-gbps R --nvlink-gbps R --pin-gbps R --pageable-gbps R --pcie-gbps R\n"
        "  --straggler RANK:MS        extra compute on one rank every step\n"
        "  --pause RANK:MS[:EVERY]    that rank's send QP stalls MS in the middle of its transfer every EVERY-th step\n"
        "  --slow RANK:FACTOR         that rank's NIC runs at rate/FACTOR\n"
        "  --pageable RANK|all        H2D copies from pageable memory\n"
        "  --no-gpudirect             host bounce buffers for the network\n"
        "  --skew-ms MS               per-host REALTIME offsets up to +-MS\n"
        "  --no-nvtx --no-verbs --no-proxy --no-hostfacts --seed N\n"
        "  --no-plugin                no NCCL profiler plugin records (API calls only, no proxy events)\n"
        "  --step-name FMT            NVTX step range name, one %%d (default ProfilerStep#%%d)\n"
        "  --mark-steps               MARK events named \"step\" instead of NVTX ranges\n"
        "  --buckets B                B gradient buckets: B-1 early AllReduces hidden under backward\n"
        "  --garbage N                N random events of random kinds per rank (robustness tests)\n"
        "  --transport ib-gdr|ib|ib-gdr-recv|socket  NCCL's connection log (NCCL_TRANSPORT events): NET/IB\n"
        "                             with GPUDirect RDMA, without (implies --no-gpudirect), on receives only\n"
        "                             (needs --no-verbs), or NET/Socket (no verbs traffic); P2P within a node\n"
        "  --intra shm                intra-node connections over SHM instead of P2P (with --transport)\n"
        "  --channels C               NCCL channels in the log (default 2)\n");
}

int main(int argc, char **argv)
{
    struct model m;
    memset(&m, 0, sizeof m);
    struct cfg *c = &m.c;
    *c = (struct cfg){.nodes = 2,
                      .gpus = 4,
                      .steps = 10,
                      .kernels = 20,
                      .algo = "ring",
                      .net_gbps = 200,
                      .nvlink_gbps = 3600,
                      .pin_gbps = 200,
                      .pageable_gbps = 50,
                      .pcie_gbps = 400,
                      .grad_mb = 256,
                      .h2d_mb = 64,
                      .compute_ms = 60,
                      .idle_ms = 1,
                      .opt_ms = 2,
                      .chunk_mb = 1,
                      .straggler_rank = -1,
                      .pause_rank = -1,
                      .pause_every = 1,
                      .slow_rank = -1,
                      .slow_factor = 1,
                      .pageable_rank = -1,
                      .seed = 1,
                      .step_name = "ProfilerStep#%d",
                      .buckets = 1,
                      .channels = 2};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
#define NUM(opt, field, conv)                 \
    if (!strcmp(a, opt)) {                    \
        if (!v) die("%s needs a value", opt); \
        c->field = conv(v);                   \
        i++;                                  \
        continue;                             \
    } else (void)0
        NUM("--nodes", nodes, atoi);
        NUM("--gpus", gpus, atoi);
        NUM("--steps", steps, atoi);
        NUM("--kernels", kernels, atoi);
        NUM("--grad-mb", grad_mb, atof);
        NUM("--h2d-mb", h2d_mb, atof);
        NUM("--compute-ms", compute_ms, atof);
        NUM("--idle-ms", idle_ms, atof);
        NUM("--opt-ms", opt_ms, atof);
        NUM("--chunk-mb", chunk_mb, atof);
        NUM("--net-gbps", net_gbps, atof);
        NUM("--nvlink-gbps", nvlink_gbps, atof);
        NUM("--pin-gbps", pin_gbps, atof);
        NUM("--pageable-gbps", pageable_gbps, atof);
        NUM("--pcie-gbps", pcie_gbps, atof);
        NUM("--skew-ms", skew_ms, atof);
        NUM("--seed", seed, (unsigned)atoi);
        NUM("--garbage", garbage, atoi);
        NUM("--buckets", buckets, atoi);
        NUM("--channels", channels, atoi);
#undef NUM
        if (!strcmp(a, "-o") && v) {
            c->out = v;
            i++;
        } else if (!strcmp(a, "--truth") && v) {
            c->truth = v;
            i++;
        } else if (!strcmp(a, "--transport") && v) {
            c->transport = v;
            i++;
        } else if (!strcmp(a, "--intra") && v) {
            if (strcmp(v, "shm") && strcmp(v, "p2p")) die("--intra is shm or p2p");
            c->intra_shm = !strcmp(v, "shm");
            i++;
        } else if (!strcmp(a, "--algo") && v) {
            c->algo = v;
            i++;
        } else if (!strcmp(a, "--step-name") && v) {
            if (strstr(v, "%") && !strstr(v, "%d")) die("--step-name takes one %%d");
            c->step_name = v;
            i++;
        } else if (!strcmp(a, "--mark-steps")) {
            c->mark_steps = 1;
            c->no_nvtx = 1;
        } else if (!strcmp(a, "--straggler") && v) {
            if (sscanf(v, "%d:%lf", &c->straggler_rank, &c->straggler_ms) != 2) die("bad --straggler %s", v);
            i++;
        } else if (!strcmp(a, "--pause") && v) {
            if (sscanf(v, "%d:%lf:%d", &c->pause_rank, &c->pause_ms, &c->pause_every) < 2) die("bad --pause %s", v);
            if (c->pause_every < 1) c->pause_every = 1;
            i++;
        } else if (!strcmp(a, "--slow") && v) {
            if (sscanf(v, "%d:%lf", &c->slow_rank, &c->slow_factor) != 2 || c->slow_factor < 1) die("bad --slow %s", v);
            i++;
        } else if (!strcmp(a, "--pageable") && v) {
            c->pageable_rank = !strcmp(v, "all") ? -2 : atoi(v);
            i++;
        } else if (!strcmp(a, "--no-gpudirect")) c->no_gpudirect = 1;
        else if (!strcmp(a, "--no-nvtx")) c->no_nvtx = 1;
        else if (!strcmp(a, "--no-verbs")) c->no_verbs = 1;
        else if (!strcmp(a, "--no-proxy")) c->no_proxy = 1;
        else if (!strcmp(a, "--no-plugin")) {
            c->no_plugin = 1;
            c->no_proxy = 1;
        } else if (!strcmp(a, "--no-hostfacts")) c->no_hostfacts = 1;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else {
            usage(stderr);
            die("unknown option %s", a);
        }
    }
    if (!c->out) die("-o DIR is required");
    if (c->nodes < 1 || c->gpus < 1 || c->steps < 1 || c->kernels < 1 || c->nodes * c->gpus > 65536)
        die("bad cluster shape");
    if (c->buckets < 1 || c->buckets > 64) die("--buckets is 1..64");
    if (strcmp(c->algo, "ring") && strcmp(c->algo, "tree")) die("--algo is ring or tree");
    if (c->channels < 1 || c->channels > 64) die("--channels is 1..64");
    if (c->transport) {
        if (strcmp(c->transport, "ib-gdr") && strcmp(c->transport, "ib") && strcmp(c->transport, "ib-gdr-recv") &&
            strcmp(c->transport, "socket"))
            die("--transport is ib-gdr, ib, ib-gdr-recv or socket");
        if (!strcmp(c->transport, "socket")) c->sock = c->no_verbs = 1; /* no RDMA: no verbs traffic */
        if (!strcmp(c->transport, "ib")) c->no_gpudirect = 1;           /* NCCL stages through host memory */
        if (!strcmp(c->transport, "ib-gdr") && c->no_gpudirect) die("--transport ib-gdr and --no-gpudirect");
        if (!strcmp(c->transport, "ib-gdr-recv") && !c->no_verbs)
            die("--transport ib-gdr-recv needs --no-verbs (rs-synth posts no receives to carry it)");
    }
    rng_state = 0x9e3779b97f4a7c15ull ^ ((uint64_t)c->seed * 0x2545f4914f6cdd1dull);
    if (mkdir(c->out, 0755) < 0 && errno != EEXIST) die("cannot create %s: %s", c->out, strerror(errno));
    build_model(&m);
    for (int r = 0; r < m.n; r++) write_rank(&m, r);
    if (c->truth) write_truth(&m);
    free(m.rs);
    free(m.truth);
    free(m.host_offset);
    free(m.mono_base);
    free(m.bk_L);
    free(m.bk_end);
    return 0;
}
