/* softnic: a userspace software RDMA NIC behind a replacement libibverbs.so.1 (a TEST DEVICE).
 *
 * Objects are the real rdma-core 44 structs (compiled against <infiniband/verbs.h>) wrapped in our own
 * bookkeeping.  Each opened context is one "port" with its own link model and two threads:
 *   RX  reads the wire (epoll over the QP sockets), applies requests to registered memory, turns
 *       responses into completions; it writes only header-only responses (ACK/NAK), never blocking (no
 *       RX/RX deadlock between processes), before the receive completion they acknowledge is posted;
 *   TX  writes requests from post_send, READ responses, and ACK/NAKs RX could not write (socket full, or a
 *       READ response ahead), serialised through the link model (rate, latency, PFC-like pause).
 * One UNIX stream socket per requester->responder QP pair; see README.md for the protocol. */
#ifndef SOFTNIC_SN_H
#define SOFTNIC_SN_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdint.h>
#include <stddef.h>

#define SN_EXPORT __attribute__((visibility("default")))

#define SN_MAX_SGE    16
#define SN_MAX_INLINE 256
#define SN_MAX_QP_WR  16384
#define SN_MAX_CQE    (1 << 22)
#define SN_MAX_MSG    (1u << 30)

/* ---- configuration and link model (sn_config.c) ---- */
struct sn_config {
    char device[64];                       /* SOFTNIC_DEVICE, default softnic0 */
    char dir[200];                         /* SOFTNIC_DIR: names the abstract-socket namespace of the "fabric" */
    double rate_gbps;                      /* SOFTNIC_RATE_GBPS, default 100 */
    uint64_t latency_ns;                   /* SOFTNIC_LATENCY_US, default 2 */
    uint64_t pause_every_ns, pause_for_ns; /* SOFTNIC_PAUSE=EVERY_MS:FOR_MS */
    int link_eth;                          /* SOFTNIC_LINK=eth: RoCE-like port (LID 0, GID addressing only) */
    uint64_t slice_ns; /* SOFTNIC_SLICE_US, default 100: scheduler slice asked for the RX/TX threads (0: kernel's) */
    /* SOFTNIC_TEST_ACCEPT_DELAY_US (test hook, tests/softnic/t_errors.c): RX sleeps this long between seeing a
     * connection on a live listener and accepting it, widening the window of the accept/destroy race (sn_wire.c) */
    uint64_t test_accept_delay_ns;
};
const struct sn_config *sn_cfg(void);
uint64_t sn_now(void); /* CLOCK_MONOTONIC ns */
/* earliest time >= t at which the port may transmit (outside a pause window) */
uint64_t sn_unpause(uint64_t t);
/* end of a transmission of `bytes` starting no earlier than `start`, stretched by pause windows */
uint64_t sn_tx_end(uint64_t start, uint64_t bytes);
void sn_sleep_until(uint64_t t);
void sn_rate_to_ib(double gbps, uint8_t *speed, uint8_t *width);

/* ---- wire protocol ---- */
enum sn_msg {
    SN_REQ_SEND = 1,
    SN_REQ_WRITE,
    SN_REQ_READ, /* requester -> responder */
    SN_RSP_ACK,
    SN_RSP_NAK,
    SN_RSP_READ, /* responder -> requester */
};
#define SN_F_IMM       1
#define SN_F_SOLICITED 2
#define SN_F_BOUNCE    4 /* requester found a local error: the responder NAKs it back with h.status, keeping order */
struct sn_hdr {
    uint8_t type, flags, rnr_retry, status; /* status: ibv_wc_status of a NAK */
    uint32_t imm;                           /* network order, as the application gave it */
    uint32_t rkey, len;
    uint32_t src_qpn, dst_qpn;
    uint64_t seq; /* per requester QP message number */
    uint64_t raddr;
    uint64_t deliver_at; /* CLOCK_MONOTONIC ns at which the last byte reaches the peer */
};

/* ---- objects ---- */
struct sn_ctx;
struct sn_qp;

struct sn_mr {
    struct ibv_mr mr;
    uint64_t iova;
    unsigned access;
    int live;
};

struct sn_pd {
    struct ibv_pd pd;
    int users; /* MRs, QPs and SRQs on it: dealloc is refused (EBUSY) while any is alive, as rdma-core does */
};
static inline void sn_pd_use(struct ibv_pd *pd, int d)
{
    __atomic_add_fetch(&((struct sn_pd *)pd)->users, d, __ATOMIC_RELAXED);
}

struct sn_cqe {
    struct ibv_wc wc;
    uint64_t ts;
};

struct sn_cq {
    struct ibv_cq_ex ex; /* first: an ibv_cq is a prefix of it */
    struct sn_ctx *ctx;
    pthread_mutex_t lock;
    struct sn_cqe *ring;
    uint32_t cap, head, count;
    int armed, solicited_only;
    struct sn_cqe cur; /* the entry start_poll/next_poll made current */
    uint64_t wc_flags; /* what create_cq_ex asked for */
    int nqp;           /* QPs using it: destroy refuses with EBUSY */
};

