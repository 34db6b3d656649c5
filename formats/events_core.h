/* Core events written by the recording core itself (tracer/). See rtrace.h for the mechanism. */
#ifndef RAILSCOPE_EVENTS_CORE_H
#define RAILSCOPE_EVENTS_CORE_H
/* Hand-aligned tables: */
/* clang-format off */

/* Interned string: id, then `len` bytes (no NUL) after the fixed part. Written by the writer thread in
 * the frame before any event that refers to the id. */
#define RS_FIELDS_STRING(F) F(u32, id) F(u32, len)
/* REALTIME<->tracer clock anchor pair, repeated periodically (every frame) for cross-host alignment. */
#define RS_FIELDS_CLOCK(F) F(u64, realtime_ns) F(u64, mono_ns)
/* Events lost because a thread's buffer was full (drop policy) or the file could not be written. */
#define RS_FIELDS_DROPS(F) F(u64, events) F(u64, bytes) F(u32, tid) F(u32, reason)
/* A thread seen for the first time / leaving. */
#define RS_FIELDS_THREAD_START(F) F(str, name) F(u32, pad)
#define RS_FIELDS_THREAD_END(F) F(u64, events)
/* fork(): written by the parent; the child starts its own file. */
#define RS_FIELDS_FORK(F) F(u64, child_pid)
/* Process end as seen by the tracer: reason 0 exit, 1 signal, 2 exec, 3 _exit; status = code or signal. */
#define RS_FIELDS_PROC_END(F) F(i32, status) F(u32, reason)
/* A host fact snapshot (doctor's checks): key and value strings, e.g. "ib/mlx5_0/port/1/rate" = "400 Gb/sec"
 * (docs/doctor.md). */
#define RS_FIELDS_HOST_FACT(F) F(str, key) F(str, value)
/* A user or tool marker (e.g. step boundary); value is free. */
#define RS_FIELDS_MARK(F) F(u64, value) F(str, name) F(u32, pad)
/* The tracer's own warnings, also printed once to stderr. */
#define RS_FIELDS_WARNING(F) F(str, message) F(u32, pad)
/* The trace is known incomplete from here on (write error, disk full, ...). */
#define RS_FIELDS_PARTIAL(F) F(i32, err) F(str, why)
/* Call stack: `depth` return addresses (u64 each) after the fixed part; for_kind = the event it explains. */
#define RS_FIELDS_STACK(F) F(u32, depth) F(u32, for_kind)
/* A loaded object (for offline symbolisation of STACK): base address and path. */
#define RS_FIELDS_MODULE(F) F(x64, base) F(x64, end) F(str, path) F(u32, pad)

/* Chunk encoding flag, next to RS_CHUNK_TS_DELTA (rtrace.h): the fields of an event (the words after its
 * 16-byte header) are stored as differences (mod 2^64, per 8-byte word) from the fields of the previous
 * event of the same kind and size in the same chunk, tracked in RS_FD_SLOTS slots (slot = kind %
 * RS_FD_SLOTS, the newer event replaces the older) for events of at most RS_FD_MAX bytes. Counters and
 * repeated handles become zeros and constants, which zstd compresses better and faster. */
#define RS_CHUNK_FIELD_DELTA 2u
#define RS_FD_SLOTS 64
#define RS_FD_MAX 128

#define RS_EVENTS_CORE(X)            \
    X(STRING, core, RS_VARLEN)       \
    X(CLOCK, core, RS_FIXED)         \
    X(DROPS, core, RS_FIXED)         \
    X(THREAD_START, core, RS_FIXED)  \
    X(THREAD_END, core, RS_FIXED)    \
    X(FORK, core, RS_FIXED)          \
    X(PROC_END, core, RS_FIXED)      \
    X(HOST_FACT, host, RS_FIXED)     \
    X(MARK, core, RS_FIXED)          \
    X(WARNING, core, RS_FIXED)       \
    X(PARTIAL, core, RS_FIXED)       \
    X(STACK, core, RS_VARLEN)        \
    X(MODULE, core, RS_FIXED)

/* clang-format on */
#endif
