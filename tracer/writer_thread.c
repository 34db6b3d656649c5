/* The writer thread: drains every thread's ring into the file writer, writes a frame per flush interval,
 * records drops exactly, runs tick hooks, and serves flush requests from exit paths and signal handlers
 * (rs_core_request: atomics + futex, so a signal handler can ask and wait without doing the work; plain
 * exit paths do the work in their own thread, which is quicker than waking the writer).
 *
 * All writer state is protected by wlock, held by whoever drains (normally this thread). Lock order:
 * wlock, then the string table's lock. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core_int.h"
#include "pagemem.h"
#include "hostfacts/hostfacts.h"

/* Provided by hostfacts/hostfacts.c when linked; weak so the core links (and tests link) without it. */
extern void rs_hostfacts_collect(const char *sysfs_root, void (*cb)(void *arg, const char *key, const char *value),
                                 void *arg) __attribute__((weak));

_Atomic uint32_t rs_writer_wake;
/* The writer's longest sleep while nothing comes in. Also the clock's calibration cadence (clock.c publishes at
 * most every 100 ms, at the writer's wake-ups). */
#define RS_WRITER_IDLE_US 100000ull
static _Atomic uint32_t req_seq, done_seq;
/* The first final request's PROC_END status and reason, claimed and published by one compare-exchange
 * (an exit and a signal handler may ask at once): 0 = none, else FINAL_SET | reason << 32 | (u32)status. */
static _Atomic uint64_t final_req;
#define FINAL_SET (1ull << 63)
static _Atomic int thread_running;
static _Atomic int stop_req;         /* rs_writer_thread_stop: leave the loop, keep the file (a credential change) */
static _Atomic uint32_t writer_ktid; /* the writer thread's kernel tid (rs_writer_thread_stop waits for it to go) */
/* 0 from pthread_create until the writer thread runs its own code. In between, the thread library (and a
 * sanitizer's runtime) set the thread up and may hold allocator locks: a fork then would hand the child
 * a lock nobody releases (seen with ASan, whose allocator has no fork handlers: a bash forking right
 * after its own fork hung in malloc). rs_writer_fork_prepare waits for it (bounded). */
static _Atomic uint32_t thread_entered;
static _Atomic int writer_secbits; /* the writer thread's securebits (prctl), recorded at its start */
static pthread_t writer_tid;

static pthread_mutex_t wlock = PTHREAD_MUTEX_INITIALIZER;
_Atomic int rs_trace_fd = -1; /* the trace file's descriptor, for the close/dup2 wrappers (lifecycle.c) */
static _Atomic uint64_t trace_dev, trace_ino; /* the trace file's identity (rs_trace_fd_match) */
static uint64_t reopens_seen;
static struct rs_writer *W;
static char W_path[PATH_MAX];
static int W_failed;   /* open or write failed: discard, count */
static int W_unmarked; /* ... and the file could not be marked partial (its descriptor is gone): say how much */
static int W_closed;   /* final flush done */
static uint32_t strings_written;
static uint64_t lost_events;  /* drained but not writable */
static uint64_t frame_t0;     /* when the last frame was written (or the writer thread started) */
static uint64_t frame_period; /* RAILSCOPE_FLUSH_MS in ns; 0 until the writer thread runs */
/* Checkpoints (rs_writer_checkpoint): every RAILSCOPE_FLUSH_MS / 10 (when that is 10 ms or more) what the
 * frame being built holds goes to the file as an open frame, so a SIGKILL loses about that much, not a
 * whole flush interval. */
static uint64_t cp_period, cp_t0;
static unsigned char *scratch;
static size_t scratch_cap;
static int host_facts_pending;

extern void (*rs_tick_hooks[])(void);
extern _Atomic int rs_n_tick;
extern void (*rs_soon_fn)(void);
extern _Atomic uint64_t rs_soon_at;

/* How much of a ring is handed to the file writer at a time, and the writer's feed slice: the copy and
 * the compression alternate in pieces that stay in the L2 cache, and the ring gets each piece's space
 * back as soon as it is copied (the producer need not wait for the whole drain). */
#define RS_DRAIN_PIECE (256u << 10)

static void write_error(int err)
{
    if (W_failed) return;
    W_failed = 1;
    if (W) { /* the frame being built is lost with the file: counted (with what the rings still hold, later) */
        struct rs_writer_stats st;
        rs_writer_stats(W, &st);
        lost_events += st.events - st.events_written;
    }
    /* the reader appends strerror of the recorded errno itself */
    int r = W ? rs_writer_mark_partial(W, err, "cannot write the trace file") : -1;
    W_unmarked = r != 0;
    rs_warn("cannot write %s: %s; tracing stops here, the trace is %s", W_path, rs_strerror(-err),
            r == 0 ? "marked partial" : "incomplete");
}

static void wunlock(void);

/* static, not on the stack (used under wlock): _exit's flush may run on a signal handler's small stack */
static char host[256], cmd[8192], exe[PATH_MAX], boot[64];

/* A forked child's unnamed trace file (rs_writer_child_reset), named at its first event; -1: none. wlock. */
static int pending_fd = -1;
/* rs_trace_fd is that unnamed file: its inode is freed when a raw close_range closes it, and ext4 gives the number
 * to the next file created, maybe the program's, at the same descriptor (helper-86: the program's file written
 * into and linked as the trace). An unnamed file has no link: one with a link is not ours. */
static _Atomic int trace_unnamed;

/* A forked child's start (its fork), for its header: the file is named at its first event, which its events of
 * before the drain precede ("first event -1.8 ms after start"). 0 in a process that exec'd or never forked. */
static uint64_t child_start_mono, child_start_rt;

/* The header's facts (it reads /proc). This and name_pending (which opens the output directory) run on a descriptor
 * table of their own when on the writer thread (off_table): a child's other threads may be closing and dup2()ing
 * numbers at that moment. */
static void fill_info(void *p)
{
    struct rs_file_info *fi = p;
    rs_procinfo_fill(fi, host, sizeof host, cmd, sizeof cmd, exe, sizeof exe, boot, sizeof boot);
    if (child_start_mono) {
        fi->start_mono = child_start_mono;
        fi->start_realtime = child_start_rt;
    }
}

struct name_job {
    int fd, tid, err;
};

static void name_pending(void *p)
{
    struct name_job *j = p;
    j->err = rs_link_trace_file(j->fd, j->tid, W_path, sizeof W_path);
}

static void off_table(void (*fn)(void *), void *arg)
{
    /* no thread is created at _exit (pthread_create allocates) nor off the writer thread (the exit and exec
     * paths run on the program's thread, which does not race itself) */
    if (rs_tls.is_writer && !rs_tls.in_exit) rs_run_private_fds(fn, arg);
    else fn(arg);
}

