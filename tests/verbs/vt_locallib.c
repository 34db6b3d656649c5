/* Library half of the RTLD_LOCAL test: linked against libibverbs, loaded by vt_local with RTLD_LOCAL, so
 * libibverbs is not in the global scope (dlsym(RTLD_NEXT) cannot see it). */
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((visibility("default"))) int vtlocal_run(int iters)
{
    struct ibv_device **devs = ibv_get_device_list(NULL);
    struct ibv_context *ctx = devs && devs[0] ? ibv_open_device(devs[0]) : NULL;
    if (!ctx) return -1;
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    char *buf = malloc(4096);
    struct ibv_mr *mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
    struct ibv_cq *cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
    struct ibv_qp_init_attr qa = {.send_cq = cq,
                                  .recv_cq = cq,
                                  .qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = 256, .max_recv_wr = 256, .max_send_sge = 1}};
    struct ibv_qp *qp = ibv_create_qp(pd, &qa);
    if (!mr || !qp) return -1;
    int wcs = 0;
    for (int i = 0; i < iters; i++) {
        struct ibv_sge sg = {(uintptr_t)buf, 64, mr->lkey};
        struct ibv_send_wr w = {.wr_id = i,
                                .sg_list = &sg,
                                .num_sge = 1,
                                .opcode = IBV_WR_SEND,
                                .send_flags = IBV_SEND_SIGNALED},
                           *bad;
        ibv_post_send(qp, &w, &bad);
        struct ibv_wc wc;
        while (ibv_poll_cq(cq, 1, &wc) == 0) {}
        wcs++;
    }
    ibv_destroy_qp(qp);
    ibv_destroy_cq(cq);
    ibv_dereg_mr(mr);
    ibv_close_device(ctx);
    ibv_free_device_list(devs);
    free(buf);
    return wcs;
}
