/* Verbs test program (null provider): shared receive queues and providers without optional entries.
 *   vt_min [-n ITERS]
 * Prints which context entries are NULL (run with NULLPROV_MINIMAL=1 the provider leaves post_srq_recv,
 * req_notify_cq, create_cq_ex and create_qp_ex NULL: a tracer must not fill them in), then, when the
 * provider has SRQs, ITERS receives posted to an SRQ and ITERS SENDs consuming them.
 * Prints "summary: srq_recvs=R sends=S wcs=W". */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int iters = 10, opt;
    while ((opt = getopt(argc, argv, "n:")) != -1) {
        if (opt == 'n') iters = atoi(optarg);
        else return 2;
    }
    struct ibv_device **devs = ibv_get_device_list(NULL);
    struct ibv_context *ctx = devs && devs[0] ? ibv_open_device(devs[0]) : NULL;
    if (!ctx) return 1;
    struct verbs_context *v = verbs_get_ctx(ctx);
    printf("post_srq_recv %s, req_notify_cq %s, create_cq_ex %s, create_qp_ex %s\n",
           ctx->ops.post_srq_recv ? "set" : "NULL", ctx->ops.req_notify_cq ? "set" : "NULL",
           v && v->create_cq_ex ? "set" : "NULL", v && v->create_qp_ex ? "set" : "NULL");
    struct ibv_cq_init_attr_ex ca = {.cqe = 16};
    errno = 0;
    struct ibv_cq_ex *cqx = ibv_create_cq_ex(ctx, &ca);
    printf("ibv_create_cq_ex: %s errno=%d\n", cqx ? "cq" : "NULL", cqx ? 0 : errno);
    long srq_recvs = 0, sends = 0, wcs = 0;
    if (ctx->ops.post_srq_recv) {
        struct ibv_pd *pd = ibv_alloc_pd(ctx);
        char *buf = malloc(4096);
        struct ibv_mr *mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
        struct ibv_srq_init_attr sa = {.attr = {.max_wr = 256, .max_sge = 1}};
        struct ibv_srq *srq = ibv_create_srq(pd, &sa);
        struct ibv_cq *cq = ibv_create_cq(ctx, 1024, NULL, NULL, 0);
        struct ibv_qp_init_attr qa = {.send_cq = cq,
                                      .recv_cq = cq,
                                      .srq = srq,
                                      .qp_type = IBV_QPT_RC,
                                      .cap = {.max_send_wr = 256, .max_send_sge = 1}};
        struct ibv_qp *qp = srq && cq ? ibv_create_qp(pd, &qa) : NULL;
        if (!qp || !mr) return 1;
        for (int i = 0; i < iters; i++) {
            struct ibv_sge sg = {(uintptr_t)buf + 2048, 512, mr->lkey};
            struct ibv_recv_wr rw = {.wr_id = 300 + i, .sg_list = &sg, .num_sge = 1}, *bad;
            if (!ibv_post_srq_recv(srq, &rw, &bad)) srq_recvs++;
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
        while ((n = ibv_poll_cq(cq, 8, wc)) > 0) wcs += n;
        ibv_destroy_qp(qp);
        ibv_destroy_cq(cq);
        ibv_destroy_srq(srq);
    }
    printf("summary: srq_recvs=%ld sends=%ld wcs=%ld\n", srq_recvs, sends, wcs);
    ibv_close_device(ctx);
    return 0;
}
