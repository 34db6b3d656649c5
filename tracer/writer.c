/* The trace file writer (see writer.h): frame buffer, chunking, ts-delta transform, zstd, header TLV.
 * Used by the live writer thread and, linked statically, by offline tools; so no global state here. */
#include "writer.h"
#include "pagemem.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_customMem, ZSTD_createCCtx_advanced: exported since zstd 1.3 */
#include <zstd.h>

#ifndef RS_LIKELY
#define RS_LIKELY(x)   __builtin_expect(!!(x), 1)
#define RS_UNLIKELY(x) __builtin_expect(!!(x), 0)
#endif

#ifndef RS_TRACER_VERSION
#define RS_TRACER_VERSION "0.1.0"
#endif

/* zstd's context and workspace: page memory too (pagemem.h says why). */
static void *zstd_alloc(void *opaque, size_t n)
{
    (void)opaque;
    return rs_pm_alloc(n);
}
static void zstd_free(void *opaque, void *p)
{
    (void)opaque;
    rs_pm_free(p);
}

struct rs_str_ent {
    uint32_t hash, id;
    char *s;
    size_t n;
};

struct rs_writer {
    int fd;
    int error;         /* first error, negative errno */
    char *reopen_path; /* rs_writer_set_reopen: where to find the file again if the descriptor is lost */
    dev_t dev;
    ino_t ino;
    uint64_t good_end; /* file offset after the last whole frame */
    /* The last few frame ends (the newest = good_end) and the frame numbers that follow them: where
     * rs_writer_mark_partial can cut back to when its small frame does not fit after the last one. */
    uint64_t ends[8], end_seqs[8];
    unsigned n_ends;
    uint64_t seq;
    int level;
    int threads; /* zstd worker threads, 0 = compress in the caller */
    ZSTD_CCtx *cctx;

    unsigned char *raw; /* current frame's payload not yet given to zstd */
    size_t raw_len, raw_cap;
    /* Incremental compression (rs_writer_feed): the frame's first frame_base raw bytes are already in the
     * zstd stream, whose output so far is cbuf[0, c_len). */
    size_t frame_base, c_len;
    int streaming;
    /* rs_writer_checkpoint: the current frame is open in the file (placeholder header at good_end, then
     * cbuf[0, spilled_c)); rs_writer_flush appends the rest and writes the real header over the placeholder */
    int spilled;
    size_t spilled_c;
    size_t feed_slice; /* rs_writer_set_feed_slice: give raw to zstd whenever it holds this much */
    size_t chunk_off;  /* offset of the open chunk's header in raw, or SIZE_MAX */
    uint32_t chunk_tid;
    uint64_t chunk_prev_ts;
    unsigned char *cbuf;
    size_t cbuf_cap;

    rs_writer_clock_fn clock_fn;
    void *clock_arg;
    int in_anchor;
    uint64_t last_ts; /* latest event time appended: stamps STRING and DROPS records */

    struct rs_str_ent *strs; /* open-addressing table for rs_writer_intern */
    uint32_t strs_cap, strs_n, next_id;

    struct rs_writer_stats st;

    /* RS_CHUNK_FIELD_DELTA state: the previous event's original fields per slot, valid for one chunk. */
    int field_delta;
    uint32_t chunk_gen;
    struct {
        uint32_t gen;
        uint16_t kind, size;
        uint64_t w[(RS_FD_MAX - sizeof(struct rs_ev_hdr)) / 8];
    } fdelta[RS_FD_SLOTS];
};

static void chunk_close(struct rs_writer *w) { w->chunk_off = SIZE_MAX; }

/* Raw bytes in the current frame, fed to zstd or not. */
static size_t frame_total(const struct rs_writer *w) { return w->frame_base + w->raw_len; }

/* Forget the current frame (written, or dropped after an error). */
static void frame_reset(struct rs_writer *w)
{
    if (w->streaming) ZSTD_CCtx_reset(w->cctx, ZSTD_reset_session_only);
    w->streaming = 0;
    w->raw_len = 0;
    w->frame_base = 0;
    w->c_len = 0;
    w->spilled = 0;
    w->spilled_c = 0;
    chunk_close(w);
}

static void default_clock(void *arg, uint64_t *real, uint64_t *mono)
{
    (void)arg;
    struct timespec a, r, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    clock_gettime(CLOCK_REALTIME, &r);
    clock_gettime(CLOCK_MONOTONIC, &b);
    uint64_t ma = (uint64_t)a.tv_sec * 1000000000ull + (uint64_t)a.tv_nsec;
    uint64_t mb = (uint64_t)b.tv_sec * 1000000000ull + (uint64_t)b.tv_nsec;
    *mono = ma + (mb - ma) / 2;
    *real = (uint64_t)r.tv_sec * 1000000000ull + (uint64_t)r.tv_nsec;
}

