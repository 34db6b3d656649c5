/* softnic: device list, open/close, device/port/GID queries, and the small exported helpers.
 * The device is a test device and says so: node GUID spells "softnic", fw_ver and node_desc read
 * "softnic test device". */
#include "sn.h"
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SN_GUID 0x736f66746e696301ull /* "softnic\1" */
#define SN_DESC "softnic test device"

static struct ibv_device sn_dev;
static pthread_once_t dev_once = PTHREAD_ONCE_INIT;

static void dev_init(void)
{
    const struct sn_config *c = sn_cfg();
    sn_dev.node_type = IBV_NODE_CA;
    sn_dev.transport_type = IBV_TRANSPORT_IB;
    snprintf(sn_dev.name, sizeof sn_dev.name, "%s", c->device);
    snprintf(sn_dev.dev_name, sizeof sn_dev.dev_name, "uverbs-softnic");
    snprintf(sn_dev.dev_path, sizeof sn_dev.dev_path, "/softnic/class/infiniband_verbs/uverbs-softnic");
    snprintf(sn_dev.ibdev_path, sizeof sn_dev.ibdev_path, "/softnic/class/infiniband/%.40s", c->device);
}

SN_EXPORT struct ibv_device **ibv_get_device_list(int *num)
{
    pthread_once(&dev_once, dev_init);
    struct ibv_device **l = calloc(2, sizeof *l);
    if (!l) {
        errno = ENOMEM;
        return NULL;
    }
    l[0] = &sn_dev;
    if (num) *num = 1;
    return l;
}

SN_EXPORT void ibv_free_device_list(struct ibv_device **list) { free(list); }

SN_EXPORT const char *ibv_get_device_name(struct ibv_device *d) { return d ? d->name : NULL; }

SN_EXPORT __be64 ibv_get_device_guid(struct ibv_device *d)
{
    (void)d;
    return htobe64(SN_GUID);
}

SN_EXPORT int ibv_get_device_index(struct ibv_device *d) { return d == &sn_dev ? 0 : -1; }

static int sn_query_port_full(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *a, size_t len);
static int sn_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
                              struct ibv_device_attr_ex *a, size_t len);
int sn_poll_cq(struct ibv_cq *cq, int n, struct ibv_wc *wc);
int sn_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int sn_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);
struct ibv_cq_ex *sn_create_cq_ex(struct ibv_context *ctx, struct ibv_cq_init_attr_ex *a);

SN_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *dev)
{
    pthread_once(&dev_once, dev_init);
    if (dev != &sn_dev) {
        errno = ENODEV;
        return NULL;
    }
    struct sn_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        errno = ENOMEM;
        return NULL;
    }
    struct ibv_context *ctx = &c->vctx.context;
    c->vctx.sz = sizeof(struct verbs_context);
    ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
    ctx->device = dev;
    ctx->cmd_fd = -1;
    ctx->num_comp_vectors = 1;
    pthread_mutex_init(&ctx->mutex, NULL);
    ctx->ops.poll_cq = sn_poll_cq;
    ctx->ops.req_notify_cq = sn_req_notify_cq;
    ctx->ops.post_send = sn_post_send;
    ctx->ops.post_recv = sn_post_recv;
    ctx->ops.post_srq_recv = sn_post_srq_recv;
    c->vctx.query_port = sn_query_port_full;
    c->vctx.query_device_ex = sn_query_device_ex;
    c->vctx.create_qp_ex = sn_create_qp_ex;
    c->vctx.create_cq_ex = sn_create_cq_ex;
    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->cond, &ca);
    pthread_cond_init(&c->tx_cond, &ca);
    pthread_condattr_destroy(&ca);
    int p[2];
    if (pipe2(p, O_CLOEXEC)) {
        free(c);
        return NULL;
    }
    c->async_rd = p[0];
    c->async_wr = p[1];
    fcntl(c->async_wr, F_SETFL, O_NONBLOCK);
    ctx->async_fd = c->async_rd;
    if (sn_wire_start(c)) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        free(c);
        errno = e ? e : EIO;
        return NULL;
    }
    return ctx;
}

