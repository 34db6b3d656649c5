/* The trace reader (see reader.h). Hostile-input rules: every size read from the file is checked against
 * what is left before it is used; events are handed out 8-byte aligned inside our own buffer; nothing
 * the file says can make us allocate more than the RS_MAX_* limits of rtrace.h. */
#include "reader.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
/* for ZSTD_d_stableOutBuffer (zstd >= 1.4.9): a cut frame is stream-decompressed straight into its raw
 * buffer, with no window buffer of the size the (hostile) zstd frame header asks for */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#define RS_MAX_STRING_ID         (1u << 22) /* ids are dense from 1; more strings than this is not a trace */
/* Memory for string text is bounded by the file's size: 64 MiB + 16 x the file's size (a real trace
 * interns each distinct string once, and text rarely compresses 16:1; a crafted 2.5 MB file of 600 k
 * distinct 4 KiB strings decompresses to 2.4 GB). Strings beyond it are not kept (lookups return NULL, as
 * for an id never defined) and the file ends "partial" with the count (issue 17). */
#define RS_STR_BUDGET(file_size) ((64ull << 20) + 16ull * (uint64_t)(file_size))
#define RS_STR_OVERHEAD          16 /* malloc's header per kept string, counted against the budget */
/* Joined NVTX messages (nvtx_join) are not in the file as text (8 bytes a number): their own limits, the text and
 * the tables (~40 bytes a message) bounded by the file's size as the file's own strings are. */
#define RS_JN_BUDGET(file_size)  ((64ull << 20) + 64ull * (uint64_t)(file_size))
#define RS_STRLEN_MASK           0xffffu     /* str_len: the length (at most RS_MAX_STRING) ... */
#define RS_STRLEN_GEN(x)         ((x) >> 16) /* ... and the id's definitions */
_Static_assert(RS_MAX_STRING <= RS_STRLEN_MASK, "string lengths fit str_len's low bits");

/* A joined message's key: its template's definition (id and RS_STRLEN_GEN) and numbers; n = RS_JK_HASHED for the
 * template itself (its number marks counted once, its '#' form's id once made: 0 until then). */
struct jn_key {
    uint32_t tid, gen, id, n, marks, pad; /* the template's id and definition (RS_STRLEN_GEN) */
    uint64_t num[RS_NVTX_MAX_NUMS];
};
#define RS_JK_HASHED       0xffu
#define RS_JK_MIN_TEMPLATE 128 /* templates longer than this are looked up by template and numbers (nvtx_join) */

struct rs_reader {
    int fd;
    char *path;
    struct rs_header_info hdr;
    char *hdr_strs[8]; /* owned copies behind hdr's string pointers */
    struct rs_read_stats st;
    int done;
    uint64_t off; /* file offset of the next frame */
    uint64_t next_seq;

    unsigned char *ib; /* file bytes [ib_off, ib_off + ib_len): read ahead, so a file of small frames
                                 * costs one pread, not two per frame; a frame is decompressed from here */
    size_t ib_cap, ib_len;
    uint64_t ib_off;
    uint64_t *raw;       /* decompressed frame, u64 array for alignment */
    size_t raw_cap;      /* bytes */
    size_t raw_len, pos; /* bytes in raw, parse position */
    size_t chunk_end;    /* end of the current chunk in raw (0 = none open) */
    uint32_t chunk_tid, chunk_flags;
    int chunk_first;
    uint64_t chunk_prev_ts;
    uint64_t frame_idx;
    ZSTD_DCtx *dctx;

    /* RS_CHUNK_FIELD_DELTA: the previous event's fields per slot, valid for one chunk (fkey cleared when a
     * chunk opens; 0 = empty, as no valid event has size 0) */
    uint32_t fkey[RS_FD_SLOTS]; /* size << 16 | kind of the event in fw[slot] */
    uint64_t fw[RS_FD_SLOTS][16];
    size_t dec_first, dec_end; /* decoded events of the current chunk not handed out yet (offsets in raw) */
    size_t dec_n;
    uint64_t dec_frame;
    uint32_t dec_tid;
    int stop; /* a bad event ended the chunk: end of data once the prefix is handed out */

    /* A frame the file ends inside (cut: killed while writing, still being written, an open frame): raw
     * holds the raw_len bytes its available compressed bytes decompress to, a prefix of its payload. Its
     * chunks and events are checked as in a whole frame, against the frame's declared raw size; a chunk
     * that runs past raw_len is clipped there and only its events that lie whole before it are handed out. */
    int cut;
    int cut_open;               /* its header is the open-frame placeholder (SPEC.md): sizes never written */
    int chunk_clip;             /* the open chunk goes on past raw_len (its events end at the cut) */
    size_t chunk_dend;          /* ... to here: its declared end */
    uint32_t cut_comp, cut_raw; /* the header's sizes */
    size_t cut_have;            /* compressed bytes present */
    uint64_t cut_ev0;           /* st.events when the frame began */
    char cut_zerr[80];          /* why decompression stopped before the cut ("" = it reached the cut) */

    char **strs;       /* by id */
    uint32_t *str_len; /* by id: the length (low 16 bits) and how many times the id was defined (high 16: the
                        * joined messages' keys name the definition of their template, RS_STRLEN_GEN) */
    uint32_t strs_cap;
    int saw_partial;
    uint64_t str_bytes, str_budget; /* string text kept (+ per-string overhead) and its limit (RS_STR_BUDGET) */
    uint64_t str_skipped, str_skipped_bytes;
    int no_strings;    /* rs_reader_keep_strings(r, 0): STRING records are checked, not stored */
    char *partial_str; /* STRING with the writer's reserved PARTIAL id */
    uint32_t partial_len;
    char partial_why[200];
    /* NVTX messages joined from a template and its numbers (nvtx_join): id RS_NVTX_JOINED_ID + 1 + index */
    char **jn;
    uint32_t *jn_len;
    uint32_t njn, jn_cap;
    uint32_t *jn_tab; /* open addressing by the text's hash: index + 1; 0 = empty */
    uint32_t jn_tab_cap;
    uint64_t jn_bytes, jn_skipped; /* joined text kept (+ overhead); messages past RS_JN_BUDGET shown as "#" */
    /* The joined id of each (template definition, numbers) seen, so that an event's message is found without
     * joining and hashing its text (up to ~4 KiB an event: a small file of long templates took minutes); the
     * entries are counted against RS_JN_BUDGET too. Past it (jn_full, looked at again once a frame), a message
     * not seen before is shown as its template with '#' without being joined. */
    struct jn_key *jk;
    uint32_t njk, jk_cap;
    uint32_t *jk_tab; /* open addressing by the key's hash: index + 1; 0 = empty */
    uint32_t jk_tab_cap;
    int jn_full;
    uint64_t jn_full_frame;
    uint32_t jn_hashed; /* of njn: templates' '#' forms */
    uint64_t fsize;     /* the file's size when last looked at (the budgets follow it) */
};

const char *rs_read_status_name(enum rs_read_status s)
{
    switch (s) {
    case RS_READ_OK: return "complete";
    case RS_READ_NO_END: return "incomplete";
    case RS_READ_PARTIAL: return "partial";
    case RS_READ_TRUNCATED: return "truncated";
    case RS_READ_CORRUPT: return "corrupt";
    case RS_READ_BAD_VERSION: return "bad-version";
    case RS_READ_NOT_TRACE: return "not-a-trace";
    case RS_READ_IO_ERROR: return "io-error";
    }
    return "?";
}

static void set_end(struct rs_reader *r, enum rs_read_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The reason always starts with the status name ("truncated: file ends inside frame 3 ..."), here and only
 * here: every tool prints it as is and no tool has to add the name (issue s17: "truncated: truncated:"). */
static void set_end(struct rs_reader *r, enum rs_read_status s, const char *fmt, ...)
{
    r->done = 1;
    r->st.status = s;
    int k = snprintf(r->st.reason, sizeof r->st.reason, "%s: ", rs_read_status_name(s));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->st.reason + k, sizeof r->st.reason - (size_t)k, fmt, ap);
    va_end(ap);
}

/* Bytes [off, off + n) of the file (off never goes back: the header, then frame after frame). Reads ahead
 * RS_READ_AHEAD bytes at a time. Returns how many of the n are available (< n only at the end of the file)
 * with *out pointing at them, -1 on a read error (errno set) or when out of memory (ENOMEM). */
