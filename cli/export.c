/* `railscope export`: trace files -> Perfetto protobuf, Chrome JSON or Kineto JSON (formats/export.h).
 * Two passes over the inputs: headers first (the earliest start is the run's time origin, so every rank
 * is placed on one realtime axis), then each file streamed through the exporter. Memory stays bounded
 * by the exporter's per-track state whatever the trace length.
 *
 * With several inputs and CPUs, files are exported in parallel (-j): one exporter per file writes a part
 * (a Perfetto packet sequence per process, disjoint ids), and the parts are concatenated in input order
 * into OUT. A serial export numbers processes, tracks and sequences the same way (rs_exp_opts.index_stride),
 * so the result is byte for byte a serial export's, in every format. Kineto writes one file per rank anyway. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyzer/analysis.h"
#include "cli.h"
#include "formats/export/export.h"
#include "formats/reader.h"
#include "util/xalloc.h"

/* The analyzer may be missing from a partial build: findings are then simply not available. */
extern int rs_analyze(const struct rs_report_opts *opts, char *const *paths, int npaths, struct rs_analysis **out,
                      char *err, size_t errlen) __attribute__((weak));
extern void rs_analysis_free(struct rs_analysis *a) __attribute__((weak));

static void usage(FILE *f)
{
    fprintf(f, "usage: railscope export --format perfetto|chrome|kineto -o OUT [options] PATH...\n"
               "\n"
               "Convert railscope traces (files, or directories of *.rtrace) for trace viewers. Ranks are put on\n"
               "one time axis with each file's REALTIME clock anchors.\n"
               "\n"
               "  --format perfetto   Perfetto protobuf (.pftrace): open in https://ui.perfetto.dev (best for\n"
               "                      large traces; no size limit of JSON viewers)\n"
               "  --format chrome     Chrome trace-event JSON: chrome://tracing or ui.perfetto.dev\n"
               "  --format kineto     Kineto/PyTorch-profiler flavoured JSON, one file per rank in directory\n"
               "                      OUT (rankN.pt.trace.json), loadable by Holistic Trace Analysis\n"
               "  -o, --output OUT    output file (perfetto, chrome; '-' = stdout) or directory (kineto)\n"
               "  --split             chrome: write OUT.0.json, OUT.1.json ... of at most --split-mb each\n"
               "  --split-mb N        size limit for --split and for the size warning (default 500)\n"
               "  --bw-bin-us N       bin width of the bandwidth counters in microseconds (default 1000)\n"
               "  --no-flows          leave out flow arrows (CUDA call -> GPU work, post -> completion)\n"
               "  --findings          run the analyzer and add its findings as instants on a 'findings' track\n"
               "                      (perfetto, chrome)\n"
               "  -j, --jobs N        export N files at once, each into a part, parts joined in input order\n"
               "                      (default 1; the same bytes as -j 1; pays with many ranks on many cores)\n"
               "  -q, --quiet         no summary or warnings on stderr\n"
               "\n"
               "Exit status: 0 done, 1 done but some input was truncated or damaged, 2 usage or input error.\n");
}

static int parse_format(const char *s, enum rs_exp_format *f)
{
    if (!strcmp(s, "perfetto") || !strcmp(s, "pftrace") || !strcmp(s, "proto")) *f = RS_EXP_PERFETTO;
    else if (!strcmp(s, "chrome") || !strcmp(s, "json")) *f = RS_EXP_CHROME;
    else if (!strcmp(s, "kineto") || !strcmp(s, "hta")) *f = RS_EXP_KINETO;
    else return -1;
    return 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    unsigned long long n = strtoull(s, &end, 10);
    if (!*s || *end || s[0] == '-') return -1;
    *v = n;
    return 0;
}

static void add_findings(struct rs_exp *x, char **paths, int n, int quiet)
{
    if (!rs_analyze) {
        if (!quiet) fprintf(stderr, "railscope: warning: --findings: the analyzer is not in this build\n");
        return;
    }
    struct rs_report_opts ro = {0};
    const char *mm = getenv("RAILSCOPE_REPORT_MAX_MEM"); /* report's memory budget (docs/report.md, "Memory") */
    uint64_t mib;
    if (mm && !parse_u64(mm, &mib) && mib >= 16 && mib <= (1ull << 20)) ro.max_mem = mib << 20;
    struct rs_analysis *a = NULL;
    char err[256];
    if (rs_analyze(&ro, paths, n, &a, err, sizeof err) || !a) {
        if (!quiet) fprintf(stderr, "railscope: warning: --findings: %s\n", err);
        return;
    }
    for (size_t i = 0; i < a->nfindings; i++) {
        char title[96];
        snprintf(title, sizeof title, "finding %zu: %.1f%% of step time", i + 1, a->findings[i].step_frac * 100);
        rs_exp_annotation(x, 0, title, a->findings[i].text);
    }
    for (size_t i = 0; i < a->nwarnings && i < 8; i++) rs_exp_annotation(x, 0, "analysis warning", a->warnings[i]);
    if (rs_analysis_free) rs_analysis_free(a);
}

