/* Process lifecycle: exit (on_exit), _exit/_Exit, SIGTERM/SIGINT/SIGHUP/SIGQUIT/SIGABRT, fork, exec. Every path asks
 * the
 * writer thread to flush (rs_core_request) and waits a bounded time; none writes from a signal handler.
 * A vfork child shares our memory but is not our process: getpid() != rs_pid, and we stay out of it. */
#include <dlfcn.h>
#include <errno.h>
#include <grp.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core_int.h"

/* preload/dl.c's lookup that bypasses its own dlsym interposition; weak so the core links without it. */
extern void *rs_dl_next(const char *name) __attribute__((weak));

RS_NO_SANITIZE static void *real_sym(const char *name)
{
    void *p = rs_dl_next ? rs_dl_next(name) : NULL;
    return p ? p : dlsym(RTLD_NEXT, name);
}
#define REAL(name)                        \
    static __typeof__(name) *real_##name; \
    if (!real_##name) real_##name = (__typeof__(name) *)real_sym(#name)
/* The same for wrappers that threads call at once (exit, the descriptor and credential wrappers): the slot
 * is read and written atomically (TSan saw the plain one race in setresgid from 4 threads). */
#define REAL_MT(name)                                                                \
    static __typeof__(name) *slot_##name;                                            \
    __typeof__(name) *real_##name = __atomic_load_n(&slot_##name, __ATOMIC_ACQUIRE); \
    if (!real_##name) {                                                              \
        real_##name = (__typeof__(name) *)real_sym(#name);                           \
        __atomic_store_n(&slot_##name, real_##name, __ATOMIC_RELEASE);               \
    }

/* Functions that programs call from signal handlers (they are async-signal-safe): looked up at start
 * (rs_lifecycle_init, early_lookup), so that a handler does not make the lookup, dlsym, which is not. A SIGALRM
 * handler's setresuid making its first lookup while the program was inside fork()'s first one freed dlerror's
 * state twice (ASan double free, tests/core/fork_handlers.t, 1 run in 30; session 8). */
/* clang-format off */
#define RS_EARLY_FNS(X) X(setuid) X(setgid) X(seteuid) X(setegid) X(setreuid) X(setregid) X(setresuid) X(setresgid) \
                        X(setgroups) X(fork) X(_exit) X(_Exit)
#define EARLY_SLOT(name) static __typeof__(name) *early_##name;
RS_EARLY_FNS(EARLY_SLOT)
#define EARLY_LOOK(name) \
    if (!early_##name) __atomic_store_n(&early_##name, (__typeof__(name) *)real_sym(#name), __ATOMIC_RELEASE);
/* clang-format on */
static void early_lookup(void) { RS_EARLY_FNS(EARLY_LOOK) }
#define REAL_EARLY(name)                                                              \
    __typeof__(name) *real_##name = __atomic_load_n(&early_##name, __ATOMIC_ACQUIRE); \
    if (!real_##name) {                                                               \
        real_##name = (__typeof__(name) *)real_sym(#name);                            \
        __atomic_store_n(&early_##name, real_##name, __ATOMIC_RELEASE);               \
    }

static int ours(void) { return atomic_load(&rs_state) == RS_ST_RUNNING && getpid() == rs_pid; }

#define RS_END_EXIT   0
#define RS_END_SIGNAL 1
#define RS_END_EXEC   2
#define RS_END__EXIT  3

/* The thread running the final sequence of an exit (0: none yet), and whether it has finished. */
static _Atomic uint32_t final_tid;
static _Atomic uint32_t final_done;

static void final_flush(int32_t status, uint32_t reason, unsigned timeout_ms)
{
    if (!ours()) return;
    int g = rs_tls.guard, x = rs_tls.in_exit;
    rs_tls.guard = 1;
    rs_tls.in_exit = reason == RS_END__EXIT; /* async-signal-safe callers: no malloc, no unbounded lock */
    uint32_t none = 0;
    if (reason != RS_END_SIGNAL) atomic_compare_exchange_strong(&final_tid, &none, rs_gettid());
    if (reason != RS_END_SIGNAL) rs_run_shutdown_hooks(); /* not from a signal handler: hooks may lock */
    int f = rs_tls.in_final;
    rs_tls.in_final = reason != RS_END_SIGNAL;
    rs_core_request(1, status, reason, timeout_ms, reason != RS_END_SIGNAL);
    /* _exit's: kept to the end (the system call follows at once; a signal in between would end the process
     * otherwise than PROC_END says). exit()'s: other exit handlers still run, which a signal must still end. */
    rs_tls.in_final = reason == RS_END__EXIT ? 1 : f;
    if (reason != RS_END_SIGNAL) {
        atomic_store(&final_done, 1);
        rs_futex_wake(&final_done);
    }
    rs_tls.in_exit = x;
    rs_tls.guard = g;
}

/* ---- exit ---- */

static void on_exit_flush(int status, void *arg)
{
    (void)arg;
    final_flush(status, RS_END_EXIT, 10000);
}

/* Registered before on_exit_flush, so it runs after it. glibc's exit() runs the handlers one at a time
 * from a shared list: when two threads are in exit() at once (a return from main, which does not go
 * through our exit() below, and a thread calling exit()), the one that finds the list empty calls _exit
 * at once and would end the process while the other is still writing the trace. The thread that takes
 * this last handler waits (up to 10 s) until the final sequence of the other one is done, then leaves the
 * end to it (up to 10 s more), so that the process ends with the status its PROC_END says. */
static void on_exit_barrier(int status, void *arg)
{
    (void)status;
    (void)arg;
    uint32_t t = atomic_load(&final_tid);
    if (!t || t == rs_gettid() || getpid() != rs_pid) return;
    for (int i = 0; i < 10000 && !atomic_load(&final_done); i++) rs_futex_wait(&final_done, 0, 1);
    /* Then let that thread end the process (its status is the one PROC_END holds); bounded. */
    for (int i = 0; i < 100; i++) {
        struct timespec ts = {0, 100000000};
        nanosleep(&ts, NULL);
    }
}

/* exit() from several threads at once: glibc runs the handlers in whichever thread gets to each, and the
 * first to find none left ends the process, in the middle of another thread's final flush (3 threads
 * calling exit() at once left a file without events nor PROC_END in 19 of 20 runs). The first exit() of
 * the process goes on; a second one, from another thread, waits for the process to end, which is what
 * C and POSIX leave open and what newer C libraries and Rust's std (rust-lang/rust#126606) do. A thread
 * calling exit() again from an exit handler goes on (glibc's nested exit). */
static _Atomic uint32_t exit_tid;

RS_EXPORT void exit(int status)
{
    REAL_MT(exit);
    if (ours()) {
        uint32_t me = rs_gettid(), none = 0;
        if (!atomic_compare_exchange_strong(&exit_tid, &none, me) && none != me)
            for (;;) pause(); /* the other thread's exit ends us */
    }
    if (real_exit) real_exit(status);
    for (;;) syscall(SYS_exit_group, status);
}

/* Destructors run from _dl_fini, which glibc registers (__libc_start_main) after a preloaded library's
 * constructor has registered on_exit_flush: at exit() or a return from main, this runs first and
 * on_exit_flush after it. The exit status is known only there, so this writes what has been recorded
 * (shutdown hooks first, as before other libraries are gone) and leaves PROC_END to on_exit_flush. When
 * the library was loaded after main started (dlopen), on_exit_flush ran already and this is a no-op. */
__attribute__((destructor)) static void rs_core_dtor(void)
{
    if (!ours()) return;
    int g = rs_tls.guard;
    rs_tls.guard = 1;
    rs_run_shutdown_hooks();
    rs_core_request(0, 0, 0, 10000, 1);
    rs_tls.guard = g;
}

RS_EXPORT void _exit(int status)
{
    REAL_EARLY(_exit);
    final_flush(status, RS_END__EXIT, 5000);
    if (real__exit) real__exit(status);
    for (;;) syscall(SYS_exit_group, status); /* unreachable in practice */
}

RS_EXPORT void _Exit(int status)
{
    REAL_EARLY(_Exit);
    final_flush(status, RS_END__EXIT, 5000);
    if (real__Exit) real__Exit(status);
    for (;;) syscall(SYS_exit_group, status);
}

/* ---- signals ----
 * We take SIGTERM/SIGINT/SIGHUP/SIGQUIT/SIGABRT only while the application leaves them at SIG_DFL, and we keep that
 * invisible: sigaction()/signal() queries answer what the application set (SIG_DFL), an application
 * handler replaces ours in the kernel (so it runs natively, with its own flags and mask), and setting
 * SIG_DFL again puts ours back. */

static const int term_signals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGABRT};
#define RS_NSIG 65
static _Atomic int sig_ours[RS_NSIG];     /* our handler is what the kernel has */
static struct sigaction sig_app[RS_NSIG]; /* what the application believes is installed */

RS_NO_SANITIZE static int real_sigaction_call(int sig, const struct sigaction *act, struct sigaction *old)
{
    static int (*real)(int, const struct sigaction *, struct sigaction *);
    if (!real) real = (int (*)(int, const struct sigaction *, struct sigaction *))real_sym("sigaction");
    if (!real) return (int)syscall(SYS_rt_sigaction, sig, act, old, 8); /* not reached with glibc */
    return real(sig, act, old);
}

RS_NO_SANITIZE static int is_term_signal(int sig)
{
    return sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT || sig == SIGABRT;
}

/* The signal's default action, at once (it is blocked while its handler runs: the process ends as the handler
 * returns). */
static void default_action(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    atomic_store(&sig_ours[sig], 0);
    real_sigaction_call(sig, &dfl, NULL);
    raise(sig);
}

/* The trace written (by the writer thread: we only ask and wait), the default action: the signal raised again over
 * SIG_DFL, so the exit status still says "killed by signal" (blocked in our handler until it returns). */
static void term_now(int sig)
{
    if (ours()) {
        atomic_store(&rs_dying, 1); /* other recording threads park: nothing they return from is lost */
        final_flush(128 + sig, RS_END_SIGNAL, 3000);
    }
    default_action(sig);
}

/* Installed only over SIG_DFL. */
static void on_term_signal(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    int saved = errno;
    if ((ours() || (rs_tls.in_final && getpid() == rs_pid)) &&
        (rs_tls.in_final || rs_tls.in_wlock || rs_tls.strings_held)) {
        /* This thread holds a lock the writer needs: asking the writer (below) would wait 3 s for ourselves and
         * leave a half-written file (a multiprocessing.Pool worker in os._exit() when the pool terminated it: 4
         * of 12 runs, session 29). The interrupted flush goes on; the signal is raised again when the lock is let
         * go (rs_raise_deferred). Not at all in the final flush of exit() or _exit() (bounded: its lock is tried
         * until a deadline), which writes the program's status into PROC_END and ends the process with it (only
         * exit handlers registered before the tracer's, then _exit, remain): the trace says how the process
         * ended, and untraced it would have ended before the signal came. */
        /* Sent by the process to itself (raise(), abort(), kill(getpid())): untraced it ends the process before
         * the call returns, and the program counts on that. The program's own handler, run on top of our flush,
         * does it: dash's SIGINT handler puts the default back and raise()s; deferred, raise() returned, dash
         * longjmp'ed out of our exec flush (the writer's lock left taken) and exited 130 for "killed by SIGINT"
         * (record_cli.t 17 under ASan, half the runs, session 30). It ends the process now; the flush it
         * interrupted is lost (the file ends at its last whole frame). */
        if (si && si->si_code <= 0 && si->si_pid == getpid()) default_action(sig);
        else if (!rs_tls.in_final && !rs_tls.deferred_sig) rs_tls.deferred_sig = sig; /* the first one ends it */
        errno = saved;
        return;
    }
    term_now(sig);
    errno = saved;
}

/* What the signal's default action would have done when it came, once the trace is written: the process ends of
 * it. Not raise() through whatever handler is installed by now: the program may have set its own meanwhile (dash
 * does, early), which would then run for a signal that, untraced, had ended the process before (record_cli.t 17:
 * Ctrl-C at a starting `sh -c` gave "exit 130" in 7 of 10 runs). */
void rs_raise_deferred(void)
{
    int sig = rs_tls.deferred_sig;
    if (!sig || rs_tls.in_wlock || rs_tls.strings_held) return;
    rs_tls.deferred_sig = 0;
    int saved = errno;
    term_now(sig);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, sig);
    pthread_sigmask(SIG_UNBLOCK, &s, NULL); /* the program's mask of now did not hold it back when it came */
    errno = saved;
}

static int install_ours(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_term_signal;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (real_sigaction_call(sig, &sa, NULL) != 0) return -1;
    atomic_store(&sig_ours[sig], 1);
    return 0;
}

static void install_signals(void)
{
    for (size_t i = 0; i < sizeof term_signals / sizeof term_signals[0]; i++) {
        int sig = term_signals[i];
        struct sigaction old;
        if (real_sigaction_call(sig, NULL, &old) != 0) continue;
        if (old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO)) continue; /* app's own or SIG_IGN */
        sig_app[sig] = old;
        install_ours(sig);
    }
}

static int is_dfl(const struct sigaction *a) { return !(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_DFL; }

/* TSan and ASan install their own handlers through here during their start-up. */
RS_NO_SANITIZE RS_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
    if (sig <= 0 || sig >= RS_NSIG || !is_term_signal(sig) || atomic_load(&rs_state) != RS_ST_RUNNING)
        return real_sigaction_call(sig, act, old);
    if (atomic_load(&sig_ours[sig])) {
        struct sigaction prev = sig_app[sig];
        if (act) {
            if (is_dfl(act)) {
                sig_app[sig] = *act; /* still default as far as anyone can tell: keep ours */
            } else {
                int r = real_sigaction_call(sig, act, NULL);
                if (r != 0) return r;
                atomic_store(&sig_ours[sig], 0);
            }
        }
        if (old) *old = prev;
        return 0;
    }
    int r = real_sigaction_call(sig, act, old);
    if (r == 0 && act && is_dfl(act)) {
        int saved = errno;
        sig_app[sig] = *act;
        install_ours(sig);
        errno = saved;
    }
    return r;
}

/* glibc's signal() goes to sigaction internally, past our wrapper: same BSD semantics here. */
RS_NO_SANITIZE RS_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sig > 0 && sig < RS_NSIG) sigaddset(&sa.sa_mask, sig);
    if (sigaction(sig, &sa, &old) != 0) return SIG_ERR;
    return (old.sa_flags & SA_SIGINFO) ? (sighandler_t)(void (*)(void))old.sa_sigaction : old.sa_handler;
}

