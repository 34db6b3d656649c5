/* Internals of `railscope report` shared by analyze_*.c: growable vectors, interval sets, the per-rank
 * state built by the streaming pass (analyze_load.c) and reduced to a summary before the cross-rank join
 * (analyze.c), so that raw per-event data of at most `threads` ranks is in memory at any time. */
#ifndef RAILSCOPE_ANALYZE_INT_H
#define RAILSCOPE_ANALYZE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "analysis.h"

#define AN_PEND_MAX_PUBLIC 65536 /* = AN_PEND_MAX (analyze_local.h) */
/* A send WR of at most this many bytes is control (zero-byte credit SENDs, WRITE_WITH_IMM notifications,
 * NCCL's FIFO/CTS entries): its wire time is nanoseconds at any link rate, so its outstanding time is
 * waiting for the peer, never a network stall (docs/report.md, "Control work requests"). */
#define AN_CTRL_BYTES      64

/* ---- growable arrays ---- */
void *an_grow(void *p, size_t *cap, size_t need, size_t elem); /* aborts the process on OOM */
/* The memory budget of a run's analysis (docs/report.md, "Memory"): B bytes for all its rank files together,
 * split before any file is read (so the cut does not depend on timing or thread count): a file's pass holds at
 * most B / min(files, AN_MAX_THREADS) (at most that many passes run at once), and keeps for the join at most
 * B / files. The files cut are then read again with what the others left: B less what the complete files
 * keep, split evenly between them (analyze.c, load_all), until none is cut or the share would grow by less
 * than a quarter. an_held: bytes of capacity this worker thread's pass has grown (an_grow, the pass's hash
 * maps) since the file's start; an_budget: the pass's limit while it reads events (0 = none). Near the limit,
 * arrays grow by 1/8 instead of doubling. */
#define AN_MAX_THREADS 64
extern __thread uint64_t an_held, an_budget;
/* RAILSCOPE_LOG=debug: one stderr line per file read and per re-read (analyze.c, load_all); set before loading. */
extern int an_debug;
/* What a step costs in the rest of the analysis: the rank's local step, the joined step, the per-step view. */
#define AN_STEP_BYTES 512
/* What a collective record costs after the pass (the rank's copy, its joined group, the join's member). */
#define AN_COLL_BYTES 320
#define AN_PUSH(arr, n, cap) \
    (((n) >= (cap) ? (void)((arr) = an_grow((arr), &(cap), (n) + 1, sizeof *(arr))) : (void)0), &(arr)[(n)++])

/* ---- interval sets: [a, b) in ns ---- */
struct iv {
    uint64_t a, b;
};
struct ivec {
    struct iv *v;
    size_t n, cap;
};
void iv_push(struct ivec *s, uint64_t a, uint64_t b);
/* Add [a, b). Back-to-back work on one stream arrives in order: the common case extends the last interval
 * (inline: it runs once per kernel/copy) instead of growing the set. */
static inline void iv_add(struct ivec *s, uint64_t a, uint64_t b)
{
    if (b <= a) return;
    if (s->n && a >= s->v[s->n - 1].a && a <= s->v[s->n - 1].b) {
        if (b > s->v[s->n - 1].b) s->v[s->n - 1].b = b;
        return;
    }
    iv_push(s, a, b);
}
void iv_normalize(struct ivec *s); /* sort and merge overlapping/touching intervals */
void iv_free(struct ivec *s);
/* For a normalized set: covered length within [a, b). */
uint64_t iv_cover(const struct ivec *s, uint64_t a, uint64_t b);
/* out = (s within [a,b)) minus the union of the normalized sets in minus[]; out normalized. */
void iv_clip_minus(const struct ivec *s, uint64_t a, uint64_t b, const struct ivec *const *minus, int nminus,
                   struct ivec *out);
uint64_t iv_total(const struct ivec *s);

/* ---- per-rank collective, as one rank saw it (local tracer clock) ---- */
#define AN_EXP 4
struct an_lcoll {
    uint64_t comm_hash, seq, handle;
    uint64_t bytes;
    uint64_t host_ts;      /* NCCL_COLL (enqueue) time */
    uint64_t kstart, kend; /* GPU interval (NCCL kernel, else proxy ops, else enqueue) */
    uint64_t rs_end;       /* end of the reduce-scatter half (ring, from send proxy steps), 0 unknown */
    uint64_t up_end;       /* tree: end of this rank's reduce (up) phase, from proxy ops, 0 unknown */
    int32_t nranks, step;  /* step index on this rank, -1 none */
    int32_t nnodes;        /* the communicator's nNodes (plugin init), 0 unknown */
    uint32_t nproxy;       /* NCCL proxy ops of this collective on this rank (network transport) */
    uint64_t qp_lat;       /* latency charged on the busiest QP's bursts in this collective */
    int32_t timed;         /* 1 when the interval is GPU/proxy time, 0 = only the enqueue call */
    int32_t kpaired;       /* 1 when kstart is its NCCL kernel's start (else the enqueue time) */
    char func[24], algo[16];
    /* network in this collective: the busiest send QP */
    uint32_t qp;
    uint32_t conn_mask; /* NCCL's log for this collective's communicator on this rank (bits as an_connlog), 0 none */
    uint64_t qp_bytes, qp_busy;
    uint64_t net_bytes;    /* all send bytes of this rank in the collective */
    struct iv exp[AN_EXP]; /* exposed (not hidden by compute) parts, clipped to the step */
    int nexp;
};

