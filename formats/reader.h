/* The trace reader: decodes one .rtrace file (formats/SPEC.md) as a stream of events in file order, and
 * lists the trace files of a directory. Input is treated as hostile: every length, count and id read from
 * the file is checked; a damaged file ends the stream cleanly with a status and a one-line reason, never a
 * crash. A file still being written reads up to its last whole frame (status RS_READ_NO_END), or, when it
 * ends inside a frame (RS_READ_TRUNCATED: killed while writing, still being written), up to the last whole
 * event that the frame's available bytes decode to: the same events, flagged.
 *
 *     char err[256];
 *     struct rs_reader *r = rs_reader_open(path, err, sizeof err);
 *     if (!r) { fprintf(stderr, "railscope: %s\n", err); return 2; }
 *     struct rs_event e;
 *     while (rs_reader_next(r, &e) > 0) { ... e.ev->kind, e.ts, e.tid ... }
 *     const struct rs_read_stats *st = rs_reader_stats(r);   st->status, st->reason
 *     rs_reader_close(r);
 */
#ifndef RAILSCOPE_READER_H
#define RAILSCOPE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "nvtx_msg.h"
#include "rtrace.h"

/* File header (TLV block). Absent tags leave strings NULL and numbers at -1 (pid/ppid 0). */
struct rs_header_info {
    uint16_t major, minor;
    const char *host;
    uint64_t pid, ppid;
    int64_t rank, local_rank, world_size;
    const char *cmdline; /* argv joined by NUL bytes; cmdline_len bytes (+ a NUL terminator) */
    size_t cmdline_len;
    uint64_t start_realtime, start_mono;
    const char *clock, *events, *tracer_version, *exe, *boot_id;
};

/* One event. `ev` points at the event's bytes (ev->size of them, 8-byte aligned, castable to the kind's
 * struct rs_ev_<KIND> once `known` is set) with ev->ts already absolute (delta decoding undone); valid
 * until the next rs_reader_next/close. Kinds this reader does not know (a newer minor version) are
 * returned with known = 0 and may be skipped. For known kinds ev->size >= rs_kinds[kind].size is checked;
 * a larger size (fields added by a newer minor version) is allowed. */
struct rs_event {
    uint64_t ts;  /* == ev->ts */
    uint32_t tid; /* from the chunk; 0 = the process/tracer itself */
    int known;    /* kind < RS_EV_COUNT */
    const struct rs_ev_hdr *ev;
    uint64_t frame; /* frame index it came from */
};

enum rs_read_status {
    RS_READ_OK = 0,      /* complete: ended at a frame boundary after the writer's PROC_END, no PARTIAL event */
    RS_READ_NO_END,      /* ended at a frame boundary without PROC_END (killed, crashed, still running): partial */
    RS_READ_PARTIAL,     /* decodes fully, but the writer recorded a PARTIAL event (write error...) */
    RS_READ_TRUNCATED,   /* ends inside a frame (killed, still being written): kept all whole frames, and the
                          * whole events the cut frame's bytes decode to (stats cut_events) */
    RS_READ_CORRUPT,     /* bytes that do not decode (bad magic/checksum/sizes): stopped there */
    RS_READ_BAD_VERSION, /* a major version this reader does not know: nothing decoded */
    RS_READ_NOT_TRACE,   /* empty file or no RS_MAGIC */
    RS_READ_IO_ERROR,
};

struct rs_read_stats {
    enum rs_read_status status;       /* final only once rs_reader_next() has returned <= 0 */
    char reason[256];                 /* one human line that starts with the status name, e.g. "truncated: file
                                       * ends inside frame 12": print it as is, not after the name again */
    uint64_t frames;                  /* whole frames decoded */
    uint64_t events;                  /* events returned (STRING records included) */
    uint64_t unknown_events;          /* of which kinds unknown to this reader */
    uint64_t drop_events, drop_bytes; /* sums of DROPS events seen */
    uint64_t bytes_read;              /* file offset reached (end of the last whole frame) */
    uint64_t frame_gaps;              /* frames whose seq did not follow the previous one */
    uint64_t proc_end;                /* PROC_END events seen: 0 at a frame boundary is RS_READ_NO_END (the
                                       * process was killed, crashed or is still running) */
    uint64_t strings_not_kept;        /* STRING records past the string-memory limit (their ids resolve to NULL) */
    uint64_t cut_events;              /* of events: those recovered from the frame a truncated file ends inside
                                       * (its whole zstd blocks, then its whole events: formats/SPEC.md) */
    uint64_t cut_raw_bytes;           /* payload bytes of that frame decompressed (of its declared raw size) */
    uint64_t nvtx_joins;              /* NVTX messages joined from template and numbers: for a template over
                                       * 128 bytes once per distinct message (then found by template and
                                       * numbers) and none past the limits; a shorter one's at every event */
};

struct rs_reader;

