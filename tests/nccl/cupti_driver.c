/* Plays the CUDA driver and a PyTorch-like process for the CUPTI injection, with fake libcupti/libcudart
 * (tests/nccl/fake_cupti.c, fake_cudart.c): loads the fake runtime globally and the fake CUPTI locally (as
 * libtorch_cuda.so's dependencies are), calls InitializeInjection like the driver does at cuInit, then
 * has the fake CUPTI deliver a buffer of synthetic records. Modes:
 *   basic     deliver and exit (the forced flush at exit brings one more record)
 *   burst     one buffer of 4000 records at once (run with a small RAILSCOPE_BUFFER_KB: none may be lost)
 *   early     the other client registers before CUDA initialises: railscope must leave CUPTI to it
 *   takeover  deliver, then another client registers its own buffer callbacks through the global symbol (as
 *             torch.profiler's Kineto does) and cudaMemcpy calls go on: railscope must notice, flush its
 *             pending records first, warn once, forward the registration, and record the copies through the
 *             cudart wrappers
 * and, for the default capture of session 5 (tests/nccl/cuda_default.t; added by H_GPU):
 *   copies    after the initial window closes: H2D from pinned and pageable memory, D2H into pageable memory,
 *             D2D copies, a pointer that cudaHostRegister pins; prints what CUPTI had enabled meanwhile and how
 *             many pointer-attribute queries the runtime saw
 *   windows   a copy every 2 ms for N ms while windows open and close; prints, per copy, whether CUPTI's
 *             MEMCPY activity was enabled before and after the call ("idx:state": 1 on, 0 off, x changed)
 *   wburst    CUPTI's worker thread hands back N records in full buffers under its lock, then the program
 *             exits at once (the tracer's tick, exit flush and conversion must not wait on each other)
 *   flushes MS  buffers come back on their own for MS ms, then 3 records wait for a flush (session 17: how often
 *             the tick flushes CUPTI while it records all along)
 * and, for detaching CUPTI between windows (session 8; tests/nccl/cuda_detach.t):
 *   detach MS [register|subscribe|graph]   the `windows` loop for MS ms; at MS/2 another client registers buffer
 *             callbacks or subscribes to callbacks (through the global symbols, as Kineto does), or the program
 *             captures and instantiates a CUDA graph (ARM_HOLD=1: no API callback comes before that event, so it
 *             finds the detach armed; they come again right after it); prints the fake
 *             CUPTI's attachment counts at the end and again from an exit handler that runs after the tracer's
 *             ("stats" / "exit_stats attached=A attaches=N finalizes=F unsafe=U")
 *             pgraph_HOW: the graph's driver entry points come from cuGetProcAddress (session 9), looked up at the
 *             start (as cudart and cuda-python do at initialisation) and called at MS/2 with six arguments each;
 *             HOW: v2 = dlsym(libcuda, "cuGetProcAddress_v2"), v1 = dlsym(libcuda, "cuGetProcAddress") called
 *             with four, link = a library linked against libcuda (libcudauser.so) calls cuGetProcAddress_v2,
 *             link4 = the same library calls the 4-argument cuGetProcAddress.
 *             EVENT_DETACHED=1: the event waits (up to 1 s, copying every 2 ms) until CUPTI is detached
 *             fork (session 14): fork at MS/2 (under ARM_HOLD: with a detach armed); the child makes one copy with
 *             callbacks on and prints its stats before and after ("child_before ...", "child_after ...")
 *             idle (session 14): no CUDA call for 700 ms at MS/2, stats before and after ("idle_before/after")
 *   procaddr HOW [full|threads]   what cuGetProcAddress (found as HOW) hands back, one "name=0|1" per check (1:
 *             as it must be); `full`: 48 distinct graph entry points are looked up before any is called;
 *             `threads`: 8 threads look up and call the same 24 at once, each in its own order
 * usage: cupti_driver FAKEDIR MODE [N]        prints what it saw on stdout */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static long mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* flushes: CUPTI hands back a buffer of 20 records every 10 ms for MS ms (buffers filling) and on until the next
 * non-forced flush, then holds 3 records that only a flush brings back (a buffer not filling); prints the
 * non-forced flushes made in the MS ms while buffers came back on their own, and how long the held records
 * waited. */
