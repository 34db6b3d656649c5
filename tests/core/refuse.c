/* Runs a command under a seccomp filter that refuses one thing the tracer uses where it can, as an older kernel
 * or a container's policy does:
 *   close_range: close_range(2) fails with EPERM. The tracer's private descriptor table (tracer/private_fds.c, made
 *     with close_range(CLOSE_RANGE_UNSHARE), Linux 5.9) is not had; it must still read what it reads, on the
 *     calling thread.
 *   tmpfile: openat(2) with O_TMPFILE fails with EOPNOTSUPP (a filesystem without it: NFS, older overlayfs). A
 *     forked child's trace file (rs_trace_tmpfile) is then created by name at its first event, as before.
 * Usage: refuse close_range|tmpfile CMD [ARG...] */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* O_TMPFILE's own bit (asm-generic/fcntl.h): O_TMPFILE is that and O_DIRECTORY, which every directory open has */
#define TMPFILE_BIT 020000000

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[1], "close_range") && strcmp(argv[1], "tmpfile"))) {
        fprintf(stderr, "usage: refuse close_range|tmpfile CMD [ARG...]\n");
        return 2;
    }
    int tmpfile = !strcmp(argv[1], "tmpfile");
    /* x86-64 only (anything else runs unfiltered) */
    struct sock_filter no_close_range[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_close_range, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_filter no_tmpfile[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[2])), /* flags, low word */
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, TMPFILE_BIT, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EOPNOTSUPP & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {tmpfile ? (unsigned short)(sizeof no_tmpfile / sizeof no_tmpfile[0])
                                      : (unsigned short)(sizeof no_close_range / sizeof no_close_range[0]),
                              tmpfile ? no_tmpfile : no_close_range};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
        perror("refuse: seccomp");
        return 2;
    }
    execvp(argv[2], argv + 2);
    perror("refuse: exec");
    return 127;
}
