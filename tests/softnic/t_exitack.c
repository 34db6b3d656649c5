/* softnic: the ACK of a message leaves the responder no later than its receive completion is visible, so a
 * responder process that _exits the moment it has polled the receive does not take the ACK with it.
 *
 * On a real RC NIC the ACK is generated on the wire when the data is placed, independently of the receiving
 * process's lifetime. Until session 19 softnic pushed the receive completion and only queued the ACK for its TX
 * thread: a process that called _exit right after ibv_poll_cq (no destroy, no close: nothing drains) could end
 * before TX wrote it, and the requester then got RETRY_EXC_ERR from its retransmit timer for a message that had
 * arrived.
 *
 *   t_exitack held     B's link is paused 900 ms of every second (SOFTNIC_PAUSE=1000:900) and the message
 *                      arrives inside a window, so its ACK cannot leave before B exits: SEND and
 *                      RDMA_WRITE_WITH_IMM must still succeed at A (old library: RETRY_EXC_ERR, every run)
 *   t_exitack loop N   N rounds without a pause: B receives one SEND and _exits at once; prints
 *                      "exitack_fail K of N" (old library: some rounds fail, more beside busy loops)
 *   t_exitack flood N  held, with N SENDs in the window: B's ACKs fill the socket to A (A applies none before the
 *                      window ends), so RX hands the rest to TX and their receive completions wait until TX has
 *                      written them; B _exits the moment it has polled the last one: all N must succeed at A */
#include "t_util.h"
#include <fcntl.h>
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

/* the responder: n receives, then _exit the moment the last completes (exit status 0: all completed in order);
 * tells A before that how many completed after the pause window ended */
static int peer_b(int held, int n)
{
    if (held) setenv("SOFTNIC_PAUSE", "1000:900", 1); /* before the first verbs call: read once */
    struct t_port B;
    t_port_open(&B, n + 16);
    char *buf = calloc((size_t)n, 64);
    struct ibv_mr *mr =
        buf ? ibv_reg_mr(B.pd, buf, (size_t)n * 64, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) : NULL;
    if (!mr) t_die("mr");
    struct ibv_qp *qb = t_qp(&B, NULL, n);
    uint64_t mine[3] = {qb->qp_num, mr->rkey, (uintptr_t)buf}, a = 0, v = 0;
    put(c2p[1], mine, 3);
    get(p2c[0], &a, 1);
    t_connect(qb, (uint32_t)a, 7, 1);
    for (int i = 0; i < n; i++)
        if (t_recv(qb, (uint64_t)i, buf + 64 * i, 64, mr->lkey)) t_die("post_recv");
    if (held)
        while (fmod(t_now(), 1.0) < 0.05 || fmod(t_now(), 1.0) > 0.4) /* early in a pause window */
            usleep(5000);
    double w_end = floor(t_now()) + 0.9;
    put(c2p[1], &v, 1); /* A: send now */
    struct ibv_wc wc;
    int got = 0, bad = 0;
    uint64_t late = 0;
    for (double t0 = t_now(); t_now() - t0 < 5;) {
        int k = ibv_poll_cq(B.cq, 1, &wc);
        if (k < 0) _exit(4);
        if (!k) continue;
        bad |= wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)got;
        late += held && t_now() >= w_end;
        if (++got < n) continue;
        put(c2p[1], &late, 1);
        _exit(bad ? 3 : 0); /* at once: no destroy, no close, no atexit */
    }
    put(c2p[1], &late, 1);
    _exit(5);
}

/* one round of n WRs: returns the requester's worst completion status (-1: not all within 5 s); *bst: B's exit
 * status; *late: B's receives that completed after the window */
