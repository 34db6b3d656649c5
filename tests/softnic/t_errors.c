/* softnic error paths: bad keys, bounds, access rights, RNR, short receives, wrong states, destroy
 * while busy.  Each case must end in the right error completion (or return code) — never a hang. */
#include "t_util.h"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static struct t_port A, B;
static char *abuf, *bbuf;
static struct ibv_mr *amr, *bmr, *b_ro, *b_wo;
static int rw; /* access rights of the data MRs */
#define SZ (1 << 20)

static int expect(struct ibv_cq *cq, enum ibv_wc_status st, uint64_t wr_id, const char *what)
{
    struct ibv_wc wc;
    int got = t_wait(cq, &wc, 5);
    int good = got && wc.status == st && wc.wr_id == wr_id;
    t_ok(good, "softnic: %s -> %s", what, ibv_wc_status_str(st));
    if (!good)
        t_diag("got %s, status %s, wr_id %llu", got ? "a completion" : "nothing",
               got ? ibv_wc_status_str(wc.status) : "-", got ? (unsigned long long)wc.wr_id : 0ull);
    return good;
}

static void drain(void)
{
    struct ibv_wc wc[16];
    usleep(20000);
    while (ibv_poll_cq(A.cq, 16, wc) > 0 || ibv_poll_cq(B.cq, 16, wc) > 0)
        ;
}

/* two devices, the data buffers and their MRs (one read-only and one write-only slice of B's) */
static void setup(void)
{
    t_port_open(&A, 4096);
    t_port_open(&B, 4096);
    abuf = calloc(1, SZ);
    bbuf = calloc(1, SZ);
    rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    amr = ibv_reg_mr(A.pd, abuf, SZ, rw);
    bmr = ibv_reg_mr(B.pd, bbuf, SZ / 2, rw);
    b_ro = ibv_reg_mr(B.pd, bbuf + SZ / 2, SZ / 4, IBV_ACCESS_REMOTE_READ);
    b_wo = ibv_reg_mr(B.pd, bbuf + SZ / 2 + SZ / 4, SZ / 4, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!amr || !bmr || !b_ro || !b_wo) t_die("reg_mr");
}

/* cases 1-4: remote and local access errors */
static void remote_access_errors(void)
{
    struct ibv_qp *qa, *qb;

    /* 1. bad rkey; the next WR is flushed */
    t_pair(&A, &B, 16, 7, &qa, &qb);
    t_post(qa, IBV_WR_RDMA_WRITE, 1, abuf, 4096, amr->lkey, (uintptr_t)bbuf, bmr->rkey ^ 0x5500, 0);
    t_post(qa, IBV_WR_RDMA_WRITE, 2, abuf, 4096, amr->lkey, (uintptr_t)bbuf, bmr->rkey, 0);
    expect(A.cq, IBV_WC_REM_ACCESS_ERR, 1, "RDMA WRITE with a bad rkey");
    expect(A.cq, IBV_WC_WR_FLUSH_ERR, 2, "the WR behind it is flushed");
    struct ibv_qp_attr qa_attr;
    struct ibv_qp_init_attr ia;
    ibv_query_qp(qa, &qa_attr, IBV_QP_STATE, &ia);
    t_ok(qa_attr.qp_state == IBV_QPS_ERR, "softnic: requester QP is in ERR after a remote access error");
    t_ok(t_post(qa, IBV_WR_RDMA_WRITE, 3, abuf, 8, amr->lkey, (uintptr_t)bbuf, bmr->rkey, 0) == 0,
         "softnic: posting to an ERR QP is accepted...");
    expect(A.cq, IBV_WC_WR_FLUSH_ERR, 3, "...and completes as flushed");
    ibv_destroy_qp(qa);
    ibv_destroy_qp(qb);
    drain();

    /* 2. out of bounds: the last byte lies past the MR */
    t_pair(&A, &B, 16, 7, &qa, &qb);
    t_post(qa, IBV_WR_RDMA_WRITE, 10, abuf, 4096, amr->lkey, (uintptr_t)bbuf + SZ / 2 - 4095, bmr->rkey, 0);
    expect(A.cq, IBV_WC_REM_ACCESS_ERR, 10, "RDMA WRITE one byte past the end of the remote MR");
    ibv_destroy_qp(qa);
    ibv_destroy_qp(qb);
    drain();

    /* 3. access rights: WRITE to a read-only MR, READ from a write-only MR */
    t_pair(&A, &B, 16, 7, &qa, &qb);
    t_post(qa, IBV_WR_RDMA_WRITE, 20, abuf, 64, amr->lkey, (uintptr_t)b_ro->addr, b_ro->rkey, 0);
    expect(A.cq, IBV_WC_REM_ACCESS_ERR, 20, "RDMA WRITE into an MR without REMOTE_WRITE");
    ibv_destroy_qp(qa);
    ibv_destroy_qp(qb);
    t_pair(&A, &B, 16, 7, &qa, &qb);
    t_post(qa, IBV_WR_RDMA_READ, 21, abuf, 64, amr->lkey, (uintptr_t)b_wo->addr, b_wo->rkey, 0);
    expect(A.cq, IBV_WC_REM_ACCESS_ERR, 21, "RDMA READ from an MR without REMOTE_READ");
    ibv_destroy_qp(qa);
    ibv_destroy_qp(qb);
    drain();

    /* 4. bad lkey on the local side */
    t_pair(&A, &B, 16, 7, &qa, &qb);
    t_post(qa, IBV_WR_RDMA_WRITE, 30, abuf, 64, amr->lkey + 0x100, (uintptr_t)bbuf, bmr->rkey, 0);
    expect(A.cq, IBV_WC_LOC_PROT_ERR, 30, "RDMA WRITE from a bad lkey");
    ibv_destroy_qp(qa);
    ibv_destroy_qp(qb);
    drain();
}

