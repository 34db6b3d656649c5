/* Buffered output for the exporters: one large buffer, plain write(2), first error kept. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export_int.h"
#include "util/xalloc.h"

#define RS_XOUT_CAP (1u << 20)

int rs_file_ids(char *const *paths, int npaths, struct rs_file_id **ids)
{
    *ids = NULL;
    if (npaths <= 0) return 0;
    struct rs_file_id *v = rs_xcalloc((size_t)npaths, sizeof *v, "export input ids");
    if (!v) return -1;
    int n = 0;
    for (int i = 0; i < npaths; i++) {
        struct stat sb;
        if (stat(paths[i], &sb) == 0) v[n++] = (struct rs_file_id){(uint64_t)sb.st_dev, (uint64_t)sb.st_ino};
    }
    *ids = v;
    return n;
}

static int id_is_one_of(const struct stat *sb, const struct rs_file_id *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i].dev == (uint64_t)sb->st_dev && ids[i].ino == (uint64_t)sb->st_ino) return 1;
    return 0;
}

int rs_file_is_one_of(const char *path, const struct rs_file_id *ids, size_t n)
{
    struct stat sb;
    return strcmp(path, "-") && stat(path, &sb) == 0 && id_is_one_of(&sb, ids, n);
}

const char *rs_xout_strerror(int e) { return e == RS_XOUT_EINPUT ? "it is one of the input traces" : strerror(e); }

/* Opened without O_TRUNC, and truncated only once the open file (whatever link led to it) is known not to
 * be an input: checking the name first and truncating by name could still hit an input swapped in between.
 * Returns the descriptor, or -1 with *err set. */
static int open_output(const char *path, const struct rs_file_id *inputs, size_t ninputs, int *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        *err = errno;
        return -1;
    }
    struct stat sb;
    int e = 0;
    if (fstat(fd, &sb)) e = errno;
    else if (id_is_one_of(&sb, inputs, ninputs)) e = RS_XOUT_EINPUT;
    else if (S_ISREG(sb.st_mode) && sb.st_size && ftruncate(fd, 0)) e = errno; /* what O_TRUNC did */
    if (!e) return fd;
    close(fd);
    *err = e;
    return -1;
}

int rs_xout_open(struct rs_xout *o, const char *path, const struct rs_file_id *inputs, size_t ninputs)
{
    memset(o, 0, sizeof *o);
    snprintf(o->path, sizeof o->path, "%s", path);
    struct stat sb;
    if (!strcmp(path, "-")) { /* stdout appending to an input (>> run/x.rtrace) would corrupt it too */
        if ((o->fd = dup(1)) < 0) return o->err = errno;
        if (!fstat(o->fd, &sb) && id_is_one_of(&sb, inputs, ninputs)) {
            close(o->fd);
            o->fd = -1;
            return o->err = RS_XOUT_EINPUT;
        }
    } else if ((o->fd = open_output(path, inputs, ninputs, &o->err)) < 0) {
        return o->err;
    }
    o->buf = rs_xmalloc(RS_XOUT_CAP, "export_out buf");
    if (!o->buf) {
        close(o->fd);
        o->fd = -1;
        return o->err = ENOMEM;
    }
    o->cap = RS_XOUT_CAP;
    return 0;
}

int rs_xout_flush(struct rs_xout *o)
{
    size_t off = 0;
    while (off < o->len && !o->err) {
        ssize_t n = write(o->fd, o->buf + off, o->len - off);
        if (n < 0) {
            if (errno == EINTR) continue;
            o->err = errno;
            break;
        }
        off += (size_t)n;
    }
    o->len = 0; /* after an error the rest is discarded: the caller reports err at close */
    return o->err;
}

int rs_xout_close(struct rs_xout *o)
{
    if (o->fd >= 0) {
        rs_xout_flush(o);
        if (close(o->fd) && !o->err) o->err = errno;
        o->fd = -1;
    }
    free(o->buf);
    o->buf = NULL;
    return o->err;
}
