/* Verbs test program, extended API (null provider): ibv_create_cq_ex + ibv_create_qp_ex with send ops,
 * posts through the ibv_wr_* builders (one WR per wr_start..wr_complete, then a batch of 3, then an aborted
 * WR that must not appear), completions through ibv_start_poll/next_poll/end_poll; then the MR is
 * re-registered (ibv_rereg_mr) over mlocked memory and one more WR (wr_id 31337) posted from it.
 *   vt_ex [-n ITERS]    prints "summary: sends=S recvs=R wcs=W" */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int iters = 10, opt;
    while ((opt = getopt(argc, argv, "n:")) != -1) {
        if (opt == 'n') iters = atoi(optarg);
        else return 2;
    }
    struct ibv_device **devs = ibv_get_device_list(NULL);
    if (!devs || !devs[0]) return 1;
    struct ibv_context *ctx = ibv_open_device(devs[0]);
    struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
    char *buf = malloc(1 << 16);
    struct ibv_mr *mr = pd ? ibv_reg_mr(pd, buf, 1 << 16, IBV_ACCESS_LOCAL_WRITE) : NULL;
    struct ibv_cq_init_attr_ex ca = {.cqe = 4096, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM};
    struct ibv_cq_ex *cq = ctx ? ibv_create_cq_ex(ctx, &ca) : NULL;
    if (!mr || !cq) {
        printf("setup failed\n");
        return 1;
    }
    struct ibv_qp_init_attr_ex qa = {
        .send_cq = ibv_cq_ex_to_cq(cq),
        .recv_cq = ibv_cq_ex_to_cq(cq),
        .qp_type = IBV_QPT_RC,
        .cap = {.max_send_wr = 4096, .max_recv_wr = 4096, .max_send_sge = 1, .max_recv_sge = 1},
        .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
        .pd = pd,
        .send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE};
    struct ibv_qp *qp = ibv_create_qp_ex(ctx, &qa);
    if (!qp) {
        printf("create_qp_ex failed: %d\n", errno);
        return 1;
    }
    struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(qp);
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT};
    ibv_modify_qp(qp, &a, IBV_QP_STATE);
    a.qp_state = IBV_QPS_RTR;
    ibv_modify_qp(qp, &a, IBV_QP_STATE);
    a.qp_state = IBV_QPS_RTS; /* the provider swaps wr_complete here */
    ibv_modify_qp(qp, &a, IBV_QP_STATE);

    long sends = 0, recvs = 0, wcs = 0;
    for (int i = 0; i < iters + 3; i++) {
        struct ibv_sge sg = {(uintptr_t)buf + 8192, 512, mr->lkey};
        struct ibv_recv_wr rw = {.wr_id = 100 + i, .sg_list = &sg, .num_sge = 1}, *bad;
        if (!ibv_post_recv(qp, &rw, &bad)) recvs++;
    }
    for (int i = 0; i < iters; i++) {
        ibv_wr_start(qx);
        qx->wr_id = i;
        qx->wr_flags = IBV_SEND_SIGNALED;
        ibv_wr_send(qx);
        ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)buf, 128);
        int r = ibv_wr_complete(qx);
        if (r) printf("wr_complete %d -> %d\n", i, r);
        sends++;
    }
    ibv_wr_start(qx);
    for (int i = 0; i < 3; i++) {
        qx->wr_id = 200 + i;
        qx->wr_flags = IBV_SEND_SIGNALED;
        ibv_wr_send(qx);
        ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)buf, 1000 + i);
        sends++;
    }
    printf("batch complete -> %d\n", ibv_wr_complete(qx));
    ibv_wr_start(qx);
    qx->wr_id = 999;
    qx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_rdma_write(qx, 0x1234, 0x5678);
    ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)buf, 8);
    ibv_wr_abort(qx);

    struct ibv_poll_cq_attr pa = {0};
    int empties = 0;
    for (int round = 0; round < 5; round++) {
        int r = ibv_start_poll(cq, &pa);
        if (r == ENOENT) {
            empties++;
            continue;
        }
        if (r) break;
        do {
            wcs++;
            (void)ibv_wc_read_opcode(cq);
        } while (ibv_next_poll(cq) == 0);
        ibv_end_poll(cq);
    }
    char *locked = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    /* the syscall, not mlock(): ASan/TSan intercept mlock() as a no-op returning 0 */
    if (locked == MAP_FAILED || syscall(SYS_mlock, locked, 1 << 16)) printf("mlock failed\n");
    int rr = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, locked, 1 << 16, IBV_ACCESS_LOCAL_WRITE);
    printf("rereg -> %d\n", rr);
    ibv_wr_start(qx);
    qx->wr_id = 31337;
    qx->wr_flags = 0;
    ibv_wr_send(qx);
    ibv_wr_set_sge(qx, mr->lkey, (uintptr_t)locked, 64);
    if (!ibv_wr_complete(qx)) sends++;
    printf("summary: sends=%ld recvs=%ld wcs=%ld empty_start_polls=%d\n", sends, recvs, wcs, empties);
    ibv_destroy_qp(qp);
    ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
    ibv_dereg_mr(mr);
    ibv_dealloc_pd(pd);
    ibv_close_device(ctx);
    ibv_free_device_list(devs);
    free(buf);
    return 0;
}
