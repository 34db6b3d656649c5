/* hv_storm: a multithreaded verbs workload for the hardening campaigns (plain rdma-core API; runs on the
 * software test NIC via LD_LIBRARY_PATH). THREADS threads each own a loopback RC QP pair (A sends to B in
 * the same process); even threads share one CQ (completions are credited to their owner through wr_id,
 * so threads poll each other's completions), odd threads have a CQ of their own. Each iteration posts a
 * receive on B and a signalled 64-byte SEND on A, then polls until both completions are in.
 *
 *   hv_storm [-t THREADS] [-n ITERS | -d MS] [-e] [-F FORKS] [-X EVERY] [-c COUNTFILE] [-r]
 *     -n ITERS  iterations per thread (default 200); -d MS: run for MS milliseconds instead
 *     -e        threads exit early, staggered (thread i stops after (i+1)/THREADS of the work): rings
 *               of exited threads are drained while others keep posting
 *     -F FORKS  fork FORKS children during the run (DataLoader-like: they compute a little and exit);
 *     -X EVERY  every EVERY-th child execs /bin/true instead
 *     -c FILE   keep the number of completed SEND posts (ibv_post_send returned 0) in FILE (u64 0, shared
 *               mapping) and the CLOCK_MONOTONIC ns of the first one (u64 1), so a harness can compare
 *               with the trace after the process is killed
 *     -r        print "ready" once the threads post (as many posts as threads; signal tests wait for it)
 *     -A MS     call abort() from the main thread after MS milliseconds (threads still posting)
 * Prints "hv_storm: threads=T posts=P completions=C forks=F" at the end; exit 0 iff every work request
 * completed successfully and every child exited 0. */
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXT 256
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *shared_cq;
static struct ibv_port_attr port;
static union ibv_gid gid;
static int use_gid;
static long nthreads = 4, iters = 200, dur_ms, forks, exec_every;
static int early, ready;
static long abort_ms;
static _Atomic uint64_t *posted_count;
static _Atomic uint64_t total_posts, total_comps, failures;
static _Atomic int got[MAXT][2]; /* completions per thread: [0] send, [1] recv */

struct th {
    int idx;
    struct ibv_cq *cq;
    struct ibv_qp *a, *b;
    struct ibv_mr *mr;
    char *buf;
    pthread_t t;
};
static struct th th[MAXT];

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static struct ibv_qp *mkqp(struct ibv_cq *cq)
{
    struct ibv_qp_init_attr a = {.send_cq = cq,
                                 .recv_cq = cq,
                                 .cap = {.max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1},
                                 .qp_type = IBV_QPT_RC};
    struct ibv_qp *qp = ibv_create_qp(pd, &a);
    if (!qp) return NULL;
    struct ibv_qp_attr m = {
        .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE};
    if (ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) return NULL;
    return qp;
}