static int flush_cadence(void *cu, int ms)
{
    int (*many)(int) = (int (*)(int))dlsym(cu, "fake_cupti_deliver_many");
    int (*nonforced)(void) = (int (*)(void))dlsym(cu, "fake_cupti_nonforced_flushes");
    void (*hold)(int) = (void (*)(int))dlsym(cu, "fake_cupti_hold");
    int (*given)(void) = (int (*)(void))dlsym(cu, "fake_cupti_held_given");
    if (!many || !nonforced || !hold || !given) return fprintf(stderr, "cupti_driver: fake CUPTI too old\n"), 1;
    long t0 = mono_ms();
    int f0 = nonforced(), bad = 0, delivered = 0, d;
    while (mono_ms() - t0 < ms) {
        delivered += d = many(20);
        bad += d != 20;
        sleep_ms(10);
    }
    long flowing = mono_ms() - t0;
    int ff = nonforced() - f0;
    /* hold right after a flush: the next one due by the 20-tick rule is a whole period away */
    for (int f1 = nonforced(); nonforced() == f1 && mono_ms() - t0 < ms + 5000;) {
        delivered += d = many(20);
        bad += d != 20;
        sleep_ms(10);
    }
    hold(3);
    long t1 = mono_ms();
    while (!given() && mono_ms() - t1 < 5000) sleep_ms(2);
    printf("flowing_ms=%ld flowing_flushes=%d held=%d held_after_ms=%ld delivered=%d bad=%d\n", flowing, ff, given(),
           mono_ms() - t1, delivered, bad);
    fflush(stdout);
    return 0;
}

static void (*attach_stats)(int *, int *, int *, int *);
static void print_stats(const char *what)
{
    int a = -1, n = -1, f = -1, u = -1;
    if (attach_stats) attach_stats(&a, &n, &f, &u);
    printf("%s attached=%d attaches=%d finalizes=%d unsafe=%d\n", what, a, n, f, u);
    fflush(stdout);
}
static void exit_stats(void) { print_stats("exit_stats"); }
static int attached_now(void)
{
    int a = -1, n, f, u;
    if (attach_stats) attach_stats(&a, &n, &f, &u);
    return a != 0;
}

/* ---- cuGetProcAddress (session 9) ---- */
static const char *fakedir;
typedef uintptr_t a_t;
typedef int (*six_fn)(a_t, a_t, a_t, a_t, a_t, a_t);
typedef int (*pa_fn)(const char *, void **, int, unsigned long long, int *);
typedef int (*pa4_fn)(const char *, void **, int, unsigned long long);

static void *libcuda(void) { return dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD); }

/* cuGetProcAddress found as `how` (v2, v1, link: see above). Returns its result, -100 when not found. */
static int proc_lookup(const char *how, const char *sym, void **pfn, int version, unsigned long long flags, int *st)
{
    if (!strcmp(how, "link") || !strcmp(how, "link4")) { /* link4: the 4-argument export, through the PLT */
        char path[4096];
        snprintf(path, sizeof path, "%s/libcudauser.so", fakedir);
        void *u = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!strcmp(how, "link4")) {
            pa4_fn p4 = u ? (pa4_fn)dlsym(u, "fake_cuda_user_proc4") : NULL;
            return p4 ? p4(sym, pfn, version, flags) : -100;
        }
        pa_fn p = u ? (pa_fn)dlsym(u, "fake_cuda_user_proc") : NULL;
        return p ? p(sym, pfn, version, flags, st) : -100;
    }
    void *p = dlsym(libcuda(), !strcmp(how, "v1") ? "cuGetProcAddress" : "cuGetProcAddress_v2");
    if (!p) return -100;
    if (!strcmp(how, "v1")) return ((pa4_fn)p)(sym, pfn, version, flags);
    return ((pa_fn)p)(sym, pfn, version, flags, st);
}

