/* Verbs test program (runs on the null provider, tests/verbs/nullprov.c): the classic API through the
 * verbs.h inlines, as an application links it. Prints what the application sees — return values, errno,
 * bad_wr, completions — deterministically, so that runs with and without the tracer can be compared, and a
 * summary of what it did so the trace can be checked against it.
 *
 *   vt_basic [-n ITERS] [-c CONTEXTS] [-e MS] [-w ROUNDS]
 * Per context: ITERS signaled SENDs (each consuming a posted receive), ITERS unsignaled RDMA WRITEs from
 * mlocked memory plus one signaled, one SEND that completes in error, a 3-WR list whose second WR is
 * refused (bad_wr), EMPTY=100 empty polls; with -e MS, then MS milliseconds of empty polls on the recv CQ
 * of the first context (prints how many); with -w ROUNDS, ROUNDS times an event-driven pattern on the
 * send CQ of the first context: post, poll until the completion, one more (empty) poll, sleep 2 ms
 * (standing in for the wait for a completion event), re-arm with ibv_req_notify_cq.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BAD_LKEY 0xdeadu
#define EMPTY    100

static int drain(struct ibv_cq *cq, int want, int *errors, const char *what)
{
    struct ibv_wc wc[16];
    int got = 0, spins = 0;
    while (got < want && spins < 1000000) {
        int n = ibv_poll_cq(cq, 16, wc);
        if (n < 0) {
            printf("%s: poll_cq failed %d\n", what, n);
            return got;
        }
        spins++;
        for (int i = 0; i < n; i++) {
            if (wc[i].status != IBV_WC_SUCCESS) {
                (*errors)++;
                printf("%s: wc wr_id=%llu status=%d (%s) opcode=%d\n", what, (unsigned long long)wc[i].wr_id,
                       wc[i].status, ibv_wc_status_str(wc[i].status), wc[i].opcode);
            }
        }
        got += n;
    }
    return got;
}

/* One context's objects, and what the program did over all contexts. */
struct conn {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    size_t sz;
    char *hbuf, *lbuf; /* plain host memory; mlocked memory */
    int locked;
    struct ibv_mr *hmr, *lmr;
    struct ibv_cq *scq, *rcq;
    struct ibv_qp *qp;
};
struct totals {
    long sends, recvs, wcs;
    int errors; /* error completions */
};

/* Open device k, register both buffers, create the CQs and an RC QP looped back to itself, up to RTS. */
static int conn_open(struct conn *c, struct ibv_device *dev, int k)
{
    c->ctx = ibv_open_device(dev);
    if (!c->ctx) return -1;
    c->pd = ibv_alloc_pd(c->ctx);
    c->sz = 1 << 16;
    c->hbuf = malloc(c->sz);
    c->lbuf = mmap(NULL, c->sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (!c->hbuf || c->lbuf == MAP_FAILED) return -1;
    /* the syscall, not mlock(): ASan/TSan intercept mlock() as a no-op returning 0 */
    c->locked = syscall(SYS_mlock, c->lbuf, c->sz) == 0;
    c->hmr = ibv_reg_mr(c->pd, c->hbuf, c->sz, IBV_ACCESS_LOCAL_WRITE);
    c->lmr = ibv_reg_mr(c->pd, c->lbuf, c->sz, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    c->scq = ibv_create_cq(c->ctx, 4096, NULL, NULL, 0);
    c->rcq = ibv_create_cq(c->ctx, 4096, NULL, NULL, 0);
    struct ibv_qp_init_attr qa = {
        .send_cq = c->scq,
        .recv_cq = c->rcq,
        .qp_type = IBV_QPT_RC,
        .cap = {.max_send_wr = 4096, .max_recv_wr = 4096, .max_send_sge = 1, .max_recv_sge = 1}};
    c->qp = ibv_create_qp(c->pd, &qa);
    if (!c->pd || !c->hmr || !c->lmr || !c->scq || !c->rcq || !c->qp) return -1;
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1};
    ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_PORT);
    a.qp_state = IBV_QPS_RTR;
    a.dest_qp_num = c->qp->qp_num;
    a.path_mtu = IBV_MTU_1024;
    ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_DEST_QPN | IBV_QP_PATH_MTU);
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;
    a.retry_cnt = 7;
    ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT);
    printf("ctx %d: %s qp ok, mlock %s\n", k, ibv_get_device_name(dev), c->locked ? "ok" : "failed");
    return 0;
}

