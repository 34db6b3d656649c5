/* The per-rank pass state shared by analyze_load.c (filling it from events) and analyze_local.c
 * (reducing it to the rank's summary: steps, local attribution, collectives, QPs). */
#ifndef RAILSCOPE_ANALYZE_LOCAL_H
#define RAILSCOPE_ANALYZE_LOCAL_H

#include "analyze_int.h"
#include "doctor/doctor_facts.h"
#include "formats/reader.h"

/* Key and value side by side (one cache line per probe); the key HM_EMPTY marks a free slot, so a real
 * key equal to it lives aside (zero_used/zero_v). */
struct hm_slot {
    uint64_t k, v;
};
struct hmap {
    struct hm_slot *s;
    size_t n, cap;
    int zero_used;
    uint64_t zero_v;
};
void hm_put(struct hmap *m, uint64_t k, uint64_t v);
int hm_get(const struct hmap *m, uint64_t k, uint64_t *v);
void hm_del(struct hmap *m, uint64_t k);
void hm_free(struct hmap *m);
/* The same keyed by two words (a QP and a work request id); values below UINT64_MAX. */
struct hm2_slot {
    uint64_t a, b, v; /* v = value + 1, 0 = free */
};
struct hmap2 {
    struct hm2_slot *s;
    size_t n, cap;
};
void hm2_put(struct hmap2 *m, uint64_t a, uint64_t b, uint64_t v);
int hm2_get(const struct hmap2 *m, uint64_t a, uint64_t b, uint64_t *v);
void hm2_del(struct hmap2 *m, uint64_t a, uint64_t b);
void hm2_free(struct hmap2 *m);

/* Completed sends of one QP whose post->completion intervals overlap (a queue of WRs) are one record:
 * memory follows bursts, not WRs. */
/* ctrl: a burst of control WRs (at most AN_CTRL_BYTES each: credits, acks, doorbells). Their outstanding
 * time is synchronisation with the peer (a SEND waits for the peer's receive), not bytes on the wire: they
 * count in no network busy/stall time, only in the QP's control counters. */
struct wrrec {
    uint64_t post, done, bytes, wr_id;
    uint32_t qp;
    uint8_t mem, bounce, ctrl, pad;
};
struct tsb { /* a receive completion */
    uint64_t ts, bytes;
    uint32_t qp, aux; /* aux: the polls before it (IBV_WC hdr.aux, RS_WC_AUX_*, completed by an_on_wc) */
    uint32_t evwait;  /* 1: it came through a wait for its CQ's event (IBV_GET_CQ_EVENT, blocked or not) */
    uint64_t blocked; /* the start of the wait for its CQ's event it was blocked in until it came (wc_polls), 0 none */
};
/* A CQ's latest poll that returned completions (IBV_WC with the polls' record), the one before (prev, 0 none) and the
 * time since it (UINT64_MAX: none seen); the end of the latest wait for its event that returned it (IBV_GET_CQ_EVENT:
 * ts + dur, 0 none), its start, and that wait's RS_CQEV_* flags */
struct cqpoll {
    uint64_t cq, ts, gap, prev, wake, wstart;
    uint32_t wflags;
};
struct copyrec {
    uint64_t a, b, bytes;
    int d2h, used;
};
/* Send proxy steps of one ProxyOp still in flight (the op is written when it stops, after its steps):
 * merged into bursts, plus each step's end by index for the ring halves. Released when the op arrives,
 * so memory follows ops in flight, not steps. */
struct opacc {
    uint64_t parent, max_wait;
    struct wrrec *runs;
    size_t nruns, runcap;
    uint64_t *ends;
    uint32_t *sidx;
    size_t nends, endcap, sidxcap;
    int used;
};
/* A step range or mark; stem = hash of its name without the counter, prio = how step-like the name is
 * (analyze_load.c step_name: 4 --step-marker, 3 ProfilerStep#N, 2 step/iteration word + counter, 1 a
 * step word alone or any shared name + counter); msg = the string id of its name as written (the step hint
 * names a stem by its first range's, analyze_local.c detect_steps). */
struct srange {
    uint64_t a, b;
    int64_t id;
    uint64_t stem;
    int prio;
    uint32_t msg;
};
struct nvent {
    uint64_t ts;
    int64_t id;
    uint64_t stem;
    uint8_t is_step; /* = prio */
    uint32_t msg;    /* the name's string id */
};
struct nvstack {
    uint32_t tid;
    struct nvent *v;
    size_t n, cap;
};
/* An outstanding send WR. Once indexed (a completion not among the first AN_PEND_SCAN outstanding WRs,
 * analyze_net.c), WRs of one QP with the same wr_id (ids are often reused, or all 0) form a chain, oldest
 * first: next = distance to the next one in pend, 0 none; the oldest also keeps the distance to the newest
 * (last), for appending. The pass's pendmap gives each (QP, wr_id) its oldest indexed outstanding WR. */