/* Calls `fn` with six arguments from `base`: 1 when the fake driver's `want` got all six and its value came back. */
static int reaches(void *fn, const char *want, a_t base)
{
    a_t *args = (a_t *)dlsym(libcuda(), "fake_cuda_args");
    const char **called = (const char **)dlsym(libcuda(), "fake_cuda_called");
    if (!fn || !args || !called) return 0;
    *called = NULL;
    int rc = ((six_fn)fn)(base + 1, base + 2, base + 3, base + 4, base + 5, base + 6);
    int ok = rc == (int)((base + 6) & 0xfff) && *called && !strcmp(*called, want);
    for (int i = 0; i < 6; i++) ok = ok && args[i] == base + 1 + (a_t)i;
    return ok;
}

static void *pg_cap, *pg_inst;
static int pg_rc;
/* pgraph_HOW's look-ups, before the loop: 0 when both succeeded */
static void pgraph_lookup(const char *how)
{
    int st = -1;
    pg_rc = proc_lookup(how, "cuStreamBeginCapture", &pg_cap, 12000, 0, &st);
    pg_rc = pg_rc ? pg_rc : proc_lookup(how, "cuGraphInstantiate", &pg_inst, 12000, 0, &st);
}
/* ...and the calls at the event: 0 when both reached the driver with their arguments and value */
static int pgraph_call(void)
{
    if (pg_rc) return pg_rc;
    return !reaches(pg_cap, "cuStreamBeginCapture_v2", 0x1000) + 2 * !reaches(pg_inst, "cuGraphInstantiate_v2", 0x2000);
}

static const char *thread_how;
static int create_name(char *buf, size_t n, int k) /* the fake's cuGraphCreate copies are named 10-17, 20-27.. */
{
    return snprintf(buf, n, "cuGraphCreate#%d", (k - 1) / 8 * 10 + 10 + (k - 1) % 8);
}
static void *lookup_thread(void *arg)
{
    intptr_t t = (intptr_t)arg, good = 0;
    for (int j = 0; j < 24; j++) {
        int k = 1 + (int)((j * 7 + t * 5) % 24), st;
        void *p = NULL;
        char want[32];
        create_name(want, sizeof want, k);
        good += proc_lookup(thread_how, "cuGraphCreate", &p, 12000, (unsigned long long)k << 8, &st) == 0 &&
                reaches(p, want, (a_t)(t << 20 | k << 12));
    }
    return (void *)good;
}

