/* late_ring: a ring AllReduce over RC verbs (as examples/ring_allreduce: RDMA WRITE_WITH_IMM chunks to the
 * right after a credit, zero-byte SEND credits to the left) with a planted straggler, for the analyzer's
 * ground-truth tests on the software NIC.
 *
 *   late_ring -n PROCS -s SIZE -i ITERS -l RANK -w MS
 *
 * Every iteration starts with railscope_mark("step N") (when the tracer is loaded) and a barrier (all ranks
 * leave it together, as after the previous step's collective); rank RANK then spins MS milliseconds of host
 * work before its first send, so every other rank waits MS ms for it inside the ring: the planted truth.
 * Each rank prints, per iteration, when it posted its first data send (CLOCK_MONOTONIC, shared by the
 * ranks): the late rank's minus another's is how long that one waited for it (MS, plus or minus the
 * scheduling delays of a loaded host).
 * Results are checked like ring_allreduce's. */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "examples/ex_common.h"

struct ring {
    struct ex_dev d;
    struct ibv_qp *ql, *qr;
    struct ibv_mr *mbuf, *mtmp;
    float *buf, *tmp;
    struct ex_peer_info right;
    int credits, data_ready, outstanding;
    double first_post; /* ex_now() just before this iteration's first data send */
};

#define DEPTH 64

static int post_recv(struct ibv_qp *qp)
{
    struct ibv_recv_wr wr = {.wr_id = qp->qp_num}, *bad;
    return ibv_post_recv(qp, &wr, &bad);
}

