/* softnic link-model probe, driven through the extended API (ibv_create_qp_ex + ibv_wr_*,
 * ibv_create_cq_ex + start/next/end_poll + completion timestamps).  Prints "key value" lines for the
 * .t file to judge; the model itself comes from SOFTNIC_* in the environment.
 *
 *   t_link lat1m              min/median post->completion of a 1 MiB RDMA WRITE (us)
 *   t_link stream SECONDS     throughput of back-to-back 256 KiB writes, 48 in flight (Gb/s)
 *   t_link pings COUNT        COUNT 4 KiB writes, one per millisecond (open loop): latencies (us),
 *                             split by whether they were posted inside a SOFTNIC_PAUSE window; p10/p50/p90,
 *                             ping_over_1ms (round trips a scheduler tick explains, not the model);
 *                             T_LINK_DUMP=1: every ping on stderr; T_LINK_SCHED=1: each thread's schedstat */
#include "t_util.h"
#include <dirent.h>

static struct t_port A, B;
static struct ibv_cq_ex *cqx;
static struct ibv_qp *qa, *qb;
static struct ibv_qp_ex *qx;
static uint8_t *src, *dst;
static struct ibv_mr *msrc, *mdst;
#define BUF (16u << 20)

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void setup(void)
{
    t_port_open(&A, 256);
    t_port_open(&B, 256);
    struct ibv_cq_init_attr_ex ca = {.cqe = 1024,
                                     .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | IBV_WC_EX_WITH_BYTE_LEN};
    cqx = ibv_create_cq_ex(A.ctx, &ca);
    if (!cqx) t_die("ibv_create_cq_ex");
    struct ibv_qp_init_attr_ex qa_attr = {
        .send_cq = ibv_cq_ex_to_cq(cqx),
        .recv_cq = ibv_cq_ex_to_cq(cqx),
        .cap = {.max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1, .max_recv_sge = 1},
        .qp_type = IBV_QPT_RC,
        .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
        .pd = A.pd,
        .send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE,
    };
    qa = ibv_create_qp_ex(A.ctx, &qa_attr);
    if (!qa) t_die("ibv_create_qp_ex");
    qx = ibv_qp_to_qp_ex(qa);
    struct ibv_qp_attr m = {
        .qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE};
    if (ibv_modify_qp(qa, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
        t_die("modify INIT");
    qb = t_qp(&B, NULL, 64);
    t_connect(qa, qb->qp_num, 7, 1);
    t_connect(qb, qa->qp_num, 7, 1);
    src = aligned_alloc(4096, BUF);
    dst = aligned_alloc(4096, BUF);
    memset(src, 0x5a, BUF);
    memset(dst, 0, BUF);
    msrc = ibv_reg_mr(A.pd, src, BUF, IBV_ACCESS_LOCAL_WRITE);
    mdst = ibv_reg_mr(B.pd, dst, BUF, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (!msrc || !mdst) t_die("reg_mr");
}

static void post_write(uint64_t id, uint32_t off, uint32_t len)
{
    ibv_wr_start(qx);
    qx->wr_id = id;
    qx->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_rdma_write(qx, mdst->rkey, (uintptr_t)(dst + off));
    ibv_wr_set_sge(qx, msrc->lkey, (uintptr_t)(src + off), len);
    if (ibv_wr_complete(qx)) t_die("ibv_wr_complete");
}

/* poll the extended CQ; returns the number of completions, timestamps into ts[] */
static int poll_x(uint64_t *ids, uint64_t *ts, int max)
{
    struct ibv_poll_cq_attr pa = {0};
    if (ibv_start_poll(cqx, &pa)) return 0;
    int n = 0;
    do {
        if (cqx->status != IBV_WC_SUCCESS) {
            printf("error %s\n", ibv_wc_status_str(cqx->status));
            exit(1);
        }
        if (n < max) {
            ids[n] = cqx->wr_id;
            ts[n] = ibv_wc_read_completion_ts(cqx);
            n++;
        }
    } while (!ibv_next_poll(cqx));
    ibv_end_poll(cqx);
    return n;
}

/* T_LINK_SCHED=1: per thread of this process, CPU time, run-queue wait and wake-ups (schedstat) */
static void sched_dump(void)
{
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[300], comm[32] = "?";
        unsigned long long run = 0, wait = 0, slices = 0;
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fscanf(f, "%31s", comm) != 1) comm[0] = 0;
            fclose(f);
        }
        snprintf(path, sizeof path, "/proc/self/task/%s/schedstat", e->d_name);
        if ((f = fopen(path, "r"))) {
            if (fscanf(f, "%llu %llu %llu", &run, &wait, &slices) != 3) run = wait = slices = 0;
            fclose(f);
        }
        fprintf(stderr, "sched %s %s run_us %llu wait_us %llu slices %llu\n", e->d_name, comm, run / 1000, wait / 1000,
                slices);
    }
    if (d) closedir(d);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: t_link lat1m | stream SECONDS | pings MS\n");
        return 2;
    }
    setup();
    uint64_t ids[64], ts[64];
    if (!strcmp(argv[1], "lat1m")) {
        uint64_t lat[20], tslat[20];
        for (int i = 0; i < 20; i++) {
            uint64_t t0 = mono_ns();
            post_write((uint64_t)i, 0, 1 << 20);
            int n;
            while (!(n = poll_x(ids, ts, 64)))
                ;
            lat[i] = (mono_ns() - t0) / 1000;
            tslat[i] = ts[0] > t0 ? (ts[0] - t0) / 1000 : 0;
        }
        qsort(lat, 20, sizeof lat[0], cmp_u64);
        qsort(tslat, 20, sizeof tslat[0], cmp_u64);
        printf("lat1m_min_us %llu\nlat1m_median_us %llu\nlat1m_ts_min_us %llu\n", (unsigned long long)lat[0],
               (unsigned long long)lat[10], (unsigned long long)tslat[0]);
        printf("data_ok %d\n", dst[0] == 0x5a && dst[(1 << 20) - 1] == 0x5a);
    } else if (!strcmp(argv[1], "stream") && argc > 2) {
        double secs = atof(argv[2]);
        const uint32_t len = 256 << 10;
        uint64_t posted = 0, done = 0;
        uint64_t t0 = mono_ns(), end = t0 + (uint64_t)(secs * 1e9), last = t0;
        while (mono_ns() < end || done < posted) {
            while (posted - done < 48 && mono_ns() < end) {
                post_write(posted, (uint32_t)((posted % 64) * len), len);
                posted++;
            }
            int n = poll_x(ids, ts, 64);
            for (int i = 0; i < n; i++) last = ts[i] > last ? ts[i] : last;
            done += (uint64_t)n;
        }
        double dt = (double)(last - t0) * 1e-9;
        printf("stream_bytes %llu\nstream_secs %.6f\nstream_gbps %.3f\n", (unsigned long long)(done * len), dt,
               (double)(done * len) * 8 / dt / 1e9);
    } else if (!strcmp(argv[1], "pings") && argc > 2) {
        /* open loop: a 4 KiB write every millisecond whatever happens to the earlier ones, so a pause
		 * window holds back every write posted inside it.  Windows are [k*EVERY, k*EVERY+FOR) of
		 * CLOCK_MONOTONIC, and completion timestamps are CLOCK_MONOTONIC ns, so both are checkable. */
        int count = atoi(argv[2]);
        double every_ms = 0, for_ms = 0;
        const char *pz = getenv("SOFTNIC_PAUSE");
        if (pz) sscanf(pz, "%lf:%lf", &every_ms, &for_ms);
        uint64_t every = (uint64_t)(every_ms * 1e6), dur = (uint64_t)(for_ms * 1e6);
        uint64_t *lat = calloc((size_t)count, sizeof *lat), *posted_at = calloc((size_t)count, sizeof *lat);
        uint64_t *inlat = calloc((size_t)count, sizeof *lat), *outlat = calloc((size_t)count, sizeof *lat);
        uint64_t *bylat = calloc((size_t)count, sizeof *lat); /* lat[] gets sorted */
        int posted = 0, done = 0, nin = 0, nout = 0, in_after_end = 0;
        uint64_t t0 = mono_ns();
        while (done < count) {
            uint64_t now = mono_ns();
            if (posted < count && now >= t0 + (uint64_t)posted * 1000000ull && posted - done < 60) {
                posted_at[posted] = mono_ns();
                post_write((uint64_t)posted, (uint32_t)(posted % 64) * 4096, 4096);
                posted++;
            }
            int n = poll_x(ids, ts, 64);
            for (int i = 0; i < n; i++) {
                uint64_t p = posted_at[ids[i]], l = (ts[i] - p) / 1000;
                lat[ids[i]] = l;
                bylat[ids[i]] = l;
                if (every && p % every < dur) {
                    inlat[nin++] = l;
                    in_after_end += ts[i] >= p - p % every + dur;
                } else if (!every || p % every < every - 2000000) {
                    outlat[nout++] = l;
                }
            }
            done += n;
            if (!n) {
                struct timespec sl = {0, 100000};
                nanosleep(&sl, NULL);
            }
        }
        qsort(lat, (size_t)count, sizeof *lat, cmp_u64);
        qsort(inlat, (size_t)nin, sizeof *lat, cmp_u64);
        qsort(outlat, (size_t)nout, sizeof *lat, cmp_u64);
        printf("pings %d\nping_p50_us %llu\nping_max_us %llu\n", count, (unsigned long long)lat[count / 2],
               (unsigned long long)lat[count - 1]);
        int over = 0; /* round trips a scheduler tick could explain (HZ=1000..250: 1-4 ms), not the model */
        for (int i = 0; i < count; i++) over += lat[i] >= 1000;
        printf("ping_p10_us %llu\nping_p90_us %llu\nping_over_1ms %d\n", (unsigned long long)lat[count / 10],
               (unsigned long long)lat[count * 9 / 10], over);
        if (getenv("T_LINK_SCHED")) sched_dump();
        if (getenv("T_LINK_DUMP"))
            for (int i = 0; i < count; i++)
                fprintf(stderr, "ping %d posted_ms %.3f lat_us %llu\n", i, (double)(posted_at[i] - t0) / 1e6,
                        (unsigned long long)bylat[i]);
        printf("in_window %d\nin_window_done_after_end_pct %d\nin_window_p50_us %llu\nout_window_p50_us %llu\n", nin,
               nin ? in_after_end * 100 / nin : 0, nin ? (unsigned long long)inlat[nin / 2] : 0ull,
               nout ? (unsigned long long)outlat[nout / 2] : 0ull);
        free(lat);
        free(posted_at);
        free(inlat);
        free(outlat);
        free(bylat);
    } else {
        fprintf(stderr, "t_link: unknown mode %s\n", argv[1]);
        return 2;
    }
    ibv_destroy_qp(qa);
    ibv_destroy_qp(qb);
    ibv_dereg_mr(msrc);
    ibv_dereg_mr(mdst);
    free(src);
    free(dst);
    ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
    ibv_destroy_cq(A.cq);
    ibv_destroy_cq(B.cq);
    ibv_dealloc_pd(A.pd);
    ibv_dealloc_pd(B.pd);
    ibv_close_device(A.ctx);
    ibv_close_device(B.ctx);
    return 0;
}
