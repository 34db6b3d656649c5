/* fork() while another thread is inside a credential wrapper (setresuid & co., tracer/lifecycle.c): the
 * child must be able to change its own credentials (a daemon's fork-then-setuid). The wrappers serialise
 * on a lock that the forking thread does not hold; the child must not inherit it taken.
 * Prints "cred_fork=ok forks=N" or "cred_fork=hung K/N" (children stuck for 5 s, killed). */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rs_tracer.h"

static atomic_int stop;

static void *changer(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) setresuid((uid_t)-1, (uid_t)-1, (uid_t)-1); /* no change: allowed for anyone */
    return NULL;
}

int main(int argc, char **argv)
{
    int forks = argc > 1 ? atoi(argv[1]) : 100, hung = 0;
    pthread_t t;
    pthread_create(&t, NULL, changer, NULL);
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
