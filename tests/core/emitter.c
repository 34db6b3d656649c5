/* Test program with the recording core linked in statically (no LD_PRELOAD): emits MARK events whose
 * value encodes (thread index << 32 | sequence), so tests/core/check can verify order, gaps and drops.
 *
 *   emitter [-t THREADS] [-n EVENTS] [-r RATE/s per thread] [-p] [-x] [-F FORKS] [-X EVERY] [-E] [-V]
 *     -p       after emitting, print "ready" and pause (for signal tests)
 *     -x       leave through _exit() instead of returning from main
 *     -F N     fork N children; each emits -n events on one thread, then exits
 *     -X K     every K-th child execs /bin/true instead (after emitting)
 *     -E       threads exit early: each thread runs a short-lived helper thread that emits 10 events
 *     -V       emit 64-byte IBV_POST_SEND-like events instead of MARKs (value in wr_id)
 *     -A       every 10th event of each thread goes through rs_emit_as(RS_AS_TID, ...) (chunk tid 1000004242)
 *     -W       with -F: fork the children while the worker threads are emitting
 *     -H       register a tick hook and a shutdown hook that each emit MARKs with index 3000/3001
 *     -U       (root) after the threads: drop privileges as setpriv does (PR_SET_KEEPCAPS, setresuid, raise the
 *              capabilities again in this thread only, setresgid, setgroups), then emit 10 MARKs (index 2000);
 *              prints "cred=ok" or "cred=fail STEP errno"
 *     -M MB    after the threads (and a flush), malloc MB MiB and touch it; prints "malloc=ok" or "malloc=fail"
 *     -u       each worker calls setresgid/setgroups/setresuid (to the ids it has) halfway through
 *     -C HOW   after the threads (and a flush), the program goes for the trace file's descriptor: close (it),
 *              close_range (3..~0), closefrom (3), dup2 (/dev/null onto it), dup3 (same), raw (close_range as
 *              a raw system call), rawdup (raw close_range, then a file of its own dup'ed onto the number by
 *              a raw system call), rawgone (raw close_range, then the file renamed: cannot be found again);
 *              then emits 10 MARKs (index 2001) and prints "fd=N how=... result"
 * Prints "emitted=N dropped=M" (totals of rs_emit's answers in this process) on stdout at the end. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "rs_tracer.h"

/* above any kernel thread id (pid_max <= 2^22): a real thread can never collide with it (4242 once did) */
#define RS_AS_TID 1000004242u

static long nthreads = 1, nevents = 1000, rate, forks, exec_every;
static int do_pause, do_exit_, early, verbs, as_other, hooks, fork_during, cred_drop, cred_threads;
static _Atomic int cred_failed;
static const char *fd_attack;
static long malloc_mb;
static _Atomic unsigned long emitted, dropped, errno_changed;
static uint32_t name_id;

static void emit_one(uint64_t value)
{
    bool okk;
    errno = 4242; /* a wrapper's rs_emit comes after the real call set errno: it must survive */
    if (verbs) {
        struct rs_ev_IBV_POST_SEND e;
        memset(&e, 0, sizeof e);
        RS_EV_INIT(&e, IBV_POST_SEND, rs_now());
        e.wr_id = value;
        e.bytes = 65536;
        e.qp_num = 0x1234;
        okk = rs_emit(&e.h);
    } else {
        struct rs_ev_MARK m;
        RS_EV_INIT(&m, MARK, rs_now());
        m.value = value;
        m.name = name_id;
        m.pad = 0;
        /* the hooks' marks (index 3000, 3001) stay under the writer's own tid: how many ticks a run gets is timing */
        int as = as_other && (value >> 32) < 3000 && (value & 0xffffffffu) % 10 == 9;
        okk = as ? rs_emit_as(RS_AS_TID, &m.h) : rs_emit(&m.h);
    }
    if (okk) emitted++;
    else dropped++;
    if (errno != 4242) errno_changed++;
}

static _Atomic uint64_t ticks;
static void tick_hook(void) { emit_one((uint64_t)3000 << 32 | ticks++); }
static void shutdown_hook(void) { emit_one((uint64_t)3001 << 32); }