/* cases 5-7: receiver not ready, receive too small */
static void rnr_and_short_receive(void)
{
    struct ibv_qp *qa, *qb;

    /* 5. RNR: no receive posted, rnr_retry 1 with a 10 us timer */
    t_pair(&A, &B, 16, 1, &qa, &qb);
    double t0 = t_now();
    t_post(qa, IBV_WR_SEND, 40, abuf, 128, amr->lkey, 0, 0, 0);
    expect(A.cq, IBV_WC_RNR_RETRY_EXC_ERR, 40, "SEND with no receive posted (rnr_retry 1)");
    t_ok(t_now() - t0 < 2, "softnic: RNR error arrives promptly (%.3f s)", t_now() - t0);
    ibv_destroy_qp(qa);
    ibv_destroy_qp(qb);
    drain();

    /* 6. RNR with rnr_retry 7 waits for the receive and then delivers the data intact */
    t_pair(&A, &B, 16, 7, &qa, &qb);
    for (int i = 0; i < 128; i++) abuf[i] = (char)(i * 3 + 1);
    memset(bbuf, 0, 128);
    t_post(qa, IBV_WR_SEND, 50, abuf, 128, amr->lkey, 0, 0, 0);
    usleep(50000);
    struct ibv_wc wc;
    t_ok(ibv_poll_cq(A.cq, 1, &wc) == 0, "softnic: SEND waits (RNR retry forever) while no receive is posted");
    t_recv(qb, 51, bbuf, 4096, bmr->lkey);
    expect(A.cq, IBV_WC_SUCCESS, 50, "the SEND completes once a receive is posted");
    expect(B.cq, IBV_WC_SUCCESS, 51, "the receive completes");
    t_ok(memcmp(abuf, bbuf, 128) == 0, "softnic: data delivered after RNR is intact");
    ibv_destroy_qp(qa);
    ibv_destroy_qp(qb);
    drain();

    /* 7. receive buffer too small */
    t_pair(&A, &B, 16, 7, &qa, &qb);
    t_recv(qb, 61, bbuf, 100, bmr->lkey);
    t_post(qa, IBV_WR_SEND, 60, abuf, 4096, amr->lkey, 0, 0, 0);
    expect(A.cq, IBV_WC_REM_INV_REQ_ERR, 60, "SEND larger than the posted receive (sender)");
    expect(B.cq, IBV_WC_LOC_LEN_ERR, 61, "SEND larger than the posted receive (receiver)");
    ibv_destroy_qp(qa);
    ibv_destroy_qp(qb);
    drain();
}

