/* Verbs capture overhead on the null provider (tests/verbs/nullprov.c), traced vs untraced in one run:
 * one context opened through ibv_open_device (patched by the tracer) and one opened behind its back
 * (nullprov_open_untraced), same provider code otherwise. Measures, per context, in alternating blocks:
 *   post+completion: ibv_post_send of one signaled SEND (1 SGE, registered MR) + the ibv_poll_cq that
 *                    returns its completion;
 *   empty poll:      ibv_poll_cq on an empty CQ.
 *   batched:         one ibv_post_send of a list of 16 signaled SENDs + ibv_poll_cq calls returning their 16
 *                    completions (NCCL-style batching): the per-call costs (clock reads) are shared.
 * Prints the median over blocks of ns per iteration (per WR for the batched case) for each, the added ns
 * and the ratio.
 *   vb_bench [-i ITERS_PER_BLOCK] [-b BLOCKS] [-w]    (-w: wall-clock time instead of thread CPU time)
 *   vb_bench -F [-i ...] [-b ...] [-w]   the floor: the core's two clock reads and two event copies (80 + 64 B)
 *                                        alone, per post+completion pair; needs the bench copy of the library
 *                                        with vb_floor_run ($(B)/verbs/floor/librailscope.so, vb_floor.c). */
#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct side {
    struct ibv_context *ctx;
    struct ibv_cq *cq, *ecq;
    struct ibv_qp *qp;
    struct ibv_mr *mr;
    char *buf;
};

/* CPU time of this thread: the cost the calling thread pays, without the time it spends descheduled
 * (on a loaded machine the tracer's writer thread and other processes compete for the CPUs). */
static clockid_t bench_clock = CLOCK_THREAD_CPUTIME_ID;
static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(bench_clock, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int setup(struct side *s, struct ibv_context *ctx)
{
    s->ctx = ctx;
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    s->buf = malloc(4096);
    s->mr = ibv_reg_mr(pd, s->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
    s->cq = ibv_create_cq(ctx, 4096, NULL, NULL, 0);
    s->ecq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
    struct ibv_qp_init_attr qa = {.send_cq = s->cq,
                                  .recv_cq = s->cq,
                                  .qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = 4096, .max_recv_wr = 16, .max_send_sge = 1}};
    s->qp = ibv_create_qp(pd, &qa);
    return s->mr && s->cq && s->ecq && s->qp ? 0 : -1;
}

static double post_poll(struct side *s, int iters)
{
    struct ibv_sge sg = {(uintptr_t)s->buf, 64, s->mr->lkey};
    struct ibv_send_wr w = {.sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED}, *bad;
    struct ibv_wc wc;
    double t0 = now_ns();
    for (int i = 0; i < iters; i++) {
        w.wr_id = i;
        if (ibv_post_send(s->qp, &w, &bad) || ibv_poll_cq(s->cq, 1, &wc) != 1) {
            fprintf(stderr, "vb_bench: post/poll failed\n");
            exit(1);
        }
    }
    return (now_ns() - t0) / iters;
}

#define BATCH 16
static double post_poll_batch(struct side *s, int iters)
{
    struct ibv_sge sg = {(uintptr_t)s->buf, 64, s->mr->lkey};
    struct ibv_send_wr w[BATCH], *bad;
    memset(w, 0, sizeof w);
    for (int k = 0; k < BATCH; k++) {
        w[k].sg_list = &sg;
        w[k].num_sge = 1;
        w[k].opcode = IBV_WR_SEND;
        w[k].send_flags = IBV_SEND_SIGNALED;
        w[k].next = k + 1 < BATCH ? &w[k + 1] : NULL;
    }
    struct ibv_wc wc[BATCH];
    int rounds = iters / BATCH;
    double t0 = now_ns();
    for (int i = 0; i < rounds; i++) {
        for (int k = 0; k < BATCH; k++) w[k].wr_id = (uint64_t)i * BATCH + k;
        if (ibv_post_send(s->qp, w, &bad)) exit(1);
        for (int got = 0; got < BATCH;) {
            int n = ibv_poll_cq(s->cq, BATCH - got, wc);
            if (n < 0) exit(1);
            got += n;
        }
    }
    return (now_ns() - t0) / (rounds * BATCH);
}

static double empty_poll(struct side *s, int iters)
{
    struct ibv_wc wc;
    int got = 0;
    double t0 = now_ns();
    for (int i = 0; i < iters; i++) got += ibv_poll_cq(s->ecq, 1, &wc);
    double t = (now_ns() - t0) / iters;
    if (got) exit(1);
    return t;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}
static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The floor (vb_floor.c): per pair, loop overhead subtracted; the modes interleaved block by block. */
static int floor_main(int iters, int blocks)
{
    void (*run)(int, int) = (void (*)(int, int))dlsym(RTLD_DEFAULT, "vb_floor_run");
    if (!run) {
        fprintf(stderr,
                "vb_bench: -F needs the bench copy of the library (LD_PRELOAD=.../verbs/floor/librailscope.so)\n");
        return 2;
    }
    for (int w = 0; w < 40; w++) { /* warm the ring (first-touch faults) and let the clock calibrate */
        run(3, iters);
        usleep(20000);
    }
    double *v[4];
    for (int m = 0; m < 4; m++) v[m] = calloc(blocks, sizeof(double));
    for (int b = 0; b < blocks; b++) {
        for (int m = 0; m < 4; m++) {
            double t0 = now_ns();
            run(m, iters);
            v[m][b] = (now_ns() - t0) / iters;
        }
        usleep(20000);
    }
    double med[4];
    for (int m = 0; m < 4; m++) med[m] = median(v[m], blocks);
    /* The raw sources under the tracer clock, back to back (throughput, not latency): rdtsc and the vDSO. */
    double rd[9], cg[9];
    for (int b = 0; b < 9; b++) {
        uint64_t acc = 0;
        double t0 = now_ns();
        for (int i = 0; i < iters; i++) {
#if defined(__x86_64__)
            uint32_t lo, hi;
            __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi)::"memory");
            acc += lo;
#else
            acc += (uint64_t)i;
#endif
        }
        double t1 = now_ns();
        for (int i = 0; i < iters; i++) {
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            acc += (uint64_t)ts.tv_nsec;
        }
        double t2 = now_ns();
        __asm__ volatile("" : : "r"(acc));
        rd[b] = (t1 - t0) / iters;
        cg[b] = (t2 - t1) / iters;
    }
    printf("raw clock sources, back to back: rdtsc %.1f ns, clock_gettime(CLOCK_MONOTONIC) %.1f ns\n", median(rd, 9),
           median(cg, 9));
    printf("floor per post+completion (core only, median of %d blocks of %d, %s): 2 clock reads %.1f ns, "
           "2 copies (80 + 64 B) %.1f ns, both %.1f ns\n",
           blocks, iters, bench_clock == CLOCK_MONOTONIC ? "wall clock" : "thread CPU", med[1] - med[0],
           med[2] - med[0], med[3] - med[0]);
    return 0;
}

