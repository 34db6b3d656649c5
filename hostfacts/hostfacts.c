/* Host-facts collector: entry points and the small bounded-I/O helpers every part uses. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hostfacts_int.h"

static int vpath(const struct hf_ctx *c, char *buf, size_t n, const char *fmt, va_list ap)
{
    size_t rl = strlen(c->root);
    if (rl + 2 > n) return 0;
    memcpy(buf, c->root, rl);
    buf[rl] = '/';
    int k = vsnprintf(buf + rl + 1, n - rl - 1, fmt, ap);
    return k >= 0 && (size_t)k < n - rl - 1;
}

int hf_path(const struct hf_ctx *c, char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int ok = vpath(c, buf, n, fmt, ap);
    va_end(ap);
    return ok;
}

__attribute__((noinline)) int hf_fd_open(const char *path, int flags) { return open(path, flags); }
__attribute__((noinline)) ssize_t hf_fd_read(int fd, void *buf, size_t n) { return read(fd, buf, n); }
__attribute__((noinline)) ssize_t hf_fd_pread(int fd, void *buf, size_t n, off_t off) { return pread(fd, buf, n, off); }
__attribute__((noinline)) int hf_fd_fstat(int fd, struct stat *st) { return fstat(fd, st); }
__attribute__((noinline)) int hf_fd_close(int fd) { return close(fd); }

static int read_at(const char *path, char *buf, size_t n)
{
    int fd = hf_fd_open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return -1;
    ssize_t r;
    do r = hf_fd_read(fd, buf, n - 1);
    while (r < 0 && errno == EINTR);
    hf_fd_close(fd);
    if (r < 0) return -1; /* e.g. EINVAL reading an unused GID slot's type */
    while (r > 0 && (buf[r - 1] == '\n' || buf[r - 1] == ' ' || buf[r - 1] == '\t' || buf[r - 1] == '\0')) r--;
    buf[r] = '\0';
    for (ssize_t i = 0; i < r; i++) /* keep values one line */
        if (buf[i] == '\n' || buf[i] == '\t' || buf[i] == '\0') buf[i] = ' ';
    return (int)r;
}

