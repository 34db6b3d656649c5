/* `railscope report`: analyse a run and explain where each step's time went. Exit status: 0 done, 1 some
 * input was truncated/corrupt/unreadable (results cover what was readable), 2 usage or no usable input. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/analysis.h"
#include "cli.h"
#include "analyzer/report_html.h"
#include "formats/export/export.h"
#include "formats/reader.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: railscope report [--json] [--html FILE] [--step-marker NAME] [--link-gbps RATE] [--threads N]\n"
               "                        [--max-mem MIB] [--quiet] PATH...\n"
               "\n"
               "Reads the trace files of a run (files or directories; thousands of ranks are fine), aligns their\n"
               "clocks, joins collectives across ranks and splits every step's wall time into compute, exposed\n"
               "H2D copies, exposed intra-node communication, network transfer, network stall, waiting for late\n"
               "ranks, host/launch idle and other. Also: stragglers, GPUDirect RDMA verdict per rank and QP, and\n"
               "the top three findings with their numbers.\n"
               "\n"
               "  --json             machine-readable output on stdout instead of text\n"
               "  --html FILE        also write a self-contained HTML report\n"
               "  --step-marker NAME steps are NVTX ranges (or MARK/NVTX marks) named NAME, any case, then\n"
               "                     separators and a counter (step 5, Step#5, step(5); not step_log 5)\n"
               "                     (default: ProfilerStep#N-like ranges, else step marks, else the periodic\n"
               "                     structure of collectives, else of verbs traffic)\n"
               "  --link-gbps RATE   network link rate for ideal transfer times (default: the recorded port rate)\n"
               "  --threads N        worker threads (default 2)\n"
               "  --max-mem MIB      memory budget of the whole analysis, all rank files together (default: a\n"
               "                     quarter of physical or cgroup memory, at least 512, less under `ulimit -v`;\n"
               "                     or $RAILSCOPE_REPORT_MAX_MEM), split between the files (what some leave\n"
               "                     under their share goes to those cut, read again): past its share the\n"
               "                     rest of a file is counted, not analysed, and the report is\n"
               "                     partial (exit 1); peak memory is about MIB plus the reader's buffers\n"
               "                     (up to ~64 MiB per worker thread)\n"
               "  --quiet            no progress on stderr\n"
               "\n"
               "Exit status: 0 done; 1 some input was truncated or damaged, or a rank file exceeded its share of\n"
               "the memory budget (results cover what was read);\n"
               "2 usage error or nothing readable. A run with nothing to analyse (no GPU, NCCL or verbs activity,\n"
               "no step) is one line saying so, exit 0 (JSON: \"analysable\": false).\n");
}

/* A memory budget in MiB (16 MiB .. 1 TiB) to bytes. */
static int parse_mib(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *end || *s == '-' || v < 16 || v > (1ull << 20)) return -1;
    *out = (uint64_t)v << 20;
    return 0;
}

/* What the command line asked for besides the analysis options. */
struct report_args {
    int json, quiet;
    const char *html;
    char **ops; /* the trace operands, in their order (argc slots) */
    int nops;
};

/* Options may come before, between or after the paths (`report run --json`); "--" ends them. getopt runs
 * in return-in-order mode ("-" first), which permutes nothing and also ignores POSIXLY_CORRECT, so every
 * command takes its options anywhere, as dump and info do (cli/args.c). Returns -1 to go on, else the
 * exit status: 0 after --help, 2 after a usage error. */
