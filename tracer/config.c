/* Configuration from the environment (documented in docs/recording.md). Every variable has a default;
 * a value we cannot parse is reported once and replaced by the default, never fatal. */
#include <ctype.h>
#include <sched.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "config_limits.h"
#include "core_int.h"

struct rs_config rs_cfg;

#define RS_DEFAULT_OUT        "railscope-out"
#define RS_DEFAULT_FLUSH_MS   500
/* 4 MiB: at 10 M 80-byte events/s a ring holds 5 ms, beyond the multi-millisecond scheduling delays of a
 * small VM's writer thread (2 MiB dropped in 1 of 16 paced runs at 10 M/s on the 2-core dev VM, 4 MiB
 * in none: bench/core/RESULTS.md). Virtual memory, touched only as far as the thread writes. */
#define RS_DEFAULT_BUFFER_KB  4096
#define RS_DEFAULT_ZSTD_LEVEL 1

static long parse_long(const char *name, const char *v, long lo, long hi, long def)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) {
        rs_warn("%s='%s' is not a number in %ld..%ld; using %ld", name, v, lo, hi, def);
        return def;
    }
    return x;
}

static unsigned family_bit(const char *name, size_t n)
{
    for (int f = 0; f < RS_FAM_COUNT; f++)
        if (strlen(rs_family_names[f]) == n && !strncmp(rs_family_names[f], name, n)) return 1u << f;
    return 0;
}

/* "all", "verbs,cuda", "all,-nvml", "-nvml" (= all but nvml). core is always on. */
/* The families RAILSCOPE_EVENTS names; *dflt set when it names none that is known (the default, all, is used). */
static unsigned parse_events(const char *v, int *dflt)
{
    const unsigned all = (1u << RS_FAM_COUNT) - 1;
    unsigned mask = 0;
    int first = 1, known = 0;
    char unknown[256] = ""; /* 'a', 'b': one warning for them all */
    for (const char *p = v; *p;) {
        while (*p == ',' || *p == ' ') p++;
        if (!*p) break;
        const char *e = p;
        while (*e && *e != ',' && *e != ' ') e++;
        int neg = *p == '-';
        const char *name = p + neg;
        size_t n = (size_t)(e - name);
        if (first && neg) mask = all;
        first = 0;
        unsigned bit = (n == 3 && !strncmp(name, "all", 3)) ? all : family_bit(name, n);
        if (bit) {
            known = 1;
            mask = neg ? mask & ~bit : mask | bit;
        } else {
            size_t u = strlen(unknown);
            snprintf(unknown + u, sizeof unknown - u, "%s'%.*s'", u ? ", " : "", (int)n, name);
        }
        p = e;
    }
    if (unknown[0]) {
        char families[128] = "";
        for (int f = 0; f < RS_FAM_COUNT; f++) {
            strncat(families, rs_family_names[f], sizeof families - strlen(families) - 2);
            strncat(families, f + 1 < RS_FAM_COUNT ? "," : "", sizeof families - strlen(families) - 1);
        }
        /* nothing known left (RAILSCOPE_EVENTS=gpu recorded core alone: no GPU, no host facts): the default */
        rs_warn("RAILSCOPE_EVENTS: unknown family %s ignored (known: all,%s; '-name' removes one)%s", unknown, families,
                known ? "" : "; using the default, all");
    }
    *dflt = !known;
    return (known ? mask : all) | (1u << RS_FAM_core);
}