#define RS_READ_AHEAD (256u << 10)
static ssize_t ib_read(struct rs_reader *r, uint64_t off, size_t n, const unsigned char **out)
{
    if (off >= r->ib_off && off - r->ib_off <= r->ib_len && r->ib_len - (off - r->ib_off) >= n) {
        *out = r->ib + (off - r->ib_off);
        return (ssize_t)n;
    }
    size_t keep = 0; /* what is already here of [off, ...) moves to the front */
    if (off >= r->ib_off && off - r->ib_off < r->ib_len) {
        keep = r->ib_len - (size_t)(off - r->ib_off);
        memmove(r->ib, r->ib + (off - r->ib_off), keep);
    }
    size_t want = n > RS_READ_AHEAD ? n : RS_READ_AHEAD;
    if (want > r->ib_cap) {
        unsigned char *p = realloc(r->ib, want);
        if (!p) {
            errno = ENOMEM;
            return -1;
        }
        r->ib = p;
        r->ib_cap = want;
    }
    r->ib_off = off;
    r->ib_len = keep;
    /* one pread per refill: a short read is the end of the file (for now) only when the n bytes asked for
     * are not there yet, so read again only then (read_at's loop would probe the end of every file twice) */
    while (r->ib_len < n) {
        ssize_t k = pread(r->fd, r->ib + r->ib_len, want - r->ib_len, (off_t)(off + r->ib_len));
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) return -1;
        if (k == 0) break;
        r->ib_len += (size_t)k;
    }
    *out = r->ib;
    return (ssize_t)(r->ib_len < n ? r->ib_len : n);
}

/* Closed readers (the struct with its ZSTD_DCtx, buffers and string table), for the next open: a report
 * opens thousands of small files, and a fresh reader, DCtx and buffers each time cost allocation, zeroing
 * and page faults. Only moderate buffers and tables are kept, so what sits here is bounded (RS_SPARES x
 * (2 x RS_SPARE_MAX + 768 KB)). Not under
 * AddressSanitizer: a buffer handed from one reader to the next would hide use-after-close bugs. */
#if defined(__SANITIZE_ADDRESS__)
#define RS_SPARES 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RS_SPARES 0
#endif
#endif
#ifndef RS_SPARES
#define RS_SPARES 4
#endif
#define RS_SPARE_MAX (8u << 20)
#if RS_SPARES
static struct rs_reader *spares[RS_SPARES];
static int nspares;
static pthread_mutex_t spares_mu = PTHREAD_MUTEX_INITIALIZER;
#endif

/* A zeroed reader for rs_reader_open: a closed one from the pool (its DCtx, buffers and string table
 * kept, everything else cleared), else a fresh one. */
static struct rs_reader *reader_alloc(void)
{
#if RS_SPARES
    struct rs_reader *s = NULL;
    pthread_mutex_lock(&spares_mu);
    if (nspares) s = spares[--nspares];
    pthread_mutex_unlock(&spares_mu);
    if (s) {
        ZSTD_DCtx *dctx = s->dctx;
        uint64_t *raw = s->raw;
        unsigned char *ib = s->ib;
        char **strs = s->strs;
        uint32_t *str_len = s->str_len;
        size_t raw_cap = s->raw_cap, ib_cap = s->ib_cap;
        uint32_t strs_cap = s->strs_cap;
        memset(s, 0, sizeof *s);
        s->dctx = dctx;
        s->raw = raw;
        s->raw_cap = raw_cap;
        s->ib = ib;
        s->ib_cap = ib_cap;
        s->strs = strs;
        s->str_len = str_len;
        s->strs_cap = strs_cap;
        return s;
    }
#endif
    return calloc(1, sizeof(struct rs_reader));
}

/* rs_reader_close's end: 1 = r went to the pool (the caller must not free it). Its per-file state is
 * already freed; the string table is cleared, buffers above RS_SPARE_MAX are not kept. */
static int reader_give(struct rs_reader *r)
{
#if RS_SPARES
    if (!r->dctx) return 0;
    if (r->raw_cap > RS_SPARE_MAX) {
        free(r->raw);
        r->raw = NULL;
        r->raw_cap = 0;
    }
    if (r->ib_cap > RS_SPARE_MAX) {
        free(r->ib);
        r->ib = NULL;
        r->ib_cap = 0;
    }
    if (r->strs_cap > 65536) {
        free(r->strs);
        free(r->str_len);
        r->strs = NULL;
        r->str_len = NULL;
        r->strs_cap = 0;
    } else if (r->strs_cap) {
        memset(r->strs, 0, r->strs_cap * sizeof *r->strs);
        memset(r->str_len, 0, r->strs_cap * sizeof *r->str_len);
    }
    ZSTD_DCtx_reset(r->dctx, ZSTD_reset_session_and_parameters);
    int kept = 0;
    pthread_mutex_lock(&spares_mu);
    if (nspares < RS_SPARES) {
        spares[nspares++] = r;
        kept = 1;
    }
    pthread_mutex_unlock(&spares_mu);
    return kept;
#else
    (void)r;
    return 0;
#endif
}

static char *dup_n(const void *p, size_t n)
{
    char *s = malloc(n + 1);
    if (!s) return NULL;
    memcpy(s, p, n);
    s[n] = 0;
    return s;
}

static int parse_header(struct rs_reader *r, const unsigned char *p, size_t n, char *err, size_t errlen)
{
    struct rs_header_info *h = &r->hdr;
    h->rank = h->local_rank = h->world_size = -1;
    int nstr = 0;
    size_t off = 0;
    while (off < n) {
        if (n - off < 4) {
            snprintf(err, errlen, "header: %zu stray bytes at the end", n - off);
            return -1;
        }
        uint16_t tag, len;
        memcpy(&tag, p + off, 2);
        memcpy(&len, p + off + 2, 2);
        off += 4;
        if (len > n - off) {
            snprintf(err, errlen, "header: field %u claims %u bytes, %zu left", tag, len, n - off);
            return -1;
        }
        const unsigned char *v = p + off;
        off += len;
        uint64_t u = 0;
        if (len == 8) memcpy(&u, v, 8);
        const char **sp = NULL;
        switch (tag) {
        case RS_HDR_HOST: sp = &h->host; break;
        case RS_HDR_CMDLINE: sp = &h->cmdline; break;
        case RS_HDR_CLOCK: sp = &h->clock; break;
        case RS_HDR_EVENTS: sp = &h->events; break;
        case RS_HDR_TRACER_VERSION: sp = &h->tracer_version; break;
        case RS_HDR_EXE: sp = &h->exe; break;
        case RS_HDR_BOOT_ID: sp = &h->boot_id; break;
        case RS_HDR_PID:
            if (len == 8) h->pid = u;
            break;
        case RS_HDR_PPID:
            if (len == 8) h->ppid = u;
            break;
        case RS_HDR_RANK:
            if (len == 8) h->rank = (int64_t)u;
            break;
        case RS_HDR_LOCAL_RANK:
            if (len == 8) h->local_rank = (int64_t)u;
            break;
        case RS_HDR_WORLD_SIZE:
            if (len == 8) h->world_size = (int64_t)u;
            break;
        case RS_HDR_START_REALTIME:
            if (len == 8) h->start_realtime = u;
            break;
        case RS_HDR_START_MONO:
            if (len == 8) h->start_mono = u;
            break;
        default: break; /* unknown tags: newer minor version, skipped */
        }
        if (sp && !*sp && nstr < 8) {
            char *s = dup_n(v, len);
            if (!s) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            r->hdr_strs[nstr++] = s;
            *sp = s;
            if (sp == &h->cmdline) h->cmdline_len = len; /* a repeated tag keeps the first, length too */
        }
    }
    return 0;
}

/* Per kind, what the decode loop checks: the fixed size (known kinds), KI_UNKNOWN (kinds this reader does
 * not know: counted, skipped by size) and KI_SPECIAL (the core records the reader itself acts on). One
 * table load and one rarely taken branch per event instead of descriptor lookups. kfast[] folds all three
 * into one compare: an event needs the slow path when its size is below kfast[kind] (the fixed size of an
 * ordinary known kind; KF_SLOW, above any valid size, for unknown and special kinds). */
