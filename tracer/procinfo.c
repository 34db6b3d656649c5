/* Who this process is (for the file header) and where its trace file goes. Runs at start, off the hot
 * path; reads /proc and the launcher's environment variables. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core_int.h"
#include "tracer/safedir.h"

/* Rank variables of the launchers we know, first match wins: torchrun, Slurm, Open MPI, MPICH/PMI. */
static int64_t env_int(const char *const *names)
{
    for (; *names; names++) {
        const char *v = getenv(*names);
        if (!v || !*v) continue;
        char *end;
        long long x = strtoll(v, &end, 10);
        if (!*end && x >= 0) return x;
    }
    return -1;
}

static size_t read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    size_t n = 0;
    while (n < cap) {
        ssize_t k = read(fd, buf + n, cap - n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        n += (size_t)k;
    }
    close(fd);
    return n;
}

void rs_procinfo_fill(struct rs_file_info *fi, char *host, size_t hostlen, char *cmdline, size_t cmdcap, char *exe,
                      size_t exelen, char *boot_id, size_t bootlen)
{
    static const char *const rank[] = {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", NULL};
    static const char *const lrank[] = {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                        NULL};
    static const char *const wsize[] = {"WORLD_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", NULL};
    memset(fi, 0, sizeof *fi);
    if (gethostname(host, hostlen) != 0) snprintf(host, hostlen, "unknown");
    host[hostlen - 1] = 0;
    fi->host = host;
    fi->pid = (uint64_t)getpid();
    fi->ppid = (uint64_t)getppid();
    fi->rank = env_int(rank);
    fi->local_rank = env_int(lrank);
    fi->world_size = env_int(wsize);
    size_t n = read_small("/proc/self/cmdline", cmdline, cmdcap);
    while (n && cmdline[n - 1] == 0) n--; /* the trailing NUL is a terminator, not an empty argument */
    fi->cmdline = n ? cmdline : NULL;
    fi->cmdline_len = n;
    ssize_t k = readlink("/proc/self/exe", exe, exelen - 1);
    exe[k > 0 ? k : 0] = 0;
    fi->exe = k > 0 ? exe : NULL;
    n = read_small("/proc/sys/kernel/random/boot_id", boot_id, bootlen - 1);
    while (n && (boot_id[n - 1] == '\n' || boot_id[n - 1] == 0)) n--;
    boot_id[n] = 0;
    fi->boot_id = n ? boot_id : NULL;
    struct timespec a, r, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_REALTIME, &r);
    clock_gettime(CLOCK_MONOTONIC, &b);
    uint64_t ma = (uint64_t)a.tv_sec * 1000000000ull + (uint64_t)a.tv_nsec;
    uint64_t mb = (uint64_t)b.tv_sec * 1000000000ull + (uint64_t)b.tv_nsec;
    fi->start_mono = ma + (mb - ma) / 2;
    fi->start_realtime = (uint64_t)r.tv_sec * 1000000000ull + (uint64_t)r.tv_nsec;
    fi->clock = rs_clock_name();
    fi->events = rs_cfg.events;
}

/* The output directory, opened by tracer/safedir.c (no planted link followed). A link planted by anyone else
 * (in a shared sticky directory such as /tmp, where the kernel's protected_symlinks lets the directory's
 * owner's links through) is refused: one warning, and the process is not traced (RS_OPEN_REFUSED). Returns a
 * directory descriptor or -errno. */
static int open_dir_safe(const char *dir)
{
    char bad[PATH_MAX];
    unsigned owner = 0;
    int fd = rs_open_dir_nofollow(dir, bad, sizeof bad, &owner);
    if (fd == -ELOOP && bad[0]) {
        rs_warn("refusing to follow the symbolic link %s (owned by uid %u: only links of root or of this user are "
                "followed); this process is not traced",
                bad, owner);
        return RS_OPEN_REFUSED;
    }
    return fd;
}

/* Host names go into file names: keep [A-Za-z0-9._-]. */
static void sanitize(char *s)
{
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '.' ||
              *s == '-' || *s == '_'))
            *s = '_';
}

