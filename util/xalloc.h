/* Checked allocation for the CLI side (cli/, analyzer/, doctor/, formats/export/): on failure print one line
 * "railscope: out of memory (N bytes for WHAT)" and exit 2, so no tool dereferences a NULL or crashes under a
 * memory limit. Not for the library (preload/, tracer/): the tracer must never exit the traced program; it
 * drops and counts instead. Not for formats/reader.c either: its hostile-input contract returns errors. */
#ifndef RAILSCOPE_XALLOC_H
#define RAILSCOPE_XALLOC_H
#include <stddef.h>

void *rs_xmalloc(size_t n, const char *what);
void *rs_xcalloc(size_t count, size_t size, const char *what); /* also fails on count*size overflow */
void *rs_xrealloc(void *p, size_t n, const char *what);
void *rs_xreallocarray(void *p, size_t count, size_t size, const char *what);
char *rs_xstrdup(const char *s, const char *what);
/* The message and exit of the above, for callers with their own allocator. */
_Noreturn void rs_oom(size_t n, const char *what);

#endif
