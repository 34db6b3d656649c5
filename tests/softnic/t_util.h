/* Helpers for the softnic test programs: plain rdma-core calls, loopback QP pairs inside one process
 * (two contexts = two ports), TAP output. */
#ifndef SOFTNIC_T_UTIL_H
#define SOFTNIC_T_UTIL_H

#include <infiniband/verbs.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static __attribute__((unused)) int t_n, t_failed;

static __attribute__((unused)) void t_ok(int cond, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s %d - ", cond ? "ok" : "not ok", ++t_n);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
    if (!cond) t_failed++;
}

static __attribute__((unused)) void t_diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("# ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

static __attribute__((unused)) int t_done(void)
{
    printf("1..%d\n", t_n);
    return t_failed ? 1 : 0;
}

static __attribute__((unused)) double t_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct t_port {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
};

static __attribute__((unused)) void t_die(const char *what)
{
    printf("Bail out! %s: %s\n", what, strerror(errno));
    exit(255);
}

static __attribute__((unused)) void t_port_open(struct t_port *p, int cqe)
{
    int n;
    struct ibv_device **l = ibv_get_device_list(&n);
    if (!l || !n) t_die("no device (LD_LIBRARY_PATH must name the softnic build)");
    if (strncmp(ibv_get_device_name(l[0]), "softnic", 7) && !getenv("SOFTNIC_DEVICE"))
        t_die("first device is not the software test NIC");
    p->ctx = ibv_open_device(l[0]);
    ibv_free_device_list(l);
    if (!p->ctx) t_die("ibv_open_device");
    p->pd = ibv_alloc_pd(p->ctx);
    p->cq = ibv_create_cq(p->ctx, cqe, NULL, NULL, 0);
    if (!p->pd || !p->cq) t_die("pd/cq");
}

struct t_qpopt {
    int depth, rnr_retry, min_rnr_timer;
};

static struct ibv_qp *t_qp(struct t_port *p, struct ibv_cq *cq, int depth)
{
    struct ibv_qp_init_attr a = {
        .send_cq = cq ? cq : p->cq,
        .recv_cq = cq ? cq : p->cq,
        .cap = {.max_send_wr = (uint32_t)depth, .max_recv_wr = (uint32_t)depth, .max_send_sge = 4, .max_recv_sge = 4},
        .qp_type = IBV_QPT_RC,
    };
    struct ibv_qp *qp = ibv_create_qp(p->pd, &a);
    if (!qp) t_die("ibv_create_qp");
    struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT,
                            .port_num = 1,
                            .qp_access_flags =
                                IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE};
    if (ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
        t_die("modify INIT");
    return qp;
}

static __attribute__((unused)) void t_connect(struct ibv_qp *qp, uint32_t dest, int rnr_retry, int min_rnr_timer)
{
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR,
                            .path_mtu = IBV_MTU_4096,
                            .dest_qp_num = dest,
                            .max_dest_rd_atomic = 16,
                            .min_rnr_timer = (uint8_t)min_rnr_timer,
                            .ah_attr = {.dlid = 1, .port_num = 1}};
    if (ibv_modify_qp(qp, &a,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
        t_die("modify RTR");
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = (uint8_t)rnr_retry;
    a.max_rd_atomic = 16;
    if (ibv_modify_qp(qp, &a,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                          IBV_QP_MAX_QP_RD_ATOMIC))
        t_die("modify RTS");
}

/* two QPs on two ports, connected to each other */
static __attribute__((unused)) void t_pair(struct t_port *a, struct t_port *b, int depth, int rnr_retry,
                                           struct ibv_qp **qa, struct ibv_qp **qb)
{
    *qa = t_qp(a, NULL, depth);
    *qb = t_qp(b, NULL, depth);
    t_connect(*qa, (*qb)->qp_num, rnr_retry, 1);
    t_connect(*qb, (*qa)->qp_num, rnr_retry, 1);
}

/* poll until one completion arrives or `secs` pass; returns 1 with *wc filled, 0 on timeout */
static __attribute__((unused)) int t_wait(struct ibv_cq *cq, struct ibv_wc *wc, double secs)
{
    double end = t_now() + secs;
    while (t_now() < end) {
        int n = ibv_poll_cq(cq, 1, wc);
        if (n > 0) return 1;
        if (n < 0) return 0;
    }
    return 0;
}

static __attribute__((unused)) int t_post(struct ibv_qp *qp, enum ibv_wr_opcode op, uint64_t wr_id, void *addr,
                                          uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey, uint32_t imm)
{
    struct ibv_sge sge = {.addr = (uintptr_t)addr, .length = len, .lkey = lkey};
    struct ibv_send_wr wr = {.wr_id = wr_id,
                             .opcode = op,
                             .send_flags = IBV_SEND_SIGNALED,
                             .sg_list = &sge,
                             .num_sge = 1,
                             .imm_data = imm},
                       *bad;
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    return ibv_post_send(qp, &wr, &bad);
}

static __attribute__((unused)) int t_recv(struct ibv_qp *qp, uint64_t wr_id, void *addr, uint32_t len, uint32_t lkey)
{
    struct ibv_sge sge = {.addr = (uintptr_t)addr, .length = len, .lkey = lkey};
    struct ibv_recv_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = addr ? 1 : 0}, *bad;
    return ibv_post_recv(qp, &wr, &bad);
}

#endif