/* The pending file, its header written, then named (a file never shows without its header). 0: W is open; -1: there
 * is none to name (the caller creates one); else the error, warned about. */
static int open_pending(void)
{
    int fd = pending_fd;
    pending_fd = -1;
    if (fd < 0) return -1;
    struct rs_file_info fi;
    off_table(fill_info, &fi);    /* a thread made and joined: the identity is checked after it */
    if (!rs_trace_fd_match(fd)) { /* closed behind the wrappers' back (a raw close_range): not ours now */
        atomic_store(&rs_trace_fd, -1);
        atomic_store(&trace_unnamed, 0);
        return -1;
    }
    int err = 0;
    W = rs_writer_fdopen(fd, &fi, &err);
    if (!W) {
        if (atomic_exchange(&rs_trace_fd, -1) == fd) close(fd); /* the wrappers spared it in rs_writer_fdopen */
        rs_warn("cannot write a trace file in %s: %s; this process is not traced", rs_cfg.outdir, rs_strerror(-err));
        return err;
    }
    struct name_job j = {fd, (int)rs_gettid(), -EBADF};
    if (rs_trace_fd_match(fd)) { /* still our unnamed file, just before it gets its name */
        atomic_store(&trace_unnamed, 0);
        off_table(name_pending, &j);
    }
    if (!j.err) return 0;
    atomic_store(&trace_unnamed, 0);
    atomic_store(&rs_trace_fd, -1);               /* before the close, which the wrappers would refuse (lifecycle.c) */
    if (j.err == -EBADF) rs_writer_release_fd(W); /* the number is the program's now: not closed */
    if (rs_tls.in_exit) rs_writer_abandon(W);     /* nothing freed at _exit (pagemem.h) */
    else rs_writer_close(W);
    W = NULL;
    if (j.err == RS_OPEN_REFUSED) return RS_OPEN_REFUSED; /* warned about (open_dir_safe) */
    /* e.g. no /proc: the file is created by name, as without O_TMPFILE */
    rs_debug("naming the child's trace file: %s; creating it by name", rs_strerror(-j.err));
    return -1;
}

/* A new file by name (the process's first, or a child's without O_TMPFILE). 0: W is open; else the error, warned. */
static int open_named(void)
{
    int fd = rs_open_trace_file(W_path, sizeof W_path);
    if (fd < 0) {
        if (fd != RS_OPEN_REFUSED)
            rs_warn("cannot create a trace file in %s: %s; this process is not traced", rs_cfg.outdir,
                    rs_strerror(-fd));
        return fd;
    }
    struct rs_file_info fi;
    fill_info(&fi);
    int err = 0;
    W = rs_writer_fdopen(fd, &fi, &err);
    if (!W) rs_warn("cannot write %s: %s; this process is not traced", W_path, rs_strerror(-err));
    return W ? 0 : err;
}

static int open_file(void)
{
    int e = open_pending();
    if (e == -1) e = open_named();
    if (e) {
        W_failed = 1;
        return e;
    }
    rs_writer_set_level(W, rs_cfg.zstd_level);
    rs_writer_set_feed_slice(W, RS_DRAIN_PIECE);
    rs_writer_set_reopen(W, W_path);
    reopens_seen = 0;
    struct stat sb;
    if (fstat(rs_writer_fd(W), &sb) == 0) {
        atomic_store(&trace_dev, (uint64_t)sb.st_dev);
        atomic_store(&trace_ino, (uint64_t)sb.st_ino);
    }
    atomic_store(&rs_trace_fd, rs_writer_fd(W));
    /* not in _exit's flush: zstd would start its workers there (pthread_create allocates) */
    if (rs_cfg.zstd_threads && !rs_tls.in_exit && rs_writer_set_threads(W, rs_cfg.zstd_threads) &&
        rs_cfg.zstd_threads_set)
        rs_warn_once("RAILSCOPE_ZSTD_THREADS: this libzstd cannot compress with threads; using one");
    strings_written = 0;
    rs_debug("tracing to %s", W_path);
    return 0;
}

/* Strings are written before any event drained after they were interned (drain_all snapshots ring heads
 * first, then writes the strings, then the events). */
static int write_strings(void)
{
    uint32_t n = rs_strings_count();
    for (; strings_written < n; strings_written++) {
        size_t len;
        const char *s = rs_string_get(strings_written + 1, &len);
        int e = rs_writer_string(W, strings_written + 1, s, len);
        if (e) return e;
    }
    return 0;
}

static int ensure_scratch(size_t n)
{
    if (n <= scratch_cap) return 0;
    unsigned char *p = rs_pm_realloc(scratch, n); /* not malloc: the final drain may run in _exit (pagemem.h) */
    if (!p) return -ENOMEM;
    scratch = p;
    scratch_cap = n;
    return 0;
}

/* A thread's name from /proc (open/pread: no allocation, so also after a crash in the allocator). */
static void thread_name(uint32_t tid, char *buf, size_t cap)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/self/task/%u/comm", tid);
    ssize_t r = rs_pread_file(p, buf, cap - 1, 0);
    buf[r > 0 ? r : 0] = 0;
    buf[strcspn(buf, "\n")] = 0;
}

/* The names of the threads a drain meets for the first time, read together on the writer thread's behalf by one
 * short-lived thread with a descriptor table of its own (tracer/private_fds.c): an fopen() here took a number in
 * the program's table, which its close() + dup2() onto that number could meet. Writer only (under wlock); an exit
 * path draining on the program's thread reads them with thread_name() (no thread created there). */
#define NAME_BATCH 128
static struct {
    size_t n;
    uint32_t tid[NAME_BATCH];
    char name[NAME_BATCH][64];
} new_names;

static void read_new_names(void *arg)
{
    (void)arg;
    for (size_t i = 0; i < new_names.n; i++) thread_name(new_names.tid[i], new_names.name[i], sizeof new_names.name[i]);
}

static void new_thread_name(uint32_t tid, char *buf, size_t cap)
{
    for (size_t i = 0; i < new_names.n; i++)
        if (new_names.tid[i] == tid) {
            snprintf(buf, cap, "%s", new_names.name[i]);
            return;
        }
    thread_name(tid, buf, cap);
}

/* Copy n bytes at ring position pos, wrapping at the end. */
static void ring_peek(const struct rs_ring *r, uint64_t pos, void *dst, size_t n)
{
    size_t off = (size_t)pos & (r->size - 1), first = r->size - off;
    if (n <= first) {
        memcpy(dst, r->data + off, n);
    } else {
        memcpy(dst, r->data + off, first);
        memcpy((unsigned char *)dst + first, r->data, n - first);
    }
}

static void flush_frame(void);

