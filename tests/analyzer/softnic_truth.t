#!/bin/bash
# Software NIC (tools/softnic): the report against truth the scenario plants, on real verbs programs.
# 1. A 3-rank ring AllReduce (tests/analyzer/late_ring.c: marks, a barrier, then rank 1 spins 20 ms of host
#    work before its first send, every step): rank 1 is the persistent straggler, named first, and the
#    other two ranks' wait for it is within 10 % of the wait the program itself measured (its first-send
#    times; ~20 ms a step +- this shared VM's scheduling delays; with 5 ms planted the report matched the
#    program's 4.25 ms to 0.4 %). The same ring without the delay has no persistent straggler. Before #15
#    the report said "Stragglers: none" and the wait landed in `other`.
#    On a loaded host (CI: 2 cores, prove -j2 beside the sanitizer suites) any rank can be descheduled for
#    ms after the barrier: then it is genuinely late, in the ring without the delay too, and a rank gated
#    by the late rank's credit arrives with it. So the waits and the persistent stragglers are compared with
#    what the program measured on its own clock by the report's documented rule (ring_truth.py), not with
#    the planted rank alone; the planted delay itself is checked on the program's clock.
# 2. ibv_rc_pingpong (rdma-core, unmodified) run three times identically: the same step count within 2 %
#    (95 to 892 steps before; on a loaded host 1 step, "none found", in 25 of 29 runs before the round-trip
#    rule), round trips are latency, never "network stall" (the top finding before), and not stragglers.
# 3. verbs_faults: a refused ibv_create_qp (errno 95) and one error completion + 3 flushed WRs are counted
#    exactly in JSON, text and warnings (they were missing from the report before).
# 4. One rank alone: stragglers "cannot tell", not "none".
. "$(dirname "$0")/../lib.sh"
need_cmd jq
need_build railscope librailscope.so softnic/libibverbs.so.1 tests/analyzer/late_ring tests/analyzer/verbs_faults \
    examples/verbs_pingpong
plan 20

ring() { # NAME DELAY_MS
    rm -rf "$T/$1"
    LD_LIBRARY_PATH=$RS_BUILD/softnic SOFTNIC_DIR=$T SOFTNIC_RATE_GBPS=2 run_timeout 60 "$RS_CLI" record -q -o "$T/$1" -- "$RS_BUILD/tests/analyzer/late_ring" \
        -n 3 -s 256K -i 10 -l 1 -w "$2" >"$T/$1.out" 2>&1
    run_timeout 30 "$RS_CLI" report --json "$T/$1" >"$T/$1.json" 2>"$T/$1.err" || diag "report $1: $(head -3 "$T/$1.err")"
}
# truth (ring_truth.py): what the program measured, per rank and iteration, on CLOCK_MONOTONIC: when it posted
# its first data send; by the report's rule, the last rank by more than the threshold is late and every
# other rank waits from its own first send to the late rank's. Prints the disagreements (none: "").
truth() { python3 "$(dirname "$0")/ring_truth.py" "$T/$1.out" "$T/$1.json" 2>"$T/$1.truth"; }
ring late 20
J=$T/late.json
is "$(grep -c 'result OK' "$T/late.out")" 3 "softnic: late_ring (3 ranks, rank 1 +20 ms per step) runs under record"
# the straggler finding first. A loaded host makes the software NIC's WRs take longer (outstanding while the
# NIC threads or the poller are descheduled): the trace then holds more network stall, or latency (the base
# latency is measured from the same WRs), than the planted delay costs; only those may come before it
# (softnic_truth.t fails on a loaded host without this: 2 of 10 runs before, 1 of 10 after the round trips)
top=$(jq -r '[.findings[] | "\(.category):\(.rank)"] | join(" ")' "$J")
first=$(echo "$top" | tr ' ' '\n' | grep -v '^network_stall:\|^network_latency:' | head -1)
[ "${top%% *}" = "$first" ] || diag "findings: $top (the load's network time first)"
is "$(jq -r '"\(.nsteps),\(.stragglers[0].rank),\(.stragglers[0].persistent)"' "$J"),$first" "10,1,true,peer_wait:1" \
    "softnic ring: rank 1 is the persistent straggler, named by the top finding (after the load's network stall/latency only)"
