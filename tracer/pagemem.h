/* Memory of the trace writer's own, from page mappings instead of malloc (header-only: the writer is also linked
 * alone into offline tools).
 *
 * The live tracer's last flush runs inside _exit(), which a signal handler may call while the code it interrupted
 * holds malloc's lock: a forked child that had recorded nothing created its trace file there (calloc, zstd's
 * context) and hung for good, 15 of 20 children in docs/dev/repro/sigexit_fork.c (tests/core/sigexit.t).
 * mmap, mremap and munmap take no lock in user space. Each block is one mapping with its length in the first
 * word, so this is for few, large blocks (the writer, its buffers, zstd's context and workspace, the writer
 * thread's scratch); mappings come zeroed, as calloc's memory does. */
#ifndef RAILSCOPE_PAGEMEM_H
#define RAILSCOPE_PAGEMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#define RS_PM_HDR  64u /* keeps blocks 64-byte aligned, as zstd's workspace likes */
#define RS_PM_PAGE 4096u

static inline size_t rs_pm_len(size_t n) { return (n + RS_PM_HDR + RS_PM_PAGE - 1) & ~(size_t)(RS_PM_PAGE - 1); }

static inline void *rs_pm_alloc(size_t n)
{
    if (n > SIZE_MAX / 2) return NULL;
    size_t len = rs_pm_len(n);
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    *(size_t *)p = len;
    return (char *)p + RS_PM_HDR;
}

static inline void rs_pm_free(void *q)
{
    if (!q) return;
    char *p = (char *)q - RS_PM_HDR;
    munmap(p, *(size_t *)p);
}

/* Never shrinks; the contents move with the mapping (mremap), as realloc's would. */
static inline void *rs_pm_realloc(void *q, size_t n)
{
    if (!q) return rs_pm_alloc(n);
    if (n > SIZE_MAX / 2) return NULL;
    char *p = (char *)q - RS_PM_HDR;
    size_t old = *(size_t *)p, len = rs_pm_len(n);
    if (len <= old) return q;
    void *np = mremap(p, old, len, MREMAP_MAYMOVE);
    if (np == MAP_FAILED) return NULL;
    *(size_t *)np = len;
    return (char *)np + RS_PM_HDR;
}

#endif