/* ---- fork ---- */

/* Serialises the credential wrappers (below). Another thread may hold it across fork(): the child, whose
 * only thread is the forking one, starts with a fresh one (else its own setuid() would wait forever).
 * A wrapper stops the writer thread and starts a new one: a thread exit and a pthread_create, in which the
 * thread library and a sanitizer's runtime take their own locks. A fork() in the middle of that hands the
 * child those locks taken, with no thread to release them: gcc 12's libasan keeps its thread registry
 * locked in both and has no fork handler (LLVM added one in 2023), so the child's first pthread_create (the
 * writer thread fork_child starts) waited on it forever (tests/core/cred_fork.t under ASan: 4 of 40 runs of
 * 100 forks at load 3-8; backtrace in docs/dev/journal/hardening.md, session 7). So fork_prepare
 * waits for a change in progress to finish (bounded) and holds the lock across fork(); wrappers let a
 * waiting fork go first (fork_waiting), else a thread changing ids in a loop could keep it out. */
static pthread_mutex_t cred_lock = PTHREAD_MUTEX_INITIALIZER;
static __thread volatile sig_atomic_t cred_held; /* this thread is in a wrapper (a signal handler that forks) */
/* This thread is between fork_prepare and fork_parent/fork_child: it holds cred_lock and the writer's locks,
 * so a credential call it makes now (another library's fork handler, a signal handler interrupting fork())
 * must not wait for them: it goes straight to the real call (the writer thread, blocked on the writer lock,
 * cannot be stopped then anyway). */