static int round_trip(int held, int n, enum ibv_wr_opcode op, double *dt, int *bst, uint64_t *late)
{
    /* close-on-exec: the peer keeps only its two ends, so each side reads EOF once the other is gone */
    if (pipe2(c2p, O_CLOEXEC) || pipe2(p2c, O_CLOEXEC)) t_die("pipe");
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) t_die("fork");
    if (pid == 0) { /* a fresh image: B's softnic reads its own configuration (the pause) */
        char a[4][16];
        snprintf(a[0], 16, "%d", held);
        snprintf(a[1], 16, "%d", c2p[1]);
        snprintf(a[2], 16, "%d", p2c[0]);
        snprintf(a[3], 16, "%d", n);
        fcntl(c2p[1], F_SETFD, 0);
        fcntl(p2c[0], F_SETFD, 0);
        execl("/proc/self/exe", "t_exitack", "peer", a[0], a[1], a[2], a[3], (char *)NULL);
        _exit(127);
    }
    close(c2p[1]);
    close(p2c[0]);
    static struct t_port A;
    static char *buf;
    static struct ibv_mr *mr;
    if (!A.ctx) {
        t_port_open(&A, 4096);
        buf = calloc(1, 4096);
        mr = buf ? ibv_reg_mr(A.pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE) : NULL;
        if (!mr) t_die("mr");
    }
    struct ibv_qp *qa = t_qp(&A, NULL, n);
    uint64_t b[3], mine = qa->qp_num, v;
    get(c2p[0], b, 3);
    put(p2c[1], &mine, 1);
    t_connect(qa, (uint32_t)b[0], 7, 1);
    get(c2p[0], &v, 1);
    double t0 = t_now();
    for (int i = 0; i < n; i++)
        if (t_post(qa, op, (uint64_t)i, buf, 64, mr->lkey, b[2] + 64 * (uint64_t)i, (uint32_t)b[1], 0x1234))
            t_die("post_send");
    struct ibv_wc wc;
    int got = 0, worst = IBV_WC_SUCCESS;
    while (got < n && t_wait(A.cq, &wc, 5)) {
        got++;
        if (wc.status != IBV_WC_SUCCESS && worst == IBV_WC_SUCCESS) worst = (int)wc.status;
    }
    *dt = t_now() - t0;
    if (read(c2p[0], late, sizeof *late) != (ssize_t)sizeof *late) *late = 0;
    int st = 0;
    waitpid(pid, &st, 0);
    *bst = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    ibv_destroy_qp(qa);
    close(c2p[0]);
    close(p2c[1]);
    return got == n ? worst : -1;
}

static const char *st_str(int s) { return s < 0 ? "no completion" : ibv_wc_status_str((enum ibv_wc_status)s); }

int main(int argc, char **argv)
{
    if (argc == 6 && !strcmp(argv[1], "peer")) {
        c2p[1] = atoi(argv[3]);
        p2c[0] = atoi(argv[4]);
        return peer_b(atoi(argv[2]), atoi(argv[5]));
    }
    uint64_t late;
    if (argc >= 3 && !strcmp(argv[1], "flood")) {
        int n = atoi(argv[2]);
        if (n < 1 || n > 16000) return 2;
        double dt;
        int bst, s = round_trip(1, n, IBV_WR_SEND, &dt, &bst, &late);
        t_diag("%llu of the responder's receive completions came after the window (their ACKs waited for room in "
               "the socket)",
               (unsigned long long)late);
        t_ok(bst == 0,
             "softnic: flood: the responder saw its %d receives complete in order and _exited at once "
             "(status %d)",
             n, bst);
        t_ok(s == IBV_WC_SUCCESS, "softnic: flood: all %d SENDs succeed at the requester (%s after %.3f s)", n,
             st_str(s), dt);
        return t_done();
    }
    if (argc >= 3 && !strcmp(argv[1], "loop")) {
        int n = atoi(argv[2]), fail = 0;
        for (int i = 0; i < n; i++) {
            double dt;
            int bst, s = round_trip(0, 1, IBV_WR_SEND, &dt, &bst, &late);
            if (s != IBV_WC_SUCCESS || bst) {
                fail++;
                printf("# round %d: requester %s after %.3f s, responder exit %d\n", i, st_str(s), dt, bst);
            }
        }
        printf("exitack_fail %d of %d\n", fail, n);
        return fail ? 1 : 0;
    }
    if (argc < 2 || strcmp(argv[1], "held")) {
        fprintf(stderr, "usage: %s held | loop N | flood N\n", argv[0]);
        return 2;
    }
    static const struct {
        enum ibv_wr_opcode op;
        const char *name;
    } ops[] = {{IBV_WR_SEND, "SEND"}, {IBV_WR_RDMA_WRITE_WITH_IMM, "RDMA_WRITE_WITH_IMM"}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        double dt;
        int bst, s = round_trip(1, 1, ops[i].op, &dt, &bst, &late);
        t_ok(bst == 0, "softnic: %s: the responder saw its receive complete and _exited at once (status %d)",
             ops[i].name, bst);
        t_ok(s == IBV_WC_SUCCESS,
             "softnic: %s: its ACK, held by the responder's paused link, still reaches the requester (%s after "
             "%.3f s)",
             ops[i].name, st_str(s), dt);
    }
    return t_done();
}
