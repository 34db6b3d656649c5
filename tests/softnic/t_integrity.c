/* softnic data integrity under load: many QP pairs between two ports, up to DEPTH outstanding WRs
 * each, random sizes (0..64 KiB) and SGE counts, a random mix of SEND, RDMA WRITE, WRITE WITH IMM and
 * RDMA READ, every fourth WR signaled.  Every byte that lands is checked, every completion matched.
 *
 *   t_integrity [PAIRS] [WRS_PER_PAIR] [SEED] */
#include "t_util.h"

#define DEPTH 64
#define SLOT  (64 * 1024)

struct pair {
    int id;
    struct ibv_qp *qa, *qb;
    uint8_t *src, *dst, *rbuf, *rdsrc, *rdst; /* A: src, rdst; B: dst, rbuf, rdsrc */
    struct ibv_mr *msrc, *mdst, *mrbuf, *mrdsrc, *mrdst;
    uint64_t posted, done; /* send WRs */
    int kind[DEPTH];
    uint32_t len[DEPTH], off[DEPTH];
    struct {
        uint64_t k;
        int kind;
        uint32_t len;
    } rq_expect[4 * DEPTH]; /* recv-consuming WRs, in order */
    uint64_t rq_head, rq_tail, recvs_done;
    uint64_t bad;
    int flushed;
};

static uint8_t pat(int p, uint64_t k, uint32_t j)
{
    return (uint8_t)(j * 131u + (uint32_t)k * 7u + (uint32_t)p * 29u + 1u);
}

static uint64_t rng = 88172645463325252ull;
static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

static uint8_t *xalloc(size_t n)
{
    uint8_t *p = aligned_alloc(4096, n);
    if (!p) t_die("alloc");
    memset(p, 0, n);
    return p;
}

static void post_b_recv(struct pair *p, uint64_t slot)
{
    if (t_recv(p->qb, slot, p->rbuf + (slot % DEPTH) * SLOT, SLOT, p->mrbuf->lkey)) t_die("post_recv");
}

static void verify_send_wr(struct pair *p, uint64_t k)
{
    int i = (int)(k % DEPTH);
    uint32_t len = p->len[i], off = p->off[i];
    if (p->kind[i] == IBV_WR_RDMA_WRITE || p->kind[i] == IBV_WR_RDMA_WRITE_WITH_IMM) {
        for (uint32_t j = 0; j < len; j++)
            if (p->dst[(uint64_t)i * SLOT + j] != pat(p->id, k, j)) {
                p->bad++;
                break;
            }
    } else if (p->kind[i] == IBV_WR_RDMA_READ) {
        for (uint32_t j = 0; j < len; j++)
            if (p->rdst[(uint64_t)i * SLOT + j] != (uint8_t)((off + j) * 17u + (uint32_t)p->id * 3u)) {
                p->bad++;
                break;
            }
    }
}

static void post_one(struct pair *p)
{
    uint64_t k = p->posted;
    int i = (int)(k % DEPTH);
    uint32_t r = rnd() % 100;
    int kind = r < 30   ? IBV_WR_SEND
               : r < 55 ? IBV_WR_RDMA_WRITE
               : r < 75 ? IBV_WR_RDMA_WRITE_WITH_IMM
                        : IBV_WR_RDMA_READ;
    uint32_t len = rnd() % 8 == 0 ? rnd() % 3 : rnd() % (SLOT + 1);
    uint32_t off = rnd() % (4 * SLOT);
    p->kind[i] = kind;
    p->len[i] = len;
    p->off[i] = off;
    uint8_t *local = kind == IBV_WR_RDMA_READ ? p->rdst + (uint64_t)i * SLOT : p->src + (uint64_t)i * SLOT;
    uint32_t lkey = kind == IBV_WR_RDMA_READ ? p->mrdst->lkey : p->msrc->lkey;
    if (kind == IBV_WR_RDMA_READ) memset(local, 0xee, len);
    else
        for (uint32_t j = 0; j < len; j++) local[j] = pat(p->id, k, j);
    /* split into 1..3 SGEs */
    struct ibv_sge sge[3];
    int ns = 1 + (int)(rnd() % 3);
    uint32_t at = 0;
    for (int s = 0; s < ns; s++) {
        uint32_t take = s == ns - 1 ? len - at : (len - at) / 2;
        sge[s].addr = (uintptr_t)(local + at);
        sge[s].length = take;
        sge[s].lkey = lkey;
        at += take;
    }
    struct ibv_send_wr wr = {.wr_id = k,
                             .opcode = kind,
                             .sg_list = sge,
                             .num_sge = ns,
                             .imm_data = htobe32((uint32_t)k)},
                       *bad;
    if (k % 4 == 3 || rnd() % 8 == 0) wr.send_flags = IBV_SEND_SIGNALED;
    if (kind == IBV_WR_RDMA_READ) {
        wr.wr.rdma.remote_addr = (uintptr_t)(p->rdsrc + off);
        wr.wr.rdma.rkey = p->mrdsrc->rkey;
    } else if (kind != IBV_WR_SEND) {
        memset(p->dst + (uint64_t)i * SLOT, 0, len);
        wr.wr.rdma.remote_addr = (uintptr_t)(p->dst + (uint64_t)i * SLOT);
        wr.wr.rdma.rkey = p->mdst->rkey;
    }
    if (kind == IBV_WR_SEND || kind == IBV_WR_RDMA_WRITE_WITH_IMM) {
        int e = (int)(p->rq_tail++ % (4 * DEPTH));
        p->rq_expect[e].k = k;
        p->rq_expect[e].kind = kind;
        p->rq_expect[e].len = len;
    }
    if (ibv_post_send(p->qa, &wr, &bad)) t_die("post_send");
    p->posted++;
}

