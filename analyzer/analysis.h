/* The result of `railscope report`: one plain data model that the text, JSON and HTML renderers all read.
 * rs_analyze() fills it from trace files; nothing in here points into reader buffers, so a renderer may run
 * after the inputs are closed. All times are seconds (double) unless the name ends in _ns (aligned run
 * clock: ns since the earliest aligned event of the run, so renderers can draw timelines from 0).
 *
 * Attribution: every step's wall time on a rank is split into the categories below; they add up to the
 * step time (the analyzer asserts it). Per rank and per run totals are sums over steps.
 */
#ifndef RAILSCOPE_ANALYSIS_H
#define RAILSCOPE_ANALYSIS_H

#include <stddef.h>
#include <stdint.h>

/* Attribution categories: X(ENUM, json_key, plain words). Order = precedence when intervals overlap
 * (compute hides everything under it, an exposed H2D copy hides idle time, and so on). */
#define RS_CATS(X)                                                                         \
    X(COMPUTE, compute, "compute")                                                         \
    X(H2D, h2d_exposed, "exposed host-to-device copies")                                   \
    X(INTRA, intra_node_exposed, "exposed NVLink/intra-node communication")                \
    X(NET, network_transfer, "exposed network transfer")                                   \
    X(STALL, network_stall, "network stall (beyond bytes at link rate plus base latency)") \
    X(LATENCY, network_latency, "network latency (round trips, small messages)")           \
    X(PEER_WAIT, peer_wait, "waiting for late ranks (collectives, peer transfers)")        \
    X(IDLE, host_idle, "host/launch idle (GPU idle outside collectives)")                  \
    X(OTHER, other, "other")

enum rs_cat {
#define RS_CAT_ENUM(e, key, words) RS_CAT_##e,
    RS_CATS(RS_CAT_ENUM)
#undef RS_CAT_ENUM
        RS_CAT_COUNT
};
const char *rs_cat_key(int cat);   /* "network_stall" */
const char *rs_cat_words(int cat); /* "network stall (...)" */

/* GPUDirect RDMA verdicts. */
#define RS_GD_VERDICTS(X) X(UNKNOWN, "UNKNOWN") X(USED, "USED") X(NOT_USED, "NOT USED") X(PARTIAL, "PARTIAL")
enum rs_gd_verdict {
#define RS_GD_ENUM(e, s) RS_GD_##e,
    RS_GD_VERDICTS(RS_GD_ENUM)
#undef RS_GD_ENUM
        RS_GD_COUNT
};
const char *rs_gd_name(int verdict);

#define RS_AN_MEMKINDS \
    7 /* enum rs_mem_kind in formats/events_verbs.h: unknown host pinned device managed dmabuf mixed */
#define RS_AN_TEXT 320

/* Evidence behind a GPUDirect verdict (per rank, and per QP with the same fields). */
struct rs_an_gd {
    int verdict;                           /* enum rs_gd_verdict */
    uint64_t mr_bytes[RS_AN_MEMKINDS];     /* registered MR bytes by memory kind */
    uint64_t posted_bytes[RS_AN_MEMKINDS]; /* bytes posted (send + recv WRs) by memory kind */
    uint64_t dmabuf_mrs;                   /* ibv_reg_dmabuf_mr registrations */
    uint64_t bounce_d2h;                   /* sends preceded by a device->host copy of similar size */
    uint64_t bounce_h2d;                   /* receive completions followed by a host->device copy */
    uint64_t posts;                        /* WRs seen (send + receive) */
    uint64_t send_posts;                   /* of those, send WRs */
    char evidence[RS_AN_TEXT];             /* one line in plain words, numbers included */
};

