/* RDMA verbs capture: the exported libibverbs entry points railscope interposes (control path).
 *
 * The data path (ibv_post_send, ibv_poll_cq, ...) is static inline in verbs.h and dispatches through
 * ctx->ops, so the way in is ibv_open_device: its wrapper saves the provider's ops in a per-context record
 * and installs ours (verbs_ops.c), plus the verbs_context create_qp_ex/create_cq_ex entries (verbs_ex.c).
 * The other wrappers keep the tables (MRs with their memory kind, CQs, extended QPs) and record the
 * control-path calls.
 *
 * Reaching the wrappers: they are exported under libibverbs' own symbol versions (preload/librailscope.map),
 * so LD_PRELOAD catches direct links and libraries loaded RTLD_LOCAL that link libibverbs; binaries bound
 * to the IBVERBS_1.0 compat symbols fall through to libibverbs. Programs that dlopen libibverbs and look the
 * entry points up with dlsym/dlvsym (NCCL) get them through the dlsym/dlvsym redirects of preload/dl.c.
 * The real functions: what the application's dlsym found, else RTLD_NEXT, else the loaded libibverbs.
 *
 * Each wrapper's exported name is an alias of a hidden function, so that taking a wrapper's address inside
 * this library never resolves to libibverbs' definition.
 */
#include <errno.h>
#include <string.h>

#include "preload/dl.h"
#include "preload/verbs_int.h"

/* Where the real function lives when RTLD_NEXT cannot see it (RTLD_LOCAL loads): mlx5dv_* in libmlx5. */
#define VB_LIB_OF(name) ((name)[0] == 'm' ? "libmlx5.so" : "libibverbs.so")

/* X(name, version, return type, parameters, argument names) */
#define VB_ENTRIES(X)                                                                                                  \
    X(ibv_open_device, "IBVERBS_1.1", struct vb_context *, (struct vb_device * dev), (dev))                            \
    X(ibv_import_device, "IBVERBS_1.10", struct vb_context *, (int cmd_fd), (cmd_fd))                                  \
    X(ibv_close_device, "IBVERBS_1.1", int, (struct vb_context * ctx), (ctx))                                          \
    X(ibv_alloc_pd, "IBVERBS_1.1", struct vb_pd *, (struct vb_context * ctx), (ctx))                                   \
    X(ibv_reg_mr, "IBVERBS_1.1", struct vb_mr *, (struct vb_pd * pd, void *addr, size_t len, int access),              \
      (pd, addr, len, access))                                                                                         \
    X(ibv_reg_mr_iova, "IBVERBS_1.7", struct vb_mr *,                                                                  \
      (struct vb_pd * pd, void *addr, size_t len, uint64_t iova, int access), (pd, addr, len, iova, access))           \
    X(ibv_reg_mr_iova2, "IBVERBS_1.8", struct vb_mr *,                                                                 \
      (struct vb_pd * pd, void *addr, size_t len, uint64_t iova, unsigned access), (pd, addr, len, iova, access))      \
    X(ibv_reg_dmabuf_mr, "IBVERBS_1.12", struct vb_mr *,                                                               \
      (struct vb_pd * pd, uint64_t off, size_t len, uint64_t iova, int fd, int access),                                \
      (pd, off, len, iova, fd, access))                                                                                \
    X(ibv_rereg_mr, "IBVERBS_1.1", int,                                                                                \
      (struct vb_mr * mr, int flags, struct vb_pd *pd, void *addr, size_t len, int access),                            \
      (mr, flags, pd, addr, len, access))                                                                              \
    X(ibv_dereg_mr, "IBVERBS_1.1", int, (struct vb_mr * mr), (mr))                                                     \
    X(ibv_create_cq, "IBVERBS_1.1", struct vb_cq *,                                                                    \
      (struct vb_context * ctx, int cqe, void *cq_ctx, void *channel, int vec), (ctx, cqe, cq_ctx, channel, vec))      \
    X(ibv_destroy_cq, "IBVERBS_1.1", int, (struct vb_cq * cq), (cq))                                                   \
    X(ibv_create_qp, "IBVERBS_1.1", struct vb_qp *, (struct vb_pd * pd, struct vb_qp_init_attr * attr), (pd, attr))    \
    X(ibv_modify_qp, "IBVERBS_1.1", int, (struct vb_qp * qp, struct vb_qp_attr * attr, int mask), (qp, attr, mask))    \
    X(ibv_destroy_qp, "IBVERBS_1.1", int, (struct vb_qp * qp), (qp))                                                   \
    X(ibv_create_srq, "IBVERBS_1.1", struct vb_srq *, (struct vb_pd * pd, struct vb_srq_init_attr * attr), (pd, attr)) \
    X(ibv_destroy_srq, "IBVERBS_1.1", int, (struct vb_srq * srq), (srq))                                               \
    X(mlx5dv_create_qp, "MLX5_1.3", struct vb_qp *,                                                                    \
      (struct vb_context * ctx, struct vb_qp_init_attr_ex * attr, void *mlx5_attr), (ctx, attr, mlx5_attr))            \
    X(mlx5dv_create_cq, "MLX5_1.1", struct vb_cq_ex *,                                                                 \
      (struct vb_context * ctx, struct vb_cq_init_attr_ex * attr, void *mlx5_attr), (ctx, attr, mlx5_attr))            \
    X(mlx5dv_open_device, "MLX5_1.7", struct vb_context *, (struct vb_device * dev, void *attr), (dev, attr))          \
    X(mlx5dv_reg_dmabuf_mr, "MLX5_1.25", struct vb_mr *,                                                               \
      (struct vb_pd * pd, uint64_t off, size_t len, uint64_t iova, int fd, int access, int mlx5_access),               \
      (pd, off, len, iova, fd, access, mlx5_access))