static int procaddr_checks(const char *how, int full)
{
    void *(*real)(const char *, int, unsigned long long) =
        (void *(*)(const char *, int, unsigned long long))dlsym(libcuda(), "fake_cuda_proc");
    if (!real) return fprintf(stderr, "cupti_driver: fake_cuda_proc missing\n"), 1;
    int v1 = !strcmp(how, "v1") || !strcmp(how, "link4"); /* the 4-argument ABI: no status */
    void *p = NULL;
    int st = -1, rc;
    if (full == 2) {
        pthread_t th[8];
        thread_how = how;
        for (intptr_t t = 0; t < 8; t++) pthread_create(&th[t], NULL, lookup_thread, (void *)t);
        intptr_t good = 0;
        for (int t = 0; t < 8; t++) {
            void *r = NULL;
            pthread_join(th[t], &r);
            good += (intptr_t)r;
        }
        printf("threads reach=%d\n", (int)good);
        return 0;
    }
    if (full) {
        int n_tramp = 0, n_real_after = 0, n_reach = 0, n_ok = 0;
        void *got[48];
        for (int k = 1; k <= 48; k++) {
            p = NULL;
            rc = proc_lookup(how, "cuGraphCreate", &p, 12000, (unsigned long long)k << 8, &st);
            n_ok += rc == 0 && p;
            got[k - 1] = p;
            if (p != real("cuGraphCreate", 12000, (unsigned long long)k << 8)) n_tramp++;
            else if (n_tramp) n_real_after++;
        }
        for (int k = 1; k <= 48; k++) {
            char want[32];
            create_name(want, sizeof want, k);
            n_reach += reaches(got[k - 1], want, (a_t)k << 12);
        }
        printf("full ok=%d tramp=%d real_after=%d reach=%d\n", n_ok, n_tramp, n_real_after, n_reach);
        return 0;
    }
    /* a graph entry point: a trampoline that reaches the driver's function with six arguments, its value back */
    rc = proc_lookup(how, "cuStreamBeginCapture", &p, 12000, 0, &st);
    void *cap = p;
    printf("tramp=%d ", rc == 0 && p && p != real("cuStreamBeginCapture", 12000, 0) && (v1 || st == 0));
    printf("reach=%d ", reaches(cap, "cuStreamBeginCapture_v2", 0x1000));
    p = NULL;
    rc = proc_lookup(how, "cuStreamBeginCapture", &p, 12000, 0, &st);
    printf("same=%d ", rc == 0 && p == cap);
    /* other flags, another version: other driver pointers, each behind its own trampoline */
    p = NULL;
    rc = proc_lookup(how, "cuStreamBeginCapture", &p, 12000, 2 /* PER_THREAD_DEFAULT_STREAM */, &st);
    printf("ptsz=%d ", rc == 0 && p && p != cap && p != real("cuStreamBeginCapture", 12000, 2) &&
                           reaches(p, "cuStreamBeginCapture_v2_ptsz", 0x3000));
    p = NULL;
    rc = proc_lookup(how, "cuGraphInstantiate", &p, 11000, 0, &st);
    printf("v11=%d ",
           rc == 0 && p && p != real("cuGraphInstantiate", 11000, 0) && reaches(p, "cuGraphInstantiate", 0x4000));
    /* anything else comes back as the driver left it */
    p = NULL;
    rc = proc_lookup(how, "cuCtxGetCurrent", &p, 12000, 0, &st);
    printf("plain=%d ", rc == 0 && p && p == real("cuCtxGetCurrent", 12000, 0));
    p = (void *)0x1111;
    st = -1;
    rc = proc_lookup(how, "cuStreamBeginCapture", &p, 99999, 0, &st);
    printf("failed=%d ", rc == 1 && p == (void *)0x5a5a && st == -1);
    p = (void *)0x1111;
    rc = proc_lookup(how, "cuStreamBeginCaptureToGraph", &p, 12000, 0, &st);
    printf("empty=%d ", rc == 0 && !p && st == (v1 ? -1 : 2));
    p = (void *)0x1111;
    rc = proc_lookup(how, "cuNoSuchFunction", &p, 12000, 0, &st);
    printf("unknown=%d ", rc == 0 && !p && st == (v1 ? -1 : 1));
    /* cuGetProcAddress from cuGetProcAddress: looks up like the first (both ABIs) */
    p = NULL;
    rc = proc_lookup(how, "cuGetProcAddress", &p, 12000, 0, &st);
    void *q = NULL;
    int rc2 = p ? ((pa_fn)p)("cuGraphInstantiate", &q, 12000, 0, &st) : -1;
    printf("self=%d ", rc == 0 && p && p != real("cuGetProcAddress", 12000, 0) && rc2 == 0 && q &&
                           q != real("cuGraphInstantiate", 12000, 0) && reaches(q, "cuGraphInstantiate_v2", 0x5000));
    p = q = NULL;
    rc = proc_lookup(how, "cuGetProcAddress", &p, 11000, 0, &st);
    rc2 = p ? ((pa4_fn)p)("cuStreamBeginCapture", &q, 10000, 0) : -1;
    printf("self4=%d\n", rc == 0 && p && p != real("cuGetProcAddress", 11000, 0) && rc2 == 0 && q &&
                             q != real("cuStreamBeginCapture", 10000, 0) && reaches(q, "cuStreamBeginCapture", 0x6000));
    return 0;
}

