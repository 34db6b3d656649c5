/* softnic: requests to a peer QP in ERR. The peer drops each one (it answers every request with a NAK on the
 * wire, which stands for a real responder's silence): none may complete successfully, the first ends
 * RETRY_EXC_ERR after the requester's retransmit timer and the rest are flushed. Before the fix in session 6 a
 * later NAK completed the first request as SUCCESS (found by review: a send that never arrived reported
 * delivered) when the later requests were on the wire before the first NAK came back: posted back to back,
 * that happened in ~2 of 3 rounds, so 5 rounds on fresh QPs. Run by tests/softnic/nakerr.t. */
#include "t_util.h"

enum { N = 4, ROUNDS = 5 };

int main(void)
{
    struct t_port a, b;
    t_port_open(&a, 64);
    t_port_open(&b, 64);
    char *buf = calloc(1, 4096);
    struct ibv_mr *mr = ibv_reg_mr(a.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
    if (!buf || !mr) t_die("buffer");
    int total = 0, ok_seen = 0, first_ok = 0, flushed = 0;
    double tmin = 1e9;
    for (int r = 0; r < ROUNDS; r++) {
        struct ibv_qp *qa, *qb;
        t_pair(&a, &b, 8, 7, &qa, &qb);
        struct ibv_qp_attr err = {.qp_state = IBV_QPS_ERR};
        if (ibv_modify_qp(qb, &err, IBV_QP_STATE)) t_die("modify ERR");
        double t0 = t_now();
        for (int i = 0; i < N; i++)
            if (t_post(qa, IBV_WR_SEND, (uint64_t)i + 1, buf, 64, mr->lkey, 0, 0, 0)) t_die("post");
        struct ibv_wc wc;
        for (int n = 0; n < N && t_wait(a.cq, &wc, 5); n++) {
            double t = t_now() - t0;
            t_diag("round %d: wr %d %s at %.3f s", r, (int)wc.wr_id, ibv_wc_status_str(wc.status), t);
            total++;
            ok_seen += wc.status == IBV_WC_SUCCESS;
            if (n == 0 && wc.wr_id == 1 && wc.status == IBV_WC_RETRY_EXC_ERR) {
                first_ok++;
                if (t < tmin) tmin = t;
            }
            flushed += n > 0 && wc.status == IBV_WC_WR_FLUSH_ERR;
        }
        ibv_destroy_qp(qa);
        ibv_destroy_qp(qb);
    }
    t_ok(total == N * ROUNDS, "softnic: %d rounds of %d sends to a peer QP in ERR: %d completions", ROUNDS, N, total);
    t_ok(ok_seen == 0, "softnic: none of them completes SUCCESS (%d did)", ok_seen);
    t_ok(first_ok == ROUNDS && tmin >= 0.45,
         "softnic: each round's first ends RETRY_EXC_ERR after the retransmit timer (timeout 14: 0.54 s; %d of %d, "
         "earliest %.3f s)",
         first_ok, ROUNDS, tmin);
    t_ok(flushed == (N - 1) * ROUNDS, "softnic: the ones behind it are flushed (%d of %d)", flushed, (N - 1) * ROUNDS);
    return t_done();
}
