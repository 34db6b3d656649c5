/* Loads the fake "framework" library RTLD_LOCAL (it pulls in the fake libnccl.so.2 into the same local
 * scope) and runs its NCCL calls: under the preload the wrappers must find the real functions in that local
 * scope and forward, never crash. Also checks the calls reached NCCL. usage: nccl_local LIBDIR ITERS [split]
 * (split: a communicator split into three children, an AllReduce on each) */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    char path[4096];
    snprintf(path, sizeof path, "%s/libfakeuser.so", argv[1]);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) return fprintf(stderr, "nccl_local: %s\n", dlerror()), 1;
    int (*run_user)(int, uint64_t) = (int (*)(int, uint64_t))dlsym(h, "run_user");
    if (!run_user) return 1;
    /* The fake NCCL is not visible globally: the way PyTorch's libnccl is not. */
    if (dlsym(RTLD_DEFAULT, "pncclAllReduce")) return fprintf(stderr, "nccl_local: NCCL is global\n"), 1;
    int iters = atoi(argv[2]), bad;
    if (argc > 3) { /* "split": run_split instead */
        int (*run_split)(uint64_t) = (int (*)(uint64_t))dlsym(h, "run_split");
        bad = run_split ? run_split(0xabcdef12345ull) : 1;
    } else bad = run_user(iters, 0xabcdef12345ull);
    snprintf(path, sizeof path, "%s/libnccl.so.2", argv[1]);
    void *n = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    int *calls = n ? dlsym(n, "fake_nccl_calls") : NULL;
    printf("bad=%d calls=%d\n", bad, calls ? *calls : -1);
    return bad;
}
