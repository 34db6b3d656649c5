/* The cudart copy wrappers leave errno as the real call left it (tests/nccl/cudart_errno.t). Loads the fake
 * libcudart (tests/nccl/fake_cudart.c: 0x2000 is device memory, any other host address pageable) into the
 * global scope and calls cudaMemcpy through it, as an application's PLT would: six copies of every kind,
 * each with errno set to a value of its own just before; prints "copy I kind K ret R errno E" and whether
 * errno came back unchanged. The first pageable copy is the one whose recording does the most (a stack
 * unwind, libunwind's dlopen). usage: cudart_errno FAKEDIR */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

typedef int (*memcpy_fn)(void *, const void *, size_t, int);
static char pageable[4096];

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    char path[4096];
    snprintf(path, sizeof path, "%s/libcudart.so.13", argv[1]);
    if (!dlopen(path, RTLD_NOW | RTLD_GLOBAL)) return fprintf(stderr, "cudart_errno: %s\n", dlerror()), 2;
    memcpy_fn mc = (memcpy_fn)dlsym(RTLD_DEFAULT, "cudaMemcpy");
    if (!mc) return 2;
    static const int kinds[] = {1, 2, 3, 4, 1, 2}; /* H2D, D2H, D2D, Default, again */
    void *host = pageable + 64, *dev = (void *)0x2000;
    int changed = 0;
    for (int i = 0; i < 6; i++) {
        int k = kinds[i], want = 4242 + i;
        errno = want;
        int r = mc(k == 2 ? host : dev, k == 2 ? dev : host, 64, k);
        int e = errno;
        changed += e != want;
        printf("copy %d kind %d ret %d errno %d%s\n", i, k, r, e, e == want ? "" : " CHANGED");
    }
    return changed ? 1 : 0;
}