#define KI_SIZE    0xffffu
#define KI_UNKNOWN (1u << 16)
#define KI_SPECIAL (1u << 17)
#define KF_SLOW    0xffffu /* valid sizes are multiples of 8, so never reach it */
static uint32_t kinfo[RS_EV_COUNT];
static uint16_t kfast[65536]; /* by any 16-bit kind: no range check in the loop (only touched lines load) */
static pthread_once_t kinfo_once = PTHREAD_ONCE_INIT;
static void kinfo_init(void)
{
    for (unsigned k = RS_EV_COUNT; k < 65536; k++) kfast[k] = KF_SLOW;
    for (unsigned k = 0; k < RS_EV_COUNT; k++) {
        if (!rs_kind_known(k)) kinfo[k] = KI_UNKNOWN;
        else kinfo[k] = rs_kinds[k].size;
        if (k == RS_EV_STRING || k == RS_EV_DROPS || k == RS_EV_PROC_END || k == RS_EV_PARTIAL) kinfo[k] |= KI_SPECIAL;
        /* NVTX events may carry their message's numbers after their fields (nvtx_join) */
        if (k == RS_EV_NVTX_PUSH || k == RS_EV_NVTX_START || k == RS_EV_NVTX_MARK) kinfo[k] |= KI_SPECIAL;
        kfast[k] = (kinfo[k] & (KI_UNKNOWN | KI_SPECIAL)) ? KF_SLOW : (uint16_t)(kinfo[k] & KI_SIZE);
    }
}

struct rs_reader *rs_reader_open(const char *path, char *err, size_t errlen)
{
    /* O_NONBLOCK: a FIFO (or a device) put where a trace was expected must not block the open; only a
     * regular file is read (issue 17 D11). The flag changes nothing for regular files. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    if (!S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "%s: %s", path,
                 S_ISDIR(sb.st_mode) ? "is a directory"
                                     : "is not a regular file (a FIFO, device or socket is not read)");
        close(fd);
        return NULL;
    }
    struct rs_reader *r = reader_alloc();
    if (!r) {
        snprintf(err, errlen, "%s: out of memory", path);
        close(fd);
        return NULL;
    }
    r->str_budget = RS_STR_BUDGET(sb.st_size);
    r->fsize = (uint64_t)sb.st_size;
    pthread_once(&kinfo_once, kinfo_init);
    r->fd = fd;
    r->path = strdup(path);
    struct rs_file_preamble pre;
    const unsigned char *b;
    ssize_t k = ib_read(r, 0, sizeof pre, &b);
    if (k < 0 && errno == EISDIR) { /* open() takes a directory; its first read says what it is */
        snprintf(err, errlen, "%s: is a directory", path);
        goto fail;
    }
    if (k < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto fail;
    }
    if (k == 0) {
        snprintf(err, errlen, "%s: empty file, not a railscope trace", path);
        goto fail;
    }
    memset(&pre, 0, sizeof pre);
    memcpy(&pre, b, (size_t)k);
    if ((size_t)k < 8 || memcmp(pre.magic, RS_MAGIC, 8)) {
        snprintf(err, errlen, "%s: not a railscope trace (no %s magic)", path, RS_MAGIC);
        goto fail;
    }
    if ((size_t)k < sizeof pre) {
        snprintf(err, errlen, "%s: truncated inside the file preamble (%zd bytes)", path, k);
        goto fail;
    }
    r->hdr.major = pre.major;
    r->hdr.minor = pre.minor;
    if (pre.major != RS_FORMAT_MAJOR) {
        snprintf(err, errlen, "%s: format version %u.%u, this railscope reads %u.x", path, pre.major, pre.minor,
                 RS_FORMAT_MAJOR);
        goto fail;
    }
    if (pre.header_bytes > RS_MAX_HEADER_BYTES) {
        snprintf(err, errlen, "%s: corrupt: header of %u bytes (limit %u)", path, pre.header_bytes,
                 RS_MAX_HEADER_BYTES);
        goto fail;
    }
    k = ib_read(r, sizeof pre, pre.header_bytes, &b);
    if (k < 0 && errno == ENOMEM) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    if (k < 0 || (size_t)k < pre.header_bytes) {
        snprintf(err, errlen, "%s: truncated inside the file header", path);
        goto fail;
    }
    char herr[200];
    if (parse_header(r, b, pre.header_bytes, herr, sizeof herr)) {
        snprintf(err, errlen, "%s: corrupt: %s", path, herr);
        goto fail;
    }
    r->off = sizeof pre + pre.header_bytes;
    r->st.bytes_read = r->off;
    if (!r->dctx) r->dctx = ZSTD_createDCtx();
    if (!r->dctx) {
        snprintf(err, errlen, "%s: out of memory", path);
        goto fail;
    }
    snprintf(r->st.reason, sizeof r->st.reason, "not read yet");
    return r;
fail:
    rs_reader_close(r);
    return NULL;
}

void rs_reader_keep_strings(struct rs_reader *r, int keep) { r->no_strings = !keep; }
const struct rs_header_info *rs_reader_header(const struct rs_reader *r) { return &r->hdr; }
const char *rs_reader_path(const struct rs_reader *r) { return r->path; }
const struct rs_read_stats *rs_reader_stats(const struct rs_reader *r) { return &r->st; }

#define RS_PARTIAL_STRING_ID 0x7fffffffu /* the writer's id for the PARTIAL reason (writer.c) */

const char *rs_reader_string(const struct rs_reader *r, uint32_t id, size_t *len)
{
    if (id == RS_PARTIAL_STRING_ID) {
        if (len) *len = r->partial_len;
        return r->partial_str;
    }
    if (id > RS_NVTX_JOINED_ID) {
        uint32_t i = id - RS_NVTX_JOINED_ID - 1;
        if (i >= r->njn) return NULL;
        if (len) *len = r->jn_len[i];
        return r->jn[i];
    }
    if (id == 0 || id >= r->strs_cap || !r->strs[id]) return NULL;
    if (len) *len = r->str_len[id] & RS_STRLEN_MASK;
    return r->strs[id];
}

/* Text the string budget has room for (n bytes more): looked at again against the file's size now, since a
 * file still being written may have grown. */
static int str_room(struct rs_reader *r, uint64_t need)
{
    if (need > r->str_budget) {
        struct stat sb;
        if (fstat(r->fd, &sb) == 0) {
            r->str_budget = RS_STR_BUDGET(sb.st_size);
            r->fsize = (uint64_t)sb.st_size;
        }
    }
    return need <= r->str_budget;
}

static uint32_t jn_hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

/* An open-addressing table of indexes + 1 (0 = empty) with room for one more of n: at most half full, else grown and
 * every index placed again. 0, or -1 when out of memory. */
static int tab_room(const struct rs_reader *r, uint32_t **tab, uint32_t *tab_cap, uint32_t n,
                    uint32_t (*hash_at)(const struct rs_reader *, uint32_t))
{
    if (2 * (n + 1) <= *tab_cap) return 0;
    uint32_t cap = *tab_cap ? 2 * *tab_cap : 1024, j;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t) return -1;
    for (uint32_t i = 0; i < n; i++) {
        for (j = hash_at(r, i) & (cap - 1); t[j]; j = (j + 1) & (cap - 1)) {}
        t[j] = i + 1;
    }
    free(*tab);
    *tab = t;
    *tab_cap = cap;
    return 0;
}

static uint32_t jn_hash_at(const struct rs_reader *r, uint32_t i) { return jn_hash(r->jn[i], r->jn_len[i]); }

/* The id of a joined message (one per distinct text), 0 when it cannot be kept (memory, or past the joined
 * messages' limits unless `always`: a template's readable form, few per file, is kept past them). */
static uint32_t jn_store(struct rs_reader *r, const char *s, size_t n, int always)
{
    uint32_t h = jn_hash(s, n), j;
    if (r->jn_tab_cap)
        for (j = h & (r->jn_tab_cap - 1); r->jn_tab[j]; j = (j + 1) & (r->jn_tab_cap - 1)) {
            uint32_t i = r->jn_tab[j] - 1;
            if (r->jn_len[i] == n && !memcmp(r->jn[i], s, n)) return RS_NVTX_JOINED_ID + 1 + i;
        }
    uint64_t need = r->jn_bytes + n + 1 + 40;
    if (need > RS_JN_BUDGET(r->fsize) && !r->jn_full) { /* a file still being written may have grown: look again */
        struct stat sb;                                 /* (past the limits: once a frame, jn_past_limits) */
        if (fstat(r->fd, &sb) == 0) r->fsize = (uint64_t)sb.st_size;
    }
    if (r->njn >= RS_NVTX_MAX_JOINED - 1 || (!always && need > RS_JN_BUDGET(r->fsize))) return 0;
    if (tab_room(r, &r->jn_tab, &r->jn_tab_cap, r->njn, jn_hash_at)) return 0;
    if (r->njn == r->jn_cap) {
        uint32_t cap = r->jn_cap ? 2 * r->jn_cap : 256;
        char **a = realloc(r->jn, cap * sizeof *a);
        if (!a) return 0;
        r->jn = a;
        uint32_t *l = realloc(r->jn_len, cap * sizeof *l);
        if (!l) return 0;
        r->jn_len = l;
        r->jn_cap = cap;
    }
    char *c = dup_n(s, n);
    if (!c) return 0;
    for (j = h & (r->jn_tab_cap - 1); r->jn_tab[j]; j = (j + 1) & (r->jn_tab_cap - 1)) {}
    r->jn_tab[j] = r->njn + 1;
    r->jn[r->njn] = c;
    r->jn_len[r->njn] = (uint32_t)n;
    r->jn_bytes = need;
    return RS_NVTX_JOINED_ID + 1 + r->njn++;
}

