/* Debugging aid for bench/gpu/crashhunt.sh (not part of railscope): LD_PRELOADed into a workload, it prints the
 * native backtrace of a thread that dies of SIGSEGV, SIGBUS, SIGILL, SIGFPE or SIGABRT to stderr, with the faulting
 * address and thread id, then lets the signal take its default course (core, exit status). Python's faulthandler,
 * enabled later, runs first and hands the signal back here. backtrace() is not async-signal-safe; the process is
 * dying anyway, and the one call made at load brings libgcc_s in before any signal. */
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    char head[160];
    int n = snprintf(head, sizeof head, "segvbt: pid %d tid %ld signal %d (%s) addr %p code %d\n", (int)getpid(),
                     (long)syscall(SYS_gettid), sig, strsignal(sig), si ? si->si_addr : NULL, si ? si->si_code : 0);
    if (n > 0) (void)!write(2, head, (size_t)n);
    void *pc[64];
    int k = backtrace(pc, 64);
    backtrace_symbols_fd(pc, k, 2);
    signal(sig, SIG_DFL);
    raise(sig);
}

__attribute__((constructor)) static void segvbt_init(void)
{
    void *pc[2];
    (void)backtrace(pc, 2);
    static char alt[1 << 16];
    stack_t ss = {.ss_sp = alt, .ss_size = sizeof alt};
    sigaltstack(&ss, NULL); /* this thread only; others run the handler on their own stacks */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (unsigned i = 0; i < sizeof sigs / sizeof sigs[0]; i++) sigaction(sigs[i], &sa, NULL);
}
