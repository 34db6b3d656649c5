/* libkillwrite.so: preloaded into a traced program (tests/cut/cut_frame.t), it lets the trace writer write
 * only part of one frame and then kills the process with SIGKILL, as a kill that lands while the writer is
 * writing does, but at a chosen place rather than by luck.
 *
 *     RS_KILLWRITE_SEQ=N     the frame (its seq) to cut; unset: the library does nothing
 *     RS_KILLWRITE_KEEP=P    how much of it reaches the file: P per mille of its compressed bytes (after the
 *                            24-byte frame header); "Bb": B bytes of the frame, header included
 *
 * The writer writes a frame with one writev(header, compressed bytes) (tracer/writer.c): that call is
 * recognised by its first piece (24 bytes, the frame magic, seq N). Prints "killwrite: frame N: B of T
 * bytes written, SIGKILL" on stderr before the kill. */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

struct fhdr {
    uint32_t magic, compressed, raw, checksum;
    uint64_t seq;
};

static ssize_t put(int fd, const void *p, size_t n)
{
    size_t off = 0;
    while (off < n) {
        ssize_t k = write(fd, (const char *)p + off, n - off);
        if (k <= 0) return -1;
        off += (size_t)k;
    }
    return (ssize_t)off;
}

ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    static ssize_t (*real)(int, const struct iovec *, int);
    if (!real) real = (ssize_t(*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
    const char *seq = getenv("RS_KILLWRITE_SEQ");
    if (seq && cnt == 2 && iov[0].iov_len == sizeof(struct fhdr)) {
        struct fhdr h;
        memcpy(&h, iov[0].iov_base, sizeof h);
        if (h.magic == 0x52464d31u && h.seq == strtoull(seq, NULL, 10) && iov[1].iov_len == h.compressed) {
            const char *k = getenv("RS_KILLWRITE_KEEP");
            size_t total = sizeof h + h.compressed, keep;
            if (k && strchr(k, 'b')) keep = strtoull(k, NULL, 10);
            else keep = sizeof h + (size_t)h.compressed * (k ? strtoull(k, NULL, 10) : 500) / 1000;
            if (keep >= total) keep = total - 1;
            size_t a = keep < sizeof h ? keep : sizeof h;
            put(fd, iov[0].iov_base, a);
            if (keep > a) put(fd, iov[1].iov_base, keep - a);
            char msg[128];
            int n = snprintf(msg, sizeof msg, "killwrite: frame %llu: %zu of %zu bytes written, SIGKILL\n",
                             (unsigned long long)h.seq, keep, total);
            if (n > 0) put(2, msg, (size_t)n);
            kill(getpid(), SIGKILL);
            for (;;) pause();
        }
    }
    return real(fd, iov, cnt);
}