/* An NVTX event with numbers after its fields (size beyond the kind's): its message joined back from the
 * template it names. A template unknown here, or whose marks are not the event's numbers (damage), leaves
 * the event as it is: its message then reads as the template. */
static uint32_t *nvtx_msg(struct rs_ev_hdr *h)
{
    return h->kind == RS_EV_NVTX_PUSH    ? &((struct rs_ev_NVTX_PUSH *)h)->message
           : h->kind == RS_EV_NVTX_START ? &((struct rs_ev_NVTX_START *)h)->message
                                         : &((struct rs_ev_NVTX_MARK *)h)->message;
}

static uint32_t jk_hash(uint32_t tid, uint32_t gen, unsigned n, const uint64_t *num)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ ((uint64_t)tid << 24 | (uint64_t)gen << 8 | n);
    for (unsigned i = 0; n != RS_JK_HASHED && i < n; i++) h = (h ^ num[i]) * 0x100000001b3ull ^ (h >> 29);
    h ^= h >> 32;
    return (uint32_t)h;
}

static uint32_t jk_hash_at(const struct rs_reader *r, uint32_t i)
{
    return jk_hash(r->jk[i].tid, r->jk[i].gen, r->jk[i].n, r->jk[i].num);
}

/* The entry of (tid, gen, n, num), NULL when not seen. */
static struct jn_key *jk_find(const struct rs_reader *r, uint32_t tid, uint32_t gen, unsigned n, const uint64_t *num)
{
    if (!r->jk_tab_cap) return NULL;
    unsigned k = n == RS_JK_HASHED ? 0 : n;
    for (uint32_t j = jk_hash(tid, gen, n, num) & (r->jk_tab_cap - 1); r->jk_tab[j];
         j = (j + 1) & (r->jk_tab_cap - 1)) {
        struct jn_key *e = &r->jk[r->jk_tab[j] - 1];
        if (e->tid == tid && e->gen == gen && e->n == n && (!k || !memcmp(e->num, num, 8 * (size_t)k))) return e;
    }
    return NULL;
}

/* Remember id for (tid, gen, n, num): within RS_JN_BUDGET unless `always` (a template's entry, one per definition:
 * bounded by the file's strings). A key not kept only costs a join the next time. The entry, NULL when not kept
 * (valid until the next jk_add). */
static struct jn_key *jk_add(struct rs_reader *r, uint32_t tid, uint32_t gen, unsigned n, const uint64_t *num,
                             uint32_t id, uint32_t marks, int always)
{
    uint64_t need = r->jn_bytes + sizeof(struct jn_key) + 2 * sizeof(uint32_t);
    if ((!always && need > RS_JN_BUDGET(r->fsize)) || r->njk >= RS_NVTX_MAX_JOINED) return NULL;
    if (tab_room(r, &r->jk_tab, &r->jk_tab_cap, r->njk, jk_hash_at)) return NULL;
    if (r->njk == r->jk_cap) {
        uint32_t cap = r->jk_cap ? 2 * r->jk_cap : 256;
        struct jn_key *a = realloc(r->jk, cap * sizeof *a);
        if (!a) return NULL;
        r->jk = a;
        r->jk_cap = cap;
    }
    struct jn_key *e = &r->jk[r->njk];
    *e = (struct jn_key){.tid = tid, .gen = gen, .id = id, .n = n, .marks = marks};
    if (n != RS_JK_HASHED) memcpy(e->num, num, 8 * (size_t)n);
    uint32_t j;
    for (j = jk_hash(tid, gen, n, e->num) & (r->jk_tab_cap - 1); r->jk_tab[j]; j = (j + 1) & (r->jk_tab_cap - 1)) {}
    r->jk_tab[j] = ++r->njk;
    r->jn_bytes = need;
    return e;
}

/* Past the joined messages' limits (set when a message could not be kept): looked at again once a frame, since a
 * file still being written may have grown. */
static int jn_past_limits(struct rs_reader *r)
{
    if (!r->jn_full || r->jn_full_frame == r->frame_idx) return r->jn_full;
    r->jn_full_frame = r->frame_idx;
    struct stat sb;
    if (fstat(r->fd, &sb) == 0 && (uint64_t)sb.st_size > r->fsize) {
        r->fsize = (uint64_t)sb.st_size;
        r->jn_full = 0;
    }
    return r->jn_full;
}

static void nvtx_join(struct rs_reader *r, struct rs_ev_hdr *h, unsigned fixed)
{
    uint32_t *msg = nvtx_msg(h);
    unsigned n = (h->size - fixed) / 8;
    size_t tlen;
    const char *t = rs_reader_string(r, *msg, &tlen);
    if (r->no_strings || !t || n > RS_NVTX_MAX_NUMS) return;
    uint64_t num[RS_NVTX_MAX_NUMS];
    memcpy(num, (const char *)h + fixed, 8 * (size_t)n);
    /* a template is one of the file's own strings (a joined id or the PARTIAL text is none: left as it is) */
    uint32_t tid = *msg;
    if (tid >= r->strs_cap || tid > RS_MAX_STRING_ID || !r->strs[tid]) return;
    /* A long template's messages are found again by template and numbers: joining, hashing and comparing its text
     * at every event made a 6 KB file of 900k events naming a 4 KiB template take 30 s to report. A short one's
     * are joined every time, cheaper than that table (400k distinct "step N" read 25 % slower with it). */
    int keyed = tlen > RS_JK_MIN_TEMPLATE, past = jn_past_limits(r);
    uint32_t gen = RS_STRLEN_GEN(r->str_len[tid]);
    struct jn_key *te = NULL;
    if (keyed) {
        struct jn_key *e = jk_find(r, tid, gen, n, num);
        if (e) {
            *msg = e->id;
            return;
        }
        /* its marks, counted once: an event whose numbers are not its marks (damage) stays as it is */
        if (!(te = jk_find(r, tid, gen, RS_JK_HASHED, NULL))) {
            uint32_t marks = 0;
            for (size_t i = 0; i < tlen; i++) marks += (unsigned char)t[i] == RS_NVTX_NUM_MARK;
            if (!(te = jk_add(r, tid, gen, RS_JK_HASHED, NULL, 0, marks, 1))) return;
        }
        if (te->marks != n) return;
    }
    char out[RS_MAX_STRING + 20 * RS_NVTX_MAX_NUMS + 1];
    uint32_t id;
    if (!keyed || !past) { /* past the limits a long template's message is not joined at all */
        long len = rs_nvtx_join(t, tlen, num, n, out, sizeof out);
        r->st.nvtx_joins++;
        if (len < 0) return; /* marks that are not the numbers (damage): the event as it is */
        uint32_t before = r->njn;
        if ((id = jn_store(r, out, (size_t)len, 0))) {
            /* a new message's key is always kept (bounded with the messages); another key of a text already
             * kept (only a damaged or hostile file makes one) within the limits */
            if (keyed) jk_add(r, tid, gen, n, num, id, n, r->njn != before);
            *msg = id;
            return;
        }
        if (!r->jn_full) {
            r->jn_full = 1;
            r->jn_full_frame = r->frame_idx;
        }
        if (keyed && !(te = jk_find(r, tid, gen, RS_JK_HASHED, NULL))) return; /* jk_add may have moved it */
    }
    /* past the limits: the template with '#' for its numbers, readable and counted (partial), made once */
    r->jn_skipped++;
    if (te && te->id) {
        *msg = te->id;
        return;
    }
    memcpy(out, t, tlen);
    for (size_t i = 0; i < tlen; i++)
        if ((unsigned char)out[i] == RS_NVTX_NUM_MARK) out[i] = '#';
    out[tlen] = 0;
    uint32_t before = r->njn;
    id = jn_store(r, out, tlen, 1);
    r->jn_hashed += r->njn != before;
    if (te) te->id = id;
    if (id) *msg = id;
}

