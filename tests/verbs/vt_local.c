/* Verbs test program: loads libvtlocal.so (linked against libibverbs) with RTLD_LOCAL and runs it.
 *   vt_local LIBPATH [-n ITERS]    prints "summary: sends=S wcs=W" */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    int iters = argc > 3 ? atoi(argv[3]) : 10;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        printf("dlopen: %s\n", dlerror());
        return 1;
    }
    int (*run)(int) = (int (*)(int))dlsym(h, "vtlocal_run");
    if (!run) return 1;
    int wcs = run(iters);
    printf("summary: sends=%d wcs=%d\n", iters, wcs);
    return wcs == iters ? 0 : 1;
}
