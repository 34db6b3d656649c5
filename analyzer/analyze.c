/* rs_analyze(): expand paths, read every rank file on `threads` workers (each file is streamed and reduced
 * to its summary before the worker takes the next, so memory is bounded by the summaries plus `threads`
 * passes), then join ranks and derive verdicts. Progress goes to stderr when asked for and slow. */
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "analyze_int.h"
#include "analyze_sampling.h"
#include "formats/reader.h"
#include "util/xalloc.h"

static const char *const cat_keys[] = {
#define K(e, key, words) #key,
    RS_CATS(K)
#undef K
};
static const char *const cat_words[] = {
#define W(e, key, words) words,
    RS_CATS(W)
#undef W
};
static const char *const gd_names[] = {
#define G(e, s) s,
    RS_GD_VERDICTS(G)
#undef G
};
int an_debug;

const char *rs_cat_key(int c) { return c >= 0 && c < RS_CAT_COUNT ? cat_keys[c] : "?"; }
const char *rs_cat_words(int c) { return c >= 0 && c < RS_CAT_COUNT ? cat_words[c] : "?"; }
const char *rs_gd_name(int v) { return v >= 0 && v < RS_GD_COUNT ? gd_names[v] : "?"; }
const char *rs_an_input_name(int st)
{
    static const char *const n[] = {"complete", "truncated", "corrupt", "unreadable"};
    return st >= 0 && st < 4 ? n[st] : "?";
}

void an_warn(struct rs_analysis *a, const char *fmt, ...)
{
    const size_t cap = sizeof a->warnings / sizeof a->warnings[0];
    if (a->nwarnings >= cap) { /* nothing dropped without a word: the last slot counts what did not fit */
        a->warnings_dropped += a->warnings_dropped ? 1 : 2;
        snprintf(a->warnings[cap - 1], RS_AN_TEXT, "%zu more warnings not shown (a report keeps %zu)",
                 a->warnings_dropped, cap - 1);
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->warnings[a->nwarnings++], RS_AN_TEXT, fmt, ap);
    va_end(ap);
}

struct work {
    char **files;
    int nfiles;
    struct an_rank *ranks;
    const struct rs_report_opts *o;
    int *todo, ntodo; /* this round's files (indexes into files/ranks) */
    int next, done;
    uint64_t events;
    uint64_t budget, pass_cap, share; /* the run's memory budget and this round's split (analyze_int.h, an_held) */
    uint64_t share0;                  /* the first round's: budget / files */
    int rounds, last_cut;             /* rounds read; files read in the last one when there were several */
};

/* A file's loading state: what the report needs has been copied into the analysis by the time it goes. */
static void rank_free(struct an_rank *r)
{
    free(r->colls);
    free(r->qps);
    free(r->lsteps);
    free(r->qsends);
    for (size_t i = 0; i < r->nchecks; i++) free(r->checks[i].s);
    free(r->checks);
}

/* nranks, not w->nfiles: launcher processes are compacted out of w->ranks (and freed) before the end. */
static void work_free(struct work *w, int nranks)
{
    for (int i = 0; i < nranks; i++) rank_free(&w->ranks[i]);
    free(w->ranks);
    rs_paths_free(w->files, w->nfiles);
}

