/* Host facts: the sysfs/procfs/environment facts that decide RDMA performance, as flat key/value strings.
 *
 * Collected once at trace start by the tracer (snapshotted as HOST_FACT events) and by `railscope doctor`,
 * whose checks run on the same key/value table (doctor/doctor_checks.h), so a trace's snapshot can be
 * checked offline exactly like a live host. The key scheme is documented in docs/doctor.md.
 *
 * Plain C, libc only, no allocation of our own, no subprocesses: reads small sysfs/procfs files, bounded
 * (caps on devices, ports, GIDs and netdevs; see hostfacts_int.h). Safe to call from the tracer's writer
 * thread. Keys and values passed to cb are only valid during the call. */
#ifndef RAILSCOPE_HOSTFACTS_H
#define RAILSCOPE_HOSTFACTS_H

#include <sys/types.h>

typedef void (*rs_hostfacts_cb)(void *arg, const char *key, const char *value);

/* Everything: the sysfs/procfs facts under sysfs_root (NULL = "/": reads /sys and /proc; otherwise
 * reads DIR/sys/... and DIR/proc/...) and the env/ facts (NCCL_* and friends) of the process's start-up
 * environment (read from /proc/self/environ, not `environ`, so a concurrent setenv() in the application
 * cannot race with it; variables set after exec are not seen). Keys are emitted in a deterministic order
 * (devices sorted by name). */
void rs_hostfacts_collect(const char *sysfs_root, void (*cb)(void *arg, const char *key, const char *value), void *arg);

/* The two halves, for callers that take the environment from elsewhere (doctor --env FILE). */
void rs_hostfacts_collect_sys(const char *sysfs_root, rs_hostfacts_cb cb, void *arg);
/* env/<NAME> facts for the variables in the watched list that are set in envp (NULL = environ: only
 * from a single-threaded caller such as the CLI). */
void rs_hostfacts_collect_env(char *const *envp, rs_hostfacts_cb cb, void *arg);

/* Natural-order string comparison (digit runs compared by value), the order facts are listed in. */
int rs_natcmp(const char *a, const char *b);

/* The descriptor calls of the files the tracer reads on its private-table thread (tracer/private_fds.c: the host
 * facts, rs_pread_file), by names of their own (never inlined) so that TSan runs can suppress what its one
 * descriptor table per process makes of them (tests/tsan.supp: `race:hf_fd_*`) and nothing else that thread does. */
struct stat;
int hf_fd_open(const char *path, int flags);
ssize_t hf_fd_read(int fd, void *buf, size_t n);
ssize_t hf_fd_pread(int fd, void *buf, size_t n, off_t off);
int hf_fd_fstat(int fd, struct stat *st);
int hf_fd_close(int fd);

#endif
