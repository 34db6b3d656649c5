#!/bin/bash
# exit() from several threads at once (issue 17 D3): with the tracer preloaded, 3 threads that each
# recorded 2000 marks call exit(3) at the same moment; before the fix the first thread to find glibc's
# exit handlers done ended the process in the middle of another thread's final flush (0 events and no
# PROC_END in 20 of 20 runs here). Now the first exit() goes on and later ones wait for the end. Also:
# main returning from main while two threads call exit() (the unwrapped path: a barrier handler).
. "$(dirname "$0")/../lib.sh"
need_build tests/core/check librailscope.so
C=$RS_BUILD/tests/core/check
CC=${CC:-cc}
need_cmd "$CC"
plan 4

cat >"$T/exit_race.c" <<'SRC'
/* Threads that call exit() at the same moment (issue 17 D3), in a program that runs with the tracer
 * preloaded: each of T threads records N marks through railscope_mark (looked up with dlsym, as
 * include/railscope.h says), waits at a barrier, then calls exit(3); main waits in pthread_join.
 *     exit_race [-t THREADS] [-n MARKS] [-m]     -m: main returns from main (status 0) at the barrier instead of joining
 * Built by the test that uses it (tests/core/exit_race.t) with the system compiler. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void (*mark)(const char *, uint64_t);
static long nthreads = 3, nmarks = 2000;
static int main_returns;
static pthread_barrier_t bar;

static void *worker(void *arg)
{
    uint64_t idx = (uint64_t)(uintptr_t)arg;
    for (long i = 0; i < nmarks; i++)
        if (mark) mark("m", idx << 32 | (uint64_t)i);
    pthread_barrier_wait(&bar);
    exit(3);
}

int main(int argc, char **argv)
{
    int c;
    while ((c = getopt(argc, argv, "t:n:m")) != -1) {
        if (c == 't') nthreads = atol(optarg);
        else if (c == 'n') nmarks = atol(optarg);
        else if (c == 'm') main_returns = 1;
        else return 2;
    }
    mark = (void (*)(const char *, uint64_t))dlsym(RTLD_DEFAULT, "railscope_mark");
    pthread_barrier_init(&bar, NULL, (unsigned)(nthreads + main_returns));
    pthread_t t[64];
    for (long i = 0; i < nthreads && i < 64; i++) pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i);
    if (main_returns) {
        pthread_barrier_wait(&bar);
        return 0;
    }
    for (long i = 0; i < nthreads && i < 64; i++) pthread_join(t[i], NULL);
    return 1;
}
SRC
"$CC" -O1 -o "$T/exit_race" "$T/exit_race.c" -ldl -lpthread || bail "cannot build exit_race"

good=0 bad=
for i in $(seq 10); do
    rm -rf "$T/o"
    run_timeout 30 env RAILSCOPE_OUT="$T/o" LD_PRELOAD="$RS_PRELOAD" "$T/exit_race" -t 3 -n 2000
    rc=$?
    res=$("$C" "$T"/o/*.rtrace 2>&1)
    if [ $rc = 3 ] && [[ $res == *"status=complete marks=6000 gaps=0 "*"drops=0 "*"proc_end=1 end_status=3 end_reason=0 "* ]]; then
        good=$((good + 1))
    else
        bad="rc=$rc $res"
    fi
done
is "$good" 10 "3 threads exit(3) at once, 10 runs: every file has the 6000 marks and PROC_END(3)"
[ -n "$bad" ] && diag "last bad run: $bad"

good=0 bad= mism=0 noend=0
for i in $(seq 10); do
    rm -rf "$T/m"
    run_timeout 30 env RAILSCOPE_OUT="$T/m" LD_PRELOAD="$RS_PRELOAD" "$T/exit_race" -t 2 -n 2000 -m
    rc=$?
    res=$("$C" "$T"/m/*.rtrace 2>&1)
    # Returning from main calls exit() inside libc, where no wrapper sees it; with two threads in exit(3) at
    # the same time (undefined behaviour in C: exit() called more than once) glibc runs the exit handlers in
    # both, and the one that did not run ours can reach _exit while ours writes: PROC_END then has the other
    # status (seen under ASan on a loaded box) or, rarer, is missing (1 of 10 in one clean-clone run beside the
    # sanitizer suites; 0 of 160 loaded runs since). The marks must always be complete; a PROC_END, when there,
    # has one of the two statuses; the status mismatch and a missing PROC_END are counted and shown, and more
    # than 2 missing of 10 fails (docs/recording.md).
    if [[ $rc =~ ^[03]$ ]] && [[ $res == *"status=complete marks=4000 gaps=0 "*"proc_end=1 end_status="[03]" end_reason=0 "* ]]; then
        good=$((good + 1))
        [[ $res == *"end_status=$rc "* ]] || mism=$((mism + 1))
    elif [[ $rc =~ ^[03]$ ]] && [[ $res == *"status=incomplete marks=4000 gaps=0 "*"proc_end=0 "* ]] &&
        [[ $res == *"ends at a frame boundary, but no PROC_END"* ]]; then
        # (the reader calls a file without PROC_END incomplete: this branch matched "status=complete" until session
        # 33, so the missing PROC_END it was written to count failed the check instead: a clean clone, 1 of 10)
        good=$((good + 1)) noend=$((noend + 1))
        bad="rc=$rc $res"
    else
        bad="rc=$rc $res"
    fi
done
ok "main returns while 2 threads exit(3), 10 runs: every mark, PROC_END(one of the two statuses) in >= 8 (good $good, PROC_END missing $noend)" \
    test "$good" = 10 -a "$noend" -le 2
[ -n "$bad" ] && diag "last run without PROC_END or bad: $bad"
diag "PROC_END status differed from the process's exit status in ${mism:-0} of 10 runs, missing in ${noend:-0} (the racing exits)"

# The program still ends with the status of the exit() that won, and untraced behaviour is unchanged.
run_timeout 30 "$T/exit_race" -t 3 -n 10
is "$?" 3 "untraced: exit status 3"
run_timeout 30 env RAILSCOPE_OUT="$T/q" LD_PRELOAD="$RS_PRELOAD" "$T/exit_race" -t 8 -n 10
is "$?" 3 "8 threads exit at once under the tracer: exit status 3, no hang"
