/* Fuzz target: the CLI's argument parsing and the subcommands behind it (dump, info, report, export,
 * doctor), called in-process through their cmd_<name>() entry points (cli/cli.h) with fuzzed argv.
 * `record` is left out: it runs commands.
 *
 * The input: first byte picks the subcommand, the rest is argv split on NUL bytes (at most 16 words).
 * Safety: we run in a private temporary directory holding two small traces (t.rtrace, a complete one, and bad.rtrace,
 * a truncated one; both with an NVTX range whose message is joined from a template and a number) and a directory d/
 * with one trace; any word containing '/' is replaced by one of these names, so nothing outside that directory can be
 * read or written; stdout goes to /dev/null; files the commands create are removed after each input. Crashes,
 * sanitizer reports and exit() calls (libFuzzer reports those too) are the findings. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "fuzz_common.h"

static char dir[64];
static const char *keep[] = {"t.rtrace", "bad.rtrace", "d", NULL};

static void put_trace(const char *name, size_t cut)
{
    struct fz_buf f = {0}, e = {0};
    fz_put_min_header(&f);
    struct rs_chunk_hdr c = {RS_CHUNK_MAGIC, 11, 0, 0};
    fz_put(&e, &c, sizeof c);
    struct rs_ev_CLOCK ck;
    RS_EV_INIT(&ck, CLOCK, 1000);
    ck.realtime_ns = 1700000000000000000ull;
    ck.mono_ns = 1000;
    fz_put(&e, &ck, sizeof ck);
    struct rs_ev_MARK m;
    memset(&m, 0, sizeof m);
    RS_EV_INIT(&m, MARK, 2000);
    fz_put(&e, &m, sizeof m);
    /* an NVTX range whose message has a number (format 1.1): every command reads it through the reader's join */
    uint64_t sbuf[8];
    fz_put(&e, sbuf, rs_string_record(sbuf, 2100, 1, "step \x1f", 6));
    struct {
        struct rs_ev_NVTX_PUSH p;
        uint64_t num;
    } push;
    memset(&push, 0, sizeof push);
    RS_EV_INIT(&push.p, NVTX_PUSH, 2200);
    push.p.h.size = (uint16_t)sizeof push;
    push.p.message = 1;
    push.p.depth = 1;
    push.num = 42;
    fz_put(&e, &push, sizeof push);
    struct rs_ev_NVTX_POP pop;
    memset(&pop, 0, sizeof pop);
    RS_EV_INIT(&pop, NVTX_POP, 2300);
    fz_put(&e, &pop, sizeof pop);
    uint32_t bytes = (uint32_t)(e.n - sizeof c);
    memcpy(e.b + 8, &bytes, 4);
    fz_put_raw_frame(&f, e.b, e.n, 0);
    fz_put_raw_frame(&f, e.b, e.n, 1);
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    FZ_CHECK(fd >= 0);
    FZ_CHECK(write(fd, f.b, f.n - cut) == (ssize_t)(f.n - cut));
    close(fd);
    free(f.b);
    free(e.b);
}

static void rm_rf(const char *p);
static void remove_sandbox(void)
{
    if (chdir("/") == 0) rm_rf(dir);
}

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/rs-fuzz-cli.%d", (int)getpid());
    FZ_CHECK(mkdir(dir, 0700) == 0 || errno == EEXIST);
    FZ_CHECK(chdir(dir) == 0);
    atexit(remove_sandbox);
    put_trace("t.rtrace", 0);
    put_trace("bad.rtrace", 9);
    mkdir("d", 0700);
    put_trace("d/x.rtrace", 0);
    int null = open("/dev/null", O_WRONLY);
    FZ_CHECK(null >= 0);
    dup2(null, 1);
    close(null);
}

static void rm_rf(const char *p)
{
    struct stat sb;
    if (lstat(p, &sb) != 0) return;
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(p);
        struct dirent *de;
        while (d && (de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
            char q[512];
            snprintf(q, sizeof q, "%s/%s", p, de->d_name);
            rm_rf(q);
        }
        if (d) closedir(d);
        rmdir(p);
    } else {
        unlink(p);
    }
}

/* Remove whatever the command created (outputs named by fuzzed words). */
static void cleanup(void)
{
    DIR *d = opendir(".");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        int k = 0;
        for (; keep[k] && strcmp(keep[k], de->d_name); k++) {}
        if (!keep[k]) rm_rf(de->d_name);
    }
    if (d) closedir(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready;
    if (!ready) {
        setup();
        ready = 1;
    }
    if (size < 1 || size > 512) return 0;
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } cmds[] = {
        {"dump", cmd_dump}, {"info", cmd_info}, {"report", cmd_report}, {"export", cmd_export}, {"doctor", cmd_doctor}};
    unsigned which = data[0] % (sizeof cmds / sizeof cmds[0]);
    char *buf = malloc(size); /* words live here; argv points into it */
    FZ_CHECK(buf != NULL);
    memcpy(buf, data + 1, size - 1);
    buf[size - 1] = 0;
    char *argv[18];
    int argc = 0;
    argv[argc++] = (char *)cmds[which].name;
    for (size_t i = 0; i < size - 1 && argc < 17;) {
        char *w = buf + i;
        size_t n = strlen(w);
        /* no path leaves the sandbox: nothing with a '/', and no "." / ".." (the sandbox's parent is /tmp) */
        if (strchr(w, '/') || !strcmp(w, ".") || !strcmp(w, "..")) w = (char *)keep[n % 3];
        argv[argc++] = w;
        i += n + 1;
    }
    argv[argc] = NULL;
    /* getopt keeps a pointer into the previous argv; reinitialise it as a fresh process would be. */
    optind = 0;
    char *dummy[] = {(char *)"x", NULL};
    getopt(1, dummy, "");
    opterr = 1;
    int rc = cmds[which].fn(argc, argv);
    FZ_CHECK(rc >= 0 && rc <= 2);
    free(buf);
    cleanup();
    return 0;
}
