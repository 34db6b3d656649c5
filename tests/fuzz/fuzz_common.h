/* Shared by the fuzz targets (tests/fuzz/fuzz_*.c): turn bytes into a trace file the reader can open,
 * and drain a reader the way dump/report/export do, touching every byte the reader hands out so that
 * ASan sees any out-of-bounds view. Every check that fails calls abort(): under libFuzzer that is a
 * crash with a reproducer, under the replay driver (standalone.c) a failed test.
 *
 * Files live in a memfd opened through /proc/self/fd/N: no disk traffic, no leftovers, and the reader
 * goes through its real open()/pread() path. */
#ifndef RAILSCOPE_FUZZ_COMMON_H
#define RAILSCOPE_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "reader.h"

#define FZ_CHECK(cond)                                                                         \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "fuzz invariant failed: %s (%s:%d)\n", #cond, __FILE__, __LINE__); \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

/* A check for a bug already reported (tests/corpus/regress/ holds its reproducer, docs/dev/journal/hardening.md the
 * diagnosis): it fails like FZ_CHECK unless RS_FUZZ_KNOWN (comma list of bug ids) names it, so a long
 * campaign can keep looking for new bugs while an old one awaits its fix. */
static inline int fz_known(const char *bug)
{
    const char *v = getenv("RS_FUZZ_KNOWN");
    return v && strstr(v, bug);
}
#define FZ_KNOWN(bug, cond)                                                                                        \
    do {                                                                                                           \
        if (!(cond) && !fz_known(bug)) {                                                                           \
            fprintf(stderr, "fuzz invariant failed (known bug %s): %s (%s:%d)\n", bug, #cond, __FILE__, __LINE__); \
            abort();                                                                                               \
        }                                                                                                          \
    } while (0)

/* Write bytes into a fresh memfd; returns its fd (path in *path), -1 if the kernel refuses. */
static inline int fz_file(const void *data, size_t n, char *path, size_t pathlen)
{
    int fd = memfd_create("rs-fuzz", MFD_CLOEXEC);
    if (fd < 0) return -1;
    size_t off = 0;
    while (off < n) {
        ssize_t k = write(fd, (const char *)data + off, n - off);
        if (k <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)k;
    }
    snprintf(path, pathlen, "/proc/self/fd/%d", fd);
    return fd;
}

/* Touch n bytes (ASan checks the whole range) and fold them so the compiler keeps the reads. */
static inline unsigned fz_touch(const void *p, size_t n)
{
    const volatile unsigned char *b = p;
    unsigned x = 0;
    for (size_t i = 0; i < n; i++) x += b[i];
    return x;
}

static inline void fz_check_string(const char *s, size_t len)
{
    if (!s) return;
    fz_touch(s, len + 1);
    FZ_CHECK(s[len] == 0);
}

static inline void fz_check_header(const struct rs_header_info *h)
{
    const char *strs[] = {h->host, h->clock, h->events, h->tracer_version, h->exe, h->boot_id};
    for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++)
        if (strs[i]) fz_check_string(strs[i], strlen(strs[i]));
    /* cmdline_len must describe the cmdline string kept (a second CMDLINE tag used to overwrite the length
     * but not the string: consumers then read past the copy). */
    if (h->cmdline && !fz_known("cmdline-len")) fz_check_string(h->cmdline, h->cmdline_len);
    FZ_CHECK(h->major == RS_FORMAT_MAJOR);
}

/* Everything a consumer does with one event: kind lookups, every field read at its offset, every string
 * field resolved, varlen tails touched. */
