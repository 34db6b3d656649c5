/* softnic: ibv_destroy_qp on a QP whose peer keeps writing to it takes no new request once it has begun: it
 * waits only for the responses owed for requests taken before (as a real NIC: the QP leaves RTS, later packets
 * find no QP and the requester's retransmit timer ends them), so a stream of incoming WRITEs neither holds the
 * destroy open nor gets acknowledged after it began.
 *
 * Until session 19 softnic kept applying and acknowledging requests to the QP for as long as its destroy waited
 * for owed ACKs (a session-18 helper saw a destroy held 0.3 s while 200 more WRITEs were acknowledged).
 *
 *   t_destroyflow held     B (a child, SOFTNIC_PAUSE=1000:900: its ACKs wait for the end of the window) destroys
 *                          its QP 100 ms into a window while A posts a 4 KiB RDMA WRITE every 0.5 ms to it.
 *                          Checks: no WRITE A posted >= 20 ms after the destroy began completes successfully
 *                          (old library: every one posted until the window ended, ~1000); A's WRs end with
 *                          RETRY_EXC_ERR then WR_FLUSH_ERR; the destroy returns within 0.3 s (old: at the
 *                          window's end, >= 0.6 s)
 *   t_destroyflow stream   no pause; A keeps 128 WRITEs of 64 KiB outstanding; B destroys after 50 ms: prints
 *                          the destroy's duration and how many WRITEs posted after it began were acknowledged */
#include "t_util.h"
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define NWR  16000
#define WRSZ (64u << 10)

static int c2p[2], p2c[2];

static void put(int fd, const double *v, size_t n)
{
    if (write(fd, v, n * sizeof *v) != (ssize_t)(n * sizeof *v)) t_die("pipe write");
}
static void get(int fd, double *v, size_t n)
{
    if (read(fd, v, n * sizeof *v) != (ssize_t)(n * sizeof *v)) t_die("pipe read");
}

/* the responder: destroys its QP while A writes to it; reports when the destroy began and returned */
static int peer_b(int held)
{
    if (held) setenv("SOFTNIC_PAUSE", "1000:900", 1); /* before the first verbs call: read once */
    struct t_port B;
    t_port_open(&B, 16);
    char *buf = calloc(1, WRSZ);
    struct ibv_mr *mr = ibv_reg_mr(B.pd, buf, WRSZ, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!buf || !mr) t_die("mr");
    struct ibv_qp *qb = t_qp(&B, NULL, 8);
    double mine[3] = {qb->qp_num, mr->rkey, (double)(uintptr_t)buf}, a, v = 0;
    put(c2p[1], mine, 3);
    get(p2c[0], &a, 1);
    t_connect(qb, (uint32_t)a, 7, 1);
    if (held)
        while (fmod(t_now(), 1.0) < 0.05 || fmod(t_now(), 1.0) > 0.2) /* early in a pause window */
            usleep(2000);
    put(c2p[1], &v, 1); /* A: start writing */
    usleep(held ? 100000 : 50000);
    double t[2];
    t[0] = t_now();
    int r = ibv_destroy_qp(qb);
    t[1] = t_now();
    put(c2p[1], t, 2);
    get(p2c[0], &v, 1); /* A is done */
    return r ? 3 : 0;
}

