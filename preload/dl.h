/* Finding the real function behind a wrapper, robustly, and seeing symbol look-ups made through dlsym and
 * dlvsym (NCCL loads libibverbs with dlopen + dlvsym, which LD_PRELOAD never sees). Implemented in
 * preload/dl.c. None of these ever returns a pointer into librailscope.so itself. */
#ifndef RAILSCOPE_DL_H
#define RAILSCOPE_DL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "tracer/rs_tracer.h"

/* dlsym(RTLD_NEXT, name) / dlvsym(RTLD_NEXT, name, version) through the real dlsym (not our wrapper). */
void *rs_dl_next(const char *name);
void *rs_dl_next_v(const char *name, const char *version);

/* dlsym(handle, name) through the real dlsym: no redirect (for a library's own look-ups of functions that it
 * also wraps and registers for redirection, e.g. cupti.c's libcupti entry points). */
void *rs_dl_sym(void *handle, const char *name);

/* 1 when `p` points into librailscope.so itself (one of our wrappers: never wrap it again). */
int rs_dl_is_self(const void *p);

/* 1 when LD_PRELOAD names this library (a token, separated by spaces or colons as the loader reads it, whose file
 * name is this library's): it was loaded at the process's start and interposes globally. Loaded only as the CUDA
 * or NVTX injection or as NCCL's profiler plugin (dlopen), it is 0. path: this library's file as loaded. */
int rs_dl_self_preloaded(char *path, size_t n);

/* `name` from an object already loaded in the process whose soname or path contains `lib` (e.g.
 * "libnccl.so", "libcudart.so"), also when it was loaded RTLD_LOCAL where RTLD_NEXT cannot see it:
 * RTLD_NOLOAD dlopen of the loaded objects found with dl_iterate_phdr. NULL when none has it. */
void *rs_dl_loaded(const char *lib, const char *name);

/* Same with a symbol version (dlvsym on the loaded object), e.g. ("libibverbs.so", "ibv_open_device",
 * "IBVERBS_1.1"). */
void *rs_dl_loaded_v(const char *lib, const char *name, const char *version);

/* The usual chain for a wrapper: RTLD_NEXT, then the loaded object, then NULL. */
void *rs_dl_real(const char *lib, const char *name);
void *rs_dl_real_v(const char *lib, const char *name, const char *version);

/* dlsym/dlvsym interposition: a family registers the names it wraps; when the application looks one up
 * through dlsym/dlvsym on any handle, the wrapper is returned instead and `*real_slot` receives what the
 * real look-up found (so the wrapper forwards to exactly the object the application asked for).
 * Registration happens in constructors; the table is fixed-size and lock-free for readers. */
struct rs_dl_redirect {
    const char *name;    /* symbol name */
    const char *version; /* required version for dlvsym matches, NULL = any */
    void *wrapper;
    void **real_slot;
    /* NULL, or asked when a look-up finds the wrapper itself (RTLD_DEFAULT: we come first): nonzero answers NULL,
     * for a function the loaded library lacks, which a probing program must find missing as it would untraced
     * (procaddr.c: cuGetProcAddress_v2 on a driver before 12.0). */
    int (*absent)(void);
};
void rs_dl_register(const struct rs_dl_redirect *r, int n);
/* Notes:
 * - look-ups through RTLD_NEXT are never redirected (they come from other interposers);
 * - a plain dlsym matches a registration whatever its version (dlsym returns the default version);
 *   dlvsym matches only the registered version (NULL registered version = any);
 * - the real dlsym/dlvsym are found in glibc's symbol table directly, never through dlsym itself. */

