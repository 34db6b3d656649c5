/* Forked children that record a burst of markers and then end themselves (_exit or exit, the first argument),
 * while the parent sends SIGTERM a little later: the signal lands on the child's thread in the middle of the
 * tracer's flush of that burst, holding the writer's lock. The tracer's SIGTERM handler used to ask the writer
 * thread for the final flush and wait: the writer waited for the lock the interrupted thread held, 3 s later the
 * child died with its file half written (a multiprocessing.Pool worker terminated in os._exit, session 29).
 * Usage: term_exit _exit|exit N MARKS STEP_US: child i gets SIGTERM i*STEP_US after it says it is about to end.
 * Prints "slow S of N": S children that took over 2 s to end after the signal (the defect: 3 s and more; the
 * flush itself takes milliseconds, and under a heavy load of other work ~1 s has been seen). Each child's pid, then
 * "exit K" or "signal K", to stderr. */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 5 || (strcmp(argv[1], "_exit") && strcmp(argv[1], "exit"))) {
        fprintf(stderr, "usage: term_exit _exit|exit N MARKS STEP_US\n");
        return 2;
    }
    int use_exit = !strcmp(argv[1], "exit"), n = atoi(argv[2]), marks = atoi(argv[3]), step = atoi(argv[4]);
    void (*mark)(const char *, uint64_t) = (void (*)(const char *, uint64_t))dlsym(RTLD_DEFAULT, "railscope_mark");
    int slow = 0;
    for (int i = 0; i < n; i++) {
        int fds[2];
        if (pipe(fds)) return 2;
        fflush(stdout);
        pid_t p = fork();
        if (p < 0) return 2;
        if (p == 0) {
            close(fds[0]);
            for (int k = 0; k < marks && mark; k++) mark("burst", (uint64_t)k);
            if (write(fds[1], "x", 1) != 1) _exit(2);
            if (use_exit) exit(7);
            _exit(7);
        }
        close(fds[1]);
        char c;
        if (read(fds[0], &c, 1) != 1) return 2;
        close(fds[0]);
        usleep((useconds_t)(i * step));
        double t0 = now();
        kill(p, SIGTERM);
        int st = 0;
        if (waitpid(p, &st, 0) != p) return 2;
        if (now() - t0 > 2.0) slow++;
        fprintf(stderr, "%d %s %d\n", (int)p, WIFSIGNALED(st) ? "signal" : "exit",
                WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
    }
    printf("slow %d of %d\n", slow, n);
    return 0;
}