/* One input file through an exporter. Returns 0, 1 if the input was partial, -1 if the exporter refused it. */
/* Reading (zstd + decoding) overlaps encoding when a second CPU is there: a reader thread copies events
 * into a small ring of blocks that the exporter drains. Memory: PIPE_N blocks, whatever the trace. */
#define PIPE_BLK (1u << 20)
#define PIPE_N   4
struct pipe {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct rs_reader *r;
    uint8_t *blk[PIPE_N];
    size_t len[PIPE_N];
    uint64_t produced, consumed;
    int done;
};

/* An NVTX event whose message the reader joined from its template and numbers (formats/nvtx_msg.h) names a
 * string no STRING record of the file defines: the exporter is handed one, made here, just before the event.
 * Joined ids first appear in increasing order (the reader numbers them as it meets them), so *seen, the
 * highest handed over, is all there is to remember. Returns the record, built in buf, or NULL. */
static const struct rs_ev_hdr *joined_string(struct rs_reader *r, const struct rs_ev_hdr *h, uint32_t *seen,
                                             uint64_t *buf, size_t cap)
{
    uint32_t id;
    if (h->kind == RS_EV_NVTX_PUSH) id = ((const struct rs_ev_NVTX_PUSH *)(const void *)h)->message;
    else if (h->kind == RS_EV_NVTX_START) id = ((const struct rs_ev_NVTX_START *)(const void *)h)->message;
    else if (h->kind == RS_EV_NVTX_MARK) id = ((const struct rs_ev_NVTX_MARK *)(const void *)h)->message;
    else return NULL;
    size_t len;
    const char *s = id > RS_NVTX_JOINED_ID && id > *seen ? rs_reader_string(r, id, &len) : NULL;
    if (!s || sizeof(struct rs_ev_STRING) + len + 8 > cap) return NULL;
    *seen = id;
    rs_string_record(buf, h->ts, id, s, len);
    return (const struct rs_ev_hdr *)buf;
}
#define JOINED_BUF ((sizeof(struct rs_ev_STRING) + RS_MAX_STRING + 20 * RS_NVTX_MAX_NUMS + 16) / 8)

static void *pipe_reader(void *arg)
{
    struct pipe *P = arg;
    uint64_t n = 0, jbuf[JOINED_BUF];
    uint32_t seen = 0;
    size_t len = 0;
    uint8_t *b = P->blk[0];
    struct rs_event e;
    for (;;) {
        int more = rs_reader_next(P->r, &e) > 0;
        const struct rs_ev_hdr *js = more && e.known ? joined_string(P->r, e.ev, &seen, jbuf, sizeof jbuf) : NULL;
        size_t need = more && e.known ? 8 + (size_t)e.ev->size + (js ? 8 + (size_t)js->size : 0) : 0;
        if (!more || len + need > PIPE_BLK) { /* publish the block; wait for a free one */
            pthread_mutex_lock(&P->mu);
            P->len[n % PIPE_N] = len;
            P->produced = ++n;
            if (!more) P->done = 1;
            pthread_cond_broadcast(&P->cv);
            while (more && P->produced - P->consumed >= PIPE_N) pthread_cond_wait(&P->cv, &P->mu);
            pthread_mutex_unlock(&P->mu);
            if (!more) return NULL;
            b = P->blk[n % PIPE_N];
            len = 0;
        }
        if (!need) continue;
        uint32_t hdr[2] = {e.tid, 0};
        if (js) {
            uint32_t h0[2] = {0, 0}; /* strings are the process's own (tid 0), as in the file */
            memcpy(b + len, h0, 8);
            memcpy(b + len + 8, js, js->size);
            len += 8 + js->size;
        }
        memcpy(b + len, hdr, 8);
        memcpy(b + len + 8, e.ev, e.ev->size);
        len += 8 + e.ev->size;
    }
}