int main(int argc, char **argv)
{
    int npairs = argc > 1 ? atoi(argv[1]) : 8;
    uint64_t per = argc > 2 ? strtoull(argv[2], NULL, 0) : 500;
    if (argc > 3) rng = strtoull(argv[3], NULL, 0) | 1;
    struct t_port A, B;
    t_port_open(&A, 8 * DEPTH * npairs);
    t_port_open(&B, 8 * DEPTH * npairs);
    struct pair *P = calloc((size_t)npairs, sizeof *P);
    int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
    for (int i = 0; i < npairs; i++) {
        struct pair *p = &P[i];
        p->id = i;
        t_pair(&A, &B, DEPTH, 7, &p->qa, &p->qb);
        p->src = xalloc((size_t)DEPTH * SLOT);
        p->rdst = xalloc((size_t)DEPTH * SLOT);
        p->dst = xalloc((size_t)DEPTH * SLOT);
        p->rbuf = xalloc((size_t)DEPTH * SLOT);
        p->rdsrc = xalloc(5 * SLOT);
        for (uint32_t j = 0; j < 5 * SLOT; j++) p->rdsrc[j] = (uint8_t)(j * 17u + (uint32_t)i * 3u);
        p->msrc = ibv_reg_mr(A.pd, p->src, (size_t)DEPTH * SLOT, IBV_ACCESS_LOCAL_WRITE);
        p->mrdst = ibv_reg_mr(A.pd, p->rdst, (size_t)DEPTH * SLOT, IBV_ACCESS_LOCAL_WRITE);
        p->mdst = ibv_reg_mr(B.pd, p->dst, (size_t)DEPTH * SLOT, rw);
        p->mrbuf = ibv_reg_mr(B.pd, p->rbuf, (size_t)DEPTH * SLOT, IBV_ACCESS_LOCAL_WRITE);
        p->mrdsrc = ibv_reg_mr(B.pd, p->rdsrc, 5 * SLOT, IBV_ACCESS_REMOTE_READ);
        if (!p->msrc || !p->mrdst || !p->mdst || !p->mrbuf || !p->mrdsrc) t_die("reg_mr");
        for (uint64_t s = 0; s < DEPTH; s++) post_b_recv(p, s);
    }
    uint64_t total = per * (uint64_t)npairs, completed = 0, recvs = 0, bytes = 0, errors = 0, order = 0;
    double t0 = t_now(), deadline = t0 + 60;
    while (completed < total && t_now() < deadline) {
        for (int i = 0; i < npairs; i++) {
            struct pair *p = &P[i];
            /* keep up to DEPTH-1 outstanding; posting waits for the slot's verification */
            while (p->posted < per && p->posted - p->done < DEPTH - 1 && p->rq_tail - p->recvs_done < DEPTH)
                post_one(p);
        }
        struct ibv_wc wc[32];
        int n = ibv_poll_cq(A.cq, 32, wc);
        for (int w = 0; w < n; w++) {
            struct pair *p = NULL;
            for (int i = 0; i < npairs; i++)
                if (P[i].qa->qp_num == wc[w].qp_num) p = &P[i];
            if (!p || wc[w].status != IBV_WC_SUCCESS) {
                errors++;
                t_diag("send completion error: %s", ibv_wc_status_str(wc[w].status));
                continue;
            }
            if (wc[w].wr_id < p->done) order++;
            for (uint64_t k = p->done; k <= wc[w].wr_id; k++) { /* a signaled CQE retires all before it */
                verify_send_wr(p, k);
                bytes += p->len[k % DEPTH];
            }
            completed += wc[w].wr_id + 1 - p->done;
            p->done = wc[w].wr_id + 1;
        }
        n = ibv_poll_cq(B.cq, 32, wc);
        for (int w = 0; w < n; w++) {
            struct pair *p = NULL;
            for (int i = 0; i < npairs; i++)
                if (P[i].qb->qp_num == wc[w].qp_num) p = &P[i];
            if (!p || wc[w].status != IBV_WC_SUCCESS) {
                errors++;
                t_diag("recv completion error: %s", ibv_wc_status_str(wc[w].status));
                continue;
            }
            int e = (int)(p->rq_head++ % (4 * DEPTH));
            uint64_t k = p->rq_expect[e].k;
            int kind = p->rq_expect[e].kind;
            uint32_t len = p->rq_expect[e].len;
            if (wc[w].byte_len != len) p->bad++;
            if (wc[w].opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
                if (kind != IBV_WR_RDMA_WRITE_WITH_IMM || be32toh(wc[w].imm_data) != (uint32_t)k ||
                    !(wc[w].wc_flags & IBV_WC_WITH_IMM))
                    p->bad++;
            } else {
                uint8_t *b = p->rbuf + (wc[w].wr_id % DEPTH) * SLOT;
                if (kind != IBV_WR_SEND) p->bad++;
                for (uint32_t j = 0; j < len; j++)
                    if (b[j] != pat(p->id, k, j)) {
                        p->bad++;
                        break;
                    }
            }
            p->recvs_done++;
            recvs++;
            post_b_recv(p, wc[w].wr_id + DEPTH);
        }
        if (completed < total) {
            int stuck = 1;
            for (int i = 0; i < npairs; i++)
                if (P[i].posted < per) stuck = 0;
            if (stuck) { /* all posted; the tail may be unsignaled: a signaled 0-byte write retires it */
                for (int i = 0; i < npairs; i++) {
                    struct pair *p = &P[i];
                    if (p->done < per && !p->flushed) {
                        struct ibv_send_wr wr = {.wr_id = per,
                                                 .opcode = IBV_WR_RDMA_WRITE,
                                                 .send_flags = IBV_SEND_SIGNALED},
                                           *bad;
                        wr.wr.rdma.rkey = p->mdst->rkey;
                        wr.wr.rdma.remote_addr = (uintptr_t)p->dst;
                        p->flushed = 1;
                        p->kind[per % DEPTH] = IBV_WR_RDMA_WRITE;
                        p->len[per % DEPTH] = 0;
                        total++;
                        if (ibv_post_send(p->qa, &wr, &bad)) t_die("post flush");
                    }
                }
            }
        }
    }
    double dt = t_now() - t0;
    uint64_t bad = 0;
    for (int i = 0; i < npairs; i++) bad += P[i].bad;
    t_ok(completed == total, "softnic: all %llu WRs on %d QP pairs completed (%.2f s, %.1f MB moved)",
         (unsigned long long)total, npairs, dt, (double)bytes / 1e6);
    t_ok(errors == 0, "softnic: no error completions under load (%llu)", (unsigned long long)errors);
    t_ok(order == 0, "softnic: send completions in posting order");
    t_ok(bad == 0, "softnic: every byte of every SEND/WRITE/WRITE_IMM/READ checked (%llu mismatches)",
         (unsigned long long)bad);
    t_ok(recvs > 0 && recvs <= total, "softnic: %llu receive completions matched to their SEND/WRITE_IMM",
         (unsigned long long)recvs);
    for (int i = 0; i < npairs; i++) {
        struct pair *p = &P[i];
        ibv_destroy_qp(p->qa);
        ibv_destroy_qp(p->qb);
        ibv_dereg_mr(p->msrc);
        ibv_dereg_mr(p->mrdst);
        ibv_dereg_mr(p->mdst);
        ibv_dereg_mr(p->mrbuf);
        ibv_dereg_mr(p->mrdsrc);
        free(p->src);
        free(p->rdst);
        free(p->dst);
        free(p->rbuf);
        free(p->rdsrc);
    }
    free(P);
    ibv_destroy_cq(A.cq);
    ibv_destroy_cq(B.cq);
    ibv_dealloc_pd(A.pd);
    ibv_dealloc_pd(B.pd);
    t_ok(ibv_close_device(A.ctx) == 0 && ibv_close_device(B.ctx) == 0, "softnic: clean close after load");
    return t_done();
}