static int progress(struct ring *g)
{
    struct ibv_wc wc[16];
    int n = ibv_poll_cq(g->d.cq, 16, wc);
    if (n < 0) return -1;
    for (int i = 0; i < n; i++) {
        if (wc[i].status != IBV_WC_SUCCESS) {
            fprintf(stderr, "completion error: %s\n", ibv_wc_status_str(wc[i].status));
            return -1;
        }
        if (wc[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
            g->data_ready++;
            if (post_recv(g->ql)) return -1;
        } else if (wc[i].opcode == IBV_WC_RECV) {
            g->credits++;
            if (post_recv(g->qr)) return -1;
        } else g->outstanding--;
    }
    return 0;
}

static int send_credit(struct ring *g)
{
    struct ibv_send_wr wr = {.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED}, *bad;
    g->outstanding++;
    return ibv_post_send(g->ql, &wr, &bad);
}

static void chunk(size_t count, int world, int idx, size_t *off, size_t *n)
{
    *off = count * (size_t)idx / (size_t)world;
    *n = count * (size_t)(idx + 1) / (size_t)world - *off;
}

static int allreduce(struct ring *g, int rank, int world, size_t count)
{
    for (int s = 0; s < 2 * (world - 1); s++) {
        int rs = s < world - 1, t = s - (world - 1);
        int send_idx = rs ? (rank - s + 2 * world) % world : (rank + 1 - t + 2 * world) % world;
        int recv_idx = rs ? (rank - s - 1 + 2 * world) % world : (rank - t + 2 * world) % world;
        size_t soff, sn, roff, rn;
        chunk(count, world, send_idx, &soff, &sn);
        chunk(count, world, recv_idx, &roff, &rn);
        while (!g->credits)
            if (progress(g)) return -1;
        g->credits--;
        struct ibv_sge sge = {
            .addr = (uintptr_t)(g->buf + soff), .length = (uint32_t)(sn * sizeof(float)), .lkey = g->mbuf->lkey};
        struct ibv_send_wr wr = {.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
                                 .send_flags = IBV_SEND_SIGNALED,
                                 .sg_list = &sge,
                                 .num_sge = sn ? 1 : 0,
                                 .imm_data = htonl((uint32_t)s),
                                 .wr.rdma = {.remote_addr = g->right.addr, .rkey = g->right.rkey}},
                           *bad;
        g->outstanding++;
        if (!s) g->first_post = ex_now();
        if (ibv_post_send(g->qr, &wr, &bad)) return -1;
        while (!g->data_ready)
            if (progress(g)) return -1;
        g->data_ready--;
        if (rs)
            for (size_t i = 0; i < rn; i++) g->buf[roff + i] += g->tmp[i];
        else memcpy(g->buf + roff, g->tmp, rn * sizeof(float));
        if (send_credit(g)) return -1;
    }
    while (g->outstanding)
        if (progress(g)) return -1;
    return 0;
}

static void spin_ms(double ms)
{
    double t0 = ex_now();
    while ((ex_now() - t0) * 1e3 < ms) continue;
}

static int run_rank(struct ex_rank *r, size_t size, int iters, int late, double work_ms)
{
    int rank = r->rank, world = r->world;
    size_t count = size / sizeof(float), maxchunk = (count + (size_t)world - 1) / (size_t)world + 1;
    struct ring g;
    memset(&g, 0, sizeof g);
    g.buf = aligned_alloc(4096, (count * sizeof(float) + 4095) / 4096 * 4096 + 4096);
    g.tmp = aligned_alloc(4096, (maxchunk * sizeof(float) + 4095) / 4096 * 4096);
    if (!g.buf || !g.tmp || ex_open(&g.d, 4 * DEPTH)) return 1;
    g.mbuf = ibv_reg_mr(g.d.pd, g.buf, count * sizeof(float) + 1, IBV_ACCESS_LOCAL_WRITE);
    g.mtmp = ibv_reg_mr(g.d.pd, g.tmp, maxchunk * sizeof(float), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    g.ql = ex_qp(&g.d, DEPTH);
    g.qr = ex_qp(&g.d, DEPTH);
    if (!g.mbuf || !g.mtmp || !g.ql || !g.qr) return 1;
    ex_info(&g.d, g.ql, g.mtmp, &r->sh->info[rank][0]);
    ex_info(&g.d, g.qr, NULL, &r->sh->info[rank][1]);
    ex_barrier(r);
    int left = (rank - 1 + world) % world, right = (rank + 1) % world;
    g.right = r->sh->info[right][0];
    if (ex_connect(&g.d, g.ql, &r->sh->info[left][1]) || ex_connect(&g.d, g.qr, &g.right)) return 1;
    for (int i = 0; i < DEPTH; i++)
        if (post_recv(g.ql) || post_recv(g.qr)) return 1;
    ex_barrier(r);
    if (send_credit(&g)) return 1;
    void (*mark)(const char *, uint64_t) = (void (*)(const char *, uint64_t))dlsym(RTLD_DEFAULT, "railscope_mark");
    int bad = 0;
    double *lag = calloc((size_t)iters, sizeof *lag);
    for (int it = 0; it < iters; it++) {
        if (mark) {
            char name[32];
            snprintf(name, sizeof name, "step %d", it);
            mark(name, (uint64_t)it);
        }
        for (size_t i = 0; i < count; i++) g.buf[i] = (float)((rank + 1) * (int)(i % 251 + 1) + it % 7);
        ex_barrier(r);
        double t_b = ex_now();
        if (rank == late) spin_ms(work_ms); /* the planted straggler: extra host work every step */
        if (allreduce(&g, rank, world, count)) return 1;
        (void)t_b;
        lag[it] = g.first_post * 1e3; /* CLOCK_MONOTONIC, ms: the ranks share it */
        for (size_t i = 0; i < count; i++)
            bad += g.buf[i] != (float)((world * (world + 1) / 2) * (int)(i % 251 + 1) + world * (it % 7));
    }
    ex_barrier(r);
    printf("rank %d: result %s, first send ms:", rank, bad ? "WRONG" : "OK");
    for (int i = 0; i < iters; i++) printf(" %.4f", lag[i]);
    printf("\n");
    fflush(stdout);
    while (g.outstanding)
        if (progress(&g)) break;
    ex_barrier(r);
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    int procs = 3, iters = 10, late = -1, c;
    double work_ms = 5;
    size_t size = 1 << 20;
    while ((c = getopt(argc, argv, "n:s:i:l:w:")) != -1) {
        switch (c) {
        case 'n': procs = atoi(optarg); break;
        case 's': size = ex_size(optarg); break;
        case 'i': iters = atoi(optarg); break;
        case 'l': late = atoi(optarg); break;
        case 'w': work_ms = atof(optarg); break;
        default: fprintf(stderr, "usage: %s -n PROCS -s SIZE -i ITERS -l RANK -w MS\n", argv[0]); return 2;
        }
    }
    struct ex_rank r;
    int rc = ex_launch(procs, argc, argv, &r);
    if (rc >= 0) return rc;
    return run_rank(&r, size, iters, late, work_ms);
}