static double posted[NWR];

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "peer")) {
        c2p[1] = atoi(argv[3]);
        p2c[0] = atoi(argv[4]);
        return peer_b(atoi(argv[2]));
    }
    int held = argc >= 2 && !strcmp(argv[1], "held");
    if (argc < 2 || (!held && strcmp(argv[1], "stream"))) {
        fprintf(stderr, "usage: %s held | stream\n", argv[0]);
        return 2;
    }
    /* close-on-exec: the peer keeps only its two ends, so each side reads EOF once the other is gone */
    if (pipe2(c2p, O_CLOEXEC) || pipe2(p2c, O_CLOEXEC)) t_die("pipe");
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) t_die("fork");
    if (pid == 0) { /* a fresh image: B's softnic reads its own configuration (the pause) */
        char a[3][16];
        snprintf(a[0], 16, "%d", held);
        snprintf(a[1], 16, "%d", c2p[1]);
        snprintf(a[2], 16, "%d", p2c[0]);
        fcntl(c2p[1], F_SETFD, 0);
        fcntl(p2c[0], F_SETFD, 0);
        execl("/proc/self/exe", "t_destroyflow", "peer", a[0], a[1], a[2], (char *)NULL);
        _exit(127);
    }
    close(c2p[1]);
    close(p2c[0]);
    struct t_port A;
    t_port_open(&A, NWR + 16);
    char *buf = calloc(1, WRSZ);
    struct ibv_mr *mr = buf ? ibv_reg_mr(A.pd, buf, WRSZ, IBV_ACCESS_LOCAL_WRITE) : NULL;
    if (!mr) t_die("mr");
    struct ibv_qp *qa = t_qp(&A, NULL, NWR);
    double b[3], mine = qa->qp_num, v, td[2] = {0, 0};
    get(c2p[0], b, 3);
    put(p2c[1], &mine, 1);
    t_connect(qa, (uint32_t)b[0], 7, 1);
    get(c2p[0], &v, 1);
    fcntl(c2p[0], F_SETFL, O_NONBLOCK);
    uint32_t sz = held ? 4096 : WRSZ;
    int npost = 0, ndone = 0, have_td = 0, outstanding = 0, ok_after = 0, ok_total = 0, nretry = 0, nflush = 0,
        nother = 0;
    double next = t_now(), end = 0, last_ok_post = 0;
    while (ndone < npost || !end || t_now() < end) {
        double now = t_now();
        if (!have_td && read(c2p[0], td, sizeof td) == (ssize_t)sizeof td) {
            have_td = 1;
            end = now + 0.1; /* keep writing 0.1 s past the destroy's return */
        }
        if (now > (have_td ? end + 5 : next + 10)) break; /* something hangs: report what came */
        int may = held ? now >= next : outstanding < 128;
        if (npost < NWR && may && !(end && now >= end)) {
            if (t_post(qa, IBV_WR_RDMA_WRITE, (uint64_t)npost, buf, sz, mr->lkey, (uint64_t)b[2], (uint32_t)b[1], 0))
                break;
            posted[npost++] = now;
            outstanding++;
            next += 0.0005;
        }
        struct ibv_wc wc[16];
        int n = ibv_poll_cq(A.cq, 16, wc);
        for (int i = 0; i < n; i++) {
            ndone++;
            outstanding--;
            double tp = posted[wc[i].wr_id];
            if (wc[i].status == IBV_WC_SUCCESS) {
                ok_total++;
                if (tp > last_ok_post) last_ok_post = tp;
            } else if (wc[i].status == IBV_WC_RETRY_EXC_ERR) nretry++;
            else if (wc[i].status == IBV_WC_WR_FLUSH_ERR) nflush++;
            else nother++;
        }
    }
    if (!have_td) t_die("the peer never reported its destroy");
    /* successes among the WRs posted >= 20 ms after the destroy began: completions of one QP come in posting
     * order, so the successful ones are the first ok_total */
    for (int i = 0; i < ok_total; i++)
        if (posted[i] >= td[0] + 0.02) ok_after++;
    double dur = td[1] - td[0];
    v = 0;
    put(p2c[1], &v, 1);
    int st = 0;
    waitpid(pid, &st, 0);
    if (!held) {
        printf(
            "destroyflow_stream destroy_s %.3f posted %d acked %d acked_after_destroy_began %d last_acked_post_rel_ms "
            "%.1f retry %d flush %d other %d\n",
            dur, npost, ok_total, ok_after, (last_ok_post - td[0]) * 1e3, nretry, nflush, nother);
        return 0;
    }
    t_diag("A posted %d WRITEs, %d succeeded (the last posted %.1f ms after the destroy began), %d RETRY_EXC_ERR, %d "
           "WR_FLUSH_ERR, %d other; the destroy began %.0f ms into the window and took %.1f ms",
           npost, ok_total, (last_ok_post - td[0]) * 1e3, nretry, nflush, nother, fmod(td[0], 1.0) * 1e3, dur * 1e3);
    t_ok(ndone == npost, "softnic: every WRITE A posted completes (%d of %d)", ndone, npost);
    t_ok(ok_after == 0,
         "softnic: no WRITE posted >= 20 ms after the peer began ibv_destroy_qp is acknowledged (%d were)", ok_after);
    t_ok(ok_total > 0 && nretry == 1 && nother == 0 && ok_total + nretry + nflush == ndone,
         "softnic: the WRITEs taken before the destroy succeed, the next ends RETRY_EXC_ERR, the rest are flushed");
    t_ok(dur < 0.3, "softnic: the destroy returns without waiting for the stream or the pause (%.1f ms)", dur * 1e3);
    t_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "softnic: the peer process ended well (status %d)", st);
    return t_done();
}
