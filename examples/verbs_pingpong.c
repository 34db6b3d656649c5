/* verbs_pingpong: two processes bounce a message over an RC QP (SEND/RECV), then rank 1 RDMA-READs
 * rank 0's buffer and rank 0 RDMA-WRITEs into rank 1's; every byte is checked.
 *
 *   verbs_pingpong [-s SIZE] [-n ITERS]      e.g. verbs_pingpong -s 64K -n 1000
 *
 * The launcher forks/execs the two ranks (RANK, WORLD_SIZE set).  Rank 0 prints the round-trip
 * latency and bandwidth.  Plain rdma-core API; the software test NIC runs it via LD_LIBRARY_PATH. */
#include "ex_common.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* wait for `want` completions of the given opcode; others that arrive meanwhile are counted in *other */
static int wait_for(struct ibv_cq *cq, enum ibv_wc_opcode want, int *pending_send, int *pending_recv)
{
    for (;;) {
        if (want & IBV_WC_RECV ? *pending_recv == 0 : *pending_send == 0) return 0;
        struct ibv_wc wc;
        int n = ibv_poll_cq(cq, 1, &wc);
        if (n == 0) continue;
        if (n < 0 || wc.status != IBV_WC_SUCCESS) {
            fprintf(stderr, "completion error: %s\n", n < 0 ? "poll failed" : ibv_wc_status_str(wc.status));
            return -1;
        }
        if (wc.opcode & IBV_WC_RECV) (*pending_recv)--;
        else (*pending_send)--;
    }
}

static int post(struct ibv_qp *qp, enum ibv_wr_opcode op, void *addr, size_t len, uint32_t lkey,
                const struct ex_peer_info *rm)
{
    struct ibv_sge sge = {.addr = (uintptr_t)addr, .length = (uint32_t)len, .lkey = lkey};
    struct ibv_send_wr wr = {.opcode = op, .send_flags = IBV_SEND_SIGNALED, .sg_list = &sge, .num_sge = 1}, *bad;
    if (rm) {
        wr.wr.rdma.remote_addr = rm->addr;
        wr.wr.rdma.rkey = rm->rkey;
    }
    return ibv_post_send(qp, &wr, &bad);
}

static int post_recv(struct ibv_qp *qp, void *addr, size_t len, uint32_t lkey)
{
    struct ibv_sge sge = {.addr = (uintptr_t)addr, .length = (uint32_t)len, .lkey = lkey};
    struct ibv_recv_wr wr = {.sg_list = &sge, .num_sge = 1}, *bad;
    return ibv_post_recv(qp, &wr, &bad);
}

static int run_rank(struct ex_rank *r, size_t size, int iters)
{
    int me = r->rank, peer = 1 - me;
    struct ex_dev d;
    unsigned char *buf = malloc(size), *rbuf = malloc(size);
    if (!buf || !rbuf || ex_open(&d, 64)) return 1;
    for (size_t i = 0; i < size; i++) buf[i] = (unsigned char)(i * 7 + (size_t)me * 13);
    int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    struct ibv_mr *mr = ibv_reg_mr(d.pd, buf, size, acc), *rmr = ibv_reg_mr(d.pd, rbuf, size, acc);
    struct ibv_qp *qp = ex_qp(&d, 16);
    if (!mr || !rmr || !qp) return 1;
    ex_info(&d, qp, mr, &r->sh->info[me][0]);
    ex_barrier(r);
    struct ex_peer_info rm = r->sh->info[peer][0];
    if (ex_connect(&d, qp, &rm)) return 1;
    if (post_recv(qp, rbuf, size, rmr->lkey)) return 1;
    ex_barrier(r);
    if (me == 0)
        printf("verbs_pingpong: %zu bytes x %d round trips, device %s\n", size, iters,
               ibv_get_device_name(d.ctx->device));
    double t0 = ex_now();
    for (int i = 0; i < iters; i++) {
        int ps = 1, pr = 1;
        if (me == 0) {
            if (post(qp, IBV_WR_SEND, buf, size, mr->lkey, NULL) || wait_for(d.cq, IBV_WC_RECV, &ps, &pr) ||
                post_recv(qp, rbuf, size, rmr->lkey) || wait_for(d.cq, IBV_WC_SEND, &ps, &pr))
                return 1;
        } else {
            if (wait_for(d.cq, IBV_WC_RECV, &ps, &pr) || post_recv(qp, rbuf, size, rmr->lkey) ||
                post(qp, IBV_WR_SEND, buf, size, mr->lkey, NULL) || wait_for(d.cq, IBV_WC_SEND, &ps, &pr))
                return 1;
        }
    }
    double dt = ex_now() - t0;
    /* what arrived last is the peer's buffer: check every byte */
    size_t bad = 0;
    for (size_t i = 0; i < size; i++) bad += rbuf[i] != (unsigned char)(i * 7 + (size_t)peer * 13);
    ex_barrier(r);
    /* one-sided: rank 1 reads rank 0's buffer, rank 0 writes into rank 1's rbuf */
    memset(rbuf, 0, size);
    ex_barrier(r);
    int ps = 1, pr = 0;
    if (me == 1 &&
        (post(qp, IBV_WR_RDMA_READ, rbuf, size, rmr->lkey, &rm) || wait_for(d.cq, IBV_WC_RDMA_READ, &ps, &pr)))
        return 1;
    if (me == 0 &&
        (post(qp, IBV_WR_RDMA_WRITE, buf, size, mr->lkey, &rm) || wait_for(d.cq, IBV_WC_RDMA_WRITE, &ps, &pr)))
        return 1;
    ex_barrier(r);
    if (me == 1) {
        for (size_t i = 0; i < size; i++) /* READ: rank 0's buffer, fetched into rbuf */
            bad += rbuf[i] != (unsigned char)(i * 7);
        for (size_t i = 0; i < size; i++) /* WRITE: rank 0's data landed in our registered buf */
            bad += buf[i] != (unsigned char)(i * 7);
    }
    if (me == 0)
        printf("%d iters in %.3f s = %.2f usec/round trip, %.2f Mbit/s\n", iters, dt, dt * 1e6 / iters,
               2.0 * (double)size * iters * 8 / dt / 1e6);
    printf("rank %d: data %s\n", me, bad ? "WRONG" : "OK");
    fflush(stdout);
    ex_barrier(r);
    ibv_destroy_qp(qp);
    ibv_dereg_mr(mr);
    ibv_dereg_mr(rmr);
    ibv_destroy_cq(d.cq);
    ibv_dealloc_pd(d.pd);
    ibv_close_device(d.ctx);
    free(buf);
    free(rbuf);
    return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
    int iters = 1000, c;
    size_t size = 4096;
    while ((c = getopt(argc, argv, "s:n:h")) != -1) {
        switch (c) {
        case 's': size = ex_size(optarg); break;
        case 'n': iters = atoi(optarg); break;
        case 'h':
            printf("usage: %s [-s SIZE] [-n ITERS]\n  RC ping-pong (SEND/RECV) between two processes,"
                   " then RDMA READ/WRITE checks\n  -s SIZE   message bytes, K/M suffixes (default 4096)\n"
                   "  -n ITERS  round trips (default 1000)\n",
                   argv[0]);
            return 0;
        default: return 2;
        }
    }
    if (!size || size > (1u << 30) || iters < 1) {
        fprintf(stderr, "verbs_pingpong: size must be 1..1G and iterations >= 1\n");
        return 2;
    }
    struct ex_rank r;
    int rc = ex_launch(2, argc, argv, &r);
    if (rc >= 0) return rc;
    return run_rank(&r, size, iters);
}