/* One queue pair of one rank. */
struct rs_an_qp {
    uint32_t qp_num;
    int32_t peer_rank;    /* -1 unknown */
    uint64_t bytes_sent;  /* send-side WR bytes */
    uint64_t sends;       /* data-carrying sends (bursts of WRs > 64 B) */
    uint64_t ctrl_sends;  /* control WRs (<= 64 B: credits, acks): in no busy/stall time */
    double ctrl_busy_s;   /* time with a control WR outstanding (synchronisation with the peer) */
    double busy_s;        /* time with data send WRs outstanding (union of post->completion) */
    double ideal_s;       /* bytes_sent / link rate */
    double latency_s;     /* base latency charged once per burst of data WRs (round trips, small messages) */
    double stall_s;       /* busy - ideal - latency, >= 0 */
    double achieved_gbps; /* bytes_sent*8 / busy */
    double max_wait_s;    /* longest single post->completion */
    struct rs_an_gd gd;
};

struct rs_an_step {
    int64_t id;                /* ProfilerStep#N number, marker value, or index from 0 */
    uint64_t start_ns, end_ns; /* aligned run clock */
    double attr[RS_CAT_COUNT]; /* seconds; sum == (end_ns-start_ns)/1e9 */
};

/* Verbs errors of one rank: failed creations and posts, error completions (flushed WRs apart). */
struct rs_an_verrs {
    uint64_t create_fail;   /* ibv_open_device/alloc_pd/create_cq/create_qp/reg_mr/create_srq/... that failed */
    uint64_t post_fail;     /* WRs ibv_post_send/recv refused */
    uint64_t wc_err;        /* completions with an error status other than WR_FLUSH_ERR */
    uint64_t wc_flush;      /* WR_FLUSH_ERR completions (WRs flushed after a QP went to error) */
    uint64_t probes;        /* refused zero-length registrations: a library's capability probe (NCCL's
                             * ibv_reg_mr(pd, NULL, 0) expects EOPNOTSUPP), not an error; counted, not warned */
    double cost_s;          /* time send WRs were outstanding before completing in error */
    char first[RS_AN_TEXT]; /* the first failures, in words ("ibv_create_qp failed: errno 95 ...") */
};

/* Input status per rank file, as the reader reported it. */
enum rs_an_input { RS_AN_COMPLETE = 0, RS_AN_TRUNCATED = 1, RS_AN_CORRUPT = 2, RS_AN_UNREADABLE = 3 };
const char *rs_an_input_name(int st);

struct rs_an_rank {
    int32_t rank; /* from the file header; when absent, index among inputs */
    char host[64];
    uint64_t pid;
    char path[256];
    int input;               /* enum rs_an_input */
    uint64_t events, drops;  /* events read, events the tracer reported lost */
    int64_t clock_offset_ns; /* added to this rank's tracer clock to get the run clock (anchors + refinement) */
    int64_t refine_ns;       /* the part of clock_offset_ns that came from collective-end refinement */
    size_t nsteps;
    struct rs_an_step *steps;
    double attr[RS_CAT_COUNT]; /* sums over steps */
    double step_mean_s;
    struct rs_an_gd gd;
    size_t nqps;
    struct rs_an_qp *qps;
    uint64_t h2d_pageable_bytes, h2d_pinned_bytes;
    double h2d_pageable_s, h2d_pinned_s; /* H2D copy time by source memory (sum of the copies' durations) */
    double late_s;                       /* total time this rank made others wait (as last arrival) */
    double base_latency_s;               /* measured: low percentile of WR post->completion beyond bytes at link rate */
    char transport[48];             /* NCCL's transport as the trace shows it: "NET/Socket", "NET/IB", "P2P/SHM", "" */
    char transport_why[RS_AN_TEXT]; /* the evidence, in words */
    struct rs_an_verrs verrs;
};

