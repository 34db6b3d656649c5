/* Verbs test program (null provider): a context opened behind the exported ibv_open_device (as libmlx5
 * does through libibverbs' private verbs_open_device; here the null provider's nullprov_open_untraced),
 * then used through the exported API: ibv_create_cq first (or ibv_alloc_pd first with -p), an MR, a QP,
 * ITERS signaled SENDs and their completions.
 *   vt_adopt [-n ITERS] [-p]    prints "summary: sends=S wcs=W" */
#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int iters = 5, pd_first = 0, opt;
    while ((opt = getopt(argc, argv, "n:p")) != -1) {
        if (opt == 'n') iters = atoi(optarg);
        else if (opt == 'p') pd_first = 1;
        else return 2;
    }
    struct ibv_context *(*open_behind)(struct ibv_device *) =
        (struct ibv_context * (*)(struct ibv_device *)) dlsym(RTLD_DEFAULT, "nullprov_open_untraced");
    struct ibv_device **devs = ibv_get_device_list(NULL);
    if (!open_behind || !devs || !devs[1]) {
        printf("needs the null provider\n");
        return 1;
    }
    struct ibv_context *ctx = open_behind(devs[1]);
    struct ibv_pd *pd = pd_first && ctx ? ibv_alloc_pd(ctx) : NULL;
    struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 256, NULL, NULL, 0) : NULL;
    if (!pd_first && cq) pd = ibv_alloc_pd(ctx);
    char *buf = malloc(4096);
    struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE) : NULL;
    struct ibv_qp_init_attr qa = {
        .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .cap = {.max_send_wr = 64, .max_send_sge = 1}};
    struct ibv_qp *qp = mr && cq ? ibv_create_qp(pd, &qa) : NULL;
    if (!qp) {
        printf("setup failed\n");
        return 1;
    }
    long sends = 0, wcs = 0;
    for (int i = 0; i < iters; i++) {
        struct ibv_sge sg = {(uintptr_t)buf, 128, mr->lkey};
        struct ibv_send_wr w = {.wr_id = 0xf00 + i,
                                .sg_list = &sg,
                                .num_sge = 1,
                                .opcode = IBV_WR_SEND,
                                .send_flags = IBV_SEND_SIGNALED},
                           *bad;
        if (!ibv_post_send(qp, &w, &bad)) sends++;
        struct ibv_wc wc;
        while (ibv_poll_cq(cq, 1, &wc) == 0) {}
        wcs++;
    }
    printf("summary: sends=%ld wcs=%ld\n", sends, wcs);
    ibv_destroy_qp(qp);
    ibv_destroy_cq(cq);
    ibv_dereg_mr(mr);
    ibv_close_device(ctx);
    return 0;
}
