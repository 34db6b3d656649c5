/* A program that does what dash does for `cmd >&2` (save fd 1 with F_DUPFD, close(1), dup2(2, 1), put it back)
 * over and over for a while from its first instruction, while threads come and go (the tracer reads each new
 * thread's name) and a file named like NCCL's log grows in the trace directory (the tracer reads it on its tick).
 * Every dup2() must succeed and every number must keep the file the program put there: a file the tracer opens in
 * the program's descriptor table took the number between the close() and the dup2() (EBUSY), or was replaced by the
 * dup2() and then closed by the tracer, the program's stdout with it (tests/core/fd_race.t, tracer/private_fds.c).
 * Usage: fd_race MS DIR [plain] (DIR: the trace directory, where the log is DIR/.nccl-<pid>.log; "-": no log;
 * plain: threads and log only, no descriptor juggling, for a tracer that cannot keep out of the way). Prints
 * "ok N LINES" (rounds, log lines written) or the first failure; exit 0/1.
 *        fd_race MS - fork N: N children one after the other, each juggling for MS ms from its first instruction
 *        after fork() while its first event (a new thread's mark) is written: the child's trace file was created
 *        then, in the program's table, and raced the juggling (3-14 of 30 children failed, sessions 27-29; now
 *        made unnamed in fork's child handler, tests/core/fd_race.t). Prints "ok N" or "failed F of N" and each
 *        child's first failure. */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long ms_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000L + t.tv_nsec / 1000000L;
}

/* railscope_mark, looked up as a program does (include/railscope.h): a thread that records something gets its
 * name read by the tracer */
static void (*mark)(const char *, uint64_t);

static void *marker(void *a)
{
    pthread_setname_np(pthread_self(), "fd_race-mark");
    if (mark) mark("fd_race thread", (uint64_t)(intptr_t)a);
    struct timespec d = {0, 50 * 1000000L}; /* alive while the tracer drains its ring */
    nanosleep(&d, NULL);
    return NULL;
}

static int same(int fd, const struct stat *want)
{
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_dev == want->st_dev && st.st_ino == want->st_ino;
}

static int run(long ms, const char *log, int plain, int quiet)
{
    struct stat out, err;
    if (fstat(1, &out) || fstat(2, &err)) return 2;
    long end = ms_now() + ms, rounds = 0, next_thread = 0, lines = 0;
    int logfd = -1;
    char msg[160];
    while (ms_now() < end) {
        if (plain) {
            struct timespec d = {0, 10000};
            nanosleep(&d, NULL);
            goto extra;
        }
        int saved = fcntl(1, F_DUPFD, 10);
        if (saved < 0) {
            snprintf(msg, sizeof msg, "round %ld: F_DUPFD: %s\n", rounds, strerror(errno));
            goto fail;
        }
        close(1);
        if (dup2(2, 1) < 0) {
            snprintf(msg, sizeof msg, "round %ld: dup2(2, 1): %s\n", rounds, strerror(errno));
            dup2(saved, 1);
            goto fail;
        }
        int on_err = same(1, &err);
        if (dup2(saved, 1) < 0 || close(saved) != 0) {
            snprintf(msg, sizeof msg, "round %ld: putting fd 1 back: %s\n", rounds, strerror(errno));
            goto fail;
        }
        if (!on_err || !same(1, &out) || !same(2, &err)) {
            snprintf(msg, sizeof msg, "round %ld: fd %s is not the program's file\n", rounds, on_err ? "1/2" : "1");
            goto fail;
        }
    extra:
        if (rounds >= next_thread) { /* a new thread every 200 rounds: its name is read by the tracer */
            pthread_t t;
            if (pthread_create(&t, NULL, marker, (void *)(intptr_t)rounds) == 0) pthread_detach(t);
            next_thread = rounds + (plain ? 10 : 200);
            if (log[0]) { /* NCCL's log: opened once, like NCCL; a connection line each time */
                if (logfd < 0) logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
                char line[160];
                int n = snprintf(line, sizeof line,
                                 "vm:%d:%d [0] NCCL INFO Channel %02ld/0 : 0[0] -> 1[0] [send] via NET/Socket/0\n",
                                 (int)getpid(), (int)getpid(), lines % 32);
                if (logfd >= 0 && write(logfd, line, (size_t)n) == n) lines++;
            }
        }
        rounds++;
    }
    if (!quiet) printf("ok %ld %ld\n", rounds, lines);
    return 0;
fail:
    fputs(msg, stderr);
    return 1;
}

int main(int argc, char **argv)
{
    long ms = argc > 1 ? atol(argv[1]) : 300;
    char log[4096] = "";
    if (argc > 2 && strcmp(argv[2], "-")) snprintf(log, sizeof log, "%s/.nccl-%d.log", argv[2], (int)getpid());
    mark = (void (*)(const char *, uint64_t))dlsym(RTLD_DEFAULT, "railscope_mark");
    if (argc > 4 && !strcmp(argv[3], "fork")) {
        int n = atoi(argv[4]), failed = 0;
        fflush(stdout);
        for (int i = 0; i < n; i++) {
            pid_t p = fork();
            if (p < 0) return 2;
            if (p == 0) _exit(run(ms, "", 0, 1));
            int st = 0;
            if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) failed++;
        }
        if (failed) printf("failed %d of %d\n", failed, n);
        else printf("ok %d\n", n);
        return failed != 0;
    }
    return run(ms, log, argc > 3 && !strcmp(argv[3], "plain"), 0);
}
