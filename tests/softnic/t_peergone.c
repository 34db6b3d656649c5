/* softnic: a request the peer never takes fails through the requester's retransmit timer, not at once, so
 * that ACKs the peer still owes on its other QPs come first.
 *
 * This is the end of ibv_srq_pingpong (16 QPs on one SRQ, iterations counted over all of them): the side
 * that has done its iterations destroys its QPs one by one while the other side still waits for ACKs and
 * has an extra SEND outstanding on some QP. On a real NIC that SEND is retransmitted until the local ACK
 * timeout has run out retry_cnt + 1 times (here 0.54 s), long after the owed ACKs arrived; until session 6
 * the software NIC failed it the moment the peer's QP closed its socket, and the application saw
 * "transport retry counter exceeded" before the ACKs it was waiting for (~1 in 7 runs).
 *
 * B (a child process, its link paused 900 ms of every second so that its ACK waits in its transmit queue
 * behind a WRITE) has QPs b1 and b2 on one SRQ with one receive, and b3. A sends x on a1 (B takes it: ACK
 * owed), then y on a2 (no receive left: RNR, rnr_retry 7), and B destroys b2 and b3 at once. A must see
 * x succeed before y fails, y fail with RETRY_EXC_ERR no sooner than its timer (timeout 16: 2.15 s), and
 * z1/z2 posted on a3 (its peer already gone: connect refused) end RETRY_EXC_ERR after ~0.54 s then
 * WR_FLUSH_ERR, and w posted on a4 (its peer b4 moved to ERR: it drops requests) RETRY_EXC_ERR ~0.54 s
 * after B's answer. Old library: y and z1 failed within milliseconds, before x's ACK; w with it. */
#include "t_util.h"
#include <math.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static int c2p[2], p2c[2];

static void put(int fd, const uint64_t *v, size_t n)
{
    if (write(fd, v, n * sizeof *v) != (ssize_t)(n * sizeof *v)) t_die("pipe write");
}
static void get(int fd, uint64_t *v, size_t n)
{
    if (read(fd, v, n * sizeof *v) != (ssize_t)(n * sizeof *v)) t_die("pipe read");
}

static struct ibv_qp *srq_qp(struct t_port *p, struct ibv_srq *srq)
{
    struct ibv_qp_init_attr a = {.send_cq = p->cq,
                                 .recv_cq = p->cq,
                                 .srq = srq,
                                 .cap = {.max_send_wr = 8, .max_send_sge = 1},
                                 .qp_type = IBV_QPT_RC};
    struct ibv_qp *qp = ibv_create_qp(p->pd, &a);
    if (!qp) t_die("ibv_create_qp (srq)");
    struct ibv_qp_attr m = {
        .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE};
    if (ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
        t_die("modify INIT");
    return qp;
}

/* the responder: exits 0 when it received x */
static int peer_b(void)
{
    setenv("SOFTNIC_PAUSE", "1000:900", 1); /* before the first verbs call: the configuration is read once */
    struct t_port B;
    t_port_open(&B, 64);
    struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 1}};
    struct ibv_srq *srq = ibv_create_srq(B.pd, &sa);
    char *buf = calloc(1, 4096);
    struct ibv_mr *mr = ibv_reg_mr(B.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
    if (!srq || !buf || !mr) t_die("srq/mr");
    struct ibv_qp *b1 = srq_qp(&B, srq), *b2 = srq_qp(&B, srq), *b3 = t_qp(&B, NULL, 8), *b4 = t_qp(&B, NULL, 8);
    uint64_t mine[4] = {b1->qp_num, b2->qp_num, b3->qp_num, b4->qp_num}, a[6], v = 0;
    put(c2p[1], mine, 4);
    get(p2c[0], a, 6); /* a1..a4, rkey, addr of A's WRITE target */
    t_connect(b1, (uint32_t)a[0], 7, 1);
    t_connect(b2, (uint32_t)a[1], 7, 1);
    t_connect(b3, (uint32_t)a[2], 7, 1);
    t_connect(b4, (uint32_t)a[3], 7, 1);
    struct ibv_sge sge = {.addr = (uintptr_t)buf, .length = 4096, .lkey = mr->lkey};
    struct ibv_recv_wr rw = {.wr_id = 100, .sg_list = &sge, .num_sge = 1}, *bad;
    if (ibv_post_srq_recv(srq, &rw, &bad)) t_die("post_srq_recv");
    while (fmod(t_now(), 1.0) < 0.1 || fmod(t_now(), 1.0) > 0.5) /* early in a pause window */
        usleep(5000);
    /* held by the pause until 0.9 s into the second: B's ACKs queue behind it */
    t_post(b1, IBV_WR_RDMA_WRITE, 200, buf, 64, mr->lkey, a[5], (uint32_t)a[4], 0);
    put(c2p[1], &v, 1); /* A: send x */
    struct ibv_wc wc;
    int got = 0;
    for (double t0 = t_now(); !got && t_now() - t0 < 5;)
        if (t_wait(B.cq, &wc, 5) && wc.wr_id == 100) got = 1;
    v = got && wc.status == IBV_WC_SUCCESS;
    put(c2p[1], &v, 1); /* A: x arrived, send y */
    get(p2c[0], &v, 1);
    usleep(20000); /* y waits at b2 for a receive (RNR) */
    /* done with its iterations: the peer tears down at once, its ACK for x still in the transmit queue */
    struct ibv_qp_attr ea = {.qp_state = IBV_QPS_ERR};
    int r = ibv_destroy_qp(b2) | ibv_destroy_qp(b3) | ibv_modify_qp(b4, &ea, IBV_QP_STATE);
    v = (uint64_t)r;
    put(c2p[1], &v, 1);
    get(p2c[0], &v, 1); /* A is done */
    return got && wc.status == IBV_WC_SUCCESS && !r ? 0 : 2;
}

