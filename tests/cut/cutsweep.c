/* cutsweep: a trace file cut inside a frame, at many offsets, through the reader (tests/cut/cut_frame.t).
 *
 *     cutsweep [-n CUTS] [-d DIR] FULL FRAME...
 *     cutsweep -x [-n CUTS] [-d DIR] FULL FRAME...
 *     cutsweep -o [-n CUTS] [-d DIR] FULL FRAME...
 *
 * FULL is a whole trace; FRAME a frame number of it, "last", "mid", or "lastbig" (the last frame of 256 KiB
 * or more of payload: a file's very last frame often holds only its PROC_END). For each frame, the file is cut at
 * about CUTS offsets from the frame's first byte to its last (every byte of its header and of its last 64
 * bytes, the rest evenly spread), each cut read with the reader, and what it hands out compared with the
 * events of FULL: they must be FULL's first events (tid, kind, size, every byte after decoding), at least
 * those of every whole frame before the cut, none past the frame; status "truncated"; the count must never
 * shrink as the cut moves on, and the reason must say how many events were recovered. One line per frame:
 *     frame=F events=E before=B cuts=N bad_status=0 mismatch=0 past_frame=0 shrink=0 bad_reason=0
 *     recovering=K first_recovering_at=BYTE max_recovered=R at_last_byte=L
 * (recovering: cuts that kept events of the cut frame; first_recovering_at: the smallest such cut, in bytes
 * of the frame's compressed data; at_last_byte: events recovered when only the frame's last byte is missing).
 *
 * -o: the frame is made an open frame first (its header as a writer leaves it before the frame is finished:
 * sizes at their limits, checksum 0; formats/SPEC.md), and the file ends with it: cut at its end too, where
 * every event of the frame must come back ("at_end=" is added to the line).
 *
 * -x: damage instead: for each cut, one byte of the frame's compressed data before the cut is changed (at
 * several places per cut). The status must be "truncated" or "corrupt" with a reason that starts with it, the
 * whole frames before the frame must come out intact, and no more events than FULL has. One line per frame:
 *     frame=F flips=N truncated=T corrupt=C other=0 mismatch_before=0 too_many=0 bad_reason=0
 * Exit 0 when every count of trouble is 0, 1 otherwise, 2 on usage or I/O errors. Cut files are made by
 * truncating a copy of FULL, from the frame's end down, in DIR (default: $TMPDIR or /tmp). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "reader.h"

struct ev {
    uint32_t tid;
    uint16_t kind, size;
    uint64_t ts;
    size_t at; /* offset in evbytes */
};

static struct ev *evs;
static size_t nev, evcap;
static unsigned char *evbytes;
static size_t evb_len, evb_cap;

static unsigned char *data;
static size_t dlen;
static size_t foff[1 << 16]; /* frame start offsets; foff[nframes] = end of the last */
static size_t nframes;
static size_t before_frame[1 << 16]; /* events of FULL before frame i */

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p) {
        fprintf(stderr, "cutsweep: out of memory\n");
        exit(2);
    }
    return p;
}