struct pendwr {
    uint64_t post, bytes, wr_id;
    uint32_t mem, next, last, msg; /* msg: an opcode that consumes a receive at the peer (a message, not a write) */
};
#define AN_PEND_MAX AN_PEND_MAX_PUBLIC /* outstanding sends kept per QP; older ones never completed are dropped */
struct qpst {
    struct an_qpacc acc;
    struct pendwr *pend; /* outstanding sends in post order, from head */
    size_t head, npend, pendcap;
    uint64_t base;    /* sequence number of pend[0] (pendmap's values: base + index; compaction moves base) */
    uint64_t indexed; /* WRs of sequence number below this are in pendmap (those still outstanding) */
    long last_run;    /* index in wrs of this QP's latest completed run, -1 none */
    long last_msg;    /* index in r->qsends of this QP's latest run of messages, -1 none */
};

/* The step source of a request/response exchange (a ping-pong): each data send is one round trip. Arrivals
 * of such steps are not compared across ranks (analyze_join.c verbs_stragglers): each rank's send answers
 * the other's, so one of them is always "later" by the round trip. */
#define AN_ROUND_TRIPS   "verbs round trips"
/* The step source of a rank whose steps came from --step-marker NAME: AN_MARKER_SOURCE "NAME". */
#define AN_MARKER_SOURCE "marker "

/* msg_is_step's memo (analyze_load.c): a message id's step verdict, by id modulo its size */
#define AN_STEP_MEMO 256
struct step_memo {
    uint32_t msg;
    uint8_t known, prio;
    int64_t id;
    uint64_t stem;
};

struct pass {
    struct rs_reader *rd;
    struct an_rank *r;
    const struct rs_report_opts *o;
    uint64_t first_ts, last_ts;
    uint64_t proc_end_ts; /* the process's exit (PROC_END), 0 without one: not in last_ts (a core kind) */
    int32_t nranks;
    uint8_t *kcls;
    size_t kcls_n;
    struct step_memo step_memo[AN_STEP_MEMO];
    struct ivec compute, nk, h2d, other;
    struct ivec kwin;   /* kernel-tracing windows (CUDA_KERNEL_WINDOW on..off) */
    uint64_t kwin_open; /* start of the open window, 0 none */
    /* after windows, until CUPTI was finalized (CUDA_KERNEL_WINDOW RS_KWIN_DETACHED): attached, nothing enabled */
    struct ivec ktail;
    uint64_t kwin_closed; /* end of the last window not yet followed by its detach, 0 none */
    int kwin_seen;
    int kwin_all; /* a CUDA_KERNEL_WINDOW said mode 2: every kernel traced (RAILSCOPE_CUDA_KERNELS=all) */
    struct copyrec *copies;
    size_t ncopies, copycap;
    struct an_lcoll *colls;
    size_t ncolls, collcap;
    struct an_lcoll *calls;
    size_t ncalls, callcap; /* NCCL_CALL: collectives when the plugin is absent */
    struct hmap collmap, sendwait, qpmap, nvstart;
    struct hmap2 pendmap; /* (qp_num, wr_id) -> sequence number of the oldest outstanding send with it */
    struct opacc *accs;
    size_t naccs, acccap;
    struct hmap accmap; /* ProxyOp handle -> accs index */
    size_t *freeacc;
    size_t nfreeacc, freecap;
    struct wrrec *pruns;
    size_t npruns, pruncap; /* send-step bursts per proxy channel (stand-in QPs) */
    struct treeop *treeops;
    size_t ntreeops, treeopcap; /* tree AllReduce proxy ops, for the phases */
    struct wrrec *wrs;
    size_t nwrs, wrcap, qsendcap;
    struct tsb *rwc;
    size_t nrwc, rwccap;
    struct cqpoll *cqp; /* per CQ (an_on_wc), cqp_last its latest one's index + 1 (0 none) */
    size_t ncqp, cqpcap, cqp_last;
    struct hmap cqpmap; /* cq -> index in cqp */
    struct qpst *qps;
    size_t nqps, qpcap;
    /* qp_get's cache: a rank alternates between a few QPs (send, receive); key 1 << 32 | qp_num, 0 empty */
    uint64_t qpc_key[2];
    size_t qpc_i[2];
    /* The latest SendWait state, in front of the sendwait map (the plugin writes a step's SendWait just
     * before the step, so most never reach the map): it holds the newest value for its handle; the map may
     * hold an older one for the same handle, removed when the step consumes the cached one. */
    uint64_t sw_h, sw_ts;
    int sw_valid;
    /* acc_get's cache: the last ProxyOp looked up (steps of one op come in runs); cleared on release */
    uint64_t acc_last_op;
    size_t acc_last_i;
    int acc_last_valid;
    struct nvstack *nv;
    size_t nnv, nvcap, nv_last; /* nv_last: the last stack nv_stack() returned */
    struct hmap nvmap;          /* tid -> nv index */
    struct nvent *starts;
    size_t nstarts, startcap;
    struct srange *ranges;
    size_t nranges, rangecap;
    struct srange *marks;
    size_t nmarks, markcap;
    int64_t *anchors;
    size_t nanchors, anchorcap;
    uint64_t mr_bytes[RS_AN_MEMKINDS], posted[RS_AN_MEMKINDS], dmabuf_mrs, posts;
    uint64_t lost_wrs; /* sends forgotten after AN_PEND_MAX outstanding on a QP */
    /* data sends posted >= 50 us after the rank's previous data send: the arrival of a step is its first
     * (completed sends merge into bursts across steps when a step starts before the last one completed) */
    uint64_t *gposts, last_dpost;
    size_t ngposts, gpostcap;
    /* NCCL transport evidence (analyze_load.c): per communicator nNodes from the plugin's init, net plugin
     * events by type, proxy ops; the report's transport comes from these (an_transport) */
    struct an_comm *comms;
    size_t ncomms, commcap;
    struct hmap commmap; /* comm_hash -> its latest entry in comms (a collective looks its communicator up) */
    uint64_t net_ib_ev, net_sock_ev, proxy_ops, prof_mask;
    uint64_t proxy_steps; /* NCCL_PROXY_STEP events: none with ProxyOps means a mask without proxystep/net */
    int env_socket;       /* NCCL_NET=Socket or NCCL_IB_DISABLE=1 recorded in the host facts */
    /* NCCL_TRANSPORT events (NCCL's own log of each connection): bit t = transport t seen on a connection
     * (1 P2P, 2 SHM, 3 NET/IB, 4 NET/Socket, 5 other NET, 6 CollNet, 7 NVLS), connections, GPUDirect RDMA
     * ("/GDRDMA" in NCCL's text), the first NET text */
    uint32_t conn_mask;
    struct an_connlog { /* the same bits per communicator: each collective's transport from its own */
        uint64_t hash;
        uint32_t mask;
    } * connlog;
    size_t nconnlog, connlogcap;
    struct hmap connmap;               /* comm_hash -> index in connlog */
    uint64_t nconn, gdr_conn, ib_conn; /* ib_conn: NET/IB connections (gdr_conn: those of them with GDRDMA) */
    char conn_via[32];
    int verbs_captured;    /* the header's event families include verbs (else no verbs WRs proves nothing) */
    struct rs_facts facts; /* HOST_FACT snapshot, for doctor's checks */
    size_t chkcap;
};