/* Under saturation one drain (a pass over every ring, then up to 7 more) can take hundreds of ms, on a
 * writer thread that gets a fraction of a core: the frame is written when it is due even in the middle of
 * a drain (between pieces), so what a SIGKILL costs stays near RAILSCOPE_FLUSH_MS (720 ms at 100 ms
 * was seen when frames were written only between drains). */
static void frame_if_due(void)
{
    if (frame_period && rs_now() - frame_t0 >= frame_period) flush_frame();
}

/* Hand [from, to) of ring r to the writer straight from the ring (no copy): the writer reads each
 * contiguous run once. Only an rs_emit_as marker's event and the one event that straddles the ring's
 * end (if any) go through scratch. The ring's tail follows, a piece at a time, and is `to` on success. */
static int ring_to_file(struct rs_ring *r, uint64_t from, uint64_t to)
{
    while (from < to) {
        if (from != atomic_load_explicit(&r->tail, memory_order_relaxed))
            atomic_store_explicit(&r->tail, from, memory_order_release);
        size_t off = (size_t)from & (r->size - 1), first = r->size - off;
        size_t seg = to - from < first ? (size_t)(to - from) : first, done;
        int cut = seg > RS_DRAIN_PIECE;
        if (cut) seg = RS_DRAIN_PIECE;
        uint64_t nev;
        int e = rs_writer_append_run(W, r->tid, r->data + off, seg, RS_EV_AS_MARKER, &done, &nev);
        r->emitted += nev;
        from += done;
        if (e) return e;
        if (done == seg) {
            if (cut) { /* a piece handed over: its space back to the producer, and a frame if one is due */
                atomic_store_explicit(&r->tail, from, memory_order_release);
                frame_if_due();
                if (W_failed) return -EIO; /* the frame could not be written: the rest is counted lost */
            }
            continue; /* the end of the piece, the ring or the range: next segment */
        }
        struct rs_ev_hdr h;
        uint32_t tid = r->tid;
        ring_peek(r, from, &h, sizeof h);
        /* an event cut by the piece's end (events are < 64 KiB): whole in the next piece */
        if (cut && h.kind != RS_EV_AS_MARKER && done + h.size > seg) continue;
        /* A marker, or an event split by the ring's end. */
        if (h.kind == RS_EV_AS_MARKER && h.size == sizeof h && from + sizeof h < to) {
            tid = h.aux;
            from += sizeof h;
            ring_peek(r, from, &h, sizeof h);
        }
        if (h.size < sizeof h || h.size > to - from) return -EIO; /* cannot happen: rs_emit checks */
        if (ensure_scratch(h.size)) return -ENOMEM;
        ring_peek(r, from, scratch, h.size);
        if ((e = rs_writer_append(W, tid, scratch, h.size))) return e;
        from += h.size;
        r->emitted++;
    }
    atomic_store_explicit(&r->tail, to, memory_order_release);
    return 0;
}

/* A ring's new drops, written before its events that follow them: read after the ring's head was loaded
 * (acquire), so every drop that made a hole before an event about to be drained is counted here, and the
 * DROPS record precedes the events after the hole in the file (a SIGKILL can no longer keep events after
 * a hole whose DROPS record was not written yet). Drops made later are counted early, which is harmless. */
static void ring_drops(struct rs_ring *r)
{
    uint64_t de = atomic_load_explicit(&r->drop_events, memory_order_relaxed);
    uint64_t db = atomic_load_explicit(&r->drop_bytes, memory_order_relaxed);
    if (de == r->seen_drop_events) return;
    int e;
    if (W && !W_failed &&
        (e = rs_writer_drops(W, r->tid, de - r->seen_drop_events, db - r->seen_drop_bytes, RS_DROP_BUFFER_FULL)))
        write_error(e);
    r->seen_drop_events = de;
    r->seen_drop_bytes = db;
}

struct snap {
    struct rs_ring *r;
    uint64_t head;
    int exited;
};
static struct snap *snaps;
static size_t snaps_cap;

/* Move everything the rings hold now into the writer. Returns the largest fill fraction seen (0..1). */
static double drain_all(void)
{
    size_t ns = 0;
    double maxfill = 0;
    for (struct rs_ring *r = atomic_load_explicit(&rs_rings, memory_order_acquire); r; r = r->next) {
        int st = atomic_load_explicit(&r->state, memory_order_acquire);
        if (st != RS_RING_ALIVE && st != RS_RING_EXITED) continue;
        if (ns == snaps_cap) {
            size_t cap = snaps_cap ? snaps_cap * 2 : 64;
            struct snap *p = rs_pm_realloc(snaps, cap * sizeof *p); /* as scratch */
            if (!p) break;
            snaps = p;
            snaps_cap = cap;
        }
        snaps[ns++] = (struct snap){r, atomic_load_explicit(&r->head, memory_order_acquire), st == RS_RING_EXITED};
    }
    int have_data = 0;
    for (size_t i = 0; i < ns && !have_data; i++)
        have_data = snaps[i].head != atomic_load_explicit(&snaps[i].r->tail, memory_order_relaxed);
    if (!W && !W_failed && !W_closed && have_data) open_file();

    int e = 0;
    if (W && !W_failed) e = write_strings();
    if (e) write_error(e);
    new_names.n = 0;
    size_t names_from = 0; /* snaps[names_from..] have no name read yet */
    for (size_t i = 0; i < ns; i++) {
        struct rs_ring *r = snaps[i].r;
        uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed), head = snaps[i].head;
        double fill = (double)(head - tail) / (double)r->size;
        if (fill > maxfill) maxfill = fill;
        int writable = W && !W_failed;
        if (writable && !r->started && (head != tail || snaps[i].exited)) {
            if (rs_tls.is_writer && i >= names_from) { /* the next batch of new threads: names read together */
                new_names.n = 0;
                for (names_from = i; names_from < ns && new_names.n < NAME_BATCH; names_from++) {
                    const struct rs_ring *q = snaps[names_from].r;
                    if (!q->started &&
                        (snaps[names_from].head != atomic_load_explicit(&q->tail, memory_order_relaxed) ||
                         snaps[names_from].exited))
                        new_names.tid[new_names.n++] = q->tid;
                }
                rs_run_private_fds(read_new_names, NULL);
            }
            char name[64];
            new_thread_name(r->tid, name, sizeof name);
            struct rs_ev_THREAD_START t;
            RS_EV_INIT(&t, THREAD_START, r->start_ts);
            t.name = name[0] ? rs_intern(name) : 0;
            t.pad = 0;
            if (!(e = write_strings())) e = rs_writer_append(W, r->tid, &t, sizeof t);
            if (e) write_error(e);
            r->started = 1;
        }
        if (writable) ring_drops(r);
        if (writable && head != tail) {
            if ((e = ring_to_file(r, tail, head))) write_error(e);
            else tail = head;
        }
        if (head != tail) {
            /* Not writable: counted as lost (an info-level message at the end), from where the writer got
             * to (the tail follows each piece). Not exact: events already handed to the frame that failed
             * are lost too, uncounted; the file is marked partial either way. */
            for (uint64_t p = atomic_load_explicit(&r->tail, memory_order_relaxed); p < head;) {
                struct rs_ev_hdr h;
                size_t off = (size_t)p & (r->size - 1), first = r->size - off;
                if (first >= sizeof h) memcpy(&h, r->data + off, sizeof h);
                else {
                    memcpy(&h, r->data + off, first);
                    memcpy((char *)&h + first, r->data, sizeof h - first);
                }
                if (h.size < sizeof h) break;
                if (h.kind != 0xffff) lost_events++;
                p += h.size;
            }
            atomic_store_explicit(&r->tail, head, memory_order_release);
        }
        ring_drops(r); /* drops after the last event (a thread that exited on a full ring), or unwritable */
        if (snaps[i].exited) {
            if (W && !W_failed && r->started) {
                struct rs_ev_THREAD_END t;
                RS_EV_INIT(&t, THREAD_END, r->end_ts);
                t.events = r->emitted;
                if ((e = rs_writer_append(W, r->tid, &t, sizeof t))) write_error(e);
            }
            rs_ring_release(r); /* its buffer goes back to the system; the next thread maps a new one */
            atomic_store_explicit(&r->state, RS_RING_FREE, memory_order_release);
        }
    }
    /* Busy rings are drained again, round-robin, while one has filled by more than an eighth since the
     * pass before (up to 7 more passes; strings first: new events may name strings interned since).
     * What they filled to counts for the writer's next sleep. Exited rings were handed back above. */
    for (int pass = 0; pass < 7 && W && !W_failed; pass++) {
        int busy = 0;
        for (size_t i = 0; i < ns && !W_failed; i++) {
            struct rs_ring *r = snaps[i].r;
            /* not an exited ring, nor one whose THREAD_START is not written yet (empty at the snapshot):
             * the next drain starts those */
            if (snaps[i].exited || !r->started) continue;
            uint64_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
            uint64_t head = atomic_load_explicit(&r->head, memory_order_acquire);
            if (head - tail <= r->size / 8) continue;
            double fill = (double)(head - tail) / (double)r->size;
            if (fill > maxfill) maxfill = fill;
            if (!busy++ && (e = write_strings())) {
                write_error(e);
                break;
            }
            ring_drops(r);
            frame_if_due();
            if (W_failed) break;
            if ((e = ring_to_file(r, tail, head))) {
                write_error(e);
                break; /* the rest of this ring is counted lost by the next drain */
            }
        }
        if (!busy) break;
    }
    return maxfill;
}

