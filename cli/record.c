/* railscope record [-o DIR] [--events LIST] -- CMD [ARGS...]: run CMD with librailscope.so preloaded
 * (and registered as the CUDA injection, NCCL profiler and NVTX injection library), wait for it, pass
 * its exit status through, and say where the trace went. The launcher itself is not traced: only the
 * child's environment is changed. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "rtrace.h"
#include "tracer/config_limits.h"
#include "tracer/safedir.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: railscope record [-o DIR] [--events LIST] [OPTIONS] -- CMD [ARGS...]\n"
               "\n"
               "Run CMD under the tracer. Every process it starts (forks, execs, torchrun workers) writes its\n"
               "own trace file DIR/<host>-<pid>.rtrace. The exit status of CMD is passed through.\n"
               "\n"
               "  -o, --out DIR        where the trace files go (created if missing; default: a new directory\n"
               "                       railscope-YYYYMMDD-HHMMSS in the current directory; under srun or\n"
               "                       mpirun, one shared by the job step's ranks: railscope-slurm-JOB.STEP,\n"
               "                       railscope-pmix-NAMESPACE or railscope-ompi-JOBID)\n"
               "  -e, --events LIST    event families: all (default), or a comma list of\n"
               "                       core,verbs,cuda,nccl,nvtx,nvml,host; '-name' removes one (all,-nvml)\n"
               "  --flush-ms N         write a frame at least every N ms (default 500; at most this much is\n"
               "                       lost if a process is killed with SIGKILL)\n"
               "  --buffer-kb N        per-thread buffer (default 4096)\n"
               "  --policy drop|block  when a thread's buffer is full: drop and count (default) or wait\n"
               "  -q, --quiet          no messages from the tracer or from record itself\n"
               "\n"
               "A value follows its option as the next argument or after '=' (--out DIR, --out=DIR). The options\n"
               "end at \"--\" or at CMD, whose own options are its own (record python -q x.py).\n"
               "\n"
               "The same settings can be given to a process directly through the environment (RAILSCOPE_OUT,\n"
               "RAILSCOPE_EVENTS, ...) with LD_PRELOAD=.../librailscope.so; see docs/recording.md.\n");
}

/* The library: $RAILSCOPE_LIB, or next to the binary (build tree), or ../lib/railscope/ (installed). */
static int find_lib(char *out, size_t cap)
{
    const char *env = getenv("RAILSCOPE_LIB");
    if (env && *env) {
        if (access(env, R_OK) != 0) return -1;
        if (!realpath(env, out)) snprintf(out, cap, "%s", env);
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    *slash = 0;
    const char *rel[] = {"librailscope.so", "../lib/railscope/librailscope.so", "../lib/librailscope.so"};
    for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
        char p[PATH_MAX * 2];
        snprintf(p, sizeof p, "%s/%s", exe, rel[i]);
        if (access(p, R_OK) == 0 && realpath(p, out)) return 0;
    }
    return -1;
}

/* A launcher that starts one `record` per rank (srun, mpirun) gives every rank of a job step the same id: the
 * default directory is then named after it and shared (each process writes its own <host>-<pid>.rtrace), instead
 * of one timestamped directory per rank. Slurm's job and step ids (an srun task; a batch script has no step id:
 * two runs there must not share), else PMIx's namespace (Open MPI 5, PRRTE,
 * Slurm's pmix), else Open MPI 4's job id; only [A-Za-z0-9._-] kept (PMIx's '@' becomes '_'); "" when none. */
static void job_dir_name(char *out, size_t cap)
{
    const char *job = getenv("SLURM_JOB_ID"), *step = getenv("SLURM_STEP_ID"), *ns = getenv("PMIX_NAMESPACE"),
               *ompi = getenv("OMPI_MCA_ess_base_jobid");
    char id[96];
    if (job && *job && step && *step) snprintf(id, sizeof id, "slurm-%.40s.%.20s", job, step); /* srun's tasks */
    else if (ns && *ns) snprintf(id, sizeof id, "pmix-%.80s", ns);
    else if (ompi && *ompi) snprintf(id, sizeof id, "ompi-%.80s", ompi);
    else id[0] = 0;
    for (char *c = id; *c; c++)
        if (*c == '@') *c = '_';
        else if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '.' ||
                   *c == '_' || *c == '-'))
            id[0] = 0; /* an id that would need quoting: not used */
    snprintf(out, cap, "%s%s", id[0] ? "railscope-" : "", id);
}

