/* A program built for CUDA 12 run on a driver before 12.0 (fakenov2/: libcuda without cuGetProcAddress_v2,
 * version 11080), under railscope or not (tests/nccl/cuda_detach.t compares the two; review H_REVIEW10 M2).
 *   fake_cuda_probe DIR probe   libcudauser.so (linked) probes dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2"), else
 *                               the 4-argument function at the driver's version; cuStreamBeginCapture at 12000
 *   fake_cuda_probe DIR link    DIR/libcudalink.so binds cuGetProcAddress_v2 through its PLT (untraced it cannot
 *                               run: the driver has none); railscope's export answers as the 4-argument function
 * Prints "name=value" pairs: default_v2 (the probe found a function), rc / st (result, symbolStatus), tramp (a
 * pointer other than the driver's: railscope's trampoline), reach (the pointer reaches the driver's function with
 * six arguments and returns its value). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uintptr_t a_t;
typedef int (*six_fn)(a_t, a_t, a_t, a_t, a_t, a_t);
typedef int (*proc_fn)(const char *, void **, int, uint64_t, int *);
extern __thread a_t fake_cuda_args[6];
extern __thread const char *fake_cuda_called;
void *fake_cuda_proc(const char *symbol, int version, uint64_t flags);
int fake_cuda_user_proc(const char *symbol, void **pfn, int version, uint64_t flags, int *status);

static int reaches(void *fn, const char *want, a_t base)
{
    if (!fn) return 0;
    fake_cuda_called = NULL;
    int rc = ((six_fn)fn)(base + 1, base + 2, base + 3, base + 4, base + 5, base + 6);
    int ok = rc == (int)((base + 6) & 0xfff) && fake_cuda_called && !strcmp(fake_cuda_called, want);
    for (int i = 0; i < 6; i++) ok = ok && fake_cuda_args[i] == base + 1 + (a_t)i;
    return ok;
}

static void show(const char *tag, proc_fn proc, const char *sym, int version, const char *want)
{
    void *p = NULL;
    int st = -1, rc = proc(sym, &p, version, 0, &st);
    printf("%s_rc=%d %s_st=%d %s_null=%d", tag, rc, tag, st, tag, !p);
    if (want)
        printf(" %s_tramp=%d %s_reach=%d", tag, p && p != fake_cuda_proc(sym, version, 0), tag,
               reaches(rc == 0 ? p : NULL, want, 0x1000));
    printf(" ");
}

int main(int argc, char **argv)
{
    if (argc < 3) return fprintf(stderr, "usage: fake_cuda_probe DIR probe|link\n"), 2;
    if (!strcmp(argv[2], "probe")) {
        printf("default_v2=%d ", dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2") != NULL);
        show("cap", fake_cuda_user_proc, "cuStreamBeginCapture", 12000, "cuStreamBeginCapture_v2");
    } else {
        char path[4096];
        snprintf(path, sizeof path, "%s/libcudalink.so", argv[1]);
        void *u = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
        proc_fn link = u ? (proc_fn)dlsym(u, "fake_cuda_user_proc") : NULL;
        if (!link) return fprintf(stderr, "fake_cuda_probe: %s\n", dlerror()), 1;
        show("v12", link, "cuStreamBeginCapture", 12000, NULL);
        show("cap", link, "cuStreamBeginCapture", 11080, "cuStreamBeginCapture_v2");
        show("empty", link, "cuStreamBeginCaptureToGraph", 11080, NULL);
        show("unknown", link, "cuNoSuchFunction", 11080, NULL);
    }
    printf("\n");
    return 0;
}
