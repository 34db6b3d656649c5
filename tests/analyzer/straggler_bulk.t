#!/bin/bash
# Audit 3: ranks late together. A rank was late only when it arrived more than the threshold (max(20 us, 1 % of
# the step)) after the next-latest rank, so two ranks slow together (a throttled node: all its GPUs late) were
# never late: rs-synth with rank 5 +8 ms of compute and rank 3 +8.05 ms of pageable copies said "Stragglers: none"
# while six ranks waited 8 ms a step. Now a rank is late by its distance from the bulk of the arrivals (their lower
# median), and the others' wait is split among the late ranks they waited for, segment by segment (analyze_join.c
# late_ranks): shared equally before the first late arrival, then by the late ranks still to come.
#   rs-synth audit:   2 x 4, rank 5 +8 ms, rank 3 pageable: both late in 20 of 20, persistent, a tie (3.05, 3.00 ms)
#   crafted (8 or 4 ranks, one AllReduce a 10 ms step entered at +1 ms, everyone leaving 0.5 ms after the last):
#     node:  ranks 4-7 late by 8.00-8.03 ms (a node of four): four late ranks, persistent, a four-way tie
#     two:   rank 2 late by 6 ms, rank 3 by 3 ms: rank 2 named (3.75 ms), rank 3 a persistent late rank (1.125 ms)
#     half:  4 ranks, 2 and 3 late by 5 ms: a tie, 1.25 ms each
#     one:   rank 5 late by 8 ms: named, it pays the whole wait (as before)
#     noise: 8 ranks, arrivals jittered uniformly over 90 us (under the 100 us threshold): nobody late; over 0.5 and
#            2 ms (5 and 20 % of the step), 3 seeds each: no persistent straggler, no rank named, no tie
. "$(dirname "$0")/../lib.sh"
need_build railscope synth/rs-synth
need_cmd cc
need_cmd jq
plan 21

cat >"$T/gen.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/analyzer/craft.h"
#include "tracer/writer.h"

CRAFT_GENERATOR
CRAFT_NCCL
static uint64_t rnd(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}
/* gen DIR NRANKS NSTEPS LATE JITTER_US SEED: NRANKS ranks on one host, NSTEPS steps of 10 ms marked "step" (value
 * k), one AllReduce (NCCL API call) a step entered at +1 ms plus the rank's lateness (LATE: "RANK:US,..." or "-")
 * plus a uniform jitter in [0, JITTER_US) us; every rank leaves 0.5 ms after the last arrival. */
int main(int argc, char **argv)
{
    if (argc != 7) die("usage");
    const char *dir = argv[1];
    int nranks = atoi(argv[2]), nsteps = atoi(argv[3]);
    double jit = atof(argv[5]);
    uint64_t seed = strtoull(argv[6], NULL, 10) * 2654435761u + 1;
    const uint64_t ms = 1000000, step = 10 * ms, t0 = 1 * ms;
    uint64_t *late = calloc((size_t)nranks, sizeof *late), *arr = calloc((size_t)nranks * nsteps, sizeof *arr);
    for (char *p = argv[4]; *p && *p != '-';) {
        int r = (int)strtol(p, &p, 10);
        if (*p++ != ':' || r < 0 || r >= nranks) die("bad LATE");
        late[r] = (uint64_t)(strtod(p, &p) * 1000);
        if (*p == ',') p++;
    }
    for (int k = 0; k < nsteps; k++)
        for (int r = 0; r < nranks; r++)
            arr[k * nranks + r] = t0 + (uint64_t)k * step + ms + late[r] +
                                  (jit > 0 ? rnd(&seed) % (uint64_t)(jit * 1000) : 0);
    for (int r = 0; r < nranks; r++) {
        if (!(w = craft_open(dir, r, nranks, 6000, "all", "straggler_bulk", 7))) die("open");
        uint32_t name = rs_writer_intern(w, "step");
        for (int k = 0; k <= nsteps; k++) { /* nsteps + 1 marks: nsteps steps */
            struct rs_ev_MARK m;
            memset(&m, 0, sizeof m);
            RS_EV_INIT(&m, MARK, t0 + (uint64_t)k * step);
            m.value = (uint64_t)k;
            m.name = name;
            put(&m);
            if (k == nsteps) break;
            uint64_t last = 0;
            for (int q = 0; q < nranks; q++)
                if (arr[k * nranks + q] > last) last = arr[k * nranks + q];
            allreduce(arr[k * nranks + r], last + ms / 2 - arr[k * nranks + r], (uint64_t)k, r, nranks);
        }
        struct rs_ev_PROC_END p;
        memset(&p, 0, sizeof p);
        RS_EV_INIT(&p, PROC_END, t0 + (uint64_t)nsteps * step + ms);
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
# "rank,persistent,late_count,of,mean lateness ms,cost per step ms" of each late rank, rank order
late() {
    q '[.stragglers | sort_by(.rank)[] | "\(.rank),\(.persistent),\(.late_count),\(.of),\(.mean_late_s * 1e5 |
        round / 100),\(.cost_per_step_s * 1e6 | round / 1000)"] | join(" ")'
}
# the peer-wait finding's verdict: "verdict,rank,[tied ranks]" ("-" without the finding)
verdict() {
    q '[.findings[] | select(.category == "peer_wait") | .straggler |
        "\(.verdict),\(.rank),\(.tied_ranks | map(tostring) | join("+"))"][0] // "-"'
}
# the late ranks' costs add up to the peer-wait category (every wait here is over the threshold)
sums() { q '(([.stragglers[].cost_s] | add // 0) - .attribution.peer_wait | fabs) < 1e-6'; }