static int make_default_dir(char *out, size_t cap)
{
    job_dir_name(out, cap);
    if (out[0]) { /* shared by the job's ranks: an existing one of ours (not a link) is used */
        struct stat st;
        if (mkdir(out, 0755) == 0 ||
            (errno == EEXIST && lstat(out, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid()))
            return 0;
    }
    time_t t = time(NULL);
    struct tm tm;
    char stamp[32];
    localtime_r(&t, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    for (int i = 0; i < 100; i++) {
        if (i) snprintf(out, cap, "railscope-%s-%d", stamp, i + 1);
        else snprintf(out, cap, "railscope-%s", stamp);
        if (mkdir(out, 0755) == 0) return 0;
        if (errno != EEXIST) return -1;
    }
    errno = EEXIST;
    return -1;
}

/* mkdir -p without following planted links, as the library opens it (tracer/safedir.c): 0, or -1 with errno
 * (ELOOP with the link's path in bad and its owner in *owner when one was refused). */
static int mkdir_p(const char *dir, char *bad, size_t badcap, unsigned *owner)
{
    int fd = rs_open_dir_nofollow(dir, bad, badcap, owner);
    if (fd < 0) return errno = -fd, -1;
    close(fd);
    return 0;
}

/* The closing line: this run's files; the others already there, or written beside them by another run (a
 * shared -o, srun's ranks in the job step's directory), are said apart rather than counted as this run's. */
static void say_where(const char *dir, const struct rec_snapshot *before, pid_t child, const char *cmd)
{
    int total, n = rec_count_run_files(dir, before, child, &total);
    if (n == 0) { /* 'railscope info DIR' would find nothing of this run: say why instead, when it shows */
        char why[PATH_MAX + 128];
        rec_why_untraced(cmd, why, sizeof why);
        fprintf(stderr, "railscope: record: no trace written to %s: %s\n", dir, why);
        return;
    }
    char others[64] = "";
    if (total > n) snprintf(others, sizeof others, " from this run, %d in the directory", total);
    fprintf(stderr, "railscope: trace in %s (%d file%s%s); see 'railscope info %s'\n", dir, n, n == 1 ? "" : "s",
            others, dir);
}

static volatile sig_atomic_t child_pid;

/* The signals passed on to the command, so that record ends as the command does (docs/recording.md). Without
 * a handler, one whose default action kills (SIGUSR1: Slurm's pre-emption warning) killed record and left the
 * command running, orphaned. `if_sent`: only when a process sent it (forward_sent). */
static const struct {
    int sig, if_sent;
} fwd_sigs[] = {
    {SIGTERM, 0},  /* supervisors, kill(1) */
    {SIGHUP, 0},   /* a closed session */
    {SIGUSR1, 0},  /* only processes send USR1 and USR2: Slurm's --signal, a job's own protocol */
    {SIGUSR2, 0},  /* (Slurm's pre-emption warning may be either) */
    {SIGALRM, 0},  /* record sets no timer: any is meant for the command (timeout -s ALRM) */
    {SIGINT, 1},   /* the terminal sends INT (Ctrl-C), */
    {SIGQUIT, 1},  /* QUIT (Ctrl-\) */
    {SIGWINCH, 1}, /* and WINCH (window resized) to its whole foreground group, the command included */
};
#define NFWD (int)(sizeof fwd_sigs / sizeof fwd_sigs[0])
/* Found ignored when record started (nohup's SIGHUP, SIGINT/SIGQUIT of a script's background job): left
 * ignored, in record and in the command, which inherits that: the caller meant to shield the command. */
static int fwd_ignored[NFWD];

/* Passed on to the command, whoever sent it. */
static void forward(int sig)
{
    int e = errno; /* kill() may set it under the interrupted waitpid() */
    if (child_pid > 0) kill(child_pid, sig);
    errno = e;
}

/* SIGINT, SIGQUIT, SIGWINCH: passed on only when a process sent them (kill(1), Python's send_signal, a CI
 * runner: si_code SI_USER, SI_QUEUE or SI_TKILL, all <= 0). Ctrl-C or Ctrl-\ at a terminal, or its window
 * resized (SI_KERNEL), went to the whole foreground process group, the command included: forwarding that one
 * would deliver it twice. */
static void forward_sent(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    if (si->si_code <= 0) forward(sig);
}

static void install_forwarding(void)
{
    for (int k = 0; k < NFWD; k++) {
        struct sigaction sa;
        sigaction(fwd_sigs[k].sig, NULL, &sa);
        fwd_ignored[k] = sa.sa_handler == SIG_IGN;
        if (fwd_ignored[k]) continue;
        memset(&sa, 0, sizeof sa);
        sigemptyset(&sa.sa_mask);
        if (fwd_sigs[k].if_sent) {
            sa.sa_sigaction = forward_sent;
            sa.sa_flags = SA_SIGINFO;
        } else {
            sa.sa_handler = forward;
        }
        sigaction(fwd_sigs[k].sig, &sa, NULL);
    }
}

/* The forwarded signals, blocked until the command's pid is known (one that came before would be lost). */
static void block_forwarded(sigset_t *old)
{
    sigset_t fwd;
    sigemptyset(&fwd);
    for (int k = 0; k < NFWD; k++) sigaddset(&fwd, fwd_sigs[k].sig);
    sigprocmask(SIG_BLOCK, &fwd, old);
}

/* In the child before exec: the default action back where record had put its handler (the mask still blocks
 * them, so none can run the handler here); the ignored ones stay ignored. */
static void reset_forwarded(void)
{
    for (int k = 0; k < NFWD; k++)
        if (!fwd_ignored[k]) signal(fwd_sigs[k].sig, SIG_DFL);
}

/* Die of the signal that killed the command, so that callers see the same status. The command's core file is
 * the useful one: ours would overwrite it (core_pattern "core" in the same directory) or add a misleading
 * crash report (systemd-coredump, apport), so railscope writes none. */
static void die_like(int sig)
{
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0); /* pipe core_patterns do not look at RLIMIT_CORE */
    signal(sig, SIG_DFL);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    sigprocmask(SIG_UNBLOCK, &s, NULL);
    if (sig != SIGKILL && sig != SIGSTOP) raise(sig);
}

/* A value the library's parse_long takes: strtol syntax, in lo..hi; empty means the default there too. */
static int check_number(const char *flag, const char *v, long lo, long hi)
{
    if (!v || !*v) return 0;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (!errno && end != v && !*end && x >= lo && x <= hi) return 0;
    fprintf(stderr, "railscope: record: %s must be a number in %ld..%ld, not '%s'\n", flag, lo, hi, v);
    return -1;
}

static int is_family(const char *name, size_t n)
{
    if (n == 3 && !strncmp(name, "all", 3)) return 1;
    for (int f = 0; f < RS_FAM_COUNT; f++)
        if (strlen(rs_family_names[f]) == n && !strncmp(rs_family_names[f], name, n)) return 1;
    return 0;
}

/* Every name in an --events list, split as the library's parse_events splits it (commas or spaces, '-' in front
 * removes one), is "all" or a family of rs_family_names, the table the library reads. */
static int check_events(const char *v)
{
    if (!v) return 0;
    for (const char *p = v; *p;) {
        while (*p == ',' || *p == ' ') p++;
        if (!*p) break;
        const char *e = p;
        while (*e && *e != ',' && *e != ' ') e++;
        const char *name = p + (*p == '-');
        if (!is_family(name, (size_t)(e - name))) {
            char known[128] = "all";
            for (int f = 0; f < RS_FAM_COUNT; f++)
                snprintf(known + strlen(known), sizeof known - strlen(known), ",%s", rs_family_names[f]);
            fprintf(stderr,
                    "railscope: record: --events: unknown family '%.*s' in '%s' (known: %s; '-name' removes "
                    "one)\n",
                    (int)(e - name), name, v, known);
            return -1;
        }
        p = e;
    }
    return 0;
}

/* A sanitizer runtime (libasan/libtsan) has to come before every instrumented object in LD_PRELOAD. */
static int is_san_runtime(const char *path)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    return !strncmp(b, "libasan.so", 10) || !strncmp(b, "libtsan.so", 10);
}

