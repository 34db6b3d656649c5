/* A stand-in libmlx5.so.1 for the null provider (tests only): mlx5dv_open_device opens a null context the
 * way libmlx5 does, without going through ibv_open_device, mlx5dv_reg_dmabuf_mr registers an MR without
 * the exported libibverbs functions, and mlx5dv_create_qp / mlx5dv_create_cq create extended QPs and CQs
 * without the verbs_context entries (the mlx5-specific attributes are ignored). Symbol versions as
 * rdma-core's (MLX5_1.1, 1.3, 1.7, 1.25). */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#define EXPORT       __attribute__((visibility("default")))
#define V(name, ver) __asm__(".symver " #name "_impl, " #name "@@" ver)

struct ibv_device;
struct ibv_pd;

EXPORT void *mlx5dv_open_device_impl(struct ibv_device *dev, void *attr)
{
    (void)attr;
    void *(*open)(struct ibv_device *) = (void *(*)(struct ibv_device *))dlsym(RTLD_DEFAULT, "nullprov_open_untraced");
    if (!open) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    return open(dev);
}
V(mlx5dv_open_device, "MLX5_1.7");

EXPORT void *mlx5dv_reg_dmabuf_mr_impl(struct ibv_pd *pd, uint64_t offset, size_t len, uint64_t iova, int fd,
                                       int access, int mlx5_access)
{
    (void)iova, (void)access, (void)mlx5_access;
    void *(*mr_new)(struct ibv_pd *, void *, size_t) =
        (void *(*)(struct ibv_pd *, void *, size_t))dlsym(RTLD_DEFAULT, "nullprov_mr_new");
    if (fd < 0 || !mr_new) {
        errno = EBADF;
        return NULL;
    }
    return mr_new(pd, (void *)(uintptr_t)offset, len);
}
V(mlx5dv_reg_dmabuf_mr, "MLX5_1.25");

EXPORT void *mlx5dv_create_qp_impl(void *ctx, void *attr, void *mlx5_attr)
{
    (void)mlx5_attr;
    void *(*create)(void *, void *) = (void *(*)(void *, void *))dlsym(RTLD_DEFAULT, "nullprov_create_qp_ex_raw");
    if (!create) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    return create(ctx, attr);
}
V(mlx5dv_create_qp, "MLX5_1.3");

EXPORT void *mlx5dv_create_cq_impl(void *ctx, void *attr, void *mlx5_attr)
{
    (void)mlx5_attr;
    void *(*create)(void *, void *) = (void *(*)(void *, void *))dlsym(RTLD_DEFAULT, "nullprov_create_cq_ex_raw");
    if (!create) {
        errno = EOPNOTSUPP;
        return NULL;
    }
    return create(ctx, attr);
}
V(mlx5dv_create_cq, "MLX5_1.1");
