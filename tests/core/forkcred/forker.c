/* tests/core/fork_handlers.t: `forker handlers` forks once (linked with early.c's library, whose fork handlers
 * change ids); `forker signal N` forks N times while SIGALRM every 200 us runs a handler that calls setresuid
 * (async-signal-safe), so some land inside fork(); `forker nested N` calls setresuid N times while the same
 * handler runs every 200 us, so some land inside the program's own setresuid; `forker errno` prints errno after a
 * successful setresuid and fork (the program's own 0 must stay); `forker forkforks N` forks N times while SIGALRM
 * every 100 us runs a handler that forks too (async-signal-safe in POSIX.1-2008), then calls setresuid; `forker
 * markforks N` records N railscope_mark()s (each takes the tracer's string lock) while that handler forks. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../alarm_every.h"

static volatile sig_atomic_t signals;
static void on_alarm(int s)
{
    (void)s;
    int e = errno;
    setresuid(-1, -1, -1);
    signals++;
    errno = e;
}

static volatile sig_atomic_t fork_budget, inner_forks;
static void on_alarm_fork(int s)
{
    (void)s;
    int e = errno;
    if (fork_budget > 0) {
        fork_budget--;
        pid_t p = fork();
        if (p == 0) _exit(0);
        if (p > 0) inner_forks++;
    }
    errno = e;
}

static int fork_wait(void)
{
    pid_t p = fork();
    if (p == 0) _exit(0);
    if (p < 0) return -1;
    while (waitpid(p, NULL, 0) < 0 && errno == EINTR) {}
    return 0;
}

/* The threads named railscope-wr (tracer/writer_thread.c) in this process */
static int writer_threads(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    for (struct dirent *e; d && (e = readdir(d));) {
        char p[300], name[32] = "";
        snprintf(p, sizeof p, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = e->d_name[0] != '.' ? fopen(p, "r") : NULL;
        if (f && fgets(name, sizeof name, f) && !strcmp(name, "railscope-wr\n")) n++;
        if (f) fclose(f);
    }
    if (d) closedir(d);
    return n;
}


int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "writers")) { /* each child process: how many tracer writer threads it has */
        fflush(stdout);
        pid_t p = fork();
        if (p == 0) {
            usleep(200000); /* the writer threads started by then */
            printf("writers=%d\n", writer_threads());
            fflush(stdout);
            usleep(100000);
            _exit(0);
        }
        if (p > 0) waitpid(p, NULL, 0);
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "handlers")) {
        printf("forked=%d\n", fork_wait() == 0);
        return 0;
    }
    int nested = argc > 2 && !strcmp(argv[1], "nested");
    if (argc > 2 && (nested || !strcmp(argv[1], "signal"))) {
        int n = atoi(argv[2]), bad = 0;
        alarm_every(on_alarm, 200);
        for (int i = 0; i < n; i++) bad += (nested ? setresuid(-1, -1, -1) : fork_wait()) != 0;
        alarm_every(on_alarm, 0);
        printf("%s=%d bad=%d signals=%s\n", nested ? "calls" : "forks", n, bad, signals > 0 ? "some" : "none");
        return 0;
    }
    if (argc > 2 && !strcmp(argv[1], "forkforks")) {
        int n = atoi(argv[2]), bad = 0;
        for (int i = 0; i < n; i++) {
            fork_budget = 2;
            alarm_every(on_alarm_fork, 100);
            pid_t p = fork();
            if (p == 0) _exit(0);
            bad += p < 0;
            alarm_every(on_alarm_fork, 0);
            while (waitpid(-1, NULL, WNOHANG) > 0) {}
        }
        while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {}
        int r = setresuid(-1, -1, -1); /* the credential lock: a nested fork must not have left it taken */
        printf("forks=%d bad=%d inner=%s setresuid=%d\n", n, bad, inner_forks > 0 ? "some" : "none", r);
        return 0;
    }
    if (argc > 2 && !strcmp(argv[1], "markforks")) {
        void (*mark)(const char *, uint64_t) = (void (*)(const char *, uint64_t))dlsym(RTLD_DEFAULT, "railscope_mark");
        int n = atoi(argv[2]);
        fork_budget = n / 1000 > 0 ? n / 1000 : 1;
        alarm_every(on_alarm_fork, 100);
        char name[32];
        for (int i = 0; i < n && mark; i++) { /* 20000 names: insertions hold the lock longer */
            snprintf(name, sizeof name, "step-%d", i % 20000);
            mark(name, (uint64_t)i);
        }
        alarm_every(on_alarm_fork, 0);
        while (waitpid(-1, NULL, 0) > 0 || errno == EINTR) {}
        printf("marks=%d mark=%s inner=%s\n", n, mark ? "found" : "none", inner_forks > 0 ? "some" : "none");
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "errno")) {
        errno = 0;
        int r = setresuid(-1, -1, -1);
        int e1 = errno;
        errno = 0;
        int f = fork_wait();
        printf("setresuid=%d errno=%d fork=%d errno=%d\n", r, e1, f, errno);
        return 0;
    }
    fprintf(stderr, "usage: forker handlers | signal N | nested N | forkforks N | errno\n");
    return 2;
}