/* The session-5 modes (see above). */
static int default_capture(void *rt, void *cu, int (*inject)(void), int argc, char **argv)
{
    typedef int (*memcpy_fn)(void *, const void *, size_t, int);
    typedef int (*memcpy_async_fn)(void *, const void *, size_t, int, void *);
    int (*enabled)(int) = (int (*)(int))dlsym(cu, "fake_cupti_enabled");
    memcpy_fn mc = (memcpy_fn)dlsym(RTLD_DEFAULT, "cudaMemcpy");
    memcpy_async_fn mca = (memcpy_async_fn)dlsym(RTLD_DEFAULT, "cudaMemcpyAsync");
    int (*reg)(void *, size_t, unsigned) = (int (*)(void *, size_t, unsigned))dlsym(RTLD_DEFAULT, "cudaHostRegister");
    int *queries = (int *)dlsym(rt, "fake_cudart_ptr_queries");
    if (!enabled || !mc || !mca || !reg || !queries)
        return fprintf(stderr, "cupti_driver: symbols missing (not preloaded?)\n"), 1;
    if (getenv("ARM_HOLD")) ((void (*)(int))dlsym(cu, "fake_cupti_set_no_cb"))(1); /* detaches stay armed */
    printf("inject=%d main_tid=%ld\n", inject(), (long)syscall(SYS_gettid));       /* the thread of every copy */
    if (!strcmp(argv[2], "copies")) {
        /* the window opened at initialisation closes at the first tick */
        for (int i = 0; i < 400 && enabled(10); i++) sleep_ms(5);
        printf("outside memcpy=%d memcpy2=%d memset=%d kernel=%d\n", enabled(1), enabled(22), enabled(2), enabled(10));
        int bad = 0, q0 = *queries;
        for (int i = 0; i < 50; i++) bad += mca((void *)0x2000, (void *)0x1000, 4096, 1, (void *)0x77) != 0;
        int q1 = *queries;
        for (int i = 0; i < 5; i++) bad += mc((void *)0x2000, (void *)0x5000, 8192, 1) != 0;
        for (int i = 0; i < 2; i++) bad += mc((void *)0x5000, (void *)0x2000, 16, 2) != 0;
        for (int i = 0; i < 30; i++) bad += mca((void *)0x3000, (void *)0x2000, 256, 3, (void *)0x77) != 0;
        int q2 = *queries;
        bad += reg((void *)0x5000, 8192, 0) != 0;
        bad += mc((void *)0x2000, (void *)0x5000, 12288, 1) != 0;
        printf("queries pinned=%d pageable+d2d=%d after_register=%d bad=%d\n", q1 - q0, q2 - q1, *queries - q2, bad);
        printf("after memcpy=%d kernel=%d\n", enabled(1), enabled(10));
    } else if (!strcmp(argv[2], "windows") || !strcmp(argv[2], "detach")) {
        int ms = argc > 3 ? atoi(argv[3]) : 1000;
        const char *event = argc > 4 ? argv[4] : "";
        if (!strncmp(event, "pgraph_", 7)) pgraph_lookup(event + 7);
        for (int i = 0; i * 2 < ms; i++) {
            if (i * 4 == ms && !strcmp(event, "register")) {
                typedef void (*req_fn)(unsigned char **, size_t *, size_t *);
                typedef void (*comp_fn)(void *, unsigned, unsigned char *, size_t, size_t);
                int (*reg)(req_fn, comp_fn) =
                    (int (*)(req_fn, comp_fn))dlsym(RTLD_DEFAULT, "cuptiActivityRegisterCallbacks");
                printf("register=%d ", reg((req_fn)dlsym(cu, "fake_other_req"), (comp_fn)dlsym(cu, "fake_other_comp")));
            } else if (i * 4 == ms && (!strcmp(event, "subscribe") || !strcmp(event, "dlsubscribe"))) {
                /* dlsubscribe: looked up in libcupti's own handle, as clients that dlopen CUPTI do */
                int (*sub)(void **, void *, void *) = (int (*)(void **, void *, void *))dlsym(
                    !strcmp(event, "subscribe") ? RTLD_DEFAULT : cu, "cuptiSubscribe");
                void *h = NULL;
                printf("subscribe=%d ", sub(&h, (void *)print_stats, NULL));
            }
            if (i * 4 == ms && !strcmp(event, "graph")) {
                int (*cap)(void *, int) = (int (*)(void *, int))dlsym(RTLD_DEFAULT, "cudaStreamBeginCapture");
                int (*inst)(void **, void *, unsigned long long) =
                    (int (*)(void **, void *, unsigned long long))dlsym(RTLD_DEFAULT, "cudaGraphInstantiateWithFlags");
                void *x = NULL;
                printf("graph=%d ", cap((void *)0x77, 0) + inst(&x, (void *)0x99, 0));
            }
            if (i * 4 == ms && !strncmp(event, "pgraph_", 7)) {
                /* an armed detach finalizes at the program's next CUDA call (never on the tracer's own) */
                for (int w = 0; w < 500 && getenv("EVENT_DETACHED") && attached_now(); w++) {
                    mc((void *)0x2000, (void *)0x1000, 64, 1);
                    sleep_ms(2);
                }
                print_stats("before_event");
                printf("%s=%d ", event, pgraph_call());
            }
            if (i * 4 == ms && !strcmp(event, "fork")) {
                /* fork while a detach is armed (ARM_HOLD): the child's first CUDA call must not finalize there */
                int (*subscribed)(void) = (int (*)(void))dlsym(cu, "fake_cupti_subscribed");
                void (*set_no_cb)(int) = (void (*)(int))dlsym(cu, "fake_cupti_set_no_cb");
                printf("armed_at_fork=%d ", subscribed());
                fflush(stdout);
                pid_t pid = fork();
                if (pid == 0) {
                    set_no_cb(0);
                    print_stats("child_before");
                    mc((void *)0x2000, (void *)0x1000, 64, 1);
                    print_stats("child_after");
                    _exit(0);
                }
                int st = -1;
                waitpid(pid, &st, 0);
                printf("child_status=%d ", st);
            }
            if (i * 4 == ms && !strcmp(event, "idle")) {
                /* no CUDA call for 700 ms (windows every 400 ms): nothing finalizes until the program's next call */
                print_stats("idle_before");
                sleep_ms(700);
                print_stats("idle_after");
            }
            if (i * 4 == ms && *event && getenv("ARM_HOLD")) {
                void (*set_no_cb)(int) = (void (*)(int))dlsym(cu, "fake_cupti_set_no_cb");
                set_no_cb(0); /* callbacks flow again: a detach still armed now would finalize */
            }
            if (i * 4 == ms && *event) {
                int (*owner_other)(void) = (int (*)(void))dlsym(cu, "fake_cupti_owner_is_other");
                if (!strcmp(event, "register")) printf("owner_other=%d ", owner_other());
                print_stats("at_event");
            }
            int a = enabled(1);
            mc((void *)0x2000, (void *)0x1000, 100000 + (size_t)i, 1);
            int b = enabled(1);
            printf("%d:%c ", i, a != b ? 'x' : a ? '1' : '0');
            sleep_ms(2);
        }
        printf("\n");
        if (!strcmp(argv[2], "detach")) print_stats("stats");
    } else {
        int (*burst)(int) = (int (*)(int))dlsym(cu, "fake_cupti_worker_burst");
        printf("burst=%d\n", burst ? burst(argc > 3 ? atoi(argv[3]) : 20000) : -1);
        fflush(stdout);
        sleep_ms(30); /* the worker is handing buffers back now; exit at once */
    }
    fflush(stdout);
    return 0;
}