struct an_qpacc {
    uint32_t qp_num;
    int32_t peer_rank;
    uint32_t dest_qpn;
    uint64_t bytes_sent, sends, busy, max_wait; /* data WRs only */
    uint64_t lat;                               /* base latency charged per data burst */
    uint64_t ctrl_sends, ctrl_busy;             /* control WRs (<= AN_CTRL_BYTES): count, outstanding union */
    uint64_t posted[RS_AN_MEMKINDS];
    uint64_t send_wrs, recv_wrs; /* WRs posted (each counted once, whatever its size) */
    uint64_t bounce_d2h, bounce_h2d;
};

/* Per-step local attribution before the collective split (ns). */
struct an_lstep {
    int64_t id;
    uint64_t start, end;            /* local clock */
    uint64_t t[RS_CAT_COUNT];       /* PEER_WAIT/INTRA/NET/STALL of collectives added in the join */
    uint64_t coll_exposed;          /* to be split */
    uint64_t free_busy, free_bytes; /* network sends outside collectives: busy time, bytes */
    uint64_t free_lat;              /* base latency charged to those sends' bursts */
    uint64_t arrive;                /* first data-carrying send posted in the step (local clock), 0 none */
    uint64_t answer_rc; /* the last data-carrying receive completion polled since the rank's previous data send and
                         * before `arrive`: the first send may answer it (analyze_join.c verbs_stragglers), 0 none */
#define AN_STEP_BUSY 8
    struct iv busy[AN_STEP_BUSY]; /* the first data-send busy intervals from `arrive` on (peer-wait split) */
    int nbusy;
    uint32_t answer_aux; /* answer_rc's IBV_WC hdr.aux: the polls before it (RS_WC_AUX_*; 0 in older traces) */
    uint32_t answer_qp, answer_dqp; /* answer_rc's QP and its remote QP (modify_qp's dest_qpn; 0 unknown) */
    uint32_t answer_evwait;         /* answer_rc came through a wait for its CQ's event (tsb evwait) */
    uint64_t answer_blocked; /* the start of the wait for the event answer_rc's rank was blocked in until it came (local
                              * clock; analyze_net.c wc_polls), 0 none */
};

/* A data-send run of one QP outside collectives (verbs programs): its QP, the remote QP it is connected to (modify_qp's
 * dest_qpn), post and completion (local clock). The join finds in them the send whose message a receive completion
 * polled (analyze_join.c msg_sent). */
struct an_qsend {
    uint64_t post, done;
    uint32_t qp, dqp;
};

/* A host check kept per rank: rs_an_hostcheck's strings (as truncated there) in one block,
 * "check\0subject\0msg\0fix\0", instead of its fixed ~800 bytes. */
struct an_chk {
    char *s;
    int fail;
};
/* The rs_an_hostcheck it stands for (host set from `host`), byte for byte. */
void an_chk_expand(const struct an_chk *c, const char *host, struct rs_an_hostcheck *out);