/* The file's name for generation gen: <host>-<pid>.rtrace, then <host>-<pid>.<gen>.rtrace (an exec'd image has its
 * predecessor's pid). */
static void trace_name(char *name, size_t cap, int gen)
{
    char host[256];
    if (gethostname(host, sizeof host) != 0) snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = 0;
    char *dot = strchr(host, '.'); /* short name: file names stay readable */
    if (dot && dot != host) *dot = 0;
    sanitize(host);
    if (gen == 0) snprintf(name, cap, "%s-%d.rtrace", host, (int)getpid());
    else snprintf(name, cap, "%s-%d.%d.rtrace", host, (int)getpid(), gen);
}

/* A name that is taken: by a symbolic link (somebody planted it: say so), or by a file (next generation). */
static void name_taken(int dfd, const char *name, const char *path)
{
    struct stat sb;
    if (fstatat(dfd >= 0 ? dfd : AT_FDCWD, dfd >= 0 ? name : path, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(sb.st_mode))
        rs_warn("refusing to write through the symbolic link %s", path);
}

int rs_open_trace_file(char *path, size_t pathlen)
{
    int dfd = open_dir_safe(rs_cfg.outdir);
    if (dfd < 0) {
        snprintf(path, pathlen, "%s", rs_cfg.outdir);
        return dfd;
    }
    for (int gen = 0; gen < 1000; gen++) {
        char name[320];
        trace_name(name, sizeof name, gen);
        snprintf(path, pathlen, "%s/%s", rs_cfg.outdir, name);
        const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
        int fd = openat(dfd, name, flags, 0600);
        if (fd < 0 && errno == EMFILE && dfd >= 0) {
            /* No descriptor left beside the directory's (a tight RLIMIT_NOFILE): by name, as before. */
            close(dfd);
            dfd = -1;
            fd = open(path, flags, 0600);
        }
        if (fd >= 0) {
            if (dfd >= 0) close(dfd);
            /* Keep clear of the low descriptor numbers applications like to dup2() onto. */
            int hi = fcntl(fd, F_DUPFD_CLOEXEC, 100);
            if (hi >= 0) {
                close(fd);
                fd = hi;
            }
            return fd;
        }
        if (errno != EEXIST) {
            int err = errno;
            if (dfd >= 0) close(dfd);
            return -err;
        }
        name_taken(dfd, name, path);
    }
    if (dfd >= 0) close(dfd);
    return -EEXIST;
}

int rs_trace_tmpfile(void)
{
    unsigned owner = 0;
    int dfd = rs_open_dir_nofollow(rs_cfg.outdir, NULL, 0, &owner); /* a refusal is said by the lazy path */
    if (dfd < 0) return dfd;
    int fd = openat(dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    int err = errno;
    close(dfd);
    if (fd < 0) return -err;
    /* at 100 or above, or not at all: a low number is what the program would notice */
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, 100);
    err = errno;
    close(fd);
    return hi >= 0 ? hi : -err;
}

int rs_link_trace_file(int fd, int tid, char *path, size_t pathlen)
{
    int dfd = open_dir_safe(rs_cfg.outdir);
    if (dfd < 0) {
        snprintf(path, pathlen, "%s", rs_cfg.outdir);
        return dfd;
    }
    /* the file by its descriptor in tid's table: the caller may run on a thread with a table of its own */
    char src[64];
    snprintf(src, sizeof src, "/proc/self/task/%d/fd/%d", tid, fd);
    int err = EEXIST;
    for (int gen = 0; gen < 1000 && err == EEXIST; gen++) {
        char name[320];
        trace_name(name, sizeof name, gen);
        snprintf(path, pathlen, "%s/%s", rs_cfg.outdir, name);
        /* linkat never follows (nor replaces) what is at the new name: EEXIST, as O_EXCL|O_NOFOLLOW */
        err = linkat(AT_FDCWD, src, dfd, name, AT_SYMLINK_FOLLOW) == 0 ? 0 : errno;
        if (err == EEXIST) name_taken(dfd, name, path);
    }
    close(dfd);
    return -err;
}
