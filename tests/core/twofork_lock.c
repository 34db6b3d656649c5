/* Two threads mark in loops; thread O's SIGUSR2 handler sleeps 4 ms (O may hold the tracer's string lock meanwhile)
 * and then forks, thread T's SIGALRM handler (sent 1.5 ms after) forks too. T's fork prepare held wlock and the
 * private-descriptor lock while it waited for the string lock O's interrupted code held; O's own prepare waited for
 * those for good: the whole process stopped (helper-90, session 31: 6 of 6 runs, at kick 0-132). The main thread
 * kicks both, reaps the children and watches: no mark on either thread for 10 s is a deadlock.
 * Usage: twofork_lock [KICKS]. Prints "ok kicks K forks F", or "DEADLOCK at kick K" and exits 3. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void (*mark)(const char *, uint64_t);
static _Atomic pid_t o_tid, t_tid;
static _Atomic unsigned long prog_o, prog_t, forks;
static _Atomic int stop;

static void sleep_us(long us)
{
    struct timespec d = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&d, NULL);
}

static void fork_here(void)
{
    pid_t p = fork();
    if (p == 0) syscall(SYS_exit_group, 0); /* the child only has to exist: its trace is not checked */
    if (p > 0) forks++;
}
static void on_usr2(int s)
{
    (void)s;
    sleep_us(4000);
    fork_here();
}
static void on_alrm(int s)
{
    (void)s;
    fork_here();
}

static void *o_thread(void *a)
{
    o_tid = (pid_t)syscall(SYS_gettid);
    for (uint64_t i = 0; !stop; i++, prog_o++) mark("o", i);
    return a;
}
static void *t_thread(void *a)
{
    t_tid = (pid_t)syscall(SYS_gettid);
    for (uint64_t i = 0; !stop; i++, prog_t++) mark("t", i);
    return a;
}

static void reap(void)
{
    while (waitpid(-1, NULL, WNOHANG) > 0) {}
}

int main(int argc, char **argv)
{
    int kicks = argc > 1 ? atoi(argv[1]) : 300;
    mark = (void (*)(const char *, uint64_t))dlsym(RTLD_DEFAULT, "railscope_mark");
    if (!mark) {
        printf("no railscope_mark (not traced)\n");
        return 2;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr2;
    sigaction(SIGUSR2, &sa, NULL);
    sa.sa_handler = on_alrm;
    sigaction(SIGALRM, &sa, NULL);
    sigset_t both;
    sigemptyset(&both);
    sigaddset(&both, SIGUSR2);
    sigaddset(&both, SIGALRM);
    pthread_t o, t;
    pthread_create(&o, NULL, o_thread, NULL);
    pthread_create(&t, NULL, t_thread, NULL);
    pthread_sigmask(SIG_BLOCK, &both, NULL); /* the main thread never takes them */
    while (!o_tid || !t_tid) sleep_us(1000);
    for (int k = 0; k < kicks; k++) {
        unsigned long po = prog_o, pt = prog_t;
        syscall(SYS_tgkill, getpid(), o_tid, SIGUSR2);
        sleep_us(1500);
        syscall(SYS_tgkill, getpid(), t_tid, SIGALRM);
        sleep_us(8000);
        reap();
        int w = 0;
        for (; prog_o == po && prog_t == pt && w < 1000; w++) {
            sleep_us(10000);
            reap();
        }
        if (w == 1000) {
            printf("DEADLOCK at kick %d (forks %lu): no mark on either thread for 10 s\n", k, (unsigned long)forks);
            fflush(stdout);
            syscall(SYS_exit_group, 3);
        }
    }
    stop = 1;
    pthread_join(o, NULL);
    pthread_join(t, NULL);
    while (waitpid(-1, NULL, 0) > 0) {}
    printf("ok kicks %d forks %lu\n", kicks, (unsigned long)forks);
    return 0;
}