/* Write all of it, retrying on EINTR and short writes. SIGXFSZ is blocked meanwhile so that a file size
 * limit (RLIMIT_FSIZE) shows up as EFBIG here instead of killing the traced process. */
static int write_all(int fd, const struct iovec *iov_in, int cnt)
{
    struct iovec iov[4];
    if (cnt > 4) return -EINVAL;
    memcpy(iov, iov_in, sizeof(*iov) * (size_t)cnt);
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    int ret = 0, i = 0;
    while (i < cnt) {
        ssize_t n = writev(fd, iov + i, cnt - i);
        if (n < 0) {
            if (errno == EINTR) continue;
            ret = -errno;
            break;
        }
        if (n == 0) {
            ret = -EIO;
            break;
        }
        while (i < cnt && (size_t)n >= iov[i].iov_len) n -= (ssize_t)iov[i++].iov_len;
        if (i < cnt) {
            iov[i].iov_base = (char *)iov[i].iov_base + n;
            iov[i].iov_len -= (size_t)n;
        }
    }
    /* A SIGXFSZ raised by the failed write stays pending on this thread: discard it before unblocking. */
    if (ret == -EFBIG) {
        struct timespec zero = {0, 0};
        sigtimedwait(&block, NULL, &zero);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return ret;
}

static void push_end(struct rs_writer *w)
{
    if (w->n_ends == 8) {
        memmove(w->ends, w->ends + 1, 7 * sizeof w->ends[0]);
        memmove(w->end_seqs, w->end_seqs + 1, 7 * sizeof w->end_seqs[0]);
        w->n_ends = 7;
    }
    w->ends[w->n_ends] = w->good_end;
    w->end_seqs[w->n_ends++] = w->seq;
}

static int fail(struct rs_writer *w, int err)
{
    if (!w->error) w->error = err;
    w->st.error = w->error;
    return w->error;
}

/* ---- header ---- */

struct tlv_buf {
    unsigned char *p;
    size_t len, cap;
    int oom;
};

static void tlv_put(struct tlv_buf *b, uint16_t tag, const void *v, size_t n)
{
    if (n > 0xffff) n = 0xffff;
    if (b->len + 4 + n > b->cap) {
        size_t cap = (b->cap ? b->cap * 2 : 1024) + n + 4;
        unsigned char *p = rs_pm_realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    uint16_t t = tag, l = (uint16_t)n;
    memcpy(b->p + b->len, &t, 2);
    memcpy(b->p + b->len + 2, &l, 2);
    if (n) memcpy(b->p + b->len + 4, v, n);
    b->len += 4 + n;
}
static void tlv_str(struct tlv_buf *b, uint16_t tag, const char *s)
{
    if (s) tlv_put(b, tag, s, strnlen(s, 0xffff));
}
static void tlv_u64(struct tlv_buf *b, uint16_t tag, uint64_t v) { tlv_put(b, tag, &v, 8); }

static int write_header(struct rs_writer *w, const struct rs_file_info *in)
{
    struct tlv_buf b = {0};
    tlv_str(&b, RS_HDR_HOST, in->host);
    tlv_u64(&b, RS_HDR_PID, in->pid);
    tlv_u64(&b, RS_HDR_PPID, in->ppid);
    tlv_u64(&b, RS_HDR_RANK, (uint64_t)in->rank);
    tlv_u64(&b, RS_HDR_LOCAL_RANK, (uint64_t)in->local_rank);
    tlv_u64(&b, RS_HDR_WORLD_SIZE, (uint64_t)in->world_size);
    if (in->cmdline) tlv_put(&b, RS_HDR_CMDLINE, in->cmdline, in->cmdline_len ? in->cmdline_len : strlen(in->cmdline));
    tlv_u64(&b, RS_HDR_START_REALTIME, in->start_realtime);
    tlv_u64(&b, RS_HDR_START_MONO, in->start_mono);
    tlv_str(&b, RS_HDR_CLOCK, in->clock ? in->clock : "monotonic");
    tlv_str(&b, RS_HDR_EVENTS, in->events);
    tlv_str(&b, RS_HDR_TRACER_VERSION, in->tracer_version ? in->tracer_version : RS_TRACER_VERSION);
    tlv_str(&b, RS_HDR_EXE, in->exe);
    tlv_str(&b, RS_HDR_BOOT_ID, in->boot_id);
    if (b.oom) {
        rs_pm_free(b.p);
        return -ENOMEM;
    }
    struct rs_file_preamble pre;
    memcpy(pre.magic, RS_MAGIC, 8);
    pre.major = RS_FORMAT_MAJOR;
    pre.minor = RS_FORMAT_MINOR;
    pre.header_bytes = (uint32_t)b.len;
    struct iovec iov[2] = {{&pre, sizeof pre}, {b.p, b.len}};
    int ret = write_all(w->fd, iov, 2);
    rs_pm_free(b.p);
    if (ret) return ret;
    w->good_end = sizeof pre + b.len;
    w->st.file_bytes = w->good_end;
    push_end(w);
    return 0;
}

struct rs_writer *rs_writer_fdopen(int fd, const struct rs_file_info *info, int *err)
{
    int e = 0;
    struct rs_writer *w = rs_pm_alloc(sizeof *w);
    if (!w) {
        e = -ENOMEM;
        goto out;
    }
    w->fd = fd;
    w->level = 1;
    w->chunk_off = SIZE_MAX;
    w->clock_fn = default_clock;
    w->next_id = 1;
    w->field_delta = 1;
    struct stat sb;
    if (fstat(fd, &sb) == 0) {
        w->dev = sb.st_dev;
        w->ino = sb.st_ino;
    }
    w->cctx = ZSTD_createCCtx_advanced((ZSTD_customMem){zstd_alloc, zstd_free, NULL});
    if (!w->cctx) {
        e = -ENOMEM;
        goto out;
    }
    e = write_header(w, info);
out:
    if (e) {
        if (w) {
            ZSTD_freeCCtx(w->cctx);
            rs_pm_free(w);
        }
        close(fd);
        if (err) *err = e;
        return NULL;
    }
    return w;
}

struct rs_writer *rs_writer_open(const char *path, const struct rs_file_info *info, int *err)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (err) *err = -errno;
        return NULL;
    }
    return rs_writer_fdopen(fd, info, err);
}

