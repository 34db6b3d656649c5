/* ring_allreduce: a ring AllReduce (sum of floats) over RDMA verbs for N processes on one host.
 *
 *   ring_allreduce [-n PROCS] [-s SIZE] [-i ITERS]      e.g. ring_allreduce -n 4 -s 4M -i 10
 *
 * The launcher forks/execs PROCS ranks (RANK, WORLD_SIZE set in each).  Each rank connects one RC QP to
 * its left and one to its right neighbour.  Reduce-scatter then all-gather, 2(N-1) steps: at each step
 * a rank RDMA-WRITEs-with-immediate one chunk into its right neighbour's staging buffer (after a credit
 * from it), waits for its left neighbour's chunk, adds (or copies) it in, and returns a credit (a 0-byte
 * SEND).  Every element of the result is checked; rank 0 prints per-iteration times.
 * Plain rdma-core API: runs on any RC device, e.g. the software test NIC (LD_LIBRARY_PATH). */
#include "ex_common.h"
#include <arpa/inet.h>
#include <dlfcn.h>
#include <stdint.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ring {
    struct ex_dev d;
    struct ibv_qp *ql, *qr; /* to the left / right neighbour */
    struct ibv_mr *mbuf, *mtmp;
    float *buf, *tmp;
    struct ex_peer_info right; /* where our chunks go */
    int credits, data_ready, outstanding;
    uint32_t imm_seen;
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
    if (n < 0) {
        fprintf(stderr, "ibv_poll_cq failed\n");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (wc[i].status != IBV_WC_SUCCESS) {
            fprintf(stderr, "completion error: %s (opcode %d)\n", ibv_wc_status_str(wc[i].status), wc[i].opcode);
            return -1;
        }
        if (wc[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM) { /* a chunk from the left */
            g->data_ready++;
            g->imm_seen = ntohl(wc[i].imm_data);
            if (post_recv(g->ql)) return -1;
        } else if (wc[i].opcode == IBV_WC_RECV) { /* a credit from the right */
            g->credits++;
            if (post_recv(g->qr)) return -1;
        } else {
            g->outstanding--;
        }
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
    int steps = 2 * (world - 1);
    for (int s = 0; s < steps; s++) {
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
        struct ibv_send_wr wr =
                               {
                                   .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
                                   .send_flags = IBV_SEND_SIGNALED,
                                   .sg_list = &sge,
                                   .num_sge = sn ? 1 : 0,
                                   .imm_data = htonl((uint32_t)s),
                                   .wr.rdma = {.remote_addr = g->right.addr, .rkey = g->right.rkey},
                               },
                           *bad;
        g->outstanding++;
        if (ibv_post_send(g->qr, &wr, &bad)) {
            perror("ibv_post_send");
            return -1;
        }
        while (!g->data_ready)
            if (progress(g)) return -1;
        g->data_ready--;
        if (g->imm_seen != (uint32_t)s) {
            fprintf(stderr, "rank %d: step %d got chunk of step %u\n", rank, s, g->imm_seen);
            return -1;
        }
        if (rs)
            for (size_t i = 0; i < rn; i++) g->buf[roff + i] += g->tmp[i];
        else memcpy(g->buf + roff, g->tmp, rn * sizeof(float));
        if (send_credit(g)) { /* our staging buffer is free again */
            perror("credit");
            return -1;
        }
    }
    while (g->outstanding)
        if (progress(g)) return -1;
    return 0;
}

static float value(int rank, int iter, size_t i) { return (float)((rank + 1) * (int)(i % 251 + 1) + iter % 7); }

static int run_rank(struct ex_rank *r, size_t size, int iters)
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
    ex_barrier(r); /* everyone is RTS with receives posted */
    if (send_credit(&g)) return 1;
    if (rank == 0)
        printf("ring_allreduce: %d ranks, %zu bytes (%zu floats), %d iterations, device %s\n", world,
               count * sizeof(float), count, iters, ibv_get_device_name(g.d.ctx->device));
    /* Step marks for `railscope report` (include/railscope.h): found at run time, so the example runs the
	 * same without the tracer. */
    void (*mark)(const char *, uint64_t) = (void (*)(const char *, uint64_t))dlsym(RTLD_DEFAULT, "railscope_mark");
    int bad = 0;
    for (int it = 0; it < iters; it++) {
        if (mark) {
            char name[32];
            snprintf(name, sizeof name, "step %d", it);
            mark(name, (uint64_t)it);
        }
        for (size_t i = 0; i < count; i++) g.buf[i] = value(rank, it, i);
        ex_barrier(r);
        double t0 = ex_now();
        if (allreduce(&g, rank, world, count)) {
            r->sh->failed = 1;
            return 1;
        }
        double dt = ex_now() - t0;
        for (size_t i = 0; i < count; i++) {
            float want = (float)((world * (world + 1) / 2) * (int)(i % 251 + 1) + world * (it % 7));
            if (g.buf[i] != want) {
                if (bad < 5)
                    fprintf(stderr, "rank %d iter %d: element %zu = %g, want %g\n", rank, it, i, (double)g.buf[i],
                            (double)want);
                bad++;
            }
        }
        if (rank == 0) {
            double bytes = (double)(count * sizeof(float));
            printf("iter %d: %.3f ms  algbw %.3f GB/s  busbw %.3f GB/s\n", it, dt * 1e3, bytes / dt / 1e9,
                   bytes / dt / 1e9 * 2.0 * (world - 1) / world);
            fflush(stdout);
        }
    }
    ex_barrier(r); /* nobody tears down while a neighbour still needs a credit */
    printf("rank %d: result %s (%zu floats x %d iterations checked)\n", rank, bad ? "WRONG" : "OK", count, iters);
    fflush(stdout);
    /* the final credit each rank sent may still be in flight: drain before closing */
    while (g.outstanding)
        if (progress(&g)) break;
    ex_barrier(r);
    ibv_destroy_qp(g.ql);
    ibv_destroy_qp(g.qr);
    ibv_dereg_mr(g.mbuf);
    ibv_dereg_mr(g.mtmp);
    ibv_destroy_cq(g.d.cq);
    ibv_dealloc_pd(g.d.pd);
    ibv_close_device(g.d.ctx);
    free(g.buf);
    free(g.tmp);
    return bad ? 1 : 0;
}

static void usage(const char *p)
{
    printf("usage: %s [-n PROCS] [-s SIZE] [-i ITERS]\n"
           "  ring AllReduce (float sum) over RDMA verbs between PROCS processes on this host\n"
           "  -n PROCS  number of ranks, 2..%d (default 4)\n"
           "  -s SIZE   bytes per rank, suffixes K/M/G (default 1M)\n"
           "  -i ITERS  iterations, each timed and checked (default 5)\n",
           p, EX_MAX_RANKS);
}

int main(int argc, char **argv)
{
    int procs = 4, iters = 5, c;
    size_t size = 1 << 20;
    while ((c = getopt(argc, argv, "n:s:i:h")) != -1) {
        switch (c) {
        case 'n': procs = atoi(optarg); break;
        case 's': size = ex_size(optarg); break;
        case 'i': iters = atoi(optarg); break;
        case 'h': usage(argv[0]); return 0;
        default: usage(argv[0]); return 2;
        }
    }
    if (size < sizeof(float) || iters < 1) {
        fprintf(stderr, "ring_allreduce: size must be >= 4 bytes and iterations >= 1\n");
        return 2;
    }
    struct ex_rank r;
    int rc = ex_launch(procs, argc, argv, &r);
    if (rc >= 0) return rc;
    return run_rank(&r, size, iters);
}
