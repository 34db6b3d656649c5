/* hv_errno: verbs calls that fail (and some that succeed) with their exact results printed: return
 * value, errno, which work request bad_wr points at, NULL-ness. transparency_softnic.t runs it with and
 * without the tracer on the software test NIC: the two outputs must be identical.
 * Every line is "case: ret=R errno=E bad_wr=I" (I = index of the WR bad_wr names, -1 = not set). */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 12345
static void show(const char *what, long ret, int err, int bad)
{
    printf("%s: ret=%ld errno=%d bad_wr=%d\n", what, ret, err, bad);
}
static int idx(void *bad, void *base, size_t sz, int n)
{
    for (int i = 0; i < n; i++)
        if ((char *)base + i * sz == bad) return i;
    return bad ? 99 : -1;
}

int main(void)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (!list || !n) return fprintf(stderr, "hv_errno: no RDMA device\n"), 3;
    struct ibv_context *ctx = ibv_open_device(list[0]);
    ibv_free_device_list(list);
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
    if (!ctx || !pd || !cq) return perror("setup"), 3;
    static char buf[4096];
    errno = SENTINEL;
    struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE);
    show("reg_mr ok", mr != NULL, errno, -1);
    errno = SENTINEL;
    struct ibv_mr *bad_mr = ibv_reg_mr(pd, buf, sizeof buf, IBV_ACCESS_REMOTE_WRITE); /* needs LOCAL_WRITE */
    show("reg_mr remote-write without local-write", bad_mr != NULL, errno, -1);
    if (bad_mr) ibv_dereg_mr(bad_mr);
    struct ibv_qp_init_attr qa = {.send_cq = cq,
                                  .recv_cq = cq,
                                  .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
                                  .qp_type = IBV_QPT_RC};
    errno = SENTINEL;
    struct ibv_qp *qp = ibv_create_qp(pd, &qa);
    show("create_qp ok", qp != NULL, errno, -1);
    struct ibv_qp_init_attr big = qa;
    big.cap.max_send_wr = 1u << 30;
    errno = SENTINEL;
    struct ibv_qp *qp2 = ibv_create_qp(pd, &big);
    show("create_qp huge max_send_wr", qp2 != NULL, errno, -1);
    if (qp2) ibv_destroy_qp(qp2);
    /* post on a RESET QP */
    struct ibv_sge sge = {(uintptr_t)buf, 64, mr ? mr->lkey : 0};
    struct ibv_send_wr sw[3];
    memset(sw, 0, sizeof sw);
    for (int i = 0; i < 3; i++) {
        sw[i].wr_id = i;
        sw[i].sg_list = &sge;
        sw[i].num_sge = 1;
        sw[i].opcode = IBV_WR_SEND;
        sw[i].next = i < 2 ? &sw[i + 1] : NULL;
    }
    struct ibv_send_wr *sbad = NULL;
    errno = SENTINEL;
    int r = ibv_post_send(qp, sw, &sbad);
    show("post_send on RESET qp", r, errno, idx(sbad, sw, sizeof sw[0], 3));
    struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = IBV_ACCESS_LOCAL_WRITE};
    errno = SENTINEL;
    r = ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
    show("modify_qp RESET->INIT", r, errno, -1);
    struct ibv_qp_attr rts = {.qp_state = IBV_QPS_RTS};
    errno = SENTINEL;
    r = ibv_modify_qp(qp, &rts, IBV_QP_STATE);
    show("modify_qp INIT->RTS (invalid)", r, errno, -1);
    /* receive list whose second WR has too many SGEs */
    struct ibv_sge sg3[3] = {sge, sge, sge};
    struct ibv_recv_wr rw[3];
    memset(rw, 0, sizeof rw);
    for (int i = 0; i < 3; i++) {
        rw[i].wr_id = 10 + i;
        rw[i].sg_list = sg3;
        rw[i].num_sge = i == 1 ? 3 : 1;
        rw[i].next = i < 2 ? &rw[i + 1] : NULL;
    }
    struct ibv_recv_wr *rbad = NULL;
    errno = SENTINEL;
    r = ibv_post_recv(qp, rw, &rbad);
    show("post_recv 2nd WR with 3 SGEs", r, errno, idx(rbad, rw, sizeof rw[0], 3));
    /* too many receives for the queue */
    struct ibv_recv_wr many[8];
    memset(many, 0, sizeof many);
    for (int i = 0; i < 8; i++) {
        many[i].wr_id = 20 + i;
        many[i].sg_list = &sge;
        many[i].num_sge = 1;
        many[i].next = i < 7 ? &many[i + 1] : NULL;
    }
    rbad = NULL;
    errno = SENTINEL;
    r = ibv_post_recv(qp, many, &rbad);
    show("post_recv 8 WRs into a 4-deep queue", r, errno, idx(rbad, many, sizeof many[0], 8));
    struct ibv_wc wc[4];
    errno = SENTINEL;
    r = ibv_poll_cq(cq, 4, wc);
    show("poll_cq empty", r, errno, -1);
    errno = SENTINEL;
    r = ibv_req_notify_cq(cq, 0);
    show("req_notify_cq", r, errno, -1);
    errno = SENTINEL;
    r = ibv_destroy_cq(cq);
    show("destroy_cq with a QP on it", r, errno, -1);
    errno = SENTINEL;
    int busy_pd = ibv_dealloc_pd(pd);
    show("dealloc_pd with a QP and MR on it", busy_pd, errno, -1);
    errno = SENTINEL;
    r = ibv_destroy_qp(qp);
    show("destroy_qp", r, errno, -1);
    errno = SENTINEL;
    r = ibv_dereg_mr(mr);
    show("dereg_mr", r, errno, -1);
    errno = SENTINEL;
    r = ibv_destroy_cq(cq);
    show("destroy_cq", r, errno, -1);
    if (busy_pd) { /* the device refused the busy PD (rdma-core: EBUSY); a device that freed it already */
        errno = SENTINEL;
        r = ibv_dealloc_pd(pd);
        show("dealloc_pd", r, errno, -1);
    }
    errno = SENTINEL;
    r = ibv_close_device(ctx);
    show("close_device", r, errno, -1);
    return 0;
}
