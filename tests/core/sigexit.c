/* Forked children that allocate in a loop and record nothing, each ended by the parent's SIGUSR1 whose handler
 * calls _exit(child index + 1) — async-signal-safe, so legitimate even while the signal interrupts malloc.
 * The tracer's _exit wrapper writes the child's whole trace file there (its first: the child recorded nothing
 * before); when that took malloc's lock, held by the interrupted malloc, the child hung for good (15 of 20
 * children before tracer/pagemem.h). The handler is installed before the fork, so no child can die of the
 * signal's default action before it is in place.
 * Modes (second argument) for what the final flush must do there besides creating the file (a review's finds,
 * session 28): "mark": the child names its thread and records a marker first, so the flush interns a new thread
 * name (the string table's lock and memory); "fsize": and the file cannot be written (RLIMIT_FSIZE of 64 bytes),
 * so it warns (strerror, a WARNING event interned); "threads": six idle threads of the child's own and 30000
 * markers (run with RAILSCOPE_ZSTD_THREADS=2: zstd must not start its workers in the handler); "late": a frame
 * already written (one-shot, no workers), then 60000 markers that the flush drains with zstd streaming (the same).
 * Usage: sigexit N [plain|mark|fsize|threads]. Prints "hung H of N, statuses ok K": H children not ended 3 s after
 * the signal (killed), K ended by _exit with the status their handler gave. Each child's pid and index go to
 * stderr as "pid index". */

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t my_index;

static void on_usr1(int s)
{
    (void)s;
    _exit(my_index + 1);
}

static void *idle(void *a)
{
    for (;;) pause();
    return a;
}

/* What the child does before its malloc loop; returns once it is ready for the signal. */
static void child_setup(const char *mode, int i)
{
    void (*mark)(const char *, uint64_t) = (void (*)(const char *, uint64_t))dlsym(RTLD_DEFAULT, "railscope_mark");
    if (!strcmp(mode, "plain")) return;
    usleep(150000); /* the child's writer thread is in its tick's sleep now: nothing below is drained before _exit */
    if (!strcmp(mode, "fsize")) {
        signal(SIGXFSZ, SIG_IGN); /* a program that handles a full disk itself */
        struct rlimit rl = {64, 64};
        setrlimit(RLIMIT_FSIZE, &rl);
    }
    if (!strcmp(mode, "late")) { /* a first frame written by the writer thread, one-shot: zstd's workers unused */
        usleep(550000);
        if (mark) mark("first", 0);
        usleep(300000);
    }
    if (!strcmp(mode, "threads")) {
        for (int t = 0; t < 6; t++) {
            pthread_t th;
            pthread_create(&th, NULL, idle, NULL);
        }
        usleep(50000);
    }
    char name[32]; /* the kernel keeps 15 bytes */
    snprintf(name, sizeof name, "fresh-%d", i);
    prctl(PR_SET_NAME, name);
    int marks = !strcmp(mode, "threads") ? 30000 : !strcmp(mode, "late") ? 60000 : 1;
    for (int m = 0; mark && m < marks; m++) mark("step", (uint64_t)m);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20, hung = 0, good = 0;
    const char *mode = argc > 2 ? argv[2] : "plain";
    signal(SIGUSR1, on_usr1);
    srand(12345);
    for (int i = 0; i < n; i++) {
        my_index = i % 100; /* before the fork: the signal may come while the child is still in fork's handlers */
        int ready[2];
        if (pipe(ready) != 0) return perror("pipe"), 2;
        pid_t p = fork();
        if (p < 0) return perror("fork"), 2;
        if (p == 0) {
            child_setup(mode, i);
            if (write(ready[1], "x", 1) != 1) _exit(99);
            unsigned x = (unsigned)i + 1;
            void *keep[64] = {0};
            for (;;) { /* malloc and free all the time: the signal most likely lands inside one */
                x = x * 1103515245 + 12345;
                int k = (int)(x % 64);
                free(keep[k]);
                keep[k] = malloc(2000 + x % 200000);
            }
        }
        close(ready[1]);
        char c;
        if (read(ready[0], &c, 1) != 1) fprintf(stderr, "child %d: no ready byte\n", i);
        close(ready[0]);
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