void rs_writer_set_level(struct rs_writer *w, int level) { w->level = level; }

void rs_writer_set_field_delta(struct rs_writer *w, int on)
{
    w->field_delta = on;
    chunk_close(w); /* the flag is per chunk */
}

void rs_writer_set_feed_slice(struct rs_writer *w, size_t bytes)
{
    /* below 64 KiB the per-call overhead of zstd's streaming would show; events are < 64 KiB */
    w->feed_slice = bytes && bytes < 65536 ? 65536 : bytes;
}

int rs_writer_set_threads(struct rs_writer *w, int n)
{
    /* zstd's own worker threads compress one frame in parallel jobs; the frame stays one zstd frame. */
    if (n < 0) n = 0;
    size_t r = ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_nbWorkers, n);
    if (ZSTD_isError(r)) return -ENOTSUP;
    w->threads = n;
    return 0;
}

void rs_writer_no_new_threads(struct rs_writer *w)
{
    /* zstd starts its workers at a compression with them (a streaming one, or a one-shot one of a large frame);
     * between frames the count may change, and workers that already run are then simply not used */
    if (w->threads && !w->streaming && !ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_nbWorkers, 0)))
        w->threads = 0;
}

void rs_writer_set_clock(struct rs_writer *w, rs_writer_clock_fn fn, void *arg)
{
    w->clock_fn = fn;
    w->clock_arg = arg;
}

/* ---- frame buffer ---- */

static int raw_reserve(struct rs_writer *w, size_t n)
{
    if (w->raw_len + n <= w->raw_cap) return 0;
    size_t cap = w->raw_cap ? w->raw_cap : 64 * 1024;
    while (cap < w->raw_len + n) cap *= 2;
    unsigned char *p = rs_pm_realloc(w->raw, cap);
    if (!p) return -ENOMEM;
    w->raw = p;
    w->raw_cap = cap;
    return 0;
}


static int put_events(struct rs_writer *w, uint32_t tid, const unsigned char *ev, size_t bytes);
static int stream_in(struct rs_writer *w, ZSTD_EndDirective end);

/* A new frame starts with a CLOCK anchor (tid 0) when a clock source is set. */
static int frame_begin(struct rs_writer *w)
{
    if (frame_total(w) || !w->clock_fn || w->in_anchor) return 0;
    struct rs_ev_CLOCK c;
    uint64_t real = 0, mono = 0;
    w->clock_fn(w->clock_arg, &real, &mono);
    RS_EV_INIT(&c, CLOCK, mono);
    c.realtime_ns = real;
    c.mono_ns = mono;
    w->in_anchor = 1;
    int ret = put_events(w, 0, (const unsigned char *)&c, sizeof c);
    w->in_anchor = 0;
    return ret;
}

