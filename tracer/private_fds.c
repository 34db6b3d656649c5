/* Files the tracer reads while the program runs (the host facts at start, new threads' names, NCCL's log) are
 * opened on a short-lived thread whose file descriptor table is its own, never in the program's table. An open()
 * takes the lowest free number, and a program may close a number and dup2() onto it a moment later: dash does
 * exactly that for `cmd >&2` (fcntl(1, F_DUPFD, 10); close(1); dup2(2, 1)). When the writer thread opened a file
 * in between, the program's dup2() failed with EBUSY (the number was taken and not yet installed; 4-6 of 100
 * `railscope record -- sh -c 'echo hi >&2'` runs printed "sh: 1: 2: Device or resource busy"), or it succeeded
 * and the writer's close() then closed the program's stdout (session 26).
 *
 * The thread gets an empty table with close_range(0, ~0, CLOSE_RANGE_UNSHARE) (Linux 5.9): for the whole range
 * the kernel copies no descriptor into the new table, so none of the program's files is held, flushed (a close
 * flushes NFS and FUSE files) or kept from its EOF. Where that is refused (an older kernel, a seccomp policy
 * without close_range), the work runs on the calling thread as before, and no thread is created again. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core_int.h"
#include "hostfacts/hostfacts.h"

#ifndef CLOSE_RANGE_UNSHARE
#define CLOSE_RANGE_UNSHARE (1U << 1)
#endif

struct private_job {
    void (*fn)(void *);
    void *arg;
    int ran;  /* fn ran on the private table */
    int errn; /* close_range's errno when it was refused */
};

/* Held from the helper's creation to its join: fork() waits for it (rs_private_fds_fork_prepare), so that a child
 * never inherits the thread library's (or a sanitizer's) locks taken by a thread starting or ending. */
static pthread_mutex_t private_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int private_ok = 1; /* 0 once refused: the work runs on the caller, no thread is created */

static void *private_main(void *p)
{
    struct private_job *j = p;
    rs_tls.guard = 1; /* the tracer's own thread: nothing it does is recorded */
    rs_own_thread_enter();
    if (syscall(SYS_close_range, 0u, ~0u, CLOSE_RANGE_UNSHARE) != 0) {
        j->errn = errno;
        return NULL;
    }
    j->fn(j->arg);
    j->ran = 1;
    return NULL;
}

int rs_run_private_fds(void (*fn)(void *), void *arg)
{
    struct private_job j = {fn, arg, 0, 0};
    int e = -1;
    /* not while a fatal signal is handled: the crashed thread may hold the allocator's lock, which pthread_create
     * needs (the trace's last frames matter more than the race then) */
    if (atomic_load(&private_ok) && !atomic_load(&rs_dying)) {
        sigset_t all, old;
        sigfillset(&all);
        pthread_mutex_lock(&private_lock);
        pthread_sigmask(SIG_SETMASK, &all, &old); /* the thread never takes the program's signals */
        pthread_attr_t a;
        pthread_t t;
        e = pthread_attr_init(&a);
        if (!e) {
            pthread_attr_setstacksize(&a, 1024 * 1024); /* host facts: PATH_MAX and directory buffers, a few deep */
            e = pthread_create(&t, &a, private_main, &j);
            pthread_attr_destroy(&a);
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (!e) pthread_join(t, NULL);
        pthread_mutex_unlock(&private_lock);
        if (j.ran) return 1;
        if (!e && atomic_exchange(&private_ok, 0)) /* refused for good; no thread (EAGAIN): this time only */
            rs_log(RS_LOG_INFO,
                   "no descriptor table of its own (close_range(CLOSE_RANGE_UNSHARE): %s): the tracer reads its files "
                   "on the writer thread, where a program's close() + dup2() onto a number can meet them",
                   strerror(j.errn));
    }
    fn(arg);
    return 0;
}

static __thread int private_took; /* per forking thread, for its parent handler */
void rs_private_fds_fork_prepare(int wait)
{
    private_took = (wait ? pthread_mutex_lock(&private_lock) : pthread_mutex_trylock(&private_lock)) == 0;
}
void rs_private_fds_fork_parent(void)
{
    if (private_took) pthread_mutex_unlock(&private_lock);
    private_took = 0;
}
void rs_private_fds_fork_child(void) { pthread_mutex_init(&private_lock, NULL); }

ssize_t rs_pread_file(const char *path, void *buf, size_t n, off_t off)
{
    int fd = hf_fd_open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return -1;
    struct stat st;
    size_t got = 0;
    if (hf_fd_fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        while (got < n) {
            ssize_t r = hf_fd_pread(fd, (char *)buf + got, n - got, off + (off_t)got);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            got += (size_t)r;
        }
    hf_fd_close(fd);
    return (ssize_t)got;
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
    j->got = rs_pread_file(j->path, j->buf, j->n, j->off);
}

ssize_t rs_private_pread(const char *path, void *buf, size_t n, off_t off)
{
    struct pread_job j = {path, buf, n, off, -1};
    rs_run_private_fds(pread_job, &j);
    return j.got;
}
