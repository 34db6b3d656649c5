/* Opening the output directory without following planted links (tracer/safedir.c). Shared by the library
 * (tracer/procinfo.c) and `railscope record -o` (cli/record.c), which must refuse the same directories. */
#ifndef RAILSCOPE_SAFEDIR_H
#define RAILSCOPE_SAFEDIR_H
#include <stddef.h>

/* Opens dir, creating what is missing (mode 0755, tolerating a concurrent creator), one component at a time
 * with O_NOFOLLOW: a symbolic link on the way is followed only when it belongs to root or to this user.
 * Returns a directory descriptor, or -errno; a link planted by anyone else gives -ELOOP with the path up to
 * it in bad (badcap bytes) and its owner in *owner (bad is "" for any other error). */
int rs_open_dir_nofollow(const char *dir, char *bad, size_t badcap, unsigned *owner);

#endif
