/* Verbs test program for GPU hosts: MRs over CUDA device, pinned host (cuMemAllocHost), managed and plain
 * malloc'd memory, registered on the null provider (which accepts any address: the memory kind railscope
 * records comes from CUDA itself), one send posted from each. libcuda is dlopen'ed; no CUDA headers.
 * Exits 77 when there is no usable CUDA driver/GPU.
 *   vt_cuda    prints one "mr KIND lkey=0x.." line per MR, then "summary: sends=4" */
#include <dlfcn.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*cu_init_t)(unsigned);
typedef int (*cu_dev_get_t)(int *, int);
typedef int (*cu_ctx_retain_t)(void **, int);
typedef int (*cu_ctx_set_t)(void *);
typedef int (*cu_alloc_t)(unsigned long long *, size_t);
typedef int (*cu_alloc_host_t)(void **, size_t);
typedef int (*cu_alloc_managed_t)(unsigned long long *, size_t, unsigned);

int main(void)
{
    void *cu = dlopen("libcuda.so.1", RTLD_NOW);
    if (!cu) {
        printf("no libcuda: %s\n", dlerror());
        return 77;
    }
    cu_init_t init = (cu_init_t)dlsym(cu, "cuInit");
    cu_dev_get_t dev_get = (cu_dev_get_t)dlsym(cu, "cuDeviceGet");
    cu_ctx_retain_t retain = (cu_ctx_retain_t)dlsym(cu, "cuDevicePrimaryCtxRetain");
    cu_ctx_set_t set = (cu_ctx_set_t)dlsym(cu, "cuCtxSetCurrent");
    cu_alloc_t alloc = (cu_alloc_t)dlsym(cu, "cuMemAlloc_v2");
    cu_alloc_host_t alloc_host = (cu_alloc_host_t)dlsym(cu, "cuMemAllocHost_v2");
    cu_alloc_managed_t alloc_managed = (cu_alloc_managed_t)dlsym(cu, "cuMemAllocManaged");
    int dev;
    void *ctx;
    if (!init || !dev_get || !retain || !set || !alloc || !alloc_host || !alloc_managed || init(0) ||
        dev_get(&dev, 0) || retain(&ctx, dev) || set(ctx)) {
        printf("no usable CUDA device\n");
        return 77;
    }
    size_t sz = 1 << 20;
    unsigned long long d = 0, m = 0;
    void *h = NULL;
    if (alloc(&d, sz) || alloc_host(&h, sz) || alloc_managed(&m, sz, 1 /* CU_MEM_ATTACH_GLOBAL */)) {
        printf("CUDA allocation failed\n");
        return 1;
    }
    void *plain = malloc(sz);
    struct ibv_device **devs = ibv_get_device_list(NULL);
    struct ibv_context *c = devs && devs[0] ? ibv_open_device(devs[0]) : NULL;
    struct ibv_pd *pd = c ? ibv_alloc_pd(c) : NULL;
    struct ibv_cq *cq = c ? ibv_create_cq(c, 64, NULL, NULL, 0) : NULL;
    struct ibv_qp_init_attr qa = {.send_cq = cq,
                                  .recv_cq = cq,
                                  .qp_type = IBV_QPT_RC,
                                  .cap = {.max_send_wr = 64, .max_recv_wr = 64, .max_send_sge = 1}};
    struct ibv_qp *qp = pd ? ibv_create_qp(pd, &qa) : NULL;
    if (!qp) {
        printf("verbs setup failed\n");
        return 1;
    }
    struct {
        const char *name;
        void *p;
    } bufs[] = {{"device", (void *)(uintptr_t)d}, {"pinned", h}, {"managed", (void *)(uintptr_t)m}, {"host", plain}};
    int sends = 0;
    for (int i = 0; i < 4; i++) {
        struct ibv_mr *mr = ibv_reg_mr(pd, bufs[i].p, sz, IBV_ACCESS_LOCAL_WRITE);
        if (!mr) return 1;
        printf("mr %s lkey=0x%x\n", bufs[i].name, mr->lkey);
        struct ibv_sge sg = {(uintptr_t)bufs[i].p, 4096, mr->lkey};
        struct ibv_send_wr w = {.wr_id = 100 + i,
                                .sg_list = &sg,
                                .num_sge = 1,
                                .opcode = IBV_WR_RDMA_WRITE,
                                .send_flags = IBV_SEND_SIGNALED},
                           *bad;
        if (!ibv_post_send(qp, &w, &bad)) sends++;
        struct ibv_wc wc;
        while (ibv_poll_cq(cq, 1, &wc) == 0) {}
    }
    printf("summary: sends=%d\n", sends);
    return 0;
}