/* Drain the reader through the exporter: in a pipeline when possible, else directly. */
static void stream_events(struct rs_exp *x, struct rs_reader *r, int pipelined)
{
    struct pipe P = {.r = r};
    int ok = pipelined;
    for (int i = 0; i < PIPE_N && ok; i++)
        if (!(P.blk[i] = rs_xmalloc(PIPE_BLK, "export"))) ok = 0;
    pthread_t th;
    if (ok) {
        pthread_mutex_init(&P.mu, NULL);
        pthread_cond_init(&P.cv, NULL);
        if (pthread_create(&th, NULL, pipe_reader, &P)) ok = 0;
    }
    if (!ok) {
        for (int i = 0; i < PIPE_N; i++) free(P.blk[i]);
        struct rs_event e;
        uint64_t jbuf[JOINED_BUF];
        uint32_t seen = 0;
        while (rs_reader_next(r, &e) > 0) {
            if (!e.known) continue;
            const struct rs_ev_hdr *js = joined_string(r, e.ev, &seen, jbuf, sizeof jbuf);
            if (js) rs_exp_event(x, 0, js);
            rs_exp_event(x, e.tid, e.ev);
        }
        return;
    }
    for (;;) {
        pthread_mutex_lock(&P.mu);
        while (P.consumed == P.produced && !P.done) pthread_cond_wait(&P.cv, &P.mu);
        if (P.consumed == P.produced && P.done) {
            pthread_mutex_unlock(&P.mu);
            break;
        }
        uint8_t *b = P.blk[P.consumed % PIPE_N];
        size_t len = P.len[P.consumed % PIPE_N];
        pthread_mutex_unlock(&P.mu);
        for (size_t off = 0; off < len;) {
            uint32_t tid;
            memcpy(&tid, b + off, 4);
            const struct rs_ev_hdr *h = (const void *)(b + off + 8);
            rs_exp_event(x, tid, h);
            off += 8 + h->size;
        }
        pthread_mutex_lock(&P.mu);
        P.consumed++;
        pthread_cond_broadcast(&P.cv);
        pthread_mutex_unlock(&P.mu);
    }
    pthread_join(th, NULL);
    pthread_cond_destroy(&P.cv);
    pthread_mutex_destroy(&P.mu);
    for (int i = 0; i < PIPE_N; i++) free(P.blk[i]);
}

static int ncpus(void)
{
    cpu_set_t cs;
    return sched_getaffinity(0, sizeof cs, &cs) ? 1 : CPU_COUNT(&cs);
}

/* One input file through an exporter. Returns 0, 1 if the input was partial, -1 if the output could not be
 * written (rs_exp_last_error says why). */
static int export_file(struct rs_exp *x, const char *path, int quiet, int pipelined, int64_t rank_if_none)
{
    char err[256];
    struct rs_reader *r = rs_reader_open(path, err, sizeof err);
    if (!r) {
        if (!quiet) fprintf(stderr, "railscope: warning: skipping %s\n", err); /* err starts with the path */
        rs_exp_skip_process(x); /* its index stays taken, as by its (empty) part in a parallel export */
        return 1;
    }
    const struct rs_header_info *h = rs_reader_header(r);
    struct rs_exp_proc p = {h->host, h->pid, h->rank, h->world_size, h->start_realtime, h->start_mono, NULL};
    if (p.rank < 0 && rank_if_none >= 0) p.rank = rank_if_none;
    if (rs_exp_begin_process(x, &p)) {
        rs_reader_close(r);
        return -1;
    }
    stream_events(x, r, pipelined);
    const struct rs_read_stats *st = rs_reader_stats(r);
    int partial = 0;
    if (st->status != RS_READ_OK) { /* partial (recorder-marked, strings not kept), no PROC_END: exit 1 */
        partial = 1;
        if (!quiet) fprintf(stderr, "railscope: warning: %s: %s\n", path, st->reason);
        rs_exp_incomplete(x, st->reason); /* flagged in the output too, where the viewer shows it */
    }
    rs_exp_end_process(x);
    rs_reader_close(r);
    return partial;
}

