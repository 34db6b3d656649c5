/* Files the tracer reads while the program runs (the host facts at start, a new thread's name, NCCL's log) are
 * opened on a short-lived thread whose file descriptor table is its own (unshare(CLONE_FILES)), never in the
 * program's table. An open() takes the lowest free number, and a program may close a number and dup2() onto it
 * a moment later: dash does exactly that for `cmd >&2` (fcntl(1, F_DUPFD, 10); close(1); dup2(2, 1)). When the
 * writer thread opened a file in between, the program's dup2() failed with EBUSY (the number was taken and not
 * yet installed; 6 of 100 `railscope record -- sh -c 'echo hi >&2'` runs printed "sh: 1: 2: Device or resource
 * busy"), or it succeeded and the writer's close() then closed the program's stdout (session 26).
 *
 * The private table starts as a copy of the program's; every copy is closed at once (close_range), so the
 * program's files are not held open (a pipe's end the program closes reaches EOF; POSIX locks belong to the table
 * that set them and are not released by closing another table's copies). Where no private table can be had
 * (unshare refused, e.g. by a container's seccomp policy, or no thread), the work runs on the calling thread as
 * before; likewise under any seccomp filter (unshare is not even tried: a filter may kill for it). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core_int.h"

struct private_job {
    void (*fn)(void *);
    void *arg;
    int ran; /* fn ran on the private table */
};

static void *private_main(void *p)
{
    struct private_job *j = p;
    rs_tls.guard = 1; /* the tracer's own thread: nothing it does is recorded */
    /* Under a seccomp filter unshare() may be refused, or kill the process (a filter whose default is to kill):
     * not tried there (Docker's default profile refuses it anyway without CAP_SYS_ADMIN). The writer already
     * calls prctl() (its name), so asking costs no new system call. */
    if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != 0 || unshare(CLONE_FILES) != 0) return NULL;
    syscall(SYS_close_range, 0u, ~0u, 0); /* the copies (not our close_range(): it spares the trace descriptor) */
    j->fn(j->arg);
    j->ran = 1;
    return NULL;
}

int rs_run_private_fds(void (*fn)(void *), void *arg)
{
    struct private_job j = {fn, arg, 0};
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread never takes the program's signals */
    pthread_attr_t a;
    pthread_t t;
    int e = pthread_attr_init(&a);
    if (!e) {
        pthread_attr_setstacksize(&a, 1024 * 1024); /* host facts: PATH_MAX and directory buffers, a few deep */
        e = pthread_create(&t, &a, private_main, &j);
        pthread_attr_destroy(&a);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!e) pthread_join(t, NULL); /* joined: the kernel thread is gone, the table with it */
    if (j.ran) return 1;
    static int warned;
    if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED) && rs_cfg.log_level >= RS_LOG_DEBUG)
        rs_warn("no private descriptor table (%s): files are read on the writer thread",
                e ? "no thread" : "a seccomp filter, or unshare(CLONE_FILES) refused");
    fn(arg);
    return 0;
}

struct pread_job {
    const char *path;
    void *buf;
    size_t n;
    off_t off;
    ssize_t got;
};

static void pread_job(void *p)
{
    struct pread_job *j = p;
    int fd = open(j->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return;
    size_t got = 0;
    while (got < j->n) {
        ssize_t r = pread(fd, (char *)j->buf + got, j->n - got, j->off + (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += (size_t)r;
    }
    close(fd);
    j->got = (ssize_t)got;
}

ssize_t rs_private_pread(const char *path, void *buf, size_t n, off_t off)
{
    struct pread_job j = {path, buf, n, off, -1};
    rs_run_private_fds(pread_job, &j);
    return j.got;
}