/* LD_PRELOAD = lib, then whatever was there (without a second copy of lib); a sanitizer runtime that was
 * there stays in front of lib (a sanitizer build's lib needs it, and the runtime refuses to come later). */
static int set_preload(const char *lib)
{
    const char *old = getenv("LD_PRELOAD");
    size_t n = strlen(lib) + (old ? strlen(old) : 0) + 2;
    char *v = malloc(n);
    if (!v) return -1;
    v[0] = 0;
    for (int pass = 0; pass < 3; pass++) {
        if (pass == 1) {
            if (*v) strcat(v, ":");
            strcat(v, lib);
            continue;
        }
        if (!old || !*old) continue;
        char *copy = strdup(old), *save = NULL;
        if (!copy) {
            free(v);
            return -1;
        }
        for (char *tok = strtok_r(copy, ": ", &save); tok; tok = strtok_r(NULL, ": ", &save)) {
            if (!strcmp(tok, lib) || is_san_runtime(tok) != (pass == 0)) continue;
            if (*v) strcat(v, ":");
            strcat(v, tok);
        }
        free(copy);
    }
    int r = setenv("LD_PRELOAD", v, 1);
    free(v);
    return r;
}

/* What the command line asked for; cmd is the index of the traced command in argv. */
struct record_args {
    const char *out, *events, *flush, *buffer, *policy;
    int quiet, cmd;
};

