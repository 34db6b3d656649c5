/* answer_chain: request/response traffic over RC verbs with step marks, for the analyzer's straggler tests on the
 * software NIC (tests/analyzer/straggler_answers.t). Every rank but rank 0 can send only what it received.
 *
 *   answer_chain -n PROCS -s SIZE -i ITERS [-q] [-l RANK -w MS] [-b BULK] [-e]
 *
 * Every iteration starts with railscope_mark("step N", N). Rank 0 writes SIZE bytes (RDMA WRITE_WITH_IMM) to rank 1,
 * rank 1 waits for them and writes to rank 2, ..., the last rank writes back to rank 0, and rank 0 waits for that
 * before its next step: a token passed around, or with 2 ranks a ping-pong. Each rank sends on one QP (to its right)
 * and receives on another (from its left), so the sends are answers without being round trips on one QP; -q
 * (2 ranks only) answers on the QP the request came in on instead: a plain ping-pong.
 * -l RANK -w MS: rank RANK (not 0) sleeps MS ms after its step mark, before it looks for the message (a rank
 * waiting for its input pipeline, say): it is late on its own (the message landed while it slept), the planted
 * straggler. A sleep, not a spin: on a software NIC a spinning rank can starve its own NIC threads on a small host,
 * and the message then lands when the spin ends (the sender's send completes only then), as if the rank had
 * been waiting for it.
 * -b BULK: rank 0 also streams BULK-byte RDMA WRITEs to the last rank, one outstanding at a time from its first step
 * to its last, through a second port on each side (the software NIC sends a port's frames one after another: on the
 * token's port the stream would hold the token back): traffic nobody waits for, so another rank is always sending
 * when a rank polls its message (tests/analyzer/answer_stream.t).
 * -e: every rank but rank 0 waits for its completions in ibv_get_cq_event instead of polling (its CQ on a completion
 * channel, as ibv_rc_pingpong -e: wait for the event, acknowledge it, re-arm the CQ, poll it once;
 * tests/softnic/answer_events.t).
 * Each rank prints, per iteration, when it posted its data send, when it polled the message it forwards and when it
 * polled its send's completion, and since when it had been waiting for that message when it came (look: its last
 * wait for an event, or its last poll, before the one that found it; CLOCK_MONOTONIC ms, shared by the ranks). */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "examples/ex_common.h"

#define DEPTH 16

struct chain {
    struct ex_dev d;
    struct ibv_qp *ql, *qr; /* from the left, to the right (-q: one QP, both) */
    struct ibv_mr *mr;
    char *buf;
    struct ex_peer_info right;
    int got, outstanding;
    struct ibv_comp_channel *ch; /* -e: the CQ's completion channel (NULL: busy-polling) */
    double done;                 /* ex_now() when the last send completion was polled */
    /* ex_now() when the rank last began to wait (-e) or poll for its completions, and that time as it was when the
     * message came in: since then the rank was waiting for it (the truth of "there to answer" by its own clock) */
    double wait_at, msg_wait_at;
    /* -b: the stream's port, QP, buffer and peer; bulk_out: a write outstanding; bulk_stop: post no more */
    struct ex_dev bd;
    struct ibv_qp *bq;
    struct ibv_mr *bmr;
    char *bbuf;
    struct ex_peer_info bpeer;
    size_t bulk;
    int bulk_out, bulk_stop;
};

static int post_bulk(struct chain *g)
{
    struct ibv_sge sge = {.addr = (uintptr_t)g->bbuf, .length = (uint32_t)g->bulk, .lkey = g->bmr->lkey};
    struct ibv_send_wr wr = {.opcode = IBV_WR_RDMA_WRITE,
                             .send_flags = IBV_SEND_SIGNALED,
                             .sg_list = &sge,
                             .num_sge = 1,
                             .wr.rdma = {.remote_addr = g->bpeer.addr, .rkey = g->bpeer.rkey}},
                       *bad;
    g->bulk_out = 1;
    return ibv_post_send(g->bq, &wr, &bad);
}

/* the stream (rank 0 with -b): the next write when the last one completed */
static int bulk_progress(struct chain *g)
{
    struct ibv_wc wc;
    int n = g->bulk_out ? ibv_poll_cq(g->bd.cq, 1, &wc) : 0;
    if (n < 0 || (n && wc.status != IBV_WC_SUCCESS)) {
        fprintf(stderr, "stream completion error: %s\n", n < 0 ? "poll" : ibv_wc_status_str(wc.status));
        return -1;
    }
    if (n) g->bulk_out = 0;
    return !g->bulk_out && !g->bulk_stop ? post_bulk(g) : 0;
}

