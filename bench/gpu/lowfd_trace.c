/* Who takes a low descriptor number, on which thread, from where: a diagnostic preload for the GPU host (session 31:
 * tests/gpu/run_fd_race_cuda.sh still met one EBUSY in most traced runs with CUPTI never attached, none with the
 * CUDA family off). Every open/open64/openat/openat64 (and their fortified __*_2 forms), fopen/fopen64, opendir,
 * dup, pipe, pipe2, socket, socketpair, accept4, eventfd, memfd_create, fcntl(F_DUPFD*) that returns a descriptor
 * below LOWFD_MAX (default 10) prints the call, the number, the thread and a backtrace (names
 * from dladdr) on stderr; nothing else changes. glibc's own internal opens (fopen, opendir's) bypass it.
 *
 *   gcc -O1 -g -shared -fPIC -o lowfd_trace.so bench/gpu/lowfd_trace.c -ldl
 *   LD_PRELOAD=$PWD/lowfd_trace.so:build/gpu/librailscope.so python3 prog.py */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static __thread int inside;

static void report(const char *what, const char *path, int fd)
{
    static int max = -1;
    if (max < 0) max = getenv("LOWFD_MAX") ? atoi(getenv("LOWFD_MAX")) : 10;
    if (fd < 0 || fd >= max || inside) return;
    inside = 1;
    void *pc[24];
    int n = backtrace(pc, 24);
    char buf[4096];
    int len = snprintf(buf, sizeof buf, "lowfd: %s(%s) = %d on thread %ld:", what, path ? path : "", fd,
                       (long)syscall(SYS_gettid));
    for (int i = 2; i < n && len < (int)sizeof buf - 200; i++) {
        Dl_info di;
        if (dladdr(pc[i], &di) && di.dli_fname)
            len += snprintf(buf + len, sizeof buf - (size_t)len, " %s(%s)", di.dli_sname ? di.dli_sname : "?",
                            strrchr(di.dli_fname, '/') ? strrchr(di.dli_fname, '/') + 1 : di.dli_fname);
    }
    buf[len++] = '\n';
    if (write(2, buf, (size_t)len) < 0) {}
    inside = 0;
}

#define REAL(name)                        \
    static __typeof__(name) *real_##name; \
    if (!real_##name) real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

/* the open family: the mode argument is there when O_CREAT or O_TMPFILE asks for it; passing it on always is
 * harmless */
#define OPEN_LIKE(name)                 \
    int name(const char *p, int f, ...) \
    {                                   \
        REAL(name);                     \
        va_list a;                      \
        va_start(a, f);                 \
        int m = va_arg(a, int);         \
        va_end(a);                      \
        int fd = real_##name(p, f, m);  \
        report(#name, p, fd);           \
        return fd;                      \
    }
#define OPENAT_LIKE(name)                      \
    int name(int d, const char *p, int f, ...) \
    {                                          \
        REAL(name);                            \
        va_list a;                             \
        va_start(a, f);                        \
        int m = va_arg(a, int);                \
        va_end(a);                             \
        int fd = real_##name(d, p, f, m);      \
        report(#name, p, fd);                  \
        return fd;                             \
    }
OPEN_LIKE(open)
OPEN_LIKE(open64)
OPENAT_LIKE(openat)
OPENAT_LIKE(openat64)

DIR *opendir(const char *p)
{
    REAL(opendir);
    DIR *d = real_opendir(p);
    report("opendir", p, d ? dirfd(d) : -1);
    return d;
}
int pipe(int p[2])
{
    REAL(pipe);
    int r = real_pipe(p);
    if (!r) report("pipe", NULL, p[0] < p[1] ? p[0] : p[1]);
    return r;
}
int pipe2(int p[2], int f)
{
    REAL(pipe2);
    int r = real_pipe2(p, f);
    if (!r) report("pipe2", NULL, p[0] < p[1] ? p[0] : p[1]);
    return r;
}

FILE *fopen(const char *p, const char *m)
{
    REAL(fopen);
    FILE *f = real_fopen(p, m);
    report("fopen", p, f ? fileno(f) : -1);
    return f;
}
FILE *fopen64(const char *p, const char *m)
{
    REAL(fopen64);
    FILE *f = real_fopen64(p, m);
    report("fopen64", p, f ? fileno(f) : -1);
    return f;
}
int socketpair(int d, int t, int pr, int sv[2])
{
    REAL(socketpair);
    int r = real_socketpair(d, t, pr, sv);
    if (!r) report("socketpair", NULL, sv[0] < sv[1] ? sv[0] : sv[1]);
    return r;
}
int fcntl(int fd, int cmd, ...)
{
    REAL(fcntl);
    va_list a;
    va_start(a, cmd);
    long arg = va_arg(a, long);
    va_end(a);
    int r = real_fcntl(fd, cmd, arg);
    if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) report("fcntl_dupfd", NULL, r);
    return r;
}

/* the rest: fixed arguments, a descriptor back (PARAMS, ARGS, the path to print or NULL) */
#define FD_CALL(name, params, args, path) \
    int name params                       \
    {                                     \
        REAL(name);                       \
        int fd = real_##name args;        \
        report(#name, path, fd);          \
        return fd;                        \
    }
FD_CALL(dup, (int o), (o), NULL)
FD_CALL(socket, (int d, int t, int pr), (d, t, pr), NULL)
FD_CALL(eventfd, (unsigned v, int f), (v, f), NULL)
FD_CALL(memfd_create, (const char *n, unsigned f), (n, f), n)
FD_CALL(__open_2, (const char *p, int f), (p, f), p)
FD_CALL(__open64_2, (const char *p, int f), (p, f), p)
FD_CALL(__openat_2, (int d, const char *p, int f), (d, p, f), p)
FD_CALL(__openat64_2, (int d, const char *p, int f), (d, p, f), p)
FD_CALL(accept4, (int s, struct sockaddr *a, socklen_t *l, int f), (s, a, l, f), NULL)