static inline void fz_check_event(const struct rs_reader *r, const struct rs_event *e)
{
    const struct rs_ev_hdr *h = e->ev;
    FZ_CHECK(h != NULL);
    FZ_CHECK(((uintptr_t)h & 7) == 0);
    FZ_CHECK(h->size >= sizeof *h && h->size % 8 == 0);
    FZ_CHECK(e->ts == h->ts);
    fz_touch(h, h->size);
    const struct rs_kind_desc *d = rs_kind_get(h->kind);
    FZ_CHECK(e->known == (d != NULL));
    if (!d) {
        FZ_CHECK(rs_kind_lname(h->kind) == NULL);
        return;
    }
    const char *ln = rs_kind_lname(h->kind);
    FZ_CHECK(ln && strlen(ln) == strlen(d->name));
    FZ_CHECK(h->size >= d->size);
    for (unsigned i = 0; i < d->nfields; i++) {
        size_t off = rs_field_offset(d, i);
        FZ_CHECK(d->fields[i].type <= RS_T_dur);
        size_t fsz = rs_ftype_size[d->fields[i].type];
        FZ_CHECK(off + fsz <= d->size);
        if (d->fields[i].type == RS_T_str) {
            uint32_t id;
            memcpy(&id, (const char *)h + off, sizeof id);
            size_t len = 0;
            const char *s = rs_reader_string(r, id, &len);
            if (s) fz_check_string(s, len);
        }
    }
    if (h->kind == RS_EV_STRING) {
        const struct rs_ev_STRING *s = (const void *)h;
        FZ_CHECK(s->len <= h->size - sizeof *s);
        size_t len = 0;
        const char *str = rs_reader_string(r, s->id, &len);
        /* the reader accepted the record, so it must resolve (id 0x7fffffff, the writer's PARTIAL reason,
         * is stored in a side slot that lookups did not consult) */
        if (s->id == 0x7fffffffu) FZ_KNOWN("partial-slot", str != NULL);
        else FZ_CHECK(str != NULL || rs_reader_stats(r)->strings_not_kept); /* or past the memory limit */
        if (!str) return;
        FZ_CHECK(len == s->len);
        FZ_CHECK(!memcmp(str, s + 1, len));
    }
}

static inline void fz_check_stats(const struct rs_read_stats *st)
{
    FZ_CHECK((unsigned)st->status <= RS_READ_IO_ERROR);
    FZ_CHECK(memchr(st->reason, 0, sizeof st->reason) != NULL);
    FZ_CHECK(st->reason[0] != 0);
    FZ_CHECK(st->unknown_events <= st->events);
    const char *n = rs_read_status_name(st->status);
    FZ_CHECK(n && strcmp(n, "?"));
}

/* Open path, drain it, check everything; returns the number of events (or -1 when open refused it).
 * max_events bounds the work on inputs that decode to huge event streams. */
static inline long fz_drain_path(const char *path, long max_events)
{
    char err[256];
    err[0] = 0;
    struct rs_reader *r = rs_reader_open(path, err, sizeof err);
    if (!r) {
        FZ_CHECK(memchr(err, 0, sizeof err) != NULL);
        FZ_CHECK(err[0] != 0); /* a refusal always says why */
        return -1;
    }
    fz_check_header(rs_reader_header(r));
    FZ_CHECK(rs_reader_path(r) != NULL);
    struct rs_event e;
    long n = 0;
    uint64_t last_frame = 0;
    while (n < max_events && rs_reader_next(r, &e) > 0) {
        fz_check_event(r, &e);
        FZ_CHECK(e.frame >= last_frame);
        last_frame = e.frame;
        n++;
    }
    if (n < max_events) {
        FZ_CHECK(rs_reader_next(r, &e) == 0); /* stays ended */
        const struct rs_read_stats *st = rs_reader_stats(r);
        fz_check_stats(st);
        FZ_CHECK(st->events == (uint64_t)n);
    }
    /* Lookups a consumer might try with ids the file never defined. */
    const uint32_t probe[] = {0, 1, 2, 255, 256, 0x7fffffffu, 1u << 22, (1u << 22) + 1, 0xffffffffu};
    for (size_t i = 0; i < sizeof probe / sizeof probe[0]; i++) {
        size_t len = 0;
        const char *s = rs_reader_string(r, probe[i], &len);
        if (s) fz_check_string(s, len);
    }
    rs_reader_close(r);
    return n;
}