static void *worker(void *arg)
{
    struct work *w = arg;
    for (;;) {
        int i = __atomic_fetch_add(&w->next, 1, __ATOMIC_RELAXED);
        if (i >= w->ntodo) break;
        i = w->todo[i];
        an_load_rank(w->files[i], w->o, w->o->link_gbps, &w->ranks[i], &w->events, w->pass_cap, w->share);
        if (an_debug) {
            const struct an_rank *r = &w->ranks[i];
            fprintf(stderr, "railscope: report: read %s (round %d, %llu bytes kept at most)%s\n", w->files[i],
                    w->rounds + 1, (unsigned long long)r->share, r->cut_events || r->cut_steps ? ": cut" : "");
        }
        __atomic_add_fetch(&w->done, 1, __ATOMIC_RELEASE);
    }
    an_load_done();
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_rank(const void *x, const void *y)
{
    const struct an_rank *a = x, *b = y;
    return a->out.rank < b->out.rank ? -1 : a->out.rank > b->out.rank;
}

static int threads_for_limit(int nt);

/* Phase 1: read this round's files on the worker threads, with progress on stderr when asked for and slow. */
static void load_round(struct work *w, const struct rs_report_opts *opts)
{
    int nf = w->ntodo;
    w->next = w->done = 0;
    w->events = 0;
    int nt = threads_for_limit(opts->threads > 0 ? opts->threads : 2);
    if (nt > nf) nt = nf;
    pthread_t th[AN_MAX_THREADS];
    if (nt > AN_MAX_THREADS) nt = AN_MAX_THREADS;
    int started = 0;
    for (int i = 0; i < nt; i++)
        if (pthread_create(&th[started], NULL, worker, w) == 0) started++;
    if (!started) worker(w);
    double t0 = now_s();
    int shown = 0;
    /* without progress to show, just wait for the workers (polling would add up to 100 ms of wall time) */
    while (opts->progress && __atomic_load_n(&w->done, __ATOMIC_ACQUIRE) < nf) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        double el = now_s() - t0;
        if (opts->progress && el > 2.0) {
            uint64_t ev = __atomic_load_n(&w->events, __ATOMIC_RELAXED);
            fprintf(stderr, "\rrailscope: report: %d/%d files%s, %.1f M events, %.0f s ",
                    __atomic_load_n(&w->done, __ATOMIC_RELAXED), nf, w->rounds ? " read again" : "", ev / 1e6, el);
            shown = 1;
        }
    }
    for (int i = 0; i < started; i++) pthread_join(th[i], NULL);
    if (shown) fprintf(stderr, "\rrailscope: report: %d files read%s%30s\n", nf, w->rounds ? " again" : "", "");
    w->rounds++;
}

/* What a file keeps for the join, as the budget counts it (analyze_int.h): its collectives, steps, QPs and
 * host checks. Depends on the file alone. */
static uint64_t kept_bytes(const struct an_rank *r)
{
    uint64_t b = r->ncolls * (sizeof(struct an_lcoll) + AN_COLL_BYTES) + r->nlsteps * AN_STEP_BYTES +
                 r->nqps * sizeof(struct an_qpacc) + r->nchecks * sizeof(struct an_chk) +
                 r->nqsends * sizeof(struct an_qsend);
    for (size_t i = 0; i < r->nchecks; i++) { /* "check\0subject\0msg\0fix\0" */
        const char *q = r->checks[i].s;
        for (int k = 0; q && k < 4; k++) {
            size_t l = strlen(q) + 1;
            b += l;
            q += l;
        }
    }
    return b;
}

#define AN_BUDGET_ROUNDS 8 /* reads of the files cut, at most (the first round included) */
/* A round reads every file cut again, in full: only worth it when their share grows by a quarter or more. A
 * few % more rarely moves the cut (arrays grow by 1/8 near the limit, steps cost 512 bytes each) and a small
 * file that finished (a launcher beside F ranks) frees only 1/F: 16 ranks of 4 M marks and one of 100 marks
 * at --max-mem 512 were all read twice, +56 % of the time, for the same report. */
#define AN_BUDGET_GROWTH 4 /* read again only if the share grows by at least share / 4 */

/* Phase 1: every file with an even share (budget / files: a file's pass holds at most budget / min(files,
 * AN_MAX_THREADS)); then, while files were cut, what the others keep is subtracted from the budget and the
 * rest is split evenly between the files cut, read again on fresh passes (water-filling). Files that finish
 * under their share so leave the rest to those that need it. Every file's result depends only on the file and
 * its share (never on timing or threads), so each round's split, and the report, are deterministic; a round
 * is read only when the share grows by a quarter or more (AN_BUDGET_GROWTH), which needs a file to have
 * finished in the round before. The total
 * stays within the budget: the files read in a round share what the others do not keep. */
