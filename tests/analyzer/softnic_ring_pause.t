#!/bin/bash
# Software NIC (tests/softnic): a real 2-process ring AllReduce over verbs (examples/ring_allreduce) under
# `railscope record`, once at SOFTNIC_RATE_GBPS=1 and once with SOFTNIC_PAUSE=50:20 added. The report must
# put the pause time the ranks' transfers sat through (computed from the raw events and the NIC's pause
# windows by pause_overlap.sh) into network stall: paused stall - pause time = the unpaused run's stall
# (the NIC's own overhead) within 5 % of the step time; and say GPUDirect NOT USED (host buffers).
. "$(dirname "$0")/../lib.sh"
need_cmd jq
need_build railscope librailscope.so softnic/libibverbs.so.1 examples/ring_allreduce
HERE=$(dirname "$0")
plan 9

record() { # DIR [PAUSE]
    LD_LIBRARY_PATH=$RS_BUILD/softnic SOFTNIC_RATE_GBPS=1 SOFTNIC_PAUSE=${2:-} \
        run_timeout 60 "$RS_CLI" record -q -o "$1" -- "$RS_BUILD/examples/ring_allreduce" -n 2 -s 4M -i 6 \
        >"$1.out" 2>&1
}
record "$T/base"
ok "softnic: ring_allreduce runs under record (no pause)" grep -q 'result OK' "$T/base.out"
record "$T/pause" 50:20
ok "softnic: ring_allreduce runs under record (SOFTNIC_PAUSE=50:20)" grep -q 'result OK' "$T/pause.out"

run_timeout 30 "$RS_CLI" report --json --link-gbps 1 "$T/base" >"$T/base.json"
is "$?" 0 "softnic: report on the unpaused run exits 0"
run_timeout 30 "$RS_CLI" report --json --link-gbps 1 "$T/pause" >"$T/pause.json"
is "$?" 0 "softnic: report on the paused run exits 0"

# mean over ranks, seconds over the run
mean() { jq "[.ranks[] | $2] | add / length" "$1"; }
stall_b=$(mean "$T/base.json" .attribution.network_stall)
stall_p=$(mean "$T/pause.json" .attribution.network_stall)
steps_p=$(mean "$T/pause.json" '.step_mean_s * .nsteps')
n=0 sum=0
for f in "$T"/pause/*.rtrace; do
    v=$(RS_CLI=$RS_CLI "$HERE/pause_overlap.sh" 50 20 "$f")
    if awk -v v="$v" 'BEGIN { exit !(v > 0) }'; then sum=$(awk -v a="$sum" -v b="$v" 'BEGIN { print a + b }'); n=$((n + 1)); fi
done
pause=$(awk -v s="$sum" -v n="$n" 'BEGIN { print n ? s / n : 0 }')
diag "stall unpaused $stall_b s, paused $stall_p s, pause time in transfers $pause s, step time $steps_p s"
is "$n" 2 "softnic: both ranks' transfers sat through pauses"
ok "softnic: pause time is a large part of the paused run (>= 10 % of step time)" \
    awk -v p="$pause" -v t="$steps_p" 'BEGIN { exit !(p >= 0.1 * t) }'
ok "softnic: network stall = pause time + unpaused stall, within 5 % of step time" \
    awk -v s="$stall_p" -v p="$pause" -v b="$stall_b" -v t="$steps_p" \
    'BEGIN { d = s - p - b; if (d < 0) d = -d; exit !(d <= 0.05 * t) }'
is "$(jq -r .gpudirect.verdict "$T/pause.json")" "NOT USED" "softnic: GPUDirect NOT USED (host buffers)"
like "$(jq -r '.findings[].text' "$T/pause.json")" '^Network stall: .* worst is rank' "softnic: a top finding is the network stall, with its QP"