static int load_full(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    data = xrealloc(NULL, (size_t)n + 1);
    if (n <= 16 || fread(data, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        return -1;
    }
    fclose(f);
    dlen = (size_t)n;
    uint32_t hb;
    memcpy(&hb, data + 12, 4);
    size_t off = 16 + hb;
    while (off + sizeof(struct rs_frame_hdr) <= dlen && nframes < (1 << 16) - 1) {
        struct rs_frame_hdr fh;
        memcpy(&fh, data + off, sizeof fh);
        if (fh.magic != RS_FRAME_MAGIC || off + sizeof fh + fh.compressed > dlen) break;
        foff[nframes++] = off;
        off += sizeof fh + fh.compressed;
    }
    foff[nframes] = off;
    char err[256];
    struct rs_reader *r = rs_reader_open(path, err, sizeof err);
    if (!r) {
        fprintf(stderr, "cutsweep: %s\n", err);
        return -1;
    }
    struct rs_event e;
    size_t cur = 0;
    while (rs_reader_next(r, &e) > 0) {
        while (cur < e.frame && cur < nframes) before_frame[++cur] = nev;
        if (nev == evcap) {
            evcap = evcap ? evcap * 2 : 4096;
            evs = xrealloc(evs, evcap * sizeof *evs);
        }
        if (evb_len + e.ev->size > evb_cap) {
            evb_cap = (evb_cap ? evb_cap * 2 : 1 << 20) + e.ev->size;
            evbytes = xrealloc(evbytes, evb_cap);
        }
        memcpy(evbytes + evb_len, e.ev, e.ev->size);
        evs[nev++] = (struct ev){e.tid, e.ev->kind, e.ev->size, e.ts, evb_len};
        evb_len += e.ev->size;
    }
    while (cur < nframes) before_frame[++cur] = nev;
    const struct rs_read_stats *st = rs_reader_stats(r);
    int whole = st->status == RS_READ_OK || st->status == RS_READ_NO_END;
    if (!whole) fprintf(stderr, "cutsweep: %s is not whole: %s\n", path, st->reason);
    rs_reader_close(r);
    return whole ? 0 : -1;
}

struct result {
    enum rs_read_status status;
    char reason[256];
    size_t n;              /* events handed out */
    size_t match;          /* of which equal to FULL's at the same index (counted up to the first difference) */
    long reason_recovered; /* "N events recovered" in the reason, -1 if absent */
};

static int read_cut(const char *path, struct result *res)
{
    char err[256];
    struct rs_reader *r = rs_reader_open(path, err, sizeof err);
    if (!r) {
        snprintf(res->reason, sizeof res->reason, "refused: %.200s", err);
        res->status = RS_READ_NOT_TRACE;
        res->n = res->match = 0;
        res->reason_recovered = -1;
        return -1;
    }
    struct rs_event e;
    size_t n = 0, match = 0;
    int same = 1;
    while (rs_reader_next(r, &e) > 0) {
        if (same && n < nev) {
            const struct ev *x = &evs[n];
            same = x->tid == e.tid && x->kind == e.ev->kind && x->size == e.ev->size && x->ts == e.ts &&
                   !memcmp(evbytes + x->at, e.ev, x->size);
            if (same) match++;
        } else {
            same = 0;
        }
        n++;
    }
    const struct rs_read_stats *st = rs_reader_stats(r);
    res->status = st->status;
    snprintf(res->reason, sizeof res->reason, "%s", st->reason);
    res->n = n;
    res->match = match;
    res->reason_recovered = -1;
    const char *p = strstr(st->reason, " events recovered");
    if (p) {
        const char *q = p;
        while (q > st->reason && q[-1] >= '0' && q[-1] <= '9') q--;
        if (q < p) res->reason_recovered = strtol(q, NULL, 10);
    }
    rs_reader_close(r);
    return 0;
}

static int write_file(const char *path, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return -1;
    for (size_t off = 0; off < n;) {
        ssize_t k = write(fd, data + off, n - off);
        if (k <= 0) {
            close(fd);
            return -1;
        }
        off += (size_t)k;
    }
    return close(fd);
}

/* Cut offsets in frame f, from the frame's end down (strictly inside the frame: its start is a whole file). */
static size_t cut_points(size_t f, size_t want, size_t *out)
{
    size_t a = foff[f], b = foff[f + 1], n = 0;
    for (size_t c = b - 1; c > a && n < want + 64 + 24; c--) {
        size_t from_end = b - c, from_start = c - a;
        size_t stride = (b - a) / (want ? want : 1);
        if (from_end <= 64 || from_start <= 24 || !stride || from_start % stride == 0) out[n++] = c;
    }
    return n;
}

static const char *sname(enum rs_read_status s) { return rs_read_status_name(s); }

static int starts_with_status(const struct result *r)
{
    size_t l = strlen(sname(r->status));
    return !strncmp(r->reason, sname(r->status), l) && !strncmp(r->reason + l, ": ", 2);
}

static int sweep(const char *path, size_t f, size_t want, int open_frame)
{
    size_t *pts = xrealloc(NULL, (want + 100) * sizeof *pts);
    size_t npts = cut_points(f, want, pts);
    struct rs_frame_hdr keep;
    memcpy(&keep, data + foff[f], sizeof keep);
    if (open_frame) {
        struct rs_frame_hdr o = {RS_FRAME_MAGIC, RS_MAX_FRAME_COMPRESSED, RS_MAX_FRAME_RAW, 0, keep.seq};
        memcpy(data + foff[f], &o, sizeof o);
    }
    int e = write_file(path, foff[f + 1]);
    memcpy(data + foff[f], &keep, sizeof keep);
    if (e) return 2;
    size_t before = before_frame[f], all = before_frame[f + 1];
    size_t bad_status = 0, mismatch = 0, past = 0, shrink = 0, bad_reason = 0, recovering = 0, maxrec = 0;
    size_t first_rec = 0, last_byte = 0, prev = (size_t)-1, at_end = 0;
    const size_t data0 = foff[f] + sizeof(struct rs_frame_hdr);
    if (open_frame) { /* the whole zstd frame after an open header: all of the frame, still "truncated" */
        struct result r;
        read_cut(path, &r);
        at_end = r.n > before ? r.n - before : 0;
        if (r.status != RS_READ_TRUNCATED || !strstr(r.reason, "still open")) {
            bad_status++;
            fprintf(stderr, "open frame, whole: %s\n", r.reason);
        }
        if (r.match != r.n || r.n != all) {
            mismatch++;
            fprintf(stderr, "open frame, whole: %zu events, %zu as in the whole file, want %zu\n", r.n, r.match, all);
        }
        if (r.reason_recovered != (long)at_end) bad_reason++;
        prev = r.n;
    }
    for (size_t i = 0; i < npts; i++) { /* decreasing offsets */
        size_t c = pts[i];
        if (truncate(path, (off_t)c)) return 2;
        struct result r;
        read_cut(path, &r);
        if (r.status != RS_READ_TRUNCATED) {
            if (bad_status++ < 3) fprintf(stderr, "cut at %zu: %s\n", c, r.reason);
        }
        if (r.match != r.n || r.n < before) {
            if (mismatch++ < 3)
                fprintf(stderr, "cut at %zu: %zu events, %zu as in the whole file (%zu before the frame)\n", c, r.n,
                        r.match, before);
        }
        if (r.n > all) past++;
        if (prev != (size_t)-1 && r.n > prev) {
            if (shrink++ < 3) fprintf(stderr, "cut at %zu: %zu events, but %zu a byte later\n", c, r.n, prev);
        }
        prev = r.n;
        size_t rec = r.n > before ? r.n - before : 0;
        if (!starts_with_status(&r) || (rec && r.reason_recovered != (long)rec)) {
            if (bad_reason++ < 3) fprintf(stderr, "cut at %zu: %zu recovered, reason: %s\n", c, rec, r.reason);
        }
        if (rec) {
            recovering++;
            first_rec = c >= data0 ? c - data0 : 0;
        }
        if (rec > maxrec) maxrec = rec;
        if (c == foff[f + 1] - 1) last_byte = rec;
    }
    printf("frame=%zu events=%zu before=%zu cuts=%zu bad_status=%zu mismatch=%zu past_frame=%zu shrink=%zu "
           "bad_reason=%zu recovering=%zu first_recovering_at=%zu max_recovered=%zu at_last_byte=%zu",
           f, all - before, before, npts, bad_status, mismatch, past, shrink, bad_reason, recovering,
           recovering ? first_rec : 0, maxrec, last_byte);
    if (open_frame) printf(" at_end=%zu", at_end);
    printf("\n");
    free(pts);
    return bad_status || mismatch || past || shrink || bad_reason;
}

static int damage(const char *path, size_t f, size_t want)
{
    size_t *pts = xrealloc(NULL, (want + 100) * sizeof *pts);
    size_t npts = cut_points(f, want, pts);
    const size_t data0 = foff[f] + sizeof(struct rs_frame_hdr);
    size_t flips = 0, tr = 0, co = 0, other = 0, mm = 0, many = 0, bad_reason = 0;
    for (size_t i = 0; i < npts; i++) {
        size_t c = pts[i];
        if (c <= data0 + 1) continue;
        size_t span = c - data0;
        size_t where[5] = {0, span / 7, span / 3, span / 2, span - 1};
        for (int k = 0; k < 5; k++) {
            size_t at = data0 + where[k];
            unsigned char keep = data[at];
            data[at] ^= (unsigned char)(0x5a + k * 0x11);
            int e = write_file(path, c);
            data[at] = keep;
            if (e) return 2;
            struct result r;
            read_cut(path, &r);
            flips++;
            if (r.status == RS_READ_TRUNCATED) tr++;
            else if (r.status == RS_READ_CORRUPT) co++;
            else if (other++ < 3) fprintf(stderr, "cut at %zu, byte %zu changed: %s\n", c, at, r.reason);
            if (r.match < before_frame[f] && mm++ < 3)
                fprintf(stderr, "cut at %zu, byte %zu changed: only %zu of the %zu events of whole frames\n", c, at,
                        r.match, before_frame[f]);
            if (r.n > nev) many++;
            if (!starts_with_status(&r) && bad_reason++ < 3) fprintf(stderr, "reason: %s\n", r.reason);
        }
    }
    printf("frame=%zu flips=%zu truncated=%zu corrupt=%zu other=%zu mismatch_before=%zu too_many=%zu bad_reason=%zu\n",
           f, flips, tr, co, other, mm, many, bad_reason);
    free(pts);
    return other || mm || many || bad_reason;
}

int main(int argc, char **argv)
{
    int x = 0, o = 0;
    size_t want = 300;
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-x")) x = 1;
        else if (!strcmp(argv[i], "-o")) o = 1;
        else if (!strcmp(argv[i], "-n") && i + 1 < argc) want = strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-d") && i + 1 < argc) dir = argv[++i];
        else break;
    }
    if (argc - i < 2) {
        fprintf(stderr, "usage: cutsweep [-x|-o] [-n CUTS] [-d DIR] FULL FRAME...\n");
        return 2;
    }
    if (load_full(argv[i])) {
        fprintf(stderr, "cutsweep: cannot load %s\n", argv[i]);
        return 2;
    }
    if (nframes < 2) {
        fprintf(stderr, "cutsweep: %s has %zu frames, want 2 or more\n", argv[i], nframes);
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/cutsweep-%d.rtrace", dir, (int)getpid());
    int bad = 0;
    for (int k = i + 1; k < argc; k++) {
        size_t f = !strcmp(argv[k], "last")  ? nframes - 1
                   : !strcmp(argv[k], "mid") ? nframes / 2
                                             : strtoul(argv[k], NULL, 10);
        if (!strcmp(argv[k], "lastbig")) {
            f = nframes;
            for (size_t j = nframes; j-- > 0 && f == nframes;) {
                struct rs_frame_hdr fh;
                memcpy(&fh, data + foff[j], sizeof fh);
                if (fh.raw >= 256u << 10) f = j;
            }
        }
        if (f >= nframes) {
            fprintf(stderr, "cutsweep: no frame %s (%zu frames)\n", argv[k], nframes);
            bad = 2;
            continue;
        }
        int r = x ? damage(path, f, want) : sweep(path, f, want, o);
        if (r > bad) bad = r;
    }
    unlink(path);
    free(data);
    free(evs);
    free(evbytes);
    return bad;
}