static void conn_close(struct conn *c)
{
    ibv_destroy_qp(c->qp);
    ibv_destroy_cq(c->scq);
    ibv_destroy_cq(c->rcq);
    ibv_dereg_mr(c->hmr);
    ibv_dereg_mr(c->lmr);
    ibv_dealloc_pd(c->pd);
    ibv_close_device(c->ctx);
    munmap(c->lbuf, c->sz);
    free(c->hbuf);
}

/* Receives, then signaled sends consuming them. */
static void sends_and_recvs(struct conn *c, int iters, struct totals *t)
{
    for (int i = 0; i < iters; i++) {
        struct ibv_sge sg = {(uintptr_t)c->hbuf + 4096, 256, c->hmr->lkey};
        struct ibv_recv_wr rw = {.wr_id = 1000 + i, .sg_list = &sg, .num_sge = 1}, *bad = NULL;
        int r = ibv_post_recv(c->qp, &rw, &bad);
        if (r) printf("post_recv %d -> %d\n", i, r);
        t->recvs++;
    }
    for (int i = 0; i < iters; i++) {
        struct ibv_sge sg = {(uintptr_t)c->hbuf, 64 + i, c->hmr->lkey};
        struct ibv_send_wr w = {.wr_id = i,
                                .sg_list = &sg,
                                .num_sge = 1,
                                .opcode = IBV_WR_SEND,
                                .send_flags = IBV_SEND_SIGNALED},
                           *bad = NULL;
        int r = ibv_post_send(c->qp, &w, &bad);
        if (r) printf("post_send %d -> %d\n", i, r);
        t->sends++;
    }
    t->wcs += drain(c->scq, iters, &t->errors, "send");
    t->wcs += drain(c->rcq, iters, &t->errors, "recv");
}

/* Unsignaled RDMA writes from mlocked memory, the last one signaled. */
static void rdma_writes(struct conn *c, int iters, struct totals *t)
{
    for (int i = 0; i <= iters; i++) {
        struct ibv_sge sg = {(uintptr_t)c->lbuf, 4096, c->lmr->lkey};
        struct ibv_send_wr w = {.wr_id = 5000 + i,
                                .sg_list = &sg,
                                .num_sge = 1,
                                .opcode = IBV_WR_RDMA_WRITE,
                                .send_flags = i == iters ? IBV_SEND_SIGNALED : 0,
                                .wr.rdma = {.remote_addr = 0x10000 + i, .rkey = c->lmr->rkey}},
                           *bad = NULL;
        ibv_post_send(c->qp, &w, &bad);
        t->sends++;
    }
    t->wcs += drain(c->scq, 1, &t->errors, "write");
}

/* An error completion; a single WR the provider refuses (the tracer fills a single WR's event before the
 * call); a list whose second WR the provider refuses. */
static void failures(struct conn *c, struct totals *t)
{
    {
        struct ibv_sge sg = {(uintptr_t)c->hbuf, 8, BAD_LKEY};
        struct ibv_send_wr w = {.wr_id = 7777,
                                .sg_list = &sg,
                                .num_sge = 1,
                                .opcode = IBV_WR_SEND,
                                .send_flags = IBV_SEND_SIGNALED},
                           *bad = NULL;
        ibv_post_send(c->qp, &w, &bad);
        t->sends++;
        t->wcs += drain(c->scq, 1, &t->errors, "error");
    }
    {
        struct ibv_sge sg = {(uintptr_t)c->hbuf, 8, c->hmr->lkey};
        struct ibv_send_wr w = {.wr_id = 9100, .sg_list = &sg, .num_sge = 1, .opcode = (enum ibv_wr_opcode)99},
                           *bad = NULL;
        errno = 0;
        int r = ibv_post_send(c->qp, &w, &bad);
        int en = errno;
        printf("single post: ret=%d errno=%d bad_wr=%s\n", r, en, bad == &w ? "wr" : bad ? "other" : "NULL");
        t->sends++;
    }
    {
        struct ibv_sge sg = {(uintptr_t)c->hbuf, 8, c->hmr->lkey};
        struct ibv_send_wr w[3], *bad = NULL;
        memset(w, 0, sizeof w);
        for (int i = 0; i < 3; i++) {
            w[i].wr_id = 9000 + i;
            w[i].sg_list = &sg;
            w[i].num_sge = 1;
            w[i].opcode = i == 1 ? (enum ibv_wr_opcode)99 : IBV_WR_SEND;
            w[i].next = i < 2 ? &w[i + 1] : NULL;
        }
        errno = 0;
        int r = ibv_post_send(c->qp, w, &bad);
        int en = errno;
        printf("list post: ret=%d errno=%d bad_wr=%ld\n", r, en, bad ? (long)(bad - w) : -1L);
        t->sends += 3;
    }
}

