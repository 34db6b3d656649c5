/* A stand-in libmlx5.so.1 for the null provider (tests only): mlx5dv_open_device opens a null context the
 * way libmlx5 does, without going through ibv_open_device, and mlx5dv_reg_dmabuf_mr registers an MR
 * without the exported libibverbs functions. Symbol versions as rdma-core's (MLX5_1.7, MLX5_1.25). */
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#define EXPORT __attribute__((visibility("default")))
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
