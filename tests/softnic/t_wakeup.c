/* softnic round trips on a host whose CPUs are busy, against a planted contrast in the same process.
 *
 *   t_wakeup COUNT   two loopback port pairs, 4 KiB RDMA READs taking turns on them, COUNT each, one at a
 *                    time. Pair "nic" keeps the scheduling the library gave its progress
 *                    threads; pair "contrast" has its four threads put back to the kernel's default slice by
 *                    this program. Round trips are measured from the post to the completion timestamp (the
 *                    NIC's clock: when the ACK was applied), so how soon this thread polls does not count.
 *
 * Prints "key value" lines for busyhost.t: <pair>_p50_us, <pair>_p90_us, <pair>_over_1ms (round trips of
 * 1 ms or more: waits a scheduler tick explains, not the link model), <pair>_slice_ns (se.slice of the
 * pair's threads as the kernel reports it, 0 if unknown), contrast_threads (threads re-set: 4).
 * T_WAKEUP_DUMP=1 also prints "lat I NIC_US CONTRAST_US" for every round trip (for calibrating busyhost.t).
 *
 * READs, because a READ round trip wakes all four progress threads of a pair (our TX sends the request, the
 * peer's RX applies it, the peer's TX sends the data, paced by the link model, our RX completes it). Since session
 * 19 a WRITE's ACK is written by the peer's RX itself (sn_wire.c), so a WRITE wakes three: the peer's TX, the
 * thread whose default-slice wake-ups delayed the contrast most, is not in it, and the two pairs differed less
 * (busyhost.t's calibration, softnic.md) than the slice does for traffic that goes through TX.
 * T_WAKEUP_OP=write measures WRITEs instead. */
#include "t_util.h"
#include <dirent.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

struct pair {
    struct t_port p[2];
    struct ibv_cq_ex *cq;
    struct ibv_qp *qa, *qb;
    uint8_t *src, *dst;
    struct ibv_mr *msrc, *mdst;
    uint64_t *lat;
    int tids[8], ntids;
};

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* tids of this process's softnic threads, in /proc order */
static int nic_threads(int *tids, int max)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[300], comm[32] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fscanf(f, "%31s", comm) != 1) comm[0] = 0;
        fclose(f);
        if (!strncmp(comm, "softnic-", 8) && n < max) tids[n++] = atoi(e->d_name);
    }
    if (d) closedir(d);
    return n;
}

static uint64_t slice_ns(int tid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/sched", tid);
    FILE *f = fopen(path, "r");
    uint64_t v = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "se.slice", 8)) {
            char *c = strchr(line, ':');
            if (c) v = strtoull(c + 1, NULL, 10);
        }
    if (f) fclose(f);
    return v;
}

struct k_sched_attr { /* the kernel's struct sched_attr, first version */
    uint32_t size, policy;
    uint64_t flags;
    int32_t nice;
    uint32_t priority;
    uint64_t runtime, deadline, period;
};