static void *short_lived(void *arg)
{
    uint64_t base = (uint64_t)(uintptr_t)arg;
    for (uint64_t i = 0; i < 10; i++) emit_one(base | i);
    return NULL;
}

/* What setpriv --reuid=65534 --regid=65534 --clear-groups does, in this (one) thread. */
static const char *drop_privileges(void)
{
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0)) return "keepcaps";
    if (setresuid(65534, 65534, 65534)) return "setresuid";
    if (syscall(SYS_capget, &h, d)) return "capget";
    d[0].effective = d[0].permitted;
    d[1].effective = d[1].permitted;
    if (syscall(SYS_capset, &h, d)) return "capset";
    if (setresgid(65534, 65534, 65534)) return "setresgid";
    if (setgroups(0, NULL)) return "setgroups";
    return NULL;
}

static int trace_fd(void)
{
    DIR *d = opendir("/proc/self/fd");
    int found = -1;
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char p[300], l[4096];
        snprintf(p, sizeof p, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(p, l, sizeof l - 1);
        if (n > 7 && !memcmp(l + n - 7, ".rtrace", 7)) found = atoi(e->d_name);
    }
    if (d) closedir(d);
    return found;
}

/* -C: what the program sees must be what it would see untraced. */
static void attack_fd(const char *how)
{
    int fd = trace_fd(), r = 0, e = 0;
    char res[256] = "";
    if (fd < 0) {
        printf("fd=none\n");
        return;
    }
    errno = 0;
    if (!strcmp(how, "close")) {
        r = close(fd);
        e = errno;
        snprintf(res, sizeof res, "close=%d %s", r, r ? strerror(e) : "");
    } else if (!strcmp(how, "close_range")) {
        r = close_range(3, ~0u, 0);
        snprintf(res, sizeof res, "close_range=%d", r);
    } else if (!strcmp(how, "closefrom")) {
        closefrom(3);
        snprintf(res, sizeof res, "closefrom errno=%d", errno);
    } else if (!strcmp(how, "dup2") || !strcmp(how, "dup3")) {
        int n = open("/dev/null", O_WRONLY);
        r = how[3] == '2' ? dup2(n, fd) : dup3(n, fd, O_CLOEXEC);
        struct stat sb;
        int devnull = fstat(fd, &sb) == 0 && S_ISCHR(sb.st_mode) && write(fd, "x", 1) == 1;
        snprintf(res, sizeof res, "%s=%s devnull=%d", how, r == fd ? "fd" : "other", devnull);
        close(n);
    } else if (!strcmp(how, "rawgone")) {
        char p[64], l[4096], m[4200];
        snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(p, l, sizeof l - 1);
        l[n > 0 ? n : 0] = 0;
        r = (int)syscall(SYS_close_range, 3, ~0u, 0);
        snprintf(m, sizeof m, "%s.moved", l);
        snprintf(res, sizeof res, "raw=%d moved=%d", r, rename(l, m));
    } else if (!strcmp(how, "raw") || !strcmp(how, "rawdup")) {
        r = (int)syscall(SYS_close_range, 3, ~0u, 0);
        snprintf(res, sizeof res, "raw=%d", r);
        if (how[3]) {
            int v = open("victim", O_WRONLY | O_CREAT | O_TRUNC, 0600);
            syscall(SYS_dup2, v, fd);
        }
    }
    printf("fd=%s how=%s %s\n", fd >= 100 ? ">=100" : "low", how, res);
}