int rs_config_load(void)
{
    const char *v;
    memset(&rs_cfg, 0, sizeof rs_cfg);
    rs_cfg.log_level = RS_LOG_WARN;
    rs_cfg.buffer_bytes = (size_t)RS_DEFAULT_BUFFER_KB * 1024; /* warnings below already record events */
    if ((v = getenv("RAILSCOPE_LOG")) && *v) {
        if (!strcmp(v, "quiet")) rs_cfg.log_level = RS_LOG_QUIET;
        else if (!strcmp(v, "warn")) rs_cfg.log_level = RS_LOG_WARN;
        else if (!strcmp(v, "info")) rs_cfg.log_level = RS_LOG_INFO;
        else if (!strcmp(v, "debug")) rs_cfg.log_level = RS_LOG_DEBUG;
        else rs_warn("RAILSCOPE_LOG='%s' unknown (quiet|warn|info|debug); using warn", v);
    }
    if ((v = getenv("RAILSCOPE_DISABLE")) && *v && strcmp(v, "0")) return -1;

    const char *out = getenv("RAILSCOPE_OUT");
    if (!out || !*out) out = RS_DEFAULT_OUT;
    /* The directory is a path of at most PATH_MAX - 1 bytes, made absolute here (a relative one against
     * the working directory at start). Longer: not traced, one warning (never cut to another path). */
    size_t outlen = strnlen(out, PATH_MAX);
    if (out[0] == '/') {
        if (outlen < PATH_MAX) memcpy(rs_cfg.outdir, out, outlen + 1);
    } else {
        char cwd[PATH_MAX];
        if (!getcwd(cwd, sizeof cwd)) snprintf(cwd, sizeof cwd, ".");
        size_t n = strlen(cwd);
        if (n + 1 + outlen < PATH_MAX) {
            memcpy(rs_cfg.outdir, cwd, n);
            rs_cfg.outdir[n] = '/';
            memcpy(rs_cfg.outdir + n + 1, out, outlen + 1);
        } else if (outlen < PATH_MAX) {
            memcpy(rs_cfg.outdir, out, outlen + 1); /* the working directory alone is too long: relative */
        }
    }
    if (!rs_cfg.outdir[0]) {
        rs_warn("RAILSCOPE_OUT is longer than %d bytes; this process is not traced", PATH_MAX - 1);
        return -1;
    }

    v = getenv("RAILSCOPE_EVENTS");
    int dflt = 0;
    rs_cfg.mask = parse_events(v ? v : "all", &dflt);
    snprintf(rs_cfg.events, sizeof rs_cfg.events, "%s", v && *v && !dflt ? v : "all");

    rs_cfg.flush_ms = RS_DEFAULT_FLUSH_MS;
    if ((v = getenv("RAILSCOPE_FLUSH_MS")) && *v)
        rs_cfg.flush_ms =
            (unsigned)parse_long("RAILSCOPE_FLUSH_MS", v, RS_FLUSH_MS_MIN, RS_FLUSH_MS_MAX, RS_DEFAULT_FLUSH_MS);

    long kb = RS_DEFAULT_BUFFER_KB;
    if ((v = getenv("RAILSCOPE_BUFFER_KB")) && *v)
        kb = parse_long("RAILSCOPE_BUFFER_KB", v, RS_BUFFER_KB_MIN, RS_BUFFER_KB_MAX, RS_DEFAULT_BUFFER_KB);
    size_t bytes = 64 * 1024;
    while (bytes < (size_t)kb * 1024) bytes *= 2; /* rounded up to a power of two */
    /* Under an address-space limit (ulimit -v) the default buffer is at most 1/256 of it, so that 32 live
     * threads take an eighth (256 MiB: 1 MiB per thread): buffers are virtual memory, which RLIMIT_AS
     * counts whether touched or not. A size given in RAILSCOPE_BUFFER_KB is kept. */
    struct rlimit rl;
    if (!(v && *v) && getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        size_t cap = 64 * 1024;
        while (cap * 2 <= rl.rlim_cur / 256) cap *= 2;
        if (bytes > cap) {
            rs_log(RS_LOG_INFO, "RLIMIT_AS is %llu MiB: per-thread buffer %zu KiB (RAILSCOPE_BUFFER_KB sets it)",
                   (unsigned long long)(rl.rlim_cur >> 20), cap >> 10);
            bytes = cap;
        }
    }
    rs_cfg.buffer_bytes = bytes;

    if ((v = getenv("RAILSCOPE_POLICY")) && *v) {
        if (!strcmp(v, "block")) rs_cfg.policy_block = 1;
        else if (strcmp(v, "drop")) rs_warn("RAILSCOPE_POLICY='%s' unknown (drop|block); using drop", v);
    }

    rs_cfg.zstd_level = RS_DEFAULT_ZSTD_LEVEL;
    if ((v = getenv("RAILSCOPE_ZSTD_LEVEL")) && *v)
        rs_cfg.zstd_level = (int)parse_long("RAILSCOPE_ZSTD_LEVEL", v, -50, 19, RS_DEFAULT_ZSTD_LEVEL);
    if ((v = getenv("RAILSCOPE_CLOCK")) && *v) {
        if (!strcmp(v, "tsc")) rs_cfg.clock = RS_CLOCK_TSC;
        else if (!strcmp(v, "monotonic")) rs_cfg.clock = RS_CLOCK_MONOTONIC;
        else if (strcmp(v, "auto")) rs_warn("RAILSCOPE_CLOCK='%s' unknown (auto|tsc|monotonic); using auto", v);
    }
    /* Default 0: the writer compresses itself, fed after each drain. A zstd worker (`auto` = 1 on machines
     * of >= 4 CPUs, or a number) raises the sustained rate (16-CPU H200 host, 1 thread: 11.5 -> 16.9 M
     * events/s) but lowers the zero-drop rate of bursty producers (8.9 -> 5.9 M/s): the writer waits for
     * the worker's jobs at each frame's end while rings fill (bench/core/RESULTS.md). */
    rs_cfg.zstd_threads = 0;
    if ((v = getenv("RAILSCOPE_ZSTD_THREADS")) && *v) {
        if (!strcmp(v, "auto")) {
            cpu_set_t cs;
            long ncpu = sched_getaffinity(0, sizeof cs, &cs) == 0 ? CPU_COUNT(&cs) : sysconf(_SC_NPROCESSORS_ONLN);
            rs_cfg.zstd_threads = ncpu >= 4 ? 1 : 0;
        } else {
            rs_cfg.zstd_threads = (int)parse_long("RAILSCOPE_ZSTD_THREADS", v, 0, 16, 0);
        }
        rs_cfg.zstd_threads_set = 1;
    }
    return 0;
}
