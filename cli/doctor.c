/* `railscope doctor`: collect host facts (live, from a captured sysfs tree, or from a facts file), run
 * the checks, print verdicts. collect -> facts table -> checks -> verdicts. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "hostfacts/hostfacts.h"
#include "doctor/doctor_checks.h"
#include "doctor/doctor_out.h"
#include "doctor/doctor_trace.h"
#include "doctor/doctor_verbs.h"
#include "util/xalloc.h"

static const char usage[] =
    "usage: railscope doctor [--json] [--quiet] [--sysfs-root DIR | --facts FILE | --trace PATH] [--env FILE]\n"
    "                        [--verbs | --no-verbs] [--dump-facts]\n"
    "\n"
    "Checks the host settings that decide RDMA/NCCL performance, from sysfs and procfs (no root, no tools):\n"
    "RDMA ports (state, rate, link layer, RoCE v2 GID, netdev MTU), PCIe links of GPUs and NICs (negotiated vs\n"
    "capable, against the NIC's line rate), GPU<->NIC PCIe distance and NUMA, GPUDirect RDMA prerequisites\n"
    "(nvidia_peermem, DMA-BUF, IOMMU/ACS hints), NCCL_* environment, RoCE ECN (DCQCN) settings.\n"
    "Each line: PASS, WARN, FAIL or INFO (facts and checks that could not be made: \"unknown\"), with a fix.\n"
    "\n"
    "  --json             verdicts as a JSON document on stdout\n"
    "  -q, --quiet        print only WARN and FAIL lines and the summary\n"
    "  --sysfs-root DIR   read DIR/sys/... and DIR/proc/... instead of /sys and /proc (a captured tree);\n"
    "                     NCCL_* variables then come from DIR/env if it exists, else from this process\n"
    "  --env FILE         take NCCL_* variables from FILE (NAME=value lines) instead of the environment\n"
    "  --facts FILE       check a saved facts file (key=value lines, e.g. from --dump-facts or a trace's\n"
    "                     HOST_FACT snapshot) instead of collecting\n"
    "  --trace PATH       check the host snapshot (HOST_FACT events) recorded in a trace file, or in the first\n"
    "                     trace file of a run directory\n"
    "  --verbs, --no-verbs  ask libibverbs for the ports' active MTU (not in sysfs): by default only on the\n"
    "                     live host and only for the RDMA devices sysfs lists; --verbs also in the other modes\n"
    "  --dump-facts       print the collected facts as key=value lines and exit 0\n"
    "  -h, --help         this help\n"
    "\n"
    "Exit status: 0 every check passed (INFO lines do not count), 1 at least one WARN and no FAIL,\n"
    "2 at least one FAIL, or a usage/input error (one line on stderr starting with \"railscope:\").\n"
    "A host without RDMA devices gets WARN \"no RDMA devices found\" (exit 1). Key scheme and checks:\n"
    "docs/doctor.md.\n";

static void free_env(char **env)
{
    for (char **e = env; e && *e; e++) free(*e);
    free(env);
}

/* An input file doctor reads ("-" = stdin where allowed): a directory opens for reading but reads as
 * nothing, which would pass for a host without RDMA devices or variables (issue s17). NULL with one
 * "railscope:" line on stderr. */
static FILE *open_input(const char *opt, const char *path, int dash_is_stdin)
{
    FILE *in = dash_is_stdin && strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    struct stat sb;
    if (!in) {
        fprintf(stderr, "railscope: doctor: %s %s: %s\n", opt, path, strerror(errno));
        return NULL;
    }
    if (fstat(fileno(in), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "railscope: doctor: %s %s: is a directory, not a file\n", opt, path);
        if (in != stdin) fclose(in);
        return NULL;
    }
    return in;
}

/* NAME=value lines into a NULL-terminated envp (owned by the caller: free each and the array). Other lines
 * are skipped (`env` output may hold multi-line values), but a file with content and not one NAME=value
 * line is not an environment: NULL with one "railscope:" line on stderr. Blank lines and comments only (or
 * an empty file) are an empty environment. */