SN_EXPORT int ibv_close_device(struct ibv_context *ctx)
{
    if (!ctx) return EINVAL;
    struct sn_ctx *c = sn_ctx_of(ctx);
    sn_wire_stop(c); /* joins the threads and closes every socket */
    for (struct sn_qp *q = c->qps, *n; q; q = n) {
        n = q->next;
        free(q->sq);
        free(q->rq.ring);
        free(q->bld);
        free(q->bld_sge);
        free(q->bld_inl);
        free(q);
    }
    for (uint32_t i = 0; i < c->nmr; i++) free(c->mrs[i]);
    free(c->mrs);
    close(c->async_rd);
    close(c->async_wr);
    free(c);
    return 0;
}

SN_EXPORT int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
    (void)ctx;
    memset(a, 0, sizeof *a);
    snprintf(a->fw_ver, sizeof a->fw_ver, SN_DESC);
    a->node_guid = htobe64(SN_GUID);
    a->sys_image_guid = htobe64(SN_GUID);
    a->max_mr_size = 1ull << 40;
    a->page_size_cap = 4096;
    a->vendor_id = 0x5346; /* "SF": no real vendor */
    a->vendor_part_id = 1;
    a->hw_ver = 1;
    a->max_qp = 1 << 16;
    a->max_qp_wr = SN_MAX_QP_WR;
    a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_SRQ_RESIZE;
    a->max_sge = SN_MAX_SGE;
    a->max_sge_rd = SN_MAX_SGE;
    a->max_cq = 1 << 16;
    a->max_cqe = SN_MAX_CQE;
    a->max_mr = 1 << 20;
    a->max_pd = 1 << 16;
    a->max_qp_rd_atom = 16;
    a->max_qp_init_rd_atom = 16;
    a->max_res_rd_atom = 1 << 20;
    a->atomic_cap = IBV_ATOMIC_NONE;
    a->max_srq = 1 << 16;
    a->max_srq_wr = SN_MAX_QP_WR;
    a->max_srq_sge = SN_MAX_SGE;
    a->max_pkeys = 1;
    a->phys_port_cnt = 1;
    return 0;
}

static int sn_query_device_ex(struct ibv_context *ctx, const struct ibv_query_device_ex_input *in,
                              struct ibv_device_attr_ex *a, size_t len)
{
    (void)in;
    struct ibv_device_attr_ex x;
    memset(&x, 0, sizeof x);
    ibv_query_device(ctx, &x.orig_attr);
    x.completion_timestamp_mask = ~0ull;
    x.hca_core_clock = 1000000; /* kHz: completion timestamps are CLOCK_MONOTONIC nanoseconds */
    x.max_dm_size = 0;
    memset(a, 0, len);
    memcpy(a, &x, len < sizeof x ? len : sizeof x);
    return 0;
}

static int sn_query_port_full(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *a, size_t len)
{
    (void)ctx;
    if (port != 1) return EINVAL;
    const struct sn_config *c = sn_cfg();
    struct ibv_port_attr x;
    memset(&x, 0, sizeof x);
    x.state = IBV_PORT_ACTIVE;
    x.max_mtu = IBV_MTU_4096;
    x.active_mtu = IBV_MTU_4096;
    x.gid_tbl_len = 2;
    x.port_cap_flags = 0;
    x.max_msg_sz = SN_MAX_MSG;
    x.pkey_tbl_len = 1;
    x.lid = c->link_eth ? 0 : 1;
    x.sm_lid = c->link_eth ? 0 : 1;
    x.max_vl_num = 1;
    sn_rate_to_ib(c->rate_gbps, &x.active_speed, &x.active_width);
    x.phys_state = 5; /* LinkUp */
    x.link_layer = c->link_eth ? IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
    memset(a, 0, len);
    memcpy(a, &x, len < sizeof x ? len : sizeof x);
    return 0;
}

#undef ibv_query_port
SN_EXPORT int ibv_query_port(struct ibv_context *ctx, uint8_t port, struct _compat_ibv_port_attr *a)
{
    /* rdma-core 44's struct ends with port_cap_flags2; newer headers add fields this entry point never
	 * wrote (callers of the inline ibv_query_port get the full struct through vctx->query_port) */
    return sn_query_port_full(ctx, port, (struct ibv_port_attr *)a,
                              offsetof(struct ibv_port_attr, port_cap_flags2) + sizeof(uint16_t));
}

/* GID 0: IB-style link-local fe80::<guid>; GID 1: RoCEv2-style ::ffff:127.0.0.1. Routing uses the
 * QPN only (all peers are on this host), so either index works with `-g`. */
