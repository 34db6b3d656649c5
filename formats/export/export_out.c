/* Buffered output for the exporters: one large buffer, plain write(2), first error kept. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export_int.h"
#include "util/xalloc.h"

#define RS_XOUT_CAP (1u << 20)

int rs_xout_open(struct rs_xout *o, const char *path)
{
    memset(o, 0, sizeof *o);
    snprintf(o->path, sizeof o->path, "%s", path);
    if (!strcmp(path, "-")) o->fd = dup(1);
    else o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (o->fd < 0) return o->err = errno;
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