static int connect_to(struct ibv_qp *qp, uint32_t dest)
{
    struct ibv_qp_attr a = {.qp_state = IBV_QPS_RTR,
                            .path_mtu = IBV_MTU_1024,
                            .dest_qp_num = dest,
                            .max_dest_rd_atomic = 1,
                            .min_rnr_timer = 12,
                            .ah_attr = {.dlid = port.lid, .port_num = 1}};
    if (use_gid) {
        a.ah_attr.is_global = 1;
        a.ah_attr.grh.hop_limit = 1;
        a.ah_attr.grh.dgid = gid;
    }
    if (ibv_modify_qp(qp, &a,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
        return -1;
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    return ibv_modify_qp(qp, &a,
                         IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                             IBV_QP_MAX_QP_RD_ATOMIC);
}

/* Poll cq once; credit each completion to the thread named in its wr_id. */
static void poll_some(struct ibv_cq *cq)
{
    struct ibv_wc wc[8];
    int n = ibv_poll_cq(cq, 8, wc);
    if (n < 0) {
        atomic_fetch_add(&failures, 1);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (wc[i].status != IBV_WC_SUCCESS) atomic_fetch_add(&failures, 1);
        unsigned owner = (unsigned)(wc[i].wr_id >> 1) % MAXT;
        atomic_fetch_add(&got[owner][wc[i].wr_id & 1], 1);
        atomic_fetch_add(&total_comps, 1);
    }
}

static void *worker(void *arg)
{
    struct th *t = arg;
    long my_iters = early ? iters * (t->idx + 1) / nthreads : iters;
    double end = dur_ms ? now_ms() + (early ? dur_ms * (t->idx + 1) / nthreads : dur_ms) : 0;
    for (long k = 0; dur_ms ? now_ms() < end : k < my_iters; k++) {
        struct ibv_sge rs = {(uintptr_t)t->buf + 64, 64, t->mr->lkey};
        struct ibv_recv_wr rwr = {.wr_id = (uint64_t)t->idx << 1 | 1, .sg_list = &rs, .num_sge = 1}, *rbad;
        if (ibv_post_recv(t->b, &rwr, &rbad)) {
            atomic_fetch_add(&failures, 1);
            break;
        }
        struct ibv_sge ss = {(uintptr_t)t->buf, 64, t->mr->lkey};
        struct ibv_send_wr swr = {.wr_id = (uint64_t)t->idx << 1,
                                  .sg_list = &ss,
                                  .num_sge = 1,
                                  .opcode = IBV_WR_SEND,
                                  .send_flags = IBV_SEND_SIGNALED},
                           *sbad;
        if (ibv_post_send(t->a, &swr, &sbad)) {
            atomic_fetch_add(&failures, 1);
            break;
        }
        atomic_fetch_add(&total_posts, 1);
        if (posted_count && atomic_fetch_add(posted_count, 1) == 0) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            posted_count[1] = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
        }
        double deadline = now_ms() + 10000;
        while (atomic_load(&got[t->idx][0]) <= k || atomic_load(&got[t->idx][1]) <= k) {
            poll_some(t->cq);
            if (now_ms() > deadline) {
                fprintf(stderr, "hv_storm: thread %d: no completion in 10 s\n", t->idx);
                atomic_fetch_add(&failures, 1);
                return NULL;
            }
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int c;
    const char *countfile = NULL;
    while ((c = getopt(argc, argv, "t:n:d:eF:X:c:rA:")) != -1) {
        switch (c) {
        case 't': nthreads = atol(optarg); break;
        case 'n': iters = atol(optarg); break;
        case 'd': dur_ms = atol(optarg); break;
        case 'e': early = 1; break;
        case 'F': forks = atol(optarg); break;
        case 'X': exec_every = atol(optarg); break;
        case 'c': countfile = optarg; break;
        case 'r': ready = 1; break;
        case 'A': abort_ms = atol(optarg); break;
        default: fprintf(stderr, "usage: see tests/hardening/hv_storm.c\n"); return 2;
        }
    }
    if (nthreads < 1 || nthreads > MAXT) return 2;
    if (countfile) {
        int fd = open(countfile, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0 || ftruncate(fd, 16)) return perror(countfile), 2;
        posted_count = mmap(NULL, 16, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (posted_count == MAP_FAILED) return perror("mmap"), 2;
        close(fd);
    }
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (!list || !n) return fprintf(stderr, "hv_storm: no RDMA device\n"), 3;
    ctx = ibv_open_device(list[0]);
    ibv_free_device_list(list);
    if (!ctx || !(pd = ibv_alloc_pd(ctx)) || ibv_query_port(ctx, 1, &port)) return perror("open"), 3;
    use_gid = port.link_layer == IBV_LINK_LAYER_ETHERNET || !port.lid;
    if (use_gid && ibv_query_gid(ctx, 1, 0, &gid)) return perror("gid"), 3;
    shared_cq = ibv_create_cq(ctx, 16 * (int)nthreads + 16, NULL, NULL, 0);
    if (!shared_cq) return perror("cq"), 3;
    for (int i = 0; i < nthreads; i++) {
        struct th *t = &th[i];
        t->idx = i;
        t->cq = i % 2 ? ibv_create_cq(ctx, 32, NULL, NULL, 0) : shared_cq;
        t->buf = calloc(1, 128);
        t->mr = t->cq && t->buf ? ibv_reg_mr(pd, t->buf, 128, IBV_ACCESS_LOCAL_WRITE) : NULL;
        t->a = t->mr ? mkqp(t->cq) : NULL;
        t->b = t->a ? mkqp(t->cq) : NULL;
        if (!t->b || connect_to(t->a, t->b->qp_num) || connect_to(t->b, t->a->qp_num))
            return fprintf(stderr, "hv_storm: setting up thread %d: %s\n", i, strerror(errno)), 3;
    }
    for (int i = 0; i < nthreads; i++) pthread_create(&th[i].t, NULL, worker, &th[i]);
    /* "ready" once the threads post (up to 10 s): a loaded host under ASan took over 200 ms to the first post, and
     * signals_softnic.t's SIGTERM 200 ms after "ready" then met none (its zero-loss check wants some) */
    if (ready) {
        for (int w = 0; w < 10000 && atomic_load(&total_posts) < (uint64_t)nthreads; w++) usleep(1000);
        printf("ready\n");
        fflush(stdout);
    }
    if (abort_ms) {
        usleep((useconds_t)abort_ms * 1000);
        abort();
    }
    int bad_children = 0;
    for (long f = 0; f < forks; f++) {
        pid_t p = fork();
        if (p == 0) {
            if (exec_every && f % exec_every == exec_every - 1) {
                execl("/bin/true", "true", (char *)NULL);
                _exit(127);
            }
            volatile double x = 0; /* a DataLoader worker: some CPU, no verbs (fork-unsafe) */
            for (int k = 0; k < 200000; k++) x += k * 0.5;
            _exit(0);
        }
        if (p < 0) bad_children++;
        usleep(2000);
    }
    for (long f = 0; f < forks; f++) {
        int st;
        if (wait(&st) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) bad_children++;
    }
    for (int i = 0; i < nthreads; i++) pthread_join(th[i].t, NULL);
    for (int i = 0; i < nthreads; i++) {
        ibv_destroy_qp(th[i].a);
        ibv_destroy_qp(th[i].b);
        ibv_dereg_mr(th[i].mr);
        if (th[i].cq != shared_cq) ibv_destroy_cq(th[i].cq);
        free(th[i].buf);
    }
    ibv_destroy_cq(shared_cq);
    ibv_dealloc_pd(pd);
    ibv_close_device(ctx);
    printf("hv_storm: threads=%ld posts=%llu completions=%llu forks=%ld failures=%llu bad_children=%d\n", nthreads,
           (unsigned long long)total_posts, (unsigned long long)total_comps, forks, (unsigned long long)failures,
           bad_children);
    return failures || bad_children || total_comps != 2 * total_posts ? 1 : 0;
}