static __thread volatile sig_atomic_t in_fork;
static _Atomic uint32_t fork_waiting; /* a fork() waits for cred_lock */
/* what fork_prepare took, for fork_parent (per thread: glibc before 2.28 could run two forks' handlers at once) */
static __thread int fork_took_cred, fork_took_writer;
/* The program's signal mask, from the start of fork_prepare until the handlers after the fork are done. Signals
 * stay blocked across our part of the fork so that none lands in the child while our child handler is half done
 * (its pid not yet ours, its writer being reset: a handler calling _exit() there ended the child without its trace
 * file, tests/core/sigexit.t under ASan, 5 of 30), nor in the parent while we hold our locks (a handler's own fork
 * then waited on them forever). They are delivered when the mask is restored. Faults (SIGSEGV & co.) stay
 * unblocked: blocked, a real one is fatal, and other libraries' fork handlers may probe memory under a handler. */
static __thread sigset_t fork_added; /* the signals our mask added to the program's */
static __thread int fork_masked;
/* A fork inside our window: the parent handler of a library registered before ours runs between our prepare and our
 * parent handler (handlers after a fork run in registration order) and may fork. Only the outermost level takes the
 * locks and the mask. In the nested fork's child, the outer forks' parent handlers still run later (the code returns
 * through them): they are skipped there, our child handler having reset everything. */
