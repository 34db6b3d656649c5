/* The entry points railscope exports for CUDA/NCCL/NVTX, called in a process with no CUDA, no CUPTI and no
 * NCCL: each must return what the absent library's caller can live with and never crash.
 * prints: inject=<InitializeInjection> nccl=<ncclAllReduce> memcpy=<cudaMemcpy>
 * nvtx=<InitializeInjectionNvtx2(NULL)> */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    int (*inject)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "InitializeInjection");
    int (*ar)(const void *, void *, size_t, int, int, void *, void *) =
        (int (*)(const void *, void *, size_t, int, int, void *, void *))dlsym(RTLD_DEFAULT, "ncclAllReduce");
    int (*mc)(void *, const void *, size_t, int) =
        (int (*)(void *, const void *, size_t, int))dlsym(RTLD_DEFAULT, "cudaMemcpy");
    int (*nvtx)(void *) = (int (*)(void *))dlsym(RTLD_DEFAULT, "InitializeInjectionNvtx2");
    if (!inject || !ar || !nvtx) return fprintf(stderr, "nogpu: entry points not exported\n"), 1;
    int r1 = inject(), r2 = ar(0, 0, 1, 0, 0, 0, 0), r4 = nvtx(NULL);
    int r5 = ar(0, 0, 1, 0, 0, 0, 0);
    char r3[16] = "none"; /* the cudart wrappers exist only in builds with CUDA headers */
    if (mc) snprintf(r3, sizeof r3, "%d", mc(0, 0, 1, 1));
    printf("inject=%d nccl=%d memcpy=%s nvtx=%d nccl2=%d\n", r1, r2, r3, r4, r5);
    return 0;
}