bad=$(truth late)
cat "$T/late.truth" >&2
is "$bad" "" "softnic ring: each rank's total wait within 10 % of what the program measured, the persistent straggler as measured"
lags() { sed -n "s/^rank $1: result OK, first send ms: //p" "$T/late.out"; }
ok "softnic ring: the planted delay is what the others waited (program measured at least 150 ms over 10 steps of 20 ms planted)" \
    awk -v l="$(lags 1)" -v o="$(lags 0)" 'BEGIN { n = split(l, a, " "); split(o, b, " "); for (i = 1; i <= n; i++) s += a[i] - b[i]; exit !(s > 150) }'
# the late rank waits for nobody: under 2 ms a step, or (a loaded host can make it genuinely late for a
# step behind another rank) no more than the program measured it waiting (ring_truth.py's line for rank 1)
w1=$(sed -n 's/^# rank 1: waits \([0-9.]*\) s in the report, [0-9.]*\.\.\([0-9.]*\) s .*/\1 \2/p' "$T/late.truth")
ok "softnic ring: the late rank itself waits for nobody (report, measured: ${w1:-?} s)" \
    sh -c 'jq -e "[.ranks[] | select(.rank == 1) | .attribution.peer_wait / .nsteps][0] < 0.002" "$1" >/dev/null ||
        awk -v w="$2" "BEGIN { n = split(w, x, \" \"); exit !(n == 2 && x[1] <= x[2] * 1.1 + 0.002) }"' _ "$J" "$w1"
# session 8: a straggler's cost is a mean over the run's ranks, like the peer-wait category: the late ranks'
# costs add up to at most the category, and rank 1's cost x 3 ranks is at most what the other two waited in all
run_timeout 30 "$RS_CLI" report "$T/late" >"$T/late.txt" 2>/dev/null
is "$(jq -c '[.mean_ranks, ([.stragglers[].cost_s] | add) <= .attribution.peer_wait * (1 + 1e-6) + 1e-12,
    ([.stragglers[] | select(.rank == 1) | .cost_s][0] * .mean_ranks <= ([.ranks[] | select(.rank != 1) |
    .attribution.peer_wait] | add) * (1 + 1e-6) + 1e-12)]' "$J"),$(grep -c "^Stragglers: .*mean over the run's 3 ranks)$" "$T/late.txt")" \
    "[3,true,true],1" "softnic ring: straggler costs are means over the run's 3 ranks, within the others' wait and the category"
ring ontime 0
# no straggler planted: on an idle host nobody is persistent; on a loaded one whoever the program measured
bad=$(truth ontime)
cat "$T/ontime.truth" >&2
is "$(jq -r .stragglers_known "$T/ontime.json")${bad:+: $bad}" "true" \
    "softnic ring without the delay: arrivals compared, persistent stragglers and waits as the program measured (none planted)"

# 5 (#15 item 8). Bandwidth counters of the export: each WR's bytes spread over its transfer, never above the
#    link rate (2 Gb/s = 0.25 GB/s; before: bytes put in the completion's 1 ms bin, up to 0.35 GB/s here),
#    and every byte sent counted once (unsignaled WRs' bytes were left out before).
rm -rf "$T/big"
LD_LIBRARY_PATH=$RS_BUILD/softnic SOFTNIC_DIR=$T SOFTNIC_RATE_GBPS=2 run_timeout 60 "$RS_CLI" record -q -o "$T/big" -- \
    "$RS_BUILD/tests/analyzer/late_ring" -n 3 -s 1M -i 5 >/dev/null 2>&1 # 350 KB writes: 1.4 ms each at 2 Gb/s
run_timeout 30 "$RS_CLI" report --json "$T/big" >"$T/big.json"
run_timeout 30 "$RS_CLI" export --format json -q -o "$T/big.cjson" "$T/big" 2>/dev/null
read -r cmax cbytes < <(python3 "$(dirname "$0")/counters.py" "$T/big.cjson")
sent=$(jq '[.ranks[].qps[].bytes_sent] | add' "$T/big.json")
diag "counters: max $cmax GB/s (link 0.25), $cbytes bytes integrated, $sent sent"
ok "export counters: no QP/link counter above the 2 Gb/s link rate (max $cmax GB/s)" awk -v m="$cmax" 'BEGIN { exit !(m > 0 && m <= 0.25) }'
ok "export counters: the QP counters integrate to the bytes sent ($cbytes of $sent)" \
    awk -v c="$cbytes" -v s="$sent" 'BEGIN { d = c - s; if (d < 0) d = -d; exit !(s > 0 && d <= 0.001 * s) }'