static void *worker(void *arg)
{
    uint64_t idx = (uint64_t)(uintptr_t)arg;
    uint64_t t0 = rs_now();
    for (long i = 0; i < nevents;) {
        long due = nevents;
        if (rate) {
            /* Paced in bursts: emit what is due, then sleep 1 ms (spinning would starve the writer). */
            due = (long)((double)(rs_now() - t0) * (double)rate / 1e9) + 1;
            if (due > nevents) due = nevents;
            if (due <= i) {
                struct timespec ts = {0, 1000000};
                nanosleep(&ts, NULL);
                continue;
            }
        }
        if (cred_threads && i <= nevents / 2 && due > nevents / 2) {
            for (; i < nevents / 2; i++) emit_one(idx << 32 | (uint64_t)i);
            gid_t g = getegid();
            uid_t u = geteuid();
            if (setresgid(g, g, g) || setgroups(1, &g) || setresuid(u, u, u)) cred_failed = errno;
        }
        for (; i < due; i++) emit_one(idx << 32 | (uint64_t)i);
    }
    if (early) {
        pthread_t t;
        /* index space above the workers: 1000 + idx */
        if (pthread_create(&t, NULL, short_lived, (void *)(uintptr_t)((1000 + idx) << 32)) == 0) pthread_join(t, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int c;
    while ((c = getopt(argc, argv, "t:n:r:pxF:X:EVAHWUuC:M:")) != -1) {
        switch (c) {
        case 't': nthreads = atol(optarg); break;
        case 'n': nevents = atol(optarg); break;
        case 'r': rate = atol(optarg); break;
        case 'p': do_pause = 1; break;
        case 'x': do_exit_ = 1; break;
        case 'F': forks = atol(optarg); break;
        case 'X': exec_every = atol(optarg); break;
        case 'E': early = 1; break;
        case 'V': verbs = 1; break;
        case 'A': as_other = 1; break;
        case 'H': hooks = 1; break;
        case 'W': fork_during = 1; break;
        case 'U': cred_drop = 1; break;
        case 'u': cred_threads = 1; break;
        case 'C': fd_attack = optarg; break;
        case 'M': malloc_mb = atol(optarg); break;
        default: fprintf(stderr, "usage: see the comment at the top of emitter.c\n"); return 2;
        }
    }
    name_id = rs_intern("emitter");
    if (hooks) {
        rs_at_tick(tick_hook);
        rs_at_shutdown(shutdown_hook);
    }
    pthread_t *t = calloc((size_t)nthreads, sizeof *t);
    if (fork_during)
        for (long i = 0; i < nthreads; i++) pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
    if (forks) {
        for (long i = 0; i < forks; i++) {
            pid_t p = fork();
            if (p < 0) return 3;
            if (p == 0) {
                emitted = dropped = 0;
                for (long k = 0; k < nevents; k++) emit_one((uint64_t)(i + 1) << 32 | (uint64_t)k);
                if (exec_every && i % exec_every == 0) execl("/bin/true", "true", (char *)NULL);
                exit(dropped ? 1 : 0);
            }
            if (fork_during) {
                struct timespec ts = {0, 2000000};
                nanosleep(&ts, NULL);
            }
        }
        int bad = 0, st;
        while (wait(&st) > 0)
            if (!WIFEXITED(st) || WEXITSTATUS(st)) bad++;
        printf("children_failed=%d\n", bad);
    }
    if (!fork_during)
        for (long i = 0; i < nthreads; i++) pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
    for (long i = 0; i < nthreads; i++) pthread_join(t[i], NULL);
    if (cred_threads) printf("cred_threads=%s\n", cred_failed ? strerror(cred_failed) : "ok");
    if (cred_drop) {
        const char *fail = drop_privileges();
        if (fail) printf("cred=fail %s %s\n", fail, strerror(errno));
        else printf("cred=ok uid=%u gid=%u\n", (unsigned)geteuid(), (unsigned)getegid());
        for (uint64_t k = 0; k < 10; k++) emit_one((uint64_t)2000 << 32 | k);
    }
    if (malloc_mb) {
        rs_core_flush(); /* the exited threads' buffers are drained (and given back) */
        char *p = malloc((size_t)malloc_mb << 20);
        if (p) memset(p, 1, (size_t)malloc_mb << 20);
        printf("malloc=%s\n", p ? "ok" : "fail");
        free(p);
    }
    if (fd_attack) {
        rs_core_flush();
        attack_fd(fd_attack);
        for (uint64_t k = 0; k < 10; k++) emit_one((uint64_t)2001 << 32 | k);
        rs_core_flush();
    }
    printf("emitted=%lu dropped=%lu\n", (unsigned long)emitted, (unsigned long)dropped);
    if (errno_changed)
        printf("errno_changed=%lu\n", (unsigned long)errno_changed); /* fails every check of the line above */
    fflush(stdout);
    if (do_pause) {
        printf("ready\n");
        fflush(stdout);
        alarm(120); /* a test that never sends its signal must not leave us behind */
        for (;;) pause();
    }
    if (do_exit_) _exit(0);
    return 0;
}