/* record's options come before the command and end at its name or at "--": getopt's "+" mode stops at the
 * first operand, so the command's own flags (`record -- python -q x.py`, `record python -q`) stay its own.
 * getopt_long, as report, export and doctor use, takes both `--out DIR` and `--out=DIR`. Returns -1 to go
 * on, else the exit status: 0 after --help, 2 after a usage error. */
static int parse_args(int argc, char **argv, struct record_args *A)
{
    static const struct option lo[] = {
        {"out", required_argument, NULL, 'o'},      {"events", required_argument, NULL, 'e'},
        {"flush-ms", required_argument, NULL, 'F'}, {"buffer-kb", required_argument, NULL, 'B'},
        {"policy", required_argument, NULL, 'P'},   {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    optind = 0; /* glibc: full re-initialisation, so the "+" mode of this optstring applies */
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "+:o:e:qh", lo, NULL)) != -1) {
        switch (c) {
        case 'o': A->out = optarg; break;
        case 'e': A->events = optarg; break;
        case 'F': A->flush = optarg; break;
        case 'B': A->buffer = optarg; break;
        case 'P': A->policy = optarg; break;
        case 'q': A->quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default: /* getopt sets optopt for a known option given a value it does not take (--quiet=1) */
            cli_option_error("record", argv[optind - 1], c == ':' ? ':' : optopt ? '=' : '?');
            return 2;
        }
    }
    A->cmd = optind;
    if (A->cmd >= argc) {
        fprintf(stderr, "railscope: record: no command given (usage: railscope record [-o DIR] -- CMD [ARGS...])\n");
        return 2;
    }
    return -1;
}

