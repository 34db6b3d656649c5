/* The program's count of its own threads leaves the tracer's out.
 *
 * Python 3.12 and later read the thread count (field 20 of /proc/self/stat, through fopen) at every os.fork() and,
 * above one, print "DeprecationWarning: This process (pid=N) is multi-threaded, use of fork() may lead to deadlocks
 * in the child." The tracer's writer thread alone made a single-threaded script print it traced and not untraced
 * (tests/core/harmless.t on the GPU host's Python 3.12, session 30). As sigaction() reports the program's own
 * handlers (lifecycle.c), fopen() of the process's own stat file for reading gets the file with the tracer's live
 * threads taken out of that field; every other byte is the kernel's. The descriptor is the number the real fopen()
 * took, with its close-on-exec flag: the edited text is put there (dup3) from a memfd. Nothing else is hidden:
 * /proc/self/status, /proc/self/task and open()/read() of the stat file show every thread (a program that lists its
 * threads sees "railscope-wr"); without memfd_create (a seccomp policy) the file is the kernel's. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core_int.h"

/* ---- the tracer's threads ----
 * Each registers its kernel tid when it starts (writer, private-descriptor helper, NVML sampler). A slot counts
 * while that tid is a thread of this process (tgkill with signal 0): the kernel takes a thread out of the pid table
 * and out of the stat file's count in the same step, so a thread that has returned but is not yet reaped still
 * counts as ours (a slot cleared by the thread itself left that moment to the program: "threads=2" after a join,
 * now and then). A slot whose tid has gone is free again; a fork child's copy of the parent's slots counts nothing. */
#define OWN_SLOTS 8
static _Atomic uint32_t own_tid[OWN_SLOTS];

static int tid_alive(pid_t pid, uint32_t tid) { return tid && syscall(SYS_tgkill, pid, (pid_t)tid, 0) == 0; }

void rs_own_thread_enter(void)
{
    uint32_t tid = rs_gettid();
    pid_t pid = getpid();
    int saved = errno;
    for (int i = 0; i < OWN_SLOTS; i++) {
        uint32_t old = atomic_load(&own_tid[i]);
        if ((!old || !tid_alive(pid, old)) && atomic_compare_exchange_strong(&own_tid[i], &old, tid)) break;
    }
    errno = saved; /* more than OWN_SLOTS at once: this one shows in the count */
}

int rs_own_threads(void)
{
    int n = 0;
    pid_t pid = getpid();
    int saved = errno;
    for (int i = 0; i < OWN_SLOTS; i++) n += tid_alive(pid, atomic_load(&own_tid[i]));
    errno = saved;
    return n;
}

/* ---- fopen ---- */

/* "/proc/self/stat", "/proc/thread-self/stat" or "/proc/<this pid>/stat" */
static int own_stat_path(const char *path)
{
    if (!path || strncmp(path, "/proc/", 6) != 0) return 0;
    const char *p = path + 6;
    if (!strcmp(p, "self/stat") || !strcmp(p, "thread-self/stat")) return 1;
    char *end;
    long pid = strtol(p, &end, 10);
    return end != p && *p != '0' && !strcmp(end, "/stat") && pid == (long)getpid();
}

static int read_only_mode(const char *mode) { return mode && mode[0] == 'r' && !strchr(mode, '+'); }

/* Field 20 (num_threads) of a stat line lowered by `ours` (to 1 at least): the edited line into out, its length;
 * 0 when the line is not as expected. Fields are counted from the last ')': the command name may hold spaces. */
size_t rs_selfstat_edit(const char *in, size_t len, int ours, char *out, size_t cap)
{
    const char *end = in + len, *p = NULL;
    for (const char *q = in; q < end; q++)
        if (*q == ')') p = q;
    if (!p) return 0;
    int field = 2;
    for (p++; p < end && field < 20; p++)
        if (*p == ' ') field++;
    if (field != 20 || p >= end || *p < '0' || *p > '9') return 0;
    const char *num = p;
    long n = 0;
    while (p < end && *p >= '0' && *p <= '9' && n < 100000000) n = n * 10 + (*p++ - '0');
    long m = n - ours < 1 ? 1 : n - ours;
    int w = snprintf(out, cap, "%.*s%ld%.*s", (int)(num - in), in, m, (int)(end - p), p);
    return w > 0 && (size_t)w < cap ? (size_t)w : 0;
}

/* The real file is open on fd (the number fopen took): put the edited text there. */
static void hide_own_threads(int fd, int ours)
{
    char in[2048], out[2048];
    ssize_t len = pread(fd, in, sizeof in, 0);
    if (len <= 0 || (size_t)len == sizeof in) return;
    size_t olen = rs_selfstat_edit(in, (size_t)len, ours, out, sizeof out);
    if (!olen) return;
    int fdflags = fcntl(fd, F_GETFD);
    if (fdflags < 0) return;
    int m = (int)syscall(SYS_memfd_create, "stat", 0u);
    if (m < 0) return;
    if (write(m, out, olen) == (ssize_t)olen && lseek(m, 0, SEEK_SET) == 0)
        dup3(m, fd, (fdflags & FD_CLOEXEC) ? O_CLOEXEC : 0);
    close(m);
}

typedef FILE *fopen_fn(const char *, const char *);

static FILE *open_stat(fopen_fn *real, const char *path, const char *mode)
{
    if (!real) return errno = ENOSYS, (FILE *)NULL;
    if (RS_LIKELY(!own_stat_path(path)) || !read_only_mode(mode) || rs_pid != getpid()) return real(path, mode);
    int ours = rs_own_threads();
    FILE *f = real(path, mode);
    if (f && ours > 0) {
        int saved = errno;
        hide_own_threads(fileno(f), ours);
        errno = saved;
    }
    return f;
}

/* preload/dl.c's: dlsym(RTLD_NEXT) through the real dlsym, not our wrapper (absent where only the core is linked) */
extern void *rs_dl_next(const char *name) __attribute__((weak));

static fopen_fn *real_fopen_fn(const char *name, void **slot)
{
    void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!p) {
        p = rs_dl_next ? rs_dl_next(name) : NULL;
        if (!p) p = dlsym(RTLD_NEXT, name);
        __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    }
    return (fopen_fn *)p;
}

RS_EXPORT FILE *fopen(const char *path, const char *mode)
{
    static void *slot;
    return open_stat(real_fopen_fn("fopen", &slot), path, mode);
}

RS_EXPORT FILE *fopen64(const char *path, const char *mode)
{
    static void *slot;
    return open_stat(real_fopen_fn("fopen64", &slot), path, mode);
}