static void load_all(struct work *w, const struct rs_report_opts *opts)
{
    int nf = w->nfiles;
    w->todo = rs_xmalloc((size_t)nf * sizeof *w->todo, "analyze todo");
    for (int i = 0; i < nf; i++) w->todo[i] = i;
    w->ntodo = nf;
    w->share0 = w->share;
    load_round(w, opts);
    while (w->rounds < AN_BUDGET_ROUNDS) {
        uint64_t kept = 0;
        int k = 0;
        for (int i = 0; i < nf; i++) {
            const struct an_rank *r = &w->ranks[i];
            if (r->cut_events || r->cut_steps) w->todo[k++] = i;
            else kept += kept_bytes(r);
        }
        if (!k || kept >= w->budget) break;
        uint64_t pool = w->budget - kept, share = pool / (uint64_t)k;
        if (share <= w->share) break; /* nothing finished under its share: no file would get more */
        if (share - w->share < w->share / AN_BUDGET_GROWTH) { /* too little more to be worth another read */
            if (an_debug)
                fprintf(stderr,
                        "railscope: report: the %d file%s cut not read again: %llu bytes kept each would be "
                        "only %.1f %% more\n",
                        k, k > 1 ? "s" : "", (unsigned long long)share, 100.0 * (share - w->share) / w->share);
            break;
        }
        uint64_t cap = pool / (uint64_t)(k < AN_MAX_THREADS ? k : AN_MAX_THREADS);
        for (int j = 0; j < k; j++) rank_free(&w->ranks[w->todo[j]]); /* their partial state, before the round */
        w->share = share;
        if (cap > w->pass_cap) w->pass_cap = cap;
        w->ntodo = w->last_cut = k;
        load_round(w, opts);
    }
    free(w->todo);
    w->todo = NULL;
}

/* Whether the run holds anything the report explains: GPU, CUDA copy, NCCL or verbs activity in some rank, or
 * steps found (marks, NVTX). Without any, every number is a zero and "0 steps (whole trace)" a puzzle. */
static int any_activity(const struct work *w, int nf, const struct rs_analysis *a)
{
    for (int i = 0; i < nf; i++) {
        const struct an_rank *r = &w->ranks[i];
        if (r->has_gpu || r->has_verbs || r->has_nccl || r->has_cuda || r->ncolls || r->has_copy_calls) return 1;
    }
    return a->nsteps > 0;
}

/* Phase 2: processes with no rank and nothing traced (launchers, shells) are not ranks: leave them out
 * (only while a readable file remains, issue 17 D10). Returns the number of ranks kept. */
static int drop_launchers(struct work *w, int nf, int *idle_out)
{
    int idle = 0, nread = 0; /* launchers are left out only when a readable file remains (issue 17 D10) */
    for (int i = 0; i < nf; i++) {
        struct an_rank *r = &w->ranks[i];
        nread += r->out.input != RS_AN_UNREADABLE;
        if (an_is_launcher(r)) idle++;
    }
    if (idle && idle < nread) {
        int o = 0;
        for (int i = 0; i < nf; i++) {
            struct an_rank *r = &w->ranks[i];
            if (an_is_launcher(r)) {
                rank_free(r);
                continue;
            }
            w->ranks[o++] = w->ranks[i];
        }
        nf = o;
    } else idle = 0;
    *idle_out = idle;
    return nf;
}

/* The memory budget in words: "512 MiB a run", how it was split when there were several rank files, and
 * what the files cut were given from what the others left ("then 14.9 MiB for each of the 2 files cut"). */
static void budget_words(const struct work *w, char *buf, size_t n)
{
    int len = snprintf(buf, n, "%llu MiB a run", (unsigned long long)(w->budget >> 20));
    uint64_t pass0 = w->budget / (uint64_t)(w->nfiles < AN_MAX_THREADS ? w->nfiles : AN_MAX_THREADS);
    if (w->nfiles > 1 && len > 0 && (size_t)len < n) {
        if (w->share0 < pass0)
            len += snprintf(buf + len, n - (size_t)len,
                            ": %.2f MiB a file's pass, %.2f MiB kept for each of %d rank files", pass0 / 1048576.0,
                            w->share0 / 1048576.0, w->nfiles);
        else
            len += snprintf(buf + len, n - (size_t)len, ": %.1f MiB for each of %d rank files", w->share0 / 1048576.0,
                            w->nfiles);
    }
    if (w->rounds > 1 && len > 0 && (size_t)len < n)
        snprintf(buf + len, n - (size_t)len, ", then %.*f MiB for %s %d file%s cut", w->share < (1u << 20) ? 2 : 1,
                 w->share / 1048576.0, w->last_cut > 1 ? "each of the" : "the", w->last_cut,
                 w->last_cut > 1 ? "s" : "");
}