int cmd_record(int argc, char **argv)
{
    struct record_args A = {0};
    int rc = parse_args(argc, argv, &A);
    if (rc >= 0) return rc;
    const char *out = A.out, *events = A.events, *flush = A.flush, *buffer = A.buffer, *policy = A.policy;
    int quiet = A.quiet, i = A.cmd;
    if (policy && strcmp(policy, "drop") && strcmp(policy, "block")) {
        fprintf(stderr, "railscope: record: --policy must be drop or block, not '%s'\n", policy);
        return 2;
    }
    /* Checked here, before anything starts: the library would only warn, once in every traced process, about a
     * RAILSCOPE_* variable the user never set, and go on with its default. */
    if (check_number("--flush-ms", flush, RS_FLUSH_MS_MIN, RS_FLUSH_MS_MAX) ||
        check_number("--buffer-kb", buffer, RS_BUFFER_KB_MIN, RS_BUFFER_KB_MAX) || check_events(events))
        return 2;
    char lib[PATH_MAX];
    if (find_lib(lib, sizeof lib) != 0) {
        fprintf(stderr, "railscope: record: cannot find librailscope.so next to this binary or in ../lib/railscope "
                        "(set RAILSCOPE_LIB to its path)\n");
        return 2;
    }
    /* An empty -o is almost always an unset variable (`-o "$OUTDIR"`): the library would take RAILSCOPE_OUT=""
     * for "not set" and write to ./railscope-out, far from where the user looks. */
    if (out && !*out) {
        fprintf(stderr, "railscope: record: -o/--out needs a directory, not an empty string\n");
        return 2;
    }
    char dir[PATH_MAX], absdir[PATH_MAX];
    if (out) {
        char bad[PATH_MAX] = "";
        unsigned owner = 0;
        if (mkdir_p(out, bad, sizeof bad, &owner) != 0) {
            if (bad[0])
                fprintf(stderr,
                        "railscope: record: refusing to follow the symbolic link %s (owned by uid %u: only links "
                        "of root or of this user are followed)\n",
                        bad, owner);
            else fprintf(stderr, "railscope: record: cannot create %s: %s\n", out, strerror(errno));
            return 2;
        }
        snprintf(dir, sizeof dir, "%s", out);
    } else if (make_default_dir(dir, sizeof dir) != 0) {
        fprintf(stderr, "railscope: record: cannot create a trace directory here: %s\n", strerror(errno));
        return 2;
    }
    if (!realpath(dir, absdir)) snprintf(absdir, sizeof absdir, "%s", dir);

    /* Another tool's injection or profiler plugin is replaced for this run (one process image holds one CUPTI client
     * and one profiler plugin): say so, since the program loses it. */
    static const char *const entries[] = {"CUDA_INJECTION64_PATH", "NCCL_PROFILER_PLUGIN", "NVTX_INJECTION64_PATH"};
    for (size_t i = 0; i < sizeof entries / sizeof entries[0] && !quiet; i++) {
        const char *v = getenv(entries[i]);
        char rv[PATH_MAX];
        if (v && *v && !(realpath(v, rv) && !strcmp(rv, lib)) && strcmp(v, lib))
            fprintf(stderr, "railscope: record: %s was %s: replaced by railscope's library for this run\n", entries[i],
                    v);
    }
    if (set_preload(lib) || setenv("RAILSCOPE_OUT", absdir, 1) || setenv("CUDA_INJECTION64_PATH", lib, 1) ||
        setenv("NCCL_PROFILER_PLUGIN", lib, 1) || setenv("NVTX_INJECTION64_PATH", lib, 1) ||
        (events && setenv("RAILSCOPE_EVENTS", events, 1)) || (flush && setenv("RAILSCOPE_FLUSH_MS", flush, 1)) ||
        (buffer && setenv("RAILSCOPE_BUFFER_KB", buffer, 1)) || (policy && setenv("RAILSCOPE_POLICY", policy, 1)) ||
        (quiet && setenv("RAILSCOPE_LOG", "quiet", 1))) {
        fprintf(stderr, "railscope: record: cannot set the environment: %s\n", strerror(errno));
        return 2;
    }
    /* The forwarded signals wait until child_pid is set, and in the child until their default action is back. */
    sigset_t old;
    block_forwarded(&old);
    install_forwarding();

    struct rec_snapshot before;
    rec_snapshot_take(absdir, &before);
    fflush(NULL);
    /* Close-on-exec pipe: the child writes to it only when exec fails, so the parent can tell "could
     * not run the command" (its one error line is all the user sees) from a command that exits 127. */
    int xp[2] = {-1, -1};
    if (pipe2(xp, O_CLOEXEC) < 0) xp[0] = xp[1] = -1;
    pid_t p = fork();
    if (p < 0) {
        fprintf(stderr, "railscope: record: fork: %s\n", strerror(errno));
        sigprocmask(SIG_SETMASK, &old, NULL);
        return 2;
    }
    if (p == 0) {
        reset_forwarded();
        sigprocmask(SIG_SETMASK, &old, NULL);
        execvp(argv[i], argv + i);
        int e = errno;
        /* execve says EACCES for a directory; a shell says what it is (the exit status stays 126). */
        struct stat sb;
        int isdir = e == EACCES && strchr(argv[i], '/') && stat(argv[i], &sb) == 0 && S_ISDIR(sb.st_mode);
        fprintf(stderr, "railscope: record: cannot run '%s': %s\n", argv[i], strerror(isdir ? EISDIR : e));
        if (xp[1] >= 0 && write(xp[1], &e, sizeof e) < 0) e = errno;
        _exit(e == ENOENT ? 127 : 126);
    }
    child_pid = p;
    sigprocmask(SIG_SETMASK, &old, NULL);
    int exec_failed = 0;
    if (xp[1] >= 0) {
        close(xp[1]);
        int e;
        ssize_t k;
        while ((k = read(xp[0], &e, sizeof e)) < 0 && errno == EINTR) {}
        exec_failed = k == (ssize_t)sizeof e;
        close(xp[0]);
    }
    int st;
    while (waitpid(p, &st, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "railscope: record: waitpid: %s\n", strerror(errno));
            return 2;
        }
    }
    if (!quiet && !exec_failed) say_where(absdir, &before, p, argv[i]);
    rec_snapshot_free(&before);
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    if (WIFSIGNALED(st)) {
        die_like(WTERMSIG(st));
        return 128 + WTERMSIG(st);
    }
    return 2;
}
