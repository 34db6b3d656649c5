/* softnic extended API: ibv_create_qp_ex + ibv_qp_to_qp_ex + ibv_wr_* builders (send, send_imm,
 * rdma_write, rdma_write_imm, rdma_read, set_sge, set_sge_list, set_inline_data, abort, several WRs in
 * one wr_start/wr_complete batch), ibv_create_cq_ex + start/next/end_poll + read_* accessors and
 * completion timestamps; ibv_query_device_ex; loading the way NCCL does (dlopen + dlvsym@IBVERBS_1.1). */
#include "t_util.h"
#include <dlfcn.h>
#include <poll.h>

static struct t_port A, B;

struct got {
    uint64_t wr_id;
    enum ibv_wc_status st;
    enum ibv_wc_opcode op;
    uint32_t len, qpn, flags;
    __be32 imm;
    uint64_t ts;
};

static int poll_x(struct ibv_cq_ex *cq, struct got *g, int max, double secs)
{
    double end = t_now() + secs;
    int n = 0;
    while (n < max && t_now() < end) {
        struct ibv_poll_cq_attr pa = {0};
        if (ibv_start_poll(cq, &pa)) continue;
        do {
            g[n].wr_id = cq->wr_id;
            g[n].st = cq->status;
            g[n].op = ibv_wc_read_opcode(cq);
            g[n].len = ibv_wc_read_byte_len(cq);
            g[n].qpn = ibv_wc_read_qp_num(cq);
            g[n].flags = ibv_wc_read_wc_flags(cq);
            g[n].imm = ibv_wc_read_imm_data(cq);
            g[n].ts = ibv_wc_read_completion_ts(cq);
            n++;
        } while (n < max && !ibv_next_poll(cq));
        ibv_end_poll(cq);
    }
    return n;
}

static struct ibv_qp *qp_ex(struct t_port *p, struct ibv_cq_ex *cq)
{
    struct ibv_qp_init_attr_ex a = {
        .send_cq = ibv_cq_ex_to_cq(cq),
        .recv_cq = ibv_cq_ex_to_cq(cq),
        .cap = {.max_send_wr = 32, .max_recv_wr = 32, .max_send_sge = 4, .max_recv_sge = 4, .max_inline_data = 64},
        .qp_type = IBV_QPT_RC,
        .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
        .pd = p->pd,
        .send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_WRITE |
                          IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ,
    };
    struct ibv_qp *qp = ibv_create_qp_ex(p->ctx, &a);
    if (!qp) t_die("ibv_create_qp_ex");
    struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT,
                            .port_num = 1,
                            .qp_access_flags =
                                IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_LOCAL_WRITE};
    if (ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
        t_die("modify INIT");
    return qp;
}

static void nccl_style_load(void)
{
    /* NCCL: dlopen("libibverbs.so") then dlvsym(handle, name, "IBVERBS_1.1") for its 22 functions */
    static const char *const v11[] = {
        "ibv_get_device_list", "ibv_free_device_list", "ibv_get_device_name", "ibv_open_device", "ibv_close_device",
        "ibv_get_async_event", "ibv_ack_async_event",  "ibv_query_device",    "ibv_query_port",  "ibv_query_gid",
        "ibv_query_qp",        "ibv_alloc_pd",         "ibv_dealloc_pd",      "ibv_reg_mr",      "ibv_dereg_mr",
        "ibv_create_cq",       "ibv_destroy_cq",       "ibv_create_qp",       "ibv_modify_qp",   "ibv_destroy_qp",
        "ibv_fork_init",       "ibv_event_type_str",
    };
    void *h = dlopen("libibverbs.so", RTLD_NOW);
    t_ok(h != NULL, "softnic: dlopen(\"libibverbs.so\") finds the softnic library");
    if (!h) return;
    int missing = 0;
    for (size_t i = 0; i < sizeof v11 / sizeof v11[0]; i++)
        if (!dlvsym(h, v11[i], "IBVERBS_1.1")) {
            missing++;
            t_diag("missing %s@IBVERBS_1.1", v11[i]);
        }
    t_ok(!missing, "softnic: all 22 functions NCCL resolves with dlvsym(..., \"IBVERBS_1.1\") are there");
    t_ok(dlvsym(h, "ibv_reg_mr_iova2", "IBVERBS_1.8") && dlvsym(h, "ibv_reg_dmabuf_mr", "IBVERBS_1.12") &&
             dlvsym(h, "ibv_query_ece", "IBVERBS_1.10") && dlvsym(h, "ibv_set_ece", "IBVERBS_1.10"),
         "softnic: NCCL's optional symbols (reg_mr_iova2@1.8, reg_dmabuf_mr@1.12, query/set_ece@1.10)");
    struct ibv_device **(*gdl)(int *) =
        (struct ibv_device * *(*)(int *)) dlvsym(h, "ibv_get_device_list", "IBVERBS_1.1");
    int n = 0;
    struct ibv_device **l = gdl ? gdl(&n) : NULL;
    t_ok(l && n == 1 && !strncmp(ibv_get_device_name(l[0]), "softnic", 7),
         "softnic: the device through dlvsym is the software test NIC (%s)", l && n ? ibv_get_device_name(l[0]) : "-");
    if (l) ibv_free_device_list(l);
    /* the async event fd blocks (NCCL runs a thread on it); nothing is pending */
    struct pollfd pf = {.fd = A.ctx->async_fd, .events = POLLIN};
    t_ok(poll(&pf, 1, 10) == 0, "softnic: async event fd is pollable and quiet");
}