# 2. ibv_rc_pingpong x 3
pingpong() { # I: server and client traced into $T/ppI/srv and $T/ppI/cli
    local i=$1 try c srv rc
    for try in 1 2 3; do # a new port when the server could not listen on this one
        port=$((20000 + RANDOM % 20000))
        rm -rf "$T/pp$i"
        LD_LIBRARY_PATH=$RS_BUILD/softnic SOFTNIC_DIR=$T run_timeout 60 "$RS_CLI" record -q -o "$T/pp$i/srv" -- \
            ibv_rc_pingpong -g 0 -p $port >"$T/pp$i.srv" 2>&1 &
        srv=$!
        for c in $(seq 1 50); do # the client again until the server listens (a loaded host starts it late)
            sleep 0.1
            rm -rf "$T/pp$i/cli"
            LD_LIBRARY_PATH=$RS_BUILD/softnic SOFTNIC_DIR=$T run_timeout 60 "$RS_CLI" record -q -o "$T/pp$i/cli" -- \
                ibv_rc_pingpong -g 0 -p $port localhost >"$T/pp$i.out" 2>&1
            rc=$?
            if [ $rc = 0 ]; then
                wait $srv && return 0
                break
            fi
            grep -q "Couldn't connect" "$T/pp$i.out" && kill -0 $srv 2>/dev/null || break
        done
        diag "ibv_rc_pingpong run $i try $try: client exit $rc: $(tail -1 "$T/pp$i.out"); server: $(tail -1 "$T/pp$i.srv")"
        kill $srv 2>/dev/null
        wait $srv
    done
    return 1
}
if command -v ibv_rc_pingpong >/dev/null; then
    counts=""
    for i in 1 2 3; do
        pingpong $i
        run_timeout 30 "$RS_CLI" report --json "$T/pp$i" >"$T/pp$i.json" 2>"$T/pp$i.err" || diag "report pp$i: $(head -3 "$T/pp$i.err")"
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
    # each side's send answers the other's: one side is always later by the round trip (on a loaded host
    # either side was a "persistent straggler" in 10 of 30 runs before)
    is "$(jq -r '"\(.step_source),\(.stragglers_known),\(.straggler_basis)"' "$T"/pp[123].json | sort | uniq -c | sed 's/^ *//')" \
        "3 verbs round trips,false,none: round trips" "softnic: ibv_rc_pingpong: steps are round trips, not compared for stragglers"
else
    skip "ibv_rc_pingpong not installed (rdma-core's ibverbs-utils)" 3
fi

# 2b. examples/verbs_pingpong with 64-byte messages (every send <= 64 B: before, all "control", nothing
#     reported): its round trips are latency, the top finding; no stall finding
#     A 2-core CI host beside the sanitizer suites can deschedule the software NIC's threads for ms: those WRs
#     are then genuinely stalled (seen once in ~20 loaded runs): a run whose verdict differs is run once more,
#     with what it said as a diagnostic; the second must give the verdict.
vp() {
    rm -rf "$T/vp"
    LD_LIBRARY_PATH=$RS_BUILD/softnic SOFTNIC_DIR=$T run_timeout 60 "$RS_CLI" record -q -o "$T/vp" -- \
        "$RS_BUILD/examples/verbs_pingpong" -s 64 -n 500 >/dev/null 2>&1
    run_timeout 30 "$RS_CLI" report --json "$T/vp" |
        jq -r '"\(.findings[0].category),\([.findings[] | select(.category == "network_stall")] | length)"'
}
got=$(vp)
if [ "$got" != "network_latency,0" ]; then
    diag "verbs_pingpong -s 64, first run: $got (load: $(cut -d' ' -f1-3 /proc/loadavg)); once more"
    got=$(vp)
fi
is "$got" "network_latency,0" "softnic: verbs_pingpong -s 64: small-message round trips are latency (top finding), no stall finding"

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