static int store_string(struct rs_reader *r, uint32_t id, const char *s, uint32_t n)
{
    if (id == 0) return -1;
    char *c;
    if (id == RS_PARTIAL_STRING_ID) { /* kept aside: the table stays sized by the dense ids */
        if (!(c = dup_n(s, n))) return -1;
        free(r->partial_str);
        r->partial_str = c;
        r->partial_len = n;
        return 0;
    }
    if (id > RS_MAX_STRING_ID) return -1;
    if (r->no_strings) return 0;
    uint32_t slot = id;
    if (slot >= r->strs_cap) {
        uint32_t cap = r->strs_cap ? r->strs_cap : 256;
        while (cap <= slot) cap *= 2;
        if (cap > RS_MAX_STRING_ID + 1) cap = RS_MAX_STRING_ID + 1; /* bounded memory (~50 MB worst case) */
        char **ns = realloc(r->strs, cap * sizeof *ns);
        if (!ns) return -1;
        r->strs = ns;
        uint32_t *nl = realloc(r->str_len, cap * sizeof *nl);
        if (!nl) return -1;
        r->str_len = nl;
        memset(ns + r->strs_cap, 0, (cap - r->strs_cap) * sizeof *ns);
        memset(nl + r->strs_cap, 0, (cap - r->strs_cap) * sizeof *nl);
        r->strs_cap = cap;
    }
    uint32_t gen = RS_STRLEN_GEN(r->str_len[slot]) + 1; /* wraps after 65535 definitions of one id: harmless */
    uint64_t old = r->strs[slot] ? (uint64_t)(r->str_len[slot] & RS_STRLEN_MASK) + 1 + RS_STR_OVERHEAD : 0;
    uint64_t need = r->str_bytes - old + n + 1 + RS_STR_OVERHEAD;
    if (!str_room(r, need)) {
        r->str_skipped++;
        r->st.strings_not_kept++;
        r->str_skipped_bytes += n;
        free(r->strs[slot]); /* a redefinition must not leave the old text behind the id */
        r->strs[slot] = NULL;
        r->str_len[slot] = gen << 16;
        r->str_bytes -= old;
        return 0;
    }
    if (!(c = dup_n(s, n))) return -1;
    free(r->strs[slot]);
    r->strs[slot] = c;
    r->str_len[slot] = n | gen << 16;
    r->str_bytes = need;
    return 0;
}

static int raw_reserve(struct rs_reader *r, uint32_t n)
{
    if (n <= r->raw_cap) return 0;
    /* 16 bytes of slack: the decode loop reads an event header before it knows 16 bytes are left */
    uint64_t *p = realloc(r->raw, (size_t)n + 16);
    if (!p) return -1;
    r->raw = p;
    r->raw_cap = n;
    return 0;
}

static void kib(char *b, size_t n, uint64_t bytes)
{
    if (!bytes) snprintf(b, n, "0");
    else if (bytes < 10240) snprintf(b, n, "%.1f", (double)bytes / 1024);
    else snprintf(b, n, "%.0f", (double)bytes / 1024);
}

/* The end of a cut frame's decoded bytes is reached (pending: events decoded in this batch, not handed out
 * yet): the file's status, with what was recovered. */
static void cut_end(struct rs_reader *r, size_t pending)
{
    uint64_t n = r->st.events - r->cut_ev0 + pending;
    char got[32], of[32];
    r->st.cut_events = n;
    r->st.cut_raw_bytes = r->raw_len;
    kib(got, sizeof got, r->raw_len);
    kib(of, sizeof of, r->cut_raw);
    unsigned long long f = (unsigned long long)r->frame_idx - 1;
    if (r->cut_zerr[0])
        set_end(r, RS_READ_CORRUPT,
                "file ends inside frame %llu, whose %zu bytes stop decompressing after %s KiB (%s): %llu events "
                "recovered before it",
                f, r->cut_have, got, r->cut_zerr, (unsigned long long)n);
    else if (r->cut_open)
        set_end(r, RS_READ_TRUNCATED,
                "file ends inside frame %llu, still open (%zu bytes; %s KiB decoded, %llu events recovered; "
                "killed or still being written?)",
                f, r->cut_have, got, (unsigned long long)n);
    else
        set_end(r, RS_READ_TRUNCATED,
                "file ends inside frame %llu (%zu of %u bytes; %s of %s KiB decoded, %llu events recovered; killed "
                "or still being written?)",
                f, r->cut_have, r->cut_comp, got, of, (unsigned long long)n);
}

/* A frame the file ends inside: decompress what is there, a zstd block at a time (zstd decodes a block only
 * once all of it is in, so raw gets the output of every whole block, a prefix of the payload), and make it
 * the current frame, flagged cut. Its checksum covers bytes that are not there: the prefix is checked only
 * by zstd and by the chunk and event checks. Returns 1 (a cut frame is loaded, maybe with 0 bytes), 0 end
 * (status set). */
static int load_cut_frame(struct rs_reader *r, const struct rs_frame_hdr *fh, const unsigned char *cb, size_t have)
{
    if (raw_reserve(r, fh->raw)) {
        set_end(r, RS_READ_IO_ERROR, "out of memory");
        return 0;
    }
    r->cut = 1;
    r->cut_open = fh->compressed == RS_MAX_FRAME_COMPRESSED && fh->raw == RS_MAX_FRAME_RAW && fh->checksum == 0;
    r->cut_comp = fh->compressed;
    r->cut_raw = fh->raw;
    r->cut_have = have;
    r->cut_ev0 = r->st.events;
    r->cut_zerr[0] = 0;
    ZSTD_DCtx_reset(r->dctx, ZSTD_reset_session_and_parameters);
    /* output straight into raw, never past the declared size (more is an error); without it (an older
     * libzstd) the window zstd buffers is bounded by the largest raw frame */
#ifdef ZSTD_d_stableOutBuffer
    if (ZSTD_isError(ZSTD_DCtx_setParameter(r->dctx, ZSTD_d_stableOutBuffer, 1)))
#endif
        ZSTD_DCtx_setParameter(r->dctx, ZSTD_d_windowLogMax, 26);
    ZSTD_outBuffer out = {r->raw, fh->raw, 0};
    ZSTD_inBuffer in = {cb, 0, 0};
    size_t hint = 32; /* a zstd frame header at most; then zstd's own hint: the next block */
    while (in.pos < have) {
        size_t ipos = in.pos, opos = out.pos;
        in.size = in.pos + (hint < have - in.pos ? hint : have - in.pos);
        size_t ret = ZSTD_decompressStream(r->dctx, &out, &in);
        if (ZSTD_isError(ret)) {
            snprintf(r->cut_zerr, sizeof r->cut_zerr, "%s", ZSTD_getErrorName(ret));
            break;
        }
        if (ret == 0) { /* the zstd frame ended (an open frame whose writer died before its header) */
            if (in.pos < have) snprintf(r->cut_zerr, sizeof r->cut_zerr, "bytes after the end of its zstd frame");
            break;
        }
        if (in.pos == ipos && out.pos == opos && in.pos < in.size) { /* no progress: output full */
            snprintf(r->cut_zerr, sizeof r->cut_zerr, "more than its %u bytes", fh->raw);
            break;
        }
        hint = ret;
    }
    ZSTD_DCtx_reset(r->dctx, ZSTD_reset_session_and_parameters);
    r->raw_len = out.pos;
    /* what the decode loop may read past the cut (an event header half there) is zeros, not stale bytes */
    memset((unsigned char *)r->raw + r->raw_len, 0, 16);
    r->pos = 0;
    r->chunk_end = 0;
    r->frame_idx++;
    if (fh->seq != r->next_seq) r->st.frame_gaps++;
    r->next_seq = fh->seq + 1;
    return 1;
}

