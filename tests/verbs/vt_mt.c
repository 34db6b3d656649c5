/* Verbs test program (null provider): one context shared by THREADS threads, each with its own CQ and QP,
 * each doing ITERS post+poll rounds, while the main thread keeps registering and deregistering MRs (the MR
 * table's writer racing its lock-free readers).
 *   vt_mt [-t THREADS] [-n ITERS]    prints "summary: sends=S wcs=W" */
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static int iters = 1000;
static volatile int done;

struct th {
    pthread_t t;
    struct ibv_cq *cq;
    struct ibv_qp *qp;
    struct ibv_mr *mr;
    char *buf;
    long wcs;
};

static void *worker(void *arg)
{
    struct th *t = arg;
    struct ibv_wc wc[4];
    for (int i = 0; i < iters; i++) {
        struct ibv_sge sg = {(uintptr_t)t->buf, 128, t->mr->lkey};
        struct ibv_send_wr w = {.wr_id = i,
                                .sg_list = &sg,
                                .num_sge = 1,
                                .opcode = IBV_WR_SEND,
                                .send_flags = IBV_SEND_SIGNALED},
                           *bad;
        ibv_post_send(t->qp, &w, &bad);
        int n;
        while ((n = ibv_poll_cq(t->cq, 4, wc)) == 0) {}
        if (n > 0) t->wcs += n;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int nth = 4, opt;
    while ((opt = getopt(argc, argv, "t:n:")) != -1) {
        if (opt == 't') nth = atoi(optarg);
        else if (opt == 'n') iters = atoi(optarg);
        else return 2;
    }
    struct ibv_device **devs = ibv_get_device_list(NULL);
    ctx = devs && devs[0] ? ibv_open_device(devs[0]) : NULL;
    pd = ctx ? ibv_alloc_pd(ctx) : NULL;
    if (!pd) return 1;
    struct th *ts = calloc(nth, sizeof *ts);
    for (int i = 0; i < nth; i++) {
        ts[i].buf = malloc(4096);
        ts[i].mr = ibv_reg_mr(pd, ts[i].buf, 4096, IBV_ACCESS_LOCAL_WRITE);
        ts[i].cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
        struct ibv_qp_init_attr qa = {.send_cq = ts[i].cq,
                                      .recv_cq = ts[i].cq,
                                      .qp_type = IBV_QPT_RC,
                                      .cap = {.max_send_wr = 256, .max_recv_wr = 16, .max_send_sge = 1}};
        ts[i].qp = ibv_create_qp(pd, &qa);
        if (!ts[i].mr || !ts[i].cq || !ts[i].qp) return 1;
    }
    for (int i = 0; i < nth; i++) pthread_create(&ts[i].t, NULL, worker, &ts[i]);
    char *scratch = malloc(1 << 16);
    int regs = 0;
    for (int i = 0; i < nth; i++) {
        /* churn the MR table while the workers post */
        while (pthread_tryjoin_np(ts[i].t, NULL) != 0) {
            struct ibv_mr *m = ibv_reg_mr(pd, scratch, 1 << 16, IBV_ACCESS_LOCAL_WRITE);
            if (m) ibv_dereg_mr(m), regs++;
        }
    }
    long wcs = 0;
    for (int i = 0; i < nth; i++) wcs += ts[i].wcs;
    printf("summary: sends=%ld wcs=%ld regs=%d\n", (long)nth * iters, wcs, regs > 0);
    return 0;
}