/* After a write: the descriptor may have been replaced (the program closed ours where we could not see it
 * and the writer opened the file again): tell the wrappers, and say so once, also in the trace. */
static void fd_check(void)
{
    if (!W) return;
    atomic_store(&rs_trace_fd, rs_writer_fd(W));
    struct rs_writer_stats st;
    rs_writer_stats(W, &st);
    if (st.reopens != reopens_seen) {
        reopens_seen = st.reopens;
        rs_warn_once("the program closed the trace file's descriptor; %s was opened again, nothing was lost", W_path);
    }
}

static void flush_frame(void)
{
    if (!W || W_failed) return;
    uint64_t orphans = atomic_exchange(&rs_orphan_drops, 0);
    int e = orphans ? rs_writer_drops(W, 0, orphans, 0, RS_DROP_BUFFER_FULL) : 0;
    if (!e) e = rs_writer_flush(W);
    if (e) write_error(e);
    frame_t0 = rs_now();
    __atomic_store_n(&cp_t0, frame_t0, __ATOMIC_RELAXED); /* read unlocked where the writer waits */
    fd_check();
}

/* Whether fd is the trace file's descriptor: its number, and still the file (a program that closed the
 * number where the wrappers could not see it, e.g. a raw close_range, may have its own file there now, before
 * the writer notices, or for good once the writer could not open the file again). One fstat, only when the
 * number matches. errno preserved. */
int rs_trace_fd_match(int fd)
{
    if (fd < 0 || fd != atomic_load(&rs_trace_fd)) return 0;
    int saved = errno;
    struct stat sb;
    int r = fstat(fd, &sb) == 0 && (uint64_t)sb.st_dev == atomic_load(&trace_dev) &&
            (uint64_t)sb.st_ino == atomic_load(&trace_ino) && (!atomic_load(&trace_unnamed) || sb.st_nlink == 0);
    errno = saved;
    return r;
}

/* close()/close_range()/closefrom() spare our descriptor (lifecycle.c); dup2()/dup3() onto its number move
 * it first: the program gets the number, as it would untraced (the number was free before we took it). */
int rs_trace_fd_vacate(int fd)
{
    if (fd < 0 || fd != atomic_load(&rs_trace_fd) || rs_tls.is_writer) return 0;
    uint64_t deadline = 0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    deadline = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 + 2000;
    rs_tls.in_wlock = 1; /* from before it is taken (wlock_until) */
    while (pthread_mutex_trylock(&wlock) != 0) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 >= deadline) {
            rs_tls.in_wlock = 0;
            rs_raise_deferred();
            return -1; /* the writer finds the file gone at its next write and opens it again */
        }
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
    }
    int ret = 0;
    if (!W && pending_fd == fd) {
        int nfd = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, fd + 1); /* the program's dup2() replaces fd */
        if (nfd >= 0) {
            pending_fd = nfd;
            atomic_store(&rs_trace_fd, nfd);
        } else ret = -1;
    } else if (W && rs_writer_fd(W) == fd) {
        int nfd = (int)syscall(SYS_fcntl, fd, F_DUPFD_CLOEXEC, fd + 1); /* not our own fcntl(): it hides fd */
        if (nfd >= 0 && rs_writer_move_fd(W, nfd) == 0) atomic_store(&rs_trace_fd, nfd);
        else if (nfd >= 0) close(nfd), ret = -1;
        else ret = -1;
    }
    wunlock();
    return ret;
}

static void host_fact(void *arg, const char *key, const char *value)
{
    (void)arg;
    if (!W || W_failed) return;
    struct rs_ev_HOST_FACT h;
    RS_EV_INIT(&h, HOST_FACT, rs_now());
    h.key = rs_intern(key);
    h.value = rs_intern(value);
    int e = write_strings();
    if (!e) e = rs_writer_append(W, 0, &h, sizeof h);
    if (e) write_error(e);
}