static __thread int fork_depth, fork_parent_skips;

/* Only what we added is unblocked: another library's fork handler may have changed the mask meanwhile. */
static void fork_unmask(void)
{
    if (fork_masked) pthread_sigmask(SIG_UNBLOCK, &fork_added, NULL);
    fork_masked = 0;
}

/* The handlers run inside the program's fork(): whatever errno our waits leave (a futex timeout) must not show
 * after a successful fork, so each one restores what it found. */
static void fork_prepare(void)
{
    int saved_errno = errno;
    /* the mask first: a signal between the depth check and the mask would make its handler's fork look nested */
    sigset_t set, old;
    sigfillset(&set);
    static const int faults[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS};
    for (size_t i = 0; i < sizeof faults / sizeof faults[0]; i++) sigdelset(&set, faults[i]);
    int masked = pthread_sigmask(SIG_BLOCK, &set, &old) == 0;
    if (fork_depth++ > 0) {
        if (masked) pthread_sigmask(SIG_SETMASK, &old, NULL); /* nested: the outer level's mask stands */
        errno = saved_errno;
        return;
    }
    fork_masked = masked;
    if (masked) {
        fork_added = set;
        for (int sig = 1; sig < NSIG; sig++)
            if (sigismember(&old, sig)) sigdelset(&fork_added, sig); /* the program's own stay blocked */
    }
    in_fork = 1;
    fork_took_cred = 0;
    if (!cred_held) {
        atomic_store(&fork_waiting, 1);
        struct timespec until;
        /* CLOCK_REALTIME (timedlock): gcc 12's TSan does not intercept pthread_mutex_clocklock and then reports
         * our unlock as "unlock of an unlocked mutex"; a wall-clock step only changes this bound */
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 5; /* a wrapper waits up to 2 s for the writer thread to stop */
        /* only tried when this thread's interrupted code holds the string lock, which another fork's prepare may
         * wait for while it holds this one (rs_writer_fork_prepare): that fork would wait 5 s */
        if (rs_strings_mine()) fork_took_cred = pthread_mutex_trylock(&cred_lock) == 0;
        else fork_took_cred = pthread_mutex_timedlock(&cred_lock, &until) == 0;
    }
    fork_took_writer = atomic_load(&rs_state) == RS_ST_RUNNING;
    if (fork_took_writer) rs_writer_fork_prepare();
    errno = saved_errno;
}

