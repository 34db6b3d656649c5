/* Internals of the recording core, shared by the tracer sources only (interposers use rs_tracer.h).
 *
 * Data path: rs_emit() copies an event into the calling thread's ring (struct rs_ring, single producer
 * = that thread, single consumer = the writer thread). Rings live on one global singly linked list that
 * only ever grows (lock-free push); a ring whose thread exited is drained, then marked FREE and reused by
 * the next new thread, so the list stays as long as the peak number of live threads.
 * The writer thread (writer_thread.c) drains rings into the file writer (writer.c) and writes a frame per
 * flush interval. Lifecycle (lifecycle.c) asks it for flushes through rs_core_request() and waits with a
 * timeout, so exit paths and signal handlers never do the writing themselves.
 */
#ifndef RAILSCOPE_CORE_INT_H
#define RAILSCOPE_CORE_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "rs_tracer.h"
#include "writer.h"

#define RS_CACHELINE 64

enum rs_log_level { RS_LOG_QUIET = 0, RS_LOG_WARN = 1, RS_LOG_INFO = 2, RS_LOG_DEBUG = 3 };

struct rs_config {
    char outdir[PATH_MAX]; /* absolute */
    unsigned mask;         /* enabled families */
    char events[256];      /* as configured, for the header */
    unsigned flush_ms;
    size_t buffer_bytes; /* per-thread ring, power of two */
    int policy_block;
    int log_level;
    int zstd_level;
    int zstd_threads;
    int zstd_threads_set; /* given in the environment (else auto: no warning when unsupported) */
    int clock;            /* RS_CLOCK_* */
};
enum { RS_CLOCK_AUTO = 0, RS_CLOCK_TSC, RS_CLOCK_MONOTONIC };
extern struct rs_config rs_cfg;
/* Parse the environment into rs_cfg; returns 0, or -1 when tracing is off (RAILSCOPE_DISABLE). Unknown
 * values warn once each and fall back to the default. */
int rs_config_load(void);

/* Ring states */
enum { RS_RING_FREE = 0, RS_RING_CLAIMED = 1, RS_RING_ALIVE = 2, RS_RING_EXITED = 3 };

struct rs_ring {
    /* producer side */
    _Alignas(RS_CACHELINE) _Atomic uint64_t head; /* bytes ever written */
    uint64_t limit;                               /* head may reach this without reading tail (<= tail + size) */
    uint64_t next_wake;                           /* past half full: wake the writer again from here */
    _Atomic uint64_t drop_events, drop_bytes;     /* written by the producer only */
    /* consumer side */
    _Alignas(RS_CACHELINE) _Atomic uint64_t tail; /* bytes ever consumed */
    uint64_t seen_drop_events, seen_drop_bytes;
    int started;      /* THREAD_START written */
    uint64_t emitted; /* events drained from this ring */
    /* identity */
    _Alignas(RS_CACHELINE) struct rs_ring *next; /* list link, set before publication, never changed */
    _Atomic int state;
    uint32_t tid;
    uint64_t start_ts, end_ts;
    size_t size; /* data bytes, power of two */
    unsigned char *data;
};

extern _Atomic(struct rs_ring *) rs_rings; /* list head */

/* Per-thread state (initial-exec TLS: no __tls_get_addr on the hot path). */
struct rs_tls {
    struct rs_ring *ring;
    int guard;   /* inside a wrapper or the core */
    int no_ring; /* ring allocation failed: drop */
    int is_writer;
    /* In _exit()/_Exit()'s final flush on this thread, which a signal handler may have called while the code it
     * interrupted held malloc's lock or ours: nothing there may wait for a lock for long or call malloc (string
     * interning tries its lock for a bounded time, zstd starts no threads; tracer/pagemem.h). */
    int in_exit;
    /* This thread is in rs_intern, waiting for the string table's lock or holding it (rs_strings_mine() says
     * which: a signal handler's fork() on it must not wait for a lock its interrupted code holds). */
    int in_strings;
    /* In the final flush of exit() or _exit() (PROC_END with the program's status) on this thread. */
    int in_final;
    /* This (program's) thread holds the writer's lock, or is taking it: an exit or exec flush, or moving the trace
     * descriptor. */
    int in_wlock;
    /* This thread holds the string table's lock (in_strings is set from before it is taken: also while waiting). */
    int strings_held;
    /* A termination signal that came while this thread held a lock the writer needs (in_wlock, strings_held):
     * raised again when it lets go (rs_raise_deferred; lifecycle.c on_term_signal says why). Not inherited by a
     * fork child (fork_child_body). */
    int deferred_sig;
    uint32_t lock_token; /* who holds the string table's lock (tracer/intern.c); 0 until this thread first takes it */
};
extern __thread struct rs_tls rs_tls __attribute__((tls_model("initial-exec")));

/* Core state */
enum { RS_ST_OFF = 0, RS_ST_STARTING, RS_ST_RUNNING, RS_ST_STOPPED, RS_ST_DISABLED };
extern _Atomic int rs_state;
extern pid_t rs_pid;                     /* process the state belongs to (fork/vfork children differ) */
extern _Atomic uint64_t rs_orphan_drops; /* events dropped with no ring to count them in */
extern _Atomic int rs_dying;             /* a fatal signal is being handled: recording threads park */

struct rs_ring *rs_ring_attach(void);
void rs_rings_after_fork_child(void);
void rs_ring_release(struct rs_ring *r); /* unmap the buffer of a drained ring nobody writes */
uint32_t rs_gettid(void);
/* fork() around the tracer's private-descriptor helper thread (private_fds.c): prepare waits for one to end */
void rs_private_fds_fork_prepare(int wait); /* wait 0: only tried (parent then lets go only if taken) */
void rs_private_fds_fork_parent(void);
void rs_private_fds_fork_child(void);

