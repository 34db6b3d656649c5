/* The descriptor wrappers (close/fcntl/dup..., tracer/lifecycle.c) hide the trace file's descriptor from
 * the program. When the program closed that number where they could not see it (a raw system call) and
 * its own file now has the number, the number is the program's: its fcntl() and close() must work, both
 * before the writer notices and after the writer found the trace file gone (it was removed, so it cannot
 * be opened again and writing stops). Prints "before=ok after=ok close=ok" when they work. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "rs_tracer.h"

static void mark(uint32_t name, uint64_t v)
{
    struct rs_ev_MARK m;
    RS_EV_INIT(&m, MARK, rs_now());
    m.value = v;
    m.name = name;
    m.pad = 0;
    rs_emit(&m.h);
}

int main(void)
{
    uint32_t name = rs_intern("fd_stale");
    mark(name, 1);
    rs_core_flush();
    int n = -1;
    char path[4096] = "";
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *e; d && (e = readdir(d));) {
        char l[300], t[4096];
        snprintf(l, sizeof l, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(l, t, sizeof t - 1);
        if (k <= 0) continue;
        t[k] = 0;
        if (k > 7 && !strcmp(t + k - 7, ".rtrace")) n = atoi(e->d_name), snprintf(path, sizeof path, "%s", t);
    }
    if (d) closedir(d);
    if (n < 0) return printf("no trace descriptor\n"), 2;
    syscall(SYS_close, n); /* unseen by the wrappers */
    unlink(path);
    int x = open("/dev/null", O_RDONLY);
    syscall(SYS_dup3, x, n, 0); /* the program's own file on the old number */
    syscall(SYS_close, x);
    int before = fcntl(n, F_GETFD);
    mark(name, 2);
    rs_core_flush(); /* the writer finds its descriptor gone, cannot reopen the removed file, stops */
    int after = fcntl(n, F_GETFD);
    int c = close(n);
    printf("before=%s after=%s close=%s\n", before >= 0 ? "ok" : strerror(errno), after >= 0 ? "ok" : "EBADF",
           c == 0 ? "ok" : "EBADF");
    return 0;
}