/* Real-function slots, typed, and their lazy resolution. */
#define VB_DECL_REAL(name, ver, ret, params, args)                      \
    typedef ret(*name##_fn) params;                                     \
    static void *real_##name;                                           \
    static name##_fn get_##name(void)                                   \
    {                                                                   \
        void *p = __atomic_load_n(&real_##name, __ATOMIC_ACQUIRE);      \
        if (RS_UNLIKELY(!p)) {                                          \
            p = rs_dl_real_v(VB_LIB_OF(#name), #name, ver);             \
            if (p) __atomic_store_n(&real_##name, p, __ATOMIC_RELEASE); \
        }                                                               \
        return (name##_fn)p;                                            \
    }
VB_ENTRIES(VB_DECL_REAL)
#undef VB_DECL_REAL

/* The wrapper for NAME is vbw_NAME (hidden); NAME itself is an exported alias. */
#define VB_DECL_WRAP(name, ver, ret, params, args) static ret vbw_##name params;
VB_ENTRIES(VB_DECL_WRAP)
#undef VB_DECL_WRAP
#define VB_ALIAS(name, ver, ret, params, args) RS_EXPORT ret name params __attribute__((alias("vbw_" #name)));
VB_ENTRIES(VB_ALIAS)
#undef VB_ALIAS

#define FAIL_NOSYS(val) \
    do {                \
        errno = ENOSYS; \
        return val;     \
    } while (0)

/* Record when the family is on and this thread is not already inside a wrapper. */
static inline int rec_begin(void) { return rs_on(RS_FAM_verbs) && rs_guard_enter(); }

/* Teardown calls record {handle, ret}: close_device, dereg_mr and destroy_cq share that layout. */
#define EMIT_RELEASE(KIND, FIELD, obj, t0, ret) \
    do {                                        \
        struct rs_ev_##KIND ev_;                \
        RS_EV_INIT(&ev_, KIND, t0);             \
        ev_.FIELD = (uint64_t)(uintptr_t)(obj); \
        ev_.ret = (ret);                        \
        ev_.pad = 0;                            \
        rs_emit(&ev_.h);                        \
        rs_guard_exit();                        \
    } while (0)

/* ---- device ---- */

/* A context came into being (ibv_open_device, ibv_import_device): patch it and record it. */
static void ctx_opened(int rec, struct vb_context *ctx, const struct vb_device *dev, uint64_t t0, int err, uint32_t how)
{
    if (ctx) {
        struct vb_ctx_rec *c = vb_ctx_add(ctx);
        if (c) {
            if (!c->dev_str && dev) c->dev_str = rs_intern_n(dev->name, strnlen(dev->name, sizeof dev->name));
            vb_patch_ops(c);
            vb_patch_vctx(c);
        } else {
            rs_warn_once("verbs: more than %d open contexts; further ones are not traced", VB_MAX_CTX);
        }
    }
    if (!rec) return;
    struct rs_ev_IBV_OPEN_DEVICE ev;
    RS_EV_INIT(&ev, IBV_OPEN_DEVICE, t0);
    ev.h.aux = ctx ? how : (uint32_t)err;
    ev.ctx = (uint64_t)(uintptr_t)ctx;
    struct vb_ctx_rec *c = ctx ? vb_ctx_find(ctx) : NULL;
    ev.device = c ? c->dev_str : 0;
    ev.pad = 0;
    rs_emit(&ev.h);
    rs_guard_exit();
}

/* A context opened out of our sight (libibverbs' private verbs_open_device called directly by a provider
 * library, or any other path that skips the exported opens): patched when the application first uses it
 * through an exported entry point that only succeeds on a live context (ibv_alloc_pd, ibv_create_cq,
 * ibv_create_qp), and recorded then as IBV_OPEN_DEVICE with aux = 4. rec: the caller holds the guard. */
static void ctx_adopt(struct vb_context *ctx, uint64_t t0, int rec)
{
    if (!ctx || vb_ctx_find(ctx)) return;
    struct vb_ctx_rec *c = vb_ctx_add(ctx);
    if (!c) {
        rs_warn_once("verbs: more than %d open contexts; further ones are not traced", VB_MAX_CTX);
        return;
    }
    const struct vb_device *dev = ctx->device;
    if (!c->dev_str && dev) c->dev_str = rs_intern_n(dev->name, strnlen(dev->name, sizeof dev->name));
    vb_patch_ops(c);
    vb_patch_vctx(c);
    if (!rec) return;
    struct rs_ev_IBV_OPEN_DEVICE ev;
    RS_EV_INIT(&ev, IBV_OPEN_DEVICE, t0);
    ev.h.aux = 4;
    ev.ctx = (uint64_t)(uintptr_t)ctx;
    ev.device = c->dev_str;
    ev.pad = 0;
    rs_emit(&ev.h);
}

/* ctx_adopt from a wrapper that does not hold the guard. */
static void ctx_adopt_unguarded(struct vb_context *ctx, uint64_t t0)
{
    if (!ctx || vb_ctx_find(ctx)) return;
    int rec = rec_begin();
    ctx_adopt(ctx, t0, rec);
    if (rec) rs_guard_exit();
}

static struct vb_context *vbw_ibv_open_device(struct vb_device *dev)
{
    ibv_open_device_fn real = get_ibv_open_device();
    if (!real) FAIL_NOSYS(NULL);
    int rec = rec_begin();
    uint64_t t0 = rs_now();
    struct vb_context *ctx = real(dev);
    int saved = errno;
    ctx_opened(rec, ctx, dev, t0, saved, 0);
    errno = saved;
    return ctx;
}

/* A context shared from another process through its command fd (aux = 2 on success). */
static struct vb_context *vbw_ibv_import_device(int cmd_fd)
{
    ibv_import_device_fn real = get_ibv_import_device();
    if (!real) FAIL_NOSYS(NULL);
    int rec = rec_begin();
    uint64_t t0 = rs_now();
    struct vb_context *ctx = real(cmd_fd);
    int saved = errno;
    ctx_opened(rec, ctx, ctx ? ctx->device : NULL, t0, saved, 2);
    errno = saved;
    return ctx;
}

/* mlx5's own open (DEVX, AES-XTS users; libmlx5 reaches the private verbs_open_device, not
 * ibv_open_device): aux = 3. */
static struct vb_context *vbw_mlx5dv_open_device(struct vb_device *dev, void *attr)
{
    mlx5dv_open_device_fn real = get_mlx5dv_open_device();
    if (!real) FAIL_NOSYS(NULL);
    int rec = rec_begin();
    uint64_t t0 = rs_now();
    struct vb_context *ctx = real(dev, attr);
    int saved = errno;
    ctx_opened(rec, ctx, dev, t0, saved, 3);
    errno = saved;
    return ctx;
}

static int vbw_ibv_close_device(struct vb_context *ctx)
{
    ibv_close_device_fn real = get_ibv_close_device();
    if (!real) FAIL_NOSYS(-1);
    int rec = rec_begin();
    uint64_t t0 = rs_now();
    /* The context's memory goes away with the call: restore its ops and forget it first. */
    struct vb_ctx_rec *c = ctx ? vb_ctx_find(ctx) : NULL;
    if (c) {
        vb_flush_empty_all();
        vb_unpatch_ops(c);
        vb_unpatch_vctx(c);
        vb_mr_purge(c->id);
        vb_cq_unbind_ctx(c);
        vb_ctx_del(ctx);
    }
    int ret = real(ctx);
    int saved = errno;
    if (ret && c && (c = vb_ctx_add(ctx))) { /* still open: keep tracing it */
        vb_patch_ops(c);
        vb_patch_vctx(c);
    }
    if (rec) EMIT_RELEASE(IBV_CLOSE_DEVICE, ctx, ctx, t0, ret);
    errno = saved;
    return ret;
}

static struct vb_pd *vbw_ibv_alloc_pd(struct vb_context *ctx)
{
    ibv_alloc_pd_fn real = get_ibv_alloc_pd();
    if (!real) FAIL_NOSYS(NULL);
    int rec = rec_begin();
    uint64_t t0 = rs_now();
    struct vb_pd *pd = real(ctx);
    int saved = errno;
    if (pd) ctx_adopt(ctx, t0, rec);
    if (rec) {
        struct rs_ev_IBV_ALLOC_PD ev;
        RS_EV_INIT(&ev, IBV_ALLOC_PD, t0);
        ev.h.aux = pd ? 0 : (uint32_t)saved;
        ev.pd = (uint64_t)(uintptr_t)pd;
        ev.ctx = (uint64_t)(uintptr_t)ctx;
        rs_emit(&ev.h);
        rs_guard_exit();
    }
    errno = saved;
    return pd;
}

/* ---- memory registration ---- */

/* Table and event for any registration; dmabuf MRs are of kind dmabuf, their CUDA device found from iova.
 * Like ctx_opened, ends the wrapper's guard when it records. */
static void mr_done(int rec, struct vb_pd *pd, struct vb_mr *mr, uint64_t addr, uint64_t len, uint64_t iova,
                    unsigned access, int is_dmabuf, int dmabuf_fd, uint64_t t0, int err)
{
    uint64_t t1 = rs_now();
    int dev = -1;
    uint8_t kind = RS_MEM_UNKNOWN;
    if (mr) {
        if (is_dmabuf) {
            vb_classify(iova, len, &dev);
            kind = RS_MEM_DMABUF;
        } else {
            kind = vb_classify(addr, len, &dev);
        }
        struct vb_ctx_rec *c = vb_ctx_find(mr->context ? mr->context : (pd ? pd->context : NULL));
        if (c) vb_mr_add(c, mr->lkey, kind);
    }
    if (!rec) return;
    struct rs_ev_IBV_REG_MR ev;
    RS_EV_INIT(&ev, IBV_REG_MR, t0);
    ev.addr = addr;
    ev.length = len;
    ev.iova = iova;
    ev.ctx = (uint64_t)(uintptr_t)(pd ? pd->context : NULL);
    ev.pd = (uint64_t)(uintptr_t)pd;
    ev.mr = (uint64_t)(uintptr_t)mr;
    ev.dur = t1 - t0;
    ev.lkey = mr ? mr->lkey : 0;
    ev.rkey = mr ? mr->rkey : 0;
    ev.access = access;
    ev.mem = kind;
    ev.dmabuf_fd = dmabuf_fd;
    ev.cuda_device = dev;
    ev.err = mr ? 0 : err;
    ev.pad = 0;
    rs_emit(&ev.h);
    rs_guard_exit();
}

static struct vb_mr *vbw_ibv_reg_mr(struct vb_pd *pd, void *addr, size_t len, int access)
{
    ibv_reg_mr_fn real = get_ibv_reg_mr();
    if (!real) FAIL_NOSYS(NULL);
    int rec = rec_begin();
    uint64_t t0 = rs_now();
    struct vb_mr *mr = real(pd, addr, len, access);
    int saved = errno;
    mr_done(rec, pd, mr, (uintptr_t)addr, len, (uintptr_t)addr, (unsigned)access, 0, -1, t0, saved);
    errno = saved;
    return mr;
}

static struct vb_mr *vbw_ibv_reg_mr_iova(struct vb_pd *pd, void *addr, size_t len, uint64_t iova, int access)
{
    ibv_reg_mr_iova_fn real = get_ibv_reg_mr_iova();
    if (!real) FAIL_NOSYS(NULL);
    int rec = rec_begin();
    uint64_t t0 = rs_now();
    struct vb_mr *mr = real(pd, addr, len, iova, access);
    int saved = errno;
    mr_done(rec, pd, mr, (uintptr_t)addr, len, iova, (unsigned)access, 0, -1, t0, saved);
    errno = saved;
    return mr;
}

static struct vb_mr *vbw_ibv_reg_mr_iova2(struct vb_pd *pd, void *addr, size_t len, uint64_t iova, unsigned access)
{
    ibv_reg_mr_iova2_fn real = get_ibv_reg_mr_iova2();
    if (!real) FAIL_NOSYS(NULL);
    int rec = rec_begin();
    uint64_t t0 = rs_now();
    struct vb_mr *mr = real(pd, addr, len, iova, access);
    int saved = errno;
    mr_done(rec, pd, mr, (uintptr_t)addr, len, iova, access, 0, -1, t0, saved);
    errno = saved;
    return mr;
}

static struct vb_mr *vbw_ibv_reg_dmabuf_mr(struct vb_pd *pd, uint64_t off, size_t len, uint64_t iova, int fd,
                                           int access)
{
    ibv_reg_dmabuf_mr_fn real = get_ibv_reg_dmabuf_mr();
    if (!real) FAIL_NOSYS(NULL);
    int rec = rec_begin();
    uint64_t t0 = rs_now();
    struct vb_mr *mr = real(pd, off, len, iova, fd, access);
    int saved = errno;
    /* mr->addr holds the offset for dmabuf MRs: the iova argument is the address the WRs use */
    mr_done(rec, pd, mr, off, len, iova, (unsigned)access, 1, fd, t0, saved);
    errno = saved;
    return mr;
}

/* Re-registration may move the MR (new address, PD, keys): the old lkey leaves the table, the new one
 * enters with a fresh classification; recorded as an IBV_REG_MR with hdr.aux = 1 (err = the return value). */
static int vbw_ibv_rereg_mr(struct vb_mr *mr, int flags, struct vb_pd *pd, void *addr, size_t len, int access)
{
    ibv_rereg_mr_fn real = get_ibv_rereg_mr();
    if (!real) FAIL_NOSYS(-1);
    int rec = rec_begin();
    uint64_t t0 = rs_now();
    struct vb_ctx_rec *c = mr ? vb_ctx_find(mr->context) : NULL;
    uint32_t old_lkey = mr ? mr->lkey : 0;
    int ret = real(mr, flags, pd, addr, len, access);
    int saved = errno;
    if (!ret && mr) {
        if (c) vb_mr_del(c, old_lkey);
        mr_done(0, mr->pd, mr, (uintptr_t)mr->addr, mr->length, (uintptr_t)mr->addr, (unsigned)access, 0, -1, t0, 0);
    }
    if (rec) {
        struct rs_ev_IBV_REG_MR ev;
        memset(&ev, 0, sizeof ev);
        RS_EV_INIT(&ev, IBV_REG_MR, t0);
        ev.h.aux = 1;
        ev.mr = (uint64_t)(uintptr_t)mr;
        if (mr) {
            ev.addr = ev.iova = (uintptr_t)mr->addr;
            ev.length = mr->length;
            ev.ctx = (uint64_t)(uintptr_t)mr->context;
            ev.pd = (uint64_t)(uintptr_t)mr->pd;
            ev.lkey = mr->lkey;
            ev.rkey = mr->rkey;
            ev.mem = c ? vb_mr_kind(c, mr->lkey) : RS_MEM_UNKNOWN;
        }
        ev.access = (uint32_t)access;
        ev.dur = rs_now() - t0;
        ev.dmabuf_fd = -1;
        ev.cuda_device = -1;
        ev.err = ret;
        rs_emit(&ev.h);
        rs_guard_exit();
    }
    errno = saved;
    return ret;
}

/* NCCL's Data Direct registration (ConnectX-8): a dmabuf MR through libmlx5. Recorded as any dmabuf MR;
 * the mlx5 access flags are not kept. */
static struct vb_mr *vbw_mlx5dv_reg_dmabuf_mr(struct vb_pd *pd, uint64_t off, size_t len, uint64_t iova, int fd,
                                              int access, int mlx5_access)
{
    mlx5dv_reg_dmabuf_mr_fn real = get_mlx5dv_reg_dmabuf_mr();
    if (!real) FAIL_NOSYS(NULL);
    int rec = rec_begin();
    uint64_t t0 = rs_now();
    struct vb_mr *mr = real(pd, off, len, iova, fd, access, mlx5_access);
    int saved = errno;
    mr_done(rec, pd, mr, off, len, iova, (unsigned)access, 1, fd, t0, saved);
    errno = saved;
    return mr;
}

static int vbw_ibv_dereg_mr(struct vb_mr *mr)
{
    ibv_dereg_mr_fn real = get_ibv_dereg_mr();
    if (!real) FAIL_NOSYS(EINVAL);
    int rec = rec_begin();
    uint64_t t0 = rs_now();
    struct vb_ctx_rec *c = mr ? vb_ctx_find(mr->context) : NULL;
    uint32_t lkey = mr ? mr->lkey : 0;
    int ret = real(mr);
    int saved = errno;
    if (!ret && c) vb_mr_del(c, lkey);
    if (rec) EMIT_RELEASE(IBV_DEREG_MR, mr, mr, t0, ret);
    errno = saved;
    return ret;
}

/* ---- CQs ---- */

void vb_cq_created(struct vb_context *ctx, struct vb_cq *cq, int cqe, int ex, uint64_t wc_flags, uint64_t t0, int err)
{
    struct vb_ctx_rec *c = ctx ? vb_ctx_find(ctx) : NULL;
    if (cq && c) {
        struct vb_cq_rec *q = vb_cq_add(cq, c);
        if (q && ex) {
            q->wc_flags = wc_flags;
            vb_patch_cq_ex(q);
        }
    }
    if (!rec_begin()) return;
    struct rs_ev_IBV_CREATE_CQ ev;
    RS_EV_INIT(&ev, IBV_CREATE_CQ, t0);
    ev.h.aux = cq ? 0 : (uint32_t)err;
    ev.cq = (uint64_t)(uintptr_t)cq;
    ev.ctx = (uint64_t)(uintptr_t)ctx;
    ev.cqe = (uint32_t)(cq ? cq->cqe : cqe);
    ev.ext = (uint32_t)ex;
    rs_emit(&ev.h);
    rs_guard_exit();
}

static struct vb_cq *vbw_ibv_create_cq(struct vb_context *ctx, int cqe, void *cq_ctx, void *channel, int vec)
{
    ibv_create_cq_fn real = get_ibv_create_cq();
    if (!real) FAIL_NOSYS(NULL);
    /* Held across the real call so that a provider creating the CQ through create_cq_ex records once. */
    int g = rs_guard_enter();
    uint64_t t0 = rs_now();
    struct vb_cq *cq = real(ctx, cqe, cq_ctx, channel, vec);
    int saved = errno;
    if (g) rs_guard_exit();
    if (cq) ctx_adopt_unguarded(ctx, t0);
    vb_cq_created(ctx, cq, cqe, 0, 0, t0, saved);
    errno = saved;
    return cq;
}

static int vbw_ibv_destroy_cq(struct vb_cq *cq)
{
    ibv_destroy_cq_fn real = get_ibv_destroy_cq();
    if (!real) FAIL_NOSYS(EINVAL);
    int rec = rec_begin();
    uint64_t t0 = rs_now();
    struct vb_cq_rec *q = cq ? vb_cq_find(cq) : NULL;
    struct vb_cq_rec keep;
    if (q) {
        if (rec) vb_flush_empty(q, t0); /* the last interval of this CQ */
        keep = *q;
        vb_cq_del(cq);
    }
    int ret = real(cq);
    int saved = errno;
    if (ret && q) { /* still alive: keep counting it */
        struct vb_cq_rec *n = vb_cq_add(cq, keep.c);
        if (n && keep.ex) {
            n->wc_flags = keep.wc_flags;
            n->start_poll = keep.start_poll;
            n->next_poll = keep.next_poll;
            n->end_poll = keep.end_poll;
            n->ex = 1;
        }
    }
    if (rec) EMIT_RELEASE(IBV_DESTROY_CQ, cq, cq, t0, ret);
    errno = saved;
    return ret;
}

/* ---- QPs ---- */

void vb_qp_created(struct vb_context *ctx, struct vb_qp *qp, const struct vb_qp_init_attr *a, int ex, uint64_t t0,
                   int err)
{
    struct vb_ctx_rec *c = ctx ? vb_ctx_find(ctx) : NULL;
    if (qp && c && ex == 2) {
        struct vb_qp_rec *r = vb_qp_add(qp, c);
        if (r) vb_patch_qp_ex(r);
    }
    if (qp)
        for (int i = 0; i < 2; i++) {
            struct vb_cq_rec *q = vb_cq_find(i ? qp->recv_cq : qp->send_cq);
            if (q && q->qp_single != qp->qp_num) q->qp_single = q->qp_single ? UINT32_MAX : qp->qp_num;
        }
    if (!rec_begin()) return;
    struct rs_ev_IBV_CREATE_QP ev;
    RS_EV_INIT(&ev, IBV_CREATE_QP, t0);
    ev.h.aux = qp ? 0 : (uint32_t)err;
    ev.qp = (uint64_t)(uintptr_t)qp;
    ev.ctx = (uint64_t)(uintptr_t)ctx;
    ev.pd = (uint64_t)(uintptr_t)(qp ? qp->pd : NULL);
    ev.send_cq = (uint64_t)(uintptr_t)(qp ? qp->send_cq : a ? a->send_cq : NULL);
    ev.recv_cq = (uint64_t)(uintptr_t)(qp ? qp->recv_cq : a ? a->recv_cq : NULL);
    ev.srq = (uint64_t)(uintptr_t)(qp ? qp->srq : a ? a->srq : NULL);
    ev.qp_num = qp ? qp->qp_num : 0;
    ev.qp_type = qp ? qp->qp_type : a ? a->qp_type : 0;
    ev.max_send_wr = a ? a->cap.max_send_wr : 0;
    ev.max_recv_wr = a ? a->cap.max_recv_wr : 0;
    ev.ext = (uint32_t)ex;
    ev.pad = 0;
    rs_emit(&ev.h);
    rs_guard_exit();
}

static struct vb_qp *vbw_ibv_create_qp(struct vb_pd *pd, struct vb_qp_init_attr *attr)
{
    ibv_create_qp_fn real = get_ibv_create_qp();
    if (!real) FAIL_NOSYS(NULL);
    int g = rs_guard_enter();
    uint64_t t0 = rs_now();
    struct vb_qp *qp = real(pd, attr);
    int saved = errno;
    if (g) rs_guard_exit();
    if (qp) ctx_adopt_unguarded(qp->context, t0);
    vb_qp_created(pd ? pd->context : NULL, qp, attr, 0, t0, saved);
    errno = saved;
    return qp;
}

static int vbw_ibv_modify_qp(struct vb_qp *qp, struct vb_qp_attr *attr, int mask)
{
    ibv_modify_qp_fn real = get_ibv_modify_qp();
    if (!real) FAIL_NOSYS(EINVAL);
    int rec = rec_begin();
    uint64_t t0 = rs_now();
    int ret = real(qp, attr, mask);
    int saved = errno;
    /* Providers may swap builders on state changes (mlx5's wr_complete): re-patch, keeping the new ones. */
    struct vb_qp_rec *r = qp ? vb_qp_find(qp) : NULL;
    if (r && r->ex) vb_patch_qp_ex(r);
    if (rec) {
        unsigned m = (unsigned)mask;
        struct rs_ev_IBV_MODIFY_QP ev;
        RS_EV_INIT(&ev, IBV_MODIFY_QP, t0);
        ev.qp_num = qp ? qp->qp_num : 0;
        ev.attr_mask = m;
        ev.state = attr && (m & VB_QP_STATE) ? attr->qp_state : 0;
        ev.dest_qpn = attr && (m & VB_QP_DEST_QPN) ? attr->dest_qp_num : 0;
        ev.path_mtu = attr && (m & VB_QP_PATH_MTU) ? attr->path_mtu : 0;
        ev.gid_index = attr && (m & VB_QP_AV) ? attr->ah_attr.grh.sgid_index : 0;
        ev.timeout = attr && (m & VB_QP_TIMEOUT) ? attr->timeout : 0;
        ev.retry_cnt = attr && (m & VB_QP_RETRY_CNT) ? attr->retry_cnt : 0;
        ev.rnr_retry = attr && (m & VB_QP_RNR_RETRY) ? attr->rnr_retry : 0;
        ev.port = attr && (m & VB_QP_PORT) ? attr->port_num : 0;
        ev.ret = ret;
        ev.pad = 0;
        rs_emit(&ev.h);
        rs_guard_exit();
    }
    errno = saved;
    return ret;
}

static int vbw_ibv_destroy_qp(struct vb_qp *qp)
{
    ibv_destroy_qp_fn real = get_ibv_destroy_qp();
    if (!real) FAIL_NOSYS(EINVAL);
    int rec = rec_begin();
    uint64_t t0 = rs_now();
    uint32_t qpn = qp ? qp->qp_num : 0;
    int ret = real(qp);
    int saved = errno;
    if (!ret && qp) vb_qp_del(qp);
    if (rec) {
        struct rs_ev_IBV_DESTROY_QP ev;
        RS_EV_INIT(&ev, IBV_DESTROY_QP, t0);
        ev.qp_num = qpn;
        ev.ret = ret;
        rs_emit(&ev.h);
        rs_guard_exit();
    }
    errno = saved;
    return ret;
}

/* ---- SRQs ---- */

static struct vb_srq *vbw_ibv_create_srq(struct vb_pd *pd, struct vb_srq_init_attr *attr)
{
    ibv_create_srq_fn real = get_ibv_create_srq();
    if (!real) FAIL_NOSYS(NULL);
    int g = rs_guard_enter(); /* a provider going through create_srq_ex records once */
    uint64_t t0 = rs_now();
    struct vb_srq *srq = real(pd, attr);
    int saved = errno;
    if (g) rs_guard_exit();
    vb_srq_created(pd ? pd->context : NULL, pd, srq, attr ? attr->max_wr : 0, 0, t0, saved);
    errno = saved;
    return srq;
}

static int vbw_ibv_destroy_srq(struct vb_srq *srq)
{
    ibv_destroy_srq_fn real = get_ibv_destroy_srq();
    if (!real) FAIL_NOSYS(EINVAL);
    int rec = rec_begin();
    uint64_t t0 = rs_now();
    /* forgotten before the call (the address may be reused as soon as it is freed), back if it stays */
    uint32_t id = srq ? vb_srq_del(srq) : 0;
    int ret = real(srq);
    int saved = errno;
    if (ret && srq && id != VB_SRQ_UNKNOWN) vb_srq_add(srq, id);
    if (rec) {
        struct rs_ev_IBV_DESTROY_SRQ ev;
        RS_EV_INIT(&ev, IBV_DESTROY_SRQ, t0);
        ev.srq = (uint64_t)(uintptr_t)srq;
        ev.id = id;
        ev.ret = ret;
        rs_emit(&ev.h);
        rs_guard_exit();
    }
    errno = saved;
    return ret;
}

/* ---- mlx5 direct verbs creating QPs and CQs without the verbs_context entries ---- */

/* Recorded and patched like create_qp_ex / create_cq_ex (ext 1, or 2 with ibv_wr_* builders). */
static struct vb_qp *vbw_mlx5dv_create_qp(struct vb_context *ctx, struct vb_qp_init_attr_ex *attr, void *mlx5_attr)
{
    mlx5dv_create_qp_fn real = get_mlx5dv_create_qp();
    if (!real) FAIL_NOSYS(NULL);
    int g = rs_guard_enter();
    uint64_t t0 = rs_now();
    struct vb_qp *qp = real(ctx, attr, mlx5_attr);
    int saved = errno;
    if (g) rs_guard_exit();
    int ex = qp && attr && (attr->comp_mask & VB_QP_INIT_ATTR_SEND_OPS_FLAGS) && attr->send_ops_flags;
    vb_qp_created(ctx, qp, (const struct vb_qp_init_attr *)attr, ex ? 2 : 1, t0, qp ? 0 : saved);
    errno = saved;
    return qp;
}

static struct vb_cq_ex *vbw_mlx5dv_create_cq(struct vb_context *ctx, struct vb_cq_init_attr_ex *attr, void *mlx5_attr)
{
    mlx5dv_create_cq_fn real = get_mlx5dv_create_cq();
    if (!real) FAIL_NOSYS(NULL);
    int g = rs_guard_enter();
    uint64_t t0 = rs_now();
    struct vb_cq_ex *cq = real(ctx, attr, mlx5_attr);
    int saved = errno;
    if (g) rs_guard_exit();
    vb_cq_created(ctx, cq ? &cq->cq_base : NULL, attr ? (int)attr->cqe : 0, 1, attr ? attr->wc_flags : 0, t0,
                  cq ? 0 : saved);
    errno = saved;
    return cq;
}

/* ---- registration ---- */

static void vb_tick(void) { vb_flush_empty_all(); }

__attribute__((constructor)) static void verbs_init(void)
{
    static const struct rs_dl_redirect tab[] = {
#define VB_REDIRECT(name, ver, ret, params, args) {#name, ver, (void *)vbw_##name, &real_##name},
        VB_ENTRIES(VB_REDIRECT)
#undef VB_REDIRECT
    };
    rs_dl_register(tab, (int)(sizeof tab / sizeof tab[0]));
    rs_at_tick(vb_tick);
    rs_at_shutdown(vb_tick);
    rs_at_fork_child(vb_empty_fork_child);
}