/* The bench's switch of CUPTI's kinds in full mode (bench/gpu/parttoggle.py's cupti-off phase; run with
 * RAILSCOPE_CUDA_KERNELS=all RAILSCOPE_BENCH_HOOKS=1): off, then on again, each applied by the tracer's tick;
 * prints what CUPTI had enabled after each and how long the switch took to apply. */
static int bench_kinds(void *cu, int (*inject)(void))
{
    int (*enabled)(int) = (int (*)(int))dlsym(cu, "fake_cupti_enabled");
    int (*set)(int, int, int) = (int (*)(int, int, int))dlsym(RTLD_DEFAULT, "railscope_bench_cuda");
    int (*window)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "railscope_bench_cuda_window");
    if (!enabled || !set || !window) return fprintf(stderr, "cupti_driver: symbols missing (not preloaded?)\n"), 1;
    int in = inject();
    printf("inject=%d start kernel=%d memcpy=%d\n", in, enabled(10), enabled(1));
    for (int on = 0; on < 2; on++) {
        int r = set(!on, !on, on), w = -1, ms = 0;
        for (; ms < 3000 && (w = window()) != on; ms += 5) sleep_ms(5);
        printf("%s set=%d window=%d applied=%s kernel=%d memcpy=%d\n", on ? "on" : "off", r, w,
               ms < 3000 ? "yes" : "no", enabled(10), enabled(1));
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) return 2;
    char path[4096];
    /* FAKE_RT_NAME: the runtime under another name, as a program with a static cudart has no libcudart.so */
    const char *rtname = getenv("FAKE_RT_NAME");
    snprintf(path, sizeof path, "%s/%s", argv[1], rtname && *rtname ? rtname : "libcudart.so.13");
    void *rt = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    snprintf(path, sizeof path, "%s/libcupti.so.13", argv[1]);
    void *cu = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!rt || !cu) return fprintf(stderr, "cupti_driver: %s\n", dlerror()), 1;
    snprintf(path, sizeof path, "%s/libcuda.so.1", argv[1]);
    dlopen(path, RTLD_NOW | RTLD_GLOBAL); /* the driver, loaded before it calls InitializeInjection */
    attach_stats = (void (*)(int *, int *, int *, int *))dlsym(cu, "fake_cupti_attach_stats");
    atexit(exit_stats); /* registered before the tracer's exit handlers: runs after them */
    int (*inject)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "InitializeInjection");
    int (*deliver)(void) = (int (*)(void))dlsym(cu, "fake_cupti_deliver");
    int (*enabled)(int) = (int (*)(int))dlsym(cu, "fake_cupti_enabled");
    int (*rtapi)(int) = (int (*)(int))dlsym(cu, "fake_cupti_runtime_api");
    typedef void (*req_fn)(unsigned char **, size_t *, size_t *);
    typedef void (*comp_fn)(void *, unsigned, unsigned char *, size_t, size_t);
    int (*reg)(req_fn, comp_fn) = (int (*)(req_fn, comp_fn))dlsym(RTLD_DEFAULT, "cuptiActivityRegisterCallbacks");
    req_fn other_req = (req_fn)dlsym(cu, "fake_other_req");
    comp_fn other_comp = (comp_fn)dlsym(cu, "fake_other_comp");
    int (*owner_other)(void) = (int (*)(void))dlsym(cu, "fake_cupti_owner_is_other");
    if (!inject) return fprintf(stderr, "cupti_driver: InitializeInjection not found (not preloaded?)\n"), 1;
    fakedir = argv[1];
    if (!strcmp(argv[2], "procaddr")) {
        printf("inject=%d\n", inject());
        const char *more = argc > 4 ? argv[4] : "";
        return procaddr_checks(argc > 3 ? argv[3] : "v2", !strcmp(more, "full") ? 1 : !strcmp(more, "threads") ? 2 : 0);
    }
    if (!strcmp(argv[2], "copies") || !strcmp(argv[2], "windows") || !strcmp(argv[2], "wburst") ||
        !strcmp(argv[2], "detach"))
        return default_capture(rt, cu, inject, argc, argv);
    if (!strcmp(argv[2], "benchkinds")) return bench_kinds(cu, inject);
    if (!strcmp(argv[2], "early")) {
        int rr = reg ? reg(other_req, other_comp) : -1;
        int r0 = inject();
        typedef int (*memcpy_fn)(void *, const void *, size_t, int);
        memcpy_fn mc = (memcpy_fn)dlsym(RTLD_DEFAULT, "cudaMemcpy");
        int bad = mc((void *)0x2000, (void *)0x1000, 4096, 1) != 0;
        printf("early register=%d inject=%d owner_other=%d bad=%d\n", rr, r0, owner_other(), bad);
        return 0;
    }
    int r = inject();
    printf("inject=%d\n", r);
    printf("enabled memcpy=%d memcpy2=%d memset=%d sync=%d kernel=%d\n", enabled(1), enabled(22), enabled(2),
           enabled(38), enabled(10));
    printf("runtime_api memcpy=%d memcpyasync=%d getdevice=%d launch=%d\n", rtapi(31), rtapi(41), rtapi(3), rtapi(211));
    if (!strcmp(argv[2], "burst")) {
        int (*many)(int) = (int (*)(int))dlsym(cu, "fake_cupti_deliver_many");
        printf("burst=%d\n", many(4000));
        return 0;
    }
    if (!strcmp(argv[2], "flushes")) return flush_cadence(cu, argc > 3 ? atoi(argv[3]) : 2500);
    printf("deliver=%d\n", deliver());
    if (!strcmp(argv[2], "takeover")) {
        int rr = reg ? reg(other_req, other_comp) : -1;
        printf("register=%d owner_other=%d\n", rr, owner_other());
        typedef int (*memcpy_fn)(void *, const void *, size_t, int);
        memcpy_fn mc = (memcpy_fn)dlsym(RTLD_DEFAULT, "cudaMemcpy");
        int bad = 0;
        for (int i = 0; i < 10; i++) bad += mc((void *)0x2000, i & 1 ? (void *)0x1000 : (void *)0x5000, 4096, 1) != 0;
        bad += mc((void *)0x5000, (void *)0x2000, 64, 3) != 0; /* device-to-device */
        bad += mc((void *)0x2000, (void *)0x6000, 64, 1) != 0; /* a source the attribute query rejects */
        /* the per-thread-default-stream names of a `--default-stream per-thread` build */
        memcpy_fn mc_ptds = (memcpy_fn)dlsym(RTLD_DEFAULT, "cudaMemcpy_ptds");
        typedef int (*memcpy_async_fn)(void *, const void *, size_t, int, void *);
        memcpy_async_fn mca_ptsz = (memcpy_async_fn)dlsym(RTLD_DEFAULT, "cudaMemcpyAsync_ptsz");
        bad += !mc_ptds || mc_ptds((void *)0x2000, (void *)0x1000, 8192, 1) != 0;
        bad += !mca_ptsz || mca_ptsz((void *)0x5000, (void *)0x2000, 12288, 2, (void *)0x77) != 0;
        int (*last)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "cudaGetLastError");
        int *copies = (int *)dlsym(rt, "fake_cudart_copies");
        printf("copies=%d bad=%d last_error=%d\n", copies ? *copies : -1, bad, last ? last() : -1);
    }
    fflush(stdout);
    return 0;
}