static char **read_env_file(const char *path)
{
    FILE *in = open_input("--env", path, 0);
    if (!in) return NULL;
    size_t n = 0, cap = 16;
    char **env = rs_xcalloc(cap, sizeof *env, "doctor env"), *line = NULL;
    size_t lc = 0;
    ssize_t len;
    int lineno = 0, first_bad = 0;
    while (env && (len = getline(&line, &lc, in)) >= 0) {
        lineno++;
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (len == 0 || line[0] == '#') continue;
        if (!strchr(line, '=') || line[0] == '=') {
            if (!first_bad) first_bad = lineno;
            continue;
        }
        const char *l = line;
        if (strncmp(l, "export ", 7) == 0) l += 7;
        if (n + 2 > cap) {
            char **e2 = rs_xrealloc(env, (cap *= 2) * sizeof *env, "doctor e2");
            if (!e2) break;
            env = e2;
        }
        env[n++] = rs_xstrdup(l, "doctor");
        env[n] = NULL;
    }
    free(line);
    int rerr = ferror(in) ? (errno ? errno : EIO) : 0;
    fclose(in);
    if (rerr || (!n && first_bad)) {
        if (rerr) fprintf(stderr, "railscope: doctor: --env %s: %s\n", path, strerror(rerr));
        else fprintf(stderr, "railscope: doctor: --env %s: no NAME=value line (line %d is not one)\n", path, first_bad);
        free_env(env);
        return NULL;
    }
    return env;
}

/* --facts FILE: key=value lines. 0, or -1 with one "railscope:" line on stderr: unreadable, a directory,
 * a malformed line, or no fact at all (an empty file would check as a host without RDMA devices). */
static int load_facts_file(struct rs_facts *facts, const char *path)
{
    FILE *in = open_input("--facts", path, 1);
    if (!in) return -1;
    int bad = 0, n = rs_facts_load(facts, in, &bad), rerr = ferror(in) ? (errno ? errno : EIO) : 0;
    if (in != stdin) fclose(in);
    if (rerr) fprintf(stderr, "railscope: doctor: --facts %s: %s\n", path, strerror(rerr));
    else if (n < 0) fprintf(stderr, "railscope: doctor: --facts %s: line %d is not key=value\n", path, bad);
    else if (n == 0) fprintf(stderr, "railscope: doctor: --facts %s: no key=value facts in it\n", path);
    return rerr || n <= 0 ? -1 : 0;
}

/* --trace PATH: the HOST_FACT snapshot of a trace. A file the reader could not read to its end says so:
 * with no facts, the reader's reason is the error (not "recorded without the host family"); with facts,
 * one warning line, and the checks run on what was read. 0, or -1 with one "railscope:" line. */
static int load_trace_facts(struct rs_facts *facts, const char *path)
{
    char err[512], used[1024];
    struct rs_read_stats st;
    int n = rs_facts_from_trace(facts, path, used, sizeof used, err, sizeof err, &st);
    if (n < 0) {
        fprintf(stderr, "railscope: doctor: --trace %s\n", err);
        return -1;
    }
    int whole = st.status == RS_READ_OK;
    if (n == 0 && whole)
        fprintf(stderr, "railscope: doctor: %s has no host facts (recorded without the host family?)\n", used);
    else if (n == 0) fprintf(stderr, "railscope: doctor: %s: %s; no host facts could be read\n", used, st.reason);
    else if (!whole)
        fprintf(stderr, "railscope: doctor: warning: %s: %s; checking the %d host facts read\n", used, st.reason, n);
    return n > 0 ? 0 : -1;
}

