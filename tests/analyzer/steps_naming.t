#!/bin/bash
# Step detection from NVTX range names and --step-marker (audit s17 items 1, 6, 7), against a host-only NVTX3
# client recorded by `railscope record` (which sets NVTX_INJECTION64_PATH). It plants 30 steps of 10 ms, every
# 10th 30 ms, and prints its measured mean. Checked: ranges started on one thread and ended on another (their
# End can be read before their Start: events come in per-thread-buffer order); --step-marker matching a word,
# not a prefix, in any case, with the counter after any separator; counters followed by "/total" or in brackets.
. "$(dirname "$0")/../lib.sh"
need_build railscope librailscope.so
need_cmd cc jq
CUDA_INC=${CUDA_HOME:-/usr/local/cuda}/include
[ -e "$CUDA_INC/nvtx3/nvToolsExt.h" ] || skip_all "no NVTX3 headers in $CUDA_INC"
plan 15

cat >"$T/nv.c" <<'C'
/* NAME: the step range's format (one %d); SE=1: nvtxRangeStartA here, nvtxRangeEnd on a persistent other
 * thread; EXTRA: a sibling 1 ms range after each step (its format). Prints "mean MS" of the planted steps. */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}
static void sleep_ms(int ms)
{
    struct timespec t = {0, ms * 1000000L};
    nanosleep(&t, NULL);
}
static nvtxRangeId_t id;
static int pending, done;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static void *ender(void *a)
{
    (void)a;
    pthread_mutex_lock(&mu);
    for (;;) {
        while (!pending && !done) pthread_cond_wait(&cv, &mu);
        if (!pending) break;
        nvtxRangeEnd(id);
        pending = 0;
        pthread_cond_broadcast(&cv);
    }
    pthread_mutex_unlock(&mu);
    return NULL;
}
int main(void)
{
    const char *name = getenv("NAME"), *extra = getenv("EXTRA"), *se = getenv("SE");
    int split = se && *se == '1';
    char buf[256];
    double tot = 0;
    pthread_t th;
    if (split) pthread_create(&th, NULL, ender, NULL);
    for (int i = 0; i < 30; i++) {
        double t0 = now();
        snprintf(buf, sizeof buf, name, i);
        if (split) id = nvtxRangeStartA(buf);
        else nvtxRangePushA(buf);
        sleep_ms(i % 10 == 9 ? 30 : 10);
        if (split) {
            pthread_mutex_lock(&mu);
            for (pending = 1, pthread_cond_broadcast(&cv); pending;) pthread_cond_wait(&cv, &mu);
            pthread_mutex_unlock(&mu);
        } else nvtxRangePop();
        tot += now() - t0; /* the step range's length: the sibling range below is no part of it */
        if (extra && *extra) {
            snprintf(buf, sizeof buf, extra, i);
            nvtxRangePushA(buf);
            sleep_ms(1);
            nvtxRangePop();
        }
    }
    if (split) {
        pthread_mutex_lock(&mu);
        done = 1;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
        pthread_join(th, NULL);
    }
    printf("mean %.3f\n", tot / 30);
    return 0;
}
C
cc -O1 -I"$CUDA_INC" -o "$T/nv" "$T/nv.c" -lpthread -ldl || bail "cannot build the NVTX program"

# rec CASE ENV...: record the program under ENV; report CASE [OPTS]: the JSON report in $T/CASE.json
rec() {
    local c=$1
    shift
    rm -rf "${T:?}/$c"
    env "$@" "$RS_CLI" record -q -o "$T/$c" -- "$T/nv" >"$T/$c.out" 2>"$T/$c.err" || bail "record $c failed"
}
report() {
    local c=$1
    shift
    "$RS_CLI" report --json "$@" "$T/$c" >"$T/$c.json" 2>"$T/$c.rerr"
}
q() { jq -r "$1" "$T/$2.json"; }
# near CASE: the report's mean step within 5 % of the program's own (an End dropped for want of its Start
# leaves a subset of the steps, and the long ones weigh more in it)
near() {
    awk -v r="$(q .step_mean_s "$1")" -v t="$(awk '/^mean/ { print $2 }' "$T/$1.out")" \
        'BEGIN { d = r * 1e3 - t; if (d < 0) d = -d; exit !(t > 0 && d <= 0.05 * t) }'
}

# 1. ranges ended on another thread (nvtxRangeStartA, then nvtxRangeEnd from a worker)
rec se NAME="train_step %d" SE=1
report se
is "$(q .step_source se),$(q .nsteps se)" "nvtx ranges,30" "start/end on two threads: 30 steps"
ok "start/end on two threads: mean step within 5 % of the truth" near se
is "$(q '[.ranks[0].steps[].id] | sort | join(",")' se)" "$(seq -s, 0 29)" "start/end on two threads: ids 0..29"
rec push NAME="train_step %d"
report push
is "$(q .nsteps push)" 30 "push/pop control: 30 steps"

# 2. --step-marker: a word, not a prefix; any case; the counter after any separator
rec prefix NAME="step %d" EXTRA="step_log %d"
report prefix --step-marker step
is "$(q .step_source prefix),$(q .nsteps prefix)" "marker step,30" "--step-marker step leaves 'step_log N' out"
ok "--step-marker step: mean step within 5 % of the truth" near prefix
rec colon NAME="iteration:%d"
report colon --step-marker iteration
is "$(q .nsteps colon),$(q '.ranks[0].steps[7].id' colon)" "30,7" "--step-marker iteration: 'iteration:7' is step 7"
rec case NAME="Step %d"
report case --step-marker step
is "$(q .step_source case),$(q .nsteps case)" "marker step,30" "--step-marker step takes 'Step N'"
rec total NAME="steps_total %d"
report total --step-marker step
isnt "$(q .step_source total)" "marker step" "--step-marker step does not take 'steps_total N'"

# 3. a counter before "/total" or in brackets: one stem, the counter is the step's id
for c in "slash:step %d/30" "paren:step(%d)" "brk:step [%d]"; do
    rec "${c%%:*}" NAME="${c#*:}"
    report "${c%%:*}"
    is "$(q .step_source "${c%%:*}"),$(q .nsteps "${c%%:*}"),$(q '.ranks[0].steps[4].id' "${c%%:*}")" \
        "nvtx ranges,30,4" "'${c#*:}': 30 steps, ids the counter"
done
ok "'step %d/30': mean step within 5 % of the truth" near slash
report slash --step-marker step
is "$(q .nsteps slash),$(q '.ranks[0].steps[4].id' slash)" "30,4" "'step %d/30' with --step-marker step"

# names that worked before still do
rec prof NAME="ProfilerStep#%d"
report prof
is "$(q .nsteps prof),$(q '.ranks[0].steps[4].id' prof)" "30,4" "'ProfilerStep#N' unchanged"