static void stats_add(struct rs_exp_stats *a, const struct rs_exp_stats *b)
{
    a->files_in += b->files_in;
    a->events_in += b->events_in;
    a->items_out += b->items_out;
    a->bytes_out += b->bytes_out;
    a->files_out += b->files_out;
    a->wr_matched += b->wr_matched;
    a->wr_unmatched_wc += b->wr_unmatched_wc;
    a->wr_no_completion += b->wr_no_completion;
    a->lane_overflow += b->lane_overflow;
    a->row_moved += b->row_moved;
    a->row_unsure += b->row_unsure;
    a->row_overflow += b->row_overflow;
    a->lane_dropped += b->lane_dropped;
    a->nvtx_dropped += b->nvtx_dropped;
}

/* unranked: no input says its rank (a single process, not launched as a job): Kineto numbers them by
 * input order so that HTA still loads them. */
static int export_serial(const struct rs_exp_opts *o, char **paths, int n, int findings, int unranked,
                         struct rs_exp_stats *st, int *partial, char *err, size_t errlen)
{
    /* numbered as the parts of a parallel export are, so that -j N writes these very bytes */
    struct rs_exp_opts so = *o;
    uint64_t nproc = (uint64_t)n + (findings && o->format != RS_EXP_KINETO);
    if (nproc > 1) so.index_stride = nproc;
    struct rs_exp *x = rs_exp_open(&so, err, errlen);
    if (!x) return -1;
    for (int i = 0; i < n; i++) {
        int r = export_file(x, paths[i], o->quiet, ncpus() > 1, o->format == RS_EXP_KINETO && unranked ? i : -1);
        if (r < 0) {
            snprintf(err, errlen, "%s", rs_exp_last_error(x));
            char scratch[256];
            rs_exp_close(x, NULL, scratch, sizeof scratch);
            return -1;
        }
        if (r) *partial = 1;
    }
    if (findings) add_findings(x, paths, n, o->quiet);
    return rs_exp_close(x, st, err, errlen);
}

/* Kineto names its files by rank: parallel exporters must not pick the same name. */
static int ranks_unique(char **paths, int n)
{
    int64_t *rk = rs_xcalloc((size_t)n, sizeof *rk, "export rk");
    if (!rk) return 0;
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
        char err[256];
        struct rs_reader *r = rs_reader_open(paths[i], err, sizeof err);
        rk[i] = r ? rs_reader_header(r)->rank : -1;
        if (r) rs_reader_close(r);
        if (rk[i] < 0) ok = 0;
        for (int j = 0; j < i && ok; j++)
            if (rk[j] == rk[i]) ok = 0;
    }
    free(rk);
    return ok;
}

struct pjob {
    const struct rs_exp_opts *o;
    char **paths;
    int n, findings;
    int next;                /* atomic: next file to take */
    char **parts;            /* part file per input (+1 for findings), NULL for kineto */
    struct rs_exp_stats *st; /* per input */
    int *result;             /* per input: 0 ok, 1 partial, -1 failed */
    char (*errs)[256];
};

static void *pworker(void *arg)
{
    struct pjob *J = arg;
    for (;;) {
        int i = __atomic_fetch_add(&J->next, 1, __ATOMIC_RELAXED);
        if (i >= J->n) break;
        struct rs_exp_opts o = *J->o;
        o.index_base = (uint64_t)i;
        o.index_stride = (uint64_t)J->n + (J->findings && J->o->format != RS_EXP_KINETO);
        o.part = 1;
        o.quiet = 1; /* the size warning is the assembler's */
        o.split_bytes = ~0ull;
        if (J->parts) o.out = J->parts[i];
        struct rs_exp *x = rs_exp_open(&o, J->errs[i], sizeof J->errs[i]);
        if (!x) {
            J->result[i] = -1;
            continue;
        }
        int r = export_file(x, J->paths[i], J->o->quiet, 0, -1); /* the workers are the parallelism */
        if (r < 0) snprintf(J->errs[i], sizeof J->errs[i], "%s", rs_exp_last_error(x));
        if (rs_exp_close(x, &J->st[i], J->errs[i], sizeof J->errs[i])) r = -1;
        J->result[i] = r;
    }
    return NULL;
}

