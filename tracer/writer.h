/* The trace file writer: turns event bytes into an .rtrace file (formats/SPEC.md). It knows nothing of
 * threads, rings or clocks of its own: the live core's writer thread drives it, and offline tools (the
 * synthetic cluster generator, tests) link $(B)/lib/tracer/writer.o + $(B)/lib/formats/rtrace_tables.o
 * and drive it with their own timestamps and clock anchors (-lzstd).
 *
 * One writer is used by one thread at a time (no internal locking). Every function returns 0 / an id on
 * success and a negative errno on failure; after a write error the writer is "failed": later calls keep
 * buffering nothing and return the first error, and rs_writer_close() still releases everything.
 *
 * A frame = one independent zstd frame. Appended events accumulate in the current frame's buffer;
 * rs_writer_flush() compresses and writes it (an automatic flush happens when the buffer reaches
 * RS_WRITER_FRAME_RAW). Each frame starts with a CLOCK anchor when a clock source is set
 * (rs_writer_set_clock), so a file truncated anywhere still has an anchor in every frame it keeps.
 */
#ifndef RAILSCOPE_WRITER_H
#define RAILSCOPE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "../formats/rtrace.h"

/* Raw bytes per frame before an automatic flush (readers accept up to RS_MAX_FRAME_RAW). */
#define RS_WRITER_FRAME_RAW (4u << 20)

/* What goes in the file header. Strings may be NULL (tag omitted); integers: -1 = unknown for ranks. */
struct rs_file_info {
    const char *host;
    uint64_t pid, ppid;
    int64_t rank, local_rank, world_size; /* -1 when the launcher did not say */
    const char *cmdline;                  /* argv joined by NUL bytes ... */
    size_t cmdline_len;                   /* ... total length; 0 = strlen(cmdline) */
    uint64_t start_realtime;              /* ns since the epoch */
    uint64_t start_mono;                  /* tracer clock at the same instant */
    const char *clock;                    /* "monotonic" (NULL = "monotonic") */
    const char *events;                   /* enabled families as configured, e.g. "all" */
    const char *tracer_version;           /* NULL = the library's version */
    const char *exe;
    const char *boot_id;
};

struct rs_writer;

/* Create `path` (O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, mode 0600: an existing file or a pre-planted
 * symlink is refused with -EEXIST) and write the preamble + header. Returns NULL with *err = -errno. */
struct rs_writer *rs_writer_open(const char *path, const struct rs_file_info *info, int *err);
/* Same on an already open descriptor (the writer takes ownership and closes it). */
struct rs_writer *rs_writer_fdopen(int fd, const struct rs_file_info *info, int *err);

/* zstd level (default 1; negative = faster). Call before the first append. */
void rs_writer_set_level(struct rs_writer *w, int level);
/* RS_CHUNK_FIELD_DELTA encoding of the chunks written from now on (default on; SPEC.md). */
void rs_writer_set_field_delta(struct rs_writer *w, int on);
/* Compress each frame with n zstd worker threads (0 = in the calling thread, the default). -ENOTSUP when
 * libzstd was built without multithreading. */
int rs_writer_set_threads(struct rs_writer *w, int n);
/* From now on no zstd worker thread may start (the exit path): compress in the caller unless they already run. */
void rs_writer_no_new_threads(struct rs_writer *w);

/* Clock source for the CLOCK anchor written at the start of every frame: fn fills a REALTIME/tracer-clock
 * pair. The default samples clock_gettime(CLOCK_REALTIME/CLOCK_MONOTONIC). NULL = no automatic anchors
 * (an offline generator then appends its own CLOCK events with rs_writer_append, tid 0). */
typedef void (*rs_writer_clock_fn)(void *arg, uint64_t *realtime_ns, uint64_t *mono_ns);
void rs_writer_set_clock(struct rs_writer *w, rs_writer_clock_fn fn, void *arg);

/* Strings. rs_writer_intern: the writer's own table (offline users): returns the id (>0) of `s`, writing
 * a STRING record into the current frame the first time, i.e. before any event that uses it.
 * rs_writer_string: write a STRING record with an id chosen by the caller (the live core has its own
 * table). Use one or the other on a given writer, not both. */
uint32_t rs_writer_intern(struct rs_writer *w, const char *s);
uint32_t rs_writer_intern_n(struct rs_writer *w, const char *s, size_t n);
int rs_writer_string(struct rs_writer *w, uint32_t id, const char *s, size_t n);

/* Append events of thread `tid` (0 = the process/tracer itself): `bytes` of concatenated events, each
 * with an absolute hdr.ts, hdr.size a multiple of 8 and >= 16. Consecutive appends for the same tid share
 * one chunk. Returns -EINVAL (nothing appended) if the bytes do not parse as events. */
