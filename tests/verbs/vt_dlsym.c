/* dlsym/dlvsym semantics with the tracer's interposition (preload/dl.c) in place, in a process without
 * libibverbs: RTLD_DEFAULT, RTLD_NEXT relative to the *caller* (the interposition must not change who the
 * caller is), failed look-ups and dlerror, versioned look-ups, and a verbs entry point called in a process
 * that has no libibverbs (ENOSYS, no crash). TAP output.
 *   vt_dlsym [preloaded]      ("preloaded": librailscope.so is LD_PRELOADed) */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int n, bad;
static void ok(int c, const char *what)
{
    n++;
    if (!c) bad++;
    printf("%s %d - %s\n", c ? "ok" : "not ok", n, what);
}

static const char *obj(void *p)
{
    Dl_info di;
    return p && dladdr(p, &di) && di.dli_fname ? di.dli_fname : "";
}

int main(int argc, char **argv)
{
    int pre = argc > 1 && !strcmp(argv[1], "preloaded");
    printf("1..9\n");
    ok(dlsym(RTLD_DEFAULT, "printf") == (void *)printf, "dlsym(RTLD_DEFAULT, printf) is printf");
    ok(dlsym(RTLD_NEXT, "malloc") != NULL, "dlsym(RTLD_NEXT, malloc) from the program finds it");
    /* RTLD_NEXT from the main program: the next object defining dlsym is the preloaded tracer (if any);
     * were the caller taken to be the tracer, the answer would be libc's. */
    void *nx = dlsym(RTLD_NEXT, "dlsym");
    ok(pre ? strstr(obj(nx), "librailscope") != NULL : strstr(obj(nx), "libc") != NULL,
       "dlsym(RTLD_NEXT) is relative to the real caller");
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    ok(libc != NULL, "dlopen(libc.so.6, RTLD_NOLOAD)");
    dlerror();
    void *ns = dlsym(libc, "no_such_symbol_xyz");
    const char *e = dlerror();
    ok(!ns && e && strstr(e, "no_such_symbol_xyz"), "failed dlsym returns NULL and sets dlerror");
    ok(dlvsym(libc, "memcpy", "GLIBC_2.14") != NULL, "dlvsym(libc, memcpy, GLIBC_2.14)");
    ok(dlvsym(libc, "memcpy", "NO_SUCH_VERSION_1") == NULL, "dlvsym with an unknown version is NULL");
    /* a verbs entry point in a process without libibverbs */
    void *(*open_dev)(void *) = (void *(*)(void *))dlsym(RTLD_DEFAULT, "ibv_open_device");
    ok(pre ? open_dev != NULL : open_dev == NULL, "ibv_open_device visible only through the preload");
    if (open_dev) {
        errno = 0;
        void *ctx = open_dev(NULL);
        ok(ctx == NULL && errno == ENOSYS, "ibv_open_device without libibverbs: NULL, ENOSYS, no crash");
    } else {
        ok(1, "ibv_open_device without libibverbs: not reachable");
    }
    return bad != 0;
}
