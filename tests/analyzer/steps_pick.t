#!/bin/bash
# Which NVTX name or marks are the steps when several compete (audit s17 items 2, 3, 8), against a host-only
# NVTX3 client recorded by `railscope record` (which sets NVTX_INJECTION64_PATH). It plants 30 steps of 10 ms,
# every 10th (9, 19, 29) 80 ms, and prints its measured mean. Checked: a higher-priority name on a few steps
# only (a torch.profiler window, one `step 0`) does not beat a name on every step; per-layer and micro-batch
# ranges inside a step range are not the steps; N marks at step starts with nothing recorded after the last
# one give N steps, the last one ending at PROC_END; and the names that worked before still do.
. "$(dirname "$0")/../lib.sh"
need_build railscope librailscope.so
need_cmd cc jq
CUDA_INC=${CUDA_HOME:-/usr/local/cuda}/include
[ -e "$CUDA_INC/nvtx3/nvToolsExt.h" ] || skip_all "no NVTX3 headers in $CUDA_INC"
plan 16

cat >"$T/nv.c" <<'C'
/* OUTER: each step's range format (one %d or none; empty: no range); WRAP: a range around the step's range
 * on steps WRAP_FROM..WRAP_TO-1 (format); INNER: comma-separated names of ranges splitting the step; EPOCH:
 * steps per "epoch %d" range around them; MARK: an NVTX mark at each step's start (format); TEARDOWN_MS:
 * sleep after the loop, recording nothing. Prints "mean MS" of the planted steps. */
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
static const char *env(const char *k) { return getenv(k) ? getenv(k) : ""; }
static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}
static void sleep_ms(double ms)
{
    struct timespec t = {(time_t)(ms / 1e3), (long)((ms - 1e3 * (long)(ms / 1e3)) * 1e6)};
    nanosleep(&t, NULL);
}
int main(void)
{
    const char *outer = env("OUTER"), *wrap = env("WRAP"), *inner = env("INNER"), *mark = env("MARK");
    int from = atoi(env("WRAP_FROM")), to = atoi(env("WRAP_TO")), epoch = atoi(env("EPOCH"));
    char buf[256], in[256], *parts[16];
    int ni = 0;
    snprintf(in, sizeof in, "%s", inner);
    for (char *t = strtok(in, ","); t && ni < 16; t = strtok(NULL, ",")) parts[ni++] = t;
    double tot = 0;
    for (int i = 0; i < 30; i++) {
        double d = i % 10 == 9 ? 80 : 10, t0 = now(); /* 8x: a 10 ms sleep stretched under load must not pass for one */
        if (epoch && i % epoch == 0) {
            snprintf(buf, sizeof buf, "epoch %d", i / epoch);
            nvtxRangePushA(buf);
        }
        if (*mark) {
            snprintf(buf, sizeof buf, mark, i);
            nvtxMarkA(buf);
        }
        int w = *wrap && i >= from && i < to;
        if (w) {
            snprintf(buf, sizeof buf, wrap, i);
            nvtxRangePushA(buf);
        }
        if (*outer) {
            snprintf(buf, sizeof buf, outer, i);
            nvtxRangePushA(buf);
        }
        for (int k = 0; k < ni; k++) {
            nvtxRangePushA(parts[k]);
            sleep_ms(d / ni);
            nvtxRangePop();
        }
        if (!ni) sleep_ms(d);
        if (*outer) nvtxRangePop();
        if (w) nvtxRangePop();
        if (epoch && i % epoch == epoch - 1) nvtxRangePop();
        tot += now() - t0;
    }
    printf("mean %.3f\n", tot / 30);
    sleep_ms(atoi(env("TEARDOWN_MS")));
    return 0;
}
C
cc -O1 -I"$CUDA_INC" -o "$T/nv" "$T/nv.c" -ldl || bail "cannot build the NVTX program"