int rs_writer_append(struct rs_writer *w, uint32_t tid, const void *events, size_t bytes);

/* Record lost events: a DROPS event (tid 0 chunk) for thread `tid`, and add to the file's totals. */
int rs_writer_drops(struct rs_writer *w, uint32_t tid, uint64_t events, uint64_t bytes, uint32_t reason);
#define RS_DROP_BUFFER_FULL 0u /* the thread's buffer was full (drop policy) */
#define RS_DROP_WRITE_ERROR 1u /* the file could not be written */
#define RS_DROP_SHUTDOWN    2u /* emitted after the final flush */

/* End the current frame: compress, write. No-op when nothing is pending. */
int rs_writer_flush(struct rs_writer *w);
/* Compress what was appended since the last call into the current frame's zstd stream now, instead of
 * all at once when the frame is written: the live writer calls it after each drain, so a 4 MiB frame
 * never stalls draining for the milliseconds its compression takes (rings would fill meanwhile). The
 * frame on disk is the same kind of zstd frame; it is still written by rs_writer_flush. */
int rs_writer_feed(struct rs_writer *w);
/* Make what was appended so far survive a SIGKILL: end the current zstd block (ZSTD_e_flush) and append the
 * frame's compressed bytes that are not in the file yet, the first time after an open-frame header (the
 * frame magic and seq, the sizes at their limits, checksum 0: formats/SPEC.md); rs_writer_flush then
 * appends the rest and writes the real header over it. Readers of a file that ends in an open frame (the
 * process was killed, or is running) decode every checkpointed event. The live writer calls it every
 * RAILSCOPE_FLUSH_MS / 10; offline writers need not (their frames are written whole). No-op on an empty
 * frame. */
int rs_writer_checkpoint(struct rs_writer *w);
/* Feed automatically whenever `bytes` (>= 64 KiB; 0 = never, the default) are buffered: appends then
 * alternate between copying and compressing a slice at a time. The live writer sets it so that a
 * large drain neither runs through a cold multi-megabyte buffer nor holds a ring's space until the
 * whole run is compressed. */
void rs_writer_set_feed_slice(struct rs_writer *w, size_t bytes);

/* After a write error: cut the file back to the end of the last whole frame and write one small frame
 * with a PARTIAL event (err, why) so readers report the trace as partial. Best effort; returns 0 if the
 * PARTIAL frame made it to disk. */
int rs_writer_mark_partial(struct rs_writer *w, int err, const char *why);

/* Flush and close. Returns the first error seen over the writer's life (0 if none). Frees w. */
int rs_writer_close(struct rs_writer *w);

/* Forget the writer without writing anything (a fork child holding its parent's writer): closes the
 * descriptor and frees memory only. */
void rs_writer_abandon(struct rs_writer *w);

/* The path-less name of the file being written is the caller's business; this is the frame sequence number
 * the next flush will use (= frames written so far). */
uint64_t rs_writer_seq(const struct rs_writer *w);

/* Introspection (tests, the core's accounting). */
struct rs_writer_stats {
    uint64_t frames;     /* frames written */
    uint64_t events;     /* events appended (all kinds, including the writer's own) */
    uint64_t raw_bytes;  /* uncompressed payload bytes written */
    uint64_t file_bytes; /* bytes in the file */
    uint64_t drop_events, drop_bytes;
    uint64_t feeds;          /* pieces given to zstd before their frame ended (rs_writer_feed, feed slices) */
    uint64_t reopens;        /* the descriptor was lost and the file opened again by name (rs_writer_set_reopen) */
    uint64_t checkpoints;    /* rs_writer_checkpoint calls that wrote bytes */
    uint64_t events_written; /* events in the frames written (events - this: still in the frame being built) */
    int error;               /* first error (negative errno) or 0 */
};
void rs_writer_stats(const struct rs_writer *w, struct rs_writer_stats *st);

/* The file's path: when its descriptor is found closed or reused before a write, the file is opened again
 * by this name (no link followed) and used if it is the same file (device, inode); else the write fails
 * with -EBADF as before. Off (NULL) by default. */
void rs_writer_set_reopen(struct rs_writer *w, const char *path);
int rs_writer_fd(const struct rs_writer *w);
/* Write through newfd from now on (a duplicate of the file's descriptor: checked); 0 or -EBADF. */
int rs_writer_move_fd(struct rs_writer *w, int newfd);
/* The descriptor's number now holds another file (closed behind the writer's back): nothing is written or closed
 * through it any more. */
void rs_writer_release_fd(struct rs_writer *w);

#endif