/* Phase 3: rank numbers (after the highest known one where the header has none), order, input warnings.
 * Returns how many files were readable. */
static int number_ranks(struct rs_analysis *a, struct work *w, int nf, int idle)
{
    char bw[224];
    budget_words(w, bw, sizeof bw);
    int cut_files = 0;
    for (int i = 0; i < nf; i++) cut_files += w->ranks[i].cut_events || w->ranks[i].cut_steps;
    if (cut_files > 1) /* the run-wide line first (warnings are capped): how much of the run the budget cut */
        an_warn(a, "the memory budget (%s) cut the analysis of %d of %d rank files", bw, cut_files, w->nfiles);
    int32_t maxr = -1;
    int readable = 0, ncut = 0;
    for (int i = 0; i < nf; i++) {
        if (w->ranks[i].out.rank > maxr) maxr = w->ranks[i].out.rank;
        if (w->ranks[i].out.input != RS_AN_UNREADABLE) readable++;
    }
    for (int i = 0; i < nf; i++)
        if (w->ranks[i].out.rank < 0) w->ranks[i].out.rank = ++maxr;
    qsort(w->ranks, (size_t)nf, sizeof *w->ranks, cmp_rank);
    for (int i = 0; i < nf; i++) {
        struct an_rank *r = &w->ranks[i];
        a->events += r->out.events;
        a->drops += r->out.drops;
        if (r->out.input != RS_AN_COMPLETE) {
            a->partial = 1;
            an_warn(a, "%s: %s: %s", r->out.path, rs_an_input_name(r->out.input), r->err[0] ? r->err : "");
        }
        if (r->cut_events || r->cut_steps) { /* the memory budget (docs/report.md, "Memory") */
            a->partial = 1;
            if (++ncut <= 3 && r->cut_events) /* the first three rank files, the rest in one line below */
                an_warn(a,
                        "%s: partial: the analysis reached its memory budget (%s) after %llu of %llu events; the "
                        "other %llu are counted, not analysed (raise it: --max-mem MIB)",
                        r->out.path, bw, (unsigned long long)(r->out.events - r->cut_events),
                        (unsigned long long)r->out.events, (unsigned long long)r->cut_events);
            if (ncut <= 3 && r->cut_steps)
                an_warn(a, "%s: partial: %llu steps past the memory budget (%s) left out (raise it: --max-mem MIB)",
                        r->out.path, (unsigned long long)r->cut_steps, bw);
        }
        if (i > 0 && r->out.rank == w->ranks[i - 1].out.rank)
            an_warn(a, "rank %d appears in more than one file (%s)", r->out.rank, r->out.path);
    }
    if (ncut > 3) an_warn(a, "%d more rank files reached the memory budget: their analysis is partial too", ncut - 3);
    if (idle)
        an_warn(a, "left out %d process%s with no rank and no traced activity (launchers)", idle, idle > 1 ? "es" : "");
    if (a->drops) an_warn(a, "the tracer dropped %llu events: results may be incomplete", (unsigned long long)a->drops);
    return readable;
}