/* Append part file `path` to fd; returns bytes or -1. */
static long long append_part(int fd, const char *path)
{
    int in = open(path, O_RDONLY | O_CLOEXEC);
    if (in < 0) return -1;
    long long total = 0;
    for (;;) { /* in the kernel where it can */
        ssize_t k = copy_file_range(in, NULL, fd, NULL, 1 << 30, 0);
        if (k > 0) {
            total += k;
            continue;
        }
        if (k == 0) {
            close(in);
            return total;
        }
        if (errno == EINTR) continue;
        if (total || (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)) {
            close(in);
            return -1;
        }
        break; /* not supported here: read/write */
    }
    char buf[1 << 16];
    for (;;) {
        ssize_t k = read(in, buf, sizeof buf);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            close(in);
            return k < 0 ? -1 : total;
        }
        for (ssize_t off = 0; off < k;) {
            ssize_t w = write(fd, buf + off, (size_t)(k - off));
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) {
                close(in);
                return -1;
            }
            off += w;
        }
        total += k;
    }
}

/* A part named like an input would be refused when opened, then removed with the other parts: the input
 * would be lost. Such a part name is forgotten (not removed) and the export refused. */
static int part_is_input(struct pjob *J, int np, const struct rs_exp_opts *o, char *err, size_t errlen)
{
    for (int i = 0; i < np; i++)
        if (rs_file_is_one_of(J->parts[i], o->inputs, o->ninputs)) {
            snprintf(err, errlen, "cannot write %s: it is one of the input traces", J->parts[i]);
            for (int k = 0; k < np; k++) free(J->parts[k]);
            free(J->parts);
            J->parts = NULL;
            return 1;
        }
    return 0;
}

static int export_parallel(const struct rs_exp_opts *o, char **paths, int n, int jobs, int findings,
                           struct rs_exp_stats *st, int *partial, char *err, size_t errlen)
{
    int kineto = o->format == RS_EXP_KINETO;
    int np = n + (findings && !kineto);
    struct pjob J = {o,
                     paths,
                     n,
                     findings,
                     0,
                     NULL,
                     rs_xcalloc((size_t)np, sizeof *J.st, "export"),
                     rs_xcalloc((size_t)np, sizeof *J.result, "export"),
                     rs_xcalloc((size_t)np, sizeof *J.errs, "export")};
    int rc = -1;
    if (!J.st || !J.result || !J.errs) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (!kineto) {
        if (!(J.parts = rs_xcalloc((size_t)np, sizeof *J.parts, "export parts"))) goto out;
        for (int i = 0; i < np; i++)
            if (asprintf(&J.parts[i], "%s.part%d.tmp", o->out, i) < 0) {
                J.parts[i] = NULL;
                snprintf(err, errlen, "out of memory");
                goto out;
            }
        if (part_is_input(&J, np, o, err, errlen)) goto out;
    }
    pthread_t th[256];
    int started = 0;
    for (; started < jobs; started++)
        if (pthread_create(&th[started], NULL, pworker, &J)) break;
    if (!started) pworker(&J);
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    for (int i = 0; i < n; i++) {
        if (J.result[i] >= 0) {
            if (J.result[i]) *partial = 1;
            continue;
        }
        /* -1: the exporter could not write (an unreadable input only makes the result partial) */
        snprintf(err, errlen, "%s", J.errs[i][0] ? J.errs[i] : "cannot write the output");
        goto out;
    }
    if (findings && !kineto) { /* the findings track: one more part after the inputs */
        struct rs_exp_opts fo = *o;
        fo.index_base = (uint64_t)n;
        fo.index_stride = (uint64_t)np;
        fo.part = 1;
        fo.out = J.parts[n];
        struct rs_exp *x = rs_exp_open(&fo, J.errs[n], sizeof J.errs[n]);
        if (x) {
            add_findings(x, paths, n, o->quiet);
            rs_exp_close(x, &J.st[n], J.errs[n], sizeof J.errs[n]);
        }
    }
    memset(st, 0, sizeof *st);
    for (int i = 0; i < np; i++) stats_add(st, &J.st[i]);
    if (kineto) {
        rc = 0;
        goto out;
    }
    /* assemble: parts in input order */
    st->bytes_out = 0;
    st->files_out = 1;
    int fd = open(o->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", o->out, strerror(errno));
        goto out;
    }
    char b[1024];
    int ok = 1, any = 0;
    size_t k;
    if (o->format == RS_EXP_CHROME) {
        k = rs_exp_json_head(b, sizeof b, o->base_realtime_ns);
        ok = write(fd, b, k) == (ssize_t)k;
        st->bytes_out += k;
    }
    for (int i = 0; i < np && ok; i++) {
        struct stat sb;
        if (stat(J.parts[i], &sb) || !sb.st_size) continue;
        if (o->format == RS_EXP_CHROME && any++) {
            ok = write(fd, ",\n", 2) == 2;
            st->bytes_out += 2;
        }
        long long w = append_part(fd, J.parts[i]);
        if (w < 0) ok = 0;
        else st->bytes_out += (uint64_t)w;
    }
    if (ok && o->format == RS_EXP_CHROME) {
        k = rs_exp_json_tail(b, sizeof b);
        ok = write(fd, b, k) == (ssize_t)k;
        st->bytes_out += k;
    }
    if (close(fd) || !ok) {
        snprintf(err, errlen, "write error on %s: %s", o->out, strerror(errno ? errno : EIO));
        goto out;
    }
    if (o->format == RS_EXP_CHROME && st->bytes_out > (o->split_bytes ? o->split_bytes : 500ull << 20) && !o->quiet)
        fprintf(stderr,
                "railscope: warning: %s passed %llu MB: chrome://tracing and the Perfetto UI may fail to "
                "load it (use --split, or --format perfetto)\n",
                o->out, (unsigned long long)((o->split_bytes ? o->split_bytes : 500ull << 20) >> 20));
    rc = 0;
out:
    if (J.parts) {
        for (int i = 0; i < np; i++)
            if (J.parts[i]) {
                unlink(J.parts[i]);
                free(J.parts[i]);
            }
        free(J.parts);
    }
    free(J.st);
    free(J.result);
    free(J.errs);
    return rc;
}

