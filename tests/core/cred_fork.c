/* fork() while another thread is inside a credential wrapper (setresuid & co., tracer/lifecycle.c): the
 * child must be able to change its own credentials (a daemon's fork-then-setuid). The wrappers serialise
 * on a lock that the forking thread does not hold; the child must not inherit it taken.
 * `cred_fork N toggle`: before each change the other thread flips CAP_SYS_NICE in its own effective set (needs it
 * permitted: root), so its credentials never match the writer thread's and every change stops the writer thread
 * and starts a new one (tracer/writer_thread.c rs_writer_thread_stop); without it the writer thread stays.
 * Prints "cred_fork=ok forks=N slowest=S" (S: the longest a child took, in seconds), "cred_fork=hung K/N" (children
 * that stopped making progress, killed; each described on stderr) or "cred_fork=notoggle".
 * A child is hung when its main thread (the one under test: setresuid, then _exit) did not run for 5 s (its context
 * switches did not move) and is neither runnable nor in an uninterruptible wait: a lock nobody will release (its
 * writer thread wakes every 20 ms whatever the main thread does: it does not count). A child that is only slow (a
 * loaded machine under ASan: children took up to 1 s at load 10) is waited for, up to 60 s. A fixed 5 s per child
 * could not tell the two apart (docs/dev/journal/hardening.md, session 9). */
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rs_tracer.h"

static atomic_int stop, toggle, running, seterr; /* seterr: a no-change setresuid() refused (never expected) */

/* Flip CAP_SYS_NICE in this thread's effective set (capset of the calling thread only). 0 on success. */
static int flip_cap(void)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    if (syscall(SYS_capget, &h, d) != 0 || !(d[0].permitted & (1u << CAP_SYS_NICE))) return -1;
    d[0].effective ^= 1u << CAP_SYS_NICE;
    return syscall(SYS_capset, &h, d) != 0 ? -1 : 0;
}

static void *changer(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        if (atomic_load(&toggle)) flip_cap();
        if (setresuid((uid_t)-1, (uid_t)-1, (uid_t)-1) != 0)
            atomic_store(&seterr, 1); /* no change: allowed for anyone */
        atomic_store(&running, 1);
    }
    return NULL;
}

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Child pid's progress: its main thread's context switches, and whether that thread is runnable or in an
 * uninterruptible wait (state R or D). With describe, one stderr line per thread: state, wchan, switches. */
static long progress(pid_t pid, int *busy, int describe)
{
    char path[96], line[256];
    long main_sw = -1;
    *busy = 0;
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d) return -1;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char state = '?', wchan[64] = "?";
        long sw = 0;
        snprintf(path, sizeof path, "/proc/%d/task/%.16s/status", (int)pid, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        while (fgets(line, sizeof line, f)) {
            long v;
            if (sscanf(line, "State: %c", &state) == 1) continue;
            if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 ||
                sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
                sw += v;
        }
        fclose(f);
        snprintf(path, sizeof path, "/proc/%d/task/%.16s/wchan", (int)pid, e->d_name);
        if ((f = fopen(path, "r"))) {
            if (!fgets(wchan, sizeof wchan, f)) strcpy(wchan, "?");
            fclose(f);
        }
        if (atoi(e->d_name) == (int)pid) {
            main_sw = sw;
            *busy = state == 'R' || state == 'D';
        }
        if (describe)
            fprintf(stderr, "cred_fork: child %d thread %s: state %c, wchan %s, %ld context switches\n", (int)pid,
                    e->d_name, state, wchan, sw);
    }
    closedir(d);
    return main_sw;
}

/* Wait for child p: 0 when it exited, 1 when it stopped making progress or took more than 60 s (then killed).
 * *took: how long it ran, in seconds. */
static int wait_child(pid_t p, double *took)
{
    double t0 = mono(), next = t0 + 5;
    long last = -2;
    int st;
    for (;;) {
        if (waitpid(p, &st, WNOHANG) == p) {
            *took = mono() - t0;
            if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) atomic_store(&seterr, 1); /* the child's setresuid failed */
            return 0;
        }
        double now = mono();
        if (now >= next) { /* every 5 s: did its main thread run since the last look? */
            int busy;
            long sw = progress(p, &busy, 0);
            if ((sw >= 0 && sw == last && !busy) || now - t0 > 60) {
                fprintf(stderr, "cred_fork: child %d %s after %.1f s:\n", (int)p,
                        now - t0 > 60 ? "still running" : "made no progress for 5 s", now - t0);
                progress(p, &busy, 1);
                kill(p, SIGKILL);
                waitpid(p, &st, 0);
                *took = now - t0;
                return 1;
            }
            last = sw;
            next = now + 5;
        }
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
    }
}

int main(int argc, char **argv)
{
    int forks = argc > 1 ? atoi(argv[1]) : 100, hung = 0;
    double slowest = 0;
    if (argc > 2 && !strcmp(argv[2], "toggle")) {
        if (flip_cap() != 0 || flip_cap() != 0) {
            printf("cred_fork=notoggle\n");
            return 0;
        }
        atomic_store(&toggle, 1);
    }
    pthread_t t;
    pthread_create(&t, NULL, changer, NULL);
    /* Fork only once the thread runs its loop: a fork while it is still starting (libasan sets a new thread up
     * under its allocator's locks, and gcc 12's libasan has no fork handlers) hands the child a lock nobody
     * releases; the child's writer thread then hung in its start (gdb: AsanThread::Init -> pthread_getattr_np
     * -> free -> allocator region lock), in the first fork only (session 8). That is the program's fork racing
     * its own thread start, not what this test is about. */
    while (!atomic_load(&running)) {
        struct timespec d = {0, 100000};
        nanosleep(&d, NULL);
    }
    for (int i = 0; i < forks; i++) {
        pid_t p = fork();
        if (p < 0) return 3;
        if (p == 0) {
            _exit(setresuid((uid_t)-1, (uid_t)-1, (uid_t)-1) == 0 ? 0 : 1);
        }
        double took;
        if (wait_child(p, &took)) {
            hung++;
            if (hung >= 3) break; /* enough to tell */
        } else if (took > slowest) {
            slowest = took;
        }
    }
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    if (hung) printf("cred_fork=hung %d/%d\n", hung, forks);
    else if (atomic_load(&seterr)) printf("cred_fork=seterr (a setresuid() that changes nothing failed)\n");
    else printf("cred_fork=ok forks=%d slowest=%.2f\n", forks, slowest);
    return hung != 0 || atomic_load(&seterr);
}