/* Phase 4: link rate: the option, else the recorded port rate, else a default (said so). */
static void pick_link_rate(struct rs_analysis *a, struct work *w, int nf, const struct rs_report_opts *opts)
{
    /* verbs QPs, or NCCL collectives through a network transport (NET/Socket runs have no QP): their transfer
     * vs stall split rests on the rate */
    int any_net = 0;
    for (int i = 0; i < nf; i++) any_net |= w->ranks[i].nqps > 0 || strstr(w->ranks[i].out.transport, "NET") != NULL;
    if (opts->link_gbps > 0) {
        a->link_gbps = opts->link_gbps;
        snprintf(a->link_source, sizeof a->link_source, "--link-gbps");
    } else {
        for (int i = 0; i < nf; i++)
            if (w->ranks[i].link_gbps > a->link_gbps) {
                a->link_gbps = w->ranks[i].link_gbps;
                snprintf(a->link_source, sizeof a->link_source, "%s", w->ranks[i].link_fact);
            }
        if (a->link_gbps <= 0) {
            a->link_gbps = 100;
            snprintf(a->link_source, sizeof a->link_source, "default (not recorded)");
            if (any_net) an_warn(a, "no link rate recorded in the traces: assuming 100 Gb/s (use --link-gbps)");
        }
    }
}

/* Phase 5: host checks, one set per host (the first rank of each host that has a snapshot). */
static void collect_host_checks(struct rs_analysis *a, struct work *w, int nf)
{
    for (int i = 0; i < nf; i++) {
        struct an_rank *r = &w->ranks[i];
        if (!r->nchecks) continue;
        int seen = 0;
        for (size_t k = 0; k < a->nhostchecks && !seen; k++) seen = !strcmp(a->hostchecks[k].host, r->out.host);
        if (seen) continue;
        struct rs_an_hostcheck *nh =
            rs_xrealloc(a->hostchecks, (a->nhostchecks + r->nchecks) * sizeof *nh, "analyze nh");
        if (!nh) break;
        a->hostchecks = nh;
        for (size_t k = 0; k < r->nchecks; k++)
            an_chk_expand(&r->checks[k], r->out.host, &a->hostchecks[a->nhostchecks + k]);
        a->nhostchecks += r->nchecks;
    }
}

/* Phase 6: warnings about what the inputs lack (sampled kernels, lost WRs, API-only collectives, hashes). */
static void input_warnings(struct rs_analysis *a, struct work *w, int nf)
{
    uint64_t untraced = 0, stepns = 0;
    for (int i = 0; i < nf; i++) {
        untraced += w->ranks[i].untraced_ns;
        stepns += w->ranks[i].steps_ns;
    }
    an_sampling_note(a, untraced, stepns); /* what was sampled and extrapolated (analyze_sampling.c, H_GPU) */
    uint64_t lost = 0;
    for (int i = 0; i < nf; i++) lost += w->ranks[i].lost_wrs;
    if (lost)
        an_warn(a, "%llu send work requests were never completed (more than %d outstanding on a QP): left out",
                (unsigned long long)lost, AN_PEND_MAX_PUBLIC);
    int nohash = 0;
    for (int i = 0; i < nf; i++)
        for (size_t k = 0; k < w->ranks[i].ncolls; k++) nohash += !w->ranks[i].colls[k].comm_hash;
    /* Their collectives are enqueue times unless a kernel sampling window timed them: their GPU time is not split
     * into network and NVLink, and the report cannot see a slow network there (say so, and why when known). */
    struct an_noprof np = an_noprof_sum(w->ranks, (size_t)nf);
    if (np.ranks) {
        char because[160] = "";
        if (np.why) snprintf(because, sizeof because, " (%s%s)", np.why, np.nwhy < np.ranks ? " on some" : "");
        an_warn(a,
                "%d rank%s without NCCL profiler records%s: collectives from the NCCL API calls; %zu of their %zu "
                "collective records timed on the GPU by their NCCL kernel (sampling windows), the others' time is not "
                "split into network and NVLink",
                np.ranks, np.ranks > 1 ? "s" : "", because, np.timed, np.calls);
    }
    if (nohash)
        an_warn(a, "%d collective records without a communicator hash: joined by (function, sequence) only", nohash);
}

/* The memory limit of this process's cgroup (v2 memory.max, v1 memory.limit_in_bytes), 0 if none: a job under
 * Slurm --mem, Kubernetes or docker -m must be cut at its budget, not killed by the OOM killer. */