/* What the command line asked for besides the exporter's options. */
struct export_args {
    int have_format, findings;
    long jobs;
    char **ops; /* the trace operands, in their order (argc slots) */
    int nops;
};

/* One option (getopt's c with optarg). Returns -1 to go on, 2 after a usage error. */
static int take_option(int c, struct rs_exp_opts *o, struct export_args *A)
{
    uint64_t v;
    switch (c) {
    case 'f':
        if (parse_format(optarg, &o->format)) {
            fprintf(stderr, "railscope: export: unknown format '%s' (perfetto, chrome or kineto)\n", optarg);
            return 2;
        }
        A->have_format = 1;
        break;
    case 'o': o->out = optarg; break;
    case 's': o->split = 1; break;
    case 'm':
        if (parse_u64(optarg, &v) || !v || v > (1u << 20)) {
            fprintf(stderr, "railscope: export: --split-mb wants a size in MB, got '%s'\n", optarg);
            return 2;
        }
        o->split_bytes = v << 20;
        break;
    case 'b':
        if (parse_u64(optarg, &v) || !v || v > 3600000000ull) {
            fprintf(stderr, "railscope: export: --bw-bin-us wants microseconds, got '%s'\n", optarg);
            return 2;
        }
        o->bw_bin_ns = v * 1000;
        break;
    case 'n': o->no_flows = 1; break;
    case 'j':
        if (parse_u64(optarg, &v) || !v || v > 256) {
            fprintf(stderr, "railscope: export: --jobs wants a number from 1 to 256, got '%s'\n", optarg);
            return 2;
        }
        A->jobs = (long)v;
        break;
    case 'F': A->findings = 1; break;
    case 'q': o->quiet = 1; break;
    }
    return -1;
}

/* The combinations that cannot work. Returns -1 to go on, 2 after a usage error. */
static int check_args(const struct rs_exp_opts *o, const struct export_args *A)
{
    const char *why = NULL;
    if (!A->have_format || !o->out) why = "--format and -o are required (try 'railscope export --help')";
    else if (!A->nops) why = "no trace files given (try 'railscope export --help')";
    else if (o->split && o->format != RS_EXP_CHROME) why = "--split applies to --format chrome only";
    else if (o->format == RS_EXP_KINETO && !strcmp(o->out, "-")) why = "kineto output is a directory, not stdout";
    if (!why) return -1;
    fprintf(stderr, "railscope: export: %s\n", why);
    return 2;
}

/* Options may come before, between or after the paths (`export -o x.json run -q`); "--" ends them.
 * getopt runs in return-in-order mode ("-" first): it permutes nothing and ignores POSIXLY_CORRECT, as in
 * report (cli/report.c). Returns -1 to go on, else the exit status: 0 after --help, 2 after a usage error. */
