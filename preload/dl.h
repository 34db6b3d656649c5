/* Finding the real function behind a wrapper, robustly, and seeing symbol look-ups made through dlsym and
 * dlvsym (NCCL loads libibverbs with dlopen + dlvsym, which LD_PRELOAD never sees). Implemented in
 * preload/dl.c. None of these ever returns a pointer into librailscope.so itself. */
#ifndef RAILSCOPE_DL_H
#define RAILSCOPE_DL_H

/* dlsym(RTLD_NEXT, name) / dlvsym(RTLD_NEXT, name, version) through the real dlsym (not our wrapper). */
void *rs_dl_next(const char *name);
void *rs_dl_next_v(const char *name, const char *version);

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
};
void rs_dl_register(const struct rs_dl_redirect *r, int n);
/* Notes:
 * - look-ups through RTLD_NEXT are never redirected (they come from other interposers);
 * - a plain dlsym matches a registration whatever its version (dlsym returns the default version);
 *   dlvsym matches only the registered version (NULL registered version = any);
 * - the real dlsym/dlvsym are found in glibc's symbol table directly, never through dlsym itself. */

#endif
