#!/bin/bash
# The step hint (session 19): when a rank's steps come from elsewhere than NVTX ranges (collective periodicity, marks,
# the whole trace) while it had NVTX ranges with a step-like name that detection passed over (a step word without a
# counter, or a name that is no step word with a counter, on fewer than 3 ranges), the report says so once, naming the
# ranges as written (cut at their counter) and the --step-marker option that uses them. Before, it said only its step
# source and the user could not know the option would take their ranges.
# Crafted runs (tests/analyzer/craft.h): 2 ranks, 10 steps of 10 ms, one AllReduce at +8 ms of each step (steps from
# collective periodicity: 9, each from one AllReduce's end to the next's), NVTX push/pop ranges on the first N steps
# (pushed at +1 us, popped at +9.5 ms):
#   two:    2 `train_step` ranges per rank: the hint names train_step, 2 ranges, and the option; with that option the
#           steps are those 2 ranges (ids 0, 1)
#   many:   30 steps, `iteration N` ranges on every one: they are the steps, no hint
#   none:   no NVTX: no hint
#   marker: the two-range run with --step-marker train_step (no hint: ranges chosen) and with --step-marker nope (its
#           own warning, no hint)
#   epoch:  2 `epoch N` ranges around 5 steps each: no hint (coarser than the steps found: not steps it missed)
#   fwd:    2 `fwd_bwd N` ranges (a counter, no step word): the hint names fwd_bwd; the option uses them
#   space:  2 `fwd bwd N` ranges: the option is quoted
#   some:   3 ranks, the ranges on ranks 1 and 2 only (rank 0 has none): "2 on rank 1 and on 1 other rank"
#   marks:  steps from marks ("step N" core MARKs at each step's start) and 2 `train_step` ranges: the hint says marks
#   tail:   PyTorch emit_nvtx() names (`train_step, op_id = 7`): the hint names train_step
. "$(dirname "$0")/../lib.sh"
need_build railscope
need_cmd cc
need_cmd jq
plan 25

cat >"$T/gen.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/analyzer/craft.h"
#include "tracer/writer.h"

CRAFT_GENERATOR
/* gen DIR RANKS STEPS NAME NRANGES RANGE_RANKS MARKS SPAN: NAME the ranges' format (one %d or none; "" no range),
 * NRANGES of them from the first step, each around SPAN steps, on the ranks in the bit mask RANGE_RANKS; MARKS 1: a
 * core MARK "step N" at each step's start */