static void fork_done(void)
{
    atomic_store(&fork_waiting, 0);
    rs_futex_wake(&fork_waiting);
}

static void fork_parent(void)
{
    int saved_errno = errno;
    if (fork_parent_skips > 0) {
        fork_parent_skips--;
        return;
    }
    if (fork_depth > 0 && --fork_depth > 0) return;
    if (fork_took_writer) rs_writer_fork_parent();
    if (fork_took_cred) pthread_mutex_unlock(&cred_lock);
    fork_done();
    in_fork = 0;
    fork_unmask();
    errno = saved_errno;
}

static void fork_child_body(void);
static void fork_child(void)
{
    int saved_errno = errno;
    /* Ran already in this process: another library's child handler (registered before ours, so it runs first)
     * forked, the new process went through all the child handlers, ours included, and now comes back round to ours
     * in the outer fork's sequence. A second run started a second writer thread on the same state (session 29). */
    if (fork_depth == 0 && rs_pid == getpid()) return;
    fork_parent_skips = fork_depth > 1 ? fork_depth - 1 : 0;
    fork_depth = 0;
    fork_child_body();
    fork_unmask();
    errno = saved_errno;
}

static void fork_child_body(void)
{
    /* A fork from a signal handler that interrupted one of our locked sections: that section is the parent's to
     * finish (it resumes in both, and lets go then); the child must not hold back its own termination signals
     * meanwhile, perhaps for ever (helper-86: a child waiting for a string lock no thread of it held, unkillable
     * by SIGTERM), nor raise its parent's. */
    rs_tls.in_wlock = 0;
    rs_tls.strings_held = 0;
    rs_tls.deferred_sig = 0;
    pthread_mutex_init(&cred_lock, NULL);
    fork_done();
    in_fork = 0;
    if (atomic_load(&rs_state) != RS_ST_RUNNING) {
        /* stopped since the prepare (another thread's exit flush): the locks it took are this thread's, let go
         * here as the parent does; left taken, this thread's next string lookup waited for itself (helper-90) */
        if (fork_took_writer) rs_writer_fork_parent();
        return;
    }
    rs_pid = getpid();
    atomic_store(&exit_tid, 0);
    atomic_store(&final_tid, 0);
    atomic_store(&final_done, 0);
    rs_rings_after_fork_child();
    rs_writer_child_reset();
    rs_run_fork_child_hooks(); /* before the child's writer thread can run tick hooks */
    rs_writer_thread_start(0); /* the child's file is created at its first event, or at its end */
}

