/* softnic: a pause window of one port holds that port's frames only. A port that receives a frame stretched by
 * its sender's pause keeps serving its other connections meanwhile.
 *
 * The link model stamps each frame with the time its last byte reaches the peer (deliver_at); a frame that is on
 * the wire when its sender's pause window opens is stretched by the whole window. Until session 19 the
 * receiving context's RX thread slept until that time in the middle of its loop, so every other connection of
 * the receiving port waited too: a session-18 audit saw, on a 3-rank ring with one rank's port paused, the
 * ranks that were not paused stop acknowledging each other until the pause ended.
 *
 * P (a child process: SOFTNIC_PAUSE=1000:500, SOFTNIC_RATE_GBPS=1) posts a 4 MiB RDMA WRITE to port A 15 ms
 * before a window opens: 33.5 ms on its link, stretched to end 18.5 ms after the window closes. Meanwhile ports
 * A and U (this process, no pause) ping each other with 4 KiB WRITEs, both directions. Checks: P's WRITE
 * completes only after the window (the pause held it: the attempt really planted a stretched frame; an attempt
 * where P was descheduled past the window's start is retried, up to 4), and A and U complete round trips
 * throughout the window (old library: none between the window's start and its end). */
#include "t_util.h"
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#define BIG (4u << 20)

static int c2p[2], p2c[2];

static void put(int fd, const double *v, size_t n)
{
    if (write(fd, v, n * sizeof *v) != (ssize_t)(n * sizeof *v)) t_die("pipe write");
}
static void get(int fd, double *v, size_t n)
{
    if (read(fd, v, n * sizeof *v) != (ssize_t)(n * sizeof *v)) t_die("pipe read");
}

/* the paused port: per attempt, one 4 MiB WRITE posted just before a window; reports post and completion */
static int peer_p(void)
{
    setenv("SOFTNIC_PAUSE", "1000:500", 1); /* before the first verbs call: read once */
    setenv("SOFTNIC_RATE_GBPS", "1", 1);
    struct t_port P;
    t_port_open(&P, 16);
    char *buf = calloc(1, BIG);
    struct ibv_mr *mr = ibv_reg_mr(P.pd, buf, BIG, IBV_ACCESS_LOCAL_WRITE);
    if (!buf || !mr) t_die("mr");
    struct ibv_qp *qp = t_qp(&P, NULL, 8);
    double mine = qp->qp_num, a[3];
    put(c2p[1], &mine, 1);
    get(p2c[0], a, 3); /* A's QPN, rkey, address */
    t_connect(qp, (uint32_t)a[0], 7, 1);
    for (;;) {
        double go;
        get(p2c[0], &go, 1);
        if (go < 0) return 0;
        while (fmod(t_now(), 1.0) < 0.975 || fmod(t_now(), 1.0) > 0.985) /* 15-25 ms before a window */
            usleep(1000);
        double tp = t_now();
        if (t_post(qp, IBV_WR_RDMA_WRITE, 1, buf, BIG, mr->lkey, (uint64_t)a[2], (uint32_t)a[1], 0)) t_die("post");
        put(c2p[1], &tp, 1);
        struct ibv_wc wc;
        int got = t_wait(P.cq, &wc, 10);
        double r[2] = {t_now(), got ? (double)wc.status : -1};
        put(c2p[1], r, 2);
    }
}

struct pinger {
    struct ibv_qp *q;
    struct ibv_cq *cq;
    struct ibv_mr *src;
    uint64_t raddr;
    uint32_t rkey;
};