/* Copy events into the open chunk of `tid` (opening one if needed), delta-encoding hdr.ts and (field
 * delta) the fields, in one pass: each event's header is read once, and the same loop finds where the
 * frame is full. Stops early, without error, before an event of kind `stop_kind` (-1: none) and before
 * an event that is not whole within `bytes` (the live writer hands over runs of its rings that may end
 * in the middle of an event at the ring's end); *done = bytes consumed, *events = events appended.
 * The events must be sane (size >= 16, multiple of 8): rs_writer_append checks; rs_emit guarantees. */
static int put_run(struct rs_writer *w, uint32_t tid, const unsigned char *ev, size_t bytes, int stop_kind,
                   size_t *done, uint64_t *events)
{
    int ret = 0;
    size_t consumed = 0;
    uint64_t total = 0;
    *done = 0;
    *events = 0;
    while (consumed < bytes) {
        if (!frame_total(w) && w->clock_fn && !w->in_anchor) {
            if ((ret = frame_begin(w))) break;
        }
        int new_chunk = w->chunk_off == SIZE_MAX || w->chunk_tid != tid;
        size_t hdr = new_chunk ? sizeof(struct rs_chunk_hdr) : 0;
        size_t used = w->raw_len + hdr, in_frame = w->frame_base + used;
        size_t room = in_frame < RS_WRITER_FRAME_RAW ? RS_WRITER_FRAME_RAW - in_frame : 0;
        size_t left = bytes - consumed;
        /* This pass stops at the slice's end (then feeds) or at the frame's end (then flushes). Sliced
         * feeding (live writer): the copy and the compression alternate in steps of feed_slice bytes that
         * stay in cache, and a caller handing over a large run gets it consumed a slice at a time. */
        size_t lim = room;
        if (w->feed_slice) {
            size_t sl = used < w->feed_slice ? w->feed_slice - used : 0;
            if (sl < lim) lim = sl;
        }
        /* an oversized event (only when the frame is empty) gets a frame of its own: events are < 64 KiB */
        size_t want = left < lim ? left : lim;
        if (want < 65536 && (!frame_total(w) || !w->raw_len)) want = left < 65536 ? left : 65536;
        if ((ret = raw_reserve(w, want + hdr))) break;
        const unsigned char *src0 = ev + consumed;
        unsigned char *dst = w->raw + used;
        uint64_t prev = w->chunk_prev_ts, last = w->last_ts, cnt = 0;
        /* Every field-delta slot is empty at the start of a chunk. The new generation is committed only
         * if the chunk is really opened: a run that stops at once (an rs_emit_as marker first) must not
         * invalidate the slots of the chunk still open, whose next events the reader decodes with them. */
        const uint32_t gen = w->chunk_gen + (new_chunk ? 1 : 0);
        const int fd = w->field_delta;
        size_t off = 0;
        int stop = 0, slice_full = 0;
        while (off < left) {
            struct rs_ev_hdr hs;
            if (left - off < sizeof hs) {
                stop = 1;
                break;
            }
            memcpy(&hs, src0 + off, sizeof hs);
            if (RS_UNLIKELY((int)hs.kind == stop_kind || hs.size > left - off)) {
                stop = 1;
                break;
            }
            if (RS_UNLIKELY(off + hs.size > lim)) {
                if (off + hs.size > room) {
                    if (off || frame_total(w)) break; /* frame full (an oversized event gets a frame of its own) */
                } else if (off || w->raw_len) {
                    slice_full = 1; /* slice full: feed, then go on */
                    break;
                } /* else an event larger than a slice, alone: taken */
            }
            uint64_t ts = hs.ts;
            struct rs_ev_hdr *h = (struct rs_ev_hdr *)(dst + off);
            *h = hs;
            if (!(new_chunk && cnt == 0)) h->ts = ts - prev; /* wraps for out-of-order ts: fine */
            prev = ts;
            if (ts > last && hs.kind != RS_EV_STRING) last = ts;
            const unsigned char *src = src0 + off + sizeof hs;
            uint64_t *f = (uint64_t *)(h + 1);
            size_t nw = (hs.size - sizeof hs) / 8;
            if (fd && hs.size <= RS_FD_MAX) {
                __typeof__(&w->fdelta[0]) sl = &w->fdelta[hs.kind % RS_FD_SLOTS];
                if (RS_LIKELY(sl->gen == gen && sl->kind == hs.kind && sl->size == hs.size)) {
                    for (size_t i = 0; i < nw; i++) {
                        uint64_t o;
                        memcpy(&o, src + 8 * i, 8);
                        f[i] = o - sl->w[i];
                        sl->w[i] = o;
                    }
                } else {
                    sl->gen = gen;
                    sl->kind = hs.kind;
                    sl->size = hs.size;
                    for (size_t i = 0; i < nw; i++) {
                        uint64_t o;
                        memcpy(&o, src + 8 * i, 8);
                        f[i] = o;
                        sl->w[i] = o;
                    }
                }
            } else {
                memcpy(f, src, nw * 8);
            }
            off += hs.size;
            cnt++;
        }
        if (off) {
            if (new_chunk) {
                struct rs_chunk_hdr c = {RS_CHUNK_MAGIC, tid, 0,
                                         RS_CHUNK_TS_DELTA | (w->field_delta ? RS_CHUNK_FIELD_DELTA : 0)};
                memcpy(w->raw + w->raw_len, &c, sizeof c);
                w->chunk_off = w->raw_len;
                w->chunk_tid = tid;
                w->chunk_gen = gen;
                w->raw_len += sizeof c;
            }
            w->chunk_prev_ts = prev;
            w->last_ts = last;
            w->raw_len += off;
            struct rs_chunk_hdr *c = (struct rs_chunk_hdr *)(w->raw + w->chunk_off);
            c->bytes += (uint32_t)off;
            w->st.events += cnt;
            consumed += off;
            total += cnt;
        }
        if (stop) break;
        if (slice_full) {
            if ((ret = stream_in(w, ZSTD_e_continue))) break;
        } else if (!off || consumed < bytes) {
            /* the frame is full: write it and go on in a new one */
            if ((ret = rs_writer_flush(w))) break;
        }
    }
    /* on an error too: what was consumed before it is in the frame (the caller accounts for it) */
    *done = consumed;
    *events = total;
    return ret;
}

