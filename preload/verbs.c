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
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "preload/dl.h"
#include "preload/verbs_int.h"

#if !defined(SYS_fcntl) && defined(SYS_fcntl64)
#define SYS_fcntl SYS_fcntl64
#endif

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
    X(ibv_get_cq_event, "IBVERBS_1.1", int, (struct vb_comp_channel * ch, struct vb_cq * *cq, void **cq_ctx),          \
      (ch, cq, cq_ctx))                                                                                                \
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

/* Real-function slots, typed, resolved lazily (the skeleton's RS_REAL, preload/dl.h). */
#define VB_REAL(name, ver, ret, params, args) RS_REAL(name, ret, params, rs_dl_real_v(VB_LIB_OF(#name), #name, ver))
VB_ENTRIES(VB_REAL)
#undef VB_REAL

/* The wrapper for NAME is vbw_NAME (hidden); NAME itself is an exported alias. */
#define VB_DECL_WRAP(name, ver, ret, params, args) static ret vbw_##name params;
VB_ENTRIES(VB_DECL_WRAP)
#undef VB_DECL_WRAP
#define VB_ALIAS(name, ver, ret, params, args) RS_EXPORT ret name params __attribute__((alias("vbw_" #name)));
VB_ENTRIES(VB_ALIAS)
#undef VB_ALIAS

/* Every wrapper is the skeleton of preload/dl.h: RS_WRAP_REAL (a missing real function fails the call with
 * ENOSYS), RS_WRAP_ENTER (rs_rec: the verbs family is on and this thread took the tracer's guard),
 * RS_WRAP_CALL, the tables (always), the event (if rs_rec), RS_WRAP_LEAVE. The helpers below never take or
 * release the guard: the wrapper owns it. */
#define VB_NOSYS(val)   \
    do {                \
        errno = ENOSYS; \
        return val;     \
    } while (0)
#define VB_ENTER(name, fail)            \
    RS_WRAP_REAL(name, VB_NOSYS(fail)); \
    RS_WRAP_ENTER(RS_FAM_verbs, rs_guard)

/* Teardown calls record {handle, ret}: close_device, dereg_mr and destroy_cq share that layout. */
#define EMIT_RELEASE(KIND, FIELD, obj, t0, rv)  \
    do {                                        \
        struct rs_ev_##KIND ev_;                \
        RS_EV_INIT(&ev_, KIND, t0);             \
        ev_.FIELD = (uint64_t)(uintptr_t)(obj); \
        ev_.ret = (rv);                         \
        ev_.pad = 0;                            \
        rs_emit(&ev_.h);                        \
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
}

/* A context opened out of our sight (libibverbs' private verbs_open_device called directly by a provider
 * library, or any other path that skips the exported opens): patched when the application first uses it
 * through an exported entry point that only succeeds on a live context (ibv_alloc_pd, ibv_create_cq,
 * ibv_create_qp), and recorded then as IBV_OPEN_DEVICE with aux = 4 (if rec: the wrapper holds the guard). */
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

static struct vb_context *vbw_ibv_open_device(struct vb_device *dev)
{
    VB_ENTER(ibv_open_device, NULL);
    RS_WRAP_CALL((dev));
    ctx_opened(rs_rec, rs_ret, dev, rs_t0, rs_errno, 0);
    RS_WRAP_LEAVE(rs_guard);
}

/* A context shared from another process through its command fd (aux = 2 on success). */
static struct vb_context *vbw_ibv_import_device(int cmd_fd)
{
    VB_ENTER(ibv_import_device, NULL);
    RS_WRAP_CALL((cmd_fd));
    ctx_opened(rs_rec, rs_ret, rs_ret ? rs_ret->device : NULL, rs_t0, rs_errno, 2);
    RS_WRAP_LEAVE(rs_guard);
}

/* mlx5's own open (DEVX, AES-XTS users; libmlx5 reaches the private verbs_open_device, not
 * ibv_open_device): aux = 3. */
static struct vb_context *vbw_mlx5dv_open_device(struct vb_device *dev, void *attr)
{
    VB_ENTER(mlx5dv_open_device, NULL);
    RS_WRAP_CALL((dev, attr));
    ctx_opened(rs_rec, rs_ret, dev, rs_t0, rs_errno, 3);
    RS_WRAP_LEAVE(rs_guard);
}