# rs-synth, the audit's run
rm -rf "$T/synth"
"$RS_BUILD/synth/rs-synth" -o "$T/synth" --truth "$T/synth.truth" --nodes 2 --gpus 4 --steps 20 --straggler 5:8 \
    --pageable 3 --seed 7 >/dev/null || bail "rs-synth failed"
"$RS_CLI" report --json "$T/synth" >"$T/synth.json" 2>/dev/null
"$RS_CLI" report "$T/synth" >"$T/synth.txt" 2>/dev/null
J=$T/synth.json
is "$(q '[.stragglers | sort_by(.rank)[] | "\(.rank),\(.persistent),\(.late_count),\(.of)"] | join(" ")')" \
    "3,true,20,20 5,true,20,20" \
    "rs-synth rank 5 +8 ms, rank 3 pageable +8.05 ms: both late in 20 of 20 collectives, persistent"
is "$(verdict)" "tie,-1,3+5" "rs-synth: the finding is a tie of ranks 3 and 5 (3.05 and 3.00 ms per step), not 'none'"
ok "rs-synth: late by 8.05 and 8.00 ms after the bulk, costs add up to the category ($(late))" \
    jq -e '([.stragglers[] | .mean_late_s] | sort) as $l | ($l[0] - 0.008 | fabs) < 1e-4 and
        ($l[1] - 0.00805 | fabs) < 1e-4
        and (([.stragglers[].cost_s] | add) - .attribution.peer_wait | fabs) < 1e-6' "$J"
unlike "$(grep '^Stragglers' "$T/synth.txt")" 'none' "rs-synth: the text report's Stragglers section is not 'none'"

run node 8 10 4:8000,5:8010,6:8020,7:8030 0 1
is "$(q '[.stragglers | sort_by(.rank)[] | "\(.rank),\(.persistent),\(.late_count),\(.of)"] | join(" ")')" \
    "4,true,10,10 5,true,10,10 6,true,10,10 7,true,10,10" \
    "node of four late together: all four late in 10 of 10, persistent"
is "$(verdict)" "tie,-1,4+5+6+7" "node of four: a four-way tie"
# the four early ranks wait 8.00-8.03 ms each: 8.00 ms shared by all four late ranks, then the last 10 us each by
# those still to come; over the 8 ranks about 1.00 ms per step each
ok "node of four: each costs about 1.00 ms per step (8 ms x 4 ranks / 4 late / 8), lateness 8.00-8.03 ms ($(late))" \
    jq -e '(.stragglers | length) == 4 and ([.stragglers[] | ((.cost_per_step_s - 0.001 | fabs) < 3e-5 and
        .mean_late_s >= 0.008 and .mean_late_s < 0.00804)] | all)' "$J"
is "$(sums)" true "node of four: the late ranks' costs add up to the category"

run two 8 10 2:6000,3:3000 0 1
is "$(verdict)" "rank,2,"  "rank 2 6 ms late, rank 3 3 ms: rank 2 named"
# waits: six ranks x 3 ms shared by 2 and 3, then six ranks and rank 3 x 3 ms by rank 2 alone; / 8 ranks
is "$(late)" "2,true,10,10,6,3.75 3,true,10,10,3,1.125" \
    "rank 2 6 ms late costs 3.75 ms per step, rank 3 3 ms late 1.125 ms (it was not a late rank before)"
is "$(sums)" true "rank 2 and rank 3: the costs add up to the category"
# ranks[].late_cost_s is the same cost (it was 0 for every rank: the ranks were copied before the costs were known)
is "$(q '[.ranks[] | select(.late_cost_s > 0) | "\(.rank)"] | join(" ")'),$(q '[.ranks[] as $r | .stragglers[] |
    select(.rank == $r.rank) | (.cost_s - $r.late_cost_s | fabs) < 1e-9] | all')" "2 3,true" \
    "ranks[].late_cost_s: ranks 2 and 3 carry their straggler cost, the others 0"

run half 4 10 2:5000,3:5000 0 1
is "$(verdict),$(late)" "tie,-1,2+3,2,true,10,10,5,1.25 3,true,10,10,5,1.25" \
    "4 ranks, 2 and 3 late by 5 ms together: a tie, 1.25 ms per step each (bulk: the 2nd arrival)"

run one 8 10 5:8000 0 1
is "$(verdict),$(late),$(sums)" "rank,5,,5,true,10,10,8,7,true" \
    "one rank 8 ms late: named, pays the whole wait (7 ms per step)"

run quiet 8 30 - 90 1
is "$(q '.stragglers | length'),$(verdict)" "0,-" "jitter under the threshold (90 us of a 10 ms step): nobody late"
for j in 500 2000; do
    for s in 1 2 3; do
        run noise$j.$s 8 30 - "$j" "$s"
        named=$(verdict | grep -q '^rank,\|^tie,' && echo ", verdict $(verdict)")
        is "$(q '[.stragglers[] | select(.persistent)] | length')$named" 0 \
            "jitter $j us, seed $s: no persistent straggler, no rank named, no tie (the tied ranks cost under half)"
    done
done