static int sn_gid(int index, union ibv_gid *g, uint32_t *type)
{
    memset(g, 0, sizeof *g);
    if (index == 0) {
        g->raw[0] = 0xfe;
        g->raw[1] = 0x80;
        uint64_t guid = htobe64(SN_GUID);
        memcpy(&g->raw[8], &guid, 8);
        *type = sn_cfg()->link_eth ? IBV_GID_TYPE_ROCE_V1 : IBV_GID_TYPE_IB;
        return 0;
    }
    if (index == 1) {
        g->raw[10] = 0xff;
        g->raw[11] = 0xff;
        g->raw[12] = 127;
        g->raw[15] = 1;
        *type = IBV_GID_TYPE_ROCE_V2;
        return 0;
    }
    return -1;
}

SN_EXPORT int ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
    (void)ctx;
    uint32_t t;
    if (port != 1 || sn_gid(index, gid, &t)) return -1;
    return 0;
}

SN_EXPORT int _ibv_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index, struct ibv_gid_entry *e,
                                uint32_t flags, size_t esz)
{
    (void)ctx;
    (void)flags;
    struct ibv_gid_entry x;
    memset(&x, 0, sizeof x);
    if (port != 1 || sn_gid((int)index, &x.gid, &x.gid_type)) return ENODATA;
    x.gid_index = index;
    x.port_num = 1;
    x.ndev_ifindex = 1; /* lo */
    memcpy(e, &x, esz < sizeof x ? esz : sizeof x);
    return 0;
}

SN_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *ctx, struct ibv_gid_entry *e, size_t max, uint32_t flags,
                                       size_t esz)
{
    size_t n = 0;
    for (uint32_t i = 0; i < 2 && n < max; i++, n++)
        _ibv_query_gid_ex(ctx, 1, i, (struct ibv_gid_entry *)((char *)e + n * esz), flags, esz);
    return (ssize_t)n;
}

/* IBVERBS_PRIVATE_34, used by ibv_devinfo: 0 = IB/RoCE v1, 1 = RoCE v2 */
SN_EXPORT int ibv_query_gid_type(struct ibv_context *ctx, uint8_t port, unsigned index, int *type)
{
    (void)ctx;
    if (port != 1 || index > 1) return -1;
    *type = index == 1;
    return 0;
}

SN_EXPORT int ibv_query_pkey(struct ibv_context *ctx, uint8_t port, int index, __be16 *pkey)
{
    (void)ctx;
    if (port != 1 || index != 0) return -1;
    *pkey = htobe16(0xffff);
    return 0;
}

SN_EXPORT int ibv_get_pkey_index(struct ibv_context *ctx, uint8_t port, __be16 pkey)
{
    (void)ctx;
    return port == 1 && be16toh(pkey) == 0xffff ? 0 : -1;
}

/* ---- sysfs helpers (IBVERBS_1.0): our device has no sysfs; node_desc is served here ---- */
SN_EXPORT const char *ibv_get_sysfs_path(void) { return "/sys"; }

SN_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
    pthread_once(&dev_once, dev_init);
    if (!dir || !file || !buf || !size) return -1;
    if (!strcmp(dir, sn_dev.ibdev_path)) {
        const char *v = !strcmp(file, "node_desc")   ? SN_DESC
                        : !strcmp(file, "fw_ver")    ? SN_DESC
                        : !strcmp(file, "node_type") ? "1: CA"
                                                     : NULL;
        if (!v) return -1;
        snprintf(buf, size, "%s", v);
        return (int)strlen(buf);
    }
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, buf, size);
    close(fd);
    if (n <= 0) return -1;
    if ((size_t)n == size) n--;
    buf[n] = 0;
    if (n > 0 && buf[n - 1] == '\n') buf[--n] = 0;
    return (int)n;
}

/* ---- strings ---- */
SN_EXPORT const char *ibv_node_type_str(enum ibv_node_type t)
{
    static const char *const s[] = {"unknown",           "InfiniBand channel adapter",
                                    "InfiniBand switch", "InfiniBand router",
                                    "iWARP NIC",         "usNIC",
                                    "usNIC UDP",         "unspecified"};
    return (unsigned)(t + 1) < sizeof s / sizeof s[0] ? s[t + 1] : "unknown";
}