static int vbw_ibv_close_device(struct vb_context *ctx)
{
    VB_ENTER(ibv_close_device, -1);
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
    RS_WRAP_CALL((ctx));
    if (rs_ret && c && (c = vb_ctx_add(ctx))) { /* still open: keep tracing it */
        vb_patch_ops(c);
        vb_patch_vctx(c);
    }
    if (rs_rec) EMIT_RELEASE(IBV_CLOSE_DEVICE, ctx, ctx, rs_t0, rs_ret);
    RS_WRAP_LEAVE(rs_guard);
}

static struct vb_pd *vbw_ibv_alloc_pd(struct vb_context *ctx)
{
    VB_ENTER(ibv_alloc_pd, NULL);
    RS_WRAP_CALL((ctx));
    if (rs_ret) ctx_adopt(ctx, rs_t0, rs_rec);
    if (rs_rec) {
        struct rs_ev_IBV_ALLOC_PD ev;
        RS_EV_INIT(&ev, IBV_ALLOC_PD, rs_t0);
        ev.h.aux = rs_ret ? 0 : (uint32_t)rs_errno;
        ev.pd = (uint64_t)(uintptr_t)rs_ret;
        ev.ctx = (uint64_t)(uintptr_t)ctx;
        rs_emit(&ev.h);
    }
    RS_WRAP_LEAVE(rs_guard);
}

/* ---- memory registration ---- */

/* Table and event for any registration; dmabuf MRs are of kind dmabuf, their CUDA device found from iova. */
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
}

static struct vb_mr *vbw_ibv_reg_mr(struct vb_pd *pd, void *addr, size_t len, int access)
{
    VB_ENTER(ibv_reg_mr, NULL);
    RS_WRAP_CALL((pd, addr, len, access));
    mr_done(rs_rec, pd, rs_ret, (uintptr_t)addr, len, (uintptr_t)addr, (unsigned)access, 0, -1, rs_t0, rs_errno);
    RS_WRAP_LEAVE(rs_guard);
}

static struct vb_mr *vbw_ibv_reg_mr_iova(struct vb_pd *pd, void *addr, size_t len, uint64_t iova, int access)
{
    VB_ENTER(ibv_reg_mr_iova, NULL);
    RS_WRAP_CALL((pd, addr, len, iova, access));
    mr_done(rs_rec, pd, rs_ret, (uintptr_t)addr, len, iova, (unsigned)access, 0, -1, rs_t0, rs_errno);
    RS_WRAP_LEAVE(rs_guard);
}

static struct vb_mr *vbw_ibv_reg_mr_iova2(struct vb_pd *pd, void *addr, size_t len, uint64_t iova, unsigned access)
{
    VB_ENTER(ibv_reg_mr_iova2, NULL);
    RS_WRAP_CALL((pd, addr, len, iova, access));
    mr_done(rs_rec, pd, rs_ret, (uintptr_t)addr, len, iova, access, 0, -1, rs_t0, rs_errno);
    RS_WRAP_LEAVE(rs_guard);
}

static struct vb_mr *vbw_ibv_reg_dmabuf_mr(struct vb_pd *pd, uint64_t off, size_t len, uint64_t iova, int fd,
                                           int access)
{
    VB_ENTER(ibv_reg_dmabuf_mr, NULL);
    RS_WRAP_CALL((pd, off, len, iova, fd, access));
    /* mr->addr holds the offset for dmabuf MRs: the iova argument is the address the WRs use */
    mr_done(rs_rec, pd, rs_ret, off, len, iova, (unsigned)access, 1, fd, rs_t0, rs_errno);
    RS_WRAP_LEAVE(rs_guard);
}

/* Re-registration may move the MR (new address, PD, keys): the old lkey leaves the table, the new one
 * enters with a fresh classification; recorded as an IBV_REG_MR with hdr.aux = 1 (err = the return value). */
static int vbw_ibv_rereg_mr(struct vb_mr *mr, int flags, struct vb_pd *pd, void *addr, size_t len, int access)
{
    VB_ENTER(ibv_rereg_mr, -1);
    struct vb_ctx_rec *c = mr ? vb_ctx_find(mr->context) : NULL;
    uint32_t old_lkey = mr ? mr->lkey : 0;
    RS_WRAP_CALL((mr, flags, pd, addr, len, access));
    if (!rs_ret && mr) {
        if (c) vb_mr_del(c, old_lkey);
        mr_done(0, mr->pd, mr, (uintptr_t)mr->addr, mr->length, (uintptr_t)mr->addr, (unsigned)access, 0, -1, rs_t0, 0);
    }
    if (rs_rec) {
        struct rs_ev_IBV_REG_MR ev;
        memset(&ev, 0, sizeof ev);
        RS_EV_INIT(&ev, IBV_REG_MR, rs_t0);
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
        ev.dur = rs_now() - rs_t0;
        ev.dmabuf_fd = -1;
        ev.cuda_device = -1;
        ev.err = rs_ret;
        rs_emit(&ev.h);
    }
    RS_WRAP_LEAVE(rs_guard);
}

