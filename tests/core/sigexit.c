/* Forked children that allocate in a loop and record nothing, each ended by the parent's SIGUSR1 whose handler
 * calls _exit(child index + 1) — async-signal-safe, so legitimate even while the signal interrupts malloc.
 * The tracer's _exit wrapper writes the child's whole trace file there (its first: the child recorded nothing
 * before); when that took malloc's lock, held by the interrupted malloc, the child hung for good (15 of 20
 * children before tracer/pagemem.h). The handler is installed before the fork, so no child can die of the
 * signal's default action before it is in place.
 * Usage: sigexit N. Prints "hung H of N, statuses ok K": H children not ended 3 s after the signal (killed),
 * K ended by _exit with the status their handler gave. Each child's pid and index go to stderr as "pid index". */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t my_index;

static void on_usr1(int s)
{
    (void)s;
    _exit(my_index + 1);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20, hung = 0, good = 0;
    signal(SIGUSR1, on_usr1);
    srand(12345);
    for (int i = 0; i < n; i++) {
        my_index = i % 100; /* before the fork: the signal may come while the child is still in fork's handlers */
        pid_t p = fork();
        if (p < 0) return perror("fork"), 2;
        if (p == 0) {
            unsigned x = (unsigned)i + 1;
            void *keep[64] = {0};
            for (;;) { /* malloc and free all the time: the signal most likely lands inside one */
                x = x * 1103515245 + 12345;
                int k = (int)(x % 64);
                free(keep[k]);
                keep[k] = malloc(2000 + x % 200000);
            }
        }
        fprintf(stderr, "%d %d\n", (int)p, i);
        struct timespec d = {0, 2000000 + (rand() % 3000000)};
        nanosleep(&d, NULL);
        kill(p, SIGUSR1);
        int st = 0, done = 0;
        for (int t = 0; t < 300 && !done; t++) {
            if (waitpid(p, &st, WNOHANG) == p) done = 1;
            else usleep(10000);
        }
        if (!done) {
            hung++;
            kill(p, SIGKILL);
            waitpid(p, &st, 0);
        } else if (WIFEXITED(st) && WEXITSTATUS(st) == i % 100 + 1) {
            good++;
        }
    }
    printf("hung %d of %d, statuses ok %d\n", hung, n, good);
    return 0;
}