/* The host facts as "key\0value\0" pairs, gathered on the private-descriptor thread (rs_run_private_fds). In
 * mmap'ed memory: a malloc there would give that thread a malloc arena of its own (hostfacts_int.h). */
struct facts_buf {
    char *p;
    size_t n, cap;
};
static void fact_into(void *arg, const char *key, const char *value)
{
    struct facts_buf *b = arg;
    size_t kl = strlen(key) + 1, vl = strlen(value) + 1;
    if (b->n + kl + vl > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256 * 1024;
        while (cap < b->n + kl + vl) cap *= 2;
        void *p = b->p ? mremap(b->p, b->cap, cap, MREMAP_MAYMOVE)
                       : mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return; /* a fact less */
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, key, kl);
    memcpy(b->p + b->n + kl, value, vl);
    b->n += kl + vl;
}
static void collect_facts(void *arg) { rs_hostfacts_collect(NULL, fact_into, arg); }

static void write_end(int32_t status, uint32_t reason)
{
    if (!W || W_failed) return;
    struct rs_ev_PROC_END p;
    RS_EV_INIT(&p, PROC_END, rs_now());
    p.status = status;
    p.reason = reason;
    int e = rs_writer_append(W, 0, &p, sizeof p);
    if (e) write_error(e);
}

static void final_locked(void)
{
    if (W && rs_tls.in_exit) rs_writer_no_new_threads(W);
    drain_all();
    /* A forked child's file is opened lazily, at its first event; one that recorded nothing still gets a
     * file here, so every FORK the parent recorded has a file with the child's PROC_END. */
    if (!W && !W_failed && !W_closed) open_file();
    uint64_t f = atomic_load(&final_req);
    write_end((int32_t)(uint32_t)f, (uint32_t)(f >> 32) & 0x7fffffffu);
    flush_frame();
    if (lost_events)
        rs_log(W_unmarked ? RS_LOG_WARN : RS_LOG_INFO, "%llu events could not be written to %s",
               (unsigned long long)lost_events, W_path);
    atomic_store(&rs_trace_fd, -1);
    if (W && rs_tls.in_exit) {
        rs_writer_abandon(W); /* the process ends: its memory and zstd's workers are not worth freeing there */
        W = NULL;
    } else if (W) {
        int e = rs_writer_close(W);
        if (e && !W_failed) rs_warn("closing %s: %s", W_path, rs_strerror(-e));
        W = NULL;
    }
    W_closed = 1;
    /* Dying of a signal: keep wrappers calling rs_emit, where they park until the process is gone. */
    if (!atomic_load(&rs_dying)) __atomic_store_n(&rs_enabled_mask, 0u, __ATOMIC_RELAXED);
    atomic_store(&rs_state, RS_ST_STOPPED);
}

/* The final sequence: everything recorded so far goes to disk first (so a hook that hangs cannot cost
 * recorded events), then the shutdown hooks run, then their events and PROC_END, then close. */
static uint64_t mono_ms(void);

/* wlock, waiting at most until deadline (CLOCK_MONOTONIC ms): the exit paths must not wait for a writer thread
 * that itself waits for a lock the exiting thread's interrupted code holds. */
static int wlock_until(uint64_t deadline)
{
    /* set from before it is taken: a signal handler's fork() between the take and the flag would wait for it */
    rs_tls.in_wlock = 1;
    /* polled from 50 us up to 1 ms steps: the usual holder is the writer thread reading the host facts at its start
     * (a few ms), and a short-lived program's exit waited for it in whole 1 ms steps (~0.5 ms lost on average) */
    long step_ns = 50000;
    while (pthread_mutex_trylock(&wlock) != 0) {
        if (mono_ms() >= deadline) {
            rs_tls.in_wlock = 0;
            rs_raise_deferred();
            return -1;
        }
        struct timespec ts = {0, step_ns};
        nanosleep(&ts, NULL);
        if (step_ns < 1000000) step_ns = step_ns * 2 < 1000000 ? step_ns * 2 : 1000000;
    }
    return 0;
}

/* Unlock what wlock_until took; a termination signal that came meanwhile is raised now (lifecycle.c). */
static void wunlock(void)
{
    pthread_mutex_unlock(&wlock);
    rs_tls.in_wlock = 0;
    rs_raise_deferred();
}

static void do_final(int in_writer, uint64_t deadline)
{
    if (wlock_until(deadline)) return;
    if (W_closed) {
        wunlock();
        return;
    }
    if (W && rs_tls.in_exit) rs_writer_no_new_threads(W); /* before any compression of the exit path */
    drain_all();
    flush_frame();
    wunlock();
    if (in_writer) rs_run_shutdown_hooks();
    if (wlock_until(deadline)) return;
    if (!W_closed) final_locked();
    wunlock();
}

static void run_tick_hooks(void)
{
    int n = atomic_load(&rs_n_tick);
    for (int i = 0; i < n && i < 16; i++) {
        /* registered by other threads (a family's init) while this one runs: TSan-clean publication */
        void (*h)(void) = __atomic_load_n(&rs_tick_hooks[i], __ATOMIC_ACQUIRE);
        if (h) h();
    }
}