RS_EXPORT pid_t fork(void)
{
    REAL_EARLY(fork);
    if (!real_fork) {
        errno = ENOSYS;
        return -1;
    }
    pid_t p = real_fork();
    if (p > 0) {
        int saved = errno;
        if (rs_on(RS_FAM_core) && rs_guard_enter()) {
            struct rs_ev_FORK f;
            RS_EV_INIT(&f, FORK, rs_now());
            f.child_pid = (uint64_t)p;
            rs_emit(&f.h);
            rs_guard_exit();
        }
        errno = saved;
    }
    return p;
}

/* ---- our descriptor ----
 * The trace file's descriptor sits at 100 or above, a number that was free when we took it. A program
 * that closes every descriptor (close_range, closefrom, a loop of close) or dup2()s onto that number must
 * neither lose the trace nor notice us: close() of our number answers EBADF without closing it (untraced,
 * the number would not be open), close_range()/closefrom() close everything around it, and dup2()/dup3()
 * onto it move our descriptor elsewhere first, so the program gets the number it asked for. What these
 * wrappers cannot see (a raw close_range system call) the writer notices before its next write: it opens
 * the file again by name if it is the same file (tracer/writer.c), else it stops and warns. */

static int is_trace_fd(long fd)
{
    return fd >= 0 && fd == atomic_load(&rs_trace_fd) && getpid() == rs_pid && rs_trace_fd_match((int)fd);
}

/* glibc's own names for close and dup2 (exported since 2.2.5): no lookup, which could itself close
 * descriptors before it is done. */
extern int __close(int fd);
extern int __dup2(int oldfd, int newfd);

RS_EXPORT int close(int fd)
{
    if (is_trace_fd(fd)) return errno = EBADF, -1;
    return __close(fd);
}

static int close_range_real(unsigned first, unsigned last, int flags)
{
    REAL_MT(close_range);
    if (real_close_range) return real_close_range(first, last, flags);
    return (int)syscall(SYS_close_range, first, last, flags);
}

RS_EXPORT int close_range(unsigned first, unsigned last, int flags)
{
    int fd = atomic_load(&rs_trace_fd);
    if (!is_trace_fd(fd) || (unsigned)fd < first || (unsigned)fd > last || first > last ||
        (flags & CLOSE_RANGE_CLOEXEC)) /* ours is close-on-exec already */
        return close_range_real(first, last, flags);
    int r = (unsigned)fd > first ? close_range_real(first, (unsigned)fd - 1, flags) : 0;
    if (r == 0 && (unsigned)fd < last) r = close_range_real((unsigned)fd + 1, last, flags);
    return r;
}

RS_EXPORT void closefrom(int lowfd)
{
    REAL_MT(closefrom);
    int fd = atomic_load(&rs_trace_fd);
    if (!is_trace_fd(fd) || fd < lowfd || lowfd < 0) {
        if (real_closefrom) real_closefrom(lowfd);
        else close_range_real((unsigned)lowfd, ~0u, 0);
        return;
    }
    int saved = errno; /* closefrom() does not fail and leaves errno alone */
    if (close_range(fd > lowfd ? (unsigned)lowfd : (unsigned)fd + 1, ~0u, 0) != 0) {
        long max = sysconf(_SC_OPEN_MAX); /* no close_range (kernel < 5.9): one at a time */
        for (long i = lowfd; i < (max > 0 && max < 1048576 ? max : 65536); i++)
            if (i != fd) close((int)i);
    }
    errno = saved;
}