static int put_events(struct rs_writer *w, uint32_t tid, const unsigned char *ev, size_t bytes)
{
    size_t done;
    uint64_t n;
    int ret = put_run(w, tid, ev, bytes, -1, &done, &n);
    return ret ? ret : done == bytes ? 0 : -EINVAL;
}

/* For the live writer thread (declared in core_int.h): events straight from a ring, already checked by
 * rs_emit, so no validation pass; see put_run for where it stops. */
int rs_writer_append_run(struct rs_writer *w, uint32_t tid, const void *events, size_t bytes, int stop_kind,
                         size_t *done, uint64_t *nevents);
int rs_writer_append_run(struct rs_writer *w, uint32_t tid, const void *events, size_t bytes, int stop_kind,
                         size_t *done, uint64_t *nevents)
{
    *done = 0;
    *nevents = 0;
    if (w->error) return w->error;
    int ret = put_run(w, tid, events, bytes, stop_kind, done, nevents);
    return ret ? fail(w, ret) : 0;
}

int rs_writer_append(struct rs_writer *w, uint32_t tid, const void *events, size_t bytes)
{
    if (w->error) return w->error;
    const unsigned char *p = events;
    for (size_t off = 0; off < bytes;) {
        struct rs_ev_hdr h;
        if (bytes - off < sizeof h) return -EINVAL;
        memcpy(&h, p + off, sizeof h);
        if (h.size < sizeof h || h.size % 8 || h.size > bytes - off) return -EINVAL;
        off += h.size;
    }
    int ret = put_events(w, tid, p, bytes);
    return ret ? fail(w, ret) : 0;
}

int rs_writer_string(struct rs_writer *w, uint32_t id, const char *s, size_t n)
{
    if (w->error) return w->error;
    if (n > RS_MAX_STRING) n = RS_MAX_STRING;
    uint64_t buf[(sizeof(struct rs_ev_STRING) + RS_MAX_STRING + 8) / 8];
    size_t size = rs_string_record(buf, w->last_ts, id, s, n);
    int ret = put_events(w, 0, (const unsigned char *)buf, size);
    return ret ? fail(w, ret) : 0;
}

static uint32_t str_hash(const char *s, size_t n) { return rs_fnv1a(s, n) | 1u; }

uint32_t rs_writer_intern_n(struct rs_writer *w, const char *s, size_t n)
{
    if (!s || w->error) return 0;
    if (n > RS_MAX_STRING) n = RS_MAX_STRING;
    if ((w->strs_n + 1) * 2 > w->strs_cap) {
        uint32_t cap = w->strs_cap ? w->strs_cap * 2 : 256;
        struct rs_str_ent *t = calloc(cap, sizeof *t); /* malloc's, as the copies it points to: LSan scans it */
        if (!t) return 0;
        for (uint32_t i = 0; i < w->strs_cap; i++) {
            if (!w->strs[i].hash) continue;
            uint32_t j = w->strs[i].hash & (cap - 1);
            while (t[j].hash) j = (j + 1) & (cap - 1);
            t[j] = w->strs[i];
        }
        free(w->strs);
        w->strs = t;
        w->strs_cap = cap;
    }
    uint32_t h = str_hash(s, n), j = h & (w->strs_cap - 1);
    for (; w->strs[j].hash; j = (j + 1) & (w->strs_cap - 1))
        if (w->strs[j].hash == h && w->strs[j].n == n && !memcmp(w->strs[j].s, s, n)) return w->strs[j].id;
    char *copy = malloc(n + 1); /* offline writers only (the live tracer's strings come from tracer/intern.c) */
    if (!copy) return 0;
    memcpy(copy, s, n);
    copy[n] = 0;
    uint32_t id = w->next_id;
    if (rs_writer_string(w, id, s, n)) {
        free(copy);
        return 0;
    }
    w->next_id++;
    w->strs[j] = (struct rs_str_ent){h, id, copy, n};
    w->strs_n++;
    return id;
}