struct sn_rwr { /* a posted receive */
    uint64_t wr_id;
    int num_sge;
    struct ibv_sge sge[SN_MAX_SGE];
};

struct sn_rq {
    struct sn_rwr *ring;
    uint32_t cap, head, count, max_sge;
};

struct sn_srq {
    struct ibv_srq srq;
    struct sn_rq rq;
    uint32_t limit;
};

struct sn_swr { /* a posted send, kept until its ACK/NAK/flush */
    uint64_t wr_id, seq, raddr, post_ts;
    enum ibv_wr_opcode opcode;
    unsigned flags;
    uint32_t imm, rkey, len;
    int num_sge, sent;
    struct ibv_sge sge[SN_MAX_SGE];
    uint8_t inl[SN_MAX_INLINE]; /* IBV_SEND_INLINE data, copied at post time */
};

/* a buffered request that cannot be applied yet (no receive posted: RNR; responder not yet RTR) */
struct sn_parked {
    struct sn_parked *next;
    struct sn_hdr h;
    uint64_t budget;  /* ns of waiting left before the NAK; 0 = wait forever (rnr_retry 7) */
    uint64_t charged; /* when the budget was last charged (sn_now) */
    int rnr;          /* waiting for a receive (else for the QP state) */
    uint8_t *data;
};

enum sn_conn_kind { SN_C_WAKE, SN_C_LISTEN, SN_C_RESP, SN_C_REQ };
struct sn_job;
struct sn_conn {
    struct sn_conn *next; /* ctx->conns: freed at close_device only */
    enum sn_conn_kind kind;
    int fd;
    struct sn_qp *qp;
    struct sn_parked *parked, *parked_tail;
    int closing, closed;
    /* responses owed on this (responder) connection, in order, until written: RX writes header-only ones at once
     * (sn_wire.c, out_kick); out_tx: TX has them (a READ response at the head, or the socket was full) */
    struct sn_job *out, *out_tail;
    int out_tx;
    /* a frame whose header RX has read but whose delivery time has not come: RX serves the port's other
     * connections meanwhile (the fd is out of the epoll set until then; RX thread only) */
    struct sn_hdr pend;
    int pending;
};

struct sn_qp {
    struct ibv_qp_ex ex; /* first: ibv_qp is its prefix, ibv_qp_to_qp_ex returns it */
    struct sn_ctx *ctx;
    struct sn_qp *next; /* ctx->qps */
    struct ibv_qp_cap cap;
    int sq_sig_all;
    int dead;        /* destroyed: memory kept until close_device so threads never see freed QPs */
    int destroying;  /* ibv_destroy_qp has begun: RX takes no new request (drops it as for a dead QP) */
    int tx_inflight; /* TX thread is writing for this QP without the lock */
    /* attributes */
    struct ibv_qp_attr attr;
    int attr_mask_set;
    uint32_t dest_qpn;
    /* send queue */
    struct sn_swr *sq;
    uint32_t sq_head, sq_count, sq_sent;
    uint64_t next_seq;
    /* receive queue (unless an SRQ) */
    struct sn_rq rq;
    struct sn_srq *srq;
    /* wire */
    struct sn_conn *listen, *req;
    /* the peer can no longer accept our requests (its QP destroyed or in ERR, its process gone): as on a
     * real NIC nothing tells the requester at once; its retransmit timer runs out after
     * (retry_cnt + 1) x 4.096 us x 2^timeout (sn_wire.c, sn_qp_lost) and then the oldest WR completes
     * with RETRY_EXC_ERR */
    int lost;
    uint64_t lost_budget, lost_charged; /* ns left (0: forever, timeout 0), when last charged */
    uint64_t lost_seq; /* the first request the peer did not take: while lost, nothing from it on succeeds */
    /* qp_ex builder state */
    struct ibv_send_wr *bld;
    struct ibv_sge *bld_sge;
    uint8_t *bld_inl;
    int bld_n, bld_cap, bld_err;
};

#define SN_JOB_FLUSH 16 /* a TX job (not a frame): write the responses owed on job->conn (conn->out_tx) */
struct sn_job {
    struct sn_job *next; /* ctx->txq (requests, SN_JOB_FLUSH) or conn->out (responses) */
    struct sn_qp *qp;
    struct sn_conn *conn; /* responses: the connection the request came on */
    int type;             /* enum sn_msg, or SN_JOB_FLUSH */
    uint32_t sq_idx;      /* requests: SQ slot */
    uint64_t seq, ts;
    uint8_t status;
    void *rd_ptr; /* READ response: responder memory */
    uint32_t rd_len;
    /* header-only responses: the frame, built (delivery time fixed) at the first write, `off` bytes written */
    struct sn_hdr wire;
    int built;
    uint32_t off;
    /* the receive completion this ACK acknowledges: posted once the ACK is written (a process that exits right
     * after polling it does not take the ACK with it) */
    int cqe;
    uint64_t wr_id;
    uint32_t cqe_len;
    enum ibv_wc_opcode cqe_op;
    struct sn_hdr req;
};

