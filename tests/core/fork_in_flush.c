/* Children that record a burst of markers, then end (exit or _exit), while a 1 ms SIGALRM handler forks (40 times;
 * each grandchild _exits at once): the handler's fork lands in the tracer's exit flush on that thread, which holds the
 * writer's lock, and fork's prepare handler waited for that lock: for ever (docs/recording.md, sessions 28-29).
 * Usage: fork_in_flush exit|_exit N MARKS. Prints "hung H of N" (children not ended 10 s after they began to end;
 * then killed). */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alarm_every.h"

static volatile sig_atomic_t budget = 40; /* a fork costs more than the period: unbounded, the handler is all
                                           * the process would run, traced or not */
static void on_alarm(int s)
{
    (void)s;
    if (budget <= 0) return;
    budget--;
    pid_t p = fork();
    if (p == 0) _exit(0);
}

int main(int argc, char **argv)
{
    if (argc != 4) return 2;
    int use_exit = !strcmp(argv[1], "exit"), n = atoi(argv[2]), marks = atoi(argv[3]), hung = 0;
    void (*mark)(const char *, uint64_t) = (void (*)(const char *, uint64_t))dlsym(RTLD_DEFAULT, "railscope_mark");
    for (int i = 0; i < n; i++) {
        fflush(stdout);
        pid_t p = fork();
        if (p < 0) return 2;
        if (p == 0) {
            signal(SIGCHLD, SIG_IGN); /* its children (the handler's) reap themselves */
            for (int k = 0; k < marks && mark; k++) mark("burst", (uint64_t)k);
            alarm_every(on_alarm, 1000);
            if (use_exit) exit(7);
            _exit(7);
        }
        int st = 0, done = 0;
        for (int w = 0; w < 1000 && !done; w++) { /* 10 s */
            pid_t r = waitpid(p, &st, WNOHANG);
            if (r == p) done = 1;
            else usleep(10000);
        }
        if (!done) {
            hung++;
            kill(p, SIGKILL);
            waitpid(p, &st, 0);
        }
    }
    printf("hung %d of %d\n", hung, n);
    return 0;
}