/* fcntl() on our number answers EBADF, as for any number that is not open: a shell about to dup2() onto
 * a number first saves what is open there with F_DUPFD and puts it back afterwards (bash did, with our
 * descriptor, then wrote its own output into the trace file through the copy). dup() likewise. */
extern int __fcntl(int fd, int cmd, ...);

static int fcntl_common(int fd, int cmd, va_list ap)
{
    void *arg = va_arg(ap, void *); /* every fcntl argument is an int or a pointer: one register */
    if (is_trace_fd(fd)) return errno = EBADF, -1;
    return __fcntl(fd, cmd, arg);
}

RS_EXPORT int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    int r = fcntl_common(fd, cmd, ap);
    va_end(ap);
    return r;
}

RS_EXPORT int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    int r = fcntl_common(fd, cmd, ap);
    va_end(ap);
    return r;
}

RS_EXPORT int dup(int fd)
{
    REAL_MT(dup);
    if (is_trace_fd(fd)) return errno = EBADF, -1;
    if (!real_dup) return (int)syscall(SYS_dup, fd);
    return real_dup(fd);
}

RS_EXPORT int dup2(int oldfd, int newfd)
{
    if (is_trace_fd(oldfd)) return errno = EBADF, -1;
    if (oldfd != newfd && is_trace_fd(newfd)) {
        int saved = errno;
        rs_trace_fd_vacate(newfd);
        errno = saved;
    }
    return __dup2(oldfd, newfd);
}

RS_EXPORT int dup3(int oldfd, int newfd, int flags)
{
    REAL_MT(dup3);
    if (is_trace_fd(oldfd)) return errno = EBADF, -1;
    if (oldfd != newfd && is_trace_fd(newfd)) {
        int saved = errno;
        rs_trace_fd_vacate(newfd);
        errno = saved;
    }
    if (!real_dup3) return (int)syscall(SYS_dup3, oldfd, newfd, flags);
    return real_dup3(oldfd, newfd, flags);
}

/* ---- credentials ----
 * glibc makes setuid() & co. process-wide by signalling every thread it knows to make the same system
 * call, and aborts the process when a thread's result differs from the caller's. The writer thread's
 * could: capabilities, PR_SET_KEEPCAPS and securebits are per thread (setpriv --reuid=... raises its
 * capabilities in its own thread between setresuid and setresgid; the writer's setresgid then failed with
 * EPERM and the program died of SIGABRT). So unless its credentials are the calling thread's (then both get the
 * same result; the usual case, and the only one that costs no thread), the writer thread is stopped for the change
 * and started again after it from the calling thread, whose credentials the new thread copies
 * (rs_writer_thread_stop). The program sees the real call's result and errno. Callers serialise here (glibc
 * serialises the changes themselves too). */

static void cred_enter(void)
{
    /* a fork() waiting for the lock goes first (up to 100 ms: it holds it only across the fork itself) */
    for (int i = 0; i < 100 && atomic_load(&fork_waiting); i++) rs_futex_wait(&fork_waiting, 1, 1);
    cred_held = 1;
    pthread_mutex_lock(&cred_lock);
}

static void cred_leave(void)
{
    pthread_mutex_unlock(&cred_lock);
    cred_held = 0;
}

/* errno: what the real call left when it failed; when it succeeded, what the program had before the call
 * (our own waits and probes, a futex timeout or a tgkill's ESRCH, must not show through a success).
 * The program's signals wait (blocked) while a wrapper runs: a signal handler that changes ids itself (setuid is
 * async-signal-safe) and interrupted this thread's wrapper waited forever on cred_lock, which this thread held
 * (tests/core/fork_handlers.t `nested`), or inside the real call on the thread library's lock its broadcast
 * holds (the writer thread makes the program multi-threaded). A wrapper re-entered in the same thread anyway
 * (cred_held) goes straight to the real call rather than wait on its own lock. */
