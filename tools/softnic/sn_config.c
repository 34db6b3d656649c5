/* softnic: configuration from the environment and the link model (rate, latency, PFC-like pause). */
#include "sn.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct sn_config cfg;
static pthread_once_t cfg_once = PTHREAD_ONCE_INIT;

static void cfg_load(void)
{
    const char *s;
    snprintf(cfg.device, sizeof cfg.device, "%s", (s = getenv("SOFTNIC_DEVICE")) && *s ? s : "softnic0");
    if ((s = getenv("SOFTNIC_DIR")) && *s) snprintf(cfg.dir, sizeof cfg.dir, "%s", s);
    else snprintf(cfg.dir, sizeof cfg.dir, "/tmp/softnic-%u", (unsigned)getuid());
    cfg.rate_gbps = 100;
    if ((s = getenv("SOFTNIC_RATE_GBPS")) && *s) {
        double v = strtod(s, NULL);
        if (v > 0.001 && v < 100000) cfg.rate_gbps = v;
        else fprintf(stderr, "softnic: ignoring SOFTNIC_RATE_GBPS=%s\n", s);
    }
    cfg.latency_ns = 2000;
    if ((s = getenv("SOFTNIC_LATENCY_US")) && *s) {
        double v = strtod(s, NULL);
        if (v >= 0 && v < 1e7) cfg.latency_ns = (uint64_t)(v * 1000);
        else fprintf(stderr, "softnic: ignoring SOFTNIC_LATENCY_US=%s\n", s);
    }
    if ((s = getenv("SOFTNIC_PAUSE")) && *s) {
        double every = 0, dur = 0;
        if (sscanf(s, "%lf:%lf", &every, &dur) == 2 && every > 0 && dur > 0 && dur < every) {
            cfg.pause_every_ns = (uint64_t)(every * 1e6);
            cfg.pause_for_ns = (uint64_t)(dur * 1e6);
        } else {
            fprintf(stderr, "softnic: ignoring SOFTNIC_PAUSE=%s (want EVERY_MS:FOR_MS, FOR < EVERY)\n", s);
        }
    }
    cfg.link_eth = (s = getenv("SOFTNIC_LINK")) && !strcmp(s, "eth");
    cfg.slice_ns = 100000;
    if ((s = getenv("SOFTNIC_SLICE_US")) && *s) {
        char *end;
        double v = strtod(s, &end);
        if (!*end && (v == 0 || (v >= 100 && v <= 100000))) cfg.slice_ns = (uint64_t)(v * 1000);
        else fprintf(stderr, "softnic: ignoring SOFTNIC_SLICE_US=%s (want 0, or 100-100000)\n", s);
    }
    if ((s = getenv("SOFTNIC_TEST_ACCEPT_DELAY_US")) && *s) {
        char *end;
        double v = strtod(s, &end);
        if (!*end && v >= 0 && v <= 1e7) cfg.test_accept_delay_ns = (uint64_t)(v * 1000);
        else fprintf(stderr, "softnic: ignoring SOFTNIC_TEST_ACCEPT_DELAY_US=%s (want 0-10000000)\n", s);
    }
}

const struct sn_config *sn_cfg(void)
{
    pthread_once(&cfg_once, cfg_load);
    return &cfg;
}

uint64_t sn_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Pause windows are [k*EVERY, k*EVERY+FOR) on CLOCK_MONOTONIC, so every process on the host pauses
 * at the same moments (like PFC from a shared switch). */
uint64_t sn_unpause(uint64_t t)
{
    const struct sn_config *c = sn_cfg();
    if (!c->pause_every_ns) return t;
    uint64_t in = t % c->pause_every_ns;
    return in < c->pause_for_ns ? t - in + c->pause_for_ns : t;
}

uint64_t sn_tx_end(uint64_t start, uint64_t bytes)
{
    const struct sn_config *c = sn_cfg();
    uint64_t left = (uint64_t)((double)bytes * 8.0 / c->rate_gbps); /* Gb/s == bits per ns */
    uint64_t t = sn_unpause(start);
    if (!c->pause_every_ns) return t + left;
    for (;;) { /* transmit until the next window opens, skip it, repeat */
        uint64_t next_pause = t - t % c->pause_every_ns + c->pause_every_ns;
        if (t + left <= next_pause) return t + left;
        left -= next_pause - t;
        t = next_pause + c->pause_for_ns;
    }
}

void sn_sleep_until(uint64_t t)
{
    struct timespec ts = {.tv_sec = (time_t)(t / 1000000000ull), .tv_nsec = (long)(t % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* Pick the IB speed x width pair closest to the configured rate (for tools such as NCCL that compute
 * bandwidth from active_speed/active_width). */
void sn_rate_to_ib(double gbps, uint8_t *speed, uint8_t *width)
{
    static const struct {
        uint8_t code;
        double gbps;
    } sp[] = {
        {1, 2.5}, {2, 5}, {4, 10}, {16, 14}, {32, 25}, {64, 50}, {128, 100},
    };
    static const struct {
        uint8_t code;
        int lanes;
    } wd[] = {{1, 1}, {2, 4}, {4, 8}, {8, 12}};
    double best = 1e30;
    *speed = 32;
    *width = 2;
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++)
        for (size_t j = 0; j < sizeof wd / sizeof wd[0]; j++) {
            double d = sp[i].gbps * wd[j].lanes - gbps;
            if (d < 0) d = -d;
            if (d < best) {
                best = d;
                *speed = sp[i].code;
                *width = wd[j].code;
            }
        }
}

/* SOFTNIC_DEBUG_SEGV=1: print a native backtrace on SIGSEGV/SIGBUS/SIGABRT (to tell a crash in the
 * software NIC from one in the program using it), then die with the same signal. */
#include <execinfo.h>
#include <signal.h>

static void sn_crash(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    void *pc[64];
    int n = backtrace(pc, 64);
    char msg[96];
    /* the faulting data address tells a NULL dereference (small) from a wild one */
    int len =
        snprintf(msg, sizeof msg, "softnic: fatal signal %d at address %p, backtrace:\n", sig, si ? si->si_addr : NULL);
    if (len > 0 && write(2, msg, (size_t)len) < 0) {
        /* nothing to do */
    }
    backtrace_symbols_fd(pc, n, 2);
    signal(sig, SIG_DFL);
    raise(sig);
}

__attribute__((constructor)) static void sn_debug_init(void)
{
    const char *s = getenv("SOFTNIC_DEBUG_SEGV");
    if (s && *s && *s != '0') {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = sn_crash;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSEGV, &sa, NULL);
        sigaction(SIGBUS, &sa, NULL);
        sigaction(SIGABRT, &sa, NULL);
    }
}