uint32_t rs_writer_intern(struct rs_writer *w, const char *s) { return s ? rs_writer_intern_n(w, s, strlen(s)) : 0; }

int rs_writer_drops(struct rs_writer *w, uint32_t tid, uint64_t events, uint64_t bytes, uint32_t reason)
{
    w->st.drop_events += events;
    w->st.drop_bytes += bytes;
    if (w->error) return w->error;
    struct rs_ev_DROPS d;
    RS_EV_INIT(&d, DROPS, w->last_ts);
    if (!d.h.ts && w->clock_fn) {
        uint64_t real;
        w->clock_fn(w->clock_arg, &real, &d.h.ts);
    }
    d.events = events;
    d.bytes = bytes;
    d.tid = tid;
    d.reason = reason;
    int ret = put_events(w, 0, (const unsigned char *)&d, sizeof d);
    return ret ? fail(w, ret) : 0;
}

static int fd_same_file(struct rs_writer *w, int fd)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0) return -errno;
    if (w->ino && (sb.st_dev != w->dev || sb.st_ino != w->ino)) return -EBADF;
    return 0;
}

/* The file must still be the one we created: an application that closed our descriptor and got the same
 * number back for its own file must never receive trace bytes. When the descriptor is gone (closed by a
 * system call we could not see, e.g. a raw close_range) and a path was given, the file is opened again by
 * name, without following a link, and used only if it is the same file (device and inode): it is cut back
 * to the last whole frame and writing goes on there, so nothing is lost. The old number is never closed:
 * it may be the application's now. */
static int fd_is_ours(struct rs_writer *w)
{
    int e = fd_same_file(w, w->fd);
    if (!e || !w->reopen_path || !w->ino) return e;
    int fd = open(w->reopen_path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return e;
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, 100); /* clear of the numbers programs dup2() onto */
    if (hi >= 0) {
        close(fd);
        fd = hi;
    }
    if (fd_same_file(w, fd) || ftruncate(fd, (off_t)w->good_end) != 0 || lseek(fd, (off_t)w->good_end, SEEK_SET) < 0) {
        close(fd);
        return e;
    }
    w->fd = fd;
    w->st.reopens++;
    return 0;
}

void rs_writer_set_reopen(struct rs_writer *w, const char *path)
{
    rs_pm_free(w->reopen_path);
    w->reopen_path = NULL;
    if (!path) return;
    size_t n = strlen(path) + 1;
    if ((w->reopen_path = rs_pm_alloc(n))) memcpy(w->reopen_path, path, n);
}

int rs_writer_fd(const struct rs_writer *w) { return w ? w->fd : -1; }

int rs_writer_move_fd(struct rs_writer *w, int newfd)
{
    if (fd_same_file(w, newfd)) return -EBADF;
    w->fd = newfd;
    return 0;
}

void rs_writer_release_fd(struct rs_writer *w) { w->fd = -1; }

/* Give the buffered raw bytes to the zstd stream of the current frame (starting it if needed); with
 * ZSTD_e_end, finish the frame. The output accumulates in cbuf. */
static int stream_in(struct rs_writer *w, ZSTD_EndDirective end)
{
    if (!w->streaming) {
        ZSTD_CCtx_reset(w->cctx, ZSTD_reset_session_only);
        if (ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->level))) return -EIO;
        w->streaming = 1;
        w->c_len = 0;
    }
    ZSTD_inBuffer in = {w->raw, w->raw_len, 0};
    for (;;) {
        size_t need = w->c_len + ZSTD_compressBound(in.size - in.pos) + ZSTD_CStreamOutSize();
        if (need > w->cbuf_cap) {
            /* room for a whole frame at once, then doubling: never a realloc per feed */
            size_t cap = ZSTD_compressBound(RS_WRITER_FRAME_RAW) + ZSTD_CStreamOutSize();
            while (cap < need) cap *= 2;
            unsigned char *p = rs_pm_realloc(w->cbuf, cap);
            if (!p) return -ENOMEM;
            w->cbuf = p;
            w->cbuf_cap = cap;
        }
        ZSTD_outBuffer out = {w->cbuf, w->cbuf_cap, w->c_len};
        size_t r = ZSTD_compressStream2(w->cctx, &out, &in, end);
        if (ZSTD_isError(r)) return -EIO;
        w->c_len = out.pos;
        if (end != ZSTD_e_continue ? r == 0 : in.pos == in.size) break; /* e_flush/e_end: all of it out */
    }
    w->frame_base += w->raw_len;
    w->raw_len = 0;
    if (end != ZSTD_e_end) w->st.feeds++;
    chunk_close(w); /* its header went to zstd: the next event opens a new chunk */
    return 0;
}

