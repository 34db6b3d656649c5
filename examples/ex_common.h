/* Shared plumbing for the verbs examples: a launcher that runs N ranks as separate processes
 * (fork + exec of the same binary, RANK/WORLD_SIZE/LOCAL_RANK in the environment, so a tracer started
 * with the launcher sees every rank as a fresh process), an out-of-band exchange through an inherited
 * shared-memory file, and RC queue-pair setup with plain rdma-core calls. */
#ifndef EX_COMMON_H
#define EX_COMMON_H

#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdint.h>
#include <stddef.h>

#define EX_MAX_RANKS 64

/* what each rank publishes about one of its QPs */
struct ex_peer_info {
    uint32_t qpn;
    uint16_t lid;
    uint8_t gid[16];
    uint32_t rkey;
    uint64_t addr;
};

struct ex_shared {
    pthread_barrier_t barrier;
    int world;
    struct ex_peer_info info[EX_MAX_RANKS][4]; /* per rank, per QP slot */
    volatile int failed;
};

struct ex_rank {
    int rank, world;
    struct ex_shared *sh;
};

/* In the launcher: fork/exec `world` copies of argv[0]; returns the exit code for the launcher.
 * In a child: fills r and returns -1 (go on and do the work). */
int ex_launch(int world, int argc, char **argv, struct ex_rank *r);
void ex_barrier(struct ex_rank *r);

struct ex_dev {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_cq *cq;
    struct ibv_port_attr port;
    union ibv_gid gid;
    int gid_index; /* -1: LID addressing */
};
int ex_open(struct ex_dev *d, int cqe);
struct ibv_qp *ex_qp(struct ex_dev *d, int depth);
void ex_info(struct ex_dev *d, struct ibv_qp *qp, struct ibv_mr *mr, struct ex_peer_info *out);
int ex_connect(struct ex_dev *d, struct ibv_qp *qp, const struct ex_peer_info *remote);
/* parse 4096, 64K, 1M, 1G */
size_t ex_size(const char *s);
double ex_now(void);

#endif