int main(void)
{
    t_port_open(&A, 64);
    t_port_open(&B, 64);
    struct ibv_device_attr_ex dx;
    int qrc = ibv_query_device_ex(A.ctx, NULL, &dx);
    t_ok(qrc == 0 && dx.hca_core_clock > 0 && dx.completion_timestamp_mask,
         "softnic: ibv_query_device_ex reports a completion-timestamp clock (%llu kHz)",
         (unsigned long long)dx.hca_core_clock);
    t_ok(!strcmp(dx.orig_attr.fw_ver, "softnic test device"), "softnic: fw_ver says it is a test device");

    struct ibv_cq_init_attr_ex ca = {.cqe = 64,
                                     .wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | IBV_WC_EX_WITH_QP_NUM |
                                                 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP};
    struct ibv_cq_ex *cqa = ibv_create_cq_ex(A.ctx, &ca), *cqb = ibv_create_cq_ex(B.ctx, &ca);
    t_ok(cqa && cqb, "softnic: ibv_create_cq_ex with completion timestamps");
    if (!cqa || !cqb) return t_done();
    struct ibv_qp *qa = qp_ex(&A, cqa), *qb = qp_ex(&B, cqb);
    t_connect(qa, qb->qp_num, 7, 1);
    t_connect(qb, qa->qp_num, 7, 1);
    struct ibv_qp_ex *x = ibv_qp_to_qp_ex(qa);
    t_ok(x && x->wr_start && x->wr_complete && x->wr_send && x->wr_set_sge, "softnic: ibv_qp_to_qp_ex fills wr_*");

    size_t sz = 1 << 20;
    uint8_t *sa = calloc(1, sz), *sb = calloc(1, sz);
    for (size_t i = 0; i < sz; i++) sa[i] = (uint8_t)(i * 13 + 5);
    int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    struct ibv_mr *ma = ibv_reg_mr(A.pd, sa, sz, rw), *mb = ibv_reg_mr(B.pd, sb, sz, rw);
    for (int i = 0; i < 8; i++) t_recv(qb, 100 + (uint64_t)i, sb + 512 * 1024 + (size_t)i * 4096, 4096, mb->lkey);

    /* one batch: send (set_sge), send_imm with an inline payload, write (sge list), write_imm, read */
    uint64_t t0;
    {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        t0 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    }
    char inl[32] = "inline payload, 31 bytes long.";
    ibv_wr_start(x);
    x->wr_id = 1;
    x->wr_flags = IBV_SEND_SIGNALED;
    ibv_wr_send(x);
    ibv_wr_set_sge(x, ma->lkey, (uintptr_t)sa, 1000);
    x->wr_id = 2;
    ibv_wr_send_imm(x, htobe32(0xabcd));
    ibv_wr_set_inline_data(x, inl, sizeof inl);
    memset(inl, 0, sizeof inl); /* inline data must have been copied already */
    x->wr_id = 3;
    ibv_wr_rdma_write(x, mb->rkey, (uintptr_t)sb);
    struct ibv_sge list[3] = {{(uintptr_t)sa, 100, ma->lkey},
                              {(uintptr_t)sa + 100, 200, ma->lkey},
                              {(uintptr_t)sa + 300, 65536 - 300, ma->lkey}};
    ibv_wr_set_sge_list(x, 3, list);
    x->wr_id = 4;
    ibv_wr_rdma_write_imm(x, mb->rkey, (uintptr_t)sb + 65536, htobe32(77));
    ibv_wr_set_sge(x, ma->lkey, (uintptr_t)sa + 65536, 65536);
    t_ok(ibv_wr_complete(x) == 0, "softnic: wr_complete posts a batch of 4 WRs");
    /* a READ of what the write put there, in its own batch; then an aborted batch */
    uint8_t *back = sa + 256 * 1024;
    ibv_wr_start(x);
    x->wr_id = 5;
    ibv_wr_rdma_read(x, mb->rkey, (uintptr_t)sb);
    ibv_wr_set_sge(x, ma->lkey, (uintptr_t)back, 131072);
    t_ok(ibv_wr_complete(x) == 0, "softnic: wr_complete posts an RDMA READ");
    ibv_wr_start(x);
    x->wr_id = 6;
    ibv_wr_send(x);
    ibv_wr_set_sge(x, ma->lkey, (uintptr_t)sa, 8);
    ibv_wr_abort(x);

    struct got ga[8], gb[8];
    int na = poll_x(cqa, ga, 5, 5), nb = poll_x(cqb, gb, 3, 5);
    int order = na == 5;
    for (int i = 0; i < na; i++) order &= ga[i].wr_id == (uint64_t)(i + 1) && ga[i].st == IBV_WC_SUCCESS;
    t_ok(order, "softnic: 5 send-side completions, in order, all successful (%d)", na);
    t_ok(na == 5 && ga[0].op == IBV_WC_SEND && ga[2].op == IBV_WC_RDMA_WRITE && ga[4].op == IBV_WC_RDMA_READ &&
             ga[4].len == 131072 && ga[0].qpn == qa->qp_num,
         "softnic: read_opcode / read_byte_len / read_qp_num on the send side");
    int ts_ok = na == 5;
    for (int i = 0; i < na; i++) ts_ok &= ga[i].ts >= t0 && (i == 0 || ga[i].ts >= ga[i - 1].ts);
    t_ok(ts_ok, "softnic: completion timestamps are CLOCK_MONOTONIC ns, after the post, non-decreasing");
    t_ok(nb == 3 && gb[0].wr_id == 100 && gb[0].op == IBV_WC_RECV && gb[0].len == 1000 &&
             !memcmp(sb + 512 * 1024, sa, 1000),
         "softnic: SEND from set_sge received intact (%d recv completions)", nb);
    t_ok(nb == 3 && gb[1].len == 31 + 1 && (gb[1].flags & IBV_WC_WITH_IMM) && be32toh(gb[1].imm) == 0xabcd &&
             !strcmp((char *)sb + 512 * 1024 + 4096, "inline payload, 31 bytes long."),
         "softnic: SEND_IMM with inline data: payload copied at the call, immediate delivered");
    t_ok(nb == 3 && gb[2].op == IBV_WC_RECV_RDMA_WITH_IMM && be32toh(gb[2].imm) == 77 && gb[2].len == 65536,
         "softnic: WRITE_WITH_IMM consumes a receive and carries its immediate");
    t_ok(!memcmp(sb, sa, 131072), "softnic: WRITE with a 3-entry SGE list and WRITE_IMM landed byte for byte");
    t_ok(!memcmp(back, sa, 131072), "softnic: RDMA READ brought the same 128 KiB back");
    struct got extra[2];
    t_ok(poll_x(cqa, extra, 2, 0.2) == 0, "softnic: the aborted batch posted nothing");

    /* a QP connected to itself: SEND to its own receive queue, WRITE and READ its own memory */
    {
        struct ibv_qp *qs = t_qp(&A, NULL, 8);
        t_connect(qs, qs->qp_num, 7, 1);
        uint8_t *dst = sa + 512 * 1024;
        memset(dst, 0, 8192);
        t_recv(qs, 900, dst, 4096, ma->lkey);
        t_post(qs, IBV_WR_SEND, 901, sa, 3000, ma->lkey, 0, 0, 0);
        t_post(qs, IBV_WR_RDMA_WRITE, 902, sa + 3000, 1000, ma->lkey, (uintptr_t)dst + 4096, ma->rkey, 0);
        t_post(qs, IBV_WR_RDMA_READ, 903, dst + 6000, 1000, ma->lkey, (uintptr_t)dst + 4096, ma->rkey, 0);
        struct ibv_wc wc[4];
        int n = 0;
        double end = t_now() + 5;
        while (n < 4 && t_now() < end) n += ibv_poll_cq(A.cq, 4 - n, wc + n);
        int good = n == 4;
        for (int i = 0; i < n; i++) good &= wc[i].status == IBV_WC_SUCCESS;
        t_ok(good && !memcmp(dst, sa, 3000) && !memcmp(dst + 4096, sa + 3000, 1000) &&
                 !memcmp(dst + 6000, sa + 3000, 1000),
             "softnic: a QP connected to itself: SEND, WRITE and READ land (%d completions)", n);
        ibv_destroy_qp(qs);
    }

    nccl_style_load();

    ibv_destroy_qp(qa);
    ibv_destroy_qp(qb);
    t_ok(ibv_destroy_cq(ibv_cq_ex_to_cq(cqa)) == 0 && ibv_destroy_cq(ibv_cq_ex_to_cq(cqb)) == 0,
         "softnic: extended CQs destroyed");
    ibv_dereg_mr(ma);
    ibv_dereg_mr(mb);
    free(sa);
    free(sb);
    ibv_destroy_cq(A.cq);
    ibv_destroy_cq(B.cq);
    ibv_dealloc_pd(A.pd);
    ibv_dealloc_pd(B.pd);
    ibv_close_device(A.ctx);
    ibv_close_device(B.ctx);
    return t_done();
}