struct sn_ctx {
    struct verbs_context vctx; /* the ibv_context applications see is vctx.context */
    pthread_mutex_t lock;      /* QPs, queues, MRs, SRQs; CQs have their own lock (taken after this one) */
    pthread_cond_t cond;       /* tx_inflight / RX command acknowledgements */
    pthread_cond_t tx_cond;
    struct sn_job *txq, *txq_tail;
    uint64_t tx_free; /* link model: when the port's transmitter is next free (TX writes it, RX reads: atomics) */
    int tx_fd;        /* the socket TX is writing without the lock (-1: none): RX must not close it */
    int stop;
    pthread_t rx_thr, tx_thr;
    int epfd, wake_fd, timer_fd, async_rd, async_wr;
    struct sn_conn wake, timer; /* timer: timerfd armed for the earliest pending frame (conn->pending) */
    uint64_t timer_at;
    int npending;
    uint64_t rx_gen, rx_done; /* destroy_qp waits until RX has passed a command generation */
    uint64_t tx_jobs;         /* frames TX has finished (sent or failed): sn_tx_drain's progress mark */
    struct sn_qp *qps;
    struct sn_conn *conns;
    struct sn_mr **mrs;
    uint32_t nmr, capmr;
    int nparked; /* buffered requests waiting for receives/state: post_recv kicks RX only then */
    int nlost;   /* QPs whose retransmit timer runs (qp->lost) */
};

static inline struct sn_ctx *sn_ctx_of(struct ibv_context *c)
{
    return (struct sn_ctx *)((char *)c - offsetof(struct sn_ctx, vctx.context));
}

/* sn_verbs.c */
int sn_cq_push(struct sn_cq *cq, const struct ibv_wc *wc);
struct sn_mr *sn_mr_find(struct sn_ctx *c, uint32_t key, int remote);
/* translate [addr, addr+len) in the MR's address space; NULL if out of bounds */
void *sn_mr_ptr(struct sn_mr *m, uint64_t addr, uint64_t len);
int sn_rq_init(struct sn_rq *rq, uint32_t max_wr, uint32_t max_sge);
int sn_rq_push(struct sn_rq *rq, const struct ibv_recv_wr *wr);
int sn_rq_pop(struct sn_rq *rq, struct sn_rwr *out);
void sn_async_event(struct sn_ctx *c, enum ibv_event_type t, void *obj);

/* sn_qp.c */
void sn_qp_error(struct sn_qp *qp); /* -> ERR, flush everything; ctx lock held */
void sn_send_cqe(struct sn_qp *qp, struct sn_swr *w, enum ibv_wc_status st); /* ctx lock held */
void sn_recv_cqe(struct sn_qp *qp, uint64_t wr_id, enum ibv_wc_status st, enum ibv_wc_opcode op, uint32_t len,
                 const struct sn_hdr *h);
void sn_qp_init_ops(struct sn_qp *qp);
void sn_tx_drain(struct sn_ctx *c, struct sn_qp *qp); /* responses owed to peers leave first */
int sn_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad);
int sn_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
struct ibv_qp *sn_create_qp_ex(struct ibv_context *ctx, struct ibv_qp_init_attr_ex *a);

/* sn_wire.c */
int sn_wire_start(struct sn_ctx *c);
void sn_wire_stop(struct sn_ctx *c);
int sn_qp_listen(struct sn_qp *qp); /* picks a host-unique QPN by binding its address */
/* close the QP's connections (and with `all` its listener) through RX; ctx lock held; returns once
 * neither thread touches them */
void sn_qp_detach(struct sn_qp *qp, int all);
void sn_tx_push(struct sn_ctx *c, struct sn_job *j); /* ctx lock held */
/* the same without waking TX: the caller signals tx_cond after dropping the lock (application threads, see
 * sn_post_send) */
void sn_tx_queue(struct sn_ctx *c, struct sn_job *j);
void sn_qp_lost(struct sn_qp *qp, uint64_t seq); /* request seq (and all after) dropped: start the
                                                  * retransmit timer; ctx lock held */
void sn_qp_unlost(struct sn_qp *qp);             /* stop it (ERR, RESET, destroy); ctx lock held */
void sn_rx_kick(struct sn_ctx *c);               /* new receives / state: RX retries parked requests */
/* post now the receive completions still waiting for their ACK to be written (before an error or flush
 * completion of the QP, which must come after them); ctx lock held */
void sn_out_cqes(struct sn_qp *qp);

#endif
