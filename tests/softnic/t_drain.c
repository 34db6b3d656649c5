/* softnic: the ACK owed for a receive leaves before ibv_destroy_qp returns, even when it sits in the
 * responder's transmit queue for longer than half a second (here: behind two WRITEs held by link pause
 * windows of 990 ms; on a loaded host: a TX thread that gets no CPU). Until session 5 the drain gave up
 * after a fixed 0.5 s and dropped the queued ACK: the requester then saw "transport retry counter
 * exceeded" for a SEND that had arrived (the pingpong flake under load). */
#include "t_util.h"
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
    /* one pause window per second with 10 ms of link time between them, 20 ms latency, 20 Mb/s: B's first
     * 32 KiB WRITE leaves at the end of a window and lasts into the next one, so the second WRITE (in TX's
     * hands) waits for the end of that one, and the ACK that B owes A's SEND (arriving 20 ms after the
     * gap) waits in the queue behind it for ~1 s */
    setenv("SOFTNIC_PAUSE", "1000:990", 1);
    setenv("SOFTNIC_LATENCY_US", "20000", 1);
    setenv("SOFTNIC_RATE_GBPS", "0.02", 1);
    struct t_port A, B;
    t_port_open(&A, 64);
    t_port_open(&B, 64);
    char *abuf = calloc(1, 4096), *bbuf = calloc(1, 4096);
    int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    struct ibv_mr *amr = ibv_reg_mr(A.pd, abuf, 4096, rw), *bmr = ibv_reg_mr(B.pd, bbuf, 4096, rw);
    if (!abuf || !bbuf || !amr || !bmr) t_die("reg_mr");
    char *wsrc = calloc(1, 65536), *wdst = calloc(1, 65536);
    struct ibv_mr *wsm = ibv_reg_mr(B.pd, wsrc, 65536, rw), *wdm = ibv_reg_mr(A.pd, wdst, 65536, rw);
    if (!wsrc || !wdst || !wsm || !wdm) t_die("reg_mr");
    struct ibv_qp *qa, *qb, *qa2, *qb2;
    t_pair(&A, &B, 16, 7, &qa, &qb);
    t_pair(&B, &A, 16, 7, &qb2, &qa2);
    t_recv(qb, 1, bbuf, 4096, bmr->lkey);
    while (fmod(t_now(), 1.0) < 0.05 || fmod(t_now(), 1.0) > 0.4) /* early in a pause window */
        usleep(10000);
    for (int i = 0; i < 2; i++) /* 32 KiB (13 ms at 20 Mb/s: more than the gap), then 64 B */
        t_post(qb2, IBV_WR_RDMA_WRITE, 10 + (uint64_t)i, wsrc, i ? 64 : 32768, wsm->lkey, (uintptr_t)wdst, wdm->rkey,
               0);
    usleep(20000);
    t_post(qa, IBV_WR_SEND, 2, abuf, 64, amr->lkey, 0, 0, 0);
    struct ibv_wc wc;
    int got = 0;
    for (double tw = t_now(); t_now() - tw < 5;) /* B's CQ also gets the WRITEs' completions (later) */
        if (t_wait(B.cq, &wc, 5) && (got = wc.wr_id == 1)) break;
    t_ok(got && wc.status == IBV_WC_SUCCESS, "softnic: the receive completes (%s)",
         got ? ibv_wc_status_str(wc.status) : "no completion");
    double t0 = t_now();
    int r = ibv_destroy_qp(qb); /* at once, its ACK still owed */
    double dt = t_now() - t0;
    got = t_wait(A.cq, &wc, 5);
    t_ok(got && wc.status == IBV_WC_SUCCESS,
         "softnic: responder destroys its QP right after the receive, ACK held by a pause -> the SEND succeeds (%s; "
         "destroy took %.2f s)",
         got ? ibv_wc_status_str(wc.status) : "no completion", dt);
    t_ok(r == 0 && dt < 4.0, "softnic: destroy_qp waited for the ACK to leave, not for a stuck-peer timeout (%.2f s)",
         dt);
    ibv_destroy_qp(qa);
    ibv_destroy_qp(qa2);
    ibv_destroy_qp(qb2);
    ibv_dereg_mr(wsm);
    ibv_dereg_mr(wdm);
    ibv_dereg_mr(amr);
    ibv_dereg_mr(bmr);
    ibv_destroy_cq(A.cq);
    ibv_destroy_cq(B.cq);
    ibv_dealloc_pd(A.pd);
    ibv_dealloc_pd(B.pd);
    ibv_close_device(A.ctx);
    ibv_close_device(B.ctx);
    return t_done();
}
