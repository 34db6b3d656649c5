/* Launcher, out-of-band exchange and QP setup shared by the verbs examples (see ex_common.h). */
#include "ex_common.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SHM_ENV "EX_SHM_FD"

int ex_launch(int world, int argc, char **argv, struct ex_rank *r)
{
    (void)argc;
    const char *fdenv = getenv(SHM_ENV), *rk = getenv("RANK");
    if (fdenv && rk) { /* a rank: map the launcher's shared page */
        int fd = atoi(fdenv);
        r->sh = mmap(NULL, sizeof *r->sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (r->sh == MAP_FAILED) {
            perror("mmap");
            exit(1);
        }
        r->rank = atoi(rk);
        r->world = r->sh->world;
        return -1;
    }
    if (world < 2 || world > EX_MAX_RANKS) {
        fprintf(stderr, "%s: need 2..%d processes\n", argv[0], EX_MAX_RANKS);
        return 2;
    }
    int fd = memfd_create("ex-oob", 0); /* no MFD_CLOEXEC: the ranks inherit it across exec */
    if (fd < 0 || ftruncate(fd, sizeof(struct ex_shared))) {
        perror("memfd");
        return 1;
    }
    struct ex_shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (sh == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    pthread_barrierattr_t ba;
    pthread_barrierattr_init(&ba);
    pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
    pthread_barrier_init(&sh->barrier, &ba, (unsigned)world);
    sh->world = world;
    pid_t pids[EX_MAX_RANKS];
    char buf[32];
    snprintf(buf, sizeof buf, "%d", fd);
    setenv(SHM_ENV, buf, 1);
    snprintf(buf, sizeof buf, "%d", world);
    setenv("WORLD_SIZE", buf, 1);
    setenv("LOCAL_WORLD_SIZE", buf, 1);
    fflush(stdout);
    for (int i = 0; i < world; i++) {
        pids[i] = fork();
        if (pids[i] == 0) {
            snprintf(buf, sizeof buf, "%d", i);
            setenv("RANK", buf, 1);
            setenv("LOCAL_RANK", buf, 1);
            execv("/proc/self/exe", argv);
            perror("execv");
            _exit(127);
        }
        if (pids[i] < 0) {
            perror("fork");
            world = i;
            break;
        }
    }
    int rc = 0;
    for (int left = world; left > 0; left--) {
        int st;
        pid_t p = wait(&st);
        if (p < 0) break;
        if (!WIFEXITED(st) || WEXITSTATUS(st)) {
            if (!rc)
                fprintf(stderr, "%s: a rank failed (%s %d); stopping the others\n", argv[0],
                        WIFEXITED(st) ? "exit" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
            rc = 1;
            for (int i = 0; i < world; i++)
                if (pids[i] != p) kill(pids[i], SIGTERM);
        }
    }
    return rc;
}

void ex_barrier(struct ex_rank *r) { pthread_barrier_wait(&r->sh->barrier); }

int ex_open(struct ex_dev *d, int cqe)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    if (!list || !n) {
        fprintf(stderr, "no RDMA device (for the software test NIC, put its directory in LD_LIBRARY_PATH)\n");
        return -1;
    }
    d->ctx = ibv_open_device(list[0]);
    ibv_free_device_list(list);
    if (!d->ctx) {
        perror("ibv_open_device");
        return -1;
    }
    d->pd = ibv_alloc_pd(d->ctx);
    d->cq = ibv_create_cq(d->ctx, cqe, NULL, NULL, 0);
    if (!d->pd || !d->cq || ibv_query_port(d->ctx, 1, &d->port)) {
        perror("pd/cq/port");
        return -1;
    }
    d->gid_index = d->port.link_layer == IBV_LINK_LAYER_ETHERNET || !d->port.lid ? 0 : -1;
    memset(&d->gid, 0, sizeof d->gid);
    if (d->gid_index >= 0 && ibv_query_gid(d->ctx, 1, d->gid_index, &d->gid)) {
        perror("ibv_query_gid");
        return -1;
    }
    return 0;
}

struct ibv_qp *ex_qp(struct ex_dev *d, int depth)
{
    struct ibv_qp_init_attr a = {
        .send_cq = d->cq,
        .recv_cq = d->cq,
        .cap = {.max_send_wr = (uint32_t)depth, .max_recv_wr = (uint32_t)depth, .max_send_sge = 1, .max_recv_sge = 1},
        .qp_type = IBV_QPT_RC,
    };
    struct ibv_qp *qp = ibv_create_qp(d->pd, &a);
    if (!qp) {
        perror("ibv_create_qp");
        return NULL;
    }
    struct ibv_qp_attr m = {
        .qp_state = IBV_QPS_INIT,
        .port_num = 1,
        .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE,
    };
    if (ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
        perror("modify INIT");
        return NULL;
    }
    return qp;
}

void ex_info(struct ex_dev *d, struct ibv_qp *qp, struct ibv_mr *mr, struct ex_peer_info *out)
{
    out->qpn = qp->qp_num;
    out->lid = d->port.lid;
    memcpy(out->gid, d->gid.raw, 16);
    out->rkey = mr ? mr->rkey : 0;
    out->addr = mr ? (uint64_t)(uintptr_t)mr->addr : 0;
}

int ex_connect(struct ex_dev *d, struct ibv_qp *qp, const struct ex_peer_info *rm)
{
    struct ibv_qp_attr a = {
        .qp_state = IBV_QPS_RTR,
        .path_mtu = IBV_MTU_4096,
        .dest_qp_num = rm->qpn,
        .rq_psn = 0,
        .max_dest_rd_atomic = 1,
        .min_rnr_timer = 12,
        .ah_attr = {.dlid = rm->lid, .port_num = 1},
    };
    if (d->gid_index >= 0) {
        a.ah_attr.is_global = 1;
        a.ah_attr.grh.hop_limit = 1;
        a.ah_attr.grh.sgid_index = (uint8_t)d->gid_index;
        memcpy(a.ah_attr.grh.dgid.raw, rm->gid, 16);
    }
    if (ibv_modify_qp(qp, &a,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
        perror("modify RTR");
        return -1;
    }
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.sq_psn = 0;
    a.max_rd_atomic = 1;
    if (ibv_modify_qp(qp, &a,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
                          IBV_QP_MAX_QP_RD_ATOMIC)) {
        perror("modify RTS");
        return -1;
    }
    return 0;
}

size_t ex_size(const char *s)
{
    char *e;
    double v = strtod(s, &e);
    if (e == s || v < 0) return 0;
    switch (*e) {
    case 'k':
    case 'K': v *= 1024; break;
    case 'm':
    case 'M': v *= 1024 * 1024; break;
    case 'g':
    case 'G': v *= 1024.0 * 1024 * 1024; break;
    default: break;
    }
    return (size_t)v;
}

double ex_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
