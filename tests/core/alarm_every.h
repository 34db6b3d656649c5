/* SIGALRM runs handler every us microseconds (0: no more), SA_RESTART: the test programs whose signal handlers
 * fork (tests/core/fork_in_flush.c, sigfork_term.c, forkcred/forker.c). */
#ifndef RS_TESTS_ALARM_EVERY_H
#define RS_TESTS_ALARM_EVERY_H
#include <signal.h>
#include <string.h>
#include <sys/time.h>

static inline void alarm_every(void (*handler)(int), long us)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, us}, {0, us}};
    setitimer(ITIMER_REAL, &it, NULL);
}
#endif