/* Strings (intern.c): ids are dense from 1; the writer writes every id in (written, count]. */
uint32_t rs_strings_count(void);
const char *rs_string_get(uint32_t id, size_t *len);
int rs_strings_lock(void); /* 1 when taken, 0 when this thread's interrupted code holds it */
int rs_strings_mine(void); /* this thread holds the string lock */
void rs_strings_unlock(void);
void rs_strings_child_reset(int taken_for_fork); /* rs_strings_lock's answer in the fork's prepare */

/* Live writer's append (writer.c): events straight from a ring (already checked by rs_emit), one pass,
 * no validation. Stops early, without error, before an event of kind stop_kind (-1: none) or one that
 * is not whole within bytes; *done = bytes consumed, *nevents = events appended. */
int rs_writer_append_run(struct rs_writer *w, uint32_t tid, const void *events, size_t bytes, int stop_kind,
                         size_t *done, uint64_t *nevents);
#define RS_EV_AS_MARKER 0xffffu /* in rings only, never written: "the next event belongs to tid aux" */

/* Writer thread (writer_thread.c) */
int rs_writer_thread_start(int open_now);       /* open_now=0: open the file when the first event shows (or at
                                              * the final flush: a child that recorded nothing still ends) */
void rs_writer_child_reset(void);               /* atfork child: forget the parent's file and thread */
extern _Atomic int rs_trace_fd;                 /* the trace file's descriptor, -1 when none */
int rs_trace_fd_match(int fd);                  /* fd is rs_trace_fd and still the trace file */
int rs_trace_fd_vacate(int fd);                 /* dup2/dup3 onto our number: move our descriptor away first */
int rs_writer_thread_stop(unsigned timeout_ms); /* before a credential change: 1 = stopped, restart it */
void rs_writer_thread_restart(void);
void rs_writer_fork_prepare(void);
void rs_writer_fork_parent(void);
/* Ask the writer for a flush and wait up to timeout_ms for it. final: also run shutdown hooks, write
 * PROC_END(status, reason) and close the file. With here=0 it is async-signal-safe (atomics and futex
 * only); here=1 does the work in the calling thread (exit and exec paths, never signal handlers).
 * Not final, here=1 and reason != 0 (exec): write PROC_END(status, reason) into the open file, keep it open.
 * Returns 0 when done in time. */
int rs_core_request(int final, int32_t status, uint32_t reason, unsigned timeout_ms, int here);
void rs_run_shutdown_hooks(void);
/* Raise the termination signal deferred on this thread (rs_tls.deferred_sig), once it holds none of the writer's
 * locks; errno kept. */
void rs_raise_deferred(void);
void rs_run_fork_child_hooks(void);

/* Process facts for the header (procinfo.c) */
void rs_procinfo_fill(struct rs_file_info *fi, char *host, size_t hostlen, char *cmdline, size_t cmdcap, char *exe,
                      size_t exelen, char *boot_id, size_t bootlen);
/* File name for this process: "<dir>/<host>-<pid>.rtrace", or with ".<n>" before .rtrace when taken
 * (an exec'd image has the same pid as its predecessor). Returns an open fd or -errno, or RS_OPEN_REFUSED
 * (a symbolic link someone else planted on the way: warned about already). */
#define RS_OPEN_REFUSED (-100000)
int rs_open_trace_file(char *path, size_t pathlen);
/* A forked child's trace file is made unnamed (O_TMPFILE in the output directory, at 100 or above) by fork's child
 * handler, while the child has one thread: the file created later, at its first event, by the writer thread took
 * the lowest free number in the program's table, which the child's own close() + dup2() onto that number could
 * meet. Killed before it is named, or at exec (O_CLOEXEC), it vanishes: no empty file. Returns the fd or -errno (a
 * filesystem without O_TMPFILE: the child's file is created at its first event, as before). */
int rs_trace_tmpfile(void);
/* Give that file its name (the first free generation, as rs_open_trace_file), fd being a number in the table of
 * thread tid of this process; the caller may run on a thread with a table of its own. 0, -errno or
 * RS_OPEN_REFUSED; path gets the name. */
int rs_link_trace_file(int fd, int tid, char *path, size_t pathlen);

/* Clock (clock.c): which source rs_now() reads. rs_clock_init after rs_config_load (decides, no thread);
 * rs_clock_tick from the writer thread under its lock (calibrates, publishes records). */
void rs_clock_init(void);
void rs_clock_tick(void);
const char *rs_clock_name(void); /* header CLOCK tag: "monotonic" or "monotonic/tsc" */
struct rs_clock_stats {
    int tsc;             /* the TSC is the source (or will be, once calibrated) */
    uint64_t records;    /* calibration records published */
    uint64_t max_err_ns; /* largest |rs_now - clock_gettime| seen at a calibration */
    int64_t last_err_ns;
    double tsc_read_ns, vdso_read_ns; /* measured at start (auto only) */
};
void rs_clock_get_stats(struct rs_clock_stats *st);

/* Log */
void rs_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Write straight to stderr (async-signal-safe, no event). */
void rs_log_raw(const char *msg);

/* Lifecycle */
void rs_lifecycle_init(void);

/* Futex helpers */
void rs_futex_wake(_Atomic uint32_t *addr);
void rs_futex_wake_one(_Atomic uint32_t *addr);
int rs_futex_wait(_Atomic uint32_t *addr, uint32_t val, unsigned timeout_ms);
int rs_futex_wait_us(_Atomic uint32_t *addr, uint32_t val, uint64_t timeout_us);

#endif