static void *writer_main(void *arg)
{
    (void)arg;
    rs_tls.is_writer = 1;
    rs_tls.guard = 1;
    rs_own_thread_enter();
    atomic_store(&writer_ktid, rs_gettid());
    atomic_store(&writer_secbits, prctl(PR_GET_SECUREBITS));
    atomic_store(&thread_entered, 1);
    rs_futex_wake(&thread_entered);
    pthread_setname_np(pthread_self(), "railscope-wr");
    if (host_facts_pending) {
        host_facts_pending = 0;
        struct facts_buf fb = {0};
        /* Read without the lock: a program that ends meanwhile does not wait for them (its exit path takes the
         * lock; 0.4-5.5 ms of a short command's exit on the dev VM, bench/RESULTS.md session 31). Its file then
         * has none, like one that ended before this thread ran (doctor --trace takes the first file that has
         * them). Written under the lock while the file is still open: nothing else writes frames meanwhile but
         * an exit or exec flush, which closes it. Read on a descriptor table of their own: the hundreds of opens
         * at start raced the program's dup2()s (tracer/private_fds.c). */
        pthread_mutex_lock(&wlock);
        int want = rs_hostfacts_collect && (rs_cfg.mask & (1u << RS_FAM_host)) && W && !W_failed;
        pthread_mutex_unlock(&wlock);
        if (want) rs_run_private_fds(collect_facts, &fb);
        pthread_mutex_lock(&wlock);
        for (size_t o = 0; o < fb.n && W && !W_failed;) {
            const char *k = fb.p + o, *v = k + strlen(k) + 1;
            host_fact(NULL, k, v);
            o = (size_t)(v - fb.p) + strlen(v) + 1;
        }
        pthread_mutex_unlock(&wlock);
        if (fb.p) munmap(fb.p, fb.cap);
    }
    uint64_t period = (uint64_t)rs_cfg.flush_ms * 1000000ull;
    uint64_t last_tick = rs_now();
    pthread_mutex_lock(&wlock); /* exit paths write frames (and frame_t0) from their own threads */
    frame_t0 = last_tick;
    __atomic_store_n(&cp_t0, last_tick, __ATOMIC_RELAXED);
    frame_period = period;
    cp_period = period / 10 >= 10000000ull ? period / 10 : 0;
    pthread_mutex_unlock(&wlock);
    uint32_t handled = atomic_load(&done_seq); /* requests made before this thread ran are served too */
    /* Producers wake the writer only when a ring is past half full (core.c ring_limit), so the writer's
     * sleep mostly decides the zero-drop rate: a ring must not fill between two drains. The sleep follows the
     * fastest ring's measured fill rate so that it would be at most ~1/8 full at the next drain (margin for
     * scheduling delays on a loaded machine), and grows (doubling, up to RS_WRITER_IDLE_US) only while the rings
     * stay nearly empty. A fixed 20 ms ceiling alone capped the zero-drop rate at ring/20 ms (1.6 M 64-byte
     * events/s per thread with 2 MiB rings). Idle, the writer's cost is its wake-ups (context switches, perf on
     * the dev VM: 50 a second at the old 20 ms ceiling took 29 ms of CPU in 10 s); a ring filling up wakes it
     * anyway (ring_limit). No sleep runs past the next tick, so the ticks (frames, CUDA kernel windows, the
     * verbs and NCCL-log hooks) come on time, not up to a sleep late. */
    uint64_t sleep_us = 1000, max_sleep = RS_WRITER_IDLE_US;
    uint64_t last_drain = last_tick;
    int frame_open = 0; /* the frame being built holds events, or the last drain found some: wake for the
                         * next checkpoint (an idle process is not woken more often) */
    for (;;) {
        uint32_t w0 = atomic_load(&rs_writer_wake);
        if (atomic_load(&req_seq) == handled && !atomic_load(&stop_req)) {
            uint64_t t = rs_now(), due = last_tick + period, wait = sleep_us;
            uint64_t cp_due = __atomic_load_n(&cp_t0, __ATOMIC_RELAXED) + cp_period; /* wlock not held here */
            if (frame_open && cp_period && cp_due < due) due = cp_due;
            uint64_t soon = atomic_load_explicit(&rs_soon_at, memory_order_relaxed);
            if (soon && soon < due) due = soon;
            if (due <= t) wait = 0;
            else if ((due - t) / 1000 + 1 < wait) wait = (due - t) / 1000 + 1;
            if (wait) rs_futex_wait_us(&rs_writer_wake, w0, wait);
        }
        if (atomic_load(&stop_req)) break; /* the rings keep their events for the next writer thread */
        uint32_t req = atomic_load(&req_seq);
        uint64_t now = rs_now();
        if (now - last_tick >= period) {
            last_tick = now;
            run_tick_hooks();
        }
        uint64_t soon = atomic_load_explicit(&rs_soon_at, memory_order_acquire);
        if (soon && now >= soon && atomic_compare_exchange_strong(&rs_soon_at, &soon, 0)) {
            void (*fn)(void) = __atomic_load_n(&rs_soon_fn, __ATOMIC_RELAXED);
            if (fn) fn();
        }
        if (req != handled && atomic_load(&final_req)) {
            do_final(1, UINT64_MAX); /* its own thread: nothing it waits for is held by an interrupted caller */
            atomic_store(&done_seq, req);
            rs_futex_wake(&done_seq);
            break;
        }
        pthread_mutex_lock(&wlock);
        rs_clock_tick();
        double fill = drain_all();
        if (req != handled || rs_now() - frame_t0 >= period) {
            flush_frame();
        } else if (W && !W_failed) {
            uint64_t t = rs_now();
            int cp = cp_period && t - __atomic_load_n(&cp_t0, __ATOMIC_RELAXED) >= cp_period;
            int e = cp ? rs_writer_checkpoint(W) : rs_writer_feed(W);
            if (cp) __atomic_store_n(&cp_t0, t, __ATOMIC_RELAXED);
            if (e) write_error(e);
        }
        if (W && !W_failed) {
            struct rs_writer_stats wst;
            rs_writer_stats(W, &wst);
            frame_open = wst.events != wst.events_written || fill > 0; /* or events on their way */
        }
        int closed = W_closed;
        pthread_mutex_unlock(&wlock);
        if (req != handled) {
            handled = req;
            atomic_store(&done_seq, req);
            rs_futex_wake(&done_seq);
        }
        if (closed) break;
        /* fill was reached in (now - last_drain): aim for 1/8 at the next drain. */
        uint64_t dt_us = (now - last_drain) / 1000;
        last_drain = now;
        uint64_t next = sleep_us * 2 < max_sleep ? sleep_us * 2 : max_sleep;
        if (fill > 0.01) {
            double fit = 0.125 / fill * (double)(dt_us ? dt_us : 1);
            if (fit < (double)next) next = (uint64_t)fit;
        }
        sleep_us = next < 100 ? 100 : next;
    }
    atomic_store(&thread_running, 0);
    return NULL;
}

int rs_writer_thread_start(int open_now)
{
    if (open_now) {
        if (open_file() != 0) return -1;
        host_facts_pending = 1;
    }
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the writer never takes the application's signals */
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    struct rlimit rl; /* under an address-space limit, a 2 MiB stack rather than the default 8 MiB */
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) pthread_attr_setstacksize(&a, 2u << 20);
    atomic_store(&writer_ktid, 0);
    atomic_store(&thread_running, 1); /* before stop_req goes: a waiting requester never sees neither */
    atomic_store(&stop_req, 0);
    atomic_store(&thread_entered, 0);
    int e = pthread_create(&writer_tid, &a, writer_main, NULL);
    pthread_attr_destroy(&a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) {
        atomic_store(&thread_running, 0);
        atomic_store(&thread_entered, 1);
        rs_warn("cannot start the writer thread: %s; events are written at exit only", rs_strerror(e));
    }
    return 0;
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The credentials of a thread as the kernel judges a credential change by: the lines below of
 * /proc/self/task/<tid>/status (ids, groups, capabilities, seccomp), whole and in file order, into out. Returns
 * the length, or -1 when the file cannot be read, is not that thread's (a /proc of another pid namespace) or the
 * lines do not fit: the caller then takes them as different. Async-signal-safe (open/read/close, no stdio):
 * setresuid & co. are, and programs call them from signal handlers. */
