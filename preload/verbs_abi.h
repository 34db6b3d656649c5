/* The libibverbs ABI the verbs interposer reads and patches, declared here from the layouts of rdma-core's
 * public header libibverbs/verbs.h, installed as <infiniband/verbs.h> (rdma-core v44.0, x86-64; a stable ABI:
 * https://github.com/linux-rdma/rdma-core/blob/v44.0/libibverbs/verbs.h). We do not include <infiniband/verbs.h>:
 * it turns ibv_reg_mr into a macro, it may come from a newer rdma-core than the running library, and the
 * product must build without it. tests/verbs/abi_check.c compares every offset below with the installed
 * header. Only the members railscope touches are named; the rest is padding.
 */
#ifndef RAILSCOPE_VERBS_ABI_H
#define RAILSCOPE_VERBS_ABI_H

#include <stddef.h>
#include <stdint.h>

struct vb_context;
struct vb_qp;
struct vb_cq;
struct vb_srq;
struct vb_send_wr;
struct vb_recv_wr;
struct vb_wc;

typedef int (*vb_post_send_fn)(struct vb_qp *, struct vb_send_wr *, struct vb_send_wr **);
typedef int (*vb_post_recv_fn)(struct vb_qp *, struct vb_recv_wr *, struct vb_recv_wr **);
typedef int (*vb_post_srq_recv_fn)(struct vb_srq *, struct vb_recv_wr *, struct vb_recv_wr **);
typedef int (*vb_poll_cq_fn)(struct vb_cq *, int, struct vb_wc *);
typedef int (*vb_req_notify_fn)(struct vb_cq *, int);

/* struct ibv_context_ops: 32 pointers; the five data-path entries railscope patches. */
struct vb_context_ops {
    void *_pad0[11];
    vb_poll_cq_fn poll_cq;          /* 88 */
    vb_req_notify_fn req_notify_cq; /* 96 */
    void *_pad1[7];
    vb_post_srq_recv_fn post_srq_recv; /* 160 */
    void *_pad2[4];
    vb_post_send_fn post_send; /* 200 */
    vb_post_recv_fn post_recv; /* 208 */
    void *_pad3[5];
};

struct vb_device {
    void *_ops[2];
    int node_type, transport_type;
    char name[64]; /* 24 */
};

struct vb_context {
    struct vb_device *device;  /* 0 */
    struct vb_context_ops ops; /* 8 */
    int cmd_fd, async_fd, num_comp_vectors;
    char _mutex[40];  /* pthread_mutex_t, 280 */
    void *abi_compat; /* 320: VB_ABI_EXTENDED for a verbs_context */
};
#define VB_ABI_EXTENDED ((void *)UINTPTR_MAX)

/* struct verbs_context ends with `size_t sz; struct ibv_context context;` and grows towards lower addresses,
 * so its members are at fixed negative offsets from the ibv_context. VB_VCTX_SIZE = sizeof(struct
 * verbs_context) in v44; a member at offset `off` exists in the running library iff sz >= VB_VCTX_SIZE - off. */
#define VB_VCTX_SIZE          648
#define VB_VCTX_CTX_OFF       320 /* offset of `context` */
#define VB_VCTX_SZ_OFF        312 /* size_t sz */
#define VB_VCTX_CREATE_CQ_EX  200 /* struct ibv_cq_ex *(*)(struct ibv_context *, struct ibv_cq_init_attr_ex *) */
#define VB_VCTX_CREATE_QP_EX  264 /* struct ibv_qp *(*)(struct ibv_context *, struct ibv_qp_init_attr_ex *) */
#define VB_VCTX_DESTROY_WQ    168 /* int (*)(struct ibv_wq *) */
#define VB_VCTX_CREATE_WQ     184 /* struct ibv_wq *(*)(struct ibv_context *, struct ibv_wq_init_attr *) */
#define VB_VCTX_CREATE_SRQ_EX 280 /* struct ibv_srq *(*)(struct ibv_context *, struct ibv_srq_init_attr_ex *) */

struct vb_pd {
    struct vb_context *context;
    uint32_t handle;
};

struct vb_cq {
    struct vb_context *context; /* 0 */
    void *channel, *cq_context;
    uint32_t handle;
    int cqe;        /* 28 */
    char _rest[96]; /* mutex, cond, counters: sizeof 128 */
};

/* struct ibv_comp_channel: ibv_get_cq_event reads one event from fd (blocking unless the program made it
 * O_NONBLOCK). */
struct vb_comp_channel {
    struct vb_context *context; /* 0 */
    int fd;                     /* 8 */
    int refcnt;
};

struct vb_srq {
    struct vb_context *context; /* 0 */
    void *srq_context;
    struct vb_pd *pd; /* 16 */
    uint32_t handle;
};

