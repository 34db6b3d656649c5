/* Reproduction of an open defect (found by helper-78 in session 27; not in the test suite because it hangs):
 * N forked children, each allocating in a loop (no traced event) until the parent's SIGUSR1, whose handler _exit()s.
 * Counts children that did not end within 3 s (killed then). Under the tracer the _exit wrapper's final flush
 * creates the child's trace file (tracer/writer_thread.c final_locked -> open_file -> rs_writer_fdopen -> calloc)
 * inside the signal handler, while the interrupted malloc holds the arena lock: 45 of 100 children hung at 69aabde
 * (0 of 30 untraced). Build: cc -O2 -o sigexit docs/dev/repro/sigexit_fork.c; run: LD_PRELOAD=build/librailscope.so
 * RAILSCOPE_OUT=/tmp/x ./sigexit 100. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static void h(int s)
{
    (void)s;
    _exit(0);
}
int main(int argc, char **argv)
{
    int n = atoi(argv[1]), hung = 0;
    for (int i = 0; i < n; i++) {
        pid_t p = fork();
        if (p == 0) {
            signal(SIGUSR1, h);
            unsigned x = 1;
            void *keep[64] = {0};
            for (;;) {
                x = x * 1103515245 + 12345;
                int k = x % 64;
                free(keep[k]);
                keep[k] = malloc(2000 + x % 200000);
            }
        }
        struct timespec d = {0, 2000000 + (rand() % 3000000)};
        nanosleep(&d, NULL);
        kill(p, SIGUSR1);
        int st, done = 0;
        for (int t = 0; t < 300 && !done; t++) {
            if (waitpid(p, &st, WNOHANG) == p) done = 1;
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