/* one 4 KiB WRITE round trip; returns its latency in s (-1: error / none within 5 s) */
static double ping(struct pinger *p)
{
    double t0 = t_now();
    if (t_post(p->q, IBV_WR_RDMA_WRITE, 2, p->src->addr, 4096, p->src->lkey, p->raddr, p->rkey, 0)) return -1;
    struct ibv_wc wc;
    if (!t_wait(p->cq, &wc, 5) || wc.status != IBV_WC_SUCCESS) return -1;
    return t_now() - t0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "peer")) {
        c2p[1] = atoi(argv[2]);
        p2c[0] = atoi(argv[3]);
        return peer_p();
    }
    /* close-on-exec: the peer keeps only its two ends, so each side reads EOF once the other is gone */
    if (pipe2(c2p, O_CLOEXEC) || pipe2(p2c, O_CLOEXEC)) t_die("pipe");
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) t_die("fork");
    if (pid == 0) { /* a fresh image: P's softnic reads its own configuration */
        char a[2][16];
        snprintf(a[0], 16, "%d", c2p[1]);
        snprintf(a[1], 16, "%d", p2c[0]);
        fcntl(c2p[1], F_SETFD, 0);
        fcntl(p2c[0], F_SETFD, 0);
        execl("/proc/self/exe", "t_pauseport", "peer", a[0], a[1], (char *)NULL);
        _exit(127);
    }
    close(c2p[1]);
    close(p2c[0]);
    struct t_port A, U;
    t_port_open(&A, 64);
    t_port_open(&U, 64);
    int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
    char *big = calloc(1, BIG), *abuf = calloc(1, 8192), *ubuf = calloc(1, 8192);
    struct ibv_mr *bigmr = ibv_reg_mr(A.pd, big, BIG, rw), *amr = ibv_reg_mr(A.pd, abuf, 8192, rw),
                  *umr = ibv_reg_mr(U.pd, ubuf, 8192, rw);
    if (!big || !abuf || !ubuf || !bigmr || !amr || !umr) t_die("mr");
    struct ibv_qp *ap = t_qp(&A, NULL, 8), *qa, *qu;
    double pq, info[3] = {ap->qp_num, bigmr->rkey, (double)(uintptr_t)big};
    get(c2p[0], &pq, 1);
    put(p2c[1], info, 3);
    t_connect(ap, (uint32_t)pq, 7, 1);
    t_pair(&A, &U, 16, 7, &qa, &qu);
    struct pinger au = {qa, A.cq, amr, (uintptr_t)ubuf + 4096, umr->rkey},
                  ua = {qu, U.cq, umr, (uintptr_t)abuf + 4096, amr->rkey};

    int planted = 0, inside = 0, errors = 0, n = 0;
    double worst = 0, tp = 0, r[2] = {0, -1}, w0 = 0;
    for (int attempt = 0; attempt < 4 && !planted; attempt++) {
        double go = 1;
        put(p2c[1], &go, 1);
        get(c2p[0], &tp, 1);
        w0 = ceil(tp); /* the window P's WRITE runs into: [w0, w0 + 0.5) */
        inside = errors = n = 0;
        worst = 0;
        /* ping both ways until the window has closed (P's WRITE ends ~18.5 ms after it) */
        while (t_now() < w0 + 0.6) {
            for (int d = 0; d < 2; d++) {
                double t0 = t_now(), lat = ping(d ? &ua : &au);
                if (lat < 0) {
                    errors++;
                    continue;
                }
                n++;
                /* inside the window, well after P's frame reached A and well before the pause lets it end */
                if (t0 >= w0 + 0.05 && t0 + lat <= w0 + 0.45) inside++;
                if (t0 >= w0 && t0 < w0 + 0.5 && lat > worst) worst = lat;
            }
        }
        get(c2p[0], r, 2);
        planted = w0 - tp >= 0.002 && r[0] >= w0 + 0.5;
        t_diag("attempt %d: P posted %.1f ms before the window, its WRITE completed %.1f ms after the window opened "
               "(%s); A<->U: %d round trips, %d inside the window, slowest begun in the window %.1f ms, %d errors",
               attempt + 1, (w0 - tp) * 1e3, (r[0] - w0) * 1e3,
               r[1] < 0 ? "no completion" : ibv_wc_status_str((enum ibv_wc_status)r[1]), n, inside, worst * 1e3,
               errors);
    }
    double stop = -1;
    put(p2c[1], &stop, 1);
    t_ok(planted && r[1] == IBV_WC_SUCCESS,
         "softnic: the paused port's 4 MiB WRITE, on the wire when the window opened, completes after the window "
         "(%.1f ms after it opened)",
         (r[0] - w0) * 1e3);
    t_ok(errors == 0, "softnic: every A<->U round trip succeeds (%d errors)", errors);
    t_ok(inside >= 10,
         "softnic: ports A and U (not paused) keep completing round trips while A waits for the paused port's frame "
         "(%d in the window; slowest %.1f ms)",
         inside, worst * 1e3);
    int st = 0;
    waitpid(pid, &st, 0);
    t_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "softnic: the paused peer process ended well (status %d)", st);
    return t_done();
}