int main(int argc, char **argv)
{
    if (argc != 9) die("usage");
    const char *dir = argv[1], *fmt = argv[4];
    const int nranks = atoi(argv[2]), nsteps = atoi(argv[3]), nranges = atoi(argv[5]), mask = atoi(argv[6]);
    const int marks = atoi(argv[7]), span = atoi(argv[8]);
    const uint64_t us = 1000, ms = 1000 * us, t0 = 1 * ms;
    for (int r = 0; r < nranks; r++) {
        if (!(w = craft_open(dir, r, nranks, 7000, "all", "steps_hint", 7))) die("open");
        uint64_t last = 0;
        for (int k = 0; k < nsteps; k++) {
            const uint64_t s = t0 + (uint64_t)k * 10 * ms;
            char name[128];
            if (marks) {
                struct rs_ev_MARK m;
                memset(&m, 0, sizeof m);
                RS_EV_INIT(&m, MARK, s);
                snprintf(name, sizeof name, "step %d", k);
                m.name = rs_writer_intern(w, name);
                m.value = (uint64_t)k;
                put(&m);
            }
            const int ranged = *fmt && k / span < nranges && (mask >> r & 1);
            if (ranged && k % span == 0) {
                struct rs_ev_NVTX_PUSH e;
                memset(&e, 0, sizeof e);
                RS_EV_INIT(&e, NVTX_PUSH, s + 1 * us);
                snprintf(name, sizeof name, fmt, k / span);
                e.message = rs_writer_intern(w, name);
                put(&e);
            }
            struct rs_ev_NCCL_COLL c; /* the step's AllReduce at +8 ms, 1 ms (ranks 20 us apart) */
            memset(&c, 0, sizeof c);
            RS_EV_INIT(&c, NCCL_COLL, s + 8 * ms + (uint64_t)r * 20 * us);
            c.end = s + 9 * ms;
            c.handle = (uint64_t)k + 1;
            c.comm_hash = 0xc0ffee;
            c.seq = (uint64_t)k;
            c.count = 1 << 20;
            c.func = rs_writer_intern(w, "AllReduce");
            c.algo = rs_writer_intern(w, "Ring");
            c.datatype = rs_writer_intern(w, "float");
            c.rank = r;
            c.root = -1;
            put(&c);
            if (ranged && k % span == span - 1) {
                struct rs_ev_NVTX_POP e;
                memset(&e, 0, sizeof e);
                RS_EV_INIT(&e, NVTX_POP, s + 9500 * us);
                put(&e);
            }
            last = s + 9500 * us;
        }
        struct rs_ev_PROC_END p;
        memset(&p, 0, sizeof p);
        RS_EV_INIT(&p, PROC_END, last + 1 * ms);
        put(&p);
        if (rs_writer_close(w) != 0) die("close");
    }
    return 0;
}
C
cc -std=gnu11 -O1 -D_GNU_SOURCE -I"$RS_TOP" -I"$RS_TOP/formats" -I"$RS_TOP/tracer" -o "$T/gen" "$T/gen.c" \
    "$RS_TOP/tracer/writer.c" "$RS_TOP/formats/rtrace_tables.c" -lzstd -lpthread || bail "cannot build the generator"

gen() { # NAME GEN-ARGS...
    local name=$1
    shift
    mkdir -p "$T/$name" && "$T/gen" "$T/$name" "$@" || bail "generator failed: $*"
}
rep() { # NAME OUT [OPTIONS...]: report NAME as JSON into $T/OUT.json and as text into $T/OUT.txt
    local name=$1 out=$2
    shift 2
    "$RS_CLI" report --json "$@" "$T/$name" >"$T/$out.json" 2>"$T/$out.err" ||
        diag "report $out: $(head -3 "$T/$out.err")"
    "$RS_CLI" report "$@" "$T/$name" >"$T/$out.txt" 2>/dev/null
    J=$T/$out.json
}
q() { jq -r "$@" "$J"; }
hint() { q '[.warnings[] | select(test("were not taken as steps"))] | join("|")'; }
TXT='--step-marker train_step uses them'

gen two 2 10 train_step 2 3 0 1
rep two two
is "$(q '"\(.step_source),\(.nsteps)"')" "collective periodicity,9" \
    "two train_step ranges: steps from collective periodicity (the ranges passed over)"
W="steps from collective periodicity on 2 of 2 ranks; NVTX ranges 'train_step' (2 on rank 0 and on 1 other rank)"
W="$W were not taken as steps (a name without a counter needs 3): --step-marker train_step uses them"
is "$(hint)" "$W" \
    "the hint names train_step, how many, why, and the option (JSON warnings[])"
like "$(sed -n '/^Warnings/,$p' "$T/two.txt" | tr -s ' \n' '  ')" "NVTX ranges 'train_step' \\(2 on rank 0" \
    "the text report's warnings say it too"
like "$(sed -n '/^Warnings/,$p' "$T/two.txt" | tr -s ' \n' '  ')" "$TXT" "with the option"
is "$(q '[.warnings[] | select(test("not taken as steps"))] | length')" 1 "once for the run"
# the suggested option takes those ranges
rep two two_sm --step-marker train_step
is "$(q '"\(.step_source),\(.nsteps),\(.ranks[0].nsteps),\(.ranks[1].nsteps)"')" "marker train_step,2,2,2" \
    "--step-marker train_step: 2 steps on each rank, from the ranges"