/* One collective joined across ranks by (comm_hash, seq). */
struct rs_an_coll {
    uint64_t comm_hash, seq;
    char func[24], algo[16];
    uint64_t bytes;                                     /* message size per rank (count * datatype size) */
    int32_t nranks;                                     /* ranks of the communicator */
    int32_t nseen;                                      /* ranks whose traces hold it */
    int64_t step;                                       /* step index of the first rank's step containing it, -1 none */
    uint64_t first_arrival_ns, last_arrival_ns, end_ns; /* aligned */
    int32_t last_rank;                                  /* last-arriving rank */
    double arrival_skew_s;                              /* last - first arrival */
    double dur_s;                                       /* last arrival -> last end: the collective's own time */
    double algbw_gbps, busbw_gbps;                      /* nccl-tests formulas over dur_s; GB/s = 1e9 bytes/s */
    double rs_s, ag_s;                     /* ring: reduce-scatter and all-gather halves (0 when unknown) */
    double reduce_s, bcast_s;              /* tree: reduce (up) phase from the last arrival to the end of the last
                               * rank's reduce, and the broadcast (down) after it (0 when unknown) */
    double intra_s, net_s, lat_s, stall_s; /* split of dur_s */
    char transport[24];                    /* "NET/Socket", "NET/IB", "NET", "P2P/SHM", "" unknown */
    int inter;                             /* 1 through the network (NET), 0 intra-node only, -1 unknown */
    int32_t stall_rank;                    /* rank owning the worst-stalled QP, -1 none */
    uint32_t stall_qp;
};

/* A rank arriving late at collectives. */
struct rs_an_straggler {
    int32_t rank;
    int persistent;      /* late in most steps, costly on average and in most steps (analyze_join.c stragglers) */
    uint64_t late_count; /* collectives where it arrived more than the threshold after the bulk */
    uint64_t of;         /* collectives considered */
    double mean_late_s;  /* mean lateness after the bulk (the lower median of the arrivals, late_ranks) */
    double cost_s;       /* the others' exposed wait for it (their peer_wait where it was the late rank),
                          * summed over the run, mean over the run's ranks (mean_ranks), like attr[] */
    double cost_per_step_s;
    uint64_t costly_steps; /* steps where the others' wait for it cost at least RS_AN_STRAGGLER_MIN_COST of the mean
                            * step (on cost_s's basis) */
};
/* A persistent straggler costs the others at least this fraction of the mean step, on average and in most steps
 * (docs/report.md "Stragglers"). */
#define RS_AN_STRAGGLER_MIN_COST 0.02

/* The peer-wait finding's straggler verdict (analyzer/analyze_verdict.c), kept as data beside its words so
 * scripts need not parse them (JSON findings[].straggler). */
enum rs_an_sv { RS_SV_NONE, RS_SV_RANK, RS_SV_TIE };
/* Late ranks whose costs are within this fraction of the costliest's tie: none of them is "the" straggler. */
#define RS_AN_STRAGGLER_TIE 0.05

/* The GPUDirect finding's key in JSON (findings[].category): a configuration fault, in no attribution category. */
#define RS_AN_GD_FINDING    "gpudirect"
/* GPUDirect RDMA not used is ranked among the findings as at least this share of the step time (a configuration
 * fault worth naming when cheap); its cost_s and step_frac stay what was measured (its bounce copies). */
#define RS_AN_GD_RANK_FLOOR 0.05

/* A plain-words finding, ranked by cost. */
struct rs_an_finding {
    int cat;          /* enum rs_cat it explains; -1 for the GPUDirect finding (gpudirect 1) */
    int gpudirect;    /* GPUDirect RDMA not used where there is GPU memory: JSON category RS_AN_GD_FINDING */
    int32_t rank;     /* -1 all/none */
    uint32_t qp;      /* 0 none */
    double cost_s;    /* over the run, per rank (mean) */
    double step_frac; /* cost as a fraction of mean step time */
    int sv;           /* peer_wait only: enum rs_an_sv (RS_SV_RANK: rank is the straggler) */
    size_t ntied;     /* RS_SV_TIE: the first ntied of rs_analysis.stragglers (most costly first) tie */
    char text[RS_AN_TEXT];
};