/* Load the next frame into raw. Returns 1 loaded, 0 end (status set). */
static int load_frame(struct rs_reader *r)
{
    struct rs_frame_hdr fh;
    const unsigned char *b;
    ssize_t k = ib_read(r, r->off, sizeof fh, &b);
    if (k < 0) {
        if (errno == ENOMEM) set_end(r, RS_READ_IO_ERROR, "out of memory");
        else set_end(r, RS_READ_IO_ERROR, "read error at offset %llu: %s", (unsigned long long)r->off, strerror(errno));
        return 0;
    }
    if (k == 0) {
        if (r->saw_partial)
            set_end(r, RS_READ_PARTIAL, "the recorder marked this trace incomplete (%s)", r->partial_why);
        else if (r->jn_skipped && !r->str_skipped)
            set_end(r, RS_READ_PARTIAL,
                    "%llu NVTX messages shown with '#' for their numbers: the %u distinct messages with numbers "
                    "before them reached the reader's limit of %.0f MB (64 MiB + 64 x the file's size)",
                    (unsigned long long)r->jn_skipped, r->njn - r->jn_hashed, (double)RS_JN_BUDGET(r->fsize) / 1e6);
        else if (r->str_skipped)
            set_end(r, RS_READ_PARTIAL,
                    "%llu strings (%.1f MB) not kept: the file's string text passes the reader's limit of "
                    "%.0f MB (64 MiB + 16 x the file's size)",
                    (unsigned long long)r->str_skipped, (double)r->str_skipped_bytes / 1e6,
                    (double)r->str_budget / 1e6);
        else if (r->st.proc_end)
            set_end(r, RS_READ_OK, "%llu frames, ends at a frame boundary", (unsigned long long)r->st.frames);
        else /* every whole frame decodes, but the writer never said it was done: a killed or a live process */
            set_end(r, RS_READ_NO_END,
                    "%llu frames, ends at a frame boundary, but no PROC_END: the process was killed, "
                    "crashed, is still running or lost its trace descriptor, so the trace is partial (what came "
                    "after its last flush is missing)",
                    (unsigned long long)r->st.frames);
        return 0;
    }
    if ((size_t)k < sizeof fh) {
        set_end(r, RS_READ_TRUNCATED, "file ends inside the header of frame %llu (%llu whole frames)",
                (unsigned long long)r->frame_idx, (unsigned long long)r->st.frames);
        return 0;
    }
    memcpy(&fh, b, sizeof fh);
    if (fh.magic != RS_FRAME_MAGIC) {
        set_end(r, RS_READ_CORRUPT, "no frame magic at offset %llu (frame %llu)", (unsigned long long)r->off,
                (unsigned long long)r->frame_idx);
        return 0;
    }
    if (fh.compressed == 0 || fh.compressed > RS_MAX_FRAME_COMPRESSED || fh.raw == 0 || fh.raw > RS_MAX_FRAME_RAW ||
        fh.raw % 8) {
        set_end(r, RS_READ_CORRUPT, "frame %llu has impossible sizes (%u compressed, %u raw)",
                (unsigned long long)r->frame_idx, fh.compressed, fh.raw);
        return 0;
    }
    const unsigned char *cb;
    size_t want = fh.compressed;
    if (want > RS_READ_AHEAD) { /* a large frame may be cut (an open frame's sizes are the limits): read what is
                                 * there, not a 64 MiB buffer for a few kilobytes */
        struct stat sb;
        uint64_t at = r->off + sizeof fh;
        if (fstat(r->fd, &sb) == 0 && (uint64_t)sb.st_size >= at && (uint64_t)sb.st_size - at < want)
            want = (size_t)((uint64_t)sb.st_size - at);
    }
    k = want ? ib_read(r, r->off + sizeof fh, want, &cb) : 0;
    if (k < 0) {
        if (errno == ENOMEM) set_end(r, RS_READ_IO_ERROR, "out of memory");
        else set_end(r, RS_READ_IO_ERROR, "read error: %s", strerror(errno));
        return 0;
    }
    if ((size_t)k < fh.compressed) return load_cut_frame(r, &fh, k ? cb : NULL, (size_t)k);
    if (rs_fnv1a(cb, fh.compressed) != fh.checksum) {
        set_end(r, RS_READ_CORRUPT, "checksum mismatch in frame %llu at offset %llu", (unsigned long long)r->frame_idx,
                (unsigned long long)r->off);
        return 0;
    }
    if (raw_reserve(r, fh.raw)) {
        set_end(r, RS_READ_IO_ERROR, "out of memory");
        return 0;
    }
    size_t got = ZSTD_decompressDCtx(r->dctx, r->raw, fh.raw, cb, fh.compressed);
    if (ZSTD_isError(got) || got != fh.raw) {
        set_end(r, RS_READ_CORRUPT, "frame %llu does not decompress to its %u bytes (%s)",
                (unsigned long long)r->frame_idx, fh.raw, ZSTD_isError(got) ? ZSTD_getErrorName(got) : "size");
        return 0;
    }
    if (fh.seq != r->next_seq) r->st.frame_gaps++;
    r->next_seq = fh.seq + 1;
    r->off += sizeof fh + fh.compressed;
    r->raw_len = fh.raw;
    r->pos = 0;
    r->chunk_end = 0;
    r->frame_idx++;
    return 1;
}

/* Open the next chunk (loading frames as needed). 1 = a chunk is open at r->pos, 0 = end (status set). */
static int open_chunk(struct rs_reader *r)
{
    for (;;) {
        if (r->cut && r->pos >= r->raw_len) { /* the end of what the cut frame decoded to */
            cut_end(r, 0);
            return 0;
        }
        if (!r->raw || r->pos >= r->raw_len) {
            if (r->raw_len) {
                /* the frame just finished decoded cleanly */
                r->st.frames++;
                r->st.bytes_read = r->off;
                r->raw_len = 0;
            }
            if (!load_frame(r)) return 0;
        }
        const unsigned char *raw = (const unsigned char *)r->raw;
        struct rs_chunk_hdr c;
        if (r->raw_len - r->pos < sizeof c) {
            if (r->cut) { /* the cut is inside this chunk header */
                cut_end(r, 0);
                return 0;
            }
            set_end(r, RS_READ_CORRUPT, "frame %llu ends inside a chunk header", (unsigned long long)r->frame_idx - 1);
            return 0;
        }
        memcpy(&c, raw + r->pos, sizeof c);
        const size_t flen = r->cut ? r->cut_raw : r->raw_len; /* the frame's payload size, decoded or not */
        if (c.magic != RS_CHUNK_MAGIC || c.bytes % 8 || c.bytes > flen - r->pos - sizeof c) {
            set_end(r, RS_READ_CORRUPT, "bad chunk at byte %zu of frame %llu", r->pos,
                    (unsigned long long)r->frame_idx - 1);
            return 0;
        }
        if (c.flags & ~(RS_CHUNK_TS_DELTA | RS_CHUNK_FIELD_DELTA)) {
            set_end(r, RS_READ_CORRUPT, "unknown chunk encoding flags 0x%x (written by a newer railscope?)", c.flags);
            return 0;
        }
        r->pos += sizeof c;
        r->chunk_end = r->pos + c.bytes;
        r->chunk_dend = r->chunk_end;
        r->chunk_clip = r->chunk_end > r->raw_len; /* a cut frame's chunk that the cut goes through */
        if (r->chunk_clip) r->chunk_end = r->raw_len;
        r->chunk_tid = c.tid;
        r->chunk_flags = c.flags;
        r->chunk_first = 1;
        memset(r->fkey, 0, sizeof r->fkey);
        if (r->chunk_end > r->pos) return 1;
        r->chunk_end = 0; /* an empty chunk (or one cut before its first byte): nothing to hand out */
    }
}

/* The reader's own bookkeeping for the few core kinds it acts on. 0 = fine, -1 = corrupt (status set). */
static int special_event(struct rs_reader *r, struct rs_ev_hdr *h)
{
    if (h->kind == RS_EV_STRING) {
        const struct rs_ev_STRING *s = (const void *)h;
        if (s->len > h->size - sizeof *s || s->len > RS_MAX_STRING ||
            store_string(r, s->id, (const char *)(s + 1), s->len)) {
            set_end(r, RS_READ_CORRUPT, "bad string record (id %u, %u bytes)", s->id, s->len);
            return -1;
        }
    } else if (h->kind == RS_EV_DROPS) {
        const struct rs_ev_DROPS *dr = (const void *)h;
        r->st.drop_events += dr->events;
        r->st.drop_bytes += dr->bytes;
    } else if (h->kind == RS_EV_NVTX_PUSH || h->kind == RS_EV_NVTX_START || h->kind == RS_EV_NVTX_MARK) {
        uint32_t *msg = nvtx_msg(h);
        if (*msg > RS_MAX_STRING_ID && *msg != RS_PARTIAL_STRING_ID) *msg = 0; /* only joins name joined ids */
        if (h->size > rs_kinds[h->kind].size) nvtx_join(r, h, rs_kinds[h->kind].size);
    } else if (h->kind == RS_EV_PROC_END) {
        r->st.proc_end++;
    } else if (h->kind == RS_EV_PARTIAL) {
        const struct rs_ev_PARTIAL *p = (const void *)h;
        const char *why = rs_reader_string(r, p->why, NULL);
        r->saw_partial = 1;
        long long e = p->err; /* -errno from the writer; any value from a hostile file */
        if (e < 0) e = -e;
        snprintf(r->partial_why, sizeof r->partial_why, "%s%s%s", why ? why : "write error", e ? ": " : "",
                 !e         ? ""
                 : e < 4096 ? strerror((int)e)
                            : "unknown error");
    }
    return 0;
}

