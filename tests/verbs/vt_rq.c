/* Verbs test program (null provider + its stand-in libmlx5): receive queues the tracer tracks by object,
 * and QPs/CQs created through mlx5 direct verbs.
 *  - two SRQs, one from ibv_create_srq, one from ibv_create_srq_ex with a non-basic mask (the
 *    verbs_context create_srq_ex entry); ITERS receives posted to each; ITERS SENDs on a QP attached to
 *    the first consume its receives;
 *  - a WQ (ibv_create_wq): ITERS receives through ibv_post_wq_recv, then a list of 3 whose second WR the
 *    provider refuses (2 SGEs: EINVAL, bad_wr = that WR);
 *  - mlx5dv_create_cq (cq_ex) and mlx5dv_create_qp (ibv_wr_* builders) loaded NCCL's way (dlopen +
 *    dlvsym MLX5_1.1 / MLX5_1.3): ITERS sends built with the builders, completions read with ibv_start_poll;
 *  - a SEND from a fresh MR (wr_id 0x1100), the MR deregistered, the same lkey posted again (0x1101): the
 *    tracer must not keep the kind of an MR that is gone.
 * Prints what the application sees (return values, errno, bad_wr), then
 * "summary: srq_a=A srq_b=B sends=S wq_recvs=R dv_sends=D dv_wcs=W".
 *   vt_rq [-n ITERS] */
#include <dlfcn.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static int fail(const char *what)
{
    printf("%s failed (errno %d)\n", what, errno);
    return 1;
}

