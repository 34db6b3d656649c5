/* Verbs test program (null provider): many CQs on one context, each with its own QP, so that CQs share the
 * first slot of the tracer's CQ table and are found further down their probe sequence (the data path's slow
 * lookup). Per CQ: one signaled send, polls until its completion, then two empty polls.
 *   vt_manycq [-n CQS]    prints each CQ's completion, and "summary: cqs=N wcs=W empties=E collide=C" where C
 *                          is the number of CQs whose first slot an earlier CQ holds (the tracer's hash,
 *                          preload/verbs_int.h vb_hash_ptr, VB_MAX_CQ 4096: informational). */
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int n = 512, opt;
    while ((opt = getopt(argc, argv, "n:")) != -1) {
        if (opt == 'n') n = atoi(optarg);
        else return 2;
    }
    struct ibv_device **devs = ibv_get_device_list(NULL);
    struct ibv_context *ctx = devs && devs[0] ? ibv_open_device(devs[0]) : NULL;
    struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
    char *buf = malloc(4096);
    struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE) : NULL;
    if (!mr) return 1;
    struct ibv_cq **cqs = calloc(n, sizeof *cqs);
    struct ibv_qp **qps = calloc(n, sizeof *qps);
    unsigned char *taken = calloc(4096, 1);
    int collide = 0;
    for (int i = 0; i < n; i++) {
        cqs[i] = ibv_create_cq(ctx, 16, NULL, NULL, 0);
        if (!cqs[i]) return 1;
        uint64_t x = (uint64_t)(uintptr_t)cqs[i];
        unsigned s = (unsigned)((x >> 6) ^ (x >> 16)) & 4095;
        collide += taken[s];
        taken[s] = 1;
        struct ibv_qp_init_attr qa = {.send_cq = cqs[i],
                                      .recv_cq = cqs[i],
                                      .qp_type = IBV_QPT_RC,
                                      .cap = {.max_send_wr = 16, .max_recv_wr = 16, .max_send_sge = 1}};
        qps[i] = ibv_create_qp(pd, &qa);
        if (!qps[i]) return 1;
    }
    long wcs = 0, empties = 0;
    for (int i = 0; i < n; i++) {
        struct ibv_sge sg = {(uintptr_t)buf, 64, mr->lkey};
        struct ibv_send_wr w = {.wr_id = 100000 + i,
                                .sg_list = &sg,
                                .num_sge = 1,
                                .opcode = IBV_WR_SEND,
                                .send_flags = IBV_SEND_SIGNALED},
                           *bad = NULL;
        if (ibv_post_send(qps[i], &w, &bad)) return 1;
        struct ibv_wc wc;
        int got;
        while ((got = ibv_poll_cq(cqs[i], 1, &wc)) == 0) empties++;
        if (got != 1) return 1;
        printf("cq %d: wr_id=%llu status=%d\n", i, (unsigned long long)wc.wr_id, (int)wc.status);
        wcs++;
        for (int k = 0; k < 2; k++) empties += ibv_poll_cq(cqs[i], 1, &wc) == 0;
    }
    for (int i = 0; i < n; i++) ibv_destroy_qp(qps[i]), ibv_destroy_cq(cqs[i]);
    printf("summary: cqs=%d wcs=%ld empties=%ld collide=%d\n", n, wcs, empties, collide);
    return 0;
}