static int post_recv(struct ibv_qp *qp)
{
    struct ibv_recv_wr wr = {.wr_id = qp->qp_num}, *bad;
    return ibv_post_recv(qp, &wr, &bad);
}

/* -e: block until the CQ's next event, then re-arm it (what comes after the arming raises another event; what came
 * before it is found by the poll that follows) */
static int wait_event(struct chain *g)
{
    struct ibv_cq *cq;
    void *ctx;
    if (ibv_get_cq_event(g->ch, &cq, &ctx)) return -1;
    ibv_ack_cq_events(cq, 1);
    return ibv_req_notify_cq(cq, 0);
}

static int progress(struct chain *g)
{
    struct ibv_wc wc[8];
    if (g->bq && bulk_progress(g)) return -1;
    g->wait_at = ex_now();
    if (g->ch && wait_event(g)) return -1;
    int n = ibv_poll_cq(g->d.cq, 8, wc);
    if (n < 0) return -1;
    for (int i = 0; i < n; i++) {
        if (wc[i].status != IBV_WC_SUCCESS) {
            fprintf(stderr, "completion error: %s\n", ibv_wc_status_str(wc[i].status));
            return -1;
        }
        if (wc[i].opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
            g->got++;
            g->msg_wait_at = g->wait_at;
            if (post_recv(g->ql)) return -1;
        } else {
            g->outstanding--;
            g->done = ex_now();
        }
    }
    return 0;
}

static int send_right(struct chain *g, size_t size, uint32_t it)
{
    struct ibv_sge sge = {.addr = (uintptr_t)g->buf, .length = (uint32_t)size, .lkey = g->mr->lkey};
    struct ibv_send_wr wr = {.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
                             .send_flags = IBV_SEND_SIGNALED,
                             .sg_list = &sge,
                             .num_sge = 1,
                             .imm_data = htonl(it),
                             .wr.rdma = {.remote_addr = g->right.addr, .rkey = g->right.rkey}},
                       *bad;
    g->outstanding++;
    return ibv_post_send(g->qr, &wr, &bad);
}

static int wait_msg(struct chain *g, double *when, double *look)
{
    while (!g->got)
        if (progress(g)) return -1;
    *when = ex_now();
    *look = g->msg_wait_at * 1e3;
    g->got--;
    return 0;
}

static void sleep_ms(double ms)
{
    struct timespec ts = {.tv_sec = (time_t)(ms / 1e3),
                          .tv_nsec = (long)((ms - 1e3 * (double)(time_t)(ms / 1e3)) * 1e6)};
    while (nanosleep(&ts, &ts) && errno == EINTR) continue;
}

/* -b: the stream's second port on rank 0 (the writer, g->bq set) and on the last rank (the target: its QP only
 * answers) */