/* case 8: wrong QP state, too many SGEs, flush on ERR */
static void wrong_state(void)
{
    /* 8. wrong state: posting a send on an INIT QP fails synchronously */
    struct ibv_qp *qi = t_qp(&A, NULL, 4);
    t_ok(t_post(qi, IBV_WR_SEND, 70, abuf, 8, amr->lkey, 0, 0, 0) == EINVAL,
         "softnic: ibv_post_send on an INIT QP returns EINVAL");
    ibv_destroy_qp(qi);
    qi = t_qp(&A, NULL, 4);
    {
        struct ibv_qp *qx, *qy;
        t_pair(&A, &B, 4, 7, &qx, &qy);
        struct ibv_sge sg[5];
        for (int i = 0; i < 5; i++) sg[i] = (struct ibv_sge){(uintptr_t)abuf, 8, amr->lkey};
        struct ibv_send_wr wr = {.wr_id = 72, .opcode = IBV_WR_SEND, .sg_list = sg, .num_sge = 5}, *bad = NULL;
        t_ok(ibv_post_send(qx, &wr, &bad) == EINVAL && bad == &wr,
             "softnic: more SGEs than max_send_sge -> EINVAL with bad_wr set");
        ibv_destroy_qp(qx);
        ibv_destroy_qp(qy);
    }
    /* moving to ERR flushes posted receives */
    t_recv(qi, 71, abuf, 64, amr->lkey);
    struct ibv_qp_attr ea = {.qp_state = IBV_QPS_ERR};
    ibv_modify_qp(qi, &ea, IBV_QP_STATE);
    expect(A.cq, IBV_WC_WR_FLUSH_ERR, 71, "modify to ERR flushes a posted receive");
    ibv_destroy_qp(qi);
}

/* case 9: QPs destroyed with work in flight */
static void destroy_while_busy(void)
{
    struct ibv_qp *qa, *qb;
    double t0;

    /* 9. destroy while busy: many large writes in flight, then destroy both ends */
    t_pair(&A, &B, 256, 7, &qa, &qb);
    for (int i = 0; i < 200; i++)
        t_post(qa, IBV_WR_RDMA_WRITE, 100 + (uint64_t)i, abuf, SZ / 2, amr->lkey, (uintptr_t)bbuf, bmr->rkey, 0);
    t0 = t_now();
    int r1 = ibv_destroy_qp(qb); /* the responder vanishes first */
    struct ibv_wc w2;
    /* 20 s, not 5: once in a clean-clone suite run (session 17, 2 test files at once on 2 cores) no completion
     * came within 5 s. Two causes, both reproduced with the case repeated beside busy loops (session 18): a
     * connection the responder's RX accepted while the destroy ran was never closed, so the requester's writes
     * waited forever (a softnic race, fixed, case 9b); and a destroy that started late (this thread descheduled)
     * or ran long (its drain of owed ACKs) while the stream went on: all 200 writes were acknowledged first, and
     * then no error is due. So: every write acknowledged, or an error completion; the time it took is printed */
    int nok = 0, got = 0;
    while (nok < 200 && (got = t_wait(A.cq, &w2, 20)) && w2.status == IBV_WC_SUCCESS) nok++;
    int errored = nok < 200 && got && w2.status != IBV_WC_SUCCESS;
    /* "N writes done": the phrase tests/hardening/transparency_softnic.t normalises */
    t_ok(r1 == 0 && (nok == 200 || errored),
         "softnic: responder destroyed under load -> requester gets an error completion (%s, after %.3f s, %d writes "
         "done)",
         nok == 200 ? "all 200 delivered first: none due"
         : got      ? ibv_wc_status_str(w2.status)
                    : "none",
         t_now() - t0, nok);
    double t1 = t_now();
    int r2 = ibv_destroy_qp(qa);
    t_ok(r2 == 0 && t_now() - t1 < 5, "softnic: destroying a busy QP returns promptly (%.3f s)", t_now() - t1);
    drain();
    t_pair(&A, &B, 256, 7, &qa, &qb);
    for (int i = 0; i < 200; i++)
        t_post(qa, IBV_WR_RDMA_WRITE, 400 + (uint64_t)i, abuf, SZ / 2, amr->lkey, (uintptr_t)bbuf, bmr->rkey, 0);
    t0 = t_now();
    r1 = ibv_destroy_qp(qa); /* the requester vanishes with WRs in flight */
    r2 = ibv_destroy_qp(qb);
    t_ok(r1 == 0 && r2 == 0 && t_now() - t0 < 5, "softnic: requester destroyed with 200 WRs in flight (%.3f s)",
         t_now() - t0);
    drain();
}

