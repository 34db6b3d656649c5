/* `railscope export`: trace files -> Perfetto protobuf, Chrome JSON or Kineto JSON (formats/export.h).
 * Two passes over the inputs: headers first (the earliest start is the run's time origin, so every rank
 * is placed on one realtime axis), then each file streamed through the exporter. Memory stays bounded
 * by the exporter's per-track state whatever the trace length. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "cli.h"
#include "../formats/export.h"
#include "../formats/reader.h"

/* The analyzer may be missing from a partial build: findings are then simply not available. */
extern int rs_analyze(const struct rs_report_opts *opts, char *const *paths, int npaths, struct rs_analysis **out,
                      char *err, size_t errlen) __attribute__((weak));
extern void rs_analysis_free(struct rs_analysis *a) __attribute__((weak));

static void usage(FILE *f)
{
    fprintf(f,
            "usage: railscope export --format perfetto|chrome|kineto -o OUT [options] PATH...\n"
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

int cmd_export(int argc, char **argv)
{
    static const struct option lo[] = {
        {"format", required_argument, 0, 'f'}, {"output", required_argument, 0, 'o'},
        {"split", no_argument, 0, 's'},        {"split-mb", required_argument, 0, 'm'},
        {"bw-bin-us", required_argument, 0, 'b'}, {"no-flows", no_argument, 0, 'n'},
        {"findings", no_argument, 0, 'F'},     {"quiet", no_argument, 0, 'q'},
        {"help", no_argument, 0, 'h'},         {0, 0, 0, 0},
    };
    struct rs_exp_opts o = {0};
    int have_format = 0, findings = 0;
    uint64_t v;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+f:o:qh", lo, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (parse_format(optarg, &o.format)) {
                fprintf(stderr, "railscope: export: unknown format '%s' (perfetto, chrome or kineto)\n", optarg);
                return 2;
            }
            have_format = 1;
            break;
        case 'o': o.out = optarg; break;
        case 's': o.split = 1; break;
        case 'm':
            if (parse_u64(optarg, &v) || !v || v > (1u << 20)) {
                fprintf(stderr, "railscope: export: --split-mb wants a size in MB, got '%s'\n", optarg);
                return 2;
            }
            o.split_bytes = v << 20;
            break;
        case 'b':
            if (parse_u64(optarg, &v) || !v || v > 3600000000ull) {
                fprintf(stderr, "railscope: export: --bw-bin-us wants microseconds, got '%s'\n", optarg);
                return 2;
            }
            o.bw_bin_ns = v * 1000;
            break;
        case 'n': o.no_flows = 1; break;
        case 'F': findings = 1; break;
        case 'q': o.quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr, "railscope: export: bad option '%s' (see 'railscope export --help')\n", argv[optind - 1]);
            return 2;
        }
    }
    if (!have_format || !o.out) {
        fprintf(stderr, "railscope: export: --format and -o are required (see 'railscope export --help')\n");
        return 2;
    }
    if (optind >= argc) {
        fprintf(stderr, "railscope: export: no trace files given (see 'railscope export --help')\n");
        return 2;
    }
    if (o.split && o.format != RS_EXP_CHROME) {
        fprintf(stderr, "railscope: export: --split applies to --format chrome only\n");
        return 2;
    }
    if (o.format == RS_EXP_KINETO && !strcmp(o.out, "-")) {
        fprintf(stderr, "railscope: export: kineto output is a directory, not stdout\n");
        return 2;
    }
    char err[512];
    char **paths = NULL;
    int n = rs_expand_paths(argc - optind, argv + optind, &paths, err, sizeof err);
    if (n <= 0) {
        fprintf(stderr, "railscope: export: %s\n", n < 0 ? err : "no trace files found");
        return 2;
    }

    /* pass 1: headers -> the run's time origin */
    uint64_t base = UINT64_MAX;
    int readable = 0;
    for (int i = 0; i < n; i++) {
        struct rs_reader *r = rs_reader_open(paths[i], err, sizeof err);
        if (!r) continue;
        const struct rs_header_info *h = rs_reader_header(r);
        if (h->start_realtime && h->start_realtime < base) base = h->start_realtime;
        readable++;
        rs_reader_close(r);
    }
    if (!readable) {
        fprintf(stderr, "railscope: export: none of the %d input file(s) is a readable trace\n", n);
        rs_paths_free(paths, n);
        return 2;
    }
    o.base_realtime_ns = base == UINT64_MAX ? 0 : base;

    struct rs_exp *x = rs_exp_open(&o, err, sizeof err);
    if (!x) {
        fprintf(stderr, "railscope: export: %s\n", err);
        rs_paths_free(paths, n);
        return 2;
    }
    int partial = 0;
    for (int i = 0; i < n; i++) {
        struct rs_reader *r = rs_reader_open(paths[i], err, sizeof err);
        if (!r) {
            if (!o.quiet) fprintf(stderr, "railscope: warning: skipping %s: %s\n", paths[i], err);
            partial = 1;
            continue;
        }
        const struct rs_header_info *h = rs_reader_header(r);
        struct rs_exp_proc p = {h->host, h->pid, h->rank, h->world_size, h->start_realtime, h->start_mono, NULL};
        if (rs_exp_begin_process(x, &p)) {
            rs_reader_close(r);
            partial = 1;
            break;
        }
        struct rs_event e;
        while (rs_reader_next(r, &e) > 0)
            if (e.known) rs_exp_event(x, e.tid, e.ev);
        rs_exp_end_process(x);
        const struct rs_read_stats *st = rs_reader_stats(r);
        if (st->status != RS_READ_OK) {
            if (st->status != RS_READ_PARTIAL) partial = 1;
            if (!o.quiet) fprintf(stderr, "railscope: warning: %s: %s\n", paths[i], st->reason);
        }
        rs_reader_close(r);
    }
    if (findings) add_findings(x, paths, n, o.quiet);
    struct rs_exp_stats st;
    int rc = rs_exp_close(x, &st, err, sizeof err);
    rs_paths_free(paths, n);
    if (rc) {
        fprintf(stderr, "railscope: export: %s\n", err);
        return 2;
    }
    if (!o.quiet) {
        fprintf(stderr,
                "railscope: export: %llu events from %d file(s) -> %llu items, %.1f MB in %llu file(s) at %s "
                "(%.1f bytes/event)\n",
                (unsigned long long)st.events_in, n, (unsigned long long)st.items_out, st.bytes_out / 1e6,
                (unsigned long long)st.files_out, o.out, st.events_in ? (double)st.bytes_out / st.events_in : 0.0);
        if (st.wr_unmatched_wc || st.wr_no_completion)
            fprintf(stderr, "railscope: export: work requests: %llu matched, %llu completions without a post, "
                            "%llu posts without a completion\n",
                    (unsigned long long)st.wr_matched, (unsigned long long)st.wr_unmatched_wc,
                    (unsigned long long)st.wr_no_completion);
        if (st.lane_overflow)
            fprintf(stderr, "railscope: export: %llu slices overlapped more than a track's lanes hold: shown as "
                            "instants where they end (with dur_ns)\n",
                    (unsigned long long)st.lane_overflow);
    }
    return partial ? 1 : 0;
}