static int bulk_open(struct chain *g, struct ex_rank *r, size_t bulk)
{
    int rank = r->rank, last = r->world - 1;
    g->bulk = bulk;
    g->bbuf = aligned_alloc(4096, (bulk + 4095) / 4096 * 4096);
    if (!g->bbuf || ex_open(&g->bd, 4 * DEPTH)) return 1;
    memset(g->bbuf, rank + 1, bulk);
    g->bmr = ibv_reg_mr(g->bd.pd, g->bbuf, bulk, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    struct ibv_qp *qp = g->bmr ? ex_qp(&g->bd, DEPTH) : NULL;
    if (!qp) return 1;
    ex_info(&g->bd, qp, g->bmr, &r->sh->info[rank][2]);
    ex_barrier(r);
    g->bpeer = r->sh->info[rank ? 0 : last][2];
    if (ex_connect(&g->bd, qp, &g->bpeer)) return 1;
    if (!rank) g->bq = qp;
    return 0;
}

static int run_rank(struct ex_rank *r, size_t size, int iters, int oneqp, int late, double work_ms, size_t bulk,
                    int events)
{
    int rank = r->rank, world = r->world;
    struct chain g;
    memset(&g, 0, sizeof g);
    g.buf = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
    if (!g.buf || ex_open(&g.d, 4 * DEPTH)) return 1;
    if (events && rank) { /* the CQ again, on a completion channel, armed */
        if (!(g.ch = ibv_create_comp_channel(g.d.ctx)) || ibv_destroy_cq(g.d.cq) ||
            !(g.d.cq = ibv_create_cq(g.d.ctx, 4 * DEPTH, NULL, g.ch, 0)) || ibv_req_notify_cq(g.d.cq, 0))
            return 1;
    }
    memset(g.buf, rank + 1, size);
    g.mr = ibv_reg_mr(g.d.pd, g.buf, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    g.ql = ex_qp(&g.d, DEPTH);
    g.qr = oneqp ? g.ql : ex_qp(&g.d, DEPTH);
    if (!g.mr || !g.ql || !g.qr) return 1;
    ex_info(&g.d, g.ql, g.mr, &r->sh->info[rank][0]);
    ex_info(&g.d, g.qr, g.mr, &r->sh->info[rank][1]);
    ex_barrier(r);
    int left = (rank - 1 + world) % world, right = (rank + 1) % world;
    if (oneqp) { /* 2 ranks, one QP each: left == right */
        g.right = r->sh->info[right][0];
        if (ex_connect(&g.d, g.ql, &g.right)) return 1;
    } else {
        g.right = r->sh->info[right][0];
        if (ex_connect(&g.d, g.ql, &r->sh->info[left][1]) || ex_connect(&g.d, g.qr, &g.right)) return 1;
    }
    for (int i = 0; i < DEPTH; i++)
        if (post_recv(g.ql)) return 1;
    if (bulk && (rank == 0 || rank == world - 1)) {
        if (bulk_open(&g, r, bulk)) return 1;
    } else if (bulk) ex_barrier(r); /* bulk_open's */
    ex_barrier(r);
    void (*mark)(const char *, uint64_t) = (void (*)(const char *, uint64_t))dlsym(RTLD_DEFAULT, "railscope_mark");
    double *sent = calloc((size_t)iters, sizeof *sent), *got = calloc((size_t)iters, sizeof *got),
           *done = calloc((size_t)iters, sizeof *done), *look = calloc((size_t)iters, sizeof *look);
    for (int it = 0; it < iters; it++) {
        if (mark) {
            char name[32];
            snprintf(name, sizeof name, "step %d", it);
            mark(name, (uint64_t)it);
        }
        if (rank == late) sleep_ms(work_ms); /* the planted straggler: away before it looks for the message */
        if (rank && wait_msg(&g, &got[it], &look[it])) return 1;
        sent[it] = ex_now() * 1e3;
        got[it] *= 1e3;
        if (send_right(&g, size, (uint32_t)it)) return 1;
        double t;
        if (!rank && wait_msg(&g, &t, &look[it])) return 1;
        while (g.outstanding) /* the send done before the next step's mark */
            if (progress(&g)) return 1;
        done[it] = g.done * 1e3;
    }
    g.bulk_stop = 1;
    while (g.bulk_out) /* the stream's last write done before the end */
        if (bulk_progress(&g)) return 1;
    ex_barrier(r);
    printf("rank %d: sent ms:", rank);
    for (int i = 0; i < iters; i++) printf(" %.4f", sent[i]);
    printf("\nrank %d: got ms:", rank);
    for (int i = 0; i < iters; i++) printf(" %.4f", got[i]);
    printf("\nrank %d: done ms:", rank);
    for (int i = 0; i < iters; i++) printf(" %.4f", done[i]);
    printf("\nrank %d: look ms:", rank);
    for (int i = 0; i < iters; i++) printf(" %.4f", look[i]);
    printf("\n");
    fflush(stdout);
    ex_barrier(r);
    return 0;
}

int main(int argc, char **argv)
{
    int procs = 3, iters = 20, late = -1, oneqp = 0, events = 0, c;
    double work_ms = 5;
    size_t size = 64 << 10, bulk = 0;
    while ((c = getopt(argc, argv, "n:s:i:l:w:qb:e")) != -1) {
        switch (c) {
        case 'n': procs = atoi(optarg); break;
        case 's': size = ex_size(optarg); break;
        case 'i': iters = atoi(optarg); break;
        case 'l': late = atoi(optarg); break;
        case 'w': work_ms = atof(optarg); break;
        case 'q': oneqp = 1; break;
        case 'b': bulk = ex_size(optarg); break;
        case 'e': events = 1; break;
        default:
            fprintf(stderr, "usage: %s -n PROCS -s SIZE -i ITERS [-q] [-l RANK -w MS] [-b BULK] [-e]\n", argv[0]);
            return 2;
        }
    }
    if (procs < 2 || (oneqp && procs != 2) || late == 0) {
        fprintf(stderr, "answer_chain: 2 ranks or more, -q with 2 only, -l not rank 0\n");
        return 2;
    }
    struct ex_rank r;
    int rc = ex_launch(procs, argc, argv, &r);
    if (rc >= 0) return rc;
    return run_rank(&r, size, iters, oneqp, late, work_ms, bulk, events);
}