int rs_writer_feed(struct rs_writer *w)
{
    if (w->error) return w->error;
    if (!w->raw_len) return 0;
    int ret = stream_in(w, ZSTD_e_continue);
    return ret ? fail(w, ret) : 0;
}

/* pwrite all of it (the header of a spilled frame, inside the file: never extends it) */
static int pwrite_all(int fd, const void *p, size_t n, uint64_t off)
{
    for (size_t done = 0; done < n;) {
        ssize_t k = pwrite(fd, (const char *)p + done, n - done, (off_t)(off + done));
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -errno;
        if (k == 0) return -EIO;
        done += (size_t)k;
    }
    return 0;
}

/* The trace file is still ours (fd_is_ours); if it had to be opened again, it was cut back to the last
 * whole frame, and with it the spilled part of the current frame: that is written again from the start. */
static int fd_check_spilled(struct rs_writer *w)
{
    uint64_t reopens = w->st.reopens;
    int ret = fd_is_ours(w);
    if (!ret && w->st.reopens != reopens) {
        w->spilled = 0;
        w->spilled_c = 0;
    }
    return ret;
}

int rs_writer_checkpoint(struct rs_writer *w)
{
    if (w->error) return w->error;
    if (!frame_total(w)) return 0;
    /* ZSTD_e_flush ends the current zstd block: every byte appended so far is in whole blocks, which a
     * reader can decompress without the rest of the frame (formats/SPEC.md, "open frame") */
    int ret = stream_in(w, ZSTD_e_flush);
    if (!ret) ret = fd_check_spilled(w);
    if (ret) return fail(w, ret);
    if (w->spilled && w->c_len == w->spilled_c) return 0;
    struct rs_frame_hdr open = {RS_FRAME_MAGIC, RS_MAX_FRAME_COMPRESSED, RS_MAX_FRAME_RAW, 0, w->seq};
    struct iovec iov[2];
    int n = 0;
    if (!w->spilled) iov[n++] = (struct iovec){&open, sizeof open};
    iov[n++] = (struct iovec){w->cbuf + w->spilled_c, w->c_len - w->spilled_c};
    ret = write_all(w->fd, iov, n);
    if (ret) return fail(w, ret);
    w->spilled = 1;
    w->spilled_c = w->c_len;
    w->st.checkpoints++;
    w->st.file_bytes = w->good_end + sizeof open + w->c_len;
    return 0;
}

int rs_writer_flush(struct rs_writer *w)
{
    if (w->error) return w->error;
    size_t total = frame_total(w);
    if (!total) return 0;
    size_t c;
    if (w->streaming) {
        int e = stream_in(w, ZSTD_e_end);
        if (e) return fail(w, e);
        c = w->c_len;
    } else {
        /* The whole frame at once (offline writers, and live frames no feed began). */
        size_t bound = ZSTD_compressBound(w->raw_len);
        if (bound > w->cbuf_cap) {
            unsigned char *p = rs_pm_realloc(w->cbuf, bound);
            if (!p) return fail(w, -ENOMEM);
            w->cbuf = p;
            w->cbuf_cap = bound;
        }
        if (w->threads) {
            ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->level);
            c = ZSTD_compress2(w->cctx, w->cbuf, w->cbuf_cap, w->raw, w->raw_len);
        } else {
            c = ZSTD_compressCCtx(w->cctx, w->cbuf, w->cbuf_cap, w->raw, w->raw_len, w->level);
        }
        if (ZSTD_isError(c)) return fail(w, -EIO);
    }
    if (c > UINT32_MAX || total > UINT32_MAX) return fail(w, -EFBIG);
    struct rs_frame_hdr fh = {RS_FRAME_MAGIC, (uint32_t)c, (uint32_t)total, rs_fnv1a(w->cbuf, c), w->seq};
    int ret = fd_check_spilled(w);
    if (!ret && w->spilled) {
        /* the rest of the frame's bytes, then the real header over the placeholder: a kill between the two
         * leaves an open frame whose zstd frame is whole, which readers decode to its end */
        struct iovec iov = {w->cbuf + w->spilled_c, c - w->spilled_c};
        ret = c > w->spilled_c ? write_all(w->fd, &iov, 1) : 0;
        if (!ret) ret = pwrite_all(w->fd, &fh, sizeof fh, w->good_end);
    } else if (!ret) {
        struct iovec iov[2] = {{&fh, sizeof fh}, {w->cbuf, c}};
        ret = write_all(w->fd, iov, 2);
    }
    if (ret) return fail(w, ret);
    w->seq++;
    w->good_end += sizeof fh + c;
    push_end(w);
    w->st.events_written = w->st.events;
    w->st.frames++;
    w->st.raw_bytes += total;
    w->st.file_bytes = w->good_end;
    frame_reset(w);
    return 0;
}

