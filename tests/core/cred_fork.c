/* fork() while another thread is inside a credential wrapper (setresuid & co., tracer/lifecycle.c): the
 * child must be able to change its own credentials (a daemon's fork-then-setuid). The wrappers serialise
 * on a lock that the forking thread does not hold; the child must not inherit it taken.
 * `cred_fork N toggle`: before each change the other thread flips CAP_SYS_NICE in its own effective set (needs it
 * permitted: root), so its credentials never match the writer thread's and every change stops the writer thread
 * and starts a new one (tracer/writer_thread.c rs_writer_thread_stop); without it the writer thread stays.
 * Prints "cred_fork=ok forks=N", "cred_fork=hung K/N" (children stuck for 5 s, killed) or "cred_fork=notoggle". */
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rs_tracer.h"

static atomic_int stop, toggle, running;

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
        setresuid((uid_t)-1, (uid_t)-1, (uid_t)-1); /* no change: allowed for anyone */
        atomic_store(&running, 1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int forks = argc > 1 ? atoi(argv[1]) : 100, hung = 0;
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
            setresuid((uid_t)-1, (uid_t)-1, (uid_t)-1);
            _exit(0);
        }
        int st, done = 0;
        for (int ms = 0; ms < 5000 && !done; ms++) {
            if (waitpid(p, &st, WNOHANG) == p) done = 1;
            else {
                struct timespec d = {0, 1000000};
                nanosleep(&d, NULL);
            }
        }
        if (!done) {
            hung++;
            kill(p, SIGKILL);
            waitpid(p, &st, 0);
            if (hung >= 3) break; /* enough to tell */
        }
    }
    atomic_store(&stop, 1);
    pthread_join(t, NULL);
    if (hung) printf("cred_fork=hung %d/%d\n", hung, forks);
    else printf("cred_fork=ok forks=%d\n", forks);
    return hung != 0;
}
