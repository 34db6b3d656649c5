/* Calls the cudaMemcpy* entry points the way an application does, from distinct call sites, through a
 * fake libcudart (tests/nccl/fake_cudart.c: 0x1000 is pinned host memory, 0x2000 device memory, any other
 * host address pageable), for the call-stack tests (stacks.t). Built -O0 -g -fno-omit-frame-pointer
 * -rdynamic so every function below has a frame and a name in .symtab and .dynsym.
 * usage: stack_app FAKEDIR [cupti]     cupti: inject the fake CUPTI first (CUPTI then delivers the copies)
 *        stack_app FAKEDIR loop N [D]  N pageable copies from one site D frames deeper than main (default
 *                                      0); prints ns per copy (bench/stacks/run.sh)
 *        stack_app FAKEDIR threads     8 threads x 100 copies from one site at once
 *        stack_app FAKEDIR fork        a copy from one site, fork, the same in the child */
#include <dlfcn.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int (*memcpy_fn)(void *, const void *, size_t, int);
typedef int (*memcpy_async_fn)(void *, const void *, size_t, int, void *);
static memcpy_fn mc;
static memcpy_async_fn mca;
static char pageable[4096];
#define DEV    ((void *)0x2000)
#define PINNED ((void *)0x1000)

__attribute__((noinline)) int stk_copy_in(const void *src) { return mc(DEV, src, sizeof pageable, 1); }
__attribute__((noinline)) int stk_caller_one(int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) bad += stk_copy_in(pageable) != 0;
    return bad;
}
__attribute__((noinline)) int stk_caller_two(int n)
{
    int bad = 0;
    for (int i = 0; i < n; i++) bad += stk_copy_in(pageable) != 0;
    return bad;
}
__attribute__((noinline)) int stk_async_site(void) { return mca(DEV, pageable, 64, 1, (void *)7); }
/* A C++-mangled name (stk::readback()), for dump's demangling. */
__attribute__((noinline)) int stk_readback(void) __asm__("_ZN3stk8readbackEv");
__attribute__((noinline)) int stk_readback(void) { return mc(pageable, DEV, 64, 2); }
__attribute__((noinline)) int stk_pinned(void) { return mc(DEV, PINNED, 64, 1); }
__attribute__((noinline)) int stk_device(void) { return mc(DEV, DEV, 64, 3); }

__attribute__((noinline)) int stk_deep(int n, int d) { return d > 0 ? stk_deep(n, d - 1) + 0 * d : stk_caller_one(n); }
__attribute__((noinline)) void *stk_thread(void *arg)
{
    (void)arg;
    return (void *)(long)stk_caller_one(100);
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    char path[4096];
    snprintf(path, sizeof path, "%s/libcudart.so.13", argv[1]);
    void *rt = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (!rt) return fprintf(stderr, "stack_app: %s\n", dlerror()), 1;
    if (argc > 2 && !strcmp(argv[2], "cupti")) {
        snprintf(path, sizeof path, "%s/libcupti.so.13", argv[1]);
        void *cu = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        int (*inject)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "InitializeInjection");
        if (!cu || !inject) return fprintf(stderr, "stack_app: no CUPTI injection\n"), 1;
        printf("inject=%d\n", inject());
    }
    /* Through the global scope, as the application's PLT would: the preloaded wrappers come first. */
    mc = (memcpy_fn)dlsym(RTLD_DEFAULT, "cudaMemcpy");
    mca = (memcpy_async_fn)dlsym(RTLD_DEFAULT, "cudaMemcpyAsync");
    if (!mc || !mca) return 1;
    if (argc > 3 && !strcmp(argv[2], "loop")) {
        int n = atoi(argv[3]);
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        int bad = stk_deep(n, argc > 4 ? atoi(argv[4]) : 0);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
        printf("ns_per_copy=%.1f bad=%d\n", ns / (n > 0 ? n : 1), bad);
        return bad != 0;
    }
    if (argc > 2 && !strcmp(argv[2], "threads")) {
        pthread_t t[8];
        long bad = 0;
        for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, stk_thread, NULL);
        for (int i = 0; i < 8; i++) {
            void *r;
            pthread_join(t[i], &r);
            bad += (long)r;
        }
        printf("bad=%ld\n", bad);
        return bad != 0;
    }
    if (argc > 2 && !strcmp(argv[2], "fork")) {
        int bad = stk_caller_one(1);
        fflush(stdout);
        pid_t c = fork();
        if (c == 0) exit(stk_caller_one(1));
        int st = 1;
        waitpid(c, &st, 0);
        printf("bad=%d child=%d\n", bad, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        return bad != 0;
    }
    int bad = stk_caller_one(3);
    bad += stk_caller_two(2);
    bad += stk_async_site();
    bad += stk_async_site();
    bad += stk_readback();
    bad += stk_pinned();
    bad += stk_device();
    int *copies = (int *)dlsym(rt, "fake_cudart_copies");
    printf("copies=%d bad=%d\n", copies ? *copies : -1, bad);
    return bad != 0;
}