/* NCCL's Data Direct registration (ConnectX-8): a dmabuf MR through libmlx5. Recorded as any dmabuf MR;
 * the mlx5 access flags are not kept. */
static struct vb_mr *vbw_mlx5dv_reg_dmabuf_mr(struct vb_pd *pd, uint64_t off, size_t len, uint64_t iova, int fd,
                                              int access, int mlx5_access)
{
    VB_ENTER(mlx5dv_reg_dmabuf_mr, NULL);
    RS_WRAP_CALL((pd, off, len, iova, fd, access, mlx5_access));
    mr_done(rs_rec, pd, rs_ret, off, len, iova, (unsigned)access, 1, fd, rs_t0, rs_errno);
    RS_WRAP_LEAVE(rs_guard);
}

static int vbw_ibv_dereg_mr(struct vb_mr *mr)
{
    VB_ENTER(ibv_dereg_mr, EINVAL);
    struct vb_ctx_rec *c = mr ? vb_ctx_find(mr->context) : NULL;
    uint32_t lkey = mr ? mr->lkey : 0;
    RS_WRAP_CALL((mr));
    if (!rs_ret && c) vb_mr_del(c, lkey);
    if (rs_rec) EMIT_RELEASE(IBV_DEREG_MR, mr, mr, rs_t0, rs_ret);
    RS_WRAP_LEAVE(rs_guard);
}

/* ---- CQs ---- */

void vb_cq_created(int rec, struct vb_context *ctx, struct vb_cq *cq, int cqe, int ex, uint64_t wc_flags, uint64_t t0,
                   int err)
{
    struct vb_ctx_rec *c = ctx ? vb_ctx_find(ctx) : NULL;
    if (cq && c) {
        struct vb_cq_rec *q = vb_cq_add(cq, c);
        if (q && ex) {
            q->wc_flags = wc_flags;
            vb_patch_cq_ex(q);
        }
    }
    if (!rec) return;
    struct rs_ev_IBV_CREATE_CQ ev;
    RS_EV_INIT(&ev, IBV_CREATE_CQ, t0);
    ev.h.aux = cq ? 0 : (uint32_t)err;
    ev.cq = (uint64_t)(uintptr_t)cq;
    ev.ctx = (uint64_t)(uintptr_t)ctx;
    ev.cqe = (uint32_t)(cq ? cq->cqe : cqe);
    ev.ext = (uint32_t)ex;
    rs_emit(&ev.h);
}

/* The guard is held across the real call, so that a provider creating the CQ through create_cq_ex (our
 * w_create_cq_ex) keeps its tables there but records nothing: the CQ is recorded once, here. */
static struct vb_cq *vbw_ibv_create_cq(struct vb_context *ctx, int cqe, void *cq_ctx, void *channel, int vec)
{
    VB_ENTER(ibv_create_cq, NULL);
    RS_WRAP_CALL((ctx, cqe, cq_ctx, channel, vec));
    if (rs_ret) ctx_adopt(ctx, rs_t0, rs_rec);
    vb_cq_created(rs_rec, ctx, rs_ret, cqe, 0, 0, rs_t0, rs_errno);
    RS_WRAP_LEAVE(rs_guard);
}

static int vbw_ibv_destroy_cq(struct vb_cq *cq)
{
    VB_ENTER(ibv_destroy_cq, EINVAL);
    struct vb_cq_rec *q = cq ? vb_cq_find(cq) : NULL;
    struct vb_cq_rec keep;
    if (q) {
        if (rs_rec) vb_flush_empty(q, rs_t0); /* the last interval of this CQ */
        keep = *q;
        vb_cq_del(cq);
    }
    RS_WRAP_CALL((cq));
    if (rs_ret && q) { /* still alive: keep counting it */
        struct vb_cq_rec *n = vb_cq_add(cq, keep.c);
        if (n && keep.ex) {
            n->wc_flags = keep.wc_flags;
            n->start_poll = keep.start_poll;
            n->next_poll = keep.next_poll;
            n->end_poll = keep.end_poll;
            n->ex = 1;
        }
    }
    if (rs_rec) EMIT_RELEASE(IBV_DESTROY_CQ, cq, cq, rs_t0, rs_ret);
    RS_WRAP_LEAVE(rs_guard);
}

