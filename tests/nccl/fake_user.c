/* Stands in for libtorch_cuda.so: a library linked against libnccl.so.2 (DT_NEEDED) and loaded by the test
 * with RTLD_LOCAL, so NCCL ends up in a local scope where dlsym(RTLD_NEXT) cannot see it (the situation
 * measured under PyTorch). Its calls go through the PLT and reach the preloaded wrappers first. */
#include <stdint.h>
#include <string.h>

typedef int ncclResult_t;
typedef struct fake_comm *ncclComm_t;
typedef struct {
    char internal[128];
} ncclUniqueId;
ncclResult_t ncclCommInitRank(ncclComm_t *, int, ncclUniqueId, int);
ncclResult_t ncclAllReduce(const void *, void *, size_t, int, int, ncclComm_t, void *);
ncclResult_t ncclGather(const void *, void *, size_t, int, int, ncclComm_t, void *);
ncclResult_t ncclScatter(const void *, void *, size_t, int, int, ncclComm_t, void *);
ncclResult_t ncclSend(const void *, size_t, int, int, ncclComm_t, void *);
ncclResult_t ncclRecv(void *, size_t, int, int, ncclComm_t, void *);
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
ncclResult_t ncclCommDestroy(ncclComm_t);
ncclResult_t ncclCommSplit(ncclComm_t, int, int, ncclComm_t *, void *);

/* Returns the number of non-zero results (0 = every call succeeded). */
__attribute__((visibility("default"))) int run_user(int iters, uint64_t hash)
{
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    memcpy(id.internal, &hash, sizeof hash);
    ncclComm_t comm;
    int bad = ncclCommInitRank(&comm, 4, id, 3) != 0;
    for (int i = 0; i < iters; i++) {
        bad += ncclAllReduce((void *)0x10, (void *)0x20, 1000 + (size_t)i, 7, 0, comm, (void *)0x99) != 0;
        bad += ncclGroupStart() != 0;
        bad += ncclSend((void *)0x10, 64, 0, 1, comm, (void *)0x99) != 0;
        bad += ncclRecv((void *)0x20, 64, 0, 2, comm, (void *)0x99) != 0;
        bad += ncclGroupEnd() != 0;
        bad += ncclGather((void *)0x10, (void *)0x20, 300 + (size_t)i, 4, 2, comm, (void *)0x98) != 0;
        bad += ncclScatter((void *)0x10, (void *)0x20, 400 + (size_t)i, 5, 1, comm, (void *)0x98) != 0;
    }
    bad += ncclCommDestroy(comm) != 0;
    return bad;
}

/* A communicator split twice with one color and once with another (tensor and data parallel groups made the way
 * frameworks make them), an AllReduce on each. Returns the number of non-zero results. */
__attribute__((visibility("default"))) int run_split(uint64_t hash)
{
    ncclUniqueId id;
    memset(&id, 0, sizeof id);
    memcpy(id.internal, &hash, sizeof hash);
    ncclComm_t comm, a, b, c;
    int bad = ncclCommInitRank(&comm, 4, id, 3) != 0;
    bad += ncclCommSplit(comm, 1, 0, &a, NULL) != 0;
    bad += ncclCommSplit(comm, 1, 0, &b, NULL) != 0;
    bad += ncclCommSplit(comm, 2, 0, &c, NULL) != 0;
    ncclComm_t all[] = {comm, a, b, c};
    for (int i = 0; i < 4; i++)
        bad += ncclAllReduce((void *)0x10, (void *)0x20, 100 + (size_t)i, 7, 0, all[i], (void *)0x99) != 0;
    for (int i = 3; i >= 0; i--) bad += ncclCommDestroy(all[i]) != 0;
    return bad;
}