struct an_comm {
    uint64_t hash;
    int32_t nnodes, nranks;
    int32_t nranks_pos, pad; /* the latest nranks > 0 among this hash's entries so far, 0 none */
};
/* analyze_load.c: a verbs failure of this rank (creation, post, completion) in the rank's summary */
void an_verr(struct pass *p, uint64_t ts, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* One proxy op of a tree AllReduce: which collective, with whom, which way, when it ended. */
struct treeop {
    size_t ci;
    uint32_t channel;
    int32_t peer;
    uint32_t is_send;
    uint64_t end;
};
void an_tree_phases(struct pass *p);

struct qpst *qp_get_slow(struct pass *p, uint32_t qp_num);
static inline struct qpst *qp_get(struct pass *p, uint32_t qp_num)
{
    const uint64_t key = 1ull << 32 | qp_num;
    if (p->qpc_key[0] == key) return &p->qps[p->qpc_i[0]];
    if (p->qpc_key[1] == key) return &p->qps[p->qpc_i[1]];
    return qp_get_slow(p, qp_num);
}
void an_on_proxy_state_sendwait(struct pass *p, uint64_t handle, uint64_t ts);
void an_proxy_flush(struct pass *p); /* steps whose op never arrived (truncated trace) */
/* analyze_net.c: event handlers for the network side of the pass */
void an_on_post_send(struct pass *p, const struct rs_ev_IBV_POST_SEND *e);
void an_on_post_recv(struct pass *p, const struct rs_ev_IBV_POST_RECV *e);
void an_on_wc(struct pass *p, const struct rs_ev_IBV_WC *e);
void an_on_cq_event(struct pass *p, const struct rs_ev_IBV_GET_CQ_EVENT *e);
void an_on_proxy_step(struct pass *p, const struct rs_ev_NCCL_PROXY_STEP *e);
void an_on_proxy_op(struct pass *p, const struct rs_ev_NCCL_PROXY_OP *e);
void an_local(struct pass *p, double link_gbps_hint);
/* For the join (the passes have set each rank's step_source and step hint): with --step-marker NAME, a warning when
 * NAME delimited no step on some rank, whose steps then came from another source (issue s17: a sixfold step count,
 * silently). Without it, a hint when a rank's steps came from elsewhere than NVTX ranges while it had ranges with a
 * step-like name that were not taken (too few): their name and the --step-marker that would use them. */
void an_step_marker_warning(struct rs_analysis *a, const struct an_rank *R, size_t n, const struct rs_report_opts *o);
/* The length of an NVTX range or mark name cut at its counter, as an_step_name parses it ("fwd_bwd 5" -> 7,
 * "train_step" -> 10, "step [5/30]" -> 4); 0 when it has no stem. */
size_t an_step_stem_len(const char *s);
void an_pass_free(struct pass *p);
void an_pass_recycle(struct pass *p); /* free one file's state, keep the arrays' memory for the next */

#endif