/* case 9b, in a child (the library reads SOFTNIC_TEST_ACCEPT_DELAY_US once): the responder's RX thread sees the
 * requester's connection on its QP's listener and is then held 0.3 s before accepting it (the test hook), while
 * the responder QP is destroyed. The connection accepted after the destroy marked the QP's sockets closing must
 * be closed too: it was kept open, and the requester's WRITE waited forever (no end of stream, no NAK), the
 * suite-run flake of case 9. Exit status 0: RETRY_EXC_ERR arrived. */
static int accept_race_child(void)
{
    setup();
    struct ibv_qp *qa, *qb;
    t_pair(&A, &B, 16, 7, &qa, &qb);
    t_post(qa, IBV_WR_RDMA_WRITE, 90, abuf, 4096, amr->lkey, (uintptr_t)bbuf, bmr->rkey, 0);
    usleep(100000); /* B's RX waits in the hook now, the connection not yet accepted */
    double t0 = t_now();
    ibv_destroy_qp(qb); /* returns after B's RX has accepted */
    double td = t_now() - t0;
    struct ibv_wc wc;
    int got = t_wait(A.cq, &wc, 5);
    t_diag("accept race: destroy %.3f s (>= 0.1: the window was hit), then %s after %.3f s", td,
           got ? ibv_wc_status_str(wc.status) : "no completion", t_now() - t0);
    return got && wc.status == IBV_WC_RETRY_EXC_ERR && wc.wr_id == 90 ? 0 : 1;
}

static void accept_race(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        setenv("SOFTNIC_TEST_ACCEPT_DELAY_US", "300000", 1);
        execl("/proc/self/exe", "t_errors", "accept-race", (char *)NULL);
        _exit(127);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    t_ok(pid > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0,
         "softnic: connection accepted while its responder QP is destroyed -> requester gets RETRY_EXC_ERR");
}

/* case 10: the peer process dies mid-stream */
static void peer_dies(void)
{
    double t0;
    /* 10. the peer process dies abruptly (no destroy, no close) while we stream writes at it */
    int c2p[2], p2c[2];
    if (pipe(c2p) || pipe(p2c)) t_die("pipe");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        struct t_port C;
        t_port_open(&C, 64);
        char *cb = calloc(1, SZ);
        struct ibv_mr *cm = ibv_reg_mr(C.pd, cb, SZ, rw);
        struct ibv_qp *qc = t_qp(&C, NULL, 16);
        uint64_t msg[3] = {qc->qp_num, cm->rkey, (uintptr_t)cb}, peer = 0;
        if (write(c2p[1], msg, sizeof msg) != sizeof msg || read(p2c[0], &peer, sizeof peer) != sizeof peer) _exit(1);
        t_connect(qc, (uint32_t)peer, 7, 1);
        usleep(100000);
        _exit(0); /* vanish with everything open */
    }
    uint64_t msg[3] = {0};
    struct ibv_qp *qp = t_qp(&A, NULL, 64);
    uint64_t mine = qp->qp_num;
    int okx = read(c2p[0], msg, sizeof msg) == sizeof msg && write(p2c[1], &mine, sizeof mine) == sizeof mine;
    t_connect(qp, (uint32_t)msg[0], 7, 1);
    t0 = t_now();
    int posted = 0, completed = 0, failed = 0;
    struct ibv_wc wc;
    while (okx && !failed && t_now() - t0 < 10) {
        while (posted - completed < 32)
            if (t_post(qp, IBV_WR_RDMA_WRITE, (uint64_t)posted++, abuf, SZ / 4, amr->lkey, msg[2], (uint32_t)msg[1], 0))
                break;
        if (t_wait(A.cq, &wc, 1)) {
            completed++;
            failed = wc.status != IBV_WC_SUCCESS;
        }
    }
    t_ok(okx && failed, "softnic: peer process killed mid-stream -> error completion (%s after %.2f s, %d writes done)",
         failed ? ibv_wc_status_str(wc.status) : "none", t_now() - t0, completed);
    int st = 0;
    waitpid(pid, &st, 0);
    ibv_destroy_qp(qp);
    drain();
    close(c2p[0]);
    close(c2p[1]);
    close(p2c[0]);
    close(p2c[1]);
}