static int parse_args(int argc, char **argv, struct rs_exp_opts *o, struct export_args *A)
{
    static const struct option lo[] = {
        {"format", required_argument, 0, 'f'},
        {"output", required_argument, 0, 'o'},
        {"split", no_argument, 0, 's'},
        {"split-mb", required_argument, 0, 'm'},
        {"bw-bin-us", required_argument, 0, 'b'},
        {"no-flows", no_argument, 0, 'n'},
        {"findings", no_argument, 0, 'F'},
        {"quiet", no_argument, 0, 'q'},
        {"jobs", required_argument, 0, 'j'},
        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0},
    };
    optind = 0; /* glibc: full re-initialisation, so the "-" (return-in-order) mode of this optstring applies */
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "-:f:o:qhj:", lo, NULL)) != -1) {
        if (c == 1) {
            A->ops[A->nops++] = optarg;
        } else if (c == 'h') {
            usage(stdout);
            return 0;
        } else if (c == '?' || c == ':') {
            cli_option_error("export", argv[optind - 1], c == ':' ? ':' : optopt ? '=' : '?');
            return 2;
        } else if (take_option(c, o, A) >= 0) {
            return 2;
        }
    }
    while (optind < argc) A->ops[A->nops++] = argv[optind++]; /* after "--" */
    return check_args(o, A);
}

/* Pass 1, the headers: the earliest start is the run's time origin. Returns how many files are readable
 * (err: why the last one was not); *ranked: how many of them say their rank. */
static int read_headers(char **paths, int n, struct rs_exp_opts *o, int *ranked, char *err, size_t errlen)
{
    uint64_t base = UINT64_MAX;
    int readable = 0;
    *ranked = 0;
    for (int i = 0; i < n; i++) {
        struct rs_reader *r = rs_reader_open(paths[i], err, errlen);
        if (!r) continue;
        const struct rs_header_info *h = rs_reader_header(r);
        if (h->start_realtime && h->start_realtime < base) base = h->start_realtime;
        if (h->rank >= 0) (*ranked)++;
        readable++;
        rs_reader_close(r);
    }
    o->base_realtime_ns = base == UINT64_MAX ? 0 : base;
    return readable;
}

/* Where the output went, as written: --split names its files OUT.0.json ... OUT.N-1.json (OUT without its
 * ".json", formats/export/export_json.c), never OUT itself. */
static void where_written(const struct rs_exp_opts *o, unsigned long long nout, char *buf, size_t n)
{
    if (!o->split || o->format != RS_EXP_CHROME) {
        snprintf(buf, n, "%s", o->out);
        return;
    }
    size_t bl = strlen(o->out);
    int stem = (int)(bl > 5 && !strcmp(o->out + bl - 5, ".json") ? bl - 5 : bl);
    if (nout <= 1) snprintf(buf, n, "%.*s.0.json", stem, o->out);
    else snprintf(buf, n, "%.*s.0.json .. %.*s.%llu.json", stem, o->out, stem, o->out, nout - 1);
}

/* nfiles: the inputs; those skipped (unreadable) are not counted as read. */
static void print_summary(const struct rs_exp_opts *o, const struct rs_exp_stats *st, int nfiles)
{
    char where[8400];
    where_written(o, (unsigned long long)st->files_out, where, sizeof where);
    char skipped[48] = "";
    if ((uint64_t)nfiles > st->files_in)
        snprintf(skipped, sizeof skipped, " (%llu skipped)", (unsigned long long)nfiles - st->files_in);
    fprintf(stderr,
            "railscope: export: %llu events from %llu file(s)%s -> %llu items, %.1f MB in %llu file(s) at %s "
            "(%.1f bytes/event)\n",
            (unsigned long long)st->events_in, (unsigned long long)st->files_in, skipped,
            (unsigned long long)st->items_out, st->bytes_out / 1e6, (unsigned long long)st->files_out, where,
            st->events_in ? (double)st->bytes_out / st->events_in : 0.0);
    if (st->wr_unmatched_wc || st->wr_no_completion)
        fprintf(stderr,
                "railscope: export: work requests: %llu matched, %llu completions without a post, "
                "%llu posts without a completion\n",
                (unsigned long long)st->wr_matched, (unsigned long long)st->wr_unmatched_wc,
                (unsigned long long)st->wr_no_completion);
    if (st->lane_overflow) {
        /* each slice is counted once: one kept off its thread's row that then found every lane taken is here */
        char row[320] = "";
        int n = 0;
        if (st->row_overflow)
            n = snprintf(row, sizeof row, "; %llu of them kept off their thread's row first (not counted as moved)",
                         (unsigned long long)st->row_overflow);
        if (st->lane_dropped && n >= 0 && (size_t)n < sizeof row)
            snprintf(row + n, sizeof row - (size_t)n,
                     "; %llu left out (their track's input out of time order: no lane could take them)",
                     (unsigned long long)st->lane_dropped);
        fprintf(stderr,
                "railscope: export: %llu slices overlapped more than a track's lanes hold: shown as "
                "instants where they end (with dur_ns)%s\n",
                (unsigned long long)st->lane_overflow, row);
    }
    if (st->row_moved) {
        char why[160] = "";
        if (st->row_unsure)
            snprintf(why, sizeof why, "; %llu of them because the row no longer remembered their time",
                     (unsigned long long)st->row_unsure);
        fprintf(stderr,
                "railscope: export: %llu slices moved off their thread's row to a \"#2\" row: they would partially "
                "overlap another slice there%s\n",
                (unsigned long long)st->row_moved, why);
    }
    if (st->nvtx_dropped)
        fprintf(stderr,
                "railscope: export: %llu NVTX ranges nested deeper than 64 on a thread left out (with their pops)\n",
                (unsigned long long)st->nvtx_dropped);
}