struct vb_srq_init_attr {
    void *srq_context;
    uint32_t max_wr, max_sge, srq_limit; /* 8: struct ibv_srq_attr */
};
/* struct ibv_srq_init_attr_ex begins like ibv_srq_init_attr. */
struct vb_srq_init_attr_ex {
    void *srq_context;
    uint32_t max_wr, max_sge, srq_limit;
    uint32_t comp_mask; /* 20 */
    uint32_t srq_type;  /* 24 */
    struct vb_pd *pd;   /* 32, valid with IBV_SRQ_INIT_ATTR_PD */
};
#define VB_SRQ_INIT_ATTR_PD (1u << 1)

/* struct ibv_wq: a receive work queue; ibv_post_wq_recv calls its own post_recv member. */
struct vb_wq;
struct vb_recv_wr;
typedef int (*vb_wq_post_recv_fn)(struct vb_wq *, struct vb_recv_wr *, struct vb_recv_wr **);
struct vb_wq {
    struct vb_context *context; /* 0 */
    void *wq_context;
    struct vb_pd *pd;             /* 16 */
    struct vb_cq *cq;             /* 24 */
    uint32_t wq_num, handle;      /* 32, 36 */
    uint32_t state, wq_type;      /* 40, 44 */
    vb_wq_post_recv_fn post_recv; /* 48 */
};
struct vb_wq_init_attr {
    void *wq_context;
    uint32_t wq_type, max_wr, max_sge; /* 8, 12, 16 */
    struct vb_pd *pd;                  /* 24 */
    struct vb_cq *cq;                  /* 32 */
    uint32_t comp_mask, create_flags;
};

struct vb_qp {
    struct vb_context *context; /* 0 */
    void *qp_context;
    struct vb_pd *pd;                /* 16 */
    struct vb_cq *send_cq, *recv_cq; /* 24, 32 */
    struct vb_srq *srq;              /* 40 */
    uint32_t handle, qp_num;         /* 48, 52 */
    uint32_t state, qp_type;         /* 56, 60 */
    char _rest[96];                  /* mutex, cond, events_completed: sizeof 160 */
};

struct vb_sge {
    uint64_t addr;
    uint32_t length, lkey;
};

struct vb_send_wr {
    uint64_t wr_id;          /* 0 */
    struct vb_send_wr *next; /* 8 */
    struct vb_sge *sg_list;  /* 16 */
    int num_sge;             /* 24 */
    uint32_t opcode;         /* 28 */
    uint32_t send_flags;     /* 32 */
    uint32_t imm_data;       /* 36: big-endian imm, or invalidate_rkey */
    union {
        struct {
            uint64_t remote_addr;
            uint32_t rkey;
        } rdma; /* 40 */
        struct {
            uint64_t remote_addr, compare_add, swap;
            uint32_t rkey;
        } atomic; /* 40, rkey 64 */
        struct {
            void *ah;
            uint32_t remote_qpn, remote_qkey;
        } ud; /* 40 */
    } wr;
    char _rest[56]; /* xrc, bind_mw/tso: sizeof 128 */
};

struct vb_recv_wr {
    uint64_t wr_id;
    struct vb_recv_wr *next;
    struct vb_sge *sg_list;
    int num_sge;
};

struct vb_wc {
    uint64_t wr_id;                /* 0 */
    uint32_t status, opcode;       /* 8, 12 */
    uint32_t vendor_err, byte_len; /* 16, 20 */
    uint32_t imm_data;             /* 24 (big-endian) */
    uint32_t qp_num, src_qp;       /* 28, 32 */
    uint32_t wc_flags;             /* 36 */
    uint16_t pkey_index, slid;
    uint8_t sl, dlid_path_bits;
};

struct vb_mr {
    struct vb_context *context;
    struct vb_pd *pd;
    void *addr;
    size_t length;
    uint32_t handle, lkey, rkey;
};

struct vb_qp_cap {
    uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge, max_inline_data;
};

struct vb_qp_init_attr {
    void *qp_context;
    struct vb_cq *send_cq, *recv_cq;
    struct vb_srq *srq;
    struct vb_qp_cap cap; /* 32 */
    uint32_t qp_type;     /* 52 */
    int sq_sig_all;       /* 56 */
};