static uint64_t cgroup_mem_limit(void)
{
    static const char *const f[] = {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
        FILE *fp = fopen(f[i], "re");
        if (!fp) continue;
        char buf[64] = "";
        char *ok = fgets(buf, sizeof buf, fp);
        fclose(fp);
        char *end;
        unsigned long long v = ok ? strtoull(buf, &end, 10) : 0;
        if (ok && end != buf && v > 0 && v < (1ull << 62)) return v; /* "max" or v1's huge value: none */
    }
    return 0;
}

/* What one worker thread reserves of the address space beside the budget: the reader's frame buffers (up to
 * 64 MiB), a stack and its malloc arena's first heap. */
#define AN_THREAD_RESERVE (80ull << 20)

uint64_t rs_report_default_max_mem(int threads)
{
    uint64_t b = RS_REPORT_MAX_MEM_FLOOR, mem = 0;
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages > 0 && psz > 0) mem = (uint64_t)pages * (uint64_t)psz;
    uint64_t cg = cgroup_mem_limit();
    if (cg && (!mem || cg < mem)) mem = cg;
    if (mem / 4 > b) b = mem / 4;
    if (cg && b > cg / 2) b = cg / 2;
    struct rlimit rl; /* under ulimit -v the analysis must stop at its budget, not at a failed allocation */
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        uint64_t res = (uint64_t)(threads > 0 ? threads : 1) * AN_THREAD_RESERVE;
        uint64_t room = rl.rlim_cur > res ? (uint64_t)rl.rlim_cur - res : 0;
        if (room / 2 < b) b = room / 2;
    }
    if (b < (16ull << 20)) b = 16ull << 20;
    return b;
}

/* Worker threads that fit an address-space limit (ulimit -v): each reserves AN_THREAD_RESERVE beside the budget;
 * at most half the limit goes to them (46 small files with --threads 48 under 1 GiB ran out of memory). */
static int threads_for_limit(int nt)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return nt;
    uint64_t fit = (uint64_t)rl.rlim_cur / 2 / AN_THREAD_RESERVE;
    if (fit < 1) fit = 1;
    return (uint64_t)nt > fit ? (int)fit : nt;
}

int rs_analyze(const struct rs_report_opts *opts, char *const *paths, int npaths, struct rs_analysis **out, char *err,
               size_t errlen)
{
    *out = NULL;
    /* Every rank file allocates and frees the same few MB (frame buffers, the pass's arrays): keep them in
     * the heap instead of a fresh mmap per file, whose pages the kernel zero-fills on every touch (~4 % of
     * the CPU on 1024 small files). Peak memory is unchanged: it is what one file's pass needs per worker. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    char **files = NULL;
    int nf = rs_expand_paths(npaths, paths, &files, err, errlen);
    if (nf < 0) return -1;
    if (nf == 0) {
        snprintf(err, errlen, "no trace files given");
        return -1;
    }
    const char *log = getenv("RAILSCOPE_LOG"); /* debug: each file read (the budget's rounds) on stderr */
    an_debug = log && !strcmp(log, "debug");
    struct work w = {.files = files, .nfiles = nf, .o = opts};
    /* The run's memory budget, split by the number of files first, then by what they left (load_all). */
    w.budget = opts->max_mem ? opts->max_mem
                             : rs_report_default_max_mem(threads_for_limit(opts->threads > 0 ? opts->threads : 2));
    w.share = w.budget / (uint64_t)nf;
    w.pass_cap = w.budget / (uint64_t)(nf < AN_MAX_THREADS ? nf : AN_MAX_THREADS);
    w.ranks = rs_xcalloc((size_t)nf, sizeof *w.ranks, "analyze ranks");
    if (!w.ranks) {
        snprintf(err, errlen, "out of memory");
        rs_paths_free(files, nf);
        return -1;
    }
    load_all(&w, opts);
    struct rs_analysis *a = rs_xcalloc(1, sizeof *a, "analyze a");
    int idle = 0;
    nf = drop_launchers(&w, nf, &idle);
    int readable = number_ranks(a, &w, nf, idle);
    if (!readable) {
        snprintf(err, errlen, "no readable trace among %d file%s (%s: %s)", nf, nf > 1 ? "s" : "", w.ranks[0].out.path,
                 w.ranks[0].err);
        work_free(&w, nf);
        rs_analysis_free(a);
        return -1;
    }
    pick_link_rate(a, &w, nf, opts);
    collect_host_checks(a, &w, nf);
    input_warnings(a, &w, nf);
    an_join(a, w.ranks, (size_t)nf, opts);
    an_gpudirect(a, w.ranks, (size_t)nf);
    an_verbs_warnings(a);
    an_findings(a, w.ranks, (size_t)nf);
    a->analysable = any_activity(&w, nf, a);
    if (!a->analysable) snprintf(a->step_source, sizeof a->step_source, "none (nothing analysable)");
    work_free(&w, nf);
    *out = a;
    return 0;
}