static int parse_args(int argc, char **argv, struct rs_report_opts *o, struct report_args *A)
{
    static const struct option lo[] = {
        {"json", no_argument, NULL, 'j'},
        {"html", required_argument, NULL, 'H'},
        {"step-marker", required_argument, NULL, 'm'},
        {"link-gbps", required_argument, NULL, 'l'},
        {"threads", required_argument, NULL, 't'},
        {"max-mem", required_argument, NULL, 'M'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    optind = 0; /* glibc: full re-initialisation, so the "-" (return-in-order) mode of this optstring applies */
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "-:jhq", lo, NULL)) != -1) {
        char *end;
        switch (c) {
        case 1: A->ops[A->nops++] = optarg; break;
        case 'j': A->json = 1; break;
        case 'H': A->html = optarg; break;
        case 'm':
            if (!*optarg) {
                fprintf(stderr, "railscope: report: --step-marker needs a name\n");
                return 2;
            }
            o->step_marker = optarg;
            break;
        case 'l':
            errno = 0;
            o->link_gbps = strtod(optarg, &end);
            if (errno || *end || !(o->link_gbps > 0 && o->link_gbps < 1e6)) {
                fprintf(stderr, "railscope: report: bad --link-gbps '%s' (a rate in Gb/s, e.g. 200)\n", optarg);
                return 2;
            }
            break;
        case 't': /* whole numbers only, as every other number option takes them (atoi took "3.5" as 3) */
            errno = 0;
            long t = strtol(optarg, &end, 10);
            o->threads = errno || *end || end == optarg || t < 1 || t > 64 ? 0 : (int)t;
            if (o->threads < 1) {
                fprintf(stderr, "railscope: report: bad --threads '%s' (1..64)\n", optarg);
                return 2;
            }
            break;
        case 'M':
            if (parse_mib(optarg, &o->max_mem) < 0) {
                fprintf(stderr, "railscope: report: bad --max-mem '%s' (MiB, 16..1048576)\n", optarg);
                return 2;
            }
            break;
        case 'q': A->quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default: /* worded as record, dump and info word it (cli_option_error): a missing value is named */
            cli_option_error("report", argv[optind - 1], c == ':' ? ':' : optopt ? '=' : '?');
            return 2;
        }
    }
    while (optind < argc) A->ops[A->nops++] = argv[optind++]; /* after "--" */
    if (!A->nops) {
        fprintf(stderr, "railscope: report: no trace given (try 'railscope report --help')\n");
        return 2;
    }
    return -1;
}

/* --html must not name one of the files the analysis reads: the page would replace that rank's trace. */
static int html_is_input(const char *html, char **files, int nf)
{
    struct rs_file_id *ids;
    int nids = rs_file_ids(files, nf, &ids);
    if (nids < 0) {
        fprintf(stderr, "railscope: report: out of memory\n");
        return 1;
    }
    int clash = cli_output_is_input("report", html, ids, (size_t)nids);
    free(ids);
    return clash;
}

/* The operands are expanded here, once (the warnings about skipped entries come from this expansion), so
 * that the output can be checked against the very files read; the analysis gets the list of files. */
static int run_report(const struct rs_report_opts *o, const struct report_args *A)
{
    char err[512], **files = NULL;
    int nf = rs_expand_paths(A->nops, A->ops, &files, err, sizeof err);
    if (nf < 0) {
        fprintf(stderr, "railscope: report: %s\n", err);
        return 2;
    }
    struct rs_analysis *a = NULL;
    int bad = A->html && html_is_input(A->html, files, nf);
    if (!bad && rs_analyze(o, files, nf, &a, err, sizeof err) < 0) {
        fprintf(stderr, "railscope: report: %s\n", err);
        bad = 1;
    }
    rs_paths_free(files, nf);
    if (bad) return 2;
    int rc = a->partial ? 1 : 0;
    if (A->json) rs_report_json(a, stdout);
    else rs_report_text(a, stdout);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "railscope: report: cannot write the report: %s\n", strerror(errno));
        rc = 2;
    }
    if (A->html && rs_report_html(a, A->html, err, sizeof err) < 0) {
        fprintf(stderr, "railscope: report: %s\n", err);
        rc = 2;
    }
    rs_analysis_free(a);
    return rc;
}

int cmd_report(int argc, char **argv)
{
    struct rs_report_opts o = {0};
    const char *env = getenv("RAILSCOPE_REPORT_MAX_MEM");
    if (env && *env && parse_mib(env, &o.max_mem) < 0) {
        fprintf(stderr, "railscope: report: bad RAILSCOPE_REPORT_MAX_MEM '%s' (MiB, 16..1048576)\n", env);
        return 2;
    }
    struct report_args A = {.ops = malloc((size_t)(argc > 0 ? argc : 1) * sizeof *A.ops)};
    if (!A.ops) {
        fprintf(stderr, "railscope: report: out of memory\n");
        return 2;
    }
    int rc = parse_args(argc, argv, &o, &A);
    if (rc < 0) {
        o.progress = !A.quiet && isatty(2);
        rc = run_report(&o, &A);
    }
    free(A.ops);
    return rc;
}