#define CRED_WRAP(name, call)                                                         \
    REAL_EARLY(name);                                                                 \
    if (!real_##name) return errno = ENOSYS, -1;                                      \
    if (!ours() || rs_tls.is_writer || in_fork || cred_held) return real_##name call; \
    int entry_errno = errno;                                                          \
    sigset_t all_, old_;                                                              \
    sigfillset(&all_);                                                                \
    pthread_sigmask(SIG_BLOCK, &all_, &old_);                                         \
    cred_enter();                                                                     \
    int stopped = rs_writer_thread_stop(2000);                                        \
    errno = entry_errno;                                                              \
    int r = real_##name call, saved = errno;                                          \
    if (stopped) rs_writer_thread_restart();                                          \
    cred_leave();                                                                     \
    pthread_sigmask(SIG_SETMASK, &old_, NULL);                                        \
    errno = r == 0 ? entry_errno : saved;                                             \
    return r

RS_EXPORT int setuid(uid_t u) { CRED_WRAP(setuid, (u)); }
RS_EXPORT int setgid(gid_t g) { CRED_WRAP(setgid, (g)); }
RS_EXPORT int seteuid(uid_t u) { CRED_WRAP(seteuid, (u)); }
RS_EXPORT int setegid(gid_t g) { CRED_WRAP(setegid, (g)); }
RS_EXPORT int setreuid(uid_t r_, uid_t e) { CRED_WRAP(setreuid, (r_, e)); }
RS_EXPORT int setregid(gid_t r_, gid_t e) { CRED_WRAP(setregid, (r_, e)); }
RS_EXPORT int setresuid(uid_t r_, uid_t e, uid_t s) { CRED_WRAP(setresuid, (r_, e, s)); }
RS_EXPORT int setresgid(gid_t r_, gid_t e, gid_t s) { CRED_WRAP(setresgid, (r_, e, s)); }
RS_EXPORT int setgroups(size_t n, const gid_t *list) { CRED_WRAP(setgroups, (n, list)); }

/* ---- exec: write what we have before the image is replaced (the new image traces itself) ---- */

static void before_exec(void)
{
    if (!ours() || rs_tls.guard) return;
    int saved = errno;
    rs_tls.guard = 1;
    rs_core_request(0, 0, RS_END_EXEC, 3000, 1);
    rs_tls.guard = 0;
    errno = saved;
}

RS_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    REAL(execve);
    if (!real_execve) return errno = ENOSYS, -1;
    before_exec();
    return real_execve(path, argv, envp);
}

RS_EXPORT int execv(const char *path, char *const argv[])
{
    REAL(execv);
    if (!real_execv) return errno = ENOSYS, -1;
    before_exec();
    return real_execv(path, argv);
}

RS_EXPORT int execvp(const char *file, char *const argv[])
{
    REAL(execvp);
    if (!real_execvp) return errno = ENOSYS, -1;
    before_exec();
    return real_execvp(file, argv);
}

RS_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    REAL(execvpe);
    if (!real_execvpe) return errno = ENOSYS, -1;
    before_exec();
    return real_execvpe(file, argv, envp);
}

RS_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    REAL(fexecve);
    if (!real_fexecve) return errno = ENOSYS, -1;
    before_exec();
    return real_fexecve(fd, argv, envp);
}

/* execl*: collect the variadic arguments into an argv and go through the execv* wrappers above. */
#define COLLECT_ARGS(arg0, ap, argv, n)   \
    size_t n = 1;                         \
    va_start(ap, arg0);                   \
    while (va_arg(ap, const char *)) n++; \
    va_end(ap);                           \
    const char *argv[n + 1];              \
    argv[0] = arg0;                       \
    va_start(ap, arg0);                   \
    for (size_t i = 1; i <= n; i++) argv[i] = va_arg(ap, const char *);

RS_EXPORT int execl(const char *path, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, ap, argv, n)
    va_end(ap);
    return execv(path, (char *const *)argv);
}

RS_EXPORT int execlp(const char *file, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, ap, argv, n)
    va_end(ap);
    return execvp(file, (char *const *)argv);
}

RS_EXPORT int execle(const char *path, const char *arg, ...)
{
    va_list ap;
    COLLECT_ARGS(arg, ap, argv, n)
    char *const *envp = va_arg(ap, char *const *);
    va_end(ap);
    return execve(path, (char *const *)argv, envp);
}

void rs_lifecycle_init(void)
{
    static int done;
    if (done) return; /* registrations survive fork; an exec'd image starts from scratch anyway */
    done = 1;
    early_lookup();
    on_exit(on_exit_barrier, NULL);
    on_exit(on_exit_flush, NULL);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
    install_signals();
}
