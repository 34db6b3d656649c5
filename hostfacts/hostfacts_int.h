/* Internals of the host-facts collector: path building and bounded reads relative to a root, sorted
 * directory listings in fixed buffers. Shared by hostfacts*.c only. */
#ifndef RAILSCOPE_HOSTFACTS_INT_H
#define RAILSCOPE_HOSTFACTS_INT_H

#include <limits.h>
#include <stddef.h>

#include "hostfacts.h"

/* Bounds: the collector's cost is at most these many small reads (the tracer calls it at start). */
#define HF_MAX_IBDEV  64   /* RDMA devices */
#define HF_MAX_PORTS  8    /* ports per RDMA device */
#define HF_MAX_GIDS   256  /* GID table entries read per port (mlx5 RoCE tables have 255) */
#define HF_MAX_NETDEV 128  /* netdevs listed */
#define HF_MAX_PCI    1024 /* PCI functions scanned for vendor/class */
#define HF_MAX_GPU    64   /* GPUs / NICs described */
#define HF_MAX_DEPTH  12   /* bridges above a device */
#define HF_NAME       64   /* longest directory entry name we keep */
#define HF_VAL        512  /* longest value we keep */

struct hf_ctx {
    char root[PATH_MAX];   /* "" for the real root, else the directory without a trailing slash */
    char sysdev[PATH_MAX]; /* realpath of <root>/sys/devices, to turn device links into paths */
    size_t sysdev_len;
    rs_hostfacts_cb cb;
    void *arg;
};

/* <root>/<rel> into buf (rel starts without '/'); false if it did not fit. */
int hf_path(const struct hf_ctx *c, char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Reads a small file, trailing whitespace stripped. Returns the length, or -1 if absent/unreadable. */
int hf_read(const struct hf_ctx *c, char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int hf_exists(const struct hf_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Emit value under a formatted key. */
void hf_emit(const struct hf_ctx *c, const char *value, const char *keyfmt, ...) __attribute__((format(printf, 3, 4)));
/* Read file <rel> and emit it as <key> when present. Returns 1 if emitted. */
int hf_copy(const struct hf_ctx *c, const char *key, const char *relfmt, ...) __attribute__((format(printf, 3, 4)));
/* No allocation anywhere in the collector: the tracer runs it on a short-lived thread (tracer/private_fds.c), where
 * a first malloc would create a malloc arena, 64 MiB of address space kept for good (a program under ulimit -v
 * then failed its own malloc: tests/core/rlimit_as.t). So no opendir (its buffer is malloc'ed), no qsort (it
 * mallocs past 1 KiB). A directory's entries: */
struct hf_dir {
    int fd;
    long n, off;
    char buf[4096]; /* getdents64 records */
};
int hf_dir_open(struct hf_dir *d, const char *path); /* 0, or -1 (errno) */
const char *hf_dir_next(struct hf_dir *d);           /* the next name, "." and ".." too; NULL at the end */
void hf_dir_close(struct hf_dir *d);
/* Insertion sort of n elements of size <= 256 (a few hundred at most here). */
void hf_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
/* Sorted listing (no dot entries, names longer than HF_NAME-1 skipped); returns the count (<= max), -1 if
 * the directory is missing. */
int hf_list(const struct hf_ctx *c, char (*names)[HF_NAME], int max, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The /sys/devices-relative path of a device link (e.g. "pci0000:15/0000:15:01.0/0000:17:00.0/infiniband/
 * mlx5_0"); -1 if it does not resolve under <root>/sys/devices. */
int hf_devpath(const struct hf_ctx *c, char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* snprintf that reports truncation (returns 0) instead of warning about it at compile time: keys are
 * built from names already bounded to HF_NAME. */
int hf_fmt(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* True for a PCI address "dddd:bb:dd.f". */
int hf_is_bdf(const char *s);
/* The last PCI address component of a device path (the device's own function), copied into bdf. */
int hf_last_bdf(const char *devpath, char *bdf, size_t n);

void hf_collect_ib(const struct hf_ctx *c);
void hf_collect_net(const struct hf_ctx *c);
void hf_collect_pci(const struct hf_ctx *c);
void hf_collect_misc(const struct hf_ctx *c);
/* env/ facts of the process's start-up environment (/proc/self/environ): safe from another thread. */
void hf_collect_env_proc(rs_hostfacts_cb cb, void *arg);

#endif
