/* Verbs test program (null provider + its stand-in libmlx5): the mlx5 direct-verbs entry points NCCL and
 * perftest use, loaded NCCL's way (dlopen("libmlx5.so.1") + dlvsym with MLX5_* versions):
 * mlx5dv_open_device (a context libibverbs' ibv_open_device never sees) and mlx5dv_reg_dmabuf_mr (NCCL's
 * Data Direct registration); ITERS sends from the dmabuf MR.
 *   vt_mlx5 [-n ITERS]    prints "summary: sends=S wcs=W" */
#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int iters = 5, opt;
    while ((opt = getopt(argc, argv, "n:")) != -1) {
        if (opt == 'n') iters = atoi(optarg);
        else return 2;
    }
    void *h = dlopen("libmlx5.so.1", RTLD_NOW);
    if (!h) {
        printf("no libmlx5: %s\n", dlerror());
        return 1;
    }
    struct ibv_context *(*dv_open)(struct ibv_device *, void *) =
        (struct ibv_context * (*)(struct ibv_device *, void *)) dlvsym(h, "mlx5dv_open_device", "MLX5_1.7");
    struct ibv_mr *(*dv_reg_dmabuf)(struct ibv_pd *, uint64_t, size_t, uint64_t, int, int, int) =
        (struct ibv_mr * (*)(struct ibv_pd *, uint64_t, size_t, uint64_t, int, int, int))
            dlvsym(h, "mlx5dv_reg_dmabuf_mr", "MLX5_1.25");
    if (!dv_open || !dv_reg_dmabuf) {
        printf("dlvsym failed\n");
        return 1;
    }
    struct ibv_device **devs = ibv_get_device_list(NULL);
    struct ibv_context *ctx = devs && devs[0] ? dv_open(devs[0], NULL) : NULL;
    struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
    /* an fd the provider accepts (its number is all that matters to the null provider) */
    struct ibv_mr *mr = pd ? dv_reg_dmabuf(pd, 0, 1 << 20, 0x7f1200000000ull, 0, IBV_ACCESS_LOCAL_WRITE, 1) : NULL;
    struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 64, NULL, NULL, 0) : NULL;
    struct ibv_qp_init_attr qa = {.send_cq = cq,
                                  .recv_cq = cq,
                                  .qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = 64, .max_recv_wr = 16, .max_send_sge = 1}};
    struct ibv_qp *qp = mr && cq ? ibv_create_qp(pd, &qa) : NULL;
    if (!qp) {
        printf("setup failed\n");
        return 1;
    }
    long sends = 0, wcs = 0;
    for (int i = 0; i < iters; i++) {
        struct ibv_sge sg = {0x7f1200000000ull + 4096 * i, 4096, mr->lkey};
        struct ibv_send_wr w = {.wr_id = 700 + i,
                                .sg_list = &sg,
                                .num_sge = 1,
                                .opcode = IBV_WR_RDMA_WRITE,
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
