#!/bin/bash
# Ground truth: rs-synth injects known problems into a synthetic cluster (through the real trace writer);
# `railscope report --json` must recover every rank's step attribution within 5 % of the step time and
# name the injected rank / QP / category.
. "$(dirname "$0")/../lib.sh"
need_cmd jq
need_build railscope tests/synth/rs-synth
SYNTH=$RS_BUILD/tests/synth/rs-synth
HERE=$(dirname "$0")
plan 68

# run NAME SYNTH-ARGS...: generate, report, and check the attribution against the truth.
run() {
    local name=$1
    shift
    rm -rf "$T/$name"
    "$SYNTH" -o "$T/$name" --truth "$T/$name.truth" "$@" || bail "rs-synth $* failed"
    run_timeout 60 "$RS_CLI" report --json "$T/$name" >"$T/$name.json" 2>"$T/$name.err"
    RC=$?
    J=$T/$name.json
    TR=$T/$name.truth
    local dev
    dev=$(jq -r --slurpfile truth "$TR" -f "$HERE/truth.jq" "$J")
    ok "$name: every rank's categories within 5 % of step time of the truth (worst: $dev)" \
        awk -v d="${dev%% *}" 'BEGIN { exit !(d <= 0.05) }'
}
q() { jq -r "$@" "$J"; }
within() { # GOT WANT TOL
    awk -v g="$1" -v w="$2" -v t="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t) }'
}

# 1. healthy run, clocks 5 ms apart
run baseline --skew-ms 5
is "$RC" 0 "baseline: exit status 0"
ok "baseline: clock refinement brings collective ends within 50 us (anchors alone: >= 1 ms)" \
    awk -v r="$(q .clock.residual_skew_s)" -v a="$(q .clock.anchor_skew_s)" 'BEGIN { exit !(r < 50e-6 && a >= 1e-3) }'
is "$(q .gpudirect.verdict)" "USED" "baseline: GPUDirect USED"
is "$(q '[.stragglers[] | select(.persistent)] | length')" 0 "baseline: no persistent straggler"
is "$(q '[.findings[] | select(.category == "network_stall")] | length')" 0 "baseline: no network-stall finding"
is "$(q '.ranks | length'),$(q '.ranks[0].nsteps'),$(q '.ranks[5].host'),$(q '.ranks[5].pid')" "8,10,node001,4005" \
    "baseline: ranks[] with rank, host, pid, steps"

# 2. a straggler: rank 3 computes 5 ms longer each step
run straggler --skew-ms 5 --straggler 3:5
is "$(q '.stragglers[0].rank'),$(q '.stragglers[0].persistent')" "3,true" "straggler: rank 3 is the persistent straggler"
ok "straggler: it costs rank 0 about 5 ms of peer wait per step" \
    within "$(q '.ranks[0].attribution.peer_wait / .nsteps')" 0.005 0.0037
is "$(q '.findings[0].category'),$(q '.findings[0].rank')" "peer_wait,3" "straggler: top finding names rank 3"

# 3. a paused link: rank 5's QP stalls 20 ms every other step
run pause --skew-ms 2 --pause 5:20:2
is "$(q '[.findings[] | select(.category == "network_stall")][0] | "\(.rank),\(.qp)"')" "5,276" \
    "pause: network-stall finding names rank 5 QP 0x114"
ok "pause: network stall per step matches the injected pause (10 ms/step) within 5 % of step time" \
    within "$(q '.attribution_per_step.network_stall')" "$(jq '.problems[0].cost_per_step_s' "$TR")" \
    "$(jq '.step_mean_s * 0.05' "$TR")"
is "$(q '[.collectives[] | select(.stall_rank == 5 and .stall_qp == 276)] | length')" 5 \
    "pause: the 5 paused collectives point at rank 5 QP 0x114"

# 4. a slow link: rank 2's NIC at a quarter of the rate
run slow --slow 2:4
is "$(q '[.findings[] | select(.category == "network_stall")][0] | "\(.rank),\(.qp)"')" "2,264" \
    "slow: network-stall finding names rank 2 QP 0x108"