SN_EXPORT const char *ibv_port_state_str(enum ibv_port_state s)
{
    static const char *const n[] = {"PORT_NOP",   "PORT_DOWN",   "PORT_INIT",
                                    "PORT_ARMED", "PORT_ACTIVE", "PORT_ACTIVE_DEFER"};
    return (unsigned)s < sizeof n / sizeof n[0] ? n[s] : "unknown";
}

SN_EXPORT const char *ibv_event_type_str(enum ibv_event_type e)
{
    static const char *const n[] = {
        "CQ error",
        "local work queue catastrophic error",
        "invalid request local work queue error",
        "local access violation work queue error",
        "communication established",
        "send queue drained",
        "path migrated",
        "path migration request error",
        "local catastrophic error",
        "port active",
        "port error",
        "LID change",
        "P_Key change",
        "SM change",
        "SRQ catastrophic error",
        "SRQ limit reached",
        "last WQE reached",
        "client reregistration",
        "GID table change",
        "WQ fatal",
    };
    return (unsigned)e < sizeof n / sizeof n[0] ? n[e] : "unknown";
}

SN_EXPORT const char *ibv_wc_status_str(enum ibv_wc_status s)
{
    static const char *const n[] = {
        "success",
        "local length error",
        "local QP operation error",
        "local EE context operation error",
        "local protection error",
        "Work Request Flushed Error",
        "memory management operation error",
        "bad response error",
        "local access error",
        "remote invalid request error",
        "remote access error",
        "remote operation error",
        "transport retry counter exceeded",
        "RNR retry counter exceeded",
        "local RDD violation error",
        "remote invalid RD request",
        "aborted error",
        "invalid EE context number",
        "invalid EE context state",
        "fatal error",
        "response timeout error",
        "general error",
        "TM error",
        "TM software rendezvous",
    };
    return (unsigned)s < sizeof n / sizeof n[0] ? n[s] : "unknown";
}

/* ---- rate conversions ---- */
static const struct {
    enum ibv_rate r;
    int mult;
    int mbps;
} rates[] = {
    {IBV_RATE_2_5_GBPS, 1, 2500},     {IBV_RATE_5_GBPS, 2, 5000},       {IBV_RATE_10_GBPS, 4, 10000},
    {IBV_RATE_20_GBPS, 8, 20000},     {IBV_RATE_30_GBPS, 12, 30000},    {IBV_RATE_40_GBPS, 16, 40000},
    {IBV_RATE_60_GBPS, 24, 60000},    {IBV_RATE_80_GBPS, 32, 80000},    {IBV_RATE_120_GBPS, 48, 120000},
    {IBV_RATE_25_GBPS, 10, 25000},    {IBV_RATE_50_GBPS, 20, 50000},    {IBV_RATE_100_GBPS, 40, 100000},
    {IBV_RATE_200_GBPS, 80, 200000},  {IBV_RATE_300_GBPS, 120, 300000}, {IBV_RATE_400_GBPS, 160, 400000},
    {IBV_RATE_600_GBPS, 240, 600000},
};
#define NRATES (sizeof rates / sizeof rates[0])

SN_EXPORT int ibv_rate_to_mult(enum ibv_rate r)
{
    for (size_t i = 0; i < NRATES; i++)
        if (rates[i].r == r) return rates[i].mult;
    return -1;
}

SN_EXPORT enum ibv_rate mult_to_ibv_rate(int m)
{
    for (size_t i = 0; i < NRATES; i++)
        if (rates[i].mult == m) return rates[i].r;
    return IBV_RATE_MAX;
}

SN_EXPORT int ibv_rate_to_mbps(enum ibv_rate r)
{
    for (size_t i = 0; i < NRATES; i++)
        if (rates[i].r == r) return rates[i].mbps;
    return -1;
}

SN_EXPORT enum ibv_rate mbps_to_ibv_rate(int mbps)
{
    for (size_t i = 0; i < NRATES; i++)
        if (rates[i].mbps == mbps) return rates[i].r;
    return IBV_RATE_MAX;
}

/* ---- cheap no-ops and honest refusals (never crash a caller; errors are EOPNOTSUPP) ---- */
SN_EXPORT int ibv_fork_init(void) { return 0; }

SN_EXPORT enum ibv_fork_status ibv_is_fork_initialized(void) { return IBV_FORK_UNNEEDED; }