/* struct ibv_qp_init_attr_ex repeats ibv_qp_init_attr's members (not nested: comp_mask sits in its tail padding). */
struct vb_qp_init_attr_ex {
    void *qp_context;
    struct vb_cq *send_cq, *recv_cq;
    struct vb_srq *srq;
    struct vb_qp_cap cap;  /* 32 */
    uint32_t qp_type;      /* 52 */
    int sq_sig_all;        /* 56 */
    uint32_t comp_mask;    /* 60 */
    struct vb_pd *pd;      /* 64 */
    void *xrcd;            /* 72 */
    uint32_t create_flags; /* 80 */
    uint16_t max_tso_header;
    void *rwq_ind_tbl; /* 88 */
    struct {
        uint8_t func, key_len;
        uint8_t *key;
        uint64_t fields_mask;
    } rx_hash_conf;          /* 96 */
    uint32_t source_qpn;     /* 120 */
    uint64_t send_ops_flags; /* 128 */
};
#define VB_QP_INIT_ATTR_PD             (1u << 0)
#define VB_QP_INIT_ATTR_SEND_OPS_FLAGS (1u << 6)

struct vb_cq_init_attr_ex {
    uint32_t cqe;
    void *cq_context, *channel;
    uint32_t comp_vector;
    uint64_t wc_flags; /* 32 */
    uint32_t comp_mask;
    uint32_t flags;
    void *parent_domain;
};
#define VB_WC_EX_WITH_BYTE_LEN (1u << 0)
#define VB_WC_EX_WITH_IMM      (1u << 1)
#define VB_WC_EX_WITH_QP_NUM   (1u << 2)
#define VB_WC_EX_WITH_SRC_QP   (1u << 3)

struct vb_global_route {
    uint8_t dgid[16];
    uint32_t flow_label;
    uint8_t sgid_index, hop_limit, traffic_class;
};
struct vb_ah_attr {
    struct vb_global_route grh;
    uint16_t dlid;
    uint8_t sl, src_path_bits, static_rate, is_global, port_num;
};
struct vb_qp_attr {
    uint32_t qp_state, cur_qp_state, path_mtu, path_mig_state;
    uint32_t qkey, rq_psn, sq_psn, dest_qp_num;
    uint32_t qp_access_flags;
    struct vb_qp_cap cap;          /* 36 */
    struct vb_ah_attr ah_attr;     /* 56 */
    struct vb_ah_attr alt_ah_attr; /* 88 */
    uint16_t pkey_index, alt_pkey_index;
    uint8_t en_sqd_async_notify, sq_draining, max_rd_atomic, max_dest_rd_atomic, min_rnr_timer;
    uint8_t port_num, timeout, retry_cnt, rnr_retry; /* 129.. */
    uint8_t alt_port_num, alt_timeout;
    uint32_t rate_limit;
};
#define VB_QP_STATE     (1u << 0)
#define VB_QP_PORT      (1u << 5)
#define VB_QP_AV        (1u << 7)
#define VB_QP_PATH_MTU  (1u << 8)
#define VB_QP_TIMEOUT   (1u << 9)
#define VB_QP_RETRY_CNT (1u << 10)
#define VB_QP_RNR_RETRY (1u << 11)
#define VB_QP_DEST_QPN  (1u << 20)

/* struct ibv_qp_ex: the QP followed by the builder table. */
struct vb_qp_ex;
typedef void (*vb_wr_void_fn)(struct vb_qp_ex *);
typedef int (*vb_wr_complete_fn)(struct vb_qp_ex *);
struct vb_qp_ex {
    struct vb_qp qp_base;                                                                 /* 0 */
    uint64_t comp_mask;                                                                   /* 160 */
    uint64_t wr_id;                                                                       /* 168 */
    uint32_t wr_flags;                                                                    /* 176 */
    void (*wr_atomic_cmp_swp)(struct vb_qp_ex *, uint32_t, uint64_t, uint64_t, uint64_t); /* 184 */
    void (*wr_atomic_fetch_add)(struct vb_qp_ex *, uint32_t, uint64_t, uint64_t);         /* 192 */
    void (*wr_bind_mw)(struct vb_qp_ex *, void *, uint32_t, const void *);                /* 200 */
    void (*wr_local_inv)(struct vb_qp_ex *, uint32_t);                                    /* 208 */
    void (*wr_rdma_read)(struct vb_qp_ex *, uint32_t, uint64_t);                          /* 216 */
    void (*wr_rdma_write)(struct vb_qp_ex *, uint32_t, uint64_t);                         /* 224 */
    void (*wr_rdma_write_imm)(struct vb_qp_ex *, uint32_t, uint64_t, uint32_t);           /* 232 */
    void (*wr_send)(struct vb_qp_ex *);                                                   /* 240 */
    void (*wr_send_imm)(struct vb_qp_ex *, uint32_t);                                     /* 248 */
    void (*wr_send_inv)(struct vb_qp_ex *, uint32_t);                                     /* 256 */
    void (*wr_send_tso)(struct vb_qp_ex *, void *, uint16_t, uint16_t);                   /* 264 */
    void (*wr_set_ud_addr)(struct vb_qp_ex *, void *, uint32_t, uint32_t);                /* 272 */
    void (*wr_set_xrc_srqn)(struct vb_qp_ex *, uint32_t);                                 /* 280 */
    void (*wr_set_inline_data)(struct vb_qp_ex *, void *, size_t);                        /* 288 */
    void (*wr_set_inline_data_list)(struct vb_qp_ex *, size_t, const void *);             /* 296 */
    void (*wr_set_sge)(struct vb_qp_ex *, uint32_t, uint64_t, uint32_t);                  /* 304 */
    void (*wr_set_sge_list)(struct vb_qp_ex *, size_t, const struct vb_sge *);            /* 312 */
    vb_wr_void_fn wr_start;                                                               /* 320 */
    vb_wr_complete_fn wr_complete;                                                        /* 328 */
    vb_wr_void_fn wr_abort;                                                               /* 336 */
    /* wr_atomic_write (344) is left alone: providers built before it existed have no such member. */
};
struct vb_data_buf {
    void *addr;
    size_t length;
};