/* A thread waiting for a CQ's completion event: the wait a program that does not poll makes for its completions
 * (ibv_rc_pingpong -e, perftest --use_event), recorded with how long the call took, the CQ it returned and whether
 * it could have blocked (RS_CQEV_*: the answer rule, analyze_net.c, tells a rank blocked until the message came
 * from one that found it there already). The looks are made before the call, so that they add nothing to the
 * wake-up of a blocked one, and the second only when an event is there (a blocking descriptor then returns at once
 * as a non-blocking one does: which one it is says whether the program waited elsewhere); with none there, the
 * call's own result says it (it blocked, or failed with EAGAIN). They are raw system calls (ppoll, fcntl), which no
 * interposer between us and the kernel sees, and come before the timestamp: ts and dur are the call's alone. With
 * several threads on one channel an event seen there can be taken by another thread first, and the call then
 * blocks although flagged PENDING: the analyzer takes a long one as blocked (docs/verbs.md). The program's
 * arguments go to the call as they are and its results are not touched. */
static int vbw_ibv_get_cq_event(struct vb_comp_channel *ch, struct vb_cq **cq, void **cq_ctx)
{
    RS_WRAP_REAL(ibv_get_cq_event, VB_NOSYS(-1));
    /* RS_WRAP_FORWARD, with the looks between the guard and the timestamp */
    if (!rs_on(RS_FAM_verbs) || !rs_guard_enter()) return rs_fn(ch, cq, cq_ctx);
    const int rs_rec = 1;
    uint32_t flags = RS_CQEV_UNKNOWN;
    if (ch) {
        int saved = errno; /* a failed look must not leave its errno to a call that succeeds without setting one */
        struct pollfd p = {.fd = ch->fd, .events = POLLIN};
        struct timespec now = {0, 0};
        long ready = syscall(SYS_ppoll, &p, 1L, &now, NULL, 0L), fl = 0;
        if (ready > 0 && (p.revents & POLLIN)) fl = syscall(SYS_fcntl, (long)ch->fd, (long)F_GETFL);
        if (ready == 0) flags = 0;
        else if (ready > 0 && (p.revents & POLLIN) && fl >= 0)
            flags = RS_CQEV_PENDING | (fl & O_NONBLOCK ? RS_CQEV_NONBLOCK : 0);
        errno = saved;
    }
    const uint64_t rs_t0 = rs_now();
    RS_WRAP_CALL((ch, cq, cq_ctx));
    struct rs_ev_IBV_GET_CQ_EVENT ev;
    RS_EV_INIT(&ev, IBV_GET_CQ_EVENT, rs_t0);
    ev.dur = rs_now() - rs_t0;
    ev.h.aux = rs_ret ? (uint32_t)rs_errno : 0;
    ev.cq = !rs_ret && cq ? (uint64_t)(uintptr_t)*cq : 0;
    ev.channel = (uint64_t)(uintptr_t)ch;
    ev.ret = rs_ret;
    ev.flags = flags;
    rs_emit(&ev.h);
    RS_WRAP_LEAVE(rs_guard);
}

/* ---- QPs ---- */

void vb_qp_created(int rec, struct vb_context *ctx, struct vb_qp *qp, const struct vb_qp_init_attr *a, int ex,
                   uint64_t t0, int err)
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
    if (!rec) return;
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
}

static struct vb_qp *vbw_ibv_create_qp(struct vb_pd *pd, struct vb_qp_init_attr *attr)
{
    VB_ENTER(ibv_create_qp, NULL); /* held across the call: a provider going through create_qp_ex records once */
    RS_WRAP_CALL((pd, attr));
    if (rs_ret) ctx_adopt(rs_ret->context, rs_t0, rs_rec);
    vb_qp_created(rs_rec, pd ? pd->context : NULL, rs_ret, attr, 0, rs_t0, rs_errno);
    RS_WRAP_LEAVE(rs_guard);
}

static int vbw_ibv_modify_qp(struct vb_qp *qp, struct vb_qp_attr *attr, int mask)
{
    VB_ENTER(ibv_modify_qp, EINVAL);
    RS_WRAP_CALL((qp, attr, mask));
    /* Providers may swap builders on state changes (mlx5's wr_complete): re-patch, keeping the new ones. */
    struct vb_qp_rec *r = qp ? vb_qp_find(qp) : NULL;
    if (r && r->ex) vb_patch_qp_ex(r);
    if (rs_rec) {
        unsigned m = (unsigned)mask;
        struct rs_ev_IBV_MODIFY_QP ev;
        RS_EV_INIT(&ev, IBV_MODIFY_QP, rs_t0);
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
        ev.ret = rs_ret;
        ev.pad = 0;
        rs_emit(&ev.h);
    }
    RS_WRAP_LEAVE(rs_guard);
}