/* f[i] = w[i] += f[i] for the n (<= 14) payload words of an event, two at a time (SSE2 paddq on any x86-64;
 * plain adds elsewhere), entered by the word count: straight-line code, no loop control per pair. */
typedef uint64_t rs_u64x2 __attribute__((vector_size(16)));
static inline void add2(uint64_t *restrict f, uint64_t *restrict w)
{
    rs_u64x2 a, b;
    memcpy(&a, f, 16);
    memcpy(&b, w, 16);
    a += b;
    memcpy(f, &a, 16);
    memcpy(w, &a, 16);
}
static inline void undo_field_delta(uint64_t *restrict f, uint64_t *restrict w, size_t n)
{
    if (n & 1) {
        n--;
        w[n] = f[n] += w[n];
    }
    switch (n) {
    case 14: add2(f + 12, w + 12); /* fall through */
    case 12: add2(f + 10, w + 10); /* fall through */
    case 10: add2(f + 8, w + 8);   /* fall through */
    case 8: add2(f + 6, w + 6);    /* fall through */
    case 6: add2(f + 4, w + 4);    /* fall through */
    case 4: add2(f + 2, w + 2);    /* fall through */
    case 2: add2(f, w);            /* fall through */
    default: break;
    }
}
_Static_assert(RS_FD_MAX - sizeof(struct rs_ev_hdr) <= 14 * 8, "undo_field_delta handles up to 14 words");

/* Undo the timestamp delta and (fd: the chunk has field deltas) the field deltas of one event. */
static inline __attribute__((always_inline)) void undo_deltas(struct rs_reader *r, struct rs_ev_hdr *h, unsigned kind,
                                                              unsigned size, int fd, uint64_t tsmask, uint64_t *prev)
{
    h->ts += *prev & tsmask;
    *prev = h->ts;
    if (fd && size <= RS_FD_MAX) {
        const unsigned slot = kind % RS_FD_SLOTS;
        const size_t nw = (size - sizeof *h) / 8;
        const uint32_t key = size << 16 | kind;
        if (r->fkey[slot] == key) {
            undo_field_delta((uint64_t *)(h + 1), r->fw[slot], nw);
        } else {
            r->fkey[slot] = key;
            memcpy(r->fw[slot], h + 1, nw * 8);
        }
    }
}

#define RS_DECODE_BATCH 16384

/* Decode the next events of the open chunk in place, from r->pos on, RS_DECODE_BATCH bytes or to the
 * chunk's end: sizes checked, timestamp and field deltas undone, strings stored, drops counted. One tight
 * loop per batch, so the per-event work is only what the encoding needs (compiled twice, with and without
 * field deltas). Sets r->dec_first/r->dec_end/r->dec_n to the decoded (valid) prefix; on a bad event the
 * prefix before it is kept and the status is set (end of data once the prefix is handed out). */
static inline __attribute__((always_inline)) void decode_run(struct rs_reader *r, const int fd)
{
    unsigned char *raw = (unsigned char *)r->raw;
    size_t pos = r->pos, n = 0;
    const size_t end = r->chunk_end;
    /* a batch of at most ~16 KB: the caller then reads events the decoder just touched, still in L1 */
    const size_t lim = end - pos > RS_DECODE_BATCH ? pos + RS_DECODE_BATCH : end;
    const uint64_t tsmask = (r->chunk_flags & RS_CHUNK_TS_DELTA) ? ~0ull : 0;
    uint64_t prev = r->chunk_first ? 0 : r->chunk_prev_ts, unknown = 0; /* the first ts is absolute */
    r->dec_first = pos;
    while (pos < lim) {
        struct rs_ev_hdr *h = (struct rs_ev_hdr *)(raw + pos);
        const size_t left = end - pos;
        const unsigned size = h->size; /* readable even when left == 8: raw has 16 bytes of slack */
        /* size < 16 (wraps into the high bits), not a multiple of 8, or past the chunk's end */
        if (__builtin_expect(((size - (unsigned)sizeof *h) & ~0xfff8u) | (size > left), 0)) {
            /* in a chunk the cut goes through: an event whose header or bytes are not all there is where the
             * recovered events end (a size that is bad in itself is corruption, as anywhere) */
            if (r->chunk_clip &&
                (left < sizeof *h || (!((size - (unsigned)sizeof *h) & ~0xfff8u) && size <= r->chunk_dend - pos))) {
                cut_end(r, n);
                r->stop = 1;
                break;
            }
            set_end(r, RS_READ_CORRUPT, "bad event size %u at byte %zu of frame %llu", left < sizeof *h ? 0u : h->size,
                    pos, (unsigned long long)r->frame_idx - 1);
            r->stop = 1;
            break;
        }
        const unsigned kind = h->kind;
        if (__builtin_expect(size < kfast[kind], 0)) {
            /* unknown or special kind, or shorter than its struct */
            const uint32_t ki = kind < RS_EV_COUNT ? kinfo[kind] : KI_UNKNOWN;
            /* A STRING starts a batch of its own: every event is handed out with the string table exactly as
             * the events before it left it (a redefined id changes only for the events after the record). */
            if ((ki & KI_SPECIAL) && kind == RS_EV_STRING && n) break;
            undo_deltas(r, h, kind, size, fd, tsmask, &prev);
            if (ki & KI_UNKNOWN) {
                unknown++;
            } else if (size < (ki & KI_SIZE)) {
                set_end(r, RS_READ_CORRUPT, "%s event of %u bytes, needs %u (frame %llu)", rs_kinds[kind].name, size,
                        rs_kinds[kind].size, (unsigned long long)r->frame_idx - 1);
                r->stop = 1;
                break;
            } else if (special_event(r, h)) {
                r->stop = 1;
                break;
            }
        } else {
            undo_deltas(r, h, kind, size, fd, tsmask, &prev);
        }
        pos += size;
        n++;
    }
    r->chunk_first = 0;
    r->chunk_prev_ts = prev;
    r->st.unknown_events += unknown;
    r->dec_end = pos;
    r->dec_n = n;
    r->dec_frame = r->frame_idx - 1;
    r->dec_tid = r->chunk_tid;
    if (r->stop || pos >= end) {
        r->pos = end;
        r->chunk_end = 0;
    } else {
        r->pos = pos; /* the chunk goes on in the next batch */
    }
}

static void decode_chunk(struct rs_reader *r)
{
    if (r->chunk_flags & RS_CHUNK_FIELD_DELTA) decode_run(r, 1);
    else decode_run(r, 0);
}

/* Decode until events are waiting. 1 = yes, 0 = end of data. */
static __attribute__((noinline)) int refill(struct rs_reader *r)
{
    while (r->dec_first >= r->dec_end) {
        if (r->done || r->stop) {
            r->done = 1;
            return 0;
        }
        if (!r->chunk_end && !open_chunk(r)) return 0;
        decode_chunk(r);
    }
    return 1;
}

/* Make sure decoded events are waiting. 1 = yes, 0 = end of data. The test inline, the decoding out of
 * line: rs_reader_next calls this per event, and a call into the decoder itself cost a register save and
 * restore per event (~15 % of a whole read of 8 M small events, once the decoder grew the cut-frame code). */
static inline int fill(struct rs_reader *r) { return r->dec_first < r->dec_end || refill(r); }

int rs_reader_next_chunk(struct rs_reader *r, struct rs_chunk *out)
{
    if (!r || !fill(r)) return 0;
    unsigned char *raw = (unsigned char *)r->raw;
    out->ev = (const struct rs_ev_hdr *)(raw + r->dec_first);
    out->end = raw + r->dec_end;
    out->n = r->dec_n;
    out->tid = r->dec_tid;
    out->frame = r->dec_frame;
    r->st.events += r->dec_n;
    r->dec_first = r->dec_end;
    r->dec_n = 0;
    return 1;
}

