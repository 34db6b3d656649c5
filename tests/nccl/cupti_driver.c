/* Plays the CUDA driver and a PyTorch-like process for the CUPTI injection, with fake libcupti/libcudart
 * (tests/nccl/fake_cupti.c, fake_cudart.c): loads the fake runtime globally and the fake CUPTI locally (as
 * libtorch_cuda.so's dependencies are), calls InitializeInjection like the driver does at cuInit, then
 * has the fake CUPTI deliver a buffer of synthetic records. Modes:
 *   basic     deliver and exit (the forced flush at exit brings one more record)
 *   burst     one buffer of 4000 records at once (run with a small RAILSCOPE_BUFFER_KB: none may be lost)
 *   early     the other client registers before CUDA initialises: railscope must leave CUPTI to it
 *   takeover  deliver, then another client registers its own buffer callbacks through the global symbol (as
 *             torch.profiler's Kineto does) and cudaMemcpy calls go on: railscope must notice, flush its
 *             pending records first, warn once, forward the registration, and record the copies through the
 *             cudart wrappers
 * usage: cupti_driver FAKEDIR MODE            prints what it saw on stdout */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    char path[4096];
    snprintf(path, sizeof path, "%s/libcudart.so.13", argv[1]);
    void *rt = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    snprintf(path, sizeof path, "%s/libcupti.so.13", argv[1]);
    void *cu = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!rt || !cu) return fprintf(stderr, "cupti_driver: %s\n", dlerror()), 1;
    int (*inject)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "InitializeInjection");
    int (*deliver)(void) = (int (*)(void))dlsym(cu, "fake_cupti_deliver");
    int (*enabled)(int) = (int (*)(int))dlsym(cu, "fake_cupti_enabled");
    int (*rtapi)(int) = (int (*)(int))dlsym(cu, "fake_cupti_runtime_api");
    typedef void (*req_fn)(unsigned char **, size_t *, size_t *);
    typedef void (*comp_fn)(void *, unsigned, unsigned char *, size_t, size_t);
    int (*reg)(req_fn, comp_fn) = (int (*)(req_fn, comp_fn))dlsym(RTLD_DEFAULT, "cuptiActivityRegisterCallbacks");
    req_fn other_req = (req_fn)dlsym(cu, "fake_other_req");
    comp_fn other_comp = (comp_fn)dlsym(cu, "fake_other_comp");
    int (*owner_other)(void) = (int (*)(void))dlsym(cu, "fake_cupti_owner_is_other");
    if (!inject) return fprintf(stderr, "cupti_driver: InitializeInjection not found (not preloaded?)\n"), 1;
    if (!strcmp(argv[2], "early")) {
        int rr = reg ? reg(other_req, other_comp) : -1;
        int r0 = inject();
        typedef int (*memcpy_fn)(void *, const void *, size_t, int);
        memcpy_fn mc = (memcpy_fn)dlsym(RTLD_DEFAULT, "cudaMemcpy");
        int bad = mc((void *)0x2000, (void *)0x1000, 4096, 1) != 0;
        printf("early register=%d inject=%d owner_other=%d bad=%d\n", rr, r0, owner_other(), bad);
        return 0;
    }
    int r = inject();
    printf("inject=%d\n", r);
    printf("enabled memcpy=%d memcpy2=%d memset=%d sync=%d kernel=%d\n", enabled(1), enabled(22), enabled(2),
           enabled(38), enabled(10));
    printf("runtime_api memcpy=%d memcpyasync=%d getdevice=%d launch=%d\n", rtapi(31), rtapi(41), rtapi(3), rtapi(211));
    if (!strcmp(argv[2], "burst")) {
        int (*many)(int) = (int (*)(int))dlsym(cu, "fake_cupti_deliver_many");
        printf("burst=%d\n", many(4000));
        return 0;
    }
    printf("deliver=%d\n", deliver());
    if (!strcmp(argv[2], "takeover")) {
        int rr = reg ? reg(other_req, other_comp) : -1;
        printf("register=%d owner_other=%d\n", rr, owner_other());
        typedef int (*memcpy_fn)(void *, const void *, size_t, int);
        memcpy_fn mc = (memcpy_fn)dlsym(RTLD_DEFAULT, "cudaMemcpy");
        int bad = 0;
        for (int i = 0; i < 10; i++) bad += mc((void *)0x2000, i & 1 ? (void *)0x1000 : (void *)0x5000, 4096, 1) != 0;
        bad += mc((void *)0x5000, (void *)0x2000, 64, 3) != 0; /* device-to-device */
        bad += mc((void *)0x2000, (void *)0x6000, 64, 1) != 0; /* a source the attribute query rejects */
        int (*last)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "cudaGetLastError");
        int *copies = (int *)dlsym(rt, "fake_cudart_copies");
        printf("copies=%d bad=%d last_error=%d\n", copies ? *copies : -1, bad, last ? last() : -1);
    }
    fflush(stdout);
    return 0;
}