/* poll like t_wait, but sleeping 1 ms between polls: case 12 runs its timing on a loaded host, where a busy-polling
 * waiter takes a CPU from the threads it waits for */
static int wait_sleeping(struct ibv_cq *cq, struct ibv_wc *wc, double secs)
{
    double end = t_now() + secs;
    for (;;) {
        int n = ibv_poll_cq(cq, 1, wc);
        if (n) return n > 0;
        if (t_now() >= end) return 0;
        usleep(1000);
    }
}

/* case 12: the peer process is stopped longer than the RNR budget */
static void peer_stopped(void)
{
    /* 12. a descheduled responder: the request waits (RNR) at a peer process that is stopped for 1 s, longer
     * than the whole RNR budget (rnr_retry 6 x 81.92 ms). A real NIC keeps time on its own; the software NIC
     * must not count the time its process could not run: once resumed and the receive posted, the SEND
     * completes (softnic charges at most 20 ms per RX pass; with a wall-clock deadline it was NAKed with
     * RNR_RETRY_EXC at once, on the first RX pass after the resume).
     * The time outside the stop is charged, and rightly: the responder runs then (its application waits for
     * our "go"). Unloaded that is ~0.1 s (the 50 ms before the stop, 20 ms for the stop, the 50 ms after it).
     * Loaded, it is what our sleeps and both processes' wake-ups stretch to (0.75 s for the first 50 ms once in
     * 150 runs of this case beside 3 busy loops on 2 CPUs): with a 0.29 s budget (min_rnr_timer 24) this check
     * failed once in 50 loaded errors.t runs (session 18, RNR_RETRY_EXC: a NAK that was due). So a 0.57 s
     * budget, still well under the 1 s stop (a wall-clock deadline still fails), and a verdict that measures
     * that time: `outside` bounds what softnic can have charged (from the post until the child is stopped, 20 ms
     * for the stop, from the resume until the completion). An RNR NAK with `outside` under the budget is
     * softnic's error; one above it was due, tests nothing and passes as "due". */
    const double budget = 7 * 0.08192, stop_charge = 0.020;
    int c2p[2], p2c[2];
    if (pipe(c2p) || pipe(p2c)) t_die("pipe");
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) t_die("fork"); /* kill(-1, SIGSTOP) below would stop every process we may signal */
    if (pid == 0) {
        struct t_port C;
        t_port_open(&C, 64);
        char *cb = calloc(1, 4096);
        struct ibv_mr *cm = ibv_reg_mr(C.pd, cb, 4096, rw);
        struct ibv_qp *qc = t_qp(&C, NULL, 16);
        uint64_t mine = qc->qp_num, peer = 0, cmd = 0;
        if (write(c2p[1], &mine, sizeof mine) != sizeof mine || read(p2c[0], &peer, sizeof peer) != sizeof peer)
            _exit(1);
        t_connect(qc, (uint32_t)peer, 7, 26); /* responder: min_rnr_timer code 26 = 81.92 ms */
        if (write(c2p[1], &mine, sizeof mine) != sizeof mine || read(p2c[0], &cmd, sizeof cmd) != sizeof cmd) _exit(1);
        t_recv(qc, 1, cb, 4096, cm->lkey);
        struct ibv_wc wc;
        int got = wait_sleeping(C.cq, &wc, 5);
        /* the destroy returns once the ACK it owes has left (sn_tx_drain). The receive completes before that ACK is
         * sent: a 200 ms sleep and _exit lost it once in 150 loaded runs of this case (TX not run by then; the
         * requester saw the end of the stream, then "transport retry counter exceeded" 0.54 s later) */
        ibv_destroy_qp(qc);
        _exit(got && wc.status == IBV_WC_SUCCESS ? 0 : 2);
    }
    struct ibv_qp *qp = t_qp(&A, NULL, 16);
    uint64_t mine = qp->qp_num, peer = 0, go = 1;
    int okx = read(c2p[0], &peer, sizeof peer) == sizeof peer && write(p2c[1], &mine, sizeof mine) == sizeof mine;
    t_connect(qp, (uint32_t)peer, 6, 1); /* requester: rnr_retry 6 -> budget 7 x 81.92 ms */
    okx = okx && read(c2p[0], &peer, sizeof peer) == sizeof peer;
    int st = 0, reaped = 0;
    double t0 = t_now();
    t_post(qp, IBV_WR_SEND, 120, abuf, 128, amr->lkey, 0, 0, 0);
    usleep(50000); /* parked at the responder now */
    kill(pid, SIGSTOP);
    if (waitpid(pid, &st, WUNTRACED) == pid && !WIFSTOPPED(st)) reaped = 1; /* it ended before the stop */
    double t1 = t_now();                                                    /* stopped by now */
    usleep(1000000);
    double t2 = t_now(); /* not resumed before this */
    kill(pid, SIGCONT);
    usleep(50000); /* RX passes after the resume, before the receive exists (the wall-clock NAK came here) */
    okx = okx && write(p2c[1], &go, sizeof go) == sizeof go;
    struct ibv_wc wc;
    int got = wait_sleeping(A.cq, &wc, 5);
    double outside = (t1 - t0) + stop_charge + (t_now() - t2);
    int sent = okx && got && wc.status == IBV_WC_SUCCESS && wc.wr_id == 120;
    int due = okx && got && wc.status == IBV_WC_RNR_RETRY_EXC_ERR && outside >= budget;
    t_ok(sent || due,
         "softnic: responder stopped 1 s (> RNR budget %.3f s), then posts its receive -> SEND succeeds (%s%s, %.3f s "
         "of the budget at most spent outside the stop)",
         budget, got ? ibv_wc_status_str(wc.status) : "no completion", due ? ": due, tests nothing" : "", outside);
    if (due && !reaped) kill(pid, SIGKILL); /* its receive never completes: do not wait 5 s for it */
    if (!reaped) waitpid(pid, &st, 0);
    t_ok(due ? WIFSIGNALED(st) : WIFEXITED(st) && WEXITSTATUS(st) == 0,
         "softnic: the stopped responder received the message");
    ibv_destroy_qp(qp);
    drain();
    close(c2p[0]);
    close(c2p[1]);
    close(p2c[0]);
    close(p2c[1]);
}