int cmd_doctor(int argc, char **argv)
{
    static const struct option opts[] = {{"json", no_argument, NULL, 'j'},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"sysfs-root", required_argument, NULL, 'r'},
                                         {"env", required_argument, NULL, 'e'},
                                         {"facts", required_argument, NULL, 'f'},
                                         {"trace", required_argument, NULL, 't'},
                                         {"dump-facts", no_argument, NULL, 'd'},
                                         {"verbs", no_argument, NULL, 'v'},
                                         {"no-verbs", no_argument, NULL, 'V'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int json = 0, quiet = 0, dump = 0, verbs = -1, c;
    const char *root = NULL, *envfile = NULL, *factsfile = NULL, *tracepath = NULL;
    optind = 0; /* glibc: full re-initialisation of getopt state (the dispatcher may have used it) */
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'q': quiet = 1; break;
        case 'r': root = optarg; break;
        case 'e': envfile = optarg; break;
        case 'f': factsfile = optarg; break;
        case 't': tracepath = optarg; break;
        case 'd': dump = 1; break;
        case 'v': verbs = 1; break;
        case 'V': verbs = 0; break;
        case 'h': fputs(usage, stdout); return 0;
        default: /* worded as record, dump and info word it (cli_option_error): a missing value is named */
            cli_option_error("doctor", argv[optind - 1], c == ':' ? ':' : optopt ? '=' : '?');
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "railscope: doctor: unexpected argument '%s' (try 'railscope doctor --help')\n", argv[optind]);
        return 2;
    }
    if (!!factsfile + !!root + !!tracepath > 1) {
        fprintf(stderr, "railscope: doctor: --facts, --sysfs-root and --trace are exclusive\n");
        return 2;
    }
    struct stat st;
    if (root && (stat(root, &st) != 0 || !S_ISDIR(st.st_mode))) {
        fprintf(stderr, "railscope: doctor: --sysfs-root %s: not a directory\n", root);
        return 2;
    }

    struct rs_facts facts;
    rs_facts_init(&facts);
    if (factsfile) {
        if (load_facts_file(&facts, factsfile) != 0) {
            rs_facts_free(&facts);
            return 2;
        }
    } else if (tracepath) {
        if (load_trace_facts(&facts, tracepath) != 0) {
            rs_facts_free(&facts);
            return 2;
        }
    } else {
        rs_hostfacts_collect_sys(root, rs_facts_cb, &facts);
    }
    /* Environment: --env FILE, else DIR/env of a captured tree, else (live or no file) our own. A facts
     * file or a trace carries its env/ facts already (--env adds to / overrides them). */
    char envpath[4096];
    if (!envfile && root) {
        snprintf(envpath, sizeof envpath, "%s/env", root);
        if (stat(envpath, &st) == 0) envfile = envpath;
    }
    if (envfile) {
        char **env = read_env_file(envfile); /* NULL: the reason is on stderr */
        if (!env) {
            rs_facts_free(&facts);
            return 2;
        }
        rs_hostfacts_collect_env(env, rs_facts_cb, &facts);
        free_env(env);
    } else if (!factsfile && !tracepath) {
        rs_hostfacts_collect_env(NULL, rs_facts_cb, &facts);
    }

    /* Active MTU: the live host by default, any mode with --verbs; nothing to ask without RDMA devices. */
    if (verbs < 0) verbs = !root && !factsfile && !tracepath;
    const char *nib = rs_facts_get(&facts, "ib/count");
    if (verbs && !(nib && atoi(nib) == 0)) {
        char err[256];
        (void)rs_facts_add_verbs(&facts, err, sizeof err); /* failure leaves active MTU "unknown" */
    }

    if (dump) {
        rs_doctor_print_facts(stdout, &facts);
        rs_facts_free(&facts);
        return 0;
    }
    struct rs_verdicts v = {0};
    rs_doctor_check(&facts, &v);
    if (json) rs_doctor_print_json(stdout, &v);
    else rs_doctor_print_text(stdout, &v, quiet);
    int status = rs_verdicts_status(&v);
    rs_verdicts_free(&v);
    rs_facts_free(&facts);
    fflush(stdout);
    return status;
}