/* ---- THE interposer skeleton ----
 * Every wrapper in preload/ is written with these macros (tracer/rs_tracer.h's comment points here): verbs*.c,
 * nccl.c, cuda/cudart.c, cuda/cupti.c. Not dlsym/dlvsym themselves (dl.c): tail calls that record nothing.
 *
 *   RS_REAL(name, ret, params, lookup)     at file scope, once per wrapped function: the type name##_fn,
 *       the real-function slot `real_##name` (void *: a dlsym redirect's real_slot, see
 *       RS_DL_REDIRECT) and `rs_real_##name()`, its typed accessor: the slot, else `lookup` (an expression,
 *       usually rs_dl_real[_v](lib, "name"[, version]): RTLD_NEXT, then the already-loaded object), stored
 *       once found. NULL when nowhere: the caller fails the call, it never calls NULL. Lock-free.
 *
 *   Inside the wrapper, in this order (the guard is the wrapper's own: `guard` names a pair guard##_enter()
 *   (true = entered; false = this thread is already inside, do not record) and guard##_exit(); the
 *   tracer's is rs_guard, a family may keep its own depth counter):
 *   RS_WRAP_REAL(name, on_missing)         rs_fn = the real function; `on_missing` (a statement that
 *                                          returns, e.g. `errno = ENOSYS; return NULL;`) when it is NULL
 *   RS_WRAP_ENTER(fam, guard)              rs_rec = family on && guard entered; rs_t0 = rs_now()
 *   ... work before the call ...
 *   RS_WRAP_CALL(args)                     rs_ret = rs_fn args; rs_errno = errno (rs_fn: RS_WRAP_REAL's, or
 *                                          a pointer the wrapper found itself, e.g. a patched entry's original)
 *   ... bookkeeping (always), the event (only if rs_rec) ...
 *   RS_WRAP_LEAVE(guard)                   guard exited if entered; errno = rs_errno; return rs_ret
 *
 *   RS_WRAP_FORWARD(fam, guard, args)      for wrappers with nothing to keep when not recording: after
 *                                          RS_WRAP_REAL, forwards untouched (no clock read) unless the family
 *                                          is on and the guard is entered; then rs_rec = 1 and rs_t0 is set.
 *   RS_WRAP_FORWARD_IF(cond, guard, args)  the same with the wrapper's own condition for recording (it
 *                                          includes the family's rs_on; cudart.c: what CUPTI leaves to it).
 *
 * So a wrapper returns exactly what the real call returned, with the errno it left, whatever the wrapper
 * did afterwards; an event is emitted only with the guard held (a nested wrapper forwards silently). */
#define RS_REAL(name, ret, params, lookup)                              \
    typedef ret(*name##_fn) params;                                     \
    static void *real_##name;                                           \
    static inline name##_fn rs_real_##name(void)                        \
    {                                                                   \
        void *p = __atomic_load_n(&real_##name, __ATOMIC_ACQUIRE);      \
        if (RS_UNLIKELY(!p)) {                                          \
            p = (lookup);                                               \
            if (p) __atomic_store_n(&real_##name, p, __ATOMIC_RELEASE); \
        }                                                               \
        return (name##_fn)p;                                            \
    }

#define RS_WRAP_REAL(name, on_missing)  \
    name##_fn rs_fn = rs_real_##name(); \
    if (RS_UNLIKELY(!rs_fn)) {          \
        on_missing;                     \
    }                                   \
    (void)0

#define RS_WRAP_ENTER(fam, guard)                     \
    const int rs_rec = rs_on(fam) && guard##_enter(); \
    const uint64_t rs_t0 = rs_now()

#define RS_WRAP_FORWARD_IF(cond, guard, args)           \
    if (!(cond) || !guard##_enter()) return rs_fn args; \
    const int rs_rec = 1;                               \
    const uint64_t rs_t0 = rs_now()

#define RS_WRAP_FORWARD(fam, guard, args) RS_WRAP_FORWARD_IF(rs_on(fam), guard, args)

#define RS_WRAP_CALL(args)                      \
    __typeof__(rs_fn args) rs_ret = rs_fn args; \
    const int rs_errno = errno

#define RS_WRAP_LEAVE(guard)        \
    do {                            \
        if (rs_rec) guard##_exit(); \
        errno = rs_errno;           \
        return rs_ret;              \
    } while (0)

/* A dlsym/dlvsym redirect entry for a wrapper declared with RS_REAL (version NULL = any); _ABSENT: with `absent`. */
/* clang-format off */
#define RS_DL_REDIRECT(name, version, wrapper) {#name, version, (void *)(wrapper), &real_##name, NULL}
#define RS_DL_REDIRECT_ABSENT(name, version, wrapper, absent) {#name, version, (void *)(wrapper), &real_##name, absent}
/* clang-format on */

#endif