static inline long fz_drain_bytes(const void *data, size_t n, long max_events)
{
    char path[64];
    int fd = fz_file(data, n, path, sizeof path);
    if (fd < 0) return -1;
    long k = fz_drain_path(path, max_events);
    close(fd);
    return k;
}

/* A byte cursor over the fuzz input for the structured targets. */
struct fz_in {
    const uint8_t *p;
    size_t n;
};
static inline int fz_left(const struct fz_in *in) { return in->n > 0; }
static inline uint8_t fz_u8(struct fz_in *in)
{
    if (!in->n) return 0;
    in->n--;
    return *in->p++;
}
static inline uint16_t fz_u16(struct fz_in *in) { return (uint16_t)(fz_u8(in) | fz_u8(in) << 8); }
static inline uint32_t fz_u32(struct fz_in *in) { return fz_u16(in) | (uint32_t)fz_u16(in) << 16; }
static inline size_t fz_take(struct fz_in *in, size_t want, const uint8_t **out)
{
    if (want > in->n) want = in->n;
    *out = in->p;
    in->p += want;
    in->n -= want;
    return want;
}

/* A growable byte buffer for assembling files. */
struct fz_buf {
    unsigned char *b;
    size_t n, cap;
};
static inline void fz_put(struct fz_buf *f, const void *p, size_t n)
{
    if (f->n + n > f->cap) {
        size_t cap = f->cap ? f->cap : 4096;
        while (cap < f->n + n) cap *= 2;
        f->b = realloc(f->b, cap);
        FZ_CHECK(f->b != NULL);
        f->cap = cap;
    }
    if (n) memcpy(f->b + f->n, p, n);
    f->n += n;
}
static inline void fz_zero(struct fz_buf *f, size_t n)
{
    static const unsigned char z[64];
    while (n) {
        size_t k = n < sizeof z ? n : sizeof z;
        fz_put(f, z, k);
        n -= k;
    }
}

/* A valid preamble + the smallest valid header (one PID tag). */
static inline void fz_put_preamble(struct fz_buf *f, const void *tlv, uint32_t tlv_len)
{
    struct rs_file_preamble pre;
    memcpy(pre.magic, RS_MAGIC, 8);
    pre.major = RS_FORMAT_MAJOR;
    pre.minor = RS_FORMAT_MINOR;
    pre.header_bytes = tlv_len;
    fz_put(f, &pre, sizeof pre);
    fz_put(f, tlv, tlv_len);
}
static inline void fz_put_min_header(struct fz_buf *f)
{
    unsigned char tlv[12] = {RS_HDR_PID, 0, 8, 0, 42, 0, 0, 0, 0, 0, 0, 0};
    fz_put_preamble(f, tlv, sizeof tlv);
}

/* Append a frame around already-compressed bytes with a correct checksum. */
static inline void fz_put_frame(struct fz_buf *f, const void *z, uint32_t zlen, uint32_t raw, uint64_t seq)
{
    struct rs_frame_hdr fh = {RS_FRAME_MAGIC, zlen, raw, rs_fnv1a(z, zlen), seq};
    fz_put(f, &fh, sizeof fh);
    fz_put(f, z, zlen);
}

/* Compress raw (a decompressed frame payload) and append it as a valid frame. One compression context
 * for the whole run: creating one per input would dominate the execution rate. */
static inline void fz_put_raw_frame(struct fz_buf *f, const void *raw, size_t rawlen, uint64_t seq)
{
    static ZSTD_CCtx *cctx;
    if (!cctx) cctx = ZSTD_createCCtx();
    FZ_CHECK(cctx != NULL);
    size_t bound = ZSTD_compressBound(rawlen);
    void *z = malloc(bound ? bound : 1);
    FZ_CHECK(z != NULL);
    size_t zn = ZSTD_compressCCtx(cctx, z, bound, raw, rawlen, 1);
    FZ_CHECK(!ZSTD_isError(zn));
    fz_put_frame(f, z, (uint32_t)zn, (uint32_t)rawlen, seq);
    free(z);
}

#endif