struct rs_analysis {
    size_t nranks;
    struct rs_an_rank *ranks; /* sorted by rank */
    size_t ncolls;
    struct rs_an_coll *colls; /* sorted by first arrival */
    size_t nstragglers;
    struct rs_an_straggler *stragglers;
    size_t nfindings; /* at most 3 */
    struct rs_an_finding findings[3];

    double attr[RS_CAT_COUNT]; /* mean over ranks (the mean_ranks with steps) of per-rank totals */
    size_t mean_ranks;         /* ranks with steps: attr[] and the stragglers' cost_s are means over them */
    double step_mean_s;        /* mean step time over ranks and steps */
    uint64_t nsteps;           /* steps per rank (max) */
    char step_source[32];      /* "nvtx ProfilerStep", "marker NAME", "collectives", "verbs", "none" */
    double link_gbps;          /* rate used for ideal transfer times */
    char link_source[48];      /* "host fact ib/...", "--link-gbps", "softnic", "default" */
    double residual_skew_s;    /* max |end - median end| over joined collectives after alignment */
    double anchor_skew_s;      /* same, with REALTIME anchors only */
    int one_clock;             /* every rank on one host clock (same boot id): skew 0 by construction */
    int stragglers_known;      /* 0: the trace cannot tell who is late (no collectives, no per-step traffic) */
    char straggler_basis[48];  /* "collectives", "verbs: first data post per step", "" */
    char transport[64];        /* run level: "NET/Socket", "NET/IB", "P2P/SHM", "NET/Socket + P2P/SHM", "" */
    uint64_t verbs_errors;     /* failed creations + posts + error completions over ranks */
    uint64_t events;           /* all events read */
    uint64_t drops;
    int partial;              /* some input truncated/corrupt/unreadable */
    int analysable;           /* 0: no rank traced GPU, CUDA copy, NCCL or verbs activity, and no step was found (a
                     * CPU-only command, a shell): the report is that one line (text), "analysable": false
                     * (JSON), and the numbers, all zero, mean nothing */
    int gd_verdict;           /* run-level */
    int gd_gpu_memory;        /* GPU memory to send from: a GPU program (gpu_program_ranks) or device, managed
                                     * or dmabuf memory registered or posted: NOT USED/PARTIAL is a fault then (the
                                     * GPUDirect finding), else a host-memory program's verdict, not a fault */
    char gd_note[RS_AN_TEXT]; /* the run verdict's qualifier in words ("" none): why it is no fault, or why
                                     * it cannot be known (verbs not captured); text, JSON and HTML print it */
    size_t gpu_ranks;         /* ranks with GPU activity traced (kernels, copies); 0: a host-only program
                                    * (e.g. verbs from host memory): "other" is host work and waits, and
                                    * GPUDirect NOT USED is no finding */
    size_t gpu_program_ranks; /* ranks of a GPU program: GPU activity, host<->device copy calls, sampling
                                     * windows or NCCL (whose buffers are GPU memory) even when no kernel was
                                     * recorded (sampled windows, NCCL staging through host memory) */
    uint64_t run_start_realtime_ns; /* realtime of run clock 0 */
    /* GPU activity sampled in kernel windows (analyze_sampling.c), summed over the ranks that had windows: their
     * steps, those inside windows (measured) and those extrapolated from them, and the windows' share of their
     * step time. sampled_ranks 0: no window events (no GPU, or an old or generated trace; full capture records one
     * window over the whole run). JSON "sampling". */
    size_t sampled_ranks, sampled_no_step_ranks;
    uint64_t sampled_steps, sampled_in_steps, sampled_extra_steps;
    double sampled_in_share;
    /* Kernel tracing's cost measured in the run itself (analyze_sampling.c): window steps, of ranks with 20+
     * steps wholly outside windows, against those ranks' median step outside. win_excess = the window steps'
     * median over it, less 1 (what tracing every kernel costs a step of this job); win_cost = every step a window
     * touched (its start and stop included) less as many outside medians, as a share of all step time. */
    uint64_t sampled_win_measured;
    double sampled_win_excess, sampled_win_cost;
    /* The same for the detach tails (CUPTI attached, nothing enabled, from a window's close to its finalize:
     * CUDA_KERNEL_WINDOW RS_KWIN_DETACHED, traces since session 20): tails seen and their mean length, steps
     * wholly inside them against the outside median, every step a tail touched (and no window) less as many. */
    uint64_t sampled_tails, sampled_tail_measured;
    double sampled_tail_mean_ms, sampled_tail_excess, sampled_tail_cost;
    /* Collectives nothing timed (NCCL API calls without profiler records, no NCCL kernel in a sampling window) but
     * recorded by every rank of their communicator: the early ranks' wait was estimated from the arrival lag, each
     * rank's call to the last rank's, a lower bound (analyze_join.c lag_waits). lag_colls: how many; lag_wait_s:
     * what the estimate added to peer_wait beyond the calls' own exposed time, mean over ranks like attr[].
     * JSON "peer_wait_estimate". */
    uint64_t lag_colls;
    double lag_wait_s;
    size_t nwarnings, warnings_dropped; /* past the 16th, the last says how many more there were */
    char warnings[16][RS_AN_TEXT];
    size_t nhostchecks; /* doctor's WARN/FAIL verdicts on the recorded host facts, per host */
    struct rs_an_hostcheck *hostchecks;
};