int main(int argc, char **argv)
{
    int iters = 5000, blocks = 31, opt, floor_only = 0;
    while ((opt = getopt(argc, argv, "i:b:wF")) != -1) {
        if (opt == 'F') floor_only = 1;
        else if (opt == 'w') bench_clock = CLOCK_MONOTONIC; /* wall clock instead of thread CPU time */
        else if (opt == 'i') iters = atoi(optarg);
        else if (opt == 'b') blocks = atoi(optarg);
        else return 2;
    }
    if (floor_only) return floor_main(iters, blocks);
    struct ibv_device **devs = ibv_get_device_list(NULL);
    struct ibv_context *(*open_untraced)(struct ibv_device *) =
        (struct ibv_context * (*)(struct ibv_device *)) dlsym(RTLD_DEFAULT, "nullprov_open_untraced");
    if (!devs || !devs[0] || !open_untraced) {
        fprintf(stderr, "vb_bench: needs the null provider (LD_LIBRARY_PATH=.../verbs/nullprov)\n");
        return 2;
    }
    struct side tr, un;
    struct ibv_context *uctx = open_untraced(devs[0]);
    /* The tracer adopts a context it did not see opened at its first ibv_alloc_pd / create_cq: give the
     * baseline its provider's entries back after the setup. */
    struct ibv_context_ops uops = uctx ? uctx->ops : (struct ibv_context_ops){0};
    if (setup(&tr, ibv_open_device(devs[0])) || setup(&un, uctx)) return 1;
    un.ctx->ops = uops;
    int traced = tr.ctx->ops.post_send != un.ctx->ops.post_send;
    double *pt = calloc(blocks, sizeof *pt), *pu = calloc(blocks, sizeof *pu);
    double *et = calloc(blocks, sizeof *et), *eu = calloc(blocks, sizeof *eu);
    double *bt = calloc(blocks, sizeof *bt), *bu = calloc(blocks, sizeof *bu);
    /* Warm up: several laps through the tracer's ring, so that first-touch page faults of the ring
     * (a one-time cost per process) are not counted as per-call cost. */
    for (int w = 0; w < 40; w++) {
        post_poll(&tr, iters), post_poll(&un, iters);
        usleep(20000);
    }
    for (int b = 0; b < blocks; b++) {
        pu[b] = post_poll(&un, iters);
        pt[b] = post_poll(&tr, iters);
        eu[b] = empty_poll(&un, iters * 5);
        et[b] = empty_poll(&tr, iters * 5);
        bu[b] = post_poll_batch(&un, iters);
        bt[b] = post_poll_batch(&tr, iters);
        usleep(20000); /* let the writer thread drain the buffers between blocks */
    }
    double mpu = median(pu, blocks), mpt = median(pt, blocks), meu = median(eu, blocks), met = median(et, blocks);
    double mbu = median(bu, blocks), mbt = median(bt, blocks);
    printf("ops patched by the tracer: %s; time: %s, median of %d blocks of %d\n", traced ? "yes" : "NO (not traced)",
           bench_clock == CLOCK_MONOTONIC ? "wall clock" : "thread CPU", blocks, iters);
    printf("post_send+completion: untraced %.1f ns, traced %.1f ns, added %.1f ns, ratio %.2f\n", mpu, mpt, mpt - mpu,
           mpt / mpu);
    printf("empty poll_cq:        untraced %.1f ns, traced %.1f ns, added %.1f ns, ratio %.2f\n", meu, met, met - meu,
           met / meu);
    printf("batched x%d, per WR:  untraced %.1f ns, traced %.1f ns, added %.1f ns, ratio %.2f\n", BATCH, mbu, mbt,
           mbt - mbu, mbt / mbu);
    return 0;
}
