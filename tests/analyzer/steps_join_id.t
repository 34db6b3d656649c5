#!/bin/bash
# Ranks' steps are joined by step id, not by position (audit s18): a rank whose first step mark is missing (it
# started tracing late) or that lacks a mark in the middle has every later step one position off; joined by
# position it arrived a whole step "late" every time, became the persistent straggler and hid the real one.
# Crafted verbs-only runs (no collectives: stragglers from each step's first data send) of 4 ranks and 30 steps
# marked "step 1".."step 30", one rank 3 ms late at known steps, one rank's step 20 2 ms long:
#   first: rank 3 lacks step 1; rank 1 late in steps 10-25; rank 3's step 20 slow
#   gap:   rank 2 lacks the mark of step 15 (marks "step" with value N); rank 3 late in steps 14-30
#   pos:   ids name no step (marks "step" with value 0, as NVTX marks without payload): rank 3 lacks step 1
#          (counts differ: steps joined by start time, said in a warning); rank 1 late in steps 10-25
#   local: the same with ids that are positions only (each rank counts its own marks from 0)
#   same:  control, every rank has every step (ids from names); rank 2 late in steps 5-20
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
/* gen DIR NAMING SKIP_RANK SKIP_STEP LATE_RANK LATE_FROM LATE_TO SLOW_RANK SLOW_STEP
 * NAMING: name ("step N", value N), value ("step", value N), zero ("step", value 0), local ("step", value: the
 * rank's own count of its marks, from 0). Steps 1..30 of 10 ms. */
int main(int argc, char **argv)
{
    if (argc != 10) die("usage");
    const char *dir = argv[1], *naming = argv[2];
    int skr = atoi(argv[3]), sks = atoi(argv[4]), lr = atoi(argv[5]), lf = atoi(argv[6]), lt = atoi(argv[7]);
    int slr = atoi(argv[8]), sls = atoi(argv[9]);
    const int nranks = 4, nsteps = 30;
    const uint64_t ms = 1000000, step = 10 * ms, t0 = 1 * ms;
    for (int r = 0; r < nranks; r++) {
        if (!(w = craft_open(dir, r, nranks, 5000, "all", "steps_join_id", 7))) die("open");
        uint64_t wr = 0, last = 0, nmarks = 0;
        for (int k = 1; k <= nsteps; k++) {
            uint64_t s = t0 + (uint64_t)(k - 1) * step + (uint64_t)r * 1000; /* 1 us apart: no ties */
            if (r == skr && k == sks && k == 1) continue; /* tracing started after step 1: nothing of it */
            if (r == slr && k == sls + 1) s += 2 * ms;    /* step sls 2 ms longer on this rank */
            if (!(r == skr && k == sks)) {
                char name[32];
                snprintf(name, sizeof name, strcmp(naming, "name") ? "step" : "step %d", k);
                struct rs_ev_MARK m;
                memset(&m, 0, sizeof m);
                RS_EV_INIT(&m, MARK, s);
                m.value = !strcmp(naming, "zero") ? 0 : !strcmp(naming, "local") ? nmarks : (uint64_t)k;
                nmarks++;
                m.name = rs_writer_intern(w, name);
                put(&m);
            }
            /* the step's data: one 1 MiB RDMA write at +4 ms (+3 ms when late), done 200 us later */
            uint64_t at = t0 + (uint64_t)(k - 1) * step + 4 * ms + (uint64_t)r * 2000;
            if (r == lr && k >= lf && k <= lt) at += 3 * ms;
            struct rs_ev_IBV_POST_SEND e;
            memset(&e, 0, sizeof e);
            RS_EV_INIT(&e, IBV_POST_SEND, at);
            e.wr_id = ++wr;
            e.bytes = 1 << 20;
            e.qp_num = 0x100 + (uint32_t)r;
            e.send_flags = 2;
            e.num_sge = 1;
            e.mem = 1;
            put(&e);
            struct rs_ev_IBV_WC x;
            memset(&x, 0, sizeof x);
            RS_EV_INIT(&x, IBV_WC, at + 200000);
            x.wr_id = wr;
            x.cq = 0xc0;
            x.qp_num = e.qp_num;
            x.opcode = 1;
            x.bytes = 1 << 20;
            put(&x);
            last = at + 200000;
        }
        struct rs_ev_PROC_END p;
        memset(&p, 0, sizeof p);
        RS_EV_INIT(&p, PROC_END, last + 1000);
        put(&p);
        if (rs_writer_close(w) != 0) die("close");
    }
    return 0;
}
C
cc -std=gnu11 -O1 -D_GNU_SOURCE -I"$RS_TOP" -I"$RS_TOP/formats" -I"$RS_TOP/tracer" -o "$T/gen" "$T/gen.c" \
    "$RS_TOP/tracer/writer.c" "$RS_TOP/formats/rtrace_tables.c" -lzstd -lpthread || bail "cannot build the generator"

run() { # NAME GEN-ARGS...: generate, report as JSON into $T/NAME.json
    local name=$1
    shift
    mkdir -p "$T/$name" && "$T/gen" "$T/$name" "$@" || bail "generator failed: $*"
    "$RS_CLI" report --json "$T/$name" >"$T/$name.json" 2>"$T/$name.err"
    J=$T/$name.json
}
q() { jq -r "$@" "$J"; }
# "rank,persistent,late_count,of" of each straggler, most costly first
stragglers() { q '[.stragglers[] | "\(.rank),\(.persistent),\(.late_count),\(.of)"] | join(" ")'; }
BYTIME='joined across ranks by their start times'