is "$(q '[.ranks[0].steps[] | "\(.id):\(.dur_s * 1e6 | round)"] | join(" ")'),$(q '(.ranks[0].steps[1].start_s -
    .ranks[0].steps[0].start_s) * 1e6 | round')" "0:9499 1:9499,10000" \
    "the steps are the two ranges (9.499 ms each, 10 ms apart)"
is "$(hint)" "" "and no hint then"
is "$(q '[.warnings[] | select(test("delimits no step"))] | length')" 0 "nor the marker's warning"

gen many 2 30 'iteration %d' 30 3 0 1
rep many many
is "$(q '"\(.step_source),\(.nsteps)"')" "nvtx ranges,30" "30 iteration N ranges: the steps"
is "$(hint)" "" "ranges chosen: no hint"

gen none 2 10 '' 0 0 0 1
rep none none
is "$(q '"\(.step_source),\(.nsteps)"')" "collective periodicity,9" "no NVTX: steps from collective periodicity"
is "$(hint)" "" "no NVTX ranges: no hint"

rep two two_nope --step-marker nope
is "$(hint)" "" "--step-marker NAME that delimits nothing: no hint"
is "$(q '[.warnings[] | select(test("delimits no step"))] | length')" 1 "its own warning instead"

gen epoch 2 10 'epoch %d' 2 3 0 5
rep epoch epoch
is "$(q '"\(.step_source),\(.nsteps)"'),$(hint)" "collective periodicity,9," \
    "two epoch N ranges around 5 steps each: coarser than the steps found, no hint"

gen fwd 2 10 'fwd_bwd %d' 2 3 0 1
rep fwd fwd
like "$(hint)" "NVTX ranges 'fwd_bwd' \\(2 on rank 0 and on 1 other rank\\) were not taken as steps \\(a name that is \
no step word, like step or iteration, needs 3\\): --step-marker fwd_bwd uses them" \
    "fwd_bwd N twice: the hint names fwd_bwd (cut at its counter) and says why"
rep fwd fwd_sm --step-marker fwd_bwd
is "$(q '"\(.step_source),\(.nsteps),\([.ranks[0].steps[] | .id] | join(" "))"')" "marker fwd_bwd,2,0 1" \
    "--step-marker fwd_bwd: the 2 ranges, ids from their counters"

gen space 2 10 'fwd bwd %d' 2 3 0 1
rep space space
like "$(hint)" "NVTX ranges 'fwd bwd' .*: --step-marker 'fwd bwd' uses them" "a name with a space: the option quoted"
rep space space_sm --step-marker 'fwd bwd'
is "$(q '"\(.step_source),\(.nsteps)"')" "marker fwd bwd,2" "and it works"

gen some 3 10 train_step 2 6 0 1
rep some some
like "$(hint)" "^steps from collective periodicity on 3 of 3 ranks; NVTX ranges 'train_step' \\(2 on rank 1 and on 1 \
other rank\\)" \
    "ranges on ranks 1 and 2 only: named on rank 1, one other rank counted"

gen marks 2 10 train_step 2 3 1 1
rep marks marks
is "$(q '"\(.step_source),\(.nsteps)"')" "marks,10" "step marks: the steps"
like "$(hint)" "^steps from marks on 2 of 2 ranks; NVTX ranges 'train_step' \\(2 on rank 0" \
    "the hint says the steps came from marks"

gen tail 2 10 'train_step, op_id = %d' 2 3 0 1
rep tail tail
like "$(hint)" "NVTX ranges 'train_step' \\(2 on rank 0 .*--step-marker train_step uses them" \
    "emit_nvtx() tails: the name before them"
rep tail tail_sm --step-marker train_step
is "$(q '"\(.step_source),\(.nsteps)"')" "marker train_step,2" "and the option takes those ranges"