int hf_read(const struct hf_ctx *c, char *buf, size_t n, const char *fmt, ...)
{
    char p[PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    int ok = vpath(c, p, sizeof p, fmt, ap);
    va_end(ap);
    if (!ok || n < 2) return -1;
    return read_at(p, buf, n);
}

int hf_exists(const struct hf_ctx *c, const char *fmt, ...)
{
    char p[PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    int ok = vpath(c, p, sizeof p, fmt, ap);
    va_end(ap);
    struct stat st;
    return ok && stat(p, &st) == 0;
}

void hf_emit(const struct hf_ctx *c, const char *value, const char *keyfmt, ...)
{
    char key[256];
    va_list ap;
    va_start(ap, keyfmt);
    int k = vsnprintf(key, sizeof key, keyfmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= sizeof key) return;
    c->cb(c->arg, key, value);
}

int hf_copy(const struct hf_ctx *c, const char *key, const char *relfmt, ...)
{
    char p[PATH_MAX], v[HF_VAL];
    va_list ap;
    va_start(ap, relfmt);
    int ok = vpath(c, p, sizeof p, relfmt, ap);
    va_end(ap);
    if (!ok || read_at(p, v, sizeof v) < 0) return 0;
    c->cb(c->arg, key, v);
    return 1;
}

/* Natural order so mlx5_2 < mlx5_10 and gid 2 < 10: digit runs compare by value ("01" before "1", so the
 * order stays total). Shared with doctor's fact table, which must list devices the same way. */
int rs_natcmp(const char *x, const char *y)
{
    while (*x && *y) {
        if (*x >= '0' && *x <= '9' && *y >= '0' && *y <= '9') {
            char *ex, *ey;
            unsigned long long vx = strtoull(x, &ex, 10), vy = strtoull(y, &ey, 10);
            if (vx != vy) return vx < vy ? -1 : 1;
            if ((ex - x) != (ey - y)) /* "01" vs "1": keep a total order */
                return (ex - x) < (ey - y) ? -1 : 1;
            x = ex;
            y = ey;
            continue;
        }
        if (*x != *y) return (unsigned char)*x - (unsigned char)*y;
        x++;
        y++;
    }
    return (unsigned char)*x - (unsigned char)*y;
}

static int cmp_name(const void *a, const void *b) { return rs_natcmp(a, b); }

int hf_list(const struct hf_ctx *c, char (*names)[HF_NAME], int max, const char *fmt, ...)
{
    char p[PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    int ok = vpath(c, p, sizeof p, fmt, ap);
    va_end(ap);
    if (!ok) return -1;
    struct hf_dir d;
    if (hf_dir_open(&d, p) != 0) return -1;
    int n = 0;
    const char *e;
    while (n < max && (e = hf_dir_next(&d)) != NULL) {
        if (e[0] == '.' || strlen(e) >= HF_NAME) continue;
        strcpy(names[n++], e);
    }
    hf_dir_close(&d);
    hf_sort(names, (size_t)n, HF_NAME, cmp_name);
    return n;
}

int hf_dir_open(struct hf_dir *d, const char *path)
{
    d->n = d->off = 0;
    d->fd = hf_fd_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return d->fd < 0 ? -1 : 0;
}

const char *hf_dir_next(struct hf_dir *d)
{
    if (d->off >= d->n) {
        d->n = syscall(SYS_getdents64, d->fd, d->buf, sizeof d->buf);
        d->off = 0;
        if (d->n <= 0) return NULL;
    }
    /* a linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name */
    unsigned short reclen;
    memcpy(&reclen, d->buf + d->off + 16, sizeof reclen);
    const char *name = d->buf + d->off + 19;
    d->off += reclen ? reclen : d->n; /* a zero length would loop: end this buffer */
    return name;
}

void hf_dir_close(struct hf_dir *d)
{
    if (d->fd >= 0) hf_fd_close(d->fd);
    d->fd = -1;
}

void hf_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    _Alignas(max_align_t) unsigned char tmp[256]; /* handed to cmp as an element */
    unsigned char *b = base;
    if (size > sizeof tmp) return;
    for (size_t i = 1; i < n; i++) {
        size_t j = i;
        memcpy(tmp, b + i * size, size);
        while (j > 0 && cmp(b + (j - 1) * size, tmp) > 0) {
            memcpy(b + j * size, b + (j - 1) * size, size);
            j--;
        }
        memcpy(b + j * size, tmp, size);
    }
}

int hf_devpath(const struct hf_ctx *c, char *buf, size_t n, const char *fmt, ...)
{
    char p[PATH_MAX], r[PATH_MAX];
    va_list ap;
    va_start(ap, fmt);
    int ok = vpath(c, p, sizeof p, fmt, ap);
    va_end(ap);
    if (!ok || !c->sysdev_len || !realpath(p, r)) return -1;
    if (strncmp(r, c->sysdev, c->sysdev_len) != 0 || r[c->sysdev_len] != '/') return -1;
    const char *rel = r + c->sysdev_len + 1;
    if (strlen(rel) >= n) return -1;
    strcpy(buf, rel);
    return 0;
}

int hf_fmt(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return k >= 0 && (size_t)k < n;
}

int hf_is_bdf(const char *s)
{
    /* dddd:bb:dd.f (domain may be longer on some hosts: accept 4+ hex digits) */
    size_t i = 0;
    while (s[i] && s[i] != ':') i++;
    if (i < 4 || s[i] != ':') return 0;
    const char *t = s + i;
    return strlen(t) == 8 && t[3] == ':' && t[6] == '.' && t[7] >= '0' && t[7] <= '7';
}

int hf_last_bdf(const char *devpath, char *bdf, size_t n)
{
    const char *best = NULL;
    size_t bl = 0;
    const char *s = devpath;
    while (*s) {
        const char *e = strchr(s, '/');
        size_t l = e ? (size_t)(e - s) : strlen(s);
        char comp[HF_NAME];
        if (l < sizeof comp) {
            memcpy(comp, s, l);
            comp[l] = '\0';
            if (hf_is_bdf(comp)) {
                best = s;
                bl = l;
            }
        }
        if (!e) break;
        s = e + 1;
    }
    if (!best || bl >= n) return -1;
    memcpy(bdf, best, bl);
    bdf[bl] = '\0';
    return 0;
}

static int init_ctx(struct hf_ctx *c, const char *root, rs_hostfacts_cb cb, void *arg)
{
    memset(c, 0, sizeof *c);
    c->cb = cb;
    c->arg = arg;
    if (!cb) return -1;
    if (root && *root) {
        size_t l = strlen(root);
        while (l > 1 && root[l - 1] == '/') l--;
        if (l >= sizeof c->root - 64) return -1;
        if (!(l == 1 && root[0] == '/')) {
            memcpy(c->root, root, l);
            c->root[l] = '\0';
        }
    }
    char p[PATH_MAX];
    if (hf_path(c, p, sizeof p, "sys/devices") && realpath(p, c->sysdev)) c->sysdev_len = strlen(c->sysdev);
    return 0;
}

void rs_hostfacts_collect_sys(const char *sysfs_root, rs_hostfacts_cb cb, void *arg)
{
    struct hf_ctx c;
    if (init_ctx(&c, sysfs_root, cb, arg) != 0) return;
    cb(arg, "hostfacts/version", "1");
    hf_collect_misc(&c);
    hf_collect_ib(&c);
    hf_collect_net(&c);
    hf_collect_pci(&c);
}

void rs_hostfacts_collect(const char *sysfs_root, void (*cb)(void *arg, const char *key, const char *value), void *arg)
{
    rs_hostfacts_collect_sys(sysfs_root, cb, arg);
    hf_collect_env_proc(cb, arg);
}