/* What survives of a rank after its pass. */
struct an_rank {
    struct rs_an_rank out; /* filled progressively; steps/qps allocated at the end */
    char boot_id[64];
    int64_t anchor_offset; /* realtime - mono (median of CLOCK anchors) */
    int have_anchor;
    double link_gbps; /* from this rank's host facts, 0 unknown */
    char link_fact[48];
    int peermem;                                /* -1 unknown, 0 absent, 1 loaded */
    int has_gpu, has_verbs, has_nccl, has_cuda; /* has_cuda: any CUDA event (copy calls, windows) */
    int has_copy_calls;                         /* the cudart wrappers saw a host/GPU copy */
    int verbs_off; /* the header's event families leave verbs out (RAILSCOPE_EVENTS): no WR proves nothing */
    char step_source[32];
    /* NVTX ranges with a step-like name that were not taken as steps (too few) on a rank whose steps came from
     * elsewhere (analyze_local.c step_hint): the likeliest name as written, cut at its counter ("" none), how
     * many ranges, 1 when the name is a step word (else a name with a counter); the join's hint names it with the
     * --step-marker that would use them (an_step_marker_warning). */
#define AN_STEP_HINT 48
    char step_hint[AN_STEP_HINT];
    uint32_t step_hint_n;
    int step_hint_word;
    int round_trips;      /* its data sends are request/response round trips (analyze_local.c round_trips) */
    char coll_source[32]; /* "" = NCCL profiler plugin records */
    char noprof_why[112]; /* with coll_source: why there were none, where the rank's facts say ("" unknown) */
    size_t ncalls_timed;  /* with coll_source: collectives timed by their NCCL kernel (sampling windows) */
    uint64_t base_lat;    /* measured base latency of this rank's WRs (ns) */
    int net_only;         /* NCCL's log: every connection of this rank through a network transport */
    /* NCCL's ProxyOps recorded without a ProxyStep or a verbs WR (RAILSCOPE_NCCL_MASK without proxystep and net):
     * its collectives' network time was not measured, only their spans (analyze_join.c join_coll) */
    int net_unmeasured;
    int gdr; /* NCCL's log, NET/IB connections: 1 all with GPUDirect RDMA, 2 some, 0 none, -1 unknown */
    size_t nlsteps;
    struct an_lstep *lsteps;
    size_t nqsends;
    struct an_qsend *qsends; /* its data-send runs by QP, sorted by (qp, dqp, post) (analyze_local.c qsends) */
    size_t ncolls;
    struct an_lcoll *colls;
    size_t nqps;
    struct an_qpacc *qps;
    uint64_t bounce_copy_ns; /* time of device<->host copies adjacent to network WRs */
    uint64_t free_net_bytes; /* send bytes outside collectives (verbs-only programs) */
    uint64_t untraced_ns;    /* step time outside kernel-tracing windows, counted as other */
    uint64_t steps_ns;
    uint64_t lost_wrs;     /* sends never completed beyond the per-QP outstanding limit */
    uint64_t cut_events;   /* memory budget reached: events after the cut, counted but not analysed */
    uint64_t cut_steps;    /* memory budget reached: steps found but left out */
    uint64_t budget;       /* the most this rank's pass could hold (bytes): run budget / min(files, 64) at first */
    uint64_t share;        /* the most it keeps after its pass for the join: run budget / files at first */
    char err[RS_AN_TEXT];  /* unreadable: why */
    size_t nchecks;        /* doctor's WARN/FAIL verdicts on this rank's host facts, compact (a */
    struct an_chk *checks; /* 1024-rank run keeps ~16 per rank until the join): an_chk_expand */
};

/* A process with no rank and nothing traced (a launcher such as torchrun, a shell) is not a rank of the job. */
static inline int an_is_launcher(const struct an_rank *r)
{
    /* a process that copies between host and GPU is a worker even when its kernel windows recorded nothing
     * (session 11: a lone transformer whose windows missed its steps was taken for a launcher and left out of the
     * sampling counts). Steps do not tell: a launcher is given the job's steps too. */
    return r->out.rank < 0 && r->out.input != RS_AN_UNREADABLE && !r->has_gpu && !r->has_verbs && !r->has_nccl &&
           !r->ncolls && !r->has_copy_calls;
}

/* Read one file and reduce it (analyze_load.c + analyze_local.c). Never fails: an unreadable file gives
 * an an_rank with out.input = RS_AN_UNREADABLE and err set. */
void an_load_rank(const char *path, const struct rs_report_opts *o, double link_gbps_hint, struct an_rank *r,
                  volatile uint64_t *events_progress, uint64_t pass_cap, uint64_t share);
/* A worker thread is done loading: frees the per-thread state an_load_rank keeps between files. */
void an_load_done(void);

/* The cross-rank part on loaded ranks (analyze_join.c) and verdicts/findings (analyze_verdict.c). */
void an_join(struct rs_analysis *a, struct an_rank *ranks, size_t n, const struct rs_report_opts *o);
void an_gpudirect(struct rs_analysis *a, struct an_rank *ranks, size_t n);
void an_findings(struct rs_analysis *a, struct an_rank *ranks, size_t n);
void an_verbs_warnings(struct rs_analysis *a); /* verbs failures per rank as warnings; a->verbs_errors */
void an_warn(struct rs_analysis *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Step-likeness of an NVTX range or mark name (0 none .. 3 ProfilerStep#N), its counter (-1 none) and the
 * hash of the name without the counter (analyze_load.c). */
int an_step_name(const char *s, int64_t *id, uint64_t *stem);

/* printf("%.9g", v) into buf (RS_FMT_G9_MAX bytes), byte for byte, without printf's slow exact path for
 * most values (fmt_num.c). Returns the length. */
#define RS_FMT_G9_MAX 32
int rs_fmt_g9(char *buf, double v);

/* The ranks without NCCL profiler records (coll_source set), summed for the run's warning and finding: how many,
 * their collective records and how many a kernel timed, the first reason a rank's facts give and on how many ranks
 * that same reason holds. */
struct an_noprof {
    int ranks, nwhy;
    size_t calls, timed;
    const char *why; /* NULL: none known */
};
struct an_noprof an_noprof_sum(const struct an_rank *R, size_t n);

#endif