/* EMPTY empty polls; with spin_ms, that long polling the empty recv CQ (-e). Returns the non-empty count. */
static int empty_polls(struct conn *c, int spin_ms)
{
    struct ibv_wc wc;
    int nonempty = 0;
    for (int i = 0; i < EMPTY; i++) nonempty += ibv_poll_cq(c->scq, 1, &wc) != 0;
    printf("empty polls: %d, non-empty %d\n", EMPTY, nonempty);
    if (!spin_ms) return nonempty;
    struct timespec a0, a1;
    long spins = 0;
    clock_gettime(CLOCK_MONOTONIC, &a0);
    for (;;) {
        for (int i = 0; i < 1024; i++) nonempty += ibv_poll_cq(c->rcq, 1, &wc) != 0;
        spins += 1024;
        clock_gettime(CLOCK_MONOTONIC, &a1);
        if ((a1.tv_sec - a0.tv_sec) * 1000 + (a1.tv_nsec - a0.tv_nsec) / 1000000 >= spin_ms) break;
    }
    printf("spin: %ld empty polls in %d ms, non-empty %d\n", spins, spin_ms, nonempty);
    return nonempty;
}

/* The event-driven pattern (-w): post, poll until the completion, one more (empty) poll, a 2 ms pause
 * standing in for the wait for a completion event, re-arm. */
static void event_rounds(struct conn *c, int waits)
{
    struct ibv_wc wc;
    for (int r = 0; r < waits; r++) {
        struct ibv_sge sg = {(uintptr_t)c->hbuf, 8, c->hmr->lkey};
        struct ibv_send_wr w = {.wr_id = 20000 + r,
                                .sg_list = &sg,
                                .num_sge = 1,
                                .opcode = IBV_WR_RDMA_WRITE,
                                .send_flags = IBV_SEND_SIGNALED},
                           *bad;
        ibv_post_send(c->qp, &w, &bad);
        while (ibv_poll_cq(c->scq, 1, &wc) == 0) {}
        ibv_poll_cq(c->scq, 1, &wc); /* drains: empty */
        usleep(2000);
        ibv_req_notify_cq(c->scq, 0);
    }
    if (waits) printf("waits: %d\n", waits);
}

int main(int argc, char **argv)
{
    int iters = 10, nctx = 1, spin_ms = 0, waits = 0, opt;
    while ((opt = getopt(argc, argv, "n:c:e:w:")) != -1) {
        if (opt == 'e') spin_ms = atoi(optarg);
        else if (opt == 'w') waits = atoi(optarg);
        else if (opt == 'n') iters = atoi(optarg);
        else if (opt == 'c') nctx = atoi(optarg);
        else return 2;
    }
    int ndev = 0;
    struct ibv_device **devs = ibv_get_device_list(&ndev);
    if (!devs || ndev < nctx) {
        printf("no devices (%d)\n", ndev);
        return 1;
    }
    struct totals t = {0, 0, 0, 0};
    for (int k = 0; k < nctx; k++) {
        struct conn c;
        if (conn_open(&c, devs[k], k)) return 1;
        sends_and_recvs(&c, iters, &t);
        rdma_writes(&c, iters, &t);
        failures(&c, &t);
        empty_polls(&c, k == 0 ? spin_ms : 0);
        if (k == 0) event_rounds(&c, waits);
        conn_close(&c);
    }
    ibv_free_device_list(devs);
    printf("summary: contexts=%d sends=%ld recvs=%ld wcs=%ld errors=%ld\n", nctx, t.sends, t.recvs, t.wcs,
           (long)t.errors);
    return 0;
}