/* The expanded input files through the exporter(s). Returns the exit status. */
static int export_paths(struct rs_exp_opts *o, const struct export_args *A, char **paths, int n)
{
    char err[512];
    int ranked;
    if (!read_headers(paths, n, o, &ranked, err, sizeof err)) {
        fprintf(stderr, "railscope: export: none of the %d input file(s) is a readable trace (%s)\n", n, err);
        return 2;
    }
    /* Serial by default: on the 2-CPU dev VM the parts' extra write+copy cost more than the second CPU
     * gains (bench/export/RESULTS.md); -j pays with many ranks on many cores. */
    long jobs = A->jobs ? A->jobs : 1;
    if (jobs > 64) jobs = 64;
    if (jobs > n) jobs = n;
    /* serial when parallelism cannot help or cannot be assembled: one file, stdout, --split, or Kineto
     * inputs that share a rank (its file names are chosen per exporter) */
    int serial =
        jobs <= 1 || !strcmp(o->out, "-") || o->split || (o->format == RS_EXP_KINETO && !ranks_unique(paths, n));
    struct rs_exp_stats st;
    int partial = 0, rc;
    if (serial) rc = export_serial(o, paths, n, A->findings, !ranked, &st, &partial, err, sizeof err);
    else rc = export_parallel(o, paths, n, (int)jobs, A->findings, &st, &partial, err, sizeof err);
    if (rc) {
        fprintf(stderr, "railscope: export: %s\n", err);
        return 2;
    }
    if (!o->quiet) print_summary(o, &st, n);
    return partial ? 1 : 0;
}

/* The operands are expanded once; the output is checked against the very files that will be read before
 * anything is opened for writing, and the exporters refuse any other output file that is one of them
 * (a --split file, a Kineto rank file, a -j part: rs_exp_opts.inputs). */
static int run_export(struct rs_exp_opts *o, const struct export_args *A)
{
    char err[512];
    char **paths = NULL;
    int n = rs_expand_paths(A->nops, A->ops, &paths, err, sizeof err);
    if (n <= 0) {
        fprintf(stderr, "railscope: export: %s\n", n < 0 ? err : "no trace files found");
        return 2;
    }
    struct rs_file_id *ids = NULL;
    int nids = rs_file_ids(paths, n, &ids);
    int rc = 2;
    if (nids < 0) {
        fprintf(stderr, "railscope: export: out of memory\n");
    } else if (!cli_output_is_input("export", o->out, ids, (size_t)nids)) {
        o->inputs = ids;
        o->ninputs = (size_t)nids;
        rc = export_paths(o, A, paths, n);
    }
    free(ids);
    rs_paths_free(paths, n);
    return rc;
}

int cmd_export(int argc, char **argv)
{
    struct rs_exp_opts o = {0};
    struct export_args A = {.ops = malloc((size_t)(argc > 0 ? argc : 1) * sizeof *A.ops)};
    if (!A.ops) {
        fprintf(stderr, "railscope: export: out of memory\n");
        return 2;
    }
    int rc = parse_args(argc, argv, &o, &A);
    if (rc < 0) rc = run_export(&o, &A);
    free(A.ops);
    return rc;
}
