/* Opening the output directory without following planted links (tracer/safedir.h). No tracer state: the
 * CLI links this file too. */
#include "tracer/safedir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A component that is a symbolic link: follow it when root or this user owns it (a user's own links, e.g.
 * a scratch directory, must keep working); else refuse. Returns the opened fd, -1 with errno, or -2 refused. */
static int open_link(int dfd, const char *name, int err, unsigned *owner)
{
    struct stat sb;
    if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISLNK(sb.st_mode)) return errno = err, -1;
    if (sb.st_uid != 0 && sb.st_uid != geteuid()) {
        *owner = (unsigned)sb.st_uid;
        return -2;
    }
    return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int rs_open_dir_nofollow(const char *dir, char *bad, size_t badcap, unsigned *owner)
{
    char p[PATH_MAX];
    if (badcap) bad[0] = 0;
    if (snprintf(p, sizeof p, "%s", dir) >= (int)sizeof p) return -ENAMETOOLONG;
    int dfd = open(p[0] == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) return -errno;
    char *s = p;
    while (*s == '/') s++;
    while (*s) {
        char *e = strchr(s, '/');
        if (e) *e = 0;
        int fd = openat(dfd, s, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT) { /* every rank of a job creates it at once: EEXIST is fine */
            if (mkdirat(dfd, s, 0755) != 0 && errno != EEXIST) fd = -1;
            else fd = openat(dfd, s, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) fd = open_link(dfd, s, errno, owner);
        if (fd == -2) {
            close(dfd);
            if (badcap) snprintf(bad, badcap, "%s", p);
            return -ELOOP;
        }
        if (fd < 0) {
            int err = errno;
            close(dfd);
            return -err;
        }
        close(dfd);
        dfd = fd;
        if (!e) break;
        *e = '/';
        s = e + 1;
        while (*s == '/') s++;
    }
    return dfd;
}