/* case 11: honest refusals, then everything torn down in order */
static void refusals_and_teardown(void)
{
    /* 11. honest refusals */
    errno = 0;
    t_ok(!ibv_reg_dmabuf_mr(A.pd, 0, 0, 0, -1, 0) && errno == EOPNOTSUPP,
         "softnic: ibv_reg_dmabuf_mr -> EOPNOTSUPP (no device memory)");
    struct ibv_qp_init_attr ud = {.send_cq = A.cq, .recv_cq = A.cq, .cap = {1, 1, 1, 1, 0}, .qp_type = IBV_QPT_UD};
    errno = 0;
    t_ok(!ibv_create_qp(A.pd, &ud) && errno == EOPNOTSUPP, "softnic: UD QP -> EOPNOTSUPP");
    t_ok(ibv_destroy_cq(A.cq) == 0 && ibv_destroy_cq(B.cq) == 0, "softnic: CQs destroyed once their QPs are gone");
    t_ok(ibv_dealloc_pd(A.pd) == EBUSY, "softnic: dealloc_pd with a live MR -> EBUSY (as rdma-core)");
    ibv_dereg_mr(amr);
    ibv_dereg_mr(bmr);
    ibv_dereg_mr(b_ro);
    ibv_dereg_mr(b_wo);
    t_ok(ibv_dealloc_pd(A.pd) == 0 && ibv_dealloc_pd(B.pd) == 0, "softnic: PDs deallocated once their MRs are gone");
    free(abuf);
    free(bbuf);
    t_ok(ibv_close_device(A.ctx) == 0 && ibv_close_device(B.ctx) == 0, "softnic: close both devices");
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "accept-race")) return accept_race_child();
    setup();
    remote_access_errors();
    rnr_and_short_receive();
    wrong_state();
    destroy_while_busy();
    accept_race();
    peer_dies();
    peer_stopped();
    refusals_and_teardown();
    return t_done();
}
