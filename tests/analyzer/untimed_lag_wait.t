#!/bin/bash
# Peer wait at collectives nothing timed, estimated from the arrival lag (analyze_join.c lag_waits). A run without
# NCCL's profiler plugin (NCCL_PROFILER_PLUGIN=none, an NCCL before 2.23) has only the NCCL API calls, and with no
# NCCL kernel in a sampling window nothing times a collective: its interval is its enqueue call, microseconds, and
# the early ranks' wait for a late one was not measured. The H200's s2_noplugin (rank 1 sleeping 15 ms a step) gave
# 0.06 ms of wait a step and named no straggler (session 27). No rank's data can be complete before the last rank
# enqueued it, so an early rank waits at least from its own call to the last rank's: that, once per rank and step
# (the lags of a step's collectives overlap), within the step and only from time no category explains.
#   crafted (2 ranks unless said, 20 steps of 50 ms marked "step k", AllReduce API calls of 30 us from +2 ms, no
#   kernel, no window; rank 1's calls LATE later):
#     one:     one AllReduce a step, rank 1 15 ms late: rank 0 waits 15 ms a step, rank 1 named at 7.5 ms (mean over
#              the 2 ranks); the report says the wait was estimated (text, JSON, HTML)
#     overlap: 3 AllReduces 0.5 ms apart, rank 1 15 ms late at each: rank 0 waits 16 ms (2 ms to 18 ms), not 45
#     nested:  rank 0's calls at +2, +3, +4 ms, rank 1's at +20, +10, +30 ms (later collectives' lags inside
#              others', and one arriving before it): the union, 28 ms
#     clip:    rank 1 60 ms late in 50 ms steps: rank 0's wait ends with its step (48 ms of it)
#     h2d:     rank 0 copies to the GPU from +5 to +45 ms (exposed H2D): the wait takes only what is left
#     block:   calls that block until the last rank's (their own span is the wait, measured): 15 ms, not 30
#     three:   3 ranks, rank 1 10 ms and rank 2 15 ms late: ranks 0 and 1 wait 15 and 5 ms, rank 2 named
#     ontime:  no rank late: no wait, no straggler, nothing said about an estimate
. "$(dirname "$0")/../lib.sh"
need_build railscope
need_cmd cc
need_cmd jq
plan 19

cat >"$T/gen.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/analyzer/craft.h"
#include "tracer/writer.h"

CRAFT_GENERATOR
CRAFT_NCCL
/* gen DIR NRANKS NSTEPS AT LATE DUR H2D: NRANKS ranks on one host, NSTEPS steps of 50 ms marked "step k" (value k) on
 * every rank; a step's AllReduces (NCCL API calls) at AT ("2,2.5,3": ms into the step, one per entry) on every rank,
 * plus the rank's lateness LATE ("-" or "RANK:MS,...", that rank's calls that much later; "RANK#J:MS" the J-th call
 * alone). DUR: each call's duration in us, or "block": until the last rank's call plus 0.5 ms (a blocking call).
 * H2D: "-" or "A:B", rank 0 copies to the GPU from A to B ms into each step. */