int main(int argc, char **argv)
{
    int iters = 5, opt;
    while ((opt = getopt(argc, argv, "n:")) != -1) {
        if (opt == 'n') iters = atoi(optarg);
        else return 2;
    }
    struct ibv_device **devs = ibv_get_device_list(NULL);
    struct ibv_context *ctx = devs && devs[0] ? ibv_open_device(devs[0]) : NULL;
    struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
    char *buf = malloc(1 << 16);
    struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, 1 << 16, IBV_ACCESS_LOCAL_WRITE) : NULL;
    struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 1024, NULL, NULL, 0) : NULL;
    if (!mr || !cq) return fail("setup");

    /* ---- SRQs ---- */
    struct ibv_srq_init_attr sa = {.attr = {.max_wr = 128, .max_sge = 1}};
    struct ibv_srq *srq_a = ibv_create_srq(pd, &sa);
    struct ibv_srq_init_attr_ex sx = {.attr = {.max_wr = 64, .max_sge = 1},
                                      .comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_CQ,
                                      .srq_type = IBV_SRQT_BASIC,
                                      .pd = pd,
                                      .cq = cq};
    struct ibv_srq *srq_b = ibv_create_srq_ex(ctx, &sx);
    if (!srq_a || !srq_b) return fail("create_srq");
    struct ibv_qp_init_attr qa = {.send_cq = cq,
                                  .recv_cq = cq,
                                  .srq = srq_a,
                                  .qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = 256, .max_send_sge = 1}};
    struct ibv_qp *qp = ibv_create_qp(pd, &qa);
    if (!qp) return fail("create_qp");
    long srq_a_n = 0, srq_b_n = 0, sends = 0, wq_recvs = 0, dv_sends = 0, dv_wcs = 0;
    for (int i = 0; i < iters; i++) {
        struct ibv_sge sg = {(uintptr_t)buf + 4096, 512, mr->lkey};
        struct ibv_recv_wr ra = {.wr_id = 0xa00 + i, .sg_list = &sg, .num_sge = 1}, *bad;
        struct ibv_recv_wr rb = {.wr_id = 0xb00 + i, .sg_list = &sg, .num_sge = 1};
        if (!ibv_post_srq_recv(srq_a, &ra, &bad)) srq_a_n++;
        if (!ibv_post_srq_recv(srq_b, &rb, &bad)) srq_b_n++;
    }
    for (int i = 0; i < iters; i++) {
        struct ibv_sge sg = {(uintptr_t)buf, 32, mr->lkey};
        struct ibv_send_wr w = {.wr_id = i,
                                .sg_list = &sg,
                                .num_sge = 1,
                                .opcode = IBV_WR_SEND,
                                .send_flags = IBV_SEND_SIGNALED},
                           *bad;
        if (!ibv_post_send(qp, &w, &bad)) sends++;
    }
    struct ibv_wc wc[8];
    int n;
    while ((n = ibv_poll_cq(cq, 8, wc)) > 0) {}
    ibv_destroy_qp(qp);
    printf("destroy_srq: %d %d\n", ibv_destroy_srq(srq_a), ibv_destroy_srq(srq_b));

    /* ---- WQ ---- */
    struct ibv_wq_init_attr wa = {.wq_type = IBV_WQT_RQ, .max_wr = 64, .max_sge = 1, .pd = pd, .cq = cq};
    struct ibv_wq *wq = ibv_create_wq(ctx, &wa);
    if (!wq) return fail("create_wq");
    printf("wq_num %u\n", wq->wq_num);
    for (int i = 0; i < iters; i++) {
        struct ibv_sge sg = {(uintptr_t)buf + 8192, 256, mr->lkey};
        struct ibv_recv_wr r = {.wr_id = 0xc00 + i, .sg_list = &sg, .num_sge = 1}, *bad;
        if (!ibv_post_wq_recv(wq, &r, &bad)) wq_recvs++;
    }
    struct ibv_sge sg2[2] = {{(uintptr_t)buf, 64, mr->lkey}, {(uintptr_t)buf + 64, 64, mr->lkey}};
    struct ibv_recv_wr l[3] = {{.wr_id = 0xd00, .next = &l[1], .sg_list = sg2, .num_sge = 1},
                               {.wr_id = 0xd01, .next = &l[2], .sg_list = sg2, .num_sge = 2},
                               {.wr_id = 0xd02, .sg_list = sg2, .num_sge = 1}},
                       *bad = NULL;
    int ret = ibv_post_wq_recv(wq, l, &bad);
    printf("wq list: ret=%d bad=%s\n", ret, bad == &l[1] ? "second" : bad ? "other" : "none");
    printf("destroy_wq: %d\n", ibv_destroy_wq(wq));

    /* ---- mlx5dv_create_cq / mlx5dv_create_qp ---- */
    void *h = dlopen("libmlx5.so.1", RTLD_NOW);
    struct ibv_cq_ex *(*dv_cq)(struct ibv_context *, struct ibv_cq_init_attr_ex *, void *) =
        h ? (struct ibv_cq_ex * (*)(struct ibv_context *, struct ibv_cq_init_attr_ex *, void *))
                dlvsym(h, "mlx5dv_create_cq", "MLX5_1.1")
          : NULL;
    struct ibv_qp *(*dv_qp)(struct ibv_context *, struct ibv_qp_init_attr_ex *, void *) =
        h ? (struct ibv_qp * (*)(struct ibv_context *, struct ibv_qp_init_attr_ex *, void *))
                dlvsym(h, "mlx5dv_create_qp", "MLX5_1.3")
          : NULL;
    if (!dv_cq || !dv_qp) return fail("libmlx5 lookup");
    struct ibv_cq_init_attr_ex ca = {.cqe = 256, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM};
    struct ibv_cq_ex *cqx = dv_cq(ctx, &ca, NULL);
    if (!cqx) return fail("mlx5dv_create_cq");
    struct ibv_qp_init_attr_ex qx = {.send_cq = ibv_cq_ex_to_cq(cqx),
                                     .recv_cq = ibv_cq_ex_to_cq(cqx),
                                     .qp_type = IBV_QPT_RC,
                                     .sq_sig_all = 1,
                                     .cap = {.max_send_wr = 256, .max_send_sge = 1},
                                     .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
                                     .pd = pd,
                                     .send_ops_flags = IBV_QP_EX_WITH_SEND};
    struct ibv_qp *dq = dv_qp(ctx, &qx, NULL);
    if (!dq) return fail("mlx5dv_create_qp");
    struct ibv_qp_ex *x = ibv_qp_to_qp_ex(dq);
    for (int i = 0; i < iters; i++) {
        ibv_wr_start(x);
        x->wr_id = 0xe00 + i;
        x->wr_flags = IBV_SEND_SIGNALED;
        ibv_wr_send(x);
        ibv_wr_set_sge(x, mr->lkey, (uintptr_t)buf, 100 + i);
        if (!ibv_wr_complete(x)) dv_sends++;
    }
    struct ibv_poll_cq_attr pa = {0};
    if (ibv_start_poll(cqx, &pa) == 0) {
        do dv_wcs++;
        while (ibv_next_poll(cqx) == 0);
        ibv_end_poll(cqx);
    }
    ibv_destroy_qp(dq);
    ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));

    /* ---- a stale lkey after ibv_dereg_mr ---- */
    struct ibv_qp_init_attr q2 = {
        .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .cap = {.max_send_wr = 16, .max_send_sge = 1}};
    struct ibv_qp *sq = ibv_create_qp(pd, &q2);
    char *buf2 = malloc(4096);
    struct ibv_mr *mr2 = sq ? ibv_reg_mr(pd, buf2, 4096, IBV_ACCESS_LOCAL_WRITE) : NULL;
    if (!mr2) return fail("stale lkey setup");
    struct ibv_sge s2 = {(uintptr_t)buf2, 16, mr2->lkey};
    struct ibv_send_wr w2 = {.wr_id = 0x1100, .sg_list = &s2, .num_sge = 1, .opcode = IBV_WR_SEND}, *bad2;
    int r1 = ibv_post_send(sq, &w2, &bad2);
    ibv_dereg_mr(mr2);
    w2.wr_id = 0x1101;
    int r2 = ibv_post_send(sq, &w2, &bad2);
    printf("stale lkey posts: %d %d\n", r1, r2);
    ibv_destroy_qp(sq);
    printf("summary: srq_a=%ld srq_b=%ld sends=%ld wq_recvs=%ld dv_sends=%ld dv_wcs=%ld\n", srq_a_n, srq_b_n, sends,
           wq_recvs, dv_sends, dv_wcs);
    ibv_destroy_cq(cq);
    ibv_dereg_mr(mr);
    ibv_close_device(ctx);
    return 0;
}