ok "slow: QP 0x108 achieved about 50 of 200 Gb/s" \
    within "$(q '.ranks[2].qps[] | select(.qp == 264) | .achieved_gbps')" 50 2
ok "slow: stall per step within 5 % of step time of the truth" \
    within "$(q '.attribution_per_step.network_stall')" "$(jq '.problems[0].cost_per_step_s' "$TR")" \
    "$(jq '.step_mean_s * 0.05' "$TR")"

# 5. pageable H2D copies on one rank (which then also straggles)
run pageable --pageable 6
like "$(q '.findings[] | select(.category == "h2d_exposed") | "\(.rank) \(.text)"')" '^6 .*pageable' \
    "pageable: the H2D finding names rank 6 and pageable memory"
ok "pageable: rank 6 has pageable H2D bytes, rank 0 none" \
    test "$(q '.ranks[6].h2d_pageable_bytes > 0 and .ranks[0].h2d_pageable_bytes == 0')" = true
is "$(q '.stragglers[0].rank')" 6 "pageable: rank 6 is also the straggler it causes"

# 6. all ranks pageable
run pageable_all --pageable all
is "$(q '.findings[0].category')" h2d_exposed "pageable_all: exposed H2D is the top finding"

# 7. no GPUDirect: host bounce buffers
run nogdr --no-gpudirect
is "$(q .gpudirect.verdict)" "NOT USED" "nogdr: run verdict NOT USED"
is "$(q '[.ranks[].gpudirect.verdict] | unique | join(",")')" "NOT USED" "nogdr: every rank NOT USED"
is "$(q '[.ranks[].qps[] | select(.sends > 0) | .gpudirect.verdict] | unique | join(",")')" "NOT USED" \
    "nogdr: every sending QP NOT USED"
ok "nogdr: bounce copies found on both sides" test "$(q '.ranks[0].gpudirect | .bounce_d2h > 0 and .bounce_h2d > 0')" = true
like "$(q '.findings[].text')" 'GPUDirect RDMA NOT USED' "nogdr: a finding says GPUDirect is not used"

# 8. tree, 4 nodes x 2 GPUs, a straggler and a paused link together
run tree --algo tree --nodes 4 --gpus 2 --skew-ms 4 --straggler 7:3 --pause 1:10:3
is "$(q '.stragglers[0].rank')" 7 "tree: straggler rank 7"
is "$(q '.ranks[].qps[] | select(.stall_s > 0.01) | .qp' | sort -u | tr '\n' ,)" "260," "tree: only rank 1's QP 0x104 stalls"

# 9. no verbs capture: NCCL proxy steps stand in for work requests
run proxy --no-verbs --pause 5:20:2
is "$(q '[.findings[] | select(.category == "network_stall")][0].rank')" 5 "proxy-only: network stall found on rank 5"
is "$(q .gpudirect.verdict)" "UNKNOWN" "proxy-only: GPUDirect UNKNOWN without verbs"

# 10. no NVTX: steps from the periodic structure of collectives
run nonvtx --no-nvtx --straggler 1:4
like "$(q .step_source)" 'periodicity' "nonvtx: steps from collective periodicity"
is "$(q .nsteps)" 9 "nonvtx: 9 steps between 10 collectives"
ok "nonvtx: mean step within 5 % of the truth" within "$(q .step_mean_s)" "$(jq .step_mean_s "$TR")" \
    "$(jq '.step_mean_s * 0.05' "$TR")"
is "$(q '.stragglers[0].rank')" 1 "nonvtx: straggler rank 1"

# 9b. gradient buckets: 3 early AllReduces per step hidden under backward, then the last one exposed
run buckets --buckets 4 --straggler 3:5 --pause 5:10:2 --skew-ms 3
is "$(q '[.collectives[] | select(.nseen == 8)] | length')" 40 "buckets: 40 collectives joined across all 8 ranks"
is "$(q '.stragglers[0].rank')" 3 "buckets: straggler rank 3"
ok "buckets: straggler cost = exposed waiting only (~4.4 ms/step, hidden waits excluded)" \
    within "$(q '.stragglers[0].cost_per_step_s')" "$(q .attribution_per_step.peer_wait)" 0.0002