void rs_analysis_free(struct rs_analysis *a)
{
    if (!a) return;
    for (size_t i = 0; i < a->nranks; i++) {
        free(a->ranks[i].steps);
        free(a->ranks[i].qps);
    }
    free(a->ranks);
    free(a->colls);
    free(a->stragglers);
    free(a->hostchecks);
    free(a);
}

/* A rank's step for the run's step list: its id, rank index and position. */
struct runref {
    int64_t id;
    size_t i, k;
};
static int cmp_runref(const void *x, const void *y)
{
    const struct runref *a = x, *b = y;
    if (a->id != b->id) return a->id < b->id ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* The run's steps: the ranks' steps with one id (the join numbers them so that an id is one step on every rank and
 * increases on each: analyze_join.c step_keys), in id order; a step a rank lacks is missing there (nranks), never
 * the next one shifted in. Ranks in order within a step, as the sums always were. Should some rank's ids not
 * increase (one rank: the join leaves its ids alone) the steps go by position, as before. */
size_t rs_an_run_steps(const struct rs_analysis *a, struct rs_an_runstep **out)
{
    size_t n = 0, total = 0;
    int by_id = 1;
    for (size_t i = 0; i < a->nranks; i++) {
        const struct rs_an_rank *r = &a->ranks[i];
        if (r->nsteps > n) n = r->nsteps;
        total += r->nsteps;
        for (size_t k = 1; k < r->nsteps && by_id; k++) by_id = r->steps[k].id > r->steps[k - 1].id;
    }
    struct runref *v = NULL;
    if (by_id) {
        v = rs_xmalloc((total + 1) * sizeof *v, "analyze run step refs");
        size_t m = 0;
        for (size_t i = 0; i < a->nranks; i++)
            for (size_t k = 0; k < a->ranks[i].nsteps; k++) v[m++] = (struct runref){a->ranks[i].steps[k].id, i, k};
        if (total) qsort(v, total, sizeof *v, cmp_runref);
        n = 0;
        for (size_t m2 = 0; m2 < total; m2++) n += !m2 || v[m2].id != v[m2 - 1].id;
    }
    *out = rs_xcalloc(n ? n : 1, sizeof **out, "analyze run steps");
    if (!*out) {
        free(v);
        return 0;
    }
    for (size_t k = 0, q = 0; k < n; k++) {
        struct rs_an_runstep *x = &(*out)[k];
        x->slowest_rank = -1;
        for (size_t i = 0; i < a->nranks; i++) {
            const struct rs_an_rank *r = &a->ranks[i];
            const struct rs_an_step *s;
            if (by_id) {
                if (q >= total || (x->nranks && v[q].id != x->id) || v[q].i != i) continue;
                s = &r->steps[v[q++].k];
            } else {
                if (k >= r->nsteps) continue;
                s = &r->steps[k];
            }
            double d = (double)(s->end_ns - s->start_ns) * 1e-9;
            if (!x->nranks) x->id = s->id;
            x->nranks++;
            x->mean_s += d;
            if (d > x->max_s) {
                x->max_s = d;
                x->slowest_rank = r->rank;
            }
            for (int c = 0; c < RS_CAT_COUNT; c++) x->attr[c] += s->attr[c];
        }
        if (x->nranks) {
            x->mean_s /= (double)x->nranks;
            for (int c = 0; c < RS_CAT_COUNT; c++) x->attr[c] /= (double)x->nranks;
        }
    }
    free(v);
    return n;
}