int main(int argc, char **argv)
{
    if (argc != 8) die("usage");
    const char *dir = argv[1];
    int nranks = atoi(argv[2]), nsteps = atoi(argv[3]), nat = 0, block = !strcmp(argv[6], "block");
    const uint64_t ms = 1000000, us = 1000, t0 = 1 * ms, step = 50 * ms;
    double at[16], late[8][16] = {{0}}, h2a = -1, h2b = -1;
    for (char *p = argv[4]; *p && nat < 16; p += *p == ',') at[nat++] = strtod(p, &p);
    for (char *p = argv[5]; *p && *p != '-'; p += *p == ',') {
        int r = (int)strtol(p, &p, 10), j = -1;
        if (*p == '#') j = (int)strtol(p + 1, &p, 10);
        if (*p++ != ':' || r < 0 || r >= nranks || r >= 8 || j >= nat) die("bad LATE");
        double v = strtod(p, &p);
        for (int q = 0; q < nat; q++)
            if (j < 0 || q == j) late[r][q] = v;
    }
    if (strcmp(argv[7], "-") && sscanf(argv[7], "%lf:%lf", &h2a, &h2b) != 2) die("bad H2D");
    uint64_t dur = block ? 0 : (uint64_t)atoi(argv[6]) * us;
    for (int r = 0; r < nranks; r++) {
        if (!(w = craft_open(dir, r, nranks, 7000, "all", "untimed_lag_wait", 7))) die("open");
        uint32_t name = rs_writer_intern(w, "step");
        for (int k = 0; k <= nsteps; k++) { /* nsteps + 1 marks: nsteps steps */
            uint64_t s = t0 + (uint64_t)k * step;
            struct rs_ev_MARK m;
            memset(&m, 0, sizeof m);
            RS_EV_INIT(&m, MARK, s);
            m.value = (uint64_t)k;
            m.name = name;
            put(&m);
            if (k == nsteps) break;
            if (r == 0 && h2a >= 0) {
                struct rs_ev_CUDA_MEMCPY c;
                memset(&c, 0, sizeof c);
                RS_EV_INIT(&c, CUDA_MEMCPY, s + (uint64_t)(h2a * ms));
                c.end = s + (uint64_t)(h2b * ms);
                c.bytes = 1 << 20;
                c.copy_kind = 1;
                c.src_kind = 2;
                put(&c);
            }
            for (int q = 0; q < nat; q++) {
                double last = 0;
                for (int x = 0; x < nranks; x++)
                    if (late[x][q] > last) last = late[x][q];
                uint64_t arr = s + (uint64_t)((at[q] + late[r][q]) * ms);
                uint64_t d = block ? s + (uint64_t)((at[q] + last + 0.5) * ms) - arr : dur;
                allreduce(arr, d, (uint64_t)(k * nat + q), r, nranks);
            }
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
cc -std=gnu11 -O1 -Wall -Wextra -Werror -D_GNU_SOURCE -I"$RS_TOP" -I"$RS_TOP/formats" -I"$RS_TOP/tracer" -o "$T/gen" \
    "$T/gen.c" "$RS_TOP/tracer/writer.c" "$RS_TOP/formats/rtrace_tables.c" -lzstd -lpthread ||
    bail "cannot build the generator"

run() { # NAME GEN-ARGS...: generate, report as JSON into $T/NAME.json and as text into $T/NAME.txt
    local name=$1
    shift
    mkdir -p "$T/$name" && "$T/gen" "$T/$name" "$@" || bail "generator failed: $*"
    "$RS_CLI" report --json "$T/$name" >"$T/$name.json" 2>"$T/$name.err"
    "$RS_CLI" report "$T/$name" >"$T/$name.txt" 2>/dev/null
    J=$T/$name.json
}
q() { jq -r "$@" "$J"; }
# each rank's peer wait, ms per step to 0.01 ms ("rank:ms ..."), and the categories it was taken from
waits() { q '[.ranks[] | "\(.rank):\(.attribution.peer_wait / .nsteps * 1e5 | round / 100)"] | join(" ")'; }
cat_ms() { q --arg c "$2" ".ranks[$1].attribution[\$c] / .ranks[$1].nsteps * 1e5 | round / 100"; }
# the peer-wait finding's verdict and the costliest late rank's cost per step: "verdict,rank,ms"
verdict() {
    q '([.findings[] | select(.category == "peer_wait") | "\(.straggler.verdict),\(.rank)"][0] // "-") +
        ",\(.stragglers[0].cost_per_step_s // 0 | . * 1e5 | round / 100)"'
}
# the late ranks' costs add up to at most the category
costs_ok() { q '([.stragglers[].cost_s] | add // 0) <= .attribution.peer_wait * (1 + 1e-9) + 1e-12'; }

run one 2 20 2 1:15 30 -
is "$(waits)" "0:15 1:0" "one AllReduce a step, rank 1 15 ms late: rank 0 waits 15 ms a step (was 0.03: the call's own)"
is "$(verdict)" "rank,1,7.5" "rank 1 named, costing 7.5 ms a step (rank 0's 15 ms, mean over the 2 ranks)"
is "$(q '.peer_wait_estimate | "\(.from_arrival_lag),\(.collectives),\(.of),\(.wait_per_step_s * 1e5 | round / 100)"')" \
    "true,20,20,7.49" "JSON: the wait estimated from the arrival lag, at 20 of 20 collectives (7.49 ms: beyond the calls)"
like "$(cat "$T/one.txt")" \
    '  \(waiting for late ranks: 7\.49 ms per step of it estimated from the arrival lag at 20 of 20 collectives nothing timed: host times, from each rank.s NCCL call to the last rank.s\)' \
    "text: one line says the wait is an estimate, how much and from how many collectives"
"$RS_CLI" report --html "$T/one.html" "$T/one" >/dev/null 2>&1
like "$(grep -o '<p id="peer-wait-estimated">[^<]*' "$T/one.html")" \
    'Peer wait estimated from the arrival lag: 7\.49 ms per step of it at 20 of 20 collectives nothing timed' \
    "HTML: the same line in the step breakdown"

run overlap 2 20 2,2.5,3 1:15 30 -
is "$(waits)" "0:16 1:0" "3 AllReduces a step 0.5 ms apart, each 15 ms late: rank 0 waits 2 to 18 ms, 16 ms (not 45)"
is "$(verdict),$(costs_ok)" "rank,1,8,true" "rank 1 named at 8 ms a step; the late ranks' costs within the category"

run nested 2 20 2,3,4 '1#0:18,1#1:7,1#2:26' 30 -
is "$(waits)" "0:28 1:0" "lags nested in others' (rank 1 at +20, +10, +30 ms): the union, 2 to 30 ms, 28 ms (not 51)"

run clip 2 20 2 1:60 30 -
is "$(q '.ranks[0] | .steps[1:] | [.[].attribution.peer_wait * 1e5 | round / 100] | unique | join(" ")')" "48" \
    "rank 1 60 ms late in 50 ms steps: rank 0's wait ends with its step (48 ms of the step's 50)"
is "$(q '[.ranks[].steps[] | (.attribution | add) - .dur_s | fabs < 1e-9] | all')" "true" \
    "clip: every step's categories still add up to the step"

run h2d 2 20 2 1:15 30 5:45
is "$(cat_ms 0 h2d_exposed) $(waits)" "40 0:10 1:0" \
    "rank 0 copying to the GPU from +5 to +45 ms: the H2D stays 40 ms, the wait takes the other 10 ms (of 15)"

run block 2 20 2 1:15 block -
is "$(waits),$(q '.peer_wait_estimate.wait_per_step_s * 1e5 | round / 100')" "0:15 1:0,0" \
    "calls blocking until the last rank's (their span the measured wait): 15 ms, not 30; nothing added"

run three 3 20 2 1:10,2:15 30 -
is "$(waits)" "0:15 1:5 2:0" "3 ranks, rank 1 10 ms and rank 2 15 ms late: rank 0 waits 15 ms, rank 1 5 ms"
is "$(verdict),$(costs_ok)" "rank,2,6.67,true" "rank 2 named: the others' 20 ms a step over 3 ranks"

run ontime 2 20 2,2.5 - 30 -
is "$(waits)" "0:0 1:0" "no rank late (arrivals together): no wait"
is "$(verdict) $(q '.peer_wait_estimate | "\(.from_arrival_lag),\(.wait_s)"')" "-,0 true,0" \
    "no rank late: no straggler, nothing estimated"
unlike "$(cat "$T/ontime.txt")" 'estimated from the arrival lag: [1-9]' "no rank late: no estimate said in the text"

# a rank that recorded nothing of a collective: no arrival to estimate from, nothing estimated for it
mkdir -p "$T/alone" && cp "$T/one/rank0.rtrace" "$T/alone/" && "$RS_CLI" report --json "$T/alone" >"$T/alone.json" 2>/dev/null
J=$T/alone.json
is "$(q '.peer_wait_estimate | "\(.from_arrival_lag),\(.collectives)"')" "false,0" \
    "one rank's file alone: no collective joined on every rank, nothing estimated"
is "$(grep -c 'ERROR\|Sanitizer' "$T"/*.err | awk -F: '{ s += $2 } END { print s + 0 }')" "0" "no errors in the reports"
