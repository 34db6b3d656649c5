/* The tracer's messages: "railscope: " + text on stderr, filtered by RAILSCOPE_LOG; warnings are also
 * recorded as WARNING events so a trace carries its own caveats. Never on a hot path. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core_int.h"

const char *rs_strerror(int err)
{
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 32)
    const char *d = strerrordesc_np(err); /* the English text, from a static table */
    return d ? d : "Unknown error";
#else
    return strerror(err);
#endif
}

static void write_stderr(const char *s, size_t n)
{
    while (n) {
        ssize_t k = write(2, s, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return;
        s += k;
        n -= (size_t)k;
    }
}

void rs_log_raw(const char *msg)
{
    int saved = errno;
    if (rs_cfg.log_level >= RS_LOG_WARN) write_stderr(msg, strlen(msg));
    errno = saved;
}

static void vlog(int level, int record, const char *fmt, va_list ap)
{
    int saved = errno;
    char buf[512];
    int n = snprintf(buf, sizeof buf, "railscope: ");
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    if (m < 0) m = 0;
    size_t len = (size_t)n + ((size_t)m < sizeof buf - (size_t)n - 1 ? (size_t)m : sizeof buf - (size_t)n - 2);
    if (rs_cfg.log_level >= level) {
        buf[len] = '\n';
        write_stderr(buf, len + 1);
    }
    buf[len] = 0;
    int st = atomic_load(&rs_state);
    if (record && (st == RS_ST_RUNNING || st == RS_ST_STARTING)) {
        int g = rs_tls.guard;
        rs_tls.guard = 1;
        struct rs_ev_WARNING w;
        RS_EV_INIT(&w, WARNING, rs_now());
        w.message = rs_intern(buf + n);
        w.pad = 0;
        if (w.message) rs_emit(&w.h);
        rs_tls.guard = g;
    }
    errno = saved;
}

void rs_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(RS_LOG_WARN, 1, fmt, ap);
    va_end(ap);
}

void rs_debug(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(RS_LOG_DEBUG, 0, fmt, ap);
    va_end(ap);
}

void rs_log(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(level, 0, fmt, ap);
    va_end(ap);
}