/* Open and read the header. NULL on failure with a one-line reason in err (no "railscope:" prefix).
 * A file that exists but is not decodable (empty, bad magic, bad version) returns NULL as well. */
struct rs_reader *rs_reader_open(const char *path, char *err, size_t errlen);
const struct rs_header_info *rs_reader_header(const struct rs_reader *r);
const char *rs_reader_path(const struct rs_reader *r);

/* Next event in file order: 1 = *out filled, 0 = end of data (see stats for how it ended), never < 0. */
int rs_reader_next(struct rs_reader *r, struct rs_event *out);

/* Batch form: the next run of events of the current chunk (one thread's events in a frame; a long chunk
 * comes in runs of ~16 KB, so the caller reads what the decoder just touched), decoded in place in one
 * pass: 1 = *out filled (at least one event), 0 = end of data, as for rs_reader_next (the two can be
 * mixed). Events are contiguous, every size already checked (>= 16, a multiple of 8, within the chunk, >=
 * the fixed size of a known kind), ts absolute, field deltas undone; STRINGs in the chunk are stored before
 * the run is returned. Valid until the next rs_reader_next/next_chunk/close. No per-event call or copy:
 *
 *     struct rs_chunk c;
 *     while (rs_reader_next_chunk(r, &c) > 0)
 *         for (const struct rs_ev_hdr *h = c.ev; h != c.end; h = rs_ev_next(h))
 *             if (rs_kind_known(h->kind)) ... h->kind, h->ts, c.tid ...
 */
struct rs_chunk {
    const struct rs_ev_hdr *ev; /* first event */
    const void *end;            /* one past the last event */
    size_t n;                   /* events in [ev, end) */
    uint32_t tid;
    uint64_t frame;
};
int rs_reader_next_chunk(struct rs_reader *r, struct rs_chunk *out);

static inline const struct rs_ev_hdr *rs_ev_next(const struct rs_ev_hdr *h)
{
    return (const struct rs_ev_hdr *)((const char *)h + h->size);
}

/* A kind this reader knows (its struct and rs_kinds[kind] describe it); inline for per-event loops. */
static inline int rs_kind_known(unsigned kind) { return kind < RS_EV_COUNT && rs_kinds[kind].name; }

/* Interned string by id (NUL-terminated copy; *len = its length if len != NULL); NULL if the id has not
 * been seen (yet). Strings are defined before use, so lookups during iteration work. */
const char *rs_reader_string(const struct rs_reader *r, uint32_t id, size_t *len);

/* An NVTX_PUSH/START/MARK recorded as a template and numbers (formats/nvtx_msg.h) is handed out with its
 * `message` set to the message joined back: an id above RS_NVTX_JOINED_ID, which rs_reader_string resolves
 * like any other (one id per distinct message; the file's own ids stay below 2^22). */

/* String text is kept up to 64 MiB + 16 x the file's size (a file defining more reads "partial", the
 * strings past the limit unresolved). A consumer that never resolves strings (info) can skip storing them:
 * rs_reader_keep_strings(r, 0) right after open; STRING records are still checked and handed out. */
void rs_reader_keep_strings(struct rs_reader *r, int keep);

const struct rs_read_stats *rs_reader_stats(const struct rs_reader *r);
/* "complete", "incomplete", "partial", "truncated", ...: the word st->reason starts with. Only "complete"
 * (RS_READ_OK) is a whole file; every tool exits 1 on any other status of a file it could open. */
const char *rs_read_status_name(enum rs_read_status s);
void rs_reader_close(struct rs_reader *r);

/* Kind descriptor for any kind value (NULL when unknown) and its lower-case name ("ibv_post_send"). */
const struct rs_kind_desc *rs_kind_get(unsigned kind);
const char *rs_kind_lname(unsigned kind); /* NULL when unknown */
/* Offset of field i of a known kind (sizeof(struct rs_ev_hdr) + sizes of the fields before it). */
size_t rs_field_offset(const struct rs_kind_desc *d, unsigned i);

/* Expand command-line operands into trace file paths: a file is taken as is (a symbolic link named on the
 * command line is followed); a directory contributes its regular *.rtrace files and those of its immediate
 * subdirectories, sorted by name. Inside directories symbolic links are not followed and FIFOs, devices
 * and sockets are never opened: they are skipped, as is a non-regular operand, with one summary line per
 * kind on stderr ("railscope: skipped N symbolic links ...", "railscope: skipped N non-regular files ...").
 * Returns the number of paths (> 0; *out malloc'ed array of malloc'ed strings; free with rs_paths_free),
 * or -1 with a reason in err (nonexistent operand, unreadable directory, nothing left to read). A
 * directory with no trace files (nothing skipped either) is an error too. rs_reader_open() itself opens
 * O_NONBLOCK and refuses anything but a regular file, so a FIFO swapped in later cannot block a reader. */
int rs_expand_paths(int n, char *const *operands, char ***out, char *err, size_t errlen);
void rs_paths_free(char **paths, int n);

#endif