static int cred_lines(uint32_t tid, char *out, size_t cap)
{
    static const char *const keys[] = {"Uid",    "Gid",    "Groups",     "CapInh",  "CapPrm",         "CapEff",
                                       "CapBnd", "CapAmb", "NoNewPrivs", "Seccomp", "Seccomp_filters"};
    char path[48] = "/proc/self/task/", num[12], buf[1024], key[24], pid[12];
    int nd = 0, np = 0, fd;
    for (uint32_t t = tid; t >= 10; t /= 10) nd++;
    for (int i = nd++; i >= 0; i--, tid /= 10) num[i] = (char)('0' + tid % 10); /* the tid in decimal, nd digits */
    size_t pl = strlen(path);
    memcpy(path + pl, num, (size_t)nd);
    memcpy(path + pl + nd, "/status", sizeof "/status");
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) return -1;
    size_t n = 0, kn = 0;
    int state = 0, pid_ok = 0, last = 0; /* state 0: reading a key, 1: copying a wanted line, 2: skipping, 3: Pid */
    ssize_t got;
    while (!last && (got = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < got; i++) {
            char c = buf[i];
            if (state == 0) {
                if (c == ':') {
                    key[kn] = 0;
                    state = strcmp(key, "Pid") ? 2 : 3;
                    for (size_t k = 0; k < sizeof keys / sizeof keys[0] && state == 2; k++)
                        if (!strcmp(key, keys[k])) state = 1;
                    if (state == 1) {
                        last = !strcmp(key, keys[sizeof keys / sizeof keys[0] - 1]);
                        if (n + kn + 1 > cap) goto fail;
                        memcpy(out + n, key, kn);
                        out[n + kn] = ':';
                        n += kn + 1;
                    }
                    kn = 0;
                } else if (c == '\n') {
                    kn = 0;
                } else if (kn + 1 < sizeof key) {
                    key[kn++] = c;
                }
            } else if (c == '\n') {
                /* the Pid line (the thread id, in the pid namespace of this /proc) must name the thread asked for */
                if (state == 3) pid_ok = np == nd && !memcmp(pid, num, (size_t)nd);
                else if (state == 1 && n < cap) out[n++] = c;
                else if (state == 1) goto fail;
                state = 0;
                if (last) break; /* the last line wanted: the rest of the file is not read */
            } else if (state == 1) {
                if (n + 1 > cap) goto fail;
                out[n++] = c;
            } else if (state == 3 && c >= '0' && c <= '9' && np < (int)sizeof pid) {
                pid[np++] = c;
            }
        }
    }
    close(fd);
    return (!last && got < 0) || !pid_ok ? -1 : (int)n;
fail:
    close(fd);
    return -1;
}

/* Whether the writer thread's credentials are the calling thread's, so that a credential change gives both the
 * same result: their ids, capabilities, seccomp state (/proc) and securebits (the writer's, recorded at its start:
 * nothing changes them for it). A change made by glibc reaches every thread alike, so they stay the same until
 * one thread changes its own (capset, prctl, a raw system call, as setpriv does). */
static int writer_creds_same(uint32_t tid)
{
    char mine[512], its[512];
    int a = cred_lines(rs_gettid(), mine, sizeof mine);
    if (a <= 0 || cred_lines(tid, its, sizeof its) != a || memcmp(mine, its, (size_t)a)) return 0;
    return prctl(PR_GET_SECUREBITS) == atomic_load(&writer_secbits);
}

/* A credential change (setuid & co., lifecycle.c) is about to happen: glibc applies it to every thread by
 * a signal (SIGSETXID) and aborts the process when one thread's result differs from the caller's. Ours
 * could differ (capabilities, PR_SET_KEEPCAPS and securebits are per thread, and a program such as
 * setpriv changes them in its own thread only), so unless its credentials are the caller's (then it takes the
 * change with the others), the writer thread leaves and is started again after the change, from the changed
 * thread (a new thread copies its credentials). Returns 1 if a writer thread was stopped (then restart it with
 * rs_writer_thread_restart), 0 if none ran or it need not stop. Waits up to timeout_ms for the thread to be gone.
 * Stopping and starting the thread cost 1-2 ms under ASan (0.1-0.2 ms in a normal build): a signal handler
 * changing ids every 200 us (tests/core/fork_handlers.t) then left the program no time between two handlers, a
 * livelock, and it created a thread from a signal handler. When the writer's credentials are the caller's, a
 * change costs two short reads of /proc and no thread. */
int rs_writer_thread_stop(unsigned timeout_ms)
{
    if (!atomic_load(&thread_running) || rs_tls.is_writer) return 0;
    /* a thread still starting: let it get to its own code (it records its tid there) */
    for (int i = 0; i < 100 && !atomic_load(&thread_entered); i++) rs_futex_wait(&thread_entered, 0, 1);
    uint32_t tid0 = atomic_load(&writer_ktid);
    if (tid0 && atomic_load(&thread_entered) && writer_creds_same(tid0)) return 0;
    atomic_store(&stop_req, 1);
    atomic_fetch_add(&rs_writer_wake, 1);
    rs_futex_wake(&rs_writer_wake);
    /* Wait until the kernel thread is gone, not only out of its loop: until glibc marks it exiting it can
     * still be sent the setxid signal. It is detached (never joined: a joinable writer leaked in TSan's
     * eyes, and a fork child reusing its stack made TSan see a duplicate thread). Polled from 20 us up to 1 ms
     * steps: the exit takes ~0.1 ms under ASan, and a fixed 1 ms step made every stop cost more than 1 ms. */
    pid_t pid = getpid();
    uint64_t deadline = mono_ms() + timeout_ms;
    long step_ns = 20000;
    for (;;) {
        /* read each time: a thread slower to start than the wait above records its tid later (read once before
         * the loop, a 0 kept it waiting the whole timeout with the thread long gone, and warned) */
        uint32_t tid = atomic_load(&writer_ktid);
        if (tid && syscall(SYS_tgkill, pid, tid, 0) != 0 && errno == ESRCH) {
            /* gone. Reading its last store (thread_running = 0) orders what it wrote before the next writer
             * thread reads it (TSan saw host_facts_pending race with a restart from another thread otherwise) */
            if (atomic_load(&thread_running)) atomic_store(&thread_running, 0);
            return 1;
        }
        if (mono_ms() >= deadline) break;
        struct timespec d = {0, step_ns};
        nanosleep(&d, NULL);
        if (step_ns < 1000000) step_ns *= 2;
    }
    rs_warn_once("the writer thread did not stop for a credential change in %u ms", timeout_ms);
    return atomic_load(&thread_running) ? 0 : 1; /* still running: it takes the change with the others */
}

void rs_writer_thread_restart(void)
{
    if (atomic_load(&rs_state) == RS_ST_RUNNING) rs_writer_thread_start(0);
}

