/* Children forked by a SIGALRM handler (1 ms timer) that interrupts the main thread in railscope_mark, while a
 * second thread marks too and is slowed inside the tracer's string lock by a SIGUSR2 handler that sleeps: a child
 * can be born with the string lock held by a thread it does not have, and its interrupted marker then waits for it
 * for good (a hang older than session 29). The tracer held back that child's SIGTERM until the lock was let go,
 * i.e. for ever (helper-86, session 29: 2 of 6 runs left a child SIGTERM could not end). Every child must end
 * within 4 s of SIGTERM, whatever else happened to it. And none should need it: a child marks 10 times and _exit()s,
 * yet one born while its forking thread waited in rs_intern for the string lock the marking thread held inherited
 * that lock taken, with no thread to let it go, and waited for ever (1-3 of 30 children in most runs under load,
 * until session 31; the writer thread, stuck naming the thread, left a bare header).
 * Usage: sigfork_term. Prints "stuck S alive A of N": S children had not ended by themselves 5 s after the last
 * fork, A were still there 4 s after SIGTERM (then killed). */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "alarm_every.h"

#define N 30
static void (*mark)(const char *, uint64_t);
static pid_t kids[N];
static volatile sig_atomic_t nkids, is_child;
static _Atomic int stop; /* read by the two threads: sig_atomic_t is for a handler on the same thread (TSan: a race) */
static _Atomic pid_t marker_tid;

static void on_alarm(int s)
{
    (void)s;
    static int ticks;
    if (is_child || nkids >= N || ++ticks % 7) return;
    pid_t p = fork();
    if (p == 0) is_child = 1;
    else if (p > 0) kids[nkids++] = p;
}

static void on_usr2(int s) /* stretches the time the marking thread holds the tracer's locks */
{
    (void)s;
    struct timespec d = {0, 3000000};
    nanosleep(&d, NULL);
}

static void *marker(void *a)
{
    marker_tid = (pid_t)syscall(SYS_gettid);
    for (uint64_t i = 0; !stop; i++) mark("marker", i);
    return a;
}

static void *kicker(void *a)
{
    while (!stop) {
        struct timespec d = {0, 5000000};
        nanosleep(&d, NULL);
        if (marker_tid) syscall(SYS_tgkill, getpid(), marker_tid, SIGUSR2);
    }
    return a;
}

/* Reaps the children that end within TENTHS tenths of a second; returns how many are still there. */
static int reap_within(int tenths)
{
    int left = 0;
    for (int w = 0; w < tenths; w++) {
        left = 0;
        for (int i = 0; i < N; i++)
            if (kids[i] && waitpid(kids[i], NULL, WNOHANG) == 0) left++;
            else kids[i] = 0;
        if (!left) break;
        usleep(100000);
    }
    return left;
}

int main(void)
{
    mark = (void (*)(const char *, uint64_t))dlsym(RTLD_DEFAULT, "railscope_mark");
    if (!mark) {
        printf("no railscope_mark (not traced)\n");
        return 2;
    }
    sigset_t alrm;
    sigemptyset(&alrm);
    sigaddset(&alrm, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alrm, NULL); /* the threads below never take it */
    struct sigaction su;
    memset(&su, 0, sizeof su);
    su.sa_handler = on_usr2;
    sigaction(SIGUSR2, &su, NULL);
    pthread_t t1, t2;
    pthread_create(&t1, NULL, marker, NULL);
    pthread_create(&t2, NULL, kicker, NULL);
    pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
    alarm_every(on_alarm, 1000);
    for (uint64_t i = 0; nkids < N; i++) {
        mark("main", i);
        if (is_child) {
            for (int k = 0; k < 10; k++) mark("child", (uint64_t)k);
            _exit(0);
        }
    }
    alarm_every(on_alarm, 0);
    stop = 1;
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    int stuck = reap_within(50); /* by themselves, up to 5 s */
    for (int i = 0; i < N; i++)
        if (kids[i]) kill(kids[i], SIGTERM);
    int alive = reap_within(40); /* up to 4 s */
    for (int i = 0; i < N; i++)
        if (kids[i]) {
            kill(kids[i], SIGKILL);
            waitpid(kids[i], NULL, 0);
        }
    printf("stuck %d alive %d of %d\n", stuck, alive, N);
    return 0;
}