static int vbw_ibv_destroy_qp(struct vb_qp *qp)
{
    VB_ENTER(ibv_destroy_qp, EINVAL);
    uint32_t qpn = qp ? qp->qp_num : 0;
    RS_WRAP_CALL((qp));
    if (!rs_ret && qp) vb_qp_del(qp);
    if (rs_rec) {
        struct rs_ev_IBV_DESTROY_QP ev;
        RS_EV_INIT(&ev, IBV_DESTROY_QP, rs_t0);
        ev.qp_num = qpn;
        ev.ret = rs_ret;
        rs_emit(&ev.h);
    }
    RS_WRAP_LEAVE(rs_guard);
}

/* ---- SRQs ---- */

static struct vb_srq *vbw_ibv_create_srq(struct vb_pd *pd, struct vb_srq_init_attr *attr)
{
    VB_ENTER(ibv_create_srq, NULL); /* held across the call: a provider going through create_srq_ex records once */
    RS_WRAP_CALL((pd, attr));
    vb_srq_created(rs_rec, pd ? pd->context : NULL, pd, rs_ret, attr ? attr->max_wr : 0, 0, rs_t0, rs_errno);
    RS_WRAP_LEAVE(rs_guard);
}

static int vbw_ibv_destroy_srq(struct vb_srq *srq)
{
    VB_ENTER(ibv_destroy_srq, EINVAL);
    /* forgotten before the call (the address may be reused as soon as it is freed), back if it stays */
    uint32_t id = srq ? vb_srq_del(srq) : 0;
    RS_WRAP_CALL((srq));
    if (rs_ret && srq && id != VB_SRQ_UNKNOWN) vb_srq_add(srq, id);
    if (rs_rec) {
        struct rs_ev_IBV_DESTROY_SRQ ev;
        RS_EV_INIT(&ev, IBV_DESTROY_SRQ, rs_t0);
        ev.srq = (uint64_t)(uintptr_t)srq;
        ev.id = id;
        ev.ret = rs_ret;
        rs_emit(&ev.h);
    }
    RS_WRAP_LEAVE(rs_guard);
}

/* ---- mlx5 direct verbs creating QPs and CQs without the verbs_context entries ---- */

/* Recorded and patched like create_qp_ex / create_cq_ex (ext 1, or 2 with ibv_wr_* builders). */
static struct vb_qp *vbw_mlx5dv_create_qp(struct vb_context *ctx, struct vb_qp_init_attr_ex *attr, void *mlx5_attr)
{
    VB_ENTER(mlx5dv_create_qp, NULL);
    RS_WRAP_CALL((ctx, attr, mlx5_attr));
    int ex = rs_ret && attr && (attr->comp_mask & VB_QP_INIT_ATTR_SEND_OPS_FLAGS) && attr->send_ops_flags;
    vb_qp_created(rs_rec, ctx, rs_ret, (const struct vb_qp_init_attr *)attr, ex ? 2 : 1, rs_t0, rs_ret ? 0 : rs_errno);
    RS_WRAP_LEAVE(rs_guard);
}

static struct vb_cq_ex *vbw_mlx5dv_create_cq(struct vb_context *ctx, struct vb_cq_init_attr_ex *attr, void *mlx5_attr)
{
    VB_ENTER(mlx5dv_create_cq, NULL);
    RS_WRAP_CALL((ctx, attr, mlx5_attr));
    vb_cq_created(rs_rec, ctx, rs_ret ? &rs_ret->cq_base : NULL, attr ? (int)attr->cqe : 0, 1,
                  attr ? attr->wc_flags : 0, rs_t0, rs_ret ? 0 : rs_errno);
    RS_WRAP_LEAVE(rs_guard);
}

/* ---- registration ---- */

static void vb_tick(void) { vb_flush_empty_all(); }

__attribute__((constructor)) static void verbs_init(void)
{
    static const struct rs_dl_redirect tab[] = {
#define VB_REDIRECT(name, ver, ret, params, args) RS_DL_REDIRECT(name, ver, vbw_##name),
        VB_ENTRIES(VB_REDIRECT)
#undef VB_REDIRECT
    };
    rs_dl_register(tab, (int)(sizeof tab / sizeof tab[0]));
    rs_at_tick(vb_tick);
    rs_at_shutdown(vb_tick);
    rs_at_fork_child(vb_empty_fork_child);
}