run first name 3 1 1 10 25 3 20
is "$(q '.stragglers[0] | "\(.rank),\(.persistent),\(.late_count),\(.of)"')" "1,true,16,30" \
    "first step missing on rank 3: the straggler is rank 1, persistent, late in 16 of 30 steps" || diag "$(stragglers)"
is "$(q '[.stragglers[] | select(.rank == 3)] | length')" 0 "the rank that lacks step 1 is no straggler" ||
    diag "$(stragglers)"
is "$(q '.ranks[3].nsteps'),$(q '.ranks[3].steps[0].id'),$(q '.ranks[0].steps[0].id')" "29,2,1" \
    "rank 3 has 29 steps, from step 2; the others from step 1"
is "$(q '[.steps[] | "\(.id):\(.ranks)"] | .[0:3] | join(" ")'),$(q '.steps | length')" "1:3 2:4 3:4,30" \
    "the run's steps by id: step 1 on 3 ranks, steps 2, 3 on 4; 30 steps"
is "$(q '.steps[] | select(.id == 20) | .slowest_rank')" 3 "rank 3's slow step 20 is step 20 of the run"
is "$(q '[.steps[] | select(.slowest_rank == 3 and .max_s > 0.011) | .id] | join(" ")')" 20 \
    "and the only step over 11 ms"
unlike "$(q '.warnings[]')" 'joined across ranks by' "ids name the steps: no warning about the join"

run gap value 2 15 3 14 30 -1 -1
is "$(q '.stragglers[0] | "\(.rank),\(.persistent),\(.late_count),\(.of)"')" "3,true,17,30" \
    "a mark missing in the middle (rank 2, step 15): the straggler is rank 3, late in 17 of 30" || diag "$(stragglers)"
is "$(q '[.stragglers[] | select(.rank == 2)] | length')" 0 "the rank that lacks step 15's mark is no straggler" ||
    diag "$(stragglers)"
is "$(q '[.steps[] | select(.id >= 14 and .id <= 16) | "\(.id):\(.ranks)"] | join(" ")')" "14:4 15:3 16:4" \
    "step 15 on 3 ranks, its neighbours on 4"
is "$(q '[.ranks[2].steps[] | .id] | map(select(. >= 13 and . <= 17)) | join(" ")')" "13 14 16 17" \
    "rank 2's steps keep their ids (14 runs over 15)"

run pos zero 3 1 1 10 25 -1 -1
is "$(q '.stragglers[0] | "\(.rank),\(.persistent),\(.late_count)"')" "1,true,16" \
    "ids only positions, rank 3 lacks the first step: the straggler is rank 1" || diag "$(stragglers)"
is "$(q '[.stragglers[] | select(.rank == 3)] | length')" 0 "and rank 3 is no straggler" || diag "$(stragglers)"
is "$(q '[.ranks[0].steps[] | .id] | .[0:3] | join(" ")'),$(q '[.ranks[3].steps[] | .id] | .[0:3] | join(" ")')" \
    "0 1 2,1 2 3" "steps numbered by position on the rank with most, rank 3's by the steps they overlap"
like "$(q '.warnings[]')" "rank 3 has 29 steps, rank 0 30, and their ids are not step numbers.*$BYTIME" \
    "the warning says the steps were joined by time, and why"
is "$(q '[.steps[] | "\(.id):\(.ranks)"] | .[0:2] | join(" ")')" "0:3 1:4" "the run's first step on 3 ranks"

# ids that count each rank's own marks from 0 (a rank that started late counts from its first): positions only
run local local 3 1 1 10 25 -1 -1
is "$(q '.stragglers[0] | "\(.rank),\(.persistent),\(.late_count)"'),$(q '[.stragglers[] | select(.rank == 3)]')" \
    "1,true,16,[]" "ids counting each rank's own steps, rank 3 from its first: the straggler is rank 1, not rank 3" ||
    diag "$(stragglers)"
like "$(q '.warnings[]')" "rank 3 has 29 steps, rank 0 30, and their ids are only positions.*$BYTIME" \
    "the warning says the ids are only positions"
is "$(q '.ranks[3].steps[0].id'),$(q '.ranks[3].steps[28].id'),$(q '.ranks[0].steps[0].id')" "1,29,0" \
    "rank 3's steps numbered as the other ranks' steps they start with"

run same name -1 -1 2 5 20 -1 -1
is "$(q '.stragglers[0] | "\(.rank),\(.persistent),\(.late_count),\(.of)"')" "2,true,16,30" \
    "control, every step on every rank: the straggler is rank 2" || diag "$(stragglers)"
is "$(q '.stragglers | length')" 1 "and no other" || diag "$(stragglers)"
is "$(q '[.steps[] | .ranks] | unique | join(" ")'),$(q '.steps | length')" "4,30" "30 steps, each on 4 ranks"
unlike "$(q '.warnings[]')" 'joined across ranks by' "no warning about the join"

# the same positions-only run with equal counts (control): joined by position as before, no warning
run poseq zero -1 -1 1 10 25 -1 -1
is "$(q '.stragglers[0] | "\(.rank),\(.persistent),\(.late_count)"'),$(q '.steps | length')" "1,true,16,30" \
    "positions only, equal counts: the straggler is rank 1, 30 steps" || diag "$(stragglers)"
unlike "$(q '.warnings[]')" 'joined across ranks by' "no warning about the join"