int rs_core_request(int final, int32_t status, uint32_t reason, unsigned timeout_ms, int here)
{
    int st = atomic_load(&rs_state);
    if (st != RS_ST_RUNNING) return st == RS_ST_STOPPED ? 0 : -1;
    if (final) {
        uint64_t none = 0, f = FINAL_SET | (uint64_t)(reason & 0x7fffffffu) << 32 | (uint32_t)status;
        atomic_compare_exchange_strong(&final_req, &none, f); /* the first request's status wins */
    }
    if (here || rs_tls.is_writer || !atomic_load(&thread_running)) {
        /* Asked to (exit paths: no need to wait for the writer thread to be scheduled), or no writer
         * thread to ask, or we are it: do the work here, if the lock can be had in time. */
        uint64_t deadline = mono_ms() + timeout_ms;
        if (wlock_until(deadline)) return -1;
        int g = rs_tls.guard;
        rs_tls.guard = 1;
        if (atomic_load(&final_req)) {
            wunlock();
            do_final(!rs_tls.is_writer, deadline);
        } else {
            drain_all();
            /* Before an exec: the file the new image cuts ends with an end record; if the exec fails, the
             * process goes on writing into this file and ends it with a final PROC_END (formats/SPEC.md). */
            if (reason && here) write_end(status, reason);
            flush_frame();
            wunlock();
        }
        rs_tls.guard = g;
        return 0;
    }
    uint32_t my = atomic_fetch_add(&req_seq, 1) + 1;
    atomic_fetch_add(&rs_writer_wake, 1);
    rs_futex_wake(&rs_writer_wake);
    uint64_t deadline = mono_ms() + timeout_ms;
    for (;;) {
        uint32_t d = atomic_load(&done_seq);
        if ((int32_t)(d - my) >= 0) return 0;
        uint64_t now = mono_ms();
        /* no writer thread, unless one is being replaced for a credential change: the next one serves us */
        if (now >= deadline || (!atomic_load(&thread_running) && !atomic_load(&stop_req))) return -1;
        rs_futex_wait(&done_seq, d, (unsigned)(deadline - now));
    }
}

void rs_core_flush(void)
{
    int g = rs_tls.guard;
    rs_tls.guard = 1;
    rs_core_request(0, 0, 0, 5000, 0);
    rs_tls.guard = g;
}

/* ---- fork ---- */

static __thread int fork_took_strings, fork_took_wlock;

void rs_writer_fork_prepare(void)
{
    /* A writer thread still starting up: let it get to its own code first (up to ~1 s, for a loaded host: in
     * between, the thread library and a sanitizer's runtime hold locks that the child would inherit taken). */
    for (int i = 0; i < 1000 && !atomic_load(&thread_entered); i++) rs_futex_wait(&thread_entered, 0, 1);
    /* A fork from a signal handler that interrupted rs_intern on this thread while it held the string lock: the
     * writer may hold wlock while it waits for that lock (wlock, then strings, is the writer's order), and so may
     * another thread's own fork, in its prepare, with the private-descriptor lock too (helper-90: both forks waited
     * for ever, 6 of 6 runs of two threads marking and forking from signal handlers): both are only tried then. One
     * that interrupted this thread's own flush (an exit or exec flush: in_wlock, taking or holding wlock) waited for
     * itself, for ever (tests/core/fork_in_flush.c: 5 of 5): wlock is only tried then. The child resets them
     * either way. */
    int mine = rs_strings_mine();
    fork_took_wlock = (mine || rs_tls.in_wlock ? pthread_mutex_trylock(&wlock) : pthread_mutex_lock(&wlock)) == 0;
    /* after wlock (the writer takes them in that order); waited for in a flush's fork: only the writer takes it, and
     * never waits for what the flushing thread holds meanwhile (helper-91) */
    rs_private_fds_fork_prepare(!mine);
    fork_took_strings = rs_strings_lock();
}

void rs_writer_fork_parent(void)
{
    if (fork_took_strings) rs_strings_unlock();
    rs_private_fds_fork_parent();
    if (fork_took_wlock) pthread_mutex_unlock(&wlock);
    fork_took_strings = fork_took_wlock = 0; /* a later child whose fork's prepare did not run reads them */
}

void rs_writer_child_reset(void)
{
    pthread_mutex_init(&wlock, NULL);
    rs_private_fds_fork_child();
    rs_strings_child_reset(fork_took_strings);
    fork_took_strings = fork_took_wlock = 0;
    /* the parent's own unnamed file (it forked before its first event): the parent's to name. rs_trace_fd first:
     * close() is the wrappers' (lifecycle.c), which spare that number */
    int inherited = pending_fd;
    pending_fd = -1;
    int ours = inherited >= 0 && rs_trace_fd_match(inherited);
    atomic_store(&rs_trace_fd, -1);
    atomic_store(&trace_unnamed, 0);
    if (ours) close(inherited);
    if (W) rs_writer_abandon(W); /* the parent's file: its pending bytes are the parent's to write */
    W = NULL;
    struct timespec m, r;
    clock_gettime(CLOCK_MONOTONIC, &m); /* the pair as rs_procinfo_fill takes it (its offset aligns the clocks) */
    clock_gettime(CLOCK_REALTIME, &r);
    child_start_mono = (uint64_t)m.tv_sec * 1000000000ull + (uint64_t)m.tv_nsec;
    child_start_rt = (uint64_t)r.tv_sec * 1000000000ull + (uint64_t)r.tv_nsec;
    pending_fd = rs_trace_tmpfile(); /* the child has one thread now: no number of its own can be in flight */
    struct stat sb;
    if (pending_fd >= 0 && fstat(pending_fd, &sb) == 0) {
        atomic_store(&trace_dev, (uint64_t)sb.st_dev);
        atomic_store(&trace_ino, (uint64_t)sb.st_ino);
        atomic_store(&trace_unnamed, 1);
        atomic_store(&rs_trace_fd, pending_fd);
    } else if (pending_fd >= 0) {
        close(pending_fd);
        pending_fd = -1;
    }
    W_failed = 0;
    W_unmarked = 0;
    W_path[0] = 0;
    strings_written = 0;
    lost_events = 0;
    atomic_store(&req_seq, 0);
    atomic_store(&done_seq, 0);
    atomic_store(&final_req, 0);
    atomic_store(&rs_orphan_drops, 0);
    atomic_store(&thread_running, 0);
    atomic_store(&stop_req, 0);
    host_facts_pending = 0;
    /* the parent's rs_tick_soon request (a look after a CUDA window's close): the parent's, never run here */
    atomic_store(&rs_soon_at, 0);
    __atomic_store_n(&rs_soon_fn, NULL, __ATOMIC_RELAXED);
}