/* struct ibv_cq_ex: the CQ followed by the iterator state and the poll/read table. */
struct vb_cq_ex;
struct vb_cq_ex {
    struct vb_cq cq_base;                             /* 0 */
    uint32_t comp_mask;                               /* 128 */
    uint32_t status;                                  /* 132 */
    uint64_t wr_id;                                   /* 136 */
    int (*start_poll)(struct vb_cq_ex *, void *attr); /* 144 */
    int (*next_poll)(struct vb_cq_ex *);              /* 152 */
    void (*end_poll)(struct vb_cq_ex *);              /* 160 */
    uint32_t (*read_opcode)(struct vb_cq_ex *);       /* 168 */
    uint32_t (*read_vendor_err)(struct vb_cq_ex *);   /* 176 */
    uint32_t (*read_byte_len)(struct vb_cq_ex *);     /* 184 */
    uint32_t (*read_imm_data)(struct vb_cq_ex *);     /* 192 */
    uint32_t (*read_qp_num)(struct vb_cq_ex *);       /* 200 */
    uint32_t (*read_src_qp)(struct vb_cq_ex *);       /* 208 */
    unsigned (*read_wc_flags)(struct vb_cq_ex *);     /* 216 */
};

/* Constants used by the capture. */
enum {
    VB_WR_RDMA_WRITE = 0,
    VB_WR_RDMA_WRITE_WITH_IMM = 1,
    VB_WR_SEND = 2,
    VB_WR_SEND_WITH_IMM = 3,
    VB_WR_RDMA_READ = 4,
    VB_WR_ATOMIC_CMP_AND_SWP = 5,
    VB_WR_ATOMIC_FETCH_AND_ADD = 6,
    VB_WR_LOCAL_INV = 7,
    VB_WR_BIND_MW = 8,
    VB_WR_SEND_WITH_INV = 9,
    VB_WR_TSO = 10
};
#define VB_SEND_SIGNALED (1u << 1)
#define VB_SEND_INLINE   (1u << 3)
#define VB_WC_WITH_IMM   (1u << 1)

_Static_assert(offsetof(struct vb_context_ops, poll_cq) == 88, "ops.poll_cq");
_Static_assert(offsetof(struct vb_context_ops, post_srq_recv) == 160, "ops.post_srq_recv");
_Static_assert(offsetof(struct vb_context_ops, post_send) == 200, "ops.post_send");
_Static_assert(sizeof(struct vb_context_ops) == 256, "ops size");
_Static_assert(offsetof(struct vb_context, abi_compat) == 320, "abi_compat");
_Static_assert(offsetof(struct vb_qp, qp_num) == 52, "qp_num");
_Static_assert(sizeof(struct vb_qp) == 160, "ibv_qp size");
_Static_assert(sizeof(struct vb_cq) == 128, "ibv_cq size");
_Static_assert(sizeof(struct vb_send_wr) == 128, "send_wr size");
_Static_assert(sizeof(struct vb_wc) == 48, "wc size");
_Static_assert(offsetof(struct vb_qp_ex, wr_abort) == 336, "wr_abort");
_Static_assert(offsetof(struct vb_cq_ex, read_wc_flags) == 216, "read_wc_flags");
_Static_assert(offsetof(struct vb_qp_attr, timeout) == 130, "qp_attr.timeout");
_Static_assert(offsetof(struct vb_qp_init_attr_ex, send_ops_flags) == 128, "send_ops_flags");
_Static_assert(offsetof(struct vb_wq, post_recv) == 48, "wq.post_recv");
_Static_assert(offsetof(struct vb_wq_init_attr, cq) == 32, "wq_init_attr.cq");
_Static_assert(offsetof(struct vb_srq_init_attr_ex, pd) == 32, "srq_init_attr_ex.pd");

#endif
