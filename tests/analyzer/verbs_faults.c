/* verbs_faults: verbs failures with a known count, for the analyzer's tests on the software NIC.
 *
 *   verbs_faults
 *
 * One process: (1) ibv_create_qp of a UD QP, which the software NIC refuses (EOPNOTSUPP, errno 95);
 * (2) an RC QP connected to a second RC QP of the same process, 4 good RDMA WRITEs of 64 KiB, then one
 * RDMA WRITE with a wrong rkey (the responder answers REM_ACCESS_ERR and the requester QP goes to error),
 * then 3 more WRITEs posted to the QP in error (each completes WR_FLUSH_ERR). Prints the counts it saw:
 * "faults: create_qp errno 95, good 4, errors 1, flushed 3". */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "examples/ex_common.h"

static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
    for (long spins = 0; spins < 2000000000L; spins++) {
        int n = ibv_poll_cq(cq, 1, wc);
        if (n) return n;
    }
    return 0;
}

int main(void)
{
    struct ex_dev d;
    if (ex_open(&d, 64)) return 1;
    struct ibv_qp_init_attr ud = {
        .send_cq = d.cq, .recv_cq = d.cq, .qp_type = IBV_QPT_UD, .cap = {.max_send_wr = 4, .max_recv_wr = 4}};
    ud.cap.max_send_sge = ud.cap.max_recv_sge = 1;
    struct ibv_qp *bad_qp = ibv_create_qp(d.pd, &ud);
    int create_errno = bad_qp ? 0 : errno;
    size_t len = 64 * 1024;
    char *src = aligned_alloc(4096, len), *dst = aligned_alloc(4096, len);
    memset(src, 7, len);
    struct ibv_mr *ms = ibv_reg_mr(d.pd, src, len, IBV_ACCESS_LOCAL_WRITE);
    struct ibv_mr *md = ibv_reg_mr(d.pd, dst, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    struct ibv_qp *a = ex_qp(&d, 16), *b = ex_qp(&d, 16);
    if (!ms || !md || !a || !b) return 1;
    struct ex_peer_info ia, ib;
    ex_info(&d, a, NULL, &ia);
    ex_info(&d, b, md, &ib);
    if (ex_connect(&d, a, &ib) || ex_connect(&d, b, &ia)) return 1;
    int good = 0, errs = 0, flushed = 0;
    for (int i = 0; i < 8; i++) {
        struct ibv_sge sge = {.addr = (uintptr_t)src, .length = (uint32_t)len, .lkey = ms->lkey};
        struct ibv_send_wr wr = {.wr_id = (uint64_t)i + 1,
                                 .opcode = IBV_WR_RDMA_WRITE,
                                 .send_flags = IBV_SEND_SIGNALED,
                                 .sg_list = &sge,
                                 .num_sge = 1,
                                 .wr.rdma = {.remote_addr = ib.addr, .rkey = i == 4 ? ib.rkey ^ 0x5a5a : ib.rkey}},
                           *badwr;
        if (ibv_post_send(a, &wr, &badwr)) {
            fprintf(stderr, "post %d refused\n", i);
            break;
        }
        struct ibv_wc wc;
        if (!poll_one(d.cq, &wc)) return 1;
        if (wc.status == IBV_WC_SUCCESS) good++;
        else if (wc.status == IBV_WC_WR_FLUSH_ERR) flushed++;
        else errs++;
    }
    printf("faults: create_qp errno %d, good %d, errors %d, flushed %d\n", create_errno, good, errs, flushed);
    return 0;
}
