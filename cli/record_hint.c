/* Why a recorded command left no trace, when record can tell from outside: the library never ran in it. The
 * reasons are those of the dynamic loader (LD_PRELOAD is its variable) and of the library's own switch. */
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "cli.h"

/* The file execvp runs for name: name itself when it has a '/', else the first executable regular file of
 * $PATH (execvp's default when unset). 0 with the path in out, -1 when none is found. */
static int resolve(const char *name, char *out, size_t cap)
{
    if (strchr(name, '/')) return snprintf(out, cap, "%s", name) < (int)cap ? 0 : -1;
    const char *path = getenv("PATH");
    if (!path) path = "/bin:/usr/bin";
    for (const char *p = path;; p++) {
        const char *e = strchrnul(p, ':');
        struct stat st;
        snprintf(out, cap, "%.*s%s%s", (int)(e - p), p, e > p ? "/" : "", name);
        if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0) return 0;
        if (!*e) return -1;
        p = e;
    }
}

/* 1 if f is an ELF executable without a PT_INTERP program header: no dynamic loader runs for it, so nothing
 * reads LD_PRELOAD (static, static-pie); 0 for anything else (dynamic, a script, unreadable). */
static int is_static_elf(const char *f)
{
    int fd = open(f, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    Elf64_Ehdr h;
    int is_static = 0;
    if (pread(fd, &h, sizeof h, 0) == (ssize_t)sizeof h && !memcmp(h.e_ident, ELFMAG, SELFMAG) &&
        h.e_ident[EI_CLASS] == ELFCLASS64 && h.e_phentsize == sizeof(Elf64_Phdr) && h.e_phnum > 0) {
        is_static = 1;
        for (unsigned i = 0; i < h.e_phnum && is_static; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, (off_t)(h.e_phoff + i * sizeof ph)) != (ssize_t)sizeof ph) is_static = 0;
            else if (ph.p_type == PT_INTERP) is_static = 0;
        }
    }
    close(fd);
    return is_static;
}

/* What makes running f a secure execution (AT_SECURE), NULL if nothing does: set-user-ID to another user,
 * set-group-ID to another group, or file capabilities. The loader then ignores LD_PRELOAD entries with a '/' in
 * them, as record's. */
static const char *secure_kind(const char *f)
{
    struct stat st;
    if (stat(f, &st) != 0) return NULL;
    if ((st.st_mode & S_ISUID) && st.st_uid != getuid()) return "set-user-ID";
    if ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP) && st.st_gid != getgid()) return "set-group-ID";
    if (getxattr(f, "security.capability", NULL, 0) > 0) return "given file capabilities";
    return NULL;
}

void rec_why_untraced(const char *cmd, char *why, size_t cap)
{
    const char *off = getenv("RAILSCOPE_DISABLE");
    char f[PATH_MAX];
    const char *sec;
    if (off && *off && strcmp(off, "0")) {
        snprintf(why, cap, "RAILSCOPE_DISABLE=%.40s is set in the environment, so the library stays inert", off);
    } else if (resolve(cmd, f, sizeof f) != 0) {
        snprintf(why, cap, "no process of the command wrote one (the tracer's warnings, if any, are above)");
    } else if (is_static_elf(f)) {
        snprintf(why, cap, "%s is statically linked: no dynamic loader, so LD_PRELOAD cannot load the tracer", f);
    } else if ((sec = secure_kind(f))) {
        snprintf(why, cap, "%s is %s: the dynamic loader ignores LD_PRELOAD for it", f, sec);
    } else {
        snprintf(why, cap, "no process of the command wrote one (the tracer's warnings, if any, are above)");
    }
}