int main(void)
{
    if (pipe(c2p) || pipe(p2c)) t_die("pipe");
    fflush(stdout);
    pid_t pid = fork(); /* before any verbs call: B's configuration differs (its link pauses) */
    if (pid < 0) t_die("fork");
    if (pid == 0) _exit(peer_b());

    struct t_port A;
    t_port_open(&A, 64);
    char *buf = calloc(1, 4096);
    struct ibv_mr *mr = ibv_reg_mr(A.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!buf || !mr) t_die("mr");
    struct ibv_qp *a1 = t_qp(&A, NULL, 8), *a2 = t_qp(&A, NULL, 8), *a3 = t_qp(&A, NULL, 8), *a4 = t_qp(&A, NULL, 8);
    uint64_t b[4], mine[6] = {a1->qp_num, a2->qp_num, a3->qp_num, a4->qp_num, mr->rkey, (uintptr_t)buf}, v = 0;
    get(c2p[0], b, 4);
    put(p2c[1], mine, 6);
    t_connect(a1, (uint32_t)b[0], 7, 1);
    t_connect(a2, (uint32_t)b[1], 7, 1);
    t_connect(a3, (uint32_t)b[2], 7, 1); /* timeout 14, retry_cnt 7: 8 x 67 ms */
    t_connect(a4, (uint32_t)b[3], 7, 1);
    struct ibv_qp_attr ta = {.timeout = 16}; /* a2: 8 x 268 ms, longer than B's ACK can be held */
    if (ibv_modify_qp(a2, &ta, IBV_QP_TIMEOUT)) t_die("modify timeout");

    get(c2p[0], &v, 1);
    t_post(a1, IBV_WR_SEND, 1, buf, 64, mr->lkey, 0, 0, 0); /* x: B takes it */
    get(c2p[0], &v, 1);
    t_ok(v == 1, "softnic: the peer received x on its SRQ");
    t_post(a2, IBV_WR_SEND, 2, buf, 64, mr->lkey, 0, 0, 0); /* y: B has no receive left */
    put(p2c[1], &v, 1);
    get(c2p[0], &v, 1);
    double t_gone = t_now();
    t_ok(v == 0, "softnic: the peer destroyed two QPs (y outstanding on one of them) and moved one to ERR");
    t_post(a3, IBV_WR_SEND, 3, buf, 64, mr->lkey, 0, 0, 0); /* z1, z2: the peer QP is gone already */
    t_post(a3, IBV_WR_SEND, 4, buf, 64, mr->lkey, 0, 0, 0);
    t_post(a4, IBV_WR_SEND, 5, buf, 64, mr->lkey, 0, 0, 0); /* w: the peer QP is in ERR (it drops requests) */

    /* x's ACK leaves B when its pause ends (< 0.9 s); y's timer runs 2.15 s; z1's and w's 0.54 s */
    struct ibv_wc wc[5];
    double at[5] = {0};
    int n = 0, order[5];
    while (n < 5 && t_now() - t_gone < 15)
        if (t_wait(A.cq, &wc[n], 0.2)) {
            at[n] = t_now() - t_gone;
            order[n] = (int)wc[n].wr_id;
            n++;
        }
    struct ibv_wc *x = NULL, *y = NULL, *z1 = NULL, *z2 = NULL, *w = NULL;
    double tx = 0, ty = 0, tz1 = 0, tw = 0;
    int ix = -1, iy = -1;
    for (int i = 0; i < n; i++) {
        t_diag("completion %d: wr_id %d %s at %.3f s after the peer's destroy", i + 1, order[i],
               ibv_wc_status_str(wc[i].status), at[i]);
        if (order[i] == 1) x = &wc[i], tx = at[i], ix = i;
        if (order[i] == 2) y = &wc[i], ty = at[i], iy = i;
        if (order[i] == 3) z1 = &wc[i], tz1 = at[i];
        if (order[i] == 4) z2 = &wc[i];
        if (order[i] == 5) w = &wc[i], tw = at[i];
    }
    t_ok(x && x->status == IBV_WC_SUCCESS, "softnic: x, which the peer took, succeeds (%s, %.3f s)",
         x ? ibv_wc_status_str(x->status) : "no completion", tx);
    t_ok(ix >= 0 && (iy < 0 || ix < iy), "softnic: x's ACK (held by the peer's link) completes before y fails");
    t_ok(y && y->status == IBV_WC_RETRY_EXC_ERR && ty >= 2.0,
         "softnic: y, never taken, ends RETRY_EXC_ERR after its retransmit timer (timeout 16: 2.15 s; got %s at "
         "%.3f s)",
         y ? ibv_wc_status_str(y->status) : "no completion", ty);
    t_ok(z1 && z1->status == IBV_WC_RETRY_EXC_ERR && tz1 >= 0.45,
         "softnic: z1 to a QP already gone ends RETRY_EXC_ERR after its timer (timeout 14: 0.54 s; got %s at %.3f s)",
         z1 ? ibv_wc_status_str(z1->status) : "no completion", tz1);
    t_ok(z2 && z2->status == IBV_WC_WR_FLUSH_ERR, "softnic: z2 behind it is flushed (%s)",
         z2 ? ibv_wc_status_str(z2->status) : "no completion");
    /* B's RX answers w with a NAK that leaves B together with x's ACK (same transmit queue, behind the pause):
     * the timer starts then, so w fails ~0.54 s after x succeeded (the old library: at the same moment) */
    t_ok(w && w->status == IBV_WC_RETRY_EXC_ERR && x && tw - tx >= 0.25,
         "softnic: w to a QP in ERR ends RETRY_EXC_ERR a timer after the peer's drop reached us (0.54 s; got %s "
         "%.3f s after x)",
         w ? ibv_wc_status_str(w->status) : "no completion", tw - tx);
    struct ibv_qp_attr qa;
    struct ibv_qp_init_attr ia;
    ibv_query_qp(a2, &qa, IBV_QP_STATE, &ia);
    t_ok(qa.qp_state == IBV_QPS_ERR, "softnic: y's QP is in ERR after the retry error");
    ibv_query_qp(a1, &qa, IBV_QP_STATE, &ia);
    t_ok(qa.qp_state == IBV_QPS_RTS, "softnic: x's QP is still RTS");

    put(p2c[1], &v, 1);
    int st = 0;
    waitpid(pid, &st, 0);
    t_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "softnic: the peer process ended well (status %d)", st);
    return t_done();
}
