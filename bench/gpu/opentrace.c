/* Which call opens what, on which thread: a diagnostic preload for the GPU host (session 30: CUPTI's re-attach
 * walks /sys/devices/system/clocksource in the program's descriptor table; which CUPTI entry point does it?).
 *
 *   gcc -O1 -g -shared -fPIC -o opentrace.so bench/gpu/opentrace.c -ldl
 *   OPENTRACE_MATCH=clocksource LD_PRELOAD=$PWD/opentrace.so:build/gpu/librailscope.so python3 prog.py
 *
 * opendir() of a path containing OPENTRACE_MATCH prints the thread id, the descriptor it got and a backtrace
 * (function names from dladdr) on stderr; nothing else changes. opendir because boost::filesystem's directory
 * iterator uses it, and glibc's opendir opens through an internal call no preload sees. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

DIR *opendir(const char *path)
{
    static DIR *(*real)(const char *);
    if (!real) real = (DIR * (*)(const char *)) dlsym(RTLD_NEXT, "opendir");
    DIR *d = real(path);
    const char *m = getenv("OPENTRACE_MATCH");
    if (m && strstr(path, m)) {
        void *pc[32];
        int n = backtrace(pc, 32);
        fprintf(stderr, "opentrace: opendir(%s) = fd %d on thread %ld\n", path, d ? dirfd(d) : -1,
                (long)syscall(SYS_gettid));
        for (int i = 1; i < n; i++) {
            Dl_info di;
            if (dladdr(pc[i], &di) && di.dli_fname)
                fprintf(stderr, "opentrace:   #%d %s (%s+%#lx)\n", i, di.dli_sname ? di.dli_sname : "?",
                        strrchr(di.dli_fname, '/') ? strrchr(di.dli_fname, '/') + 1 : di.dli_fname,
                        (unsigned long)((char *)pc[i] - (char *)di.dli_fbase));
        }
    }
    return d;
}