static void pair_open(struct pair *q)
{
    for (int i = 0; i < 2; i++) t_port_open(&q->p[i], 16);
    struct ibv_cq_init_attr_ex ca = {.cqe = 64, .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP};
    q->cq = ibv_create_cq_ex(q->p[0].ctx, &ca);
    if (!q->cq) t_die("ibv_create_cq_ex");
    q->qa = t_qp(&q->p[0], ibv_cq_ex_to_cq(q->cq), 16);
    q->qb = t_qp(&q->p[1], NULL, 16);
    t_connect(q->qa, q->qb->qp_num, 7, 1);
    t_connect(q->qb, q->qa->qp_num, 7, 1);
    q->src = calloc(1, 4096);
    q->dst = calloc(1, 4096);
    q->msrc = ibv_reg_mr(q->p[0].pd, q->src, 4096, IBV_ACCESS_LOCAL_WRITE);
    q->mdst =
        ibv_reg_mr(q->p[1].pd, q->dst, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
    if (!q->msrc || !q->mdst) t_die("reg_mr");
}

static void pair_close(struct pair *q)
{
    ibv_destroy_qp(q->qa);
    ibv_destroy_qp(q->qb);
    ibv_dereg_mr(q->msrc);
    ibv_dereg_mr(q->mdst);
    ibv_destroy_cq(ibv_cq_ex_to_cq(q->cq));
    for (int i = 0; i < 2; i++) {
        ibv_destroy_cq(q->p[i].cq);
        ibv_dealloc_pd(q->p[i].pd);
        ibv_close_device(q->p[i].ctx);
    }
    free(q->src);
    free(q->dst);
}

/* one 4 KiB READ (or WRITE), waited for; returns post -> completion timestamp in us */
static enum ibv_wr_opcode op = IBV_WR_RDMA_READ;
static uint64_t round_trip(struct pair *q, uint64_t id)
{
    uint64_t t0 = mono_ns();
    if (t_post(q->qa, op, id, q->src, 4096, q->msrc->lkey, (uintptr_t)q->dst, q->mdst->rkey, 0)) t_die("post");
    struct ibv_poll_cq_attr pa = {0};
    double end = t_now() + 30;
    while (ibv_start_poll(q->cq, &pa)) {
        if (t_now() > end) {
            printf("error timeout\n");
            exit(1);
        }
        struct timespec sl = {0, 100000};
        nanosleep(&sl, NULL);
    }
    if (q->cq->status != IBV_WC_SUCCESS || q->cq->wr_id != id) {
        printf("error %s\n", ibv_wc_status_str(q->cq->status));
        exit(1);
    }
    uint64_t ts = ibv_wc_read_completion_ts(q->cq);
    ibv_end_poll(q->cq);
    return ts > t0 ? (ts - t0) / 1000 : 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *name, struct pair *q, int count)
{
    int over = 0;
    for (int i = 0; i < count; i++) over += q->lat[i] >= 1000;
    qsort(q->lat, (size_t)count, sizeof *q->lat, cmp_u64);
    printf("%s_p50_us %llu\n%s_p90_us %llu\n%s_over_1ms %d\n%s_slice_ns %llu\n", name,
           (unsigned long long)q->lat[count / 2], name, (unsigned long long)q->lat[count * 9 / 10], name, over, name,
           (unsigned long long)(q->ntids ? slice_ns(q->tids[0]) : 0));
}

int main(int argc, char **argv)
{
    int count = argc > 1 ? atoi(argv[1]) : 0;
    if (count < 10) {
        fprintf(stderr, "usage: t_wakeup COUNT (>= 10)\n");
        return 2;
    }
    const char *o = getenv("T_WAKEUP_OP");
    if (o && !strcmp(o, "write")) op = IBV_WR_RDMA_WRITE;
    static struct pair nic, contrast;
    pair_open(&nic);
    for (double end = t_now() + 5; t_now() < end && (nic.ntids = nic_threads(nic.tids, 8)) < 4;) {
        struct timespec sl = {0, 1000000};
        nanosleep(&sl, NULL);
    }
    pair_open(&contrast);
    int all[16], nall = 0, reset = 0;
    for (double end = t_now() + 5; t_now() < end;) { /* a thread names itself once it is set up */
        if ((nall = nic_threads(all, 16)) >= nic.ntids + 4) break;
        struct timespec sl = {0, 1000000};
        nanosleep(&sl, NULL);
    }
    for (int i = 0; i < nall; i++) { /* the contrast's threads: the ones the first pair did not have */
        int old = 0;
        for (int k = 0; k < nic.ntids; k++) old |= all[i] == nic.tids[k];
        if (old || contrast.ntids >= 8) continue;
        contrast.tids[contrast.ntids++] = all[i];
        errno = 0;
        int nice = getpriority(PRIO_PROCESS, (id_t)all[i]);
        struct k_sched_attr a = {.size = sizeof a, .policy = SCHED_OTHER, .nice = nice, .runtime = 0};
        if (!(nice == -1 && errno) && !syscall(SYS_sched_setattr, all[i], &a, 0)) reset++;
    }
    printf("contrast_threads %d\n", reset);
    nic.lat = calloc((size_t)count, sizeof *nic.lat);
    contrast.lat = calloc((size_t)count, sizeof *contrast.lat);
    for (int i = 0; i < count; i++) { /* take turns, each pair first every other time */
        struct pair *first = i & 1 ? &contrast : &nic, *second = i & 1 ? &nic : &contrast;
        first->lat[i] = round_trip(first, (uint64_t)i);
        second->lat[i] = round_trip(second, (uint64_t)i);
    }
    if (getenv("T_WAKEUP_DUMP"))
        for (int i = 0; i < count; i++)
            printf("lat %d %llu %llu\n", i, (unsigned long long)nic.lat[i], (unsigned long long)contrast.lat[i]);
    report("nic", &nic, count);
    report("contrast", &contrast, count);
    free(nic.lat);
    free(contrast.lat);
    pair_close(&nic);
    pair_close(&contrast);
    return 0;
}
