/* Memory of the trace writer's own, from page mappings instead of malloc (header-only: the writer is also linked
 * alone into offline tools).
 *
 * The live tracer's last flush runs inside _exit(), which a signal handler may call while the code it interrupted
 * holds malloc's lock: a forked child that had recorded nothing created its trace file there (calloc, zstd's
 * context) and hung for good, 15 of 20 children in tests/core/sigexit.t, found in review in session 27.
 * mmap, mremap and munmap take no lock in user space. Each block is one mapping with its length in the first
 * word, so this is for few, large blocks (the writer, its buffers, zstd's context and workspace, the writer
 * thread's scratch); mappings come zeroed, as calloc's memory does. */
#ifndef RAILSCOPE_PAGEMEM_H
#define RAILSCOPE_PAGEMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#ifndef MREMAP_MAYMOVE
#error "tracer/pagemem.h needs _GNU_SOURCE (mremap)"
#endif

/* Under ASan, what lies around a block (the length word, the mapping's slack) is poisoned, so an overrun is still
 * reported as it would be past malloc's memory; a mapping is unpoisoned whole before it is moved or unmapped. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define RS_PM_POISON(p, n)   ASAN_POISON_MEMORY_REGION((p), (n))
#define RS_PM_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define RS_PM_POISON(p, n)   ((void)(p), (void)(n))
#define RS_PM_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

#define RS_PM_HDR  64u /* keeps blocks 64-byte aligned, as zstd's workspace likes */
#define RS_PM_PAGE 4096u

static inline size_t rs_pm_len(size_t n) { return (n + RS_PM_HDR + RS_PM_PAGE - 1) & ~(size_t)(RS_PM_PAGE - 1); }

/* The mapping's length and the block's size, in front of the block (unpoisoned for the read). */
static inline size_t rs_pm_maplen(char *p, size_t *n)
{
    RS_PM_UNPOISON(p, RS_PM_HDR);
    if (n) *n = ((size_t *)p)[1];
    return ((size_t *)p)[0];
}

/* A mapping of len bytes holding a block of n: the two words in front, the block, slack up to the page. */
static inline void *rs_pm_settle(char *p, size_t len, size_t n)
{
    ((size_t *)p)[0] = len;
    ((size_t *)p)[1] = n;
    RS_PM_POISON(p, RS_PM_HDR);
    RS_PM_UNPOISON(p + RS_PM_HDR, n);
    RS_PM_POISON(p + RS_PM_HDR + n, len - RS_PM_HDR - n);
    return p + RS_PM_HDR;
}

static inline void *rs_pm_alloc(size_t n)
{
    if (n > SIZE_MAX / 2) return NULL;
    size_t len = rs_pm_len(n);
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : rs_pm_settle(p, len, n);
}

static inline void rs_pm_free(void *q)
{
    if (!q) return;
    char *p = (char *)q - RS_PM_HDR;
    size_t len = rs_pm_maplen(p, NULL);
    RS_PM_UNPOISON(p, len);
    munmap(p, len);
}

/* Never shrinks the mapping; the contents move with it (mremap), as realloc's would. */
static inline void *rs_pm_realloc(void *q, size_t n)
{
    if (!q) return rs_pm_alloc(n);
    if (n > SIZE_MAX / 2) return NULL;
    char *p = (char *)q - RS_PM_HDR;
    size_t was, old = rs_pm_maplen(p, &was), len = rs_pm_len(n);
    if (len <= old) return rs_pm_settle(p, old, n);
    RS_PM_UNPOISON(p, old);
    void *np = mremap(p, old, len, MREMAP_MAYMOVE);
    if (np == MAP_FAILED) {
        rs_pm_settle(p, old, was); /* the old block stays as it was */
        return NULL;
    }
    return rs_pm_settle(np, len, n);
}

#endif
