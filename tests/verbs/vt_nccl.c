/* Verbs test program: an NCCL-style loader. The binary does not link libibverbs: it dlopens
 * "libibverbs.so" (falling back to "libibverbs.so.1"), resolves every entry point with
 * dlvsym(handle, name, "IBVERBS_1.1") as NCCL does, and drives the data path through ctx->ops directly
 * (qp->context->ops.post_send, cq->context->ops.poll_cq), never through exported symbols.
 *   vt_nccl [-n ITERS]    prints "summary: sends=S recvs=R wcs=W" */
#include <dlfcn.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SYMS(X)                                                                                            \
    X(ibv_get_device_list, struct ibv_device **, (int *))                                                  \
    X(ibv_open_device, struct ibv_context *, (struct ibv_device *))                                        \
    X(ibv_close_device, int, (struct ibv_context *))                                                       \
    X(ibv_alloc_pd, struct ibv_pd *, (struct ibv_context *))                                               \
    X(ibv_reg_mr, struct ibv_mr *, (struct ibv_pd *, void *, size_t, int))                                 \
    X(ibv_dereg_mr, int, (struct ibv_mr *))                                                                \
    X(ibv_create_cq, struct ibv_cq *, (struct ibv_context *, int, void *, struct ibv_comp_channel *, int)) \
    X(ibv_destroy_cq, int, (struct ibv_cq *))                                                              \
    X(ibv_create_qp, struct ibv_qp *, (struct ibv_pd *, struct ibv_qp_init_attr *))                        \
    X(ibv_modify_qp, int, (struct ibv_qp *, struct ibv_qp_attr *, int))                                    \
    X(ibv_destroy_qp, int, (struct ibv_qp *))

#define DECL(name, ret, args) static ret(*p_##name) args;
SYMS(DECL)
static struct ibv_mr *(*p_reg_mr_iova2)(struct ibv_pd *, void *, size_t, uint64_t, unsigned);
static struct ibv_mr *(*p_reg_dmabuf_mr)(struct ibv_pd *, uint64_t, size_t, uint64_t, int, int);

int main(int argc, char **argv)
{
    int iters = 10, opt;
    while ((opt = getopt(argc, argv, "n:")) != -1) {
        if (opt == 'n') iters = atoi(optarg);
        else return 2;
    }
    void *h = dlopen("libibverbs.so", RTLD_NOW);
    if (!h) h = dlopen("libibverbs.so.1", RTLD_NOW);
    if (!h) {
        printf("no libibverbs: %s\n", dlerror());
        return 1;
    }
#define LOAD(name, ret, args)                                \
    p_##name = (ret(*) args)dlvsym(h, #name, "IBVERBS_1.1"); \
    if (!p_##name) {                                         \
        printf("dlvsym %s failed\n", #name);                 \
        return 1;                                            \
    }
    SYMS(LOAD)
    /* optional ones, as NCCL loads them */
    p_reg_mr_iova2 = (struct ibv_mr * (*)(struct ibv_pd *, void *, size_t, uint64_t, unsigned))
        dlvsym(h, "ibv_reg_mr_iova2", "IBVERBS_1.8");
    p_reg_dmabuf_mr = (struct ibv_mr * (*)(struct ibv_pd *, uint64_t, size_t, uint64_t, int, int))
        dlvsym(h, "ibv_reg_dmabuf_mr", "IBVERBS_1.12");
    struct ibv_device **devs = p_ibv_get_device_list(NULL);
    struct ibv_context *ctx = devs && devs[0] ? p_ibv_open_device(devs[0]) : NULL;
    if (!ctx) return 1;
    struct ibv_pd *pd = p_ibv_alloc_pd(ctx);
    char *buf = malloc(1 << 16);
    struct ibv_mr *mr = p_ibv_reg_mr(pd, buf, 1 << 16, IBV_ACCESS_LOCAL_WRITE);
    /* NCCL's DMA-BUF support probe: fd -1 must fail (EBADF here = "supported" to NCCL) */
    if (p_reg_dmabuf_mr) {
        errno = 0;
        struct ibv_mr *d = p_reg_dmabuf_mr(pd, 0, 0, 0, -1, 0);
        printf("dmabuf probe: %s errno=%d\n", d ? "mr" : "NULL", errno);
    }
    /* relaxed-ordering registration through ibv_reg_mr_iova2 with an iova of NCCL's choosing */
    struct ibv_mr *mr2 = p_reg_mr_iova2 ? p_reg_mr_iova2(pd, buf + 4096, 4096, 0x7f0000001000ull,
                                                         IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING)
                                        : NULL;
    printf("iova2: %s\n", mr2 ? "ok" : "missing");
    struct ibv_cq *cq = p_ibv_create_cq(ctx, 4096, NULL, NULL, 0);
    struct ibv_qp_init_attr qa = {
        .send_cq = cq,
        .recv_cq = cq,
        .qp_type = IBV_QPT_RC,
        .cap = {.max_send_wr = 4096, .max_recv_wr = 4096, .max_send_sge = 1, .max_recv_sge = 1}};
    struct ibv_qp *qp = p_ibv_create_qp(pd, &qa);
    if (!mr || !qp) return 1;
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT};
    p_ibv_modify_qp(qp, &a, IBV_QP_STATE);
    long sends = 0, recvs = 0, wcs = 0;
    for (int i = 0; i < iters; i++) {
        struct ibv_sge sg = {(uintptr_t)buf, 0, mr->lkey};
        struct ibv_recv_wr rw = {.wr_id = i, .sg_list = &sg, .num_sge = 0}, *bad; /* NCCL: no SGE */
        if (!qp->context->ops.post_recv(qp, &rw, &bad)) recvs++;
    }
    for (int i = 0; i < iters; i++) {
        struct ibv_sge sg = {(uintptr_t)buf, 4096, mr->lkey};
        struct ibv_send_wr w = {.wr_id = (uint64_t)i << 8,
                                .sg_list = &sg,
                                .num_sge = 1,
                                .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
                                .send_flags = IBV_SEND_SIGNALED,
                                .imm_data = htobe32(4096),
                                .wr.rdma = {0x7000, 0x42}},
                           *bad;
        if (!qp->context->ops.post_send(qp, &w, &bad)) sends++;
    }
    struct ibv_wc wc[8];
    for (int spins = 0; wcs < sends + recvs && spins < 100000; spins++) {
        int n = cq->context->ops.poll_cq(cq, 8, wc);
        if (n > 0) wcs += n;
    }
    printf("summary: sends=%ld recvs=%ld wcs=%ld\n", sends, recvs, wcs);
    p_ibv_destroy_qp(qp);
    p_ibv_destroy_cq(cq);
    p_ibv_dereg_mr(mr);
    p_ibv_close_device(ctx);
    free(buf);
    return 0;
}