int rs_reader_next(struct rs_reader *r, struct rs_event *out)
{
    if (!r || !fill(r)) return 0;
    struct rs_ev_hdr *h = (struct rs_ev_hdr *)((unsigned char *)r->raw + r->dec_first);
    r->dec_first += h->size;
    r->dec_n--;
    r->st.events++;
    out->ts = h->ts;
    out->tid = r->dec_tid;
    out->known = rs_kind_known(h->kind);
    out->ev = h;
    out->frame = r->dec_frame;
    return 1;
}

void rs_reader_close(struct rs_reader *r)
{
    if (!r) return;
    if (r->fd >= 0) close(r->fd);
    free(r->path);
    for (int i = 0; i < 8; i++) free(r->hdr_strs[i]);
    for (uint32_t i = 0; i < r->strs_cap; i++) free(r->strs[i]);
    free(r->partial_str);
    for (uint32_t i = 0; i < r->njn; i++) free(r->jn[i]);
    free(r->jn);
    free(r->jn_len);
    free(r->jn_tab);
    free(r->jk);
    free(r->jk_tab);
    r->jn = NULL; /* a reader kept for reuse starts its next file without them (reader_alloc clears the rest) */
    r->jn_len = r->jn_tab = r->jk_tab = NULL;
    r->jk = NULL;
    r->njn = r->jn_cap = r->jn_tab_cap = r->njk = r->jk_cap = r->jk_tab_cap = r->jn_hashed = 0;
    if (reader_give(r)) return;
    free(r->strs);
    free(r->str_len);
    free(r->ib);
    free(r->raw);
    ZSTD_freeDCtx(r->dctx);
    free(r);
}

/* ---- kinds ---- */

const struct rs_kind_desc *rs_kind_get(unsigned kind)
{
    if (kind == 0 || kind >= RS_EV_COUNT || !rs_kinds[kind].name) return NULL;
    return &rs_kinds[kind];
}

const char *rs_kind_lname(unsigned kind)
{
    static char names[RS_EV_COUNT][40];
    const struct rs_kind_desc *d = rs_kind_get(kind);
    if (!d) return NULL;
    if (!names[kind][0]) {
        size_t i = 0;
        for (; d->name[i] && i < sizeof names[kind] - 1; i++) names[kind][i] = (char)tolower((unsigned char)d->name[i]);
        names[kind][i] = 0;
    }
    return names[kind];
}

size_t rs_field_offset(const struct rs_kind_desc *d, unsigned i)
{
    size_t off = sizeof(struct rs_ev_hdr);
    for (unsigned k = 0; k < i && k < d->nfields; k++) off += rs_ftype_size[d->fields[k].type];
    return off;
}

/* ---- paths ---- */

struct path_list {
    char **v;
    int n, cap;
};

static int pl_add(struct path_list *l, const char *dir, const char *name)
{
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 16;
        char **v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        l->v = v;
        l->cap = cap;
    }
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (!p) return -1;
    if (*dir) snprintf(p, n, "%s/%s", dir, name);
    else snprintf(p, n, "%s", name);
    l->v[l->n++] = p;
    return 0;
}

static int ends_with(const char *s, const char *suf)
{
    size_t a = strlen(s), b = strlen(suf);
    return a >= b && !strcmp(s + a - b, suf);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* What a directory scan (or the operands) left out, for one summary line per kind instead of a line per
 * entry: a directory holding 1,000 planted links gives one warning, not 1,000 (issue 17 D12). */
struct skipped {
    unsigned links, special;
    char link_ex[160], special_ex[160]; /* the first of each */
    const char *special_type;
};

static const char *file_type_name(mode_t m)
{
    return S_ISFIFO(m)                ? "a FIFO"
           : S_ISCHR(m) || S_ISBLK(m) ? "a device"
           : S_ISSOCK(m)              ? "a socket"
                                      : "not a regular file";
}

static void skip_special(struct skipped *sk, const char *path, mode_t m)
{
    if (!sk->special++) {
        snprintf(sk->special_ex, sizeof sk->special_ex, "%s", path);
        sk->special_type = file_type_name(m);
    }
}

/* Entries are examined without following links (fstatat AT_SYMLINK_NOFOLLOW) and without opening them: a
 * trace directory holds regular files, so a symbolic link (to a file or a directory) is skipped and
 * counted, as is a FIFO, device or socket named *.rtrace (opening a FIFO for reading would block). */
static int scan_dir(struct path_list *l, const char *dir, int depth, struct skipped *sk)
{
    struct dirent **ents;
    int n = scandir(dir, &ents, NULL, alphasort);
    if (n < 0) return -1;
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int ret = dfd < 0 ? -1 : 0;
    for (int i = 0; i < n && !ret; i++) {
        const char *name = ents[i]->d_name;
        if (name[0] == '.') continue;
        struct stat sb;
        if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) != 0) continue; /* gone meanwhile */
        int is_trace = ends_with(name, ".rtrace");
        if (S_ISREG(sb.st_mode)) {
            if (is_trace && pl_add(l, dir, name)) ret = -1;
        } else if (S_ISDIR(sb.st_mode)) {
            if (depth > 0) continue;
            size_t plen = strlen(dir) + strlen(name) + 2;
            char *p = malloc(plen);
            if (!p) {
                ret = -1;
                break;
            }
            snprintf(p, plen, "%s/%s", dir, name);
            if (scan_dir(l, p, 1, sk) && errno == ENOMEM) ret = -1; /* unreadable subdirectories are skipped */
            free(p);
        } else if (S_ISLNK(sb.st_mode)) {
            struct stat tb; /* a link matters when it names a trace or (at the top) a directory */
            if (is_trace || (depth == 0 && fstatat(dfd, name, &tb, 0) == 0 && S_ISDIR(tb.st_mode))) {
                if (!sk->links++) snprintf(sk->link_ex, sizeof sk->link_ex, "%s/%s", dir, name);
            }
        } else if (is_trace) {
            char p[160];
            snprintf(p, sizeof p, "%s/%s", dir, name);
            skip_special(sk, p, sb.st_mode);
        }
    }
    if (dfd >= 0) close(dfd);
    for (int i = 0; i < n; i++) free(ents[i]);
    free(ents);
    if (ret && !errno) errno = ENOMEM;
    return ret;
}

static void warn_skipped(const struct skipped *sk)
{
    if (sk->links)
        fprintf(stderr,
                "railscope: skipped %u symbolic link%s in trace directories (not followed; name a file to read it): "
                "%s%s\n",
                sk->links, sk->links > 1 ? "s" : "", sk->link_ex, sk->links > 1 ? ", ..." : "");
    if (sk->special)
        fprintf(stderr, "railscope: skipped %u non-regular file%s (never opened): %s is %s%s\n", sk->special,
                sk->special > 1 ? "s" : "", sk->special_ex, sk->special_type, sk->special > 1 ? ", ..." : "");
}

int rs_expand_paths(int n, char *const *operands, char ***out, char *err, size_t errlen)
{
    struct path_list l = {0};
    struct skipped sk = {0};
    for (int i = 0; i < n; i++) {
        struct stat sb;
        if (stat(operands[i], &sb) != 0) {
            snprintf(err, errlen, "%s: %s", operands[i], strerror(errno));
            goto fail;
        }
        if (S_ISDIR(sb.st_mode)) {
            int before = l.n;
            unsigned skipped_before = sk.links + sk.special;
            if (scan_dir(&l, operands[i], 0, &sk)) {
                snprintf(err, errlen, "%s: cannot read directory: %s", operands[i], strerror(errno));
                goto fail;
            }
            if (l.n == before && sk.links + sk.special == skipped_before) {
                snprintf(err, errlen, "%s: no .rtrace files in this directory", operands[i]);
                goto fail;
            }
            qsort(l.v + before, (size_t)(l.n - before), sizeof *l.v, cmp_str);
        } else if (!S_ISREG(sb.st_mode)) {
            skip_special(&sk, operands[i], sb.st_mode);
        } else if (pl_add(&l, "", operands[i])) {
            snprintf(err, errlen, "out of memory");
            goto fail;
        }
    }
    warn_skipped(&sk);
    if (!l.n) {
        snprintf(err, errlen, "no trace file to read (%u skipped, see above)", sk.links + sk.special);
        goto fail;
    }
    *out = l.v;
    return l.n;
fail:
    rs_paths_free(l.v, l.n);
    *out = NULL;
    return -1;
}

void rs_paths_free(char **paths, int n)
{
    for (int i = 0; i < n; i++) free(paths[i]);
    free(paths);
}