# rec CASE ENV...: record the program under ENV and report it (JSON in $T/CASE.json)
rec() {
    local c=$1
    shift
    rm -rf "${T:?}/$c"
    env "$@" "$RS_CLI" record -q -o "$T/$c" -- "$T/nv" >"$T/$c.out" 2>"$T/$c.err" || bail "record $c failed"
    "$RS_CLI" report --json "$T/$c" >"$T/$c.json" 2>"$T/$c.rerr"
}
q() { jq -r "$1" "$T/$2.json"; }
# near CASE: the report's mean step within 5 % of the program's own
near() {
    awk -v r="$(q .step_mean_s "$1")" -v t="$(awk '/^mean/ { print $2 }' "$T/$1.out")" \
        'BEGIN { d = r * 1e3 - t; if (d < 0) d = -d; exit !(t > 0 && d <= 0.05 * t) }'
}
# slow CASE: the ids of the 3 longest steps, sorted
slow() { q '[.ranks[0].steps | sort_by(-.dur_s)[:3][].id] | sort | join(",")' "$1"; }

# 1. a higher-priority name must cover the run to win on priority
rec prof OUTER="train_step %d" WRAP="ProfilerStep#%d" WRAP_FROM=10 WRAP_TO=15
is "$(q .step_source prof),$(q .nsteps prof),$(slow prof)" "nvtx ranges,30,9,19,29" \
    "'ProfilerStep#N' on 5 of 30 steps: the 30 'train_step N' are the steps, slow ones 9, 19, 29"
ok "profiler window: mean step within 5 % of the truth" near prof
rec one OUTER="fwd_bwd %d" WRAP="step %d" WRAP_FROM=0 WRAP_TO=1
is "$(q .nsteps one),$(slow one)" "30,9,19,29" "a single 'step 0' does not beat 30 'fwd_bwd N'"
rec profall OUTER="train_step %d" WRAP="ProfilerStep#%d" WRAP_FROM=0 WRAP_TO=30
is "$(q .nsteps profall),$(slow profall)" "30,9,19,29" "'ProfilerStep#N' on every step (around 'train_step N'): 30"

# 2. ranges inside a step range are not the steps
rec layers OUTER="train_step" INNER="layer_0,layer_1,layer_2,layer_3"
is "$(q .nsteps layers),$(slow layers)" "30,9,19,29" "'layer_N' inside a counter-less 'train_step': 30 steps"
ok "layers: mean step within 5 % of the truth" near layers
rec batch OUTER="train_step" INNER="batch 0,batch 1,batch 2,batch 3"
is "$(q .nsteps batch),$(slow batch)" "30,9,19,29" "micro-batches 'batch N' inside 'train_step': 30 steps"
rec iterb OUTER="iteration %d" INNER="batch 0,batch 1"
is "$(q .nsteps iterb),$(q '.ranks[0].steps[4].id' iterb)" "30,4" "'batch N' inside 'iteration N': 30, ids from 'iteration'"
rec epoch OUTER="step %d" EPOCH=10
is "$(q .nsteps epoch),$(q '.ranks[0].steps[4].id' epoch)" "30,4" "'epoch N' around 'step N' ranges: the steps are 'step N'"
ok "epoch: mean step within 5 % of the truth" near epoch

# 3. marks at step starts, nothing recorded after the last one: 30 steps, the last one ends at PROC_END
rec marks OUTER="" MARK="step %d" TEARDOWN_MS=100
is "$(q .step_source marks),$(q .nsteps marks),$(q '.ranks[0].steps[-1].id' marks)" "marks,30,29" \
    "30 marks, nothing after the last: 30 steps, the last one is step 29"
ok "marks: the last step holds its 80 ms and the 100 ms teardown" \
    awk -v d="$(q '.ranks[0].steps[-1].dur_s' marks)" 'BEGIN { exit !(d >= 0.125 && d < 0.5) }'
rec marks0 OUTER="" MARK="step %d"
is "$(q .nsteps marks0),$(slow marks0)" "30,9,19,29" "marks without teardown: 30 steps, the slow ones 9, 19, 29"

# names that worked before still do
rec nested OUTER="step %d" INNER="forward,backward,optimizer"
is "$(q .nsteps nested),$(slow nested)" "30,9,19,29" "'forward'/'backward'/'optimizer' inside 'step N': 30"
rec train OUTER="train_step"
is "$(q .nsteps train),$(slow train)" "30,9,19,29" "'train_step' alone: 30"
"$RS_CLI" report --json --step-marker train_step "$T/prof" >"$T/profsm.json" 2>/dev/null
is "$(q .step_source profsm),$(q .nsteps profsm)" "marker train_step,30" "--step-marker train_step still chooses"