is "$(q '[.findings[] | select(.category == "network_stall")][0] | "\(.rank),\(.qp)"')" "5,276" "buckets: stall on rank 5 QP 0x114"
run buckets_nonvtx --buckets 8 --no-nvtx --pause 3:5
is "$(q .step_source),$(q .nsteps)" "collective periodicity,9" "buckets without NVTX: 8 collectives per step found as one period"

# 10a. no profiler plugin: the NCCL API calls are the collectives
run noplugin --no-plugin --straggler 5:4 --pause 2:8:2 --skew-ms 3
is "$(q '.stragglers[0].rank')" 5 "noplugin: straggler rank 5 from API-call collectives"
is "$(q '[.findings[] | select(.category == "network_stall")][0] | "\(.rank),\(.qp)"')" "2,264" "noplugin: stall on rank 2 QP 0x108"
like "$(q '.warnings[]')" 'collectives from the NCCL API calls' "noplugin: says where collectives came from"

# 10b. steps from a user marker, and from MARK events
run marker --step-name "train_iter %d" --straggler 2:3
is "$(q .step_source)" "collective periodicity" "marker: 'train_iter N' ranges are not steps by themselves"
"$RS_CLI" report --json --step-marker train_iter "$T/marker" >"$T/marker2.json"
J=$T/marker2.json
is "$(q .step_source),$(q .nsteps),$(q '.ranks[0].steps[4].id')" "marker train_iter,10,4" \
    "marker: --step-marker train_iter gives the 10 ranges and their numbers"
ok "marker: attribution within 5 % of step time" awk -v d="$(jq -r --slurpfile truth "$TR" -f "$HERE/truth.jq" "$J" | cut -d' ' -f1)" \
    'BEGIN { exit !(d <= 0.05) }'
run marks --mark-steps --pause 4:10
is "$(q .step_source),$(q .nsteps)" "marks,10" "marks: MARK \"step\" events delimit 10 steps"

# 11. a damaged rank file: results for the rest, flagged, exit 1
rm -rf "$T/dmg" && "$SYNTH" -o "$T/dmg" --truth "$T/dmg.truth" --straggler 2:5 >/dev/null
f=$(ls "$T"/dmg/*.rtrace | sed -n 5p)
head -c $(( $(stat -c %s "$f") * 2 / 3 )) "$f" >"$f.cut" && mv "$f.cut" "$f"
printf 'not a trace' >"$T/dmg/zz-junk.rtrace"
"$RS_CLI" report --json "$T/dmg" >"$T/dmg.json" 2>/dev/null
is "$?" 1 "damaged: exit status 1"
J=$T/dmg.json
is "$(q .partial)" true "damaged: partial flagged"
is "$(q '[.ranks[] | select(.input != "complete")] | length')" 2 "damaged: two inputs flagged"
is "$(q '.stragglers[0].rank')" 2 "damaged: straggler still found from the readable part"
"$RS_CLI" report "$T/dmg" >"$T/dmg.txt" 2>&1
like "$(cat "$T/dmg.txt")" 'PARTIAL INPUT' "damaged: text report says so"

# 12. the text report, and CLI errors
"$RS_CLI" report "$T/straggler" >"$T/txt" 2>&1
like "$(cat "$T/txt")" '^  1\. Straggler: rank 3' "text: findings first, in plain words"
out=$("$RS_CLI" report 2>&1); rc=$?
is "$rc,$(printf '%s\n' "$out" | wc -l)" "2,1" "no path: one-line error, exit 2"
out=$("$RS_CLI" report "$T/nonexistent" 2>&1); rc=$?
like "$rc $out" '^2 railscope: ' "missing path: railscope: error, exit 2"
out=$("$RS_CLI" report --link-gbps abc "$T/baseline" 2>&1); rc=$?
like "$rc $out" '^2 railscope: .*link-gbps' "bad --link-gbps: exit 2"