SN_EXPORT int ibv_dontfork_range(void *base, size_t size)
{
    (void)base;
    (void)size;
    return 0;
}

SN_EXPORT int ibv_dofork_range(void *base, size_t size)
{
    (void)base;
    (void)size;
    return 0;
}

SN_EXPORT int ibv_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
    (void)qp, (void)gid, (void)lid;
    return EOPNOTSUPP;
}

SN_EXPORT int ibv_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid)
{
    (void)qp, (void)gid, (void)lid;
    return EOPNOTSUPP;
}

SN_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
    (void)attr;
    struct ibv_ah *ah = calloc(1, sizeof *ah);
    if (!ah) {
        errno = ENOMEM;
        return NULL;
    }
    ah->context = pd->context;
    ah->pd = pd;
    return ah;
}

SN_EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
    free(ah);
    return 0;
}

SN_EXPORT int ibv_init_ah_from_wc(struct ibv_context *ctx, uint8_t port, struct ibv_wc *wc, struct ibv_grh *grh,
                                  struct ibv_ah_attr *ah)
{
    (void)ctx, (void)grh;
    memset(ah, 0, sizeof *ah);
    ah->dlid = wc->slid;
    ah->port_num = port;
    return 0;
}

SN_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh, uint8_t port)
{
    struct ibv_ah_attr a;
    ibv_init_ah_from_wc(pd->context, port, wc, grh, &a);
    return ibv_create_ah(pd, &a);
}

SN_EXPORT int ibv_resolve_eth_l2_from_gid(struct ibv_context *ctx, struct ibv_ah_attr *attr, uint8_t eth_mac[6],
                                          uint16_t *vid)
{
    (void)ctx, (void)attr, (void)eth_mac, (void)vid;
    return EOPNOTSUPP;
}

SN_EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
    (void)cmd_fd;
    errno = EOPNOTSUPP;
    return NULL;
}

SN_EXPORT struct ibv_pd *ibv_import_pd(struct ibv_context *ctx, uint32_t h)
{
    (void)ctx, (void)h;
    errno = EOPNOTSUPP;
    return NULL;
}

SN_EXPORT void ibv_unimport_pd(struct ibv_pd *pd) { (void)pd; }

SN_EXPORT struct ibv_mr *ibv_import_mr(struct ibv_pd *pd, uint32_t h)
{
    (void)pd, (void)h;
    errno = EOPNOTSUPP;
    return NULL;
}

SN_EXPORT void ibv_unimport_mr(struct ibv_mr *mr) { (void)mr; }

SN_EXPORT struct ibv_dm *ibv_import_dm(struct ibv_context *ctx, uint32_t h)
{
    (void)ctx, (void)h;
    errno = EOPNOTSUPP;
    return NULL;
}

SN_EXPORT void ibv_unimport_dm(struct ibv_dm *dm) { (void)dm; }

SN_EXPORT int ibv_query_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
    (void)qp, (void)ece;
    return EOPNOTSUPP;
}

SN_EXPORT int ibv_set_ece(struct ibv_qp *qp, struct ibv_ece *ece)
{
    (void)qp, (void)ece;
    return EOPNOTSUPP;
}

SN_EXPORT int ibv_query_qp_data_in_order(struct ibv_qp *qp, enum ibv_wr_opcode op, uint32_t flags)
{
    (void)qp, (void)op, (void)flags;
    return 0; /* no promise beyond "completion means data is placed" */
}

/* ---- async events: a pipe of struct ibv_async_event; blocking read like the real fd ---- */
void sn_async_event(struct sn_ctx *c, enum ibv_event_type t, void *obj)
{
    struct ibv_async_event e;
    memset(&e, 0, sizeof e);
    e.event_type = t;
    e.element.qp = obj;
    if (write(c->async_wr, &e, sizeof e) < 0) {
        /* pipe full: the application is not reading events; dropping one is harmless */
    }
}

SN_EXPORT int ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *ev)
{
    for (;;) {
        ssize_t n = read(ctx->async_fd, ev, sizeof *ev);
        if (n == (ssize_t)sizeof *ev) return 0;
        if (n < 0 && errno == EINTR) continue;
        return -1;
    }
}

SN_EXPORT void ibv_ack_async_event(struct ibv_async_event *ev) { (void)ev; }
