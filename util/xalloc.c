/* Checked allocation (util/xalloc.h). */
#include "util/xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Noreturn void rs_oom(size_t n, const char *what)
{
    fprintf(stderr, "railscope: out of memory (%zu bytes for %s)\n", n, what ? what : "data");
    exit(2);
}

void *rs_xmalloc(size_t n, const char *what)
{
    void *p = malloc(n ? n : 1);
    if (!p) rs_oom(n, what);
    return p;
}

void *rs_xcalloc(size_t count, size_t size, const char *what)
{
    if (size && count > SIZE_MAX / size) rs_oom(SIZE_MAX, what);
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) rs_oom(count * size, what);
    return p;
}

void *rs_xrealloc(void *p, size_t n, const char *what)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) rs_oom(n, what);
    return q;
}

void *rs_xreallocarray(void *p, size_t count, size_t size, const char *what)
{
    if (size && count > SIZE_MAX / size) rs_oom(SIZE_MAX, what);
    return rs_xrealloc(p, count * size, what);
}

char *rs_xstrdup(const char *s, const char *what)
{
    size_t n = strlen(s) + 1;
    return memcpy(rs_xmalloc(n, what), s, n);
}
