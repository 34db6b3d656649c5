/* Verbs test program (null provider): the empty polls before each completion, which the tracer records in the
 * completion's IBV_WC hdr.aux (formats/events_verbs.h RS_WC_AUX_*). One RC QP looped back to itself; each case
 * posts signaled RDMA WRITEs (a completion on the send CQ at once) after polling the CQ its own way:
 *   first   the CQ's very first poll finds the completion (nothing known before it)
 *   again   post and poll right after the previous completion: no empty poll
 *   spin    SPIN empty polls, then post and poll
 *   away    one empty poll, AWAY ms asleep, then post and poll (a program that looked once, then went away)
 *   late    found a completion, AWAY ms asleep, then post and poll (a program that did not look)
 *   armed   5 empty polls, ibv_req_notify_cq, then post and poll; then `after`: post and poll again
 *   batch   10 empty polls, a list of 3 WRs, one poll returning the 3
 *   ex      a second CQ, an ibv_cq_ex: 20 empty ibv_start_poll, 2 WRs, start_poll + next_poll
 * Prints per case "case NAME wr_id=... n=N" (N completions) for the trace check and "ms NAME T" (the program's own
 * time from its first empty poll, or the previous completion, to the poll that found it; not compared between
 * runs with and without the tracer).
 *   vt_wait [-s SPIN] [-a AWAY_MS]
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static struct ibv_qp *qp;
static struct ibv_mr *mr;
static char *buf;

static int post(uint64_t wr_id, int n)
{
    struct ibv_sge sg = {(uintptr_t)buf, 64, mr->lkey};
    struct ibv_send_wr w[4], *bad = NULL;
    memset(w, 0, sizeof w);
    for (int i = 0; i < n; i++) {
        w[i].wr_id = wr_id + (uint64_t)i;
        w[i].sg_list = &sg;
        w[i].num_sge = 1;
        w[i].opcode = IBV_WR_RDMA_WRITE;
        w[i].send_flags = IBV_SEND_SIGNALED;
        w[i].wr.rdma.remote_addr = (uintptr_t)buf + 4096;
        w[i].wr.rdma.rkey = mr->rkey;
        w[i].next = i + 1 < n ? &w[i + 1] : NULL;
    }
    return ibv_post_send(qp, w, &bad);
}

/* n empty polls; returns how many were not empty (0 expected) */
static int empties(struct ibv_cq *cq, int n)
{
    struct ibv_wc wc;
    int got = 0;
    for (int i = 0; i < n; i++) got += ibv_poll_cq(cq, 1, &wc) != 0;
    return got;
}

/* ms NAME: from t0 to the completion; since NAME: from the previous case's completion to this one, by the
 * program's own clock (what the trace's time since the previous completion is checked against: a descheduling of
 * the program in between lengthens both) */
static void found(struct ibv_cq *cq, const char *name, double t0)
{
    static double prev;
    struct ibv_wc wc[16];
    int n = ibv_poll_cq(cq, 16, wc);
    double t1 = now_ms();
    printf("case %s wr_id=%llu n=%d status=%d\n", name, n > 0 ? (unsigned long long)wc[0].wr_id : 0ull, n,
           n > 0 ? (int)wc[0].status : -1);
    printf("ms %s %.3f\n", name, t1 - t0);
    if (prev > 0) printf("since %s %.3f\n", name, t1 - prev);
    prev = t1;
}

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) && errno == EINTR) continue;
}

int main(int argc, char **argv)
{
    int spin = 1000, away = 3, opt;
    while ((opt = getopt(argc, argv, "s:a:")) != -1) {
        if (opt == 's') spin = atoi(optarg);
        else if (opt == 'a') away = atoi(optarg);
        else return 2;
    }
    struct ibv_device **devs = ibv_get_device_list(NULL);
    if (!devs || !devs[0]) return 1;
    struct ibv_context *ctx = ibv_open_device(devs[0]);
    struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
    buf = malloc(1 << 16);
    mr = pd ? ibv_reg_mr(pd, buf, 1 << 16, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) : NULL;
    struct ibv_cq *cq = ctx ? ibv_create_cq(ctx, 4096, NULL, NULL, 0) : NULL;
    struct ibv_cq_init_attr_ex ca = {.cqe = 4096, .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM};
    struct ibv_cq_ex *cqx = ctx ? ibv_create_cq_ex(ctx, &ca) : NULL;
    if (!mr || !cq || !cqx) {
        printf("setup failed\n");
        return 1;
    }
    struct ibv_qp_init_attr qa = {
        .send_cq = cq,
        .recv_cq = cq,
        .qp_type = IBV_QPT_RC,
        .cap = {.max_send_wr = 4096, .max_recv_wr = 16, .max_send_sge = 1, .max_recv_sge = 1}};
    qp = ibv_create_qp(pd, &qa);
    qa.send_cq = qa.recv_cq = ibv_cq_ex_to_cq(cqx);
    struct ibv_qp *qpx = ibv_create_qp(pd, &qa);
    if (!qp || !qpx) {
        printf("create_qp failed\n");
        return 1;
    }
    struct ibv_qp *qps[2] = {qp, qpx};
    for (int i = 0; i < 2; i++) {
        struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1};
        ibv_modify_qp(qps[i], &a, IBV_QP_STATE | IBV_QP_PORT);
        a.qp_state = IBV_QPS_RTR;
        a.dest_qp_num = qps[i]->qp_num;
        ibv_modify_qp(qps[i], &a, IBV_QP_STATE | IBV_QP_DEST_QPN);
        a.qp_state = IBV_QPS_RTS;
        ibv_modify_qp(qps[i], &a, IBV_QP_STATE);
    }
    int bad = 0;
    double t0 = now_ms();
    bad += post(100, 1);
    found(cq, "first", t0);
    t0 = now_ms();
    bad += post(200, 1);
    found(cq, "again", t0);
    t0 = now_ms();
    bad += empties(cq, spin);
    bad += post(300, 1);
    found(cq, "spin", t0);
    t0 = now_ms();
    bad += empties(cq, 1);
    sleep_ms(away);
    bad += post(400, 1);
    found(cq, "away", t0);
    t0 = now_ms();
    sleep_ms(away);
    bad += post(500, 1);
    found(cq, "late", t0);
    bad += empties(cq, 5);
    int rn = ibv_req_notify_cq(cq, 0);
    t0 = now_ms();
    bad += post(600, 1);
    found(cq, "armed", t0);
    t0 = now_ms();
    bad += post(700, 1);
    found(cq, "after", t0);
    bad += empties(cq, 10);
    t0 = now_ms();
    bad += post(800, 3);
    found(cq, "batch", t0);

    /* the extended CQ: its own QP */
    struct ibv_poll_cq_attr pa = {0};
    int ex_empty = 0, ex_n = 0;
    for (int i = 0; i < 20; i++) ex_empty += ibv_start_poll(cqx, &pa) == ENOENT;
    qp = qpx;
    bad += post(900, 2);
    if (ibv_start_poll(cqx, &pa) == 0) {
        do ex_n++;
        while (ibv_next_poll(cqx) == 0);
        ibv_end_poll(cqx);
    }
    printf("case ex wr_id=900 n=%d empty=%d\n", ex_n, ex_empty);
    printf("summary: req_notify=%d failures=%d\n", rn, bad);
    ibv_destroy_qp(qpx);
    ibv_destroy_qp(qps[0]);
    ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
    ibv_destroy_cq(cq);
    ibv_dereg_mr(mr);
    ibv_dealloc_pd(pd);
    ibv_close_device(ctx);
    ibv_free_device_list(devs);
    free(buf);
    return 0;
}