/* One small frame: the reason string and a PARTIAL event, at the file's current end. */
static int partial_frame(struct rs_writer *w, int err, const char *why, size_t n, uint64_t ts)
{
    w->error = 0;
    frame_reset(w);
    uint32_t id = 0x7fffffffu;
    int ret = n ? rs_writer_string(w, id, why, n) : 0;
    struct rs_ev_PARTIAL p;
    RS_EV_INIT(&p, PARTIAL, ts);
    p.err = err;
    p.why = n ? id : 0;
    if (!ret) ret = put_events(w, 0, (const unsigned char *)&p, sizeof p);
    if (!ret) ret = rs_writer_flush(w);
    return ret;
}

int rs_writer_mark_partial(struct rs_writer *w, int err, const char *why)
{
    if (fd_is_ours(w)) return -EBADF;
    int saved = w->error, ret;
    rs_writer_clock_fn fn = w->clock_fn;
    w->clock_fn = NULL; /* keep the frame as small as possible */
    size_t n = why ? strnlen(why, 200) : 0;
    uint64_t ts = 0, real;
    if (fn) fn(w->clock_arg, &real, &ts);
    for (;;) {
        /* Drop what a failed write may have left after the last whole frame, then try one tiny frame.
         * Where it does not fit either (a file size limit or a full disk that the last frame reached
         * to within a hundred bytes), give up whole frames from the end, one at a time (up to 7): a
         * file that says why it is partial is worth more than its last few milliseconds of events. */
        if (ftruncate(w->fd, (off_t)w->good_end) != 0 || lseek(w->fd, (off_t)w->good_end, SEEK_SET) < 0) {
            ret = -errno;
            break;
        }
        ret = partial_frame(w, err, why, n, ts);
        if (!ret || w->n_ends < 2) break;
        w->n_ends--;
        w->good_end = w->ends[w->n_ends - 1];
        w->seq = w->end_seqs[w->n_ends - 1];
    }
    if (ret && ftruncate(w->fd, (off_t)w->good_end) == 0) w->st.file_bytes = w->good_end; /* no torn frame */
    w->clock_fn = fn;
    w->error = saved ? saved : (ret ? ret : -EIO);
    w->st.error = w->error;
    frame_reset(w);
    return ret;
}

int rs_writer_close(struct rs_writer *w)
{
    if (!w) return 0;
    rs_writer_flush(w);
    int ret = w->error;
    if (fd_same_file(w, w->fd) == 0) { /* never close a number the application has reused */
        if (close(w->fd) != 0 && !ret) ret = -errno;
    }
    rs_pm_free(w->reopen_path);
    ZSTD_freeCCtx(w->cctx);
    for (uint32_t i = 0; i < w->strs_cap; i++) free(w->strs[i].s);
    free(w->strs);
    rs_pm_free(w->raw);
    rs_pm_free(w->cbuf);
    rs_pm_free(w);
    return ret;
}

void rs_writer_abandon(struct rs_writer *w)
{
    if (!w) return;
    /* The descriptor is closed (if still ours) and the memory left allocated. In a fork child it is the child's
     * copy-on-write pages of the parent's (nothing is written to them, so nothing is copied); freeing could wait on an
     * allocator's lock that the child inherits taken (glibc's malloc resets its own; ASan's quarantine did not: a
     * child hung in free() in one storm run of 8 under ASan, tests/hardening/sanitizers.t 5), and zstd's worker
     * threads do not exist in the child (freeing a context that has them would wait for them forever). At _exit
     * (the caller flushed first) the process ends: nothing there may wait for zstd's workers. */
    if (fd_same_file(w, w->fd) == 0) close(w->fd);
}

uint64_t rs_writer_seq(const struct rs_writer *w) { return w->seq; }

void rs_writer_stats(const struct rs_writer *w, struct rs_writer_stats *st) { *st = w->st; }