/* A WARN/FAIL verdict of doctor's checks (doctor/doctor_checks.h) run on a host's HOST_FACT snapshot. */
struct rs_an_hostcheck {
    char host[64];
    int fail;       /* 1 FAIL, 0 WARN */
    char check[32]; /* "gdr.peermem", "rdma.port", ... (docs/doctor.md) */
    char subject[64];
    char msg[RS_AN_TEXT];
    char fix[RS_AN_TEXT];
};

struct rs_report_opts {
    const char *step_marker; /* NVTX range/mark or MARK name that delimits steps; NULL = auto */
    double link_gbps;        /* 0 = from host facts / softnic / default */
    int threads;             /* 0 = 2 */
    int progress;            /* print progress on stderr */
    uint64_t max_mem;        /* bytes of analysis state for the whole run (docs/report.md "Memory"); 0 = default */
};
/* The default of max_mem adapts to the machine (rs_report_default_max_mem(threads)): a quarter of physical
 * memory or of the cgroup's limit, at least this floor, at most half the cgroup's limit and half of what an
 * address-space limit (ulimit -v) leaves beside the worker threads' own reserve. A synthetic rank of
 * 2000 steps (1.5 M events) needs 20-24 MiB: a 1024-rank run of them ~10 GiB, so a fixed 512 MiB cut real runs. */
#define RS_REPORT_MAX_MEM_FLOOR (512ull << 20)
uint64_t rs_report_default_max_mem(int threads);

/* Analyse PATHs (files or directories). Returns 0 and *out on success (even when partial: see
 * out->partial), -1 with a one-line message in err when nothing could be analysed. */
int rs_analyze(const struct rs_report_opts *opts, char *const *paths, int npaths, struct rs_analysis **out, char *err,
               size_t errlen);
void rs_analysis_free(struct rs_analysis *a);

/* One step across ranks (the ranks' steps with this id, analyze_join.c step_keys): for "per step" views. */
struct rs_an_runstep {
    int64_t id;           /* the step id, the same on every rank */
    size_t nranks;        /* ranks that have this step */
    double mean_s, max_s; /* step time over ranks */
    int32_t slowest_rank;
    double attr[RS_CAT_COUNT]; /* mean over ranks, seconds */
};
/* Fills a malloc'ed array (free() it); returns its length. */
size_t rs_an_run_steps(const struct rs_analysis *a, struct rs_an_runstep **out);

/* Renderers (analyzer/report_text.c, report_json.c; report_html.c belongs to the exports area). */
#include <stdio.h>
void rs_report_text(const struct rs_analysis *a, FILE *f);
void rs_report_json(const struct rs_analysis *a, FILE *f);

#endif
