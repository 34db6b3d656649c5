/* sigwrite, preloaded before the tracer (tests/core/raise_in_flush.t): the first writev() on the process's
 * main thread after RS_SIGWRITE is set in its environment (the program sets it just before exec() or exit(), so
 * the call is the tracer's exec or exit flush writing a frame) sends SIGINT to the process first, with kill():
 * a signal that lands in the middle of that flush, at a chosen place rather than by luck. */
#include <dlfcn.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    static ssize_t (*real)(int, const struct iovec *, int);
    if (!real) real = (ssize_t(*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
    if (syscall(SYS_gettid) == getpid() && getenv("RS_SIGWRITE")) {
        unsetenv("RS_SIGWRITE");
        kill(getpid(), SIGINT);
    }
    return real(fd, iov, cnt);
}
